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
/// norm-lower-cpu (defaults in Passes.td).
FailureOr<SmallVector<Value>>
lowerNormOpToVectorLoops(RewriterBase &rewriter, NormOpInterface op,
                         const NormLowerCPUPassOptions &options);

/// Adds the pattern rewriting every norm op with lowerNormOpToVectorLoops.
void populateNormToVectorPatterns(RewritePatternSet &patterns,
                                  const NormLowerCPUPassOptions &options);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H
