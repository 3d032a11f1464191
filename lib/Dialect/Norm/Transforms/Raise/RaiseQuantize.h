//===- RaiseQuantize.h - Decomposed quantization to norm.quantize -*- C++ -*-=//
//
// The quantization half of norm-raise: reads the element-level expression
// (TensorExpr.h) of a conversion to f8E4M3FN or i8 as the static or the
// dynamic per-token form of norm.quantize (DESIGN section 2a), binding the
// quantized tensor and the scale, or says why it does not match.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEQUANTIZE_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEQUANTIZE_H

#include "TensorExpr.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir {
namespace norm {

/// A quantization `q = convert(clamp(round?(y * (1/s))))` in the terms of
/// norm.quantize: static (one given scale) or dynamic per token (the scale
/// of each row computed from its `max |y|`).
struct QuantizeMatch {
  /// The materialized f16/bf16/f32 tensor that is quantized.
  Value y;
  /// Static: the scale, a leaf (an f32 scalar, or an f32 tensor of unit
  /// dims), or null with `scaleConstant` set.
  TensorExpr *scale = nullptr;
  double scaleConstant = 0.0;
  /// Dynamic: `s = max(min(amax, scaleUb) / QMAX, minScale)`; `scaleUb` is
  /// +inf without a cap.
  bool dynamic = false;
  double scaleUb = 0.0;
  double minScale = 0.0;
  /// Dynamic: the tensors the chain materializes the scales in, of the
  /// op's scales shape ([..., 1]) or without the last dim ([...]); their
  /// users after the op read the op's scales instead.
  SmallVector<Value, 1> scaleValues;
  /// f8E4M3FN or i8.
  Type quantizedType;
  /// True when the chain divides by the scale (`y / s`), which the op
  /// computes as `y * (1/s)`.
  bool divides = false;
};

/// What was found at one candidate: a conversion of an f32 tensor to a
/// narrow float or an integer.
struct QuantizeAnalysis {
  bool candidate = false;
  std::optional<QuantizeMatch> match;
  std::string reason;
};

/// `type` as printed, for remarks.
std::string formatType(Type type);

/// `value` in the shortest form that reads back exactly, for remarks.
std::string formatNumber(double value);

/// Why the float min/max `op` (maxnumf/minnumf, a compare-and-select, a
/// TOSA op with `nan_mode = IGNORE`) may turn a NaN into a number (a bound
/// or the other operand), where the norm ops propagate it; an empty string
/// when it propagates NaN, carries the `nnan` fast-math flag, or is no
/// float min/max.
std::string describeNaNDrop(Operation *op);

/// The first float min/max among the ops that compute `root` from `y` (the
/// ops a raise replaces) that may turn a NaN into a number (see
/// describeNaNDrop): why, or an empty string. `root` must have been
/// evaluated by `builder`.
std::string findNaNDrop(TensorExprBuilder &builder, Operation *root, Value y);

/// The materialized value of the frame's shape that computes `expr` among
/// the evaluations that evaluating `root` went through, or null.
Value findMaterialized(TensorExprBuilder &builder, Value root,
                       TensorExpr *expr);

/// Analyzes the conversion `root` (a candidate when its result is a tensor
/// of a narrow float or integer type computed from floats): a scale that
/// comes from a max-reduction is read as the dynamic per-token form.
/// `builder` must have the frame of the root's result type. A clamp, floor
/// or max-reduction of the chain that turns a NaN into a number (where
/// norm.quantize propagates it) declines the match unless its op carries
/// the `nnan` fast-math flag or `assumeNoNans` is set.
QuantizeAnalysis analyzeQuantize(TensorExprBuilder &builder, Operation *root,
                                 bool assumeNoNans = false);

/// Replaces `root` by the norm.quantize op of `match` (for the dynamic
/// form, also the uses of the chain's scales that the op dominates) and
/// erases the ops only the chain used, all through `rewriter` (its listener
/// is told of every op erased). Fails with the IR unchanged when the op
/// does not verify.
LogicalResult rewriteQuantize(RewriterBase &rewriter, Operation *root,
                              const QuantizeMatch &match);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEQUANTIZE_H
