//===- Slices.cpp - Norm + matmul slices for norm-bench ---------*- C++ -*-===//
//
// Two slices, f32, hidden size H, matmul weights as constants (as a model's
// weights are after import, which is what lets norm-fold-matmul-weights
// fold them):
//   rms_qkv:        y = rms_norm(x) * w;  q, k, v = y @ Wq, y @ Wk, y @ Wv
//   add_ln_matmul:  s = x + r;  y = layer_norm(s) * g + b;  o = y @ W
// Each is compiled four ways: unfused, folded (weights folded into the
// matmul constants), fused (norm-fuse-matmul: each row tile normalized and
// consumed at once) and folded+fused; rms_qkv also with defer-scale.
//
//===----------------------------------------------------------------------===//

#include "Slices.h"

#include "norm/ExecutionEngine/JIT.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

using namespace norm_bench;

namespace {

enum class Slice { RMSQKV, AddLNMatmul };

const char *sliceName(Slice slice) {
  return slice == Slice::RMSQKV ? "rms_qkv" : "add_ln_matmul";
}

struct SliceShape {
  int64_t rows, hidden;
};

/// Inputs, weight matrices and outputs of a slice.
int64_t numInputs(Slice slice) { return slice == Slice::RMSQKV ? 1 : 2; }
int64_t numMatrices(Slice slice) { return slice == Slice::RMSQKV ? 3 : 1; }
int64_t numOutputs(Slice slice) { return slice == Slice::RMSQKV ? 3 : 2; }

/// Bytes a slice must move at least: its inputs, its weight matrices and
/// its outputs, once each.
size_t sliceBytes(Slice slice, SliceShape shape) {
  size_t rowsBytes = 4 * size_t(shape.rows) * size_t(shape.hidden);
  size_t matrixBytes = 4 * size_t(shape.hidden) * size_t(shape.hidden);
  return (numInputs(slice) + numOutputs(slice)) * rowsBytes +
         numMatrices(slice) * matrixBytes;
}

double sliceFlops(Slice slice, SliceShape shape) {
  return 2.0 * double(shape.rows) * double(shape.hidden) *
         double(shape.hidden) * double(numMatrices(slice));
}

std::string sliceBenchmarkName(Slice slice, const std::string &impl,
                               SliceShape shape) {
  return llvm::formatv("{0}/{1}/{2}x{3}/f32", sliceName(slice), impl,
                       shape.rows, shape.hidden)
      .str();
}

/// `dense<"0x...">` of `values` (little-endian f32).
std::string hexDense(const std::vector<float> &values) {
  static const char digits[] = "0123456789ABCDEF";
  std::string text = "dense<\"0x";
  text.reserve(text.size() + values.size() * 8 + 3);
  for (float value : values) {
    unsigned char bytes[4];
    std::memcpy(bytes, &value, 4);
    for (unsigned char byte : bytes) {
      text += digits[byte >> 4];
      text += digits[byte & 15];
    }
  }
  return text + "\">";
}

std::vector<float> randomValues(size_t count, float mean, float spread,
                                unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, spread);
  std::vector<float> values(count);
  for (float &value : values)
    value = dist(rng);
  return values;
}

