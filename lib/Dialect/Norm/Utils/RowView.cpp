//===- RowView.cpp - Norm ops as rows of normalized elements --------------===//
//
// The row geometry, parameter access and row-sum precision every norm
// lowering and transform shares (see RowView.h).
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

#include <limits>

using namespace mlir;
using namespace mlir::norm;

/// The product of `sizes`, or ShapedType::kDynamic when one is dynamic.
static int64_t getStaticProduct(ArrayRef<int64_t> sizes) {
  int64_t product = 1;
  for (int64_t size : sizes) {
    if (ShapedType::isDynamic(size))
      return ShapedType::kDynamic;
    product *= size;
  }
  return product;
}

RowView::RowView(RankedTensorType inputType, int64_t axis)
    : inputType(inputType), axis(axis) {
  staticRowSize = getStaticProduct(inputType.getShape().drop_front(axis));
  staticNumRows = getStaticProduct(inputType.getShape().take_front(axis));
  staticallyEmpty = llvm::is_contained(inputType.getShape(), 0);
}

/// True when some operand of `op` has a static 0 dim.
static bool hasStaticallyEmptyOperand(Operation *op) {
  return llvm::any_of(op->getOperands(), [](Value operand) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    return type && llvm::is_contained(type.getShape(), 0);
  });
}

RowView::RowView(NormOpInterface op)
    : RowView(op.getInputType(), op.getNormalizedDim()) {
  this->op = op;
  staticallyEmpty = hasStaticallyEmptyOperand(op);
}

RowView::RowView(NormGradOpInterface op)
    : RowView(op.getInputType(), op.getNormalizedDim()) {
  gradOp = op;
  staticallyEmpty = hasStaticallyEmptyOperand(op);
}

ParameterAccess RowView::getParameterAccess(Value operand) {
  if (!operand)
    return ParameterAccess::None;
  auto type = cast<ShapedType>(operand.getType());
  return isScalarParameterShape(type.getShape()) ? ParameterAccess::Scalar
                                                 : ParameterAccess::Row;
}

std::pair<Value, Value>
RowView::buildRowCounts(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> xSizes) const {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value numRows = one, rowSize = one;
  for (auto [d, size] : llvm::enumerate(xSizes)) {
    Value &product = int64_t(d) < axis ? numRows : rowSize;
    product = b.createOrFold<arith::MulIOp>(
        loc, product, getValueOrCreateConstantIndexOp(b, loc, size));
  }
  return {numRows, rowSize};
}

Type RowView::getRowSumType(MLIRContext *context) {
  return Float64Type::get(context);
}

Value mlir::norm::buildShiftedVariance(OpBuilder &b, Location loc, Value meanD,
                                       Value meanSquareD) {
  return arith::SubFOp::create(b, loc, meanSquareD,
                               arith::MulFOp::create(b, loc, meanD, meanD));
}

Value mlir::norm::buildShiftedVarianceIsAccurate(OpBuilder &b, Location loc,
                                                 Value variance,
                                                 Value meanSquareD) {
  Value close = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGE,
      arith::MulFOp::create(b, loc,
                            buildFloatConstant(b, loc, variance.getType(), 2.0),
                            variance),
      meanSquareD);
  // An overflowed sum of squares (+inf) says nothing about the variance.
  Value finite = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, meanSquareD,
      buildFloatConstant(b, loc, meanSquareD.getType(),
                         std::numeric_limits<double>::infinity()));
  return arith::AndIOp::create(b, loc, close, finite);
}

Value mlir::norm::buildMeanStatistic(OpBuilder &b, Location loc, Value mean,
                                     Value rstd) {
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, rstd, rstd);
  return arith::SelectOp::create(b, loc, isNaN, rstd, mean);
}
