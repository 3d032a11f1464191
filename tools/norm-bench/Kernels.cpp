//===- Kernels.cpp - The kernels norm-bench measures ------------*- C++ -*-===//
//
// Our kernels are functions on memrefs whose arguments are the caller's
// buffers (`bufferization.to_tensor ... restrict` in,
// `bufferization.materialize_in_destination` out), so nothing is allocated
// per call. The argument order is norm-aot's, so that a JIT kernel and an
// ahead-of-time one are called the same way.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "norm/ExecutionEngine/JIT.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace norm_bench;

//===----------------------------------------------------------------------===//
// Names and sizes
//===----------------------------------------------------------------------===//

const char *norm_bench::caseName(Case kind) {
  switch (kind) {
  case Case::LayerNorm:
    return "layer_norm";
  case Case::RMSNorm:
    return "rms_norm";
  case Case::DyT:
    return "dyt";
  case Case::AddRMSNorm:
    return "add_rms_norm";
  }
  return "";
}

const char *norm_bench::typeName(DType dtype) {
  return dtype == DType::F32 ? "f32" : "bf16";
}

size_t norm_bench::typeSize(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

size_t norm_bench::caseBytes(Case kind, Shape shape, DType dtype) {
  size_t streams = kind == Case::AddRMSNorm ? 4 : 2;
  return streams * Workspace::matrixBytes(shape, dtype);
}

std::string norm_bench::benchmarkName(const std::string &kind,
                                      const std::string &impl, Shape shape,
                                      DType dtype) {
  return llvm::formatv("{0}/{1}/{2}x{3}/{4}", kind, impl, shape.rows,
                       shape.cols, typeName(dtype))
      .str();
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

Buffer::Buffer(size_t bytes) : size(bytes) {
  data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  std::memset(data, 0, bytes);
}

Buffer::~Buffer() { std::free(data); }

/// Fills `count` elements at `data` with pseudo-random values of mean
/// `mean`; bf16 values are f32 values truncated.
static void fillRandom(void *data, size_t count, DType dtype, float mean,
                       float spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, spread);
  for (size_t i = 0; i < count; ++i) {
    float v = dist(rng);
    if (dtype == DType::F32) {
      static_cast<float *>(data)[i] = v;
    } else {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      static_cast<uint16_t *>(data)[i] = uint16_t(bits >> 16);
    }
  }
}

size_t Workspace::matrixBytes(Shape shape, DType dtype) {
  return size_t(shape.rows) * size_t(shape.cols) * typeSize(dtype);
}

Workspace::Workspace(Shape shape, DType dtype)
    : shape(shape), dtype(dtype),
      stride((matrixBytes(shape, dtype) + 63) / 64 * 64), inputs(2 * stride),
      outputs(2 * stride), weight(size_t(shape.cols) * typeSize(dtype)),
      bias(size_t(shape.cols) * typeSize(dtype)), alpha(typeSize(dtype)) {
  size_t elements = size_t(shape.rows) * size_t(shape.cols);
  fillRandom(x(), elements, dtype, 0.5f, 1.5f, 1);
  fillRandom(residual(), elements, dtype, 0.0f, 1.0f, 2);
  fillRandom(weight.data, size_t(shape.cols), dtype, 1.0f, 0.2f, 3);
  fillRandom(bias.data, size_t(shape.cols), dtype, 0.0f, 0.1f, 4);
  // alpha = 0.5 (0x3F000000 in f32, 0x3F00 in bf16).
  if (dtype == DType::F32)
    *static_cast<float *>(alpha.data) = 0.5f;
  else
    *static_cast<uint16_t *>(alpha.data) = 0x3F00;
}

Problem Workspace::problem() const {
  return {dtype,      shape.rows,    shape.cols, x(),
          residual(), weight.data,   bias.data,  0.5f,
          y(),        residualOut(), 1e-5f};
}

//===----------------------------------------------------------------------===//
// Kernel sources
//===----------------------------------------------------------------------===//

std::vector<std::string> norm_bench::kernelArguments(Case kind,
                                                     bool withAlpha) {
  std::vector<std::string> args = {"x"};
  if (kind == Case::DyT && withAlpha)
    args.push_back("alpha");
  args.push_back("weight");
  if (kind == Case::LayerNorm || kind == Case::DyT)
    args.push_back("bias");
  if (kind == Case::AddRMSNorm)
    args.push_back("residual");
  args.push_back("y");
  if (kind == Case::AddRMSNorm)
    args.push_back("residual_out");
  return args;
}

std::string norm_bench::kernelSource(Case kind, Shape shape, DType dtype,
                                     bool dynamic) {
  std::string t = typeName(dtype);
  std::string rows = dynamic ? "?" : std::to_string(shape.rows);
  std::string mat = llvm::formatv("{0}x{1}x{2}", rows, shape.cols, t);
  std::string vec = llvm::formatv("{0}x{1}", shape.cols, t);
  std::string memMat = "memref<" + mat + ">", tenMat = "tensor<" + mat + ">";
  std::string memVec = "memref<" + vec + ">", tenVec = "tensor<" + vec + ">";
  std::string params, body;
  for (const std::string &name : kernelArguments(kind, /*withAlpha=*/false)) {
    bool matrix = name != "weight" && name != "bias";
    const std::string &mem = matrix ? memMat : memVec;
    const std::string &ten = matrix ? tenMat : tenVec;
    params +=
        llvm::formatv("{0}%{1}_m: {2}", params.empty() ? "" : ", ", name, mem)
            .str();
    if (name == "y" || name == "residual_out")
      continue;
    body += llvm::formatv("  %{0} = bufferization.to_tensor %{0}_m restrict : "
                          "{1} to {2}\n",
                          name, mem, ten)
                .str();
  }

  switch (kind) {
  case Case::LayerNorm:
    body += llvm::formatv("  %y = norm.layer_norm %x weight(%weight) "
                          "bias(%bias) : ({0}, {1}, {1}) -> {0}\n",
                          tenMat, tenVec);
    break;
  case Case::RMSNorm:
    body += llvm::formatv(
        "  %y = norm.rms_norm %x weight(%weight) : ({0}, {1}) -> {0}\n", tenMat,
        tenVec);
    break;
  case Case::AddRMSNorm:
    body += llvm::formatv("  %y, %residual_out = norm.rms_norm %x "
                          "weight(%weight) residual(%residual) : ({0}, {1}, "
                          "{0}) -> ({0}, {0})\n",
                          tenMat, tenVec);
    break;
  case Case::DyT:
    body += llvm::formatv(
        "  %alpha = arith.constant dense<0.5> : tensor<{2}>\n"
        "  %y = norm.dyt %x alpha(%alpha) weight(%weight) bias(%bias) : ({0}, "
        "tensor<{2}>, {1}, {1}) -> {0}\n",
        tenMat, tenVec, t);
    break;
  }
  for (const char *output : {"y", "residual_out"}) {
    if (llvm::StringRef(output) == "residual_out" && kind != Case::AddRMSNorm)
      continue;
    body += llvm::formatv("  bufferization.materialize_in_destination %{0} in "
                          "restrict writable %{0}_m : ({1}, {2}) -> ()\n",
                          output, tenMat, memMat)
                .str();
  }
  return llvm::formatv("func.func @kernel({0}) attributes "
                       "{{llvm.emit_c_interface} {{\n{1}  return\n}\n",
                       params, body)
      .str();
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static Descriptor2D matrixDescriptor(void *data, Shape shape) {
  return {data, data, 0, {shape.rows, shape.cols}, {shape.cols, 1}};
}

static Descriptor1D vectorDescriptor(void *data, Shape shape) {
  return {data, data, 0, {shape.cols}, {1}};
}

Kernel::Kernel(Case kind, Workspace &ws)
    : kind(kind), workspace(&ws), x(matrixDescriptor(ws.x(), ws.shape)),
      residual(matrixDescriptor(ws.residual(), ws.shape)),
      y(matrixDescriptor(ws.y(), ws.shape)),
      residualOut(matrixDescriptor(ws.residualOut(), ws.shape)),
      weight(vectorDescriptor(ws.weight.data, ws.shape)),
      bias(vectorDescriptor(ws.bias.data, ws.shape)),
      alpha({ws.alpha.data, ws.alpha.data, 0}) {}

Kernel::~Kernel() = default;

bool Kernel::bind(void *entry, const std::vector<std::string> &arguments,
                  std::string &error) {
  std::array<void *, 8> args{};
  if (!entry || arguments.size() > args.size()) {
    error = "no entry point";
    return false;
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string &name = arguments[i];
    if (name == "x")
      args[i] = &x;
    else if (name == "alpha")
      args[i] = &alpha;
    else if (name == "weight")
      args[i] = &weight;
    else if (name == "bias")
      args[i] = &bias;
    else if (name == "residual")
      args[i] = &residual;
    else if (name == "y")
      args[i] = &y;
    else if (name == "residual_out")
      args[i] = &residualOut;
    else {
      error = "unexpected argument '" + name + "'";
      return false;
    }
  }
  using P = void *;
  switch (arguments.size()) {
  case 3: {
    auto f = reinterpret_cast<void (*)(P, P, P)>(entry);
    call = [f, args] { f(args[0], args[1], args[2]); };
    return true;
  }
  case 4: {
    auto f = reinterpret_cast<void (*)(P, P, P, P)>(entry);
    call = [f, args] { f(args[0], args[1], args[2], args[3]); };
    return true;
  }
  case 5: {
    auto f = reinterpret_cast<void (*)(P, P, P, P, P)>(entry);
    call = [f, args] { f(args[0], args[1], args[2], args[3], args[4]); };
    return true;
  }
  case 6: {
    auto f = reinterpret_cast<void (*)(P, P, P, P, P, P)>(entry);
    call = [f, args] {
      f(args[0], args[1], args[2], args[3], args[4], args[5]);
    };
    return true;
  }
  default:
    error = llvm::formatv("unexpected argument count {0}", arguments.size());
    return false;
  }
}

std::unique_ptr<Kernel>
norm_bench::compileJITKernel(Case kind, Workspace &ws, bool dynamic,
                             const std::string &pipeline,
                             const std::vector<llvm::StringRef> &libs) {
  auto kernel = std::make_unique<Kernel>(kind, ws);
  std::string error;
  kernel->module = mlir::norm::JITModule::compile(
      kernelSource(kind, ws.shape, ws.dtype, dynamic), pipeline, error, libs);
  if (kernel->module &&
      kernel->bind(kernel->module->lookupCInterface("kernel"),
                   kernelArguments(kind, /*withAlpha=*/false), error))
    return kernel;
  llvm::errs() << "norm-bench: cannot compile " << caseName(kind) << " "
               << (dynamic ? "?" : std::to_string(ws.shape.rows)) << "x"
               << ws.shape.cols << " " << typeName(ws.dtype) << " with '"
               << pipeline << "':\n"
               << error << "\n";
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Agreement
//===----------------------------------------------------------------------===//

/// The outputs of the last kernel run on `ws` (y, and residual_out when
/// `both`), as f32.
static std::vector<float> readOutputs(const Workspace &ws, bool both) {
  size_t elements = size_t(ws.shape.rows) * size_t(ws.shape.cols);
  std::vector<float> values;
  values.reserve(both ? 2 * elements : elements);
  for (const void *data : {ws.y(), ws.residualOut()}) {
    for (size_t i = 0; i < elements; ++i) {
      if (ws.dtype == DType::F32) {
        values.push_back(static_cast<const float *>(data)[i]);
      } else {
        uint32_t bits = uint32_t(static_cast<const uint16_t *>(data)[i]) << 16;
        float value;
        std::memcpy(&value, &bits, 4);
        values.push_back(value);
      }
    }
    if (!both)
      break;
  }
  return values;
}

/// `max |a - ref| / (|ref| + rms(ref))` over `count` entries from `begin`;
/// a NaN anywhere counts as infinitely wrong.
static double relativeError(const std::vector<float> &a,
                            const std::vector<float> &ref, size_t begin,
                            size_t count) {
  double sumSquares = 0;
  for (size_t i = begin; i < begin + count; ++i)
    sumSquares += double(ref[i]) * ref[i];
  double rms = std::sqrt(sumSquares / double(count));
  double worst = 0;
  for (size_t i = begin; i < begin + count; ++i) {
    double error = std::abs(double(a[i]) - ref[i]) / (std::abs(ref[i]) + rms);
    if (!(error <= worst))
      worst = std::isnan(error) ? INFINITY : error;
  }
  return worst;
}

bool norm_bench::checkAgreement(
    Case kind, Workspace &ws,
    const std::vector<std::pair<std::string, Kernel *>> &kernels) {
  if (kernels.size() < 2)
    return true;
  bool both = kind == Case::AddRMSNorm;
  size_t elements = size_t(ws.shape.rows) * size_t(ws.shape.cols);
  double bound = ws.dtype == DType::F32 ? 2e-5 : 1.0 / 32;
  kernels.front().second->call();
  std::vector<float> reference = readOutputs(ws, both);
  for (size_t k = 1; k < kernels.size(); ++k) {
    // Poison the outputs so that a kernel that writes nothing disagrees.
    std::memset(ws.outputs.data, 0xFF, ws.outputs.size);
    kernels[k].second->call();
    std::vector<float> values = readOutputs(ws, both);
    for (size_t begin = 0; begin < values.size(); begin += elements) {
      double error = relativeError(values, reference, begin, elements);
      if (error <= bound)
        continue;
      llvm::errs() << llvm::formatv(
          "norm-bench: {0} disagrees with {1}: {2} error {3:e2} > {4:e2}\n",
          kernels[k].first, kernels.front().first,
          begin == 0 ? "y" : "residual_out", error, bound);
      return false;
    }
  }
  return true;
}
