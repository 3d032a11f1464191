//===- RaiseBlockScaled.h - Decomposed block-scaled quantization -*- C++ -*-=//
//
// The block-scaled half of norm-raise's quantization raise: reads the
// element-level expression (TensorExpr.h) of a conversion to f8E4M3FN or
// f4E2M1FN, in a frame whose last dim is the group, as the MX (MXFP8,
// MXFP4, FP8 1x128) or NVFP4 form of norm.quantize (DESIGN section 2d), or
// says why it does not match.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEBLOCKSCALED_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEBLOCKSCALED_H

#include "TensorExpr.h"

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir {
namespace norm {

/// A block-scaled quantization in the terms of norm.quantize.
struct BlockScaledMatch {
  /// The materialized f16/bf16/f32 tensor of the frame's shape that is
  /// quantized (the groups are its last dim).
  Value y;
  /// f8E4M3FN or f4E2M1FN.
  Type quantizedType;
  /// f8E8M0FNU (MX) or f8E4M3FN (NVFP4).
  Type scalesElementType;
  int64_t groupSize = 0;
  ScaleRounding rounding = ScaleRounding::floor;
  /// NVFP4: the per-tensor global scale, a leaf (an f32 scalar or an f32
  /// tensor of unit dims), or null with `globalScaleConstant` set.
  TensorExpr *globalScale = nullptr;
  double globalScaleConstant = 0.0;
  /// The tensors of scale codes the chain materializes (of
  /// `scalesElementType`, the frame's shape with the last dim 1 or
  /// dropped); their users after the op read the op's scales instead.
  SmallVector<Value, 1> scaleValues;
};

/// What was found at one conversion to a narrow float.
struct BlockScaledAnalysis {
  /// True for a conversion to f4E2M1FN, and for one to f8E4M3FN whose
  /// scaling is built from the ops of the block-scaled forms (exp2, log2,
  /// floor, ceil, a narrow float scale).
  bool candidate = false;
  std::optional<BlockScaledMatch> match;
  std::string reason;
  /// The ops of narrow float tensors the candidate's chain reads (NVFP4's
  /// f8E4M3FN scales): part of it, not candidates of their own.
  SmallVector<Operation *> scaleOps;
};

/// Analyzes the conversion `root`. `builder` must have the frame of the
/// root's result type and block-scale ops enabled (`setBlockScaleOps`). A
/// clamp or max-reduction of the chain that turns a NaN into a number
/// declines the match unless its op carries `nnan` or `assumeNoNans` is
/// set.
BlockScaledAnalysis analyzeBlockScaled(TensorExprBuilder &builder,
                                       Operation *root, bool assumeNoNans);

/// Replaces `root` by the norm.quantize op of `match` (and the uses of the
/// chain's scale codes that the op dominates by its scales), and erases the
/// ops only the chain used, through `rewriter`. Fails with the IR unchanged
/// when the op does not verify.
LogicalResult rewriteBlockScaled(RewriterBase &rewriter, Operation *root,
                                 const BlockScaledMatch &match);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEBLOCKSCALED_H
