//===- RowSweeps.cpp - Vector sweeps over the rows of a norm op -*- C++ -*-===//
//
// The pieces of norm-lower-cpu's row loop that read and write rows: the
// [rows, N] view of the operands, masked vector reads and writes, the sweep
// over full vectors plus one masked tail step, and row sums accumulated in
// vector registers within blocks and in the row-sum type across blocks.
//
//===----------------------------------------------------------------------===//

#include "RowLoopBuilder.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Support/ReshapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::cpu_lowering;

namespace {
/// A tensor of shape [d0, ...] with a leading unit dim, [1, d0, ...], and
/// the reassociations between the two and the row [1, N].
struct UnitRow {
  UnitRow(Builder &b, RankedTensorType type, ArrayRef<OpFoldResult> sizes) {
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, type.getShape());
    unitType = type.clone(shape);
    unitSizes.push_back(b.getIndexAttr(1));
    llvm::append_range(unitSizes, sizes);
    ReassociationIndices all;
    for (int64_t d = 1; d <= type.getRank(); ++d) {
      if (d > 1)
        unitGroups.push_back({d});
      all.push_back(d);
    }
    unitGroups.insert(unitGroups.begin(), {0, 1});
    rowGroups = {{0}, all};
  }
  RankedTensorType unitType;
  SmallVector<OpFoldResult> unitSizes;
  /// [d0, ...] <-> [1, d0, ...]: [[0, 1], [2], ...].
  SmallVector<ReassociationIndices> unitGroups;
  /// [1, d0, ...] <-> [1, N]: [[0], [1, 2, ...]].
  SmallVector<ReassociationIndices> rowGroups;
};
} // namespace

SmallVector<int64_t>
mlir::norm::cpu_lowering::getShapeThroughCasts(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (Value source = value;
       auto castOp = source.getDefiningOp<tensor::CastOp>();) {
    source = castOp.getSource();
    auto sourceType = dyn_cast<RankedTensorType>(source.getType());
    if (!sourceType || sourceType.getRank() != type.getRank())
      break;
    for (auto [size, known] : llvm::zip_equal(shape, sourceType.getShape()))
      if (ShapedType::isDynamic(size))
        size = known;
  }
  return shape;
}

Value mlir::norm::cpu_lowering::refineStaticSizes(OpBuilder &b, Location loc,
                                                  Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.hasStaticShape())
    return value;
  SmallVector<int64_t> shape = getShapeThroughCasts(value);
  // Sizes that fold to constants.
  for (auto [size, mixed] :
       llvm::zip_equal(shape, tensor::getMixedSizes(b, loc, value)))
    if (std::optional<int64_t> known = getConstantIntValue(mixed);
        ShapedType::isDynamic(size) && known)
      size = *known;
  if (shape == type.getShape())
    return value;
  return tensor::CastOp::create(b, loc, type.clone(shape), value);
}

Value RowSweeps::toMatrix(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (rank == 2 && axis == 1)
    return value;
  if (axis == 0) {
    // All dims are normalized: one row. A leading unit dim is added first
    // and the dims are then collapsed into the row (a collapse_shape into an
    // expand_shape, once canonicalization folds the sizes to constants,
    // crashes MLIR 22's canonicalizer).
    auto matrixType =
        RankedTensorType::get({1, staticRowSize}, type.getElementType());
    if (rank == 1)
      return tensor::ExpandShapeOp::create(
          b, loc, matrixType, value, ArrayRef<ReassociationIndices>{{0, 1}},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1),
                                 getAsOpFoldResult(rowSize)});
    UnitRow row(b, type, tensor::getMixedSizes(b, loc, value));
    Value unit = tensor::ExpandShapeOp::create(b, loc, row.unitType, value,
                                               row.unitGroups, row.unitSizes);
    return tensor::CollapseShapeOp::create(b, loc, matrixType, unit,
                                           row.rowGroups);
  }
  ReassociationIndices lead, normalized;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? lead : normalized).push_back(d);
  return tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{lead, normalized});
}