/// The slice as `@kernel` on memrefs: inputs, then outputs.
std::string sliceSource(Slice slice, SliceShape shape) {
  int64_t m = shape.rows, h = shape.hidden;
  std::string rowsTensor = llvm::formatv("tensor<{0}x{1}xf32>", m, h);
  std::string rowsMemref = llvm::formatv("memref<{0}x{1}xf32>", m, h);
  std::string vector = llvm::formatv("tensor<{0}xf32>", h);
  std::string matrix = llvm::formatv("tensor<{0}x{1}xf32>", h, h);
  float scale = 1.0f / std::sqrt(float(h));
  std::string body;
  auto line = [&](const std::string &text) { body += "  " + text + "\n"; };
  auto constant = [&](const std::string &name, const std::string &type,
                      const std::vector<float> &values) {
    line("%" + name + " = arith.constant " + hexDense(values) + " : " + type);
  };
  auto input = [&](const std::string &name) {
    line(llvm::formatv("%{0} = bufferization.to_tensor %{0}m restrict : {1} "
                       "to {2}",
                       name, rowsMemref, rowsTensor));
  };
  auto matmul = [&](const std::string &out, const std::string &lhs,
                    const std::string &rhs) {
    line(llvm::formatv("%{0} = linalg.matmul ins(%{1}, %{2} : {3}, {4}) "
                       "outs(%zeros : {3}) -> {3}",
                       out, lhs, rhs, rowsTensor, matrix));
  };
  auto output = [&](const std::string &value, const std::string &name) {
    line(llvm::formatv("bufferization.materialize_in_destination %{0} in "
                       "restrict writable %{1}m : ({2}, {3}) -> ()",
                       value, name, rowsTensor, rowsMemref));
  };

  std::vector<std::string> inputs = {"x"}, outputs;
  input("x");
  if (slice == Slice::AddLNMatmul) {
    inputs.push_back("r");
    input("r");
  }
  line("%zero = arith.constant 0.0 : f32");
  line("%empty = tensor.empty() : " + rowsTensor);
  line(llvm::formatv("%zeros = linalg.fill ins(%zero : f32) outs(%empty : "
                     "{0}) -> {0}",
                     rowsTensor));
  if (slice == Slice::RMSQKV) {
    constant("w", vector, randomValues(h, 1.0f, 0.2f, 11));
    line(llvm::formatv("%y = norm.rms_norm %x weight(%w) : ({0}, {1}) -> {0}",
                       rowsTensor, vector));
    const char *names[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      std::string w = std::string("w") + names[i];
      constant(w, matrix, randomValues(h * h, 0.0f, scale, 12 + i));
      matmul(names[i], "y", w);
      output(names[i], names[i]);
      outputs.push_back(names[i]);
    }
  } else {
    constant("g", vector, randomValues(h, 1.0f, 0.2f, 21));
    constant("b", vector, randomValues(h, 0.0f, 0.1f, 22));
    constant("wo", matrix, randomValues(h * h, 0.0f, scale, 23));
    line(llvm::formatv("%y, %s = norm.layer_norm %x weight(%g) bias(%b) "
                       "residual(%r) : ({0}, {1}, {1}, {0}) -> ({0}, {0})",
                       rowsTensor, vector));
    matmul("o", "y", "wo");
    output("o", "o");
    output("s", "s");
    outputs = {"o", "s"};
  }
  std::string args;
  for (const std::string &name : inputs)
    args += "%" + name + "m: " + rowsMemref + ", ";
  for (const std::string &name : outputs)
    args += "%" + name + "m: " + rowsMemref +
            (&name == &outputs.back() ? "" : ", ");
  return llvm::formatv("func.func @kernel({0}) attributes "
                       "{{llvm.emit_c_interface} {{\n{1}  return\n}\n",
                       args, body)
      .str();
}

/// A 2-D memref descriptor.
struct Descriptor2D {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};

} // namespace

/// The buffers of one compiled slice.
struct norm_bench::SliceKernel {
  std::unique_ptr<mlir::norm::JITModule> module;
  std::vector<std::vector<float>> buffers; // inputs, then outputs
  std::vector<Descriptor2D> descriptors;   // one per buffer
  void *entry = nullptr;

  /// Both slices take four buffers: (x, q, k, v) and (x, r, o, s).
  void call() {
    reinterpret_cast<void (*)(void *, void *, void *, void *)>(entry)(
        &descriptors[0], &descriptors[1], &descriptors[2], &descriptors[3]);
  }
};

namespace {

/// The implementations: the passes run before norm-cpu-pipeline.
struct SliceImpl {
  const char *name;
  std::string passes;
};

std::vector<SliceImpl> sliceImpls(Slice slice, int64_t tileRows) {
  std::string fuse =
      llvm::formatv("norm-fuse-matmul{{tile-rows={0}}", tileRows);
  std::vector<SliceImpl> impls = {
      {"unfused", ""},
      {"folded", "func.func(norm-fold-matmul-weights),"},
      {"fused", "func.func(" + fuse + "),"},
      {"folded_fused", "func.func(norm-fold-matmul-weights," + fuse + "),"}};
  if (slice == Slice::RMSQKV)
    impls.push_back({"folded_defer",
                     "func.func(norm-fold-matmul-weights{defer-scale="
                     "true}),"});
  return impls;
}

std::vector<SliceShape> sliceShapes(bool quick) {
  if (quick)
    return {{4, 512}, {128, 512}};
  // Decode-like (a batch of 8 tokens) and prefill-like (512 tokens), with a
  // hidden size of 1024.
  return {{8, 1024}, {512, 1024}};
}

/// The largest `max |a - b| / (|b| + rms(b))` over the outputs.
double maxRelativeError(const SliceKernel &a, const SliceKernel &b,
                        size_t firstOutput) {
  double worst = 0;
  for (size_t i = firstOutput; i < a.buffers.size(); ++i) {
    const std::vector<float> &x = a.buffers[i], &ref = b.buffers[i];
    double sumSquares = 0;
    for (float value : ref)
      sumSquares += double(value) * value;
    double rms = std::sqrt(sumSquares / double(ref.size()));
    for (size_t j = 0; j < ref.size(); ++j)
      worst = std::max(worst, std::abs(double(x[j]) - ref[j]) /
                                  (std::abs(double(ref[j])) + rms));
  }
  return worst;
}

} // namespace

