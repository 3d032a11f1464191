//===- Grad.cpp - Gradient cases for norm-bench -----------------*- C++ -*-===//
//
// Cases `layer_norm_grad` (weight and bias), `rms_norm_grad` (weight) and
// `dyt_grad` (weight and bias), f32 and bf16, one module each:
// @kernel(dy, x, [mean], rstd, w, dx, dw, [db]). Each is compiled for the
// static shape and, as `<op>_grad/dyn/...`, for dynamic dims (`?x?`,
// called with the same sizes).
//
//===----------------------------------------------------------------------===//

#include "Grad.h"
#include "KernelCall.h"

#include "norm/ExecutionEngine/JIT.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace norm_bench;

namespace {

struct GradShape {
  int64_t rows, cols;
};

const char *const kOps[] = {"layer_norm", "rms_norm", "dyt"};
const char *const kDTypes[] = {"f32", "bf16"};

std::string benchmarkName(llvm::StringRef op, GradShape shape,
                          llvm::StringRef dtype, bool dynamic) {
  return llvm::formatv("{0}_grad/{1}{2}x{3}/{4}", op, dynamic ? "dyn/" : "",
                       shape.rows, shape.cols, dtype)
      .str();
}

size_t elementBytes(llvm::StringRef dtype) { return dtype == "f32" ? 4 : 2; }

bool hasMean(llvm::StringRef op) { return op == "layer_norm"; }
bool isDyT(llvm::StringRef op) { return op == "dyt"; }

/// Read dy, x, the f32 statistics and the weight; write dx, dweight and
/// (layer_norm) dbias.
size_t gradBytes(llvm::StringRef op, GradShape shape, llvm::StringRef dtype) {
  size_t e = elementBytes(dtype);
  size_t elements = size_t(shape.rows) * size_t(shape.cols);
  // DyT: alpha and the weight read; dweight, dbias and dalpha written.
  if (isDyT(op))
    return 3 * e * elements + 3 * e * size_t(shape.cols) + 2 * e;
  size_t stats = (hasMean(op) ? 2 : 1) * 4 * size_t(shape.rows);
  size_t params = (hasMean(op) ? 3 : 2) * e * size_t(shape.cols);
  return 3 * e * elements + stats + params;
}

std::string gradSource(llvm::StringRef op, GradShape shape,
                       llvm::StringRef dtype, bool dynamic) {
  std::string rows = dynamic ? "?" : std::to_string(shape.rows),
              cols = dynamic ? "?" : std::to_string(shape.cols);
  std::string x = llvm::formatv("tensor<{0}x{1}x{2}>", rows, cols, dtype),
              xm = llvm::formatv("memref<{0}x{1}x{2}>", rows, cols, dtype),
              w = llvm::formatv("tensor<{0}x{1}>", cols, dtype),
              wm = llvm::formatv("memref<{0}x{1}>", cols, dtype),
              st = llvm::formatv("tensor<{0}xf32>", rows),
              stm = llvm::formatv("memref<{0}xf32>", rows);
  std::string params = "%dym: " + xm + ", %xm: " + xm;
  std::string body = toTensor("dy", xm, x) + toTensor("x", xm, x);
  if (isDyT(op)) {
    std::string a = llvm::formatv("tensor<{0}>", dtype),
                am = llvm::formatv("memref<{0}>", dtype);
    params += ", %am: " + am + ", %wm: " + wm + ", %dxm: " + xm +
              ", %dwm: " + wm + ", %dbm: " + wm + ", %dam: " + am;
    body += toTensor("a", am, a) + toTensor("w", wm, w);
    body += llvm::formatv("  %dx, %dw, %db, %da = norm.dyt_grad %dy, %x "
                          "alpha(%a) weight(%w) {{has_bias} : ({0}, {0}, {1}, "
                          "{2}) -> ({0}, {2}, {2}, {1})\n",
                          x, a, w)
                .str();
    body += store("dx", x, xm) + store("dw", w, wm) + store("db", w, wm) +
            store("da", a, am);
    return wrap(params, body);
  }
  std::string saved, types = x + ", " + x;
  if (hasMean(op)) {
    params += ", %meanm: " + stm;
    body += toTensor("mean", stm, st);
    saved += " mean(%mean)";
    types += ", " + st;
  }
  params +=
      ", %rstdm: " + stm + ", %wm: " + wm + ", %dxm: " + xm + ", %dwm: " + wm;
  body += toTensor("rstd", stm, st) + toTensor("w", wm, w);
  saved += " rstd(%rstd) weight(%w)";
  types += ", " + st + ", " + w;
  if (hasMean(op)) {
    params += ", %dbm: " + wm;
    body += llvm::formatv("  %dx, %dw, %db = norm.layer_norm_grad %dy, "
                          "%x{0} {{has_bias} : ({1}) -> ({2}, {3}, {3})\n",
                          saved, types, x, w)
                .str();
  } else {
    body += llvm::formatv("  %dx, %dw = norm.rms_norm_grad %dy, %x{0} : "
                          "({1}) -> ({2}, {3})\n",
                          saved, types, x, w)
                .str();
  }
  body += store("dx", x, xm) + store("dw", w, wm);
  if (hasMean(op))
    body += store("db", w, wm);
  return wrap(params, body);
}

float readElement(const void *data, size_t i, bool f32) {
  if (f32)
    return static_cast<const float *>(data)[i];
  uint32_t bits = uint32_t(static_cast<const uint16_t *>(data)[i]) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

} // namespace

/// The buffers and module of one case.
struct norm_bench::GradKernel {
  GradKernel(llvm::StringRef op, GradShape shape, llvm::StringRef dtype,
             bool dynamic)
      : op(op.str()), dtype(dtype.str()), shape(shape), dynamic(dynamic),
        elements(size_t(shape.rows) * size_t(shape.cols)),
        e(elementBytes(dtype)), dy(e * elements), x(e * elements),
        mean(4 * size_t(shape.rows)), rstd(4 * size_t(shape.rows)),
        w(e * size_t(shape.cols)), dx(e * elements), dw(e * size_t(shape.cols)),
        db(e * size_t(shape.cols)), alpha(8), dalpha(8),
        floorBytes(gradBytes(op, shape, dtype) / 2), floorSource(floorBytes),
        floorDestination(floorBytes) {}

