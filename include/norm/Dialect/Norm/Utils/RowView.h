//===- RowView.h - Norm ops as rows of normalized elements -----*- C++ -*-===//
//
// Every lowering and transform of a norm op sees its input the same way:
// the leading dims `0..axis-1` are rows, the normalized dims `axis..rank-1`
// one row of N elements (docs/Ops.md#common-semantics). This header
// chooses, once for all of them, the row geometry, how a weight, bias or
// alpha operand is read (the scalar-parameter rule), what an empty input
// gives, and the precision row sums are carried in (docs/Numerics.md#row-sums).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_ROWVIEW_H
#define NORM_DIALECT_NORM_UTILS_ROWVIEW_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace norm {

/// How a `weight`, `bias` or `alpha` operand is read for the elements of a
/// row.
enum class ParameterAccess {
  /// The operand is absent.
  None,
  /// One value for every element of every row (`tensor<T>`, `tensor<1xT>`:
  /// DyT's alpha, ScaleNorm's gain). Read as its element 0.
  Scalar,
  /// One value per normalized element: shape `x.shape[axis:]`.
  Row,
};

/// The row geometry of one norm op or gradient op.
class RowView {
public:
  explicit RowView(NormOpInterface op);
  /// The rows of a gradient op: those of its forward (`x`, normalized from
  /// its `axis` on); `getOp()` is null, `getGradOp()` the op.
  explicit RowView(NormGradOpInterface op);
  /// The rows of a tensor of `inputType` normalized (or quantized) from dim
  /// `axis` on, without a norm op (`getOp()` is null): a norm.quantize.
  RowView(RankedTensorType inputType, int64_t axis);

  NormOpInterface getOp() const { return op; }
  NormGradOpInterface getGradOp() const { return gradOp; }
  RankedTensorType getInputType() const { return inputType; }
  int64_t getRank() const { return inputType.getRank(); }
  /// The first normalized dim (the op's `axis`, made non-negative).
  int64_t getAxis() const { return axis; }
  /// The normalized dims `x.shape[axis:]`.
  ArrayRef<int64_t> getNormalizedShape() const {
    return inputType.getShape().drop_front(axis);
  }
  /// N, when every normalized dim is static; else ShapedType::kDynamic.
  int64_t getStaticRowSize() const { return staticRowSize; }
  /// The number of rows, when every leading dim is static; else
  /// ShapedType::kDynamic.
  int64_t getStaticNumRows() const { return staticNumRows; }

  /// True when some operand has a static 0 dim. Every dim of `weight`,
  /// `bias` and `residual` (of a gradient op: `dy`, `weight` and the
  /// statistics) is one of x's, so the input is then empty even
  /// where x's own dim is dynamic: the results are empty tensors of x's
  /// type, and no lowering emits a loop (or a reshape that assumes
  /// non-empty sizes) for the op.
  bool isStaticallyEmpty() const { return staticallyEmpty; }

  /// How `operand` (a norm op's weight, bias or alpha, or null) is read:
  /// it depends on the operand's shape only.
  static ParameterAccess getParameterAccess(Value operand);

  /// The number of rows and N as index values, from the mixed sizes of x
  /// (`tensor::getMixedSizes`); folded to constants where static.
  std::pair<Value, Value> buildRowCounts(OpBuilder &b, Location loc,
                                         ArrayRef<OpFoldResult> xSizes) const;

  /// The type row sums are carried in across blocks of a row (f64): rows of
  /// 2^20 elements and more keep the accuracy of short ones.
  static Type getRowSumType(MLIRContext *context);

private:
  NormOpInterface op;
  NormGradOpInterface gradOp;
  RankedTensorType inputType;
  int64_t axis = 0;
  int64_t staticRowSize = ShapedType::kDynamic;
  int64_t staticNumRows = ShapedType::kDynamic;
  bool staticallyEmpty = false;
};

/// LayerNorm's one-sweep variance `E[d^2] - E[d]^2` of data d shifted by a
/// value of the row, from the f64 means of d and d^2 (scalars or vectors).
Value buildShiftedVariance(OpBuilder &b, Location loc, Value meanD,
                           Value meanSquareD);

/// Whether the one-sweep variance is accurate, i.e. the shift was close
/// enough to the mean that `E[d^2] - E[d]^2` does not cancel:
/// `2 * var >= E[d^2]`, and `E[d^2]` finite (the squares did not overflow).
/// Rows where it is false need a centered second sweep.
Value buildShiftedVarianceIsAccurate(OpBuilder &b, Location loc, Value variance,
                                     Value meanSquareD);

/// LayerNorm's `mean` statistic from the row mean and `rstd` (both in the
/// compute type): NaN where `rstd` is, i.e. for a row with a NaN or an
/// infinity, whose mean would otherwise depend on where the infinity is
/// relative to the shift (docs/Numerics.md#edge-cases).
Value buildMeanStatistic(OpBuilder &b, Location loc, Value mean, Value rstd);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_ROWVIEW_H
