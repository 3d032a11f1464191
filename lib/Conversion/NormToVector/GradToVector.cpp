//===- GradToVector.cpp - Vector row loops of the gradient ops --*- C++ -*-===//
//
// norm-lower-cpu's lowering of the gradient ops (NormGradOpInterface)
// normalized over the last dim, on the row sweeps of the forward lowering
// (RowSweeps): the rows in blocks of a fixed number of rows, the blocks in
// parallel (scf.forall). Per row of layer_norm_grad and rms_norm_grad, one
// sweep sums g * xh (and g) and a second writes dx and adds dy * xh (and dy)
// into the block's partial parameter gradients, one row of a [blocks, P, N]
// tensor in the compute type; dyt_grad needs one sweep, and adds dalpha's
// terms into the block's partial lanes. The partials are then summed over the
// blocks in block order, in f64, and rounded once. The block size does not
// depend on the thread count, so the results are the same bits for any number
// of threads.
//
//===----------------------------------------------------------------------===//

#include "GradToVector.h"
#include "norm/Conversion/NormToVector/NormToVector.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Dialect/Norm/Utils/TanhApproximation.h"
#include "norm/Support/HostCPU.h"
#include "norm/Support/ReshapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::cpu_lowering;

Value GradRowLoopBuilder::toColumn(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, type.getElementType()), value,
        ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(b, loc, value,
                                         ArrayRef<ReassociationIndices>{all});
}

Value GradRowLoopBuilder::sumOverBlocks(OpBuilder &ob, Value partials,
                                        int64_t index, RankedTensorType type) {
  Type f64 = ob.getF64Type();
  VectorType f64Vector = VectorType::get({vectorLength}, f64);
  Value result = tensor::EmptyOp::create(
      ob, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(rowSize)},
      type.getElementType());
  Value sums =
      sweep(ob, ValueRange{result},
            [&](OpBuilder &sb, Value col, Value mask, ValueRange iter) {
              auto blocks = scf::ForOp::create(
                  sb, loc, constantIndex(sb, 0), numBlocks,
                  constantIndex(sb, 1),
                  ValueRange{buildFloatConstant(sb, loc, f64Vector, 0.0)},
                  [&](OpBuilder &lb, Location, Value block, ValueRange acc) {
                    Value part = castFloat(
                        lb, loc,
                        read(lb, partials,
                             ValueRange{block, constantIndex(lb, index), col},
                             mask),
                        f64);
                    scf::YieldOp::create(
                        lb, loc,
                        Value(arith::AddFOp::create(lb, loc, acc[0], part)));
                  });
              Value rounded = castFloat(sb, loc, blocks.getResult(0),
                                        type.getElementType());
              return SmallVector<Value>{
                  write(sb, rounded, iter[0], ValueRange{col}, mask)};
            })
          .front();
  if (sums.getType() != type)
    sums = tensor::CastOp::create(ob, loc, type, sums);
  return sums;
}

Value GradRowLoopBuilder::sumAlphaPartials(OpBuilder &ob, Value partials,
                                           RankedTensorType type) {
  Type f64 = ob.getF64Type();
  VectorType f64Vector = VectorType::get({vectorLength}, f64);
  auto blocks = scf::ForOp::create(
      ob, loc, constantIndex(ob, 0), numBlocks, constantIndex(ob, 1),
      ValueRange{buildFloatConstant(ob, loc, f64Vector, 0.0)},
      [&](OpBuilder &lb, Location, Value block, ValueRange acc) {
        Value part =
            castFloat(lb, loc,
                      read(lb, partials,
                           ValueRange{block, constantIndex(lb, 0)}, Value()),
                      f64);
        scf::YieldOp::create(
            lb, loc, Value(arith::AddFOp::create(lb, loc, acc[0], part)));
      });
  Value total =
      castFloat(ob, loc,
                vector::ReductionOp::create(ob, loc, vector::CombiningKind::ADD,
                                            blocks.getResult(0)),
                type.getElementType());
  SmallVector<Value> elements(type.getNumElements(), total);
  return tensor::FromElementsOp::create(ob, loc, type, elements);
}

void GradRowLoopBuilder::buildGeometry() {
  // Dims known statically though x's type leaves them dynamic are made
  // static, so that the row types agree with the folded sizes (dy has x's
  // type).
  opXType = cast<RankedTensorType>(x.getType());
  x = cpu_lowering::refineStaticSizes(b, loc, x);
  xType = cast<RankedTensorType>(x.getType());
  if (xType != opXType)
    dy = tensor::CastOp::create(b, loc, xType, dy);
  rank = xType.getRank();
  axis = rank - 1;
  elementType = xType.getElementType();
  staticRowSize = xType.getShape().back();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  rowSize = getValueOrCreateConstantIndexOp(b, loc, sizes.back());
  numRows = constantIndex(b, 1);
  for (int64_t d = 0; d < rank - 1; ++d)
    numRows = b.createOrFold<arith::MulIOp>(
        loc, numRows, getValueOrCreateConstantIndexOp(b, loc, sizes[d]));

  unsigned width = resolveVectorWidth(options.vectorWidth);
  vectorLength =
      std::max<int64_t>(1, width / computeType.getIntOrFloatBitWidth() * 2);
  computeVectorType = VectorType::get({vectorLength}, computeType);
  maskType = VectorType::get({vectorLength}, b.getI1Type());
}