  void fill(void *data, size_t count, float center, float spread,
            unsigned seed) {
    if (e == 2)
      return fillBF16(data, count, center, spread, seed);
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(center, spread);
    for (size_t i = 0; i < count; ++i)
      static_cast<float *>(data)[i] = dist(rng);
  }

  bool compile(unsigned threads, const std::vector<llvm::StringRef> &libs) {
    fill(dy.data, elements, 0.0f, 1.0f, 11);
    fill(x.data, elements, 0.5f, 1.0f, 12);
    fill(w.data, size_t(shape.cols), 1.0f, 0.2f, 13);
    // alpha = 0.5, exact in f32 and bf16.
    if (e == 4)
      *static_cast<float *>(alpha.data) = 0.5f;
    else
      *static_cast<uint16_t *>(alpha.data) = 0x3F00;
    // The statistics of x, as the forward returns them.
    bool f32 = e == 4;
    auto *meanOut = static_cast<float *>(mean.data);
    auto *rstdOut = static_cast<float *>(rstd.data);
    for (int64_t r = 0; r < shape.rows; ++r) {
      double sum = 0, squares = 0;
      for (int64_t c = 0; c < shape.cols; ++c)
        sum += readElement(x.data, size_t(r * shape.cols + c), f32);
      double mu = hasMean(op) ? sum / double(shape.cols) : 0.0;
      for (int64_t c = 0; c < shape.cols; ++c) {
        double d = readElement(x.data, size_t(r * shape.cols + c), f32) - mu;
        squares += d * d;
      }
      meanOut[r] = float(mu);
      rstdOut[r] = float(1.0 / std::sqrt(squares / double(shape.cols) + 1e-5));
    }
    std::string error;
    module = mlir::norm::JITModule::compile(
        gradSource(op, shape, dtype, dynamic),
        llvm::formatv("norm-cpu-pipeline{{threads={0}}", threads).str(), error,
        libs);
    entry = module ? module->lookupCInterface("kernel") : nullptr;
    if (!entry) {
      llvm::errs() << "norm-bench: " << op
                   << "_grad does not compile: " << error << "\n";
      return false;
    }
    std::vector<int64_t> matrix{shape.rows, shape.cols};
    args = {Descriptor(dy.data, matrix), Descriptor(x.data, matrix)};
    if (isDyT(op)) {
      args.push_back(Descriptor(alpha.data, {}));
      args.push_back(Descriptor(w.data, {shape.cols}));
      args.push_back(Descriptor(dx.data, matrix));
      args.push_back(Descriptor(dw.data, {shape.cols}));
      args.push_back(Descriptor(db.data, {shape.cols}));
      args.push_back(Descriptor(dalpha.data, {}));
      return true;
    }
    if (hasMean(op))
      args.push_back(Descriptor(mean.data, {shape.rows}));
    args.push_back(Descriptor(rstd.data, {shape.rows}));
    args.push_back(Descriptor(w.data, {shape.cols}));
    args.push_back(Descriptor(dx.data, matrix));
    args.push_back(Descriptor(dw.data, {shape.cols}));
    if (hasMean(op))
      args.push_back(Descriptor(db.data, {shape.cols}));
    return true;
  }

