//===- Kernels.h - The kernels norm-bench measures --------------*- C++ -*-===//
//
// Buffers of one benchmark shape, the MLIR source of each case, and our
// kernels bound to those buffers: JIT-compiled here (static or dynamic
// leading dim, any norm-cpu-pipeline options) or built ahead of time by
// norm-aot (AOT.h).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_KERNELS_H
#define NORM_TOOLS_NORMBENCH_KERNELS_H

#include "baselines/Baselines.h"

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace norm {
class JITModule;
} // namespace norm
} // namespace mlir

namespace norm_bench {

struct Shape {
  int64_t rows, cols;
};

const char *caseName(Case kind);
const char *typeName(DType dtype);
size_t typeSize(DType dtype);

/// Bytes a case must move: read x (and residual), write y (and the residual
/// stream).
size_t caseBytes(Case kind, Shape shape, DType dtype);

/// `<case>/<impl>/<M>x<N>/<dtype>`.
std::string benchmarkName(const std::string &kind, const std::string &impl,
                          Shape shape, DType dtype);

/// A 64-byte aligned, zeroed buffer.
struct Buffer {
  explicit Buffer(size_t bytes);
  ~Buffer();
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  void *data;
  size_t size;
};

/// The buffers of one (shape, dtype). The inputs x and residual are
/// adjacent in one allocation and the outputs y and residual_out in
/// another, so that one copy from `x` to `y` of `caseBytes / 2` bytes moves
/// exactly the bytes of any case (the paired floors).
struct Workspace {
  Workspace(Shape shape, DType dtype);
  static size_t matrixBytes(Shape shape, DType dtype);

  Shape shape;
  DType dtype;
  /// Offset of the second matrix in `inputs` and `outputs` (64-aligned).
  size_t stride;
  Buffer inputs, outputs, weight, bias, alpha;
  void *x() const { return inputs.data; }
  void *residual() const { return static_cast<char *>(inputs.data) + stride; }
  void *y() const { return outputs.data; }
  void *residualOut() const {
    return static_cast<char *>(outputs.data) + stride;
  }
  /// The case's buffers for the C++ baselines.
  Problem problem() const;
};

/// The arguments of a kernel, in the order of norm-aot's kernels
/// (python/norm_mlir/_kernels.py): x, [alpha], [weight], [bias],
/// [residual], y, [residual_out]. JIT kernels take alpha as a constant.
std::vector<std::string> kernelArguments(Case kind, bool withAlpha);

/// MLIR source of `@kernel`, writing into caller-provided buffers, on a
/// static or a dynamic (`?`) leading dim; dyt's alpha is a constant 0.5.
std::string kernelSource(Case kind, Shape shape, DType dtype, bool dynamic);

/// Memref descriptors of rank 0 to 2 over the workspace's buffers.
struct Descriptor0D {
  void *allocated, *aligned;
  int64_t offset;
};
struct Descriptor1D {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
};
struct Descriptor2D {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};

/// One of our kernels bound to a workspace; `call()` runs it once. It is
/// heap-allocated and never moved: `call` points into it.
struct Kernel {
  Kernel(Case kind, Workspace &ws);
  ~Kernel();
  /// Binds `call` to `entry`, a `_mlir_ciface_` function taking pointers to
  /// the descriptors named by `arguments` (kernelArguments).
  bool bind(void *entry, const std::vector<std::string> &arguments,
            std::string &error);

  Case kind;
  Workspace *workspace;
  std::function<void()> call;
  std::unique_ptr<mlir::norm::JITModule> module;
  Descriptor2D x, residual, y, residualOut;
  Descriptor1D weight, bias;
  Descriptor0D alpha;
};

/// JIT-compiles `kernelSource(kind, shape, dtype, dynamic)` with `pipeline`
/// and binds it. Returns null with a message on stderr on failure.
std::unique_ptr<Kernel>
compileJITKernel(Case kind, Workspace &ws, bool dynamic,
                 const std::string &pipeline,
                 const std::vector<llvm::StringRef> &libs);

/// Runs each of `kernels` (name, kernel), all of case `kind` on `ws`, once
/// and checks that each computes what the first one does: the error metric
/// of docs/Numerics.md per output tensor, within twice the dtype's bound
/// against the reference (f32 2e-5, bf16 2^-5). Prints the disagreement and
/// returns false when one does not.
bool checkAgreement(
    Case kind, Workspace &ws,
    const std::vector<std::pair<std::string, Kernel *>> &kernels);

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_KERNELS_H