void GradRowLoopBuilder::buildBlockCounts() {
  // A row length known only at run time chooses the block size there, by
  // the same rule.
  staticBlockRows =
      !ShapedType::isDynamic(staticRowSize) && staticRowSize >= kLongRow
          ? kLongRowsPerBlock
          : kRowsPerBlock;
  rowsPerBlock = constantIndex(b, staticBlockRows);
  if (ShapedType::isDynamic(staticRowSize))
    rowsPerBlock = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, rowSize,
                              constantIndex(b, kLongRow)),
        constantIndex(b, kLongRowsPerBlock), rowsPerBlock);
  numBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, numRows, rowsPerBlock);
  numPartials = (weight ? 1 : 0) + (hasBias ? 1 : 0);
}

SmallVector<Value> GradRowLoopBuilder::buildOutputs() {
  SmallVector<OpFoldResult> matrixSizes{getAsOpFoldResult(numRows),
                                        getAsOpFoldResult(rowSize)};
  SmallVector<Value> outputs{
      tensor::EmptyOp::create(b, loc, matrixSizes, elementType)};
  // The partials of all parameters are one [blocks, P, N] tensor (one
  // allocation per call): their rows are read again and must stay in cache,
  // and norm-forall-to-loops gives non-temporal stores only to rows of 2-D
  // outputs (dx).
  if (numPartials)
    outputs.push_back(tensor::EmptyOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{getAsOpFoldResult(numBlocks),
                               b.getIndexAttr(numPartials),
                               getAsOpFoldResult(rowSize)},
        computeType));
  // DyT: dalpha's partial lanes of each block, [blocks, L].
  if (alpha)
    outputs.push_back(tensor::EmptyOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{getAsOpFoldResult(numBlocks),
                               b.getIndexAttr(vectorLength)},
        computeType));
  return outputs;
}

Value GradRowLoopBuilder::buildWeightRow() {
  // A weight row not in the compute type, or with an offset, is converted
  // once per call: the row loops then read the compute type as is, in each
  // of their sweeps over each row.
  if (!weight)
    return weight;
  Type weightElement =
      cast<RankedTensorType>(weight.getType()).getElementType();
  if (weightElement == computeType && weightOffset == 0.0)
    return weight;
  Value widenedOffset =
      weightOffset != 0.0
          ? buildFloatConstant(b, loc, computeVectorType, weightOffset)
          : Value();
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(rowSize)}, computeType);
  return sweep(b, ValueRange{init},
               [&](OpBuilder &sb, Value col, Value mask, ValueRange iter) {
                 Value w =
                     castFloat(sb, loc, read(sb, weight, ValueRange{col}, mask),
                               computeType);
                 if (widenedOffset)
                   w = arith::AddFOp::create(sb, loc, w, widenedOffset);
                 return SmallVector<Value>{
                     write(sb, w, iter[0], ValueRange{col}, mask)};
               })
      .front();
}

scf::ForallOp GradRowLoopBuilder::buildBlockLoop(ValueRange outputs) {
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(numBlocks)}, outputs,
      std::nullopt);
  int64_t staticElements =
      xType.hasStaticShape() ? xType.getNumElements() : ShapedType::kDynamic;
  if (options.threads <= 1 || (!ShapedType::isDynamic(staticElements) &&
                               staticElements < options.parallelThreshold))
    forall->setAttr(NormDialect::SequentialAttrHelper::getNameStr(),
                    b.getUnitAttr());
  // A large dx bypasses the caches, as the forward's outputs do (with a
  // dynamic row count and a static row length: from enough rows on,
  // decided at run time; with a dynamic row length: whenever the rows are
  // aligned).
  if (options.nontemporalThreshold >= 0) {
    int64_t bytesPerElement = elementType.getIntOrFloatBitWidth() / 8;
    if (!ShapedType::isDynamic(staticElements)) {
      if (staticElements * bytesPerElement >= options.nontemporalThreshold)
        forall->setAttr(NormDialect::NontemporalStoresAttrHelper::getNameStr(),
                        b.getUnitAttr());
    } else if (!ShapedType::isDynamic(staticRowSize) && staticRowSize > 0) {
      forall->setAttr(NormDialect::NontemporalStoresAttrHelper::getNameStr(),
                      b.getUnitAttr());
      // The loop runs over blocks of rows.
      int64_t minRows = llvm::divideCeil(options.nontemporalThreshold,
                                         staticRowSize * bytesPerElement);
      int64_t minBlocks = llvm::divideCeil(minRows, staticBlockRows);
      if (minBlocks > 1)
        forall->setAttr(
            NormDialect::NontemporalMinTripsAttrHelper::getNameStr(),
            b.getI64IntegerAttr(minBlocks));
    } else if (ShapedType::isDynamic(staticRowSize)) {
      forall->setAttr(NormDialect::NontemporalStoresAttrHelper::getNameStr(),
                      b.getUnitAttr());
    }
  }
  // Then the last sweep of a group of rows fetches the same rows of the
  // next group.
  if (forall->hasAttr(NormDialect::NontemporalStoresAttrHelper::getNameStr()))
    forall->setAttr(NormDialect::PrefetchNextRowAttrHelper::getNameStr(),
                    b.getUnitAttr());
  return forall;
}