  void call() { callKernel(entry, args); }

  /// dx of a few rows against the formula in f64 (a binding mistake must
  /// not be timed).
  bool agrees() {
    call();
    bool f32 = e == 4;
    double bound = f32 ? 1e-4 : 3e-2;
    const auto *meanIn = static_cast<const float *>(mean.data);
    const auto *rstdIn = static_cast<const float *>(rstd.data);
    for (int64_t r : {int64_t(0), shape.rows / 2, shape.rows - 1}) {
      size_t base = size_t(r * shape.cols);
      if (isDyT(op)) {
        double a = readElement(alpha.data, 0, f32);
        for (int64_t c = 0; c < shape.cols; ++c) {
          double t = std::tanh(a * readElement(x.data, base + c, f32));
          double want = readElement(dy.data, base + c, f32) *
                        readElement(w.data, size_t(c), f32) * a * (1 - t * t);
          double got = readElement(dx.data, base + c, f32);
          if (std::fabs(got - want) > bound * (std::fabs(want) + 1.0)) {
            llvm::errs() << "norm-bench: dyt_grad " << dtype << ": dx[" << r
                         << "][" << c << "] = " << got << ", expected " << want
                         << "\n";
            return false;
          }
        }
        continue;
      }
      double sumG = 0, sumGX = 0, scale = 0;
      std::vector<double> g(size_t(shape.cols)), xh(size_t(shape.cols));
      for (int64_t c = 0; c < shape.cols; ++c) {
        xh[c] = (readElement(x.data, base + c, f32) - meanIn[r]) * rstdIn[r];
        g[c] = readElement(dy.data, base + c, f32) *
               readElement(w.data, size_t(c), f32);
        sumG += g[c];
        sumGX += g[c] * xh[c];
      }
      double n = double(shape.cols);
      for (int64_t c = 0; c < shape.cols; ++c) {
        double inner = g[c] - xh[c] * sumGX / n;
        if (hasMean(op))
          inner -= sumG / n;
        double want = rstdIn[r] * inner;
        scale = std::max(scale, std::fabs(want));
        double got = readElement(dx.data, base + c, f32);
        if (std::fabs(got - want) > bound * (std::fabs(want) + 1.0)) {
          llvm::errs() << "norm-bench: " << op << "_grad " << dtype << ": dx["
                       << r << "][" << c << "] = " << got << ", expected "
                       << want << "\n";
          return false;
        }
      }
    }
    return true;
  }

