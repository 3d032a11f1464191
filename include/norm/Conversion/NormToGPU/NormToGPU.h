//===- NormToGPU.h - Lower norm ops to GPU kernels --------------*- C++ -*-===//
//
// The GPU lowering of norm ops (norm-lower-gpu): one gpu.launch per op with
// a warp or a block per row.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_NORMTOGPU_NORMTOGPU_H
#define NORM_CONVERSION_NORMTOGPU_NORMTOGPU_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir {
namespace norm {

/// Where the tensors a norm op reads and writes live at run time.
enum class GPUMemory {
  /// In host memory: the kernels take host buffers, which
  /// norm-gpu-host-copies copies to and from device buffers after
  /// bufferization.
  Copy,
  /// In device memory: the kernel reads the operands' buffers directly and
  /// writes results into device buffers (or into the memref a result is
  /// materialized into).
  Device,
};

/// Parameters of the GPU lowering.
/// The options of norm-lower-gpu (generated from Passes.td, where their
/// defaults are).
struct NormLowerGPUPassOptions;

/// Lowers `op` to buffers and a gpu.launch and returns the replacement
/// values of its results (tensors over the result buffers). With `quant` (a
/// norm.quantize of `op`'s y that isQuantizeFusedOnGPU accepts), the kernel
/// writes q (and the scales) instead of y, and the replacements are those
/// of `quant`'s results followed by `op`'s residual_out.
FailureOr<SmallVector<Value>>
lowerNormOpToGPUKernel(RewriterBase &rewriter, NormOpInterface op,
                       const NormLowerGPUPassOptions &options,
                       QuantizeOp quant = {});

/// Whether the kernel of the norm producing `quant`'s input writes `quant`'s
/// results: `quant` is the only user of the norm's y, block-scaled only with
/// row_major scales, and its groups (if any) are held by a power-of-two
/// number of lanes (at most a warp) of one register pass over the row.
bool isQuantizeFusedOnGPU(QuantizeOp quant,
                          const NormLowerGPUPassOptions &options);

/// Lowers a norm.quantize that no norm kernel takes in to buffers and its
/// own gpu.launch (two, chosen at run time, when the length of its groups is
/// dynamic) and returns the replacement values of its results; fails for one
/// that isQuantizeFusedOnGPU.
FailureOr<SmallVector<Value>>
lowerQuantizeOpToGPUKernel(RewriterBase &rewriter, QuantizeOp op,
                           const NormLowerGPUPassOptions &options);

/// Why the gradient op `op` cannot be lowered to the GPU, or an empty string
/// when it can.
std::string getGPUGradBlocker(NormGradOpInterface op);

/// Lowers the gradient op `op` (norm.layer_norm_grad, norm.rms_norm_grad,
/// norm.dyt_grad) to buffers and two gpu.launch ops (the rows, then the
/// deterministic column sums of the parameter gradients) and returns the
/// replacement values of its results.
FailureOr<SmallVector<Value>>
lowerGradOpToGPUKernels(RewriterBase &rewriter, NormGradOpInterface op,
                        const NormLowerGPUPassOptions &options);

/// Adds the patterns rewriting every norm op with lowerNormOpToGPUKernel,
/// every norm.quantize it does not take in with lowerQuantizeOpToGPUKernel
/// and every gradient op with lowerGradOpToGPUKernels.
void populateNormToGPUPatterns(RewritePatternSet &patterns,
                               const NormLowerGPUPassOptions &options);

/// The name norm-lower-gpu gives the kernel of `op` (the `function` and
/// `module` of its gpu.launch): `<enclosing symbol>_norm_kernel`.
std::string getNormKernelName(Operation *op);

/// Whether `name` is a kernel name of norm-lower-gpu after outlining:
/// `getNormKernelName`'s form, possibly with the outliner's `_<n>`.
bool isNormKernelName(StringRef name);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOGPU_NORMTOGPU_H
