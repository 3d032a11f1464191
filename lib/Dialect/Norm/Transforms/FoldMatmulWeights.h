//===- FoldMatmulWeights.h - norm-fold-matmul-weights internals -*- C++ -*-===//
//
// What norm-fold-matmul-weights shares between its plan (the analysis of a
// candidate and the folded right-hand sides, computed before the IR changes:
// FoldMatmulWeightsPlan.cpp) and its rewrite (FoldMatmulWeights.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_LIB_DIALECT_NORM_TRANSFORMS_FOLDMATMULWEIGHTS_H
#define NORM_LIB_DIALECT_NORM_TRANSFORMS_FOLDMATMULWEIGHTS_H

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace mlir {
namespace norm {
namespace fold_matmul_weights {

/// The folded RHS of one matmul, computed before the IR changes: its
/// elements in the RHS element type (host floats for f32 and f64, APFloats
/// otherwise) and the bias row `bias @ W` (empty without a bias).
struct FoldedRhs {
  SmallVector<float> f32;
  SmallVector<double> f64;
  SmallVector<APFloat> other;
  SmallVector<double> biasRow;
};

/// A matmul consuming the norm result, with its constant RHS.
struct MatmulUse {
  /// `linalg.matmul`, `linalg.batch_matmul` or `tosa.matmul`: operand 0 is
  /// the LHS and operand 1 the RHS in all three.
  Operation *matmul = nullptr;
  /// The LHS value of the matmul: the norm result, its collapse to rows
  /// (`tensor.collapse_shape`) or its reshape to `[B, M, K]` (`tosa.reshape`).
  Value lhs;
  /// The constant the RHS is made of, in its own layout: a dense elements
  /// attribute or a dense_resource blob (torch-mlir's exported weights).
  ElementsAttr constant;
  /// The op holding `constant` (`arith.constant`, `tosa.const`, ...).
  Operation *constantOp = nullptr;
  /// The transpose turning `constant` ([N, K] or [B, N, K]) into the RHS
  /// (`linalg.transpose` or `tosa.transpose`), or null.
  Operation *transpose = nullptr;
  /// True when `constant` is laid out [N, K] or [B, N, K] (transpose op or
  /// transposed indexing maps), false for [K, N] (or [B, K, N]).
  bool nMajor = false;
  /// The RHS with the weight folded in (filled by planFold).
  FoldedRhs folded;
};

/// Outcome of the analysis: the uses, or why the candidate is declined.
struct Analysis {
  std::vector<MatmulUse> uses;
  std::string reason;
};

/// A norm op whose weight and bias fold into its matmul consumers.
struct FoldPlan {
  /// Also move rms_norm's per-row scale after the matmuls.
  bool defer = false;
  /// Why defer-scale was asked for but the scale stays (empty otherwise).
  std::string notDeferred;
  /// The weight and bias per element of the normalized dim (empty when
  /// absent; a scalar weight is repeated) and the weight offset.
  SmallVector<double> weight, bias;
  double offset = 0.0;
  /// Size of the normalized dim: the K of every matmul.
  int64_t k = 0;
  std::vector<MatmulUse> uses;
};

/// Reads the constant parameters of `op`, finds its matmul uses and folds
/// their right-hand sides, without changing the IR; fails with the reason
/// the candidate is declined.
FailureOr<FoldPlan> planFold(NormOpInterface op,
                             const NormFoldMatmulWeightsPassOptions &options,
                             std::string &reason);

/// True when defer-scale asks to move the scale of `op` after the matmuls
/// (it applies to rms_norm without residual whose result is rounded once,
/// at the end); planFold then says whether that is sound.
bool canDeferScale(NormOpInterface op,
                   const NormFoldMatmulWeightsPassOptions &options);

/// `value` rounded to nearest even in `semantics`.
APFloat roundTo(double value, const llvm::fltSemantics &semantics);

} // namespace fold_matmul_weights
} // namespace norm
} // namespace mlir

#endif // NORM_LIB_DIALECT_NORM_TRANSFORMS_FOLDMATMULWEIGHTS_H