Value RowSweeps::fromMatrix(Value matrix, RankedTensorType resultType,
                            ArrayRef<OpFoldResult> sizes) {
  if (rank == 2 && axis == 1)
    return matrix;
  if (axis == 0) {
    ReassociationIndices dims;
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
    if (rank == 1 || hasGroupWithSeveralDynamicDims(resultType, {dims})) {
      // Through [N] (then a tensor.reshape for several dynamic dims).
      Value flat = tensor::CollapseShapeOp::create(
          b, loc, matrix, ArrayRef<ReassociationIndices>{{0, 1}});
      if (rank == 1)
        return flat;
      return expandToInput(flat, resultType, sizes, {dims});
    }
    // [1, N] -> [1, d0, ...] -> [d0, ...] (not through [N], see toMatrix;
    // at most one dynamic dim in the expanded group).
    UnitRow row(b, resultType, sizes);
    // The row's size is static in the matrix exactly when it is in the
    // result.
    int64_t rowElements = resultType.hasStaticShape()
                              ? resultType.getNumElements()
                              : ShapedType::kDynamic;
    auto matrixType = cast<RankedTensorType>(matrix.getType());
    if (matrixType.getDimSize(1) != rowElements)
      matrix = tensor::CastOp::create(
          b, loc, matrixType.clone({1, rowElements}), matrix);
    Value unit = tensor::ExpandShapeOp::create(b, loc, row.unitType, matrix,
                                               row.rowGroups, row.unitSizes);
    return tensor::CollapseShapeOp::create(b, loc, resultType, unit,
                                           row.unitGroups);
  }
  ReassociationIndices lead, normalized;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? lead : normalized).push_back(d);
  return expandToInput(matrix, resultType, sizes, {lead, normalized});
}

Value RowLoopBuilder::statsFromMatrix(Value matrix, RankedTensorType resultType,
                                      ArrayRef<OpFoldResult> sizes) {
  // [rows, 1] -> [rows] (or a scalar when every dim is normalized).
  if (axis == 0)
    return tensor::CollapseShapeOp::create(b, loc, resultType, matrix,
                                           ArrayRef<ReassociationIndices>{});
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, matrix, ArrayRef<ReassociationIndices>{{0, 1}});
  if (axis == 1)
    return flat;
  ReassociationIndices lead;
  for (int64_t d = 0; d < axis; ++d)
    lead.push_back(d);
  return expandToInput(flat, resultType, sizes, {lead});
}

Value RowSweeps::expandToInput(Value value, RankedTensorType resultType,
                               ArrayRef<OpFoldResult> sizes,
                               ArrayRef<ReassociationIndices> groups) {
  if (!hasGroupWithSeveralDynamicDims(resultType, groups))
    return tensor::ExpandShapeOp::create(b, loc, resultType, value, groups,
                                         sizes);
  Value shape = tensor::FromElementsOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, sizes));
  return tensor::ReshapeOp::create(b, loc, resultType, value, shape);
}

Parameter RowLoopBuilder::prepareParameter(Value value) {
  Parameter param;
  ParameterAccess access = RowView::getParameterAccess(value);
  if (access == ParameterAccess::None)
    return param;
  auto type = cast<RankedTensorType>(value.getType());
  if (access == ParameterAccess::Scalar) {
    // Widened to the compute type (exactly: it is at least as wide as every
    // parameter type) and broadcast once, outside the row loop. A bf16
    // vector broadcast left in the loop is widened lane by lane on targets
    // without native bf16, in every iteration.
    SmallVector<Value> indices(type.getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    Value scalar = castFloat(
        b, loc, tensor::ExtractOp::create(b, loc, value, indices), computeType);
    param.scalar =
        vector::BroadcastOp::create(b, loc, computeVectorType, scalar);
    return param;
  }
  if (type.getRank() == 1) {
    param.row = value;
    return param;
  }
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  param.row = tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{all});
  return param;
}

Value RowSweeps::read(OpBuilder &rb, Value source, ValueRange indices,
                      Value mask) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  Type elementType = sourceType.getElementType();
  auto vectorType = VectorType::get({vectorLength}, elementType);
  Value padding = buildFloatConstant(rb, loc, elementType, 0.0);
  AffineMap map =
      AffineMap::getMinorIdentityMap(sourceType.getRank(), 1, rb.getContext());
  return vector::TransferReadOp::create(rb, loc, vectorType, source, indices,
                                        map, padding, mask,
                                        rb.getBoolArrayAttr({true}));
}

Value RowSweeps::write(OpBuilder &rb, Value vector, Value dest,
                       ValueRange indices, Value mask) {
  auto destType = cast<RankedTensorType>(dest.getType());
  AffineMap map =
      AffineMap::getMinorIdentityMap(destType.getRank(), 1, rb.getContext());
  return vector::TransferWriteOp::create(rb, loc, destType, vector, dest,
                                         indices, map, mask,
                                         rb.getBoolArrayAttr({true}))
      .getResult();
}

