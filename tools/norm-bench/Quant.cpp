//===- Quant.cpp - Norm + quantization cases for norm-bench -----*- C++ -*-===//
//
// Cases `rms_norm_quant_<variant>` and `add_rms_norm_quant_<variant>`,
// variant fp8_static, fp8_token, i8_token, fp8_g128 or one of the
// block-scaled forms mxfp8, fp8_1x128, mxfp4 and nvfp4, bf16 input with a
// bf16 weight. The fused kernel is one module (norm + norm.quantize); the
// unfused one calls a norm module writing y and then a quantize module
// reading it.
//
//===----------------------------------------------------------------------===//

#include "Quant.h"
#include "KernelCall.h"

#include "norm/ExecutionEngine/JIT.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace norm_bench;

namespace {

struct Variant {
  const char *name;
  const char *qType;
  bool isStatic;
  int64_t groupSize; // 0: per token
  /// The element type of the scales (dynamic forms).
  const char *scalesType = "f32";
  /// Extra attributes of the block-scaled forms.
  const char *attrs = "";
  /// NVFP4: a global_scale operand.
  bool globalScale = false;

  bool isFP4() const { return llvm::StringRef(qType) == "f4E2M1FN"; }
  /// Bytes of q per element of the input.
  double qBytes() const { return isFP4() ? 0.5 : 1.0; }
  size_t scaleBytes() const {
    return llvm::StringRef(scalesType) == "f32" ? 4 : 1;
  }
  /// Operand `scale(%s)` or `global_scale(%s)`: one f32.
  bool hasScalarOperand() const { return isStatic || globalScale; }
};

const Variant kVariants[] = {
    {"fp8_static", "f8E4M3FN", true, 0},
    {"fp8_token", "f8E4M3FN", false, 0},
    {"i8_token", "i8", false, 0},
    {"fp8_g128", "f8E4M3FN", false, 128},
    {"mxfp8", "f8E4M3FN", false, 32, "f8E8M0FNU"},
    {"fp8_1x128", "f8E4M3FN", false, 128, "f8E8M0FNU",
     ", scale_rounding = #norm<scale_rounding up>"},
    {"mxfp4", "f4E2M1FN", false, 32, "f8E8M0FNU"},
    {"nvfp4", "f4E2M1FN", false, 16, "f8E4M3FN", "", true}};

struct QuantShape {
  int64_t rows, cols;
};

std::string caseName(bool residual, const Variant &variant) {
  return llvm::formatv("{0}rms_norm_quant_{1}", residual ? "add_" : "",
                       variant.name)
      .str();
}

std::string benchmarkName(bool residual, const Variant &variant,
                          const char *impl, QuantShape shape) {
  return llvm::formatv("{0}/{1}/{2}x{3}/bf16", caseName(residual, variant),
                       impl, shape.rows, shape.cols)
      .str();
}

int64_t numGroups(const Variant &variant, QuantShape shape) {
  return variant.groupSize ? shape.cols / variant.groupSize : 1;
}

/// What the fused case must move: x (and the residual in and out), q and
/// the scales.
size_t quantBytes(bool residual, const Variant &variant, QuantShape shape) {
  size_t elements = size_t(shape.rows) * size_t(shape.cols);
  size_t bytes = 2 * elements * (residual ? 3 : 1) +
                 size_t(double(elements) * variant.qBytes());
  if (!variant.isStatic)
    bytes += variant.scaleBytes() * size_t(shape.rows) *
             size_t(numGroups(variant, shape));
  return bytes;
}

/// The MLIR types of one case.
struct Types {
  std::string x, xm, w, wm, q, qm, scales, scalesm;
};

Types makeTypes(const Variant &variant, QuantShape shape) {
  Types t;
  const char *qt = variant.qType;
  t.x = llvm::formatv("tensor<{0}x{1}xbf16>", shape.rows, shape.cols);
  t.xm = llvm::formatv("memref<{0}x{1}xbf16>", shape.rows, shape.cols);
  t.w = llvm::formatv("tensor<{0}xbf16>", shape.cols);
  t.wm = llvm::formatv("memref<{0}xbf16>", shape.cols);
  t.q = llvm::formatv("tensor<{0}x{1}x{2}>", shape.rows, shape.cols, qt);
  t.qm = llvm::formatv("memref<{0}x{1}x{2}>", shape.rows, shape.cols, qt);
  int64_t groups = numGroups(variant, shape);
  t.scales = llvm::formatv("tensor<{0}x{1}x{2}>", shape.rows, groups,
                           variant.scalesType);
  t.scalesm = llvm::formatv("memref<{0}x{1}x{2}>", shape.rows, groups,
                            variant.scalesType);
  return t;
}

std::string quantizeLine(const Variant &variant, const Types &t,
                         const std::string &input) {
  std::string attrs = variant.groupSize
                          ? llvm::formatv(" {{group_size = {0} : i64{1}}",
                                          variant.groupSize, variant.attrs)
                                .str()
                          : std::string();
  if (variant.isStatic)
    return llvm::formatv("  %q = norm.quantize {0} scale(%s){1} : ({2}, "
                         "tensor<f32>) -> {3}\n",
                         input, attrs, t.x, t.q);
  if (variant.globalScale)
    return llvm::formatv("  %q, %sc = norm.quantize {0} global_scale(%s){1} "
                         ": ({2}, tensor<f32>) -> ({3}, {4})\n",
                         input, attrs, t.x, t.q, t.scales);
  return llvm::formatv("  %q, %sc = norm.quantize {0}{1} : ({2}) -> ({3}, "
                       "{4})\n",
                       input, attrs, t.x, t.q, t.scales);
}

std::string storeScales(const Types &t) {
  return llvm::formatv("  bufferization.materialize_in_destination %sc in "
                       "restrict writable %scm : ({0}, {1}) -> ()\n",
                       t.scales, t.scalesm);
}

/// The norm (writing y, or feeding the quantization when `fused`).
std::string normLines(bool residual, const Types &t) {
  std::string body = toTensor("x", t.xm, t.x) + toTensor("w", t.wm, t.w);
  if (residual)
    return body + toTensor("r", t.xm, t.x) +
           llvm::formatv("  %y, %ro = norm.rms_norm %x weight(%w) "
                         "residual(%r) : ({0}, {1}, {0}) -> ({0}, {0})\n",
                         t.x, t.w)
               .str();
  return body + llvm::formatv("  %y = norm.rms_norm %x weight(%w) : ({0}, "
                              "{1}) -> {0}\n",
                              t.x, t.w)
                    .str();
}

/// Fused: (x, w, [r], [s], q, [scales], [ro]).
std::string fusedSource(bool residual, const Variant &variant, const Types &t) {
  std::string params = "%xm: " + t.xm + ", %wm: " + t.wm;
  if (residual)
    params += ", %rm: " + t.xm;
  std::string body = normLines(residual, t);
  if (variant.hasScalarOperand()) {
    params += ", %sm: memref<f32>";
    body += toTensor("s", "memref<f32>", "tensor<f32>");
  }
  body += quantizeLine(variant, t, "%y");
  params += ", %qm: " + t.qm;
  body += store("q", t.q, t.qm);
  if (!variant.isStatic) {
    params += ", %scm: " + t.scalesm;
    body += storeScales(t);
  }
  if (residual) {
    params += ", %rom: " + t.xm;
    body += store("ro", t.x, t.xm);
  }
  return wrap(params, body);
}

/// The norm alone: (x, w, [r], y, [ro]).
std::string normSource(bool residual, const Types &t) {
  std::string params = "%xm: " + t.xm + ", %wm: " + t.wm;
  if (residual)
    params += ", %rm: " + t.xm;
  std::string body = normLines(residual, t);
  params += ", %ym: " + t.xm;
  body += store("y", t.x, t.xm);
  if (residual) {
    params += ", %rom: " + t.xm;
    body += store("ro", t.x, t.xm);
  }
  return wrap(params, body);
}

/// The quantization alone: (y, [s], q, [scales]).
std::string quantizeSource(const Variant &variant, const Types &t) {
  std::string params = "%ym: " + t.xm;
  std::string body = toTensor("y", t.xm, t.x);
  if (variant.hasScalarOperand()) {
    params += ", %sm: memref<f32>";
    body += toTensor("s", "memref<f32>", "tensor<f32>");
  }
  body += quantizeLine(variant, t, "%y");
  params += ", %qm: " + t.qm;
  body += store("q", t.q, t.qm);
  if (!variant.isStatic) {
    params += ", %scm: " + t.scalesm;
    body += storeScales(t);
  }
  return wrap(params, body);
}

} // namespace

