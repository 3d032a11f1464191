//===- LoweringDriver.h - Apply a norm lowering's patterns ------*- C++ -*-===//
//
// The one driver of the passes that lower norm ops (norm-to-linalg,
// norm-lower-cpu, norm-lower-gpu): their pattern sets, from the exported
// populate...Patterns functions, are applied by upstream's greedy driver to
// the ops that exist when it starts, and a norm op left over is an error.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_LOWERINGDRIVER_H
#define NORM_DIALECT_NORM_UTILS_LOWERINGDRIVER_H

#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class Operation;

namespace norm {

/// Applies `patterns` to the ops nested under `root` that exist now
/// (upstream's greedy driver without folding or region simplification),
/// then reports `error` at every norm op still there. Fails when one is.
LogicalResult applyNormLoweringPatterns(Operation *root,
                                        const FrozenRewritePatternSet &patterns,
                                        StringRef error);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_LOWERINGDRIVER_H
