//===- NormToVector.h - Lower norm ops to vector row loops ------*- C++ -*-===//
//
// The direct CPU lowering of norm ops (norm-lower-cpu).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H
#define NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H

#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace norm {

/// Lowers `op` to an scf.forall over rows with vector sweeps on tensors and
/// returns the replacement values of its results. `options` are those of
/// norm-lower-cpu (defaults in Passes.td). With `quant` (a norm.quantize of
/// `op`'s `y`, normalized over the last dim only; see
/// getFusableQuantizeOp), the rows are quantized as they are computed and
/// the replacements are those of `quant`'s results followed by `op`'s
/// `residual_out`: y never goes to memory.
FailureOr<SmallVector<Value>>
lowerNormOpToVectorLoops(RewriterBase &rewriter, NormOpInterface op,
                         const NormLowerCPUPassOptions &options,
                         QuantizeOp quant = {});

/// Lowers a norm.quantize on its own to vector row loops.
FailureOr<SmallVector<Value>>
lowerQuantizeOpToVectorLoops(RewriterBase &rewriter, QuantizeOp op,
                             const NormLowerCPUPassOptions &options);

/// Lowers a gradient op (norm.layer_norm_grad, norm.rms_norm_grad,
/// norm.dyt_grad) normalized over the last dim (weight absent or a row) to
/// vector row loops in blocks of rows, with deterministic parameter-gradient
/// sums; fails on other forms (which the linalg decomposition then lowers).
FailureOr<SmallVector<Value>>
lowerGradOpToVectorLoops(RewriterBase &rewriter, NormGradOpInterface op,
                         const NormLowerCPUPassOptions &options);

/// Adds the patterns rewriting every norm op with lowerNormOpToVectorLoops
/// (fused with its norm.quantize where getFusableQuantizeOp finds one) and
/// every other norm.quantize with lowerQuantizeOpToVectorLoops.
void populateNormToVectorPatterns(RewritePatternSet &patterns,
                                  const NormLowerCPUPassOptions &options);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H