/// The buffers and modules of one case and shape.
struct norm_bench::QuantKernel {
  QuantKernel(bool residual, const Variant &variant, QuantShape shape)
      : residual(residual), variant(variant), shape(shape),
        elements(size_t(shape.rows) * size_t(shape.cols)), x(2 * elements),
        r(2 * elements), w(2 * size_t(shape.cols)), s(4),
        qSize(size_t(double(elements) * variant.qBytes())), q(qSize),
        qUnfused(qSize), scales(variant.scaleBytes() * size_t(shape.rows) *
                                size_t(numGroups(variant, shape))),
        scalesUnfused(scales.size), y(2 * elements), ro(2 * elements),
        roUnfused(2 * elements),
        floorBytes(quantBytes(residual, variant, shape) / 2),
        floorSource(floorBytes), floorDestination(floorBytes) {}

  /// Compiles the fused kernel, the unfused pair and, with `vw256`, both
  /// for 256-bit vectors (the AVX2 path on any host; the norm's sums are
  /// taken in another order there, so its fused kernel is checked against
  /// its own unfused pair).
  bool compile(unsigned threads, const std::vector<llvm::StringRef> &libs,
               bool vw256) {
    fillBF16(x.data, elements, 0.0f, 1.0f, 1);
    fillBF16(r.data, elements, 0.0f, 1.0f, 2);
    fillBF16(w.data, size_t(shape.cols), 1.0f, 0.2f, 3);
    // A static scale, or NVFP4's global encode scale (448 * 6 / amax).
    float scale = variant.globalScale ? 448.0f * 6.0f / 4.0f
                  : llvm::StringRef(variant.qType) == "i8" ? 4.0f / 127.0f
                                                           : 4.0f / 448.0f;
    std::memcpy(s.data, &scale, 4);
    Types t = makeTypes(variant, shape);
    std::string pipeline =
        llvm::formatv("norm-cpu-pipeline{{threads={0}}", threads);
    std::string pipeline256 = llvm::formatv(
        "norm-cpu-pipeline{{threads={0} vector-width=256}", threads);
    std::string error;
    auto build = [&](const std::string &source,
                     std::unique_ptr<mlir::norm::JITModule> &module,
                     void *&entry, const std::string &passes) {
      module = mlir::norm::JITModule::compile(source, passes, error, libs);
      entry = module ? module->lookupCInterface("kernel") : nullptr;
      if (!entry)
        llvm::errs() << "norm-bench: " << caseName(residual, variant)
                     << " does not compile: " << error << "\n";
      return entry != nullptr;
    };
    if (!build(fusedSource(residual, variant, t), fused, fusedEntry,
               pipeline) ||
        !build(normSource(residual, t), norm, normEntry, pipeline) ||
        !build(quantizeSource(variant, t), quantize, quantizeEntry,
               pipeline) ||
        (vw256 && (!build(fusedSource(residual, variant, t), fused256,
                          fused256Entry, pipeline256) ||
                    !build(normSource(residual, t), norm256, norm256Entry,
                           pipeline256) ||
                    !build(quantizeSource(variant, t), quantize256,
                           quantize256Entry, pipeline256))))
      return false;

    std::vector<int64_t> matrix{shape.rows, shape.cols};
    // q in memory: f4E2M1FN two per byte (norm-pack-fp4).
    std::vector<int64_t> qMatrix{shape.rows,
                                 variant.isFP4() ? shape.cols / 2 : shape.cols};
    std::vector<int64_t> scalesShape{shape.rows, numGroups(variant, shape)};
    auto inputs = [&] {
      std::vector<Descriptor> args{Descriptor(x.data, matrix),
                                   Descriptor(w.data, {shape.cols})};
      if (residual)
        args.push_back(Descriptor(r.data, matrix));
      return args;
    };
    fusedArgs = inputs();
    if (variant.hasScalarOperand())
      fusedArgs.push_back(Descriptor(s.data, {}));
    fusedArgs.push_back(Descriptor(q.data, qMatrix));
    if (!variant.isStatic)
      fusedArgs.push_back(Descriptor(scales.data, scalesShape));
    if (residual)
      fusedArgs.push_back(Descriptor(ro.data, matrix));
    normArgs = inputs();
    normArgs.push_back(Descriptor(y.data, matrix));
    if (residual)
      normArgs.push_back(Descriptor(roUnfused.data, matrix));
    quantizeArgs = {Descriptor(y.data, matrix)};
    if (variant.hasScalarOperand())
      quantizeArgs.push_back(Descriptor(s.data, {}));
    quantizeArgs.push_back(Descriptor(qUnfused.data, qMatrix));
    if (!variant.isStatic)
      quantizeArgs.push_back(Descriptor(scalesUnfused.data, scalesShape));
    return true;
  }

