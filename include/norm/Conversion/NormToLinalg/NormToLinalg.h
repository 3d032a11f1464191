//===- NormToLinalg.h - Decompose norm ops into linalg ----------*- C++ -*-===//
//
// The portable lowering of norm ops to linalg.generic on tensors, exposed as
// a function, a pattern set, and the ops' AggregatedOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_NORMTOLINALG_NORMTOLINALG_H
#define NORM_CONVERSION_NORMTOLINALG_NORMTOLINALG_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
class DialectRegistry;

namespace norm {

/// Decomposes `op` into `linalg.generic` ops on tensors (reductions for the
/// row statistics, then one elementwise op) inserted at the builder's
/// position. Returns the replacement values of the op's results.
FailureOr<SmallVector<Value>> decomposeNormOp(OpBuilder &b, NormOpInterface op);

/// Decomposes `op` into `linalg.generic` ops on tensors: the elementwise
/// conversion, preceded in the dynamic form by the group `max |y|`
/// reduction and the scales. Returns the replacement values of its results.
FailureOr<SmallVector<Value>> decomposeQuantizeOp(OpBuilder &b, QuantizeOp op);

/// Adds the patterns rewriting every norm op into linalg (`norm-to-linalg`).
void populateNormToLinalgPatterns(RewritePatternSet &patterns);

/// Attaches `linalg::AggregatedOpInterface` (the decomposition above) to the
/// norm ops, so `transform.structured.decompose_interface` applies to them.
void registerAggregatedOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOLINALG_NORMTOLINALG_H
