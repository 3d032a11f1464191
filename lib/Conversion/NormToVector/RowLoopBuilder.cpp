//===- RowLoopBuilder.cpp - Vector row loops of one norm op -----*- C++ -*-===//
//
// norm-lower-cpu's lowering of one norm op: the statistics of each op
// (LayerNorm's one-sweep shifted moments with a centered fallback, RMSNorm's
// mean square, none for DyT), the output sweep, and the scf.forall over rows
// (sequential or parallel, chosen at run time for dynamic shapes).
//
//===----------------------------------------------------------------------===//

#include "RowLoopBuilder.h"
#include "norm/Conversion/NormToVector/NormToVector.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Transforms/HostCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::cpu_lowering;

SmallVector<Value> RowLoopBuilder::buildRow(OpBuilder &rb, Value row,
                                            ValueRange rowInits) {
  Value yRow = rowInits[0];
  Value sRow = residual ? rowInits[1] : Value();
  auto widen = [&](OpBuilder &bb, Value v) {
    return castFloat(bb, loc, v, computeType);
  };

  // Per-element normalization given the vector of s in the compute type.
  std::function<Value(OpBuilder &, Value)> normalize;

  if (!op.hasReduction()) {
    Value alphaVector = alpha.scalar;
    normalize = [&, alphaVector](OpBuilder &bb, Value s) {
      return buildDyTCore(bb, loc, op, alphaVector, s,
                          /*approximateTanh=*/true);
    };
  } else if (op.subtractsMean()) {
    // Statistics of d = s - shift, shift being the mean of the row's first
    // vector: close to the row mean for all but contrived rows, so that
    // rows with a large common offset stay accurate.
    Value firstCount = arith::MinUIOp::create(
        rb, loc, rowSize,
        arith::ConstantIndexOp::create(rb, loc, vectorLength));
    Value firstMask =
        vector::CreateMaskOp::create(rb, loc, maskType, ValueRange{firstCount});
    Value first = maskLanes(
        rb, loc,
        widen(rb, readInput(rb, row, arith::ConstantIndexOp::create(rb, loc, 0),
                            firstMask)),
        firstMask);
    Value shiftScalar = castFloat(
        rb, loc,
        arith::DivFOp::create(
            rb, loc, castFloat(rb, loc, reduce(rb, first), rb.getF64Type()),
            buildIndexToFloat(rb, loc, firstCount, rb.getF64Type())),
        computeType);
    Value shift =
        vector::BroadcastOp::create(rb, loc, computeVectorType, shiftScalar);

    // One sweep sums d and d^2: var = E[d^2] - E[d]^2 (in f64). This
    // cancels badly only when the mean of d is large against the spread,
    // E[d]^2 > E[d^2] / 2; such rows take a second, centered sweep.
    auto [sums, newSRow] =
        accumulate(rb, row, sRow, 2, [&](OpBuilder &bb, Value s) {
          Value d = arith::SubFOp::create(bb, loc, s, shift);
          return SmallVector<Value>{d, arith::MulFOp::create(bb, loc, d, d)};
        });
    sRow = newSRow;
    Value meanD = arith::DivFOp::create(rb, loc, sums[0], rowSizeFloat);
    Value meanSquareD = arith::DivFOp::create(rb, loc, sums[1], rowSizeFloat);
    Value oneSweepVariance = buildShiftedVariance(rb, loc, meanD, meanSquareD);
    Value mean = castFloat(rb, loc, meanD, computeType);
    Value meanVector =
        vector::BroadcastOp::create(rb, loc, computeVectorType, mean);
    auto centered = [&, shift, meanVector](OpBuilder &bb, Value s) -> Value {
      return arith::SubFOp::create(
          bb, loc, arith::SubFOp::create(bb, loc, s, shift), meanVector);
    };
    Value accurate =
        buildShiftedVarianceIsAccurate(rb, loc, oneSweepVariance, meanSquareD);
    auto ifOp = scf::IfOp::create(
        rb, loc, accurate,
        [&](OpBuilder &tb, Location) {
          scf::YieldOp::create(tb, loc, oneSweepVariance);
        },
        [&](OpBuilder &eb, Location) {
          Value squares =
              accumulateOne(eb, row, Value(), [&](OpBuilder &bb, Value s) {
                Value d = centered(bb, s);
                return Value(arith::MulFOp::create(bb, loc, d, d));
              }).first;
          scf::YieldOp::create(
              eb, loc,
              Value(arith::DivFOp::create(eb, loc, squares, rowSizeFloat)));
        });
    Value variance = castFloat(rb, loc, ifOp.getResult(0), computeType);
    Value scale = vector::BroadcastOp::create(
        rb, loc, computeVectorType, buildInverseScale(rb, loc, op, variance));
    normalize = [&, centered, scale](OpBuilder &bb, Value s) -> Value {
      return arith::MulFOp::create(bb, loc, centered(bb, s), scale);
    };
  } else {
    Value squares;
    std::tie(squares, sRow) =
        accumulateOne(rb, row, sRow, [&](OpBuilder &bb, Value s) -> Value {
          return arith::MulFOp::create(bb, loc, s, s);
        });
    Value meanSquare = castFloat(
        rb, loc, arith::DivFOp::create(rb, loc, squares, rowSizeFloat),
        computeType);
    Value scale = vector::BroadcastOp::create(
        rb, loc, computeVectorType, buildInverseScale(rb, loc, op, meanSquare));
    normalize = [&, scale](OpBuilder &bb, Value s) -> Value {
      return arith::MulFOp::create(bb, loc, s, scale);
    };
  }

  // Output sweep (DyT also writes residual_out here).
  bool writeResidualHere = sRow && !op.hasReduction();
  SmallVector<Value> inits{yRow};
  if (writeResidualHere)
    inits.push_back(sRow);
  SmallVector<Value> rows = sweep(
      rb, inits, [&](OpBuilder &bb, Value col, Value mask, ValueRange iter) {
        Value s = readInput(bb, row, col, mask);
        Value n = normalize(bb, widen(bb, s));
        Value w = weight ? readParameter(bb, weight, col, mask) : Value();
        Value bv = bias ? readParameter(bb, bias, col, mask) : Value();
        Value y = buildNormOutput(bb, loc, op, n, w, bv);
        SmallVector<Value> next{writeRow(bb, y, iter[0], col, mask)};
        if (writeResidualHere)
          next.push_back(writeRow(bb, s, iter[1], col, mask));
        return next;
      });
  SmallVector<Value> finished{rows[0]};
  if (sRow)
    finished.push_back(writeResidualHere ? rows[1] : sRow);
  return finished;
}