  void callFused() { callKernel(fusedEntry, fusedArgs); }
  void callFused256() { callKernel(fused256Entry, fusedArgs); }
  void callUnfused256() {
    callKernel(norm256Entry, normArgs);
    callKernel(quantize256Entry, quantizeArgs);
  }
  void callUnfused() {
    callKernel(normEntry, normArgs);
    callKernel(quantizeEntry, quantizeArgs);
  }

  /// The fused kernels compute exactly what the unfused pair does.
  bool agrees() {
    callFused();
    callUnfused();
    if (!same("fused kernel"))
      return false;
    if (!fused256Entry)
      return true;
    // Overwritten first, so that the comparison sees these kernels' results.
    for (AlignedBuffer *buffer : {&q, &scales, &ro})
      std::memset(buffer->data, 0xA5, buffer->size);
    for (AlignedBuffer *buffer : {&qUnfused, &scalesUnfused, &roUnfused})
      std::memset(buffer->data, 0x5A, buffer->size);
    callFused256();
    callUnfused256();
    return same("fused kernel for 256-bit vectors");
  }

  bool same(llvm::StringRef what) {
    bool same =
        std::memcmp(q.data, qUnfused.data, qSize) == 0 &&
        std::memcmp(scales.data, scalesUnfused.data, scales.size) == 0 &&
        (!residual || std::memcmp(ro.data, roUnfused.data, 2 * elements) == 0);
    if (!same)
      llvm::errs() << "norm-bench: " << caseName(residual, variant) << ": the "
                   << what << " differs from norm + quantize\n";
    return same;
  }