SliceKernels::SliceKernels() = default;
SliceKernels::~SliceKernels() = default;

bool SliceKernels::registerBenchmarks(
    unsigned threads, bool quick, const std::vector<llvm::StringRef> &libs,
    const std::function<void(const std::string &, size_t,
                             std::function<void()>)> &registerCase) {
  for (Slice slice : {Slice::RMSQKV, Slice::AddLNMatmul}) {
    for (SliceShape shape : sliceShapes(quick)) {
      std::string source = sliceSource(slice, shape);
      size_t rowElements = size_t(shape.rows) * size_t(shape.hidden);
      std::vector<float> x = randomValues(rowElements, 0.5f, 1.5f, 1);
      std::vector<float> r = randomValues(rowElements, 0.0f, 1.0f, 2);
      SliceKernel *reference = nullptr;
      for (const SliceImpl &impl : sliceImpls(slice, 16)) {
        auto kernel = std::make_unique<SliceKernel>();
        std::string pipeline =
            impl.passes +
            llvm::formatv("norm-cpu-pipeline{{threads={0}}", threads).str();
        std::string error;
        kernel->module =
            mlir::norm::JITModule::compile(source, pipeline, error, libs);
        if (!kernel->module) {
          llvm::errs() << "norm-bench: cannot compile slice "
                       << sliceBenchmarkName(slice, impl.name, shape)
                       << " with '" << pipeline << "':\n"
                       << error;
          return false;
        }
        kernel->entry = kernel->module->lookupCInterface("kernel");
        if (!kernel->entry) {
          llvm::errs() << "norm-bench: slice entry point not found\n";
          return false;
        }
        kernel->buffers.push_back(x);
        if (numInputs(slice) == 2)
          kernel->buffers.push_back(r);
        for (int64_t i = 0; i < numOutputs(slice); ++i)
          kernel->buffers.emplace_back(rowElements, 0.0f);
        for (std::vector<float> &buffer : kernel->buffers)
          kernel->descriptors.push_back({buffer.data(),
                                         buffer.data(),
                                         0,
                                         {shape.rows, shape.hidden},
                                         {shape.hidden, 1}});
        // Every implementation must compute what the unfused one does
        // (folding reassociates: f32 agrees to about 1e-6).
        kernel->call();
        if (!reference) {
          reference = kernel.get();
        } else {
          double error =
              maxRelativeError(*kernel, *reference, size_t(numInputs(slice)));
          llvm::errs() << llvm::formatv(
              "norm-bench: {0}: max error vs unfused {1:e2}\n",
              sliceBenchmarkName(slice, impl.name, shape), error);
          if (!(error <= 1e-4)) {
            llvm::errs() << "norm-bench: slice "
                         << sliceBenchmarkName(slice, impl.name, shape)
                         << " disagrees with the unfused slice\n";
            return false;
          }
        }
        SliceKernel *raw = kernel.get();
        kernels.push_back(std::move(kernel));
        registerCase(sliceBenchmarkName(slice, impl.name, shape),
                     sliceBytes(slice, shape), [raw] { raw->call(); });
      }
    }
  }
  return true;
}

void norm_bench::printSliceSummary(const std::map<std::string, double> &times) {
  llvm::outs() << "\nSlices (median time; GB/s of the bytes a slice must "
                  "move: inputs, weight matrices, outputs; x unfused = "
                  "speed-up over the unfused slice)\n";
  llvm::outs() << llvm::formatv("{0,-36} {1,10} {2,8} {3,9} {4,10}\n",
                                "benchmark", "time us", "GB/s", "GFLOP/s",
                                "x unfused");
  for (Slice slice : {Slice::RMSQKV, Slice::AddLNMatmul}) {
    std::vector<SliceShape> shapes = sliceShapes(false);
    for (SliceShape quickShape : sliceShapes(true))
      shapes.push_back(quickShape);
    for (SliceShape shape : shapes) {
      auto base = times.find(sliceBenchmarkName(slice, "unfused", shape));
      if (base == times.end())
        continue;
      for (const SliceImpl &impl : sliceImpls(slice, 16)) {
        auto it = times.find(sliceBenchmarkName(slice, impl.name, shape));
        if (it == times.end() || it->second <= 0)
          continue;
        double seconds = it->second * 1e-6;
        llvm::outs() << llvm::formatv(
            "{0,-36} {1,10:F1} {2,8:F1} {3,9:F1} {4,10:F2}\n",
            sliceBenchmarkName(slice, impl.name, shape), it->second,
            double(sliceBytes(slice, shape)) / seconds / 1e9,
            sliceFlops(slice, shape) / seconds / 1e9,
            base->second / it->second);
      }
    }
  }
}