  std::string op, dtype;
  GradShape shape;
  bool dynamic;
  size_t elements, e;
  AlignedBuffer dy, x, mean, rstd, w, dx, dw, db, alpha, dalpha;
  size_t floorBytes;
  AlignedBuffer floorSource, floorDestination;
  std::unique_ptr<mlir::norm::JITModule> module;
  void *entry = nullptr;
  std::vector<Descriptor> args;
};

GradKernels::GradKernels() = default;
GradKernels::~GradKernels() = default;

static GradShape gradShape(bool quick) {
  return quick ? GradShape{4096, 4096} : GradShape{8192, 4096};
}

bool GradKernels::registerBenchmarks(
    unsigned threads, bool quick, const std::vector<llvm::StringRef> &libs,
    const std::function<bool(const std::string &)> &selected,
    const AddFloorBenchmark &add) {
  GradShape shape = gradShape(quick);
  // The decomposition rounds f64 sums to bf16 through compiler-rt's
  // __truncdfbf2, which MLIR's runner utilities carry.
  std::vector<llvm::StringRef> gradLibs(libs);
  std::string runnerUtils =
      std::string(NORM_LLVM_LIBRARY_DIR) + "/libmlir_c_runner_utils.so";
  gradLibs.push_back(runnerUtils);
  for (bool dynamic : {false, true}) {
    for (const char *op : kOps) {
      for (const char *dtype : kDTypes) {
        std::string name = benchmarkName(op, shape, dtype, dynamic);
        if (!selected(name))
          continue;
        auto kernel = std::make_unique<GradKernel>(op, shape, dtype, dynamic);
        if (!kernel->compile(threads, gradLibs) || !kernel->agrees())
          return false;
        GradKernel *raw = kernel.get();
        add(
            name, gradBytes(op, shape, dtype), [raw] { raw->call(); },
            raw->floorSource.data, raw->floorDestination.data);
        kernels.push_back(std::move(kernel));
      }
    }
  }
  return true;
}

void norm_bench::printGradSummary(
    const std::map<std::string, double> &times,
    const std::map<std::string, double> &ntRatios,
    const std::map<std::string, double> &torchRates, bool paired) {
  bool header = false;
  for (GradShape shape : {GradShape{8192, 4096}, GradShape{4096, 4096}}) {
    for (const char *op : kOps) {
      for (const char *dtype : kDTypes) {
        for (bool dynamic : {false, true}) {
          std::string name = benchmarkName(op, shape, dtype, dynamic);
          auto time = times.find(name);
          if (time == times.end())
            continue;
          if (!header) {
            llvm::outs() << "\nGradients (GB/s of dy, x, statistics, weight "
                            "read and dx, dweight, dbias written"
                         << (paired ? "; x nt: paired ratio copy_nt time / "
                                      "kernel time"
                                    : "")
                         << "):\n";
            llvm::outs() << llvm::formatv(
                "{0,-18} {1,-10} {2,-7} {3,-5} {4,8} {5,7} {6,8} {7,9}\n",
                "case", "shape", "dims", "dtype", "GB/s", "x nt", "torch",
                "vs torch");
            header = true;
          }
          auto ratio = ntRatios.find(name);
          double rate =
              double(gradBytes(op, shape, dtype)) / time->second * 1e-3;
          std::string torchRate = "-", vsTorch = "-";
          auto torch =
              torchRates.find(llvm::formatv("{0}_grad/torch/{1}x{2}/{3}", op,
                                            shape.rows, shape.cols, dtype)
                                  .str());
          if (torch != torchRates.end() && torch->second > 0) {
            torchRate = llvm::formatv("{0:F1}", torch->second * 1e-9);
            vsTorch = llvm::formatv("{0:F2}x", rate / (torch->second * 1e-9));
          }
          llvm::outs() << llvm::formatv(
              "{0,-18} {1,-10} {2,-7} {3,-5} {4,8:F1} {5,7} {6,8} {7,9}\n",
              std::string(op) + "_grad",
              llvm::formatv("{0}x{1}", shape.rows, shape.cols).str(),
              dynamic ? "dynamic" : "static", dtype, rate,
              paired && ratio != ntRatios.end()
                  ? llvm::formatv("{0:F2}", ratio->second).str()
                  : std::string("-"),
              torchRate, vsTorch);
        }
      }
    }
  }
}