  bool residual;
  Variant variant;
  QuantShape shape;
  size_t elements;
  AlignedBuffer x, r, w, s;
  size_t qSize;
  AlignedBuffer q, qUnfused, scales, scalesUnfused, y, ro, roUnfused;
  size_t floorBytes;
  AlignedBuffer floorSource, floorDestination;
  std::unique_ptr<mlir::norm::JITModule> fused, norm, quantize, fused256,
      norm256, quantize256;
  void *fusedEntry = nullptr, *normEntry = nullptr, *quantizeEntry = nullptr,
       *fused256Entry = nullptr, *norm256Entry = nullptr,
       *quantize256Entry = nullptr;
  std::vector<Descriptor> fusedArgs, normArgs, quantizeArgs;
};

QuantKernels::QuantKernels() = default;
QuantKernels::~QuantKernels() = default;

static std::vector<QuantShape> quantShapes(bool quick) {
  if (quick)
    return {{4096, 4096}, {32, 8192}};
  return {{8192, 4096}, {32, 8192}};
}

bool QuantKernels::registerBenchmarks(
    unsigned threads, bool quick, const std::vector<llvm::StringRef> &libs,
    const std::function<bool(const std::string &)> &selected,
    const AddFloorBenchmark &add) {
  for (QuantShape shape : quantShapes(quick)) {
    for (bool residual : {false, true}) {
      for (const Variant &variant : kVariants) {
        std::string fusedName =
            benchmarkName(residual, variant, "fused", shape);
        std::string unfusedName =
            benchmarkName(residual, variant, "unfused", shape);
        std::string vw256Name =
            benchmarkName(residual, variant, "fused_vw256", shape);
        bool wantFused = selected(fusedName),
             wantUnfused = selected(unfusedName),
             wantVW256 = selected(vw256Name);
        if (!wantFused && !wantUnfused && !wantVW256)
          continue;
        auto kernel = std::make_unique<QuantKernel>(residual, variant, shape);
        if (!kernel->compile(threads, libs, wantVW256) || !kernel->agrees())
          return false;
        QuantKernel *raw = kernel.get();
        size_t bytes = quantBytes(residual, variant, shape);
        if (wantFused)
          add(
              fusedName, bytes, [raw] { raw->callFused(); },
              raw->floorSource.data, raw->floorDestination.data);
        if (wantUnfused)
          add(
              unfusedName, bytes, [raw] { raw->callUnfused(); },
              raw->floorSource.data, raw->floorDestination.data);
        if (wantVW256)
          add(
              vw256Name, bytes, [raw] { raw->callFused256(); },
              raw->floorSource.data, raw->floorDestination.data);
        kernels.push_back(std::move(kernel));
      }
    }
  }
  return true;
}