Value RowSweeps::readMatrix(OpBuilder &rb, Value matrix, Value row, Value col,
                            Value mask) {
  return read(rb, matrix, ValueRange{row, col}, mask);
}

Value RowLoopBuilder::readParameter(OpBuilder &rb, const Parameter &param,
                                    Value col, Value mask) {
  if (param.scalar)
    return param.scalar;
  return read(rb, param.row, ValueRange{col}, mask);
}

Value RowSweeps::writeRow(OpBuilder &rb, Value vector, Value dest, Value col,
                          Value mask) {
  // A 1-D row tensor, or the [1, N] result of a single-row input.
  int64_t destRank = cast<RankedTensorType>(dest.getType()).getRank();
  SmallVector<Value> indices(destRank - 1,
                             arith::ConstantIndexOp::create(rb, loc, 0));
  indices.push_back(col);
  return write(rb, vector, dest, indices, mask);
}

Value RowLoopBuilder::readInput(OpBuilder &rb, Value row, Value col,
                                Value mask) {
  Value value = readMatrix(rb, x, row, col, mask);
  if (residual)
    value = buildResidualSum(rb, loc, value,
                             readMatrix(rb, residual, row, col, mask));
  return value;
}

SmallVector<Value> RowSweeps::sweep(
    OpBuilder &rb, ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Value, Value, ValueRange)>
        body) {
  return sweepRange(rb, Value(), rowSize, staticRowSize, inits, body);
}

SmallVector<Value> RowSweeps::sweepRange(
    OpBuilder &rb, Value begin, Value length, int64_t staticLength,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Value, Value, ValueRange)>
        body) {
  Value step = arith::ConstantIndexOp::create(rb, loc, vectorLength);
  Value fullLength = arith::MulIOp::create(
      rb, loc, arith::DivUIOp::create(rb, loc, length, step), step);
  Value fullEnd = fullLength;
  if (begin)
    fullEnd = arith::AddIOp::create(rb, loc, begin, fullLength);
  else
    begin = arith::ConstantIndexOp::create(rb, loc, 0);
  auto loop = scf::ForOp::create(
      rb, loc, begin, fullEnd, step, inits,
      [&](OpBuilder &lb, Location, Value col, ValueRange iterArgs) {
        scf::YieldOp::create(lb, loc, body(lb, col, Value(), iterArgs));
      });
  // The tail: one masked step, statically absent when the length is a
  // multiple of the vector length.
  if (!ShapedType::isDynamic(staticLength) && staticLength % vectorLength == 0)
    return SmallVector<Value>(loop.getResults());
  Value remaining = arith::SubIOp::create(rb, loc, length, fullLength);
  Value mask =
      vector::CreateMaskOp::create(rb, loc, maskType, ValueRange{remaining});
  return body(rb, fullEnd, mask, loop.getResults());
}

/// Zeroes the lanes of `value` that `mask` turns off (no-op without mask).
Value mlir::norm::cpu_lowering::maskLanes(OpBuilder &b, Location loc,
                                          Value value, Value mask) {
  if (!mask)
    return value;
  Value zero = buildFloatConstant(b, loc, value.getType(), 0.0);
  return arith::SelectOp::create(b, loc, mask, value, zero);
}