SmallVector<Value> RowLoopBuilder::buildSingleRow() {
  // The row is written straight into [1, N] empty tensors, which
  // eliminate-empty-tensors turns into the destinations: the results are
  // written in place. (A one-iteration scf.forall would be folded by
  // canonicalization into an insert_slice whose source starts from a slice
  // of a fresh tensor, which bufferizes to a temporary and a copy.)
  SmallVector<OpFoldResult> matrixSizes{b.getIndexAttr(1),
                                        getAsOpFoldResult(rowSize)};
  SmallVector<Value> inits;
  for (int i = 0, e = residual ? 2 : 1; i < e; ++i)
    inits.push_back(tensor::EmptyOp::create(b, loc, matrixSizes, inputType));
  return buildRow(b, arith::ConstantIndexOp::create(b, loc, 0), inits);
}

SmallVector<Value> RowLoopBuilder::buildRowLoop(bool sequential) {
  if (getConstantIntValue(numRows) == 1)
    return buildSingleRow();
  SmallVector<Value> outputs;
  SmallVector<OpFoldResult> matrixSizes{getAsOpFoldResult(numRows),
                                        getAsOpFoldResult(rowSize)};
  outputs.push_back(tensor::EmptyOp::create(b, loc, matrixSizes, inputType));
  if (residual)
    outputs.push_back(tensor::EmptyOp::create(b, loc, matrixSizes, inputType));

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(numRows)}, outputs,
      std::nullopt);
  if (sequential)
    forall->setAttr(NormDialect::SequentialAttrHelper::getNameStr(),
                    b.getUnitAttr());
  if (nontemporal)
    forall->setAttr(NormDialect::NontemporalStoresAttrHelper::getNameStr(),
                    b.getUnitAttr());
  if (nontemporal && nontemporalMinRows > 1)
    forall->setAttr(NormDialect::NontemporalMinTripsAttrHelper::getNameStr(),
                    b.getI64IntegerAttr(nontemporalMinRows));
  // Rows swept more than once leave memory idle while they are finished
  // from the cache; for large inputs the last sweep fetches the next row.
  if (nontemporal && op.hasReduction())
    forall->setAttr(NormDialect::PrefetchNextRowAttrHelper::getNameStr(),
                    b.getUnitAttr());

  OpBuilder rb = OpBuilder::atBlockBegin(forall.getBody());
  Value row = forall.getInductionVar(0);
  auto rowType = RankedTensorType::get({staticRowSize}, inputType);
  SmallVector<OpFoldResult> offsets{row, rb.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes{rb.getIndexAttr(1),
                                  getAsOpFoldResult(rowSize)};
  SmallVector<OpFoldResult> strides{rb.getIndexAttr(1), rb.getIndexAttr(1)};
  SmallVector<Value> rowInits;
  for (Value shared : forall.getRegionIterArgs())
    rowInits.push_back(tensor::ExtractSliceOp::create(rb, loc, rowType, shared,
                                                      offsets, sizes, strides));
  rb.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> finished = buildRow(rb, row, rowInits);

  rb.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [rowValue, shared] :
       llvm::zip_equal(finished, forall.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(rb, loc, rowValue, shared, offsets,
                                          sizes, strides);
  return SmallVector<Value>(forall.getResults());
}

FailureOr<SmallVector<Value>> RowLoopBuilder::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  RankedTensorType xType = op.getInputType();
  rank = xType.getRank();
  axis = op.getNormalizedDim();
  inputType = xType.getElementType();
  computeType = op.getComputeElementType();
  xSizes = tensor::getMixedSizes(b, loc, op.getX());

  // A statically empty input has empty results: nothing to compute, and the
  // row reshapes below assume that folding the sizes keeps them dynamic.
  RowView view(op);
  if (view.isStaticallyEmpty()) {
    Value empty = tensor::EmptyOp::create(b, loc, xSizes, inputType);
    return SmallVector<Value>(op->getNumResults(), empty);
  }

  // Rows and row size.
  staticRowSize = view.getStaticRowSize();
  std::tie(numRows, rowSize) = view.buildRowCounts(b, loc, xSizes);
  rowSizeFloat = buildIndexToFloat(b, loc, rowSize,
                                   RowView::getRowSumType(b.getContext()));

  // Vector shapes: kUnrollFactor registers per statistic.
  unsigned width = resolveVectorWidth(options.vectorWidth);
  vectorLength = std::max<int64_t>(
      1, width / computeType.getIntOrFloatBitWidth() * kUnrollFactor);
  inputVectorType = VectorType::get({vectorLength}, inputType);
  computeVectorType = VectorType::get({vectorLength}, computeType);
  maskType = VectorType::get({vectorLength}, b.getI1Type());

  x = toMatrix(op.getX());
  if (Value r = op.getResidual()) {
    // The residual may know more or fewer static dims than x: reshape it as
    // x is reshaped.
    if (r.getType() != xType)
      r = tensor::CastOp::create(b, loc, xType, r);
    residual = toMatrix(r);
  }
  weight = prepareParameter(op.getWeight());
  bias = prepareParameter(op.getBias());
  alpha = prepareParameter(op.getAlpha());

  // Large write-once outputs bypass the caches. All results count: y and
  // residual_out compete for the same cache. With a dynamic row count and a
  // static row length, the loop decides at run time from its row count
  // (norm.nontemporal_min_trips), so that decode-sized calls keep their
  // outputs in cache; with a dynamic row length, non-temporal stores are
  // used whenever the rows are aligned.
  if (options.nontemporalThreshold >= 0) {
    int64_t bytesPerElement = int64_t(inputType.getIntOrFloatBitWidth() / 8) *
                              int64_t(op->getNumResults());
    if (xType.hasStaticShape()) {
      nontemporal = xType.getNumElements() * bytesPerElement >=
                    options.nontemporalThreshold;
    } else {
      nontemporal = true;
      if (!ShapedType::isDynamic(staticRowSize) && staticRowSize > 0)
        nontemporalMinRows = llvm::divideCeil(options.nontemporalThreshold,
                                              staticRowSize * bytesPerElement);
    }
  }

  SmallVector<Value> results;
  int64_t staticElements =
      xType.hasStaticShape() ? xType.getNumElements() : ShapedType::kDynamic;
  if (options.threads <= 1 || (!ShapedType::isDynamic(staticElements) &&
                               staticElements < options.parallelThreshold)) {
    results = buildRowLoop(/*sequential=*/true);
  } else if (!ShapedType::isDynamic(staticElements)) {
    results = buildRowLoop(/*sequential=*/false);
  } else {
    // Decided at run time, after bufferization, by norm-forall-to-loops:
    // parallel from ceil(threshold / N) rows on. (An scf.if between two
    // loops here would give each its own destination, and bufferization
    // would compute into a temporary and copy it out.) With a dynamic N
    // the loop is always parallel.
    results = buildRowLoop(/*sequential=*/false);
    if (!ShapedType::isDynamic(staticRowSize) && staticRowSize > 0) {
      int64_t minRows =
          llvm::divideCeil(options.parallelThreshold, staticRowSize);
      if (minRows > 1)
        results.front().getDefiningOp()->setAttr(
            NormDialect::ParallelMinTripsAttrHelper::getNameStr(),
            b.getI64IntegerAttr(minRows));
    }
  }

  SmallVector<Value> replacements;
  for (Value result : results) {
    Value reshaped = fromMatrix(result);
    if (reshaped.getType() != xType)
      reshaped = tensor::CastOp::create(b, loc, xType, reshaped);
    replacements.push_back(reshaped);
  }
  return replacements;
}

FailureOr<SmallVector<Value>>
mlir::norm::lowerNormOpToVectorLoops(RewriterBase &rewriter, NormOpInterface op,
                                     const NormLowerCPUPassOptions &options) {
  return RowLoopBuilder(rewriter, op, options).build();
}