void GradRowLoopBuilder::buildBlock(scf::ForallOp forall) {
  OpBuilder fb = OpBuilder::atBlockBegin(forall.getBody());
  Value block = forall.getInductionVar(0);
  ValueRange shared = forall.getRegionIterArgs();
  firstRow = arith::MulIOp::create(fb, loc, block, rowsPerBlock);
  Value blockRows = arith::MinUIOp::create(
      fb, loc, rowsPerBlock, arith::SubIOp::create(fb, loc, numRows, firstRow));
  SmallVector<OpFoldResult> one{fb.getIndexAttr(1), fb.getIndexAttr(1)};
  SmallVector<OpFoldResult> ones3(3, fb.getIndexAttr(1));
  auto dynamicRow =
      RankedTensorType::get({ShapedType::kDynamic, staticRowSize}, elementType);
  Value dxBlock = tensor::ExtractSliceOp::create(
      fb, loc, dynamicRow, shared[0],
      ArrayRef<OpFoldResult>{firstRow, fb.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{blockRows, getAsOpFoldResult(rowSize)}, one);
  // The block's [P, N] tile of the partials, carried through the row loops
  // whole (one parallel_insert_slice per shared output: forall's folders
  // expect no more).
  SmallVector<OpFoldResult> tileSizes{fb.getIndexAttr(1),
                                      fb.getIndexAttr(numPartials),
                                      getAsOpFoldResult(rowSize)};
  SmallVector<OpFoldResult> tileOffsets{block, fb.getIndexAttr(0),
                                        fb.getIndexAttr(0)};
  zero = buildFloatConstant(fb, loc, computeVectorType, 0.0);
  SmallVector<Value> rowInits{dxBlock};
  if (numPartials) {
    Value tile = tensor::ExtractSliceOp::create(
        fb, loc,
        RankedTensorType::get({numPartials, staticRowSize}, computeType),
        shared[1], tileOffsets, tileSizes, ones3);
    // Zero its rows.
    rowInits.push_back(
        sweep(fb, ValueRange{tile},
              [&](OpBuilder &sb, Value col, Value mask, ValueRange iter) {
                Value next = iter[0];
                for (unsigned i = 0; i < numPartials; ++i)
                  next = write(sb, zero, next,
                               ValueRange{constantIndex(sb, i), col}, mask);
                return SmallVector<Value>{next};
              })
            .front());
  }
  if (alpha)
    rowInits.push_back(zero);

  // The first blockRows % kRowsPerGroup rows one by one, then the groups
  // (the last loop, where norm-forall-to-loops prefetches the next rows).
  Value groupSize = constantIndex(fb, kRowsPerGroup);
  Value singles = arith::RemUIOp::create(fb, loc, blockRows, groupSize);
  auto singleLoop = scf::ForOp::create(
      fb, loc, constantIndex(fb, 0), singles, constantIndex(fb, 1), rowInits,
      [&](OpBuilder &rb, Location, Value local, ValueRange iter) {
        scf::YieldOp::create(rb, loc, buildRowGroup(rb, local, 1, iter));
      });
  auto rowLoop = scf::ForOp::create(
      fb, loc, singles, blockRows, groupSize, singleLoop.getResults(),
      [&](OpBuilder &rb, Location, Value local, ValueRange iter) {
        scf::YieldOp::create(rb, loc,
                             buildRowGroup(rb, local, kRowsPerGroup, iter));
      });

  OpBuilder ib = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      ib, loc, rowLoop.getResult(0), shared[0],
      ArrayRef<OpFoldResult>{firstRow, ib.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{blockRows, getAsOpFoldResult(rowSize)}, one);
  if (numPartials)
    tensor::ParallelInsertSliceOp::create(ib, loc, rowLoop.getResult(1),
                                          shared[1], tileOffsets, tileSizes,
                                          ones3);
  if (!alpha)
    return;
  // The block's dalpha lanes into its row of the [blocks, L] partials.
  OpBuilder wb(forall.getTerminator());
  Value slot = tensor::ExtractSliceOp::create(
      wb, loc, RankedTensorType::get({vectorLength}, computeType),
      shared.back(), ArrayRef<OpFoldResult>{block, wb.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{wb.getIndexAttr(1), wb.getIndexAttr(vectorLength)},
      one);
  Value filled = write(wb, rowLoop.getResults().back(), slot,
                       ValueRange{constantIndex(wb, 0)}, Value());
  tensor::ParallelInsertSliceOp::create(
      ib, loc, filled, shared.back(),
      ArrayRef<OpFoldResult>{block, ib.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{ib.getIndexAttr(1), ib.getIndexAttr(vectorLength)},
      one);
}

SmallVector<Value> GradRowLoopBuilder::buildResults(scf::ForallOp forall) {
  // [M, N] -> x's type, as refined, then as the op has it.
  SmallVector<OpFoldResult> sizes;
  if (rank != 2)
    sizes = tensor::getMixedSizes(b, loc, x);
  Value dx = fromMatrix(forall.getResult(0), xType, sizes);
  if (dx.getType() != xType)
    dx = tensor::CastOp::create(b, loc, xType, dx);
  if (dx.getType() != opXType)
    dx = tensor::CastOp::create(b, loc, opXType, dx);
  SmallVector<Value> results{dx};
  int64_t partial = 0;
  if (weight)
    results.push_back(sumOverBlocks(b, forall.getResult(1), partial++,
                                    cast<RankedTensorType>(weight.getType())));
  if (Value dbias = op.getDbias())
    results.push_back(sumOverBlocks(b, forall.getResult(1), partial++,
                                    cast<RankedTensorType>(dbias.getType())));
  if (alpha)
    results.push_back(
        sumAlphaPartials(b, forall.getResults().back(),
                         cast<RankedTensorType>(alpha.getType())));
  return results;
}

FailureOr<SmallVector<Value>> GradRowLoopBuilder::build() {
  buildGeometry();
  dyMatrix = toMatrix(dy);
  xMatrix = toMatrix(x);
  meanColumn = mean ? toColumn(mean) : Value();
  rstdColumn = rstd ? toColumn(rstd) : Value();
  rowSizeFloat = buildIndexToFloat(b, loc, rowSize, b.getF64Type());
  // Blocks of rows; their partial parameter gradients.
  buildBlockCounts();
  SmallVector<Value> outputs = buildOutputs();
  if (alpha) {
    auto alphaType = cast<RankedTensorType>(alpha.getType());
    SmallVector<Value> zeros(alphaType.getRank(), constantIndex(b, 0));
    alphaVector = vector::BroadcastOp::create(
        b, loc, computeVectorType,
        castFloat(b, loc, tensor::ExtractOp::create(b, loc, alpha, zeros),
                  computeType));
  }
  weightRow = buildWeightRow();

  scf::ForallOp forall = buildBlockLoop(outputs);
  buildBlock(forall);

  // The row loops' products and sums may contract into FMAs (the same code,
  // so the same bits, for any thread count).
  auto contract = arith::FastMathFlagsAttr::get(b.getContext(),
                                                arith::FastMathFlags::contract);
  forall.getBody()->walk([&](Operation *inner) {
    if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(inner))
      inner->setAttr(
          cast<arith::ArithFastMathInterface>(inner).getFastMathAttrName(),
          contract);
  });
  return buildResults(forall);
}

/// Whether the row loops cover `op`: normalized over the last dim, dy of
/// x's type, the weight absent or a row (not a scalar).
static bool isCoveredForm(NormGradOpInterface op) {
  RowView view(op);
  if (view.getAxis() != view.getRank() - 1 ||
      op.getDy().getType() != op.getX().getType())
    return false;
  // Empty rows (N = 0): nothing to sweep; the linalg decomposition gives
  // the empty dx and parameter gradients.
  if (cpu_lowering::getShapeThroughCasts(op.getX()).back() == 0)
    return false;
  Value weight = op.getWeight();
  if (!weight)
    return true;
  auto weightType = cast<RankedTensorType>(weight.getType());
  return weightType.getRank() == 1 && weightType.getDimSize(0) != 0 &&
         RowView::getParameterAccess(weight) == ParameterAccess::Row;
}

FailureOr<SmallVector<Value>>
mlir::norm::lowerGradOpToVectorLoops(RewriterBase &rewriter,
                                     NormGradOpInterface op,
                                     const NormLowerCPUPassOptions &options) {
  if (!isCoveredForm(op))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  return GradRowLoopBuilder(rewriter, op, options).build();
}
