//===- RaiseQuantize.h - Decomposed quantization to norm.quantize -*- C++ -*-=//
//
// The quantization half of norm-raise: reads the element-level expression
// (TensorExpr.h) of a conversion to f8E4M3FN or i8 as the static form of
// norm.quantize (DESIGN section 2a), binding the quantized tensor and the
// scale, or says why it does not match.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISEQUANTIZE_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISEQUANTIZE_H

#include "TensorExpr.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir {
namespace norm {

/// A static quantization `q = convert(clamp(round?(y * (1/s))))` in the
/// terms of norm.quantize.
struct QuantizeMatch {
  /// The materialized f16/bf16/f32 tensor that is quantized.
  Value y;
  /// The scale: a leaf (an f32 scalar, or an f32 tensor of unit dims), or
  /// null with `scaleConstant` set.
  TensorExpr *scale = nullptr;
  double scaleConstant = 0.0;
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

/// Analyzes the conversion `root` (a candidate when its result is a tensor
/// of a narrow float or integer type computed from floats). `builder` must
/// have the frame of the root's result type.
QuantizeAnalysis analyzeQuantize(TensorExprBuilder &builder, Operation *root);

/// Replaces `root` by the norm.quantize op of `match` and erases the ops
/// only the chain used. `erased` is called for every op before it is erased.
LogicalResult rewriteQuantize(RewriterBase &rewriter, Operation *root,
                              const QuantizeMatch &match,
                              function_ref<void(Operation *)> erased);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISEQUANTIZE_H