void norm_bench::printQuantSummary(
    const std::map<std::string, QuantMedian> &medians,
    const std::map<std::string, double> &torchRates, bool paired) {
  bool header = false;
  for (QuantShape shape :
       {QuantShape{8192, 4096}, QuantShape{4096, 4096}, QuantShape{32, 8192}}) {
    for (bool residual : {false, true}) {
      for (const Variant &variant : kVariants) {
        auto fused =
            medians.find(benchmarkName(residual, variant, "fused", shape));
        auto unfused =
            medians.find(benchmarkName(residual, variant, "unfused", shape));
        if (fused == medians.end())
          continue;
        if (!header) {
          llvm::outs() << "\nNorm + quantization (bf16 in; GB/s of the bytes "
                          "the fused case moves"
                       << (paired ? "; x nt: paired ratio copy_nt time / "
                                    "kernel time"
                                  : "")
                       << "):\n";
          llvm::outs() << llvm::formatv(
              "{0,-30} {1,-10} {2,8} {3,7} {4,10} {5,7} {6,9} {7,10} {8,8} "
              "{9,9} {10,7} {11,7}\n",
              "case", "shape", "fused", "x nt", "unfused", "x nt", "speed-up",
              "saves y?", "torch", "vs torch", "vw256", "x nt");
          header = true;
        }
        double bytes = double(quantBytes(residual, variant, shape));
        double fusedRate = bytes / fused->second.time * 1e-3;
        std::string unfusedRate = "-", unfusedRatio = "-", speedup = "-",
                    saves = "-";
        if (unfused != medians.end()) {
          unfusedRate =
              llvm::formatv("{0:F1}", bytes / unfused->second.time * 1e-3);
          if (paired)
            unfusedRatio = llvm::formatv("{0:F2}", unfused->second.ntRatio);
          speedup = llvm::formatv("{0:F2}x",
                                  unfused->second.time / fused->second.time);
          // The y traffic fusion removes (written and read once, bf16) at
          // the rate of the paired non-temporal copies.
          if (paired && fused->second.ntRate > 0) {
            double savedBytes = 4.0 * double(shape.rows) * double(shape.cols);
            double savedMicros = savedBytes / fused->second.ntRate * 1e6;
            saves = unfused->second.time - fused->second.time >= savedMicros
                        ? "yes"
                        : "no";
          }
        }
        std::string torchRate = "-", vsTorch = "-";
        auto torch =
            torchRates.find(benchmarkName(residual, variant, "torch", shape));
        if (torch != torchRates.end() && torch->second > 0) {
          torchRate = llvm::formatv("{0:F1}", torch->second * 1e-9);
          vsTorch =
              llvm::formatv("{0:F2}x", fusedRate / (torch->second * 1e-9));
        }
        std::string vw256Rate = "-", vw256Ratio = "-";
        auto vw256 = medians.find(
            benchmarkName(residual, variant, "fused_vw256", shape));
        if (vw256 != medians.end()) {
          vw256Rate = llvm::formatv("{0:F1}", bytes / vw256->second.time * 1e-3);
          if (paired)
            vw256Ratio = llvm::formatv("{0:F2}", vw256->second.ntRatio);
        }
        llvm::outs() << llvm::formatv(
            "{0,-30} {1,-10} {2,8:F1} {3,7} {4,10} {5,7} {6,9} {7,10} {8,8} "
            "{9,9} {10,7} {11,7}\n",
            caseName(residual, variant),
            llvm::formatv("{0}x{1}", shape.rows, shape.cols).str(), fusedRate,
            paired ? llvm::formatv("{0:F2}", fused->second.ntRatio).str()
                   : std::string("-"),
            unfusedRate, unfusedRatio, speedup, saves, torchRate, vsTorch,
            vw256Rate, vw256Ratio);
      }
    }
  }
}