std::pair<SmallVector<Value>, Value> RowLoopBuilder::accumulate(
    OpBuilder &rb, Value row, Value sRow, unsigned numTerms,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> terms) {
  Type f64 = RowView::getRowSumType(rb.getContext());
  VectorType wideType = computeVectorType.clone(f64);
  Value zero = arith::ConstantIndexOp::create(rb, loc, 0);
  Value step = arith::ConstantIndexOp::create(rb, loc, vectorLength);
  Value blockLength =
      arith::ConstantIndexOp::create(rb, loc, vectorLength * kBlockSteps);
  Value fullEnd = arith::MulIOp::create(
      rb, loc, arith::DivUIOp::create(rb, loc, rowSize, step), step);

  // Loop-carried values: the accumulators, then sRow.
  SmallVector<Value> inits(numTerms,
                           buildFloatConstant(rb, loc, wideType, 0.0));
  if (sRow)
    inits.push_back(sRow);
  auto blocks = scf::ForOp::create(
      rb, loc, zero, fullEnd, blockLength, inits,
      [&](OpBuilder &ob, Location, Value blockStart, ValueRange outer) {
        Value blockEnd = arith::MinUIOp::create(
            ob, loc, arith::AddIOp::create(ob, loc, blockStart, blockLength),
            fullEnd);
        SmallVector<Value> innerInits(
            numTerms, buildFloatConstant(ob, loc, computeVectorType, 0.0));
        if (sRow)
          innerInits.push_back(outer[numTerms]);
        auto steps = scf::ForOp::create(
            ob, loc, blockStart, blockEnd, step, innerInits,
            [&](OpBuilder &ib, Location, Value col, ValueRange inner) {
              Value s = readInput(ib, row, col, Value());
              SmallVector<Value> next;
              for (auto [sum, term] :
                   llvm::zip_equal(inner.take_front(numTerms),
                                   terms(ib, widenUnordered(ib, s))))
                next.push_back(arith::AddFOp::create(ib, loc, sum, term));
              if (sRow)
                next.push_back(writeRow(ib, s, inner[numTerms], col, Value()));
              scf::YieldOp::create(ib, loc, next);
            });
        SmallVector<Value> next;
        for (unsigned t = 0; t < numTerms; ++t)
          next.push_back(arith::AddFOp::create(
              ob, loc, outer[t], castFloat(ob, loc, steps.getResult(t), f64)));
        if (sRow)
          next.push_back(steps.getResult(numTerms));
        scf::YieldOp::create(ob, loc, next);
      });

  SmallVector<Value> totals(blocks.getResults().take_front(numTerms));
  if (sRow)
    sRow = blocks.getResult(numTerms);
  // The masked tail step.
  if (!hasNoTail()) {
    Value remaining = arith::SubIOp::create(rb, loc, rowSize, fullEnd);
    Value mask =
        vector::CreateMaskOp::create(rb, loc, maskType, ValueRange{remaining});
    Value s = readInput(rb, row, fullEnd, mask);
    SmallVector<Value> tail = terms(rb, castFloat(rb, loc, s, computeType));
    for (auto [total, term] : llvm::zip_equal(totals, tail)) {
      Value masked = maskLanes(rb, loc, term, mask);
      total = arith::AddFOp::create(rb, loc, total,
                                    castFloat(rb, loc, masked, f64));
    }
    if (sRow)
      sRow = writeRow(rb, s, sRow, fullEnd, mask);
  }
  SmallVector<Value> sums;
  for (Value total : totals)
    sums.push_back(reduce(rb, total));
  return {sums, sRow};
}

std::pair<Value, Value>
RowLoopBuilder::accumulateOne(OpBuilder &rb, Value row, Value sRow,
                              function_ref<Value(OpBuilder &, Value)> term) {
  auto [sums, newSRow] =
      accumulate(rb, row, sRow, 1, [&](OpBuilder &bb, Value s) {
        return SmallVector<Value>{term(bb, s)};
      });
  return {sums.front(), newSRow};
}

Value RowLoopBuilder::widenUnordered(OpBuilder &rb, Value s) {
  auto type = cast<VectorType>(s.getType());
  int64_t length = type.getNumElements();
  if (!type.getElementType().isBF16() || !computeType.isF32() ||
      length % 2 != 0)
    return castFloat(rb, loc, s, computeType);
  auto pairsType = VectorType::get({length / 2}, rb.getI32Type());
  auto halfType = VectorType::get({length / 2}, rb.getF32Type());
  Value pairs = vector::BitCastOp::create(rb, loc, pairsType, s);
  auto splat = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(
        rb, loc,
        DenseElementsAttr::get(pairsType, rb.getI32IntegerAttr(value)));
  };
  // Little-endian: element 2k is the low half of pair k.
  Value even = arith::BitcastOp::create(
      rb, loc, halfType, arith::ShLIOp::create(rb, loc, pairs, splat(16)));
  Value odd = arith::BitcastOp::create(
      rb, loc, halfType,
      arith::AndIOp::create(rb, loc, pairs, splat(int32_t(0xFFFF0000u))));
  SmallVector<int64_t> concatenation(length);
  std::iota(concatenation.begin(), concatenation.end(), 0);
  return vector::ShuffleOp::create(rb, loc, even, odd, concatenation);
}

Value RowLoopBuilder::reduce(OpBuilder &rb, Value accumulator) {
  return vector::ReductionOp::create(rb, loc, vector::CombiningKind::ADD,
                                     accumulator,
                                     arith::FastMathFlags::reassoc);
}
