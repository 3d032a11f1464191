//===- NormToLinalg.h - Decompose norm ops into linalg ----------*- C++ -*-===//
//
// The portable lowering of norm ops to linalg.generic on tensors, exposed as
// a function and a pattern set (the ops' AggregatedOpInterface, in
// norm/ExternalModels/ExternalModels.h, returns the same decomposition).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_NORMTOLINALG_NORMTOLINALG_H
#define NORM_CONVERSION_NORMTOLINALG_NORMTOLINALG_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace mlir {
class DialectRegistry;

namespace norm {

/// Rows whose normalized dims are split over several processes (a norm op
/// partitioned by its ShardingInterface): `combine` turns a tensor of local
/// per-row f64 sums into the sums over the whole rows (a collective), and
/// a whole row holds `rowSizeFactor` times the local number of elements.
struct DistributedRows {
  std::function<Value(OpBuilder &, Location, Value)> combine;
  int64_t rowSizeFactor = 1;
  /// When > 1, each local row sum is accumulated in this many independent
  /// f64 partial sums (the row viewed as [N / lanes, lanes]; one static
  /// normalized dim divisible by it), then added up: the loops vectorize
  /// instead of waiting on one chain of dependent adds.
  int64_t lanes = 0;
};

/// Decomposes `op` into `linalg.generic` ops on tensors (reductions for the
/// row statistics, then one elementwise op) inserted before `op`. Returns
/// the replacement values of the op's results. With `distributed`, every
/// row sum goes through its `combine` before use, and layer_norm takes its
/// statistics without the first-element shift (which differs between
/// processes): sum, combined mean and centered squares all in f64.
FailureOr<SmallVector<Value>>
decomposeNormOp(OpBuilder &b, NormOpInterface op,
                const DistributedRows *distributed = nullptr);

/// Decomposes `op` into `linalg.generic` ops on tensors: the elementwise
/// conversion, preceded in the dynamic form by the group `max |y|`
/// reduction and the scales. Returns the replacement values of its results.
FailureOr<SmallVector<Value>> decomposeQuantizeOp(OpBuilder &b, QuantizeOp op);

/// Decomposes a gradient op (norm.layer_norm_grad, norm.rms_norm_grad,
/// norm.dyt_grad) into `linalg.generic` ops on tensors inserted before it:
/// f64 row sums, the elementwise `dx`, f64 column sums for the parameter
/// gradients, each rounded once. Returns the replacements of its results;
/// failure for any other op.
FailureOr<SmallVector<Value>> decomposeGradOp(OpBuilder &b,
                                              NormGradOpInterface op);

/// Adds the patterns rewriting a gradient op into its decomposition.
void populateGradToLinalgPatterns(RewritePatternSet &patterns);

/// Adds the patterns rewriting every norm op into linalg (`norm-to-linalg`).
void populateNormToLinalgPatterns(RewritePatternSet &patterns);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOLINALG_NORMTOLINALG_H
