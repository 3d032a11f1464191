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
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Support/HostCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::cpu_lowering;

SmallVector<Value> RowLoopBuilder::buildRow(OpBuilder &rb, Value row,
                                            ValueRange rowInits) {
  unsigned numPrimary = quant && quant.isDynamic() ? 2 : 1;
  Value sRow = residual ? rowInits[numPrimary] : Value();
  auto widen = [&](OpBuilder &bb, Value v) {
    return castFloat(bb, loc, v, computeType);
  };

  // Per-element normalization given the vector of s in the compute type.
  std::function<Value(OpBuilder &, Value)> normalize;

  if (!op) {
    // A quantization alone: y is the input.
  } else if (!op.hasReduction()) {
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
          scf::YieldOp::create(eb, loc, buildMeanSquare(eb, row, centered));
        });
    Value variance = castFloat(rb, loc, ifOp.getResult(0), computeType);
    Value scaleScalar = buildInverseScale(rb, loc, op, variance);
    if (op.getReturnStatsFlag()) {
      // The mean of the row: shift + E[d], added in f64.
      Value rowMean = arith::AddFOp::create(
          rb, loc, castFloat(rb, loc, shiftScalar, rb.getF64Type()), meanD);
      rowStats = {buildMeanStatistic(rb, loc,
                                     castFloat(rb, loc, rowMean, computeType),
                                     scaleScalar),
                  scaleScalar};
    }
    Value scale =
        vector::BroadcastOp::create(rb, loc, computeVectorType, scaleScalar);
    normalize = [&, centered, scale](OpBuilder &bb, Value s) -> Value {
      return arith::MulFOp::create(bb, loc, centered(bb, s), scale);
    };
  } else {
    Value squares;
    std::tie(squares, sRow) =
        accumulateOne(rb, row, sRow, [&](OpBuilder &bb, Value s) -> Value {
          return arith::MulFOp::create(bb, loc, s, s);
        });
    Value meanSquare =
        castFloat(rb, loc,
                  buildMeanSquareIfOverflowed(
                      rb, row, squares, [](OpBuilder &, Value s) { return s; }),
                  computeType);
    Value scaleScalar = buildInverseScale(rb, loc, op, meanSquare);
    if (op.getReturnStatsFlag())
      rowStats = {scaleScalar};
    Value scale =
        vector::BroadcastOp::create(rb, loc, computeVectorType, scaleScalar);
    normalize = [&, scale](OpBuilder &bb, Value s) -> Value {
      return arith::MulFOp::create(bb, loc, s, scale);
    };
  }

  // Output sweeps (DyT also writes residual_out here).
  bool writeResidualHere = sRow && !op.hasReduction();
  auto computeY = [&](OpBuilder &bb, Value col,
                      Value mask) -> std::pair<Value, Value> {
    Value s = readInput(bb, row, col, mask);
    if (!op)
      return {s, s};
    Value n = normalize(bb, widen(bb, s));
    Value w = weight ? readParameter(bb, weight, col, mask) : Value();
    Value bv = bias ? readParameter(bb, bias, col, mask) : Value();
    return {buildNormOutput(bb, loc, op, n, w, bv), s};
  };
  SmallVector<Value> outputs(rowInits.take_front(numPrimary));
  if (writeResidualHere)
    outputs.push_back(sRow);
  SmallVector<Value> rows =
      buildOutputSweeps(rb, outputs, writeResidualHere, computeY);
  SmallVector<Value> finished(ArrayRef<Value>(rows).take_front(numPrimary));
  if (sRow)
    finished.push_back(writeResidualHere ? rows.back() : sRow);
  // The statistics: one element per row.
  for (auto [stat, dest] :
       llvm::zip_equal(rowStats, rowInits.drop_front(finished.size()))) {
    int64_t destRank = cast<RankedTensorType>(dest.getType()).getRank();
    SmallVector<Value> indices(destRank,
                               arith::ConstantIndexOp::create(rb, loc, 0));
    finished.push_back(tensor::InsertOp::create(rb, loc, stat, dest, indices));
  }
  return finished;
}

Value RowLoopBuilder::buildMeanSquare(
    OpBuilder &rb, Value row, function_ref<Value(OpBuilder &, Value)> term) {
  Value squares = accumulateOne(rb, row, Value(), [&](OpBuilder &bb, Value s) {
                    Value t = term(bb, s);
                    return Value(arith::MulFOp::create(bb, loc, t, t));
                  }).first;
  return buildMeanSquareIfOverflowed(rb, row, squares, term);
}

Value RowLoopBuilder::buildMeanSquareIfOverflowed(
    OpBuilder &rb, Value row, Value squares,
    function_ref<Value(OpBuilder &, Value)> term) {
  // A square (or a block's sum of them) above the largest finite value of
  // the compute type made the f64 sum +inf, though the mean square may be
  // finite. Such rows sweep again with the terms scaled by 2^-k, k = 3/4
  // of the largest exponent: the scaled squares cannot overflow, the
  // scaling is exact, and the terms it flushes to zero are below 2^-k/2 of
  // the largest one, far below the rounding of the sum. The mean is scaled
  // back in f64 (twice by 2^k: 2^2k may not be an f64 value).
  Type f64 = RowView::getRowSumType(rb.getContext());
  Value infinity =
      buildFloatConstant(rb, loc, f64, std::numeric_limits<double>::infinity());
  Value overflowed = arith::CmpFOp::create(rb, loc, arith::CmpFPredicate::OEQ,
                                           squares, infinity);
  auto ifOp = scf::IfOp::create(
      rb, loc, overflowed,
      [&](OpBuilder &tb, Location) {
        int exponent = APFloat::semanticsMaxExponent(
                           cast<FloatType>(computeType).getFloatSemantics()) *
                       3 / 4;
        Value down = buildFloatConstant(tb, loc, computeVectorType,
                                        std::ldexp(1.0, -exponent));
        Value scaled =
            accumulateOne(tb, row, Value(), [&](OpBuilder &bb, Value s) {
              Value t = arith::MulFOp::create(bb, loc, term(bb, s), down);
              return Value(arith::MulFOp::create(bb, loc, t, t));
            }).first;
        Value up = buildFloatConstant(tb, loc, f64, std::ldexp(1.0, exponent));
        Value mean = arith::DivFOp::create(tb, loc, scaled, rowSizeFloat);
        scf::YieldOp::create(
            tb, loc,
            Value(arith::MulFOp::create(
                tb, loc, arith::MulFOp::create(tb, loc, mean, up), up)));
      },
      [&](OpBuilder &eb, Location) {
        scf::YieldOp::create(
            eb, loc,
            Value(arith::DivFOp::create(eb, loc, squares, rowSizeFloat)));
      });
  return ifOp.getResult(0);
}

SmallVector<Value> RowLoopBuilder::buildOutputSweeps(
    OpBuilder &rb, ValueRange outputs, bool writeResidual,
    function_ref<std::pair<Value, Value>(OpBuilder &, Value, Value)> computeY) {
  if (blockScaled)
    return buildBlockScaledSweep(rb, outputs, writeResidual, computeY);
  // y, or q with the static inverse scale.
  if (!quant || !quant.isDynamic()) {
    return sweep(rb, outputs,
                 [&](OpBuilder &bb, Value col, Value mask, ValueRange iter) {
                   auto [y, s] = computeY(bb, col, mask);
                   if (quant)
                     y = buildQuantize(bb, loc, y, inverseScale, quantizedType,
                                       options.nativeBF16);
                   SmallVector<Value> next{writeRow(bb, y, iter[0], col, mask)};
                   if (writeResidual)
                     next.push_back(writeRow(bb, s, iter[1], col, mask));
                   return next;
                 });
  }

  // Dynamic scales: for each group, one sweep computes y, keeps it (as f32)
  // in a row-sized scratch tensor (in cache) and takes max |y|; a second
  // sweep quantizes y from the scratch. y never goes to memory.
  Value groupLength =
      ShapedType::isDynamic(staticGroupSize)
          ? rowSize
          : Value(arith::ConstantIndexOp::create(rb, loc, staticGroupSize));
  VectorType f32VectorType = VectorType::get({vectorLength}, rb.getF32Type());
  VectorType i32VectorType = VectorType::get({vectorLength}, rb.getI32Type());
  Value scratch = tensor::EmptyOp::create(
      rb, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(rowSize)},
      rb.getF32Type());
  SmallVector<Value> groupInits(outputs);
  groupInits.push_back(scratch);
  auto groups = scf::ForOp::create(
      rb, loc, arith::ConstantIndexOp::create(rb, loc, 0),
      arith::ConstantIndexOp::create(rb, loc, numGroups),
      arith::ConstantIndexOp::create(rb, loc, 1), groupInits,
      [&](OpBuilder &gb, Location, Value group, ValueRange iter) {
        Value begin = arith::MulIOp::create(gb, loc, group, groupLength);
        // iter: q row, scales row, [residual row], scratch.
        // max |y| on the encodings: with the sign cleared, floats (infinity
        // and NaN included) order like their bits as unsigned integers, so
        // an unsigned max is max |y| with NaN propagated, one instruction
        // where arith.maximumf takes four.
        SmallVector<Value> inits{
            arith::ConstantOp::create(
                gb, loc, i32VectorType,
                DenseElementsAttr::get(i32VectorType, gb.getI32IntegerAttr(0))),
            iter.back()};
        if (writeResidual)
          inits.push_back(iter[2]);
        SmallVector<Value> first = sweepRange(
            gb, begin, groupLength, staticGroupSize, inits,
            [&](OpBuilder &bb, Value col, Value mask, ValueRange it) {
              auto [y, s] = computeY(bb, col, mask);
              Value wide =
                  buildWidenedQuantizeInput(bb, loc, y, options.nativeBF16);
              Value magnitude = arith::BitcastOp::create(
                  bb, loc, i32VectorType,
                  maskLanes(bb, loc, math::AbsFOp::create(bb, loc, wide),
                            mask));
              SmallVector<Value> next{
                  arith::MaxUIOp::create(bb, loc, it[0], magnitude),
                  writeRow(bb, wide, it[1], col, mask)};
              if (writeResidual)
                next.push_back(writeRow(bb, s, it[2], col, mask));
              return next;
            });
        Value amax = arith::BitcastOp::create(
            gb, loc, gb.getF32Type(),
            vector::ReductionOp::create(gb, loc, vector::CombiningKind::MAXUI,
                                        first[0]));
        Value filled = first[1];
        Value scale = buildGroupScale(gb, loc, quant, amax);
        Value inverse = vector::BroadcastOp::create(
            gb, loc, f32VectorType, buildReciprocal(gb, loc, scale));
        int64_t scalesRank =
            cast<RankedTensorType>(iter[1].getType()).getRank();
        SmallVector<Value> indices(scalesRank - 1,
                                   arith::ConstantIndexOp::create(gb, loc, 0));
        indices.push_back(group);
        Value scalesRow =
            tensor::InsertOp::create(gb, loc, scale, iter[1], indices);

        Value qRow =
            sweepRange(
                gb, begin, groupLength, staticGroupSize, ValueRange{iter[0]},
                [&](OpBuilder &bb, Value col, Value mask, ValueRange it) {
                  Value padding =
                      buildFloatConstant(bb, loc, bb.getF32Type(), 0.0);
                  Value y = vector::TransferReadOp::create(
                      bb, loc, f32VectorType, filled, ValueRange{col},
                      AffineMap::getMultiDimIdentityMap(1, bb.getContext()),
                      padding, mask, bb.getBoolArrayAttr({true}));
                  Value q = buildQuantize(bb, loc, y, inverse, quantizedType);
                  return SmallVector<Value>{writeRow(bb, q, it[0], col, mask)};
                })
                .front();
        SmallVector<Value> next{qRow, scalesRow};
        if (writeResidual)
          next.push_back(first[2]);
        next.push_back(filled);
        scf::YieldOp::create(gb, loc, next);
      });
  return SmallVector<Value>(groups.getResults().drop_back());
}

SmallVector<RowLoopBuilder::OutputSpec> RowLoopBuilder::getOutputSpecs() {
  SmallVector<OutputSpec> specs;
  if (!quant) {
    specs.push_back({inputType, getAsOpFoldResult(rowSize), staticRowSize});
  } else {
    specs.push_back({quantizedType, getAsOpFoldResult(rowSize), staticRowSize});
    if (swizzled) {
      int64_t rowScales = llvm::alignTo(numGroups, 4);
      specs.push_back({scalesElementType, b.getIndexAttr(rowScales), rowScales,
                       /*swizzled=*/true});
    } else if (quant.isDynamic()) {
      specs.push_back(
          {quant.getScalesElementType(), b.getIndexAttr(numGroups), numGroups});
    }
  }
  if (residual)
    specs.push_back({inputType, getAsOpFoldResult(rowSize), staticRowSize});
  for (unsigned i = 0; i < numStats; ++i)
    specs.push_back({computeType, b.getIndexAttr(1), 1});
  return specs;
}

Value RowLoopBuilder::buildOutputInit(OpBuilder &rb, const OutputSpec &spec,
                                      OpFoldResult rows) {
  if (spec.swizzled)
    return buildSwizzledScalesInit(rb, rows);
  return tensor::EmptyOp::create(
      rb, loc, ArrayRef<OpFoldResult>{rows, spec.size}, spec.elementType);
}

void RowLoopBuilder::getRowSlice(OpBuilder &rb, const OutputSpec &spec,
                                 Value row,
                                 SmallVectorImpl<OpFoldResult> &offsets,
                                 SmallVectorImpl<OpFoldResult> &sizes,
                                 SmallVectorImpl<OpFoldResult> &strides) {
  if (!spec.swizzled) {
    offsets.assign({row, rb.getIndexAttr(0)});
    sizes.assign({rb.getIndexAttr(1), spec.size});
    strides.assign(2, rb.getIndexAttr(1));
    return;
  }
  // Row m of the [T, K4, 32, 4, 4] scales: [m / 128, :, m % 32,
  // (m % 128) / 32, :].
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rb, loc, value);
  };
  Value inTile = arith::RemUIOp::create(rb, loc, row, index(128));
  offsets.assign(
      {arith::DivUIOp::create(rb, loc, row, index(128)).getResult(),
       rb.getIndexAttr(0),
       arith::RemUIOp::create(rb, loc, row, index(32)).getResult(),
       arith::DivUIOp::create(rb, loc, inTile, index(32)).getResult(),
       rb.getIndexAttr(0)});
  sizes.assign({rb.getIndexAttr(1), rb.getIndexAttr(spec.staticSize / 4),
                rb.getIndexAttr(1), rb.getIndexAttr(1), rb.getIndexAttr(4)});
  strides.assign(5, rb.getIndexAttr(1));
}

RankedTensorType RowLoopBuilder::getRowType(const OutputSpec &spec) {
  if (spec.swizzled)
    return RankedTensorType::get({spec.staticSize / 4, 4}, spec.elementType);
  return RankedTensorType::get({spec.staticSize}, spec.elementType);
}

SmallVector<Value> RowLoopBuilder::buildSingleRow() {
  // The row is written straight into [1, N] empty tensors, which
  // eliminate-empty-tensors turns into the destinations: the results are
  // written in place. (A one-iteration scf.forall would be folded by
  // canonicalization into an insert_slice whose source starts from a slice
  // of a fresh tensor, which bufferizes to a temporary and a copy.) The
  // swizzled scales are the row's slice of their zero-filled tiles.
  SmallVector<OutputSpec> specs = getOutputSpecs();
  SmallVector<Value> inits, tiles(specs.size());
  for (auto [index, spec] : llvm::enumerate(specs)) {
    if (!spec.swizzled) {
      inits.push_back(buildOutputInit(b, spec, b.getIndexAttr(1)));
      continue;
    }
    tiles[index] = buildOutputInit(b, spec, b.getIndexAttr(1));
    SmallVector<OpFoldResult> offsets, sizes, strides;
    getRowSlice(b, spec, arith::ConstantIndexOp::create(b, loc, 0), offsets,
                sizes, strides);
    inits.push_back(tensor::ExtractSliceOp::create(
        b, loc, getRowType(spec), tiles[index], offsets, sizes, strides));
  }
  SmallVector<Value> finished =
      buildRow(b, arith::ConstantIndexOp::create(b, loc, 0), inits);
  for (auto [index, spec] : llvm::enumerate(specs)) {
    if (!spec.swizzled)
      continue;
    SmallVector<OpFoldResult> offsets, sizes, strides;
    getRowSlice(b, spec, arith::ConstantIndexOp::create(b, loc, 0), offsets,
                sizes, strides);
    finished[index] = tensor::InsertSliceOp::create(
        b, loc, finished[index], tiles[index], offsets, sizes, strides);
  }
  return finished;
}

SmallVector<Value> RowLoopBuilder::buildRowLoop(bool sequential) {
  if (getConstantIntValue(numRows) == 1)
    return buildSingleRow();
  SmallVector<OutputSpec> specs = getOutputSpecs();
  SmallVector<Value> outputs;
  for (const OutputSpec &spec : specs)
    outputs.push_back(buildOutputInit(b, spec, getAsOpFoldResult(numRows)));

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
  if (nontemporal && op && op.hasReduction())
    forall->setAttr(NormDialect::PrefetchNextRowAttrHelper::getNameStr(),
                    b.getUnitAttr());

  OpBuilder rb = OpBuilder::atBlockBegin(forall.getBody());
  Value row = forall.getInductionVar(0);
  // The slice of every result that the row writes (a [1, size] row, or the
  // row's [K4, 4] slice of the swizzled scales).
  struct RowSlice {
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };
  SmallVector<RowSlice> slices(specs.size());
  SmallVector<Value> rowInits;
  for (auto [spec, slice, shared] :
       llvm::zip_equal(specs, slices, forall.getRegionIterArgs())) {
    getRowSlice(rb, spec, row, slice.offsets, slice.sizes, slice.strides);
    rowInits.push_back(tensor::ExtractSliceOp::create(
        rb, loc, getRowType(spec), shared, slice.offsets, slice.sizes,
        slice.strides));
  }
  rb.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> finished = buildRow(rb, row, rowInits);

  rb.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [slice, rowValue, shared] :
       llvm::zip_equal(slices, finished, forall.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(
        rb, loc, rowValue, shared, slice.offsets, slice.sizes, slice.strides);
  return SmallVector<Value>(forall.getResults());
}

unsigned RowLoopBuilder::getReplacementTypes(
    RankedTensorType opXType,
    SmallVectorImpl<RankedTensorType> &replacementTypes,
    SmallVectorImpl<SmallVector<OpFoldResult>> &resultSizes) {
  // The results: y (or q and the scales) and residual_out, with the types
  // the replacements must have and the sizes they are built with.
  if (quant) {
    quantizedType = quant.getQuantizedElementType();
    replacementTypes.push_back(quant.getQ().getType());
    resultSizes.push_back(xSizes);
    if (quant.isDynamic()) {
      RankedTensorType scalesType = quant.getScales().getType();
      staticGroupSize =
          quant.getGroupSize() ? quant.getGroupSize() : xType.getShape().back();
      // Block scales: N is static (and the swizzled scales are flat).
      numGroups = blockScaled ? xType.getShape().back() / staticGroupSize
                              : scalesType.getShape().back();
      replacementTypes.push_back(scalesType);
      if (swizzled) {
        resultSizes.push_back({buildSwizzledScalesSize()});
      } else {
        resultSizes.push_back(xSizes);
        resultSizes.back().back() = b.getIndexAttr(numGroups);
      }
    }
  } else {
    replacementTypes.push_back(opXType);
    resultSizes.push_back(xSizes);
  }
  if (op && op.getResidual()) {
    replacementTypes.push_back(opXType);
    resultSizes.push_back(xSizes);
  }
  // The statistics (shaped by the leading dims) come last.
  numStats = op ? op.getNumStatsResults() : 0;
  unsigned numRowResults = replacementTypes.size();
  for (unsigned i = 0; i < numStats; ++i) {
    replacementTypes.push_back(op.getStatsType());
    resultSizes.push_back(
        SmallVector<OpFoldResult>(ArrayRef(xSizes).take_front(axis)));
  }
  return numRowResults;
}

void RowLoopBuilder::chooseNontemporalStores(
    ArrayRef<RankedTensorType> rowResultTypes) {
  // Large write-once outputs bypass the caches. All results count: y (or q
  // and the scales) and residual_out compete for the same cache. With a
  // dynamic row count and a static row length, the loop decides at run
  // time from its row count (norm.nontemporal_min_trips), so that
  // decode-sized calls keep their outputs in cache; with a dynamic row
  // length, non-temporal stores are used whenever the rows are aligned.
  // Counted in bits (an f4E2M1FN q has half a byte per element); block
  // scales, a byte per 16 elements or fewer, are left out.
  if (options.nontemporalThreshold >= 0) {
    int64_t bitsPerElement = 0;
    for (auto [index, type] : llvm::enumerate(rowResultTypes))
      if (!blockScaled || index != 1)
        bitsPerElement += type.getElementTypeBitWidth();
    int64_t thresholdBits = options.nontemporalThreshold * 8;
    if (xType.hasStaticShape()) {
      nontemporal = xType.getNumElements() * bitsPerElement >= thresholdBits;
    } else {
      nontemporal = true;
      if (!ShapedType::isDynamic(staticRowSize) && staticRowSize > 0)
        nontemporalMinRows =
            llvm::divideCeil(thresholdBits, staticRowSize * bitsPerElement);
    }
  }
}

SmallVector<Value> RowLoopBuilder::buildRowLoops() {
  int64_t staticElements =
      xType.hasStaticShape() ? xType.getNumElements() : ShapedType::kDynamic;
  if (options.threads <= 1 || (!ShapedType::isDynamic(staticElements) &&
                               staticElements < options.parallelThreshold))
    return buildRowLoop(/*sequential=*/true);
  if (!ShapedType::isDynamic(staticElements))
    return buildRowLoop(/*sequential=*/false);
  // Decided at run time, after bufferization, by norm-forall-to-loops:
  // parallel from ceil(threshold / N) rows on. (An scf.if between two
  // loops here would give each its own destination, and bufferization
  // would compute into a temporary and copy it out.) With a dynamic N
  // the loop is always parallel.
  SmallVector<Value> results = buildRowLoop(/*sequential=*/false);
  if (!ShapedType::isDynamic(staticRowSize) && staticRowSize > 0) {
    int64_t minRows =
        llvm::divideCeil(options.parallelThreshold, staticRowSize);
    if (minRows > 1)
      results.front().getDefiningOp()->setAttr(
          NormDialect::ParallelMinTripsAttrHelper::getNameStr(),
          b.getI64IntegerAttr(minRows));
  }
  return results;
}

FailureOr<SmallVector<Value>> RowLoopBuilder::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op ? getFusedInsertionPoint(op, quant)
                         : quant.getOperation());
  // Dims that x's type leaves dynamic but that are known statically (x is
  // a tensor.cast of a more static tensor, or a size folds to a constant)
  // are made static first: the reshapes and row types below are built from
  // the folded sizes, and must agree with the types they are given.
  TypedValue<RankedTensorType> opInput = op ? op.getX() : quant.getInput();
  Value input = refineStaticSizes(b, loc, opInput);
  xType = cast<RankedTensorType>(input.getType());
  rank = xType.getRank();
  axis = op ? op.getNormalizedDim() : rank - 1;
  inputType = xType.getElementType();
  computeType = op ? op.getComputeElementType() : b.getF32Type();
  xSizes = tensor::getMixedSizes(b, loc, input);
  RankedTensorType opXType = opInput.getType();
  if (quant && quant.isBlockScaled()) {
    blockScaled = true;
    swizzled = quant.getScaleLayout() == ScaleLayout::swizzled_128x4;
    scalesElementType = quant.getScalesElementType();
  }

  SmallVector<RankedTensorType> replacementTypes;
  SmallVector<SmallVector<OpFoldResult>> resultSizes;
  unsigned numRowResults =
      getReplacementTypes(opXType, replacementTypes, resultSizes);
  // The types the lowering builds: as static as the sizes.
  SmallVector<RankedTensorType> resultTypes;
  for (auto [type, sizes] : llvm::zip_equal(replacementTypes, resultSizes)) {
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamicSizes;
    dispatchIndexOpFoldResults(sizes, dynamicSizes, shape);
    resultTypes.push_back(type.clone(shape));
  }

  // A statically empty input has empty results: nothing to compute, and the
  // row reshapes below assume that folding the sizes keeps them dynamic.
  RowView view = op ? RowView(op) : RowView(xType, axis);
  staticRowSize = RowView(xType, axis).getStaticRowSize();
  if (view.isStaticallyEmpty() || llvm::is_contained(xType.getShape(), 0)) {
    SmallVector<Value> empties =
        buildStaticallyEmpty(resultTypes, resultSizes, numRowResults);
    for (auto [index, type] : llvm::enumerate(replacementTypes))
      if (empties[index].getType() != type)
        empties[index] = tensor::CastOp::create(b, loc, type, empties[index]);
    return empties;
  }
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

  x = toMatrix(input);
  if (op) {
    if (Value r = op.getResidual()) {
      // The residual may know more or fewer static dims than x: reshape it
      // as x is reshaped.
      if (r.getType() != xType)
        r = tensor::CastOp::create(b, loc, xType, r);
      residual = toMatrix(r);
    }
    weight = prepareParameter(op.getWeight());
    bias = prepareParameter(op.getBias());
    alpha = prepareParameter(op.getAlpha());
  }
  if (quant && !quant.isDynamic()) {
    // The static scale's reciprocal, once.
    TypedValue<RankedTensorType> scale = quant.getScale();
    SmallVector<Value> indices(scale.getType().getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    inverseScale = vector::BroadcastOp::create(
        b, loc, VectorType::get({vectorLength}, b.getF32Type()),
        buildReciprocal(b, loc,
                        tensor::ExtractOp::create(b, loc, scale, indices)));
  }
  if (quant && quant.getGlobalScale()) {
    // NVFP4's global scale, read once.
    TypedValue<RankedTensorType> global = quant.getGlobalScale();
    SmallVector<Value> indices(global.getType().getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    globalScale = tensor::ExtractOp::create(b, loc, global, indices);
  }

  chooseNontemporalStores(ArrayRef(resultTypes).take_front(numRowResults));

  SmallVector<Value> results = buildRowLoops();
  SmallVector<Value> replacements;
  for (auto [index, result, type, replacementType, sizes] :
       llvm::enumerate(results, resultTypes, replacementTypes, resultSizes)) {
    Value reshaped;
    if (swizzled && index == 1)
      // The [T, K4, 32, 4, 4] scales, flattened.
      reshaped = tensor::CollapseShapeOp::create(
          b, loc, result, ArrayRef<ReassociationIndices>{{0, 1, 2, 3, 4}});
    else if (index < numRowResults)
      reshaped = fromMatrix(result, type, sizes);
    else
      reshaped = statsFromMatrix(result, type, sizes);
    if (reshaped.getType() != replacementType)
      reshaped = tensor::CastOp::create(b, loc, replacementType, reshaped);
    replacements.push_back(reshaped);
  }
  return replacements;
}

SmallVector<Value>
RowLoopBuilder::buildStaticallyEmpty(ArrayRef<RankedTensorType> resultTypes,
                                     ArrayRef<SmallVector<OpFoldResult>> sizes,
                                     unsigned numRowResults) {
  // One empty tensor per distinct result type. The statistics of empty
  // rows (N = 0, rows left) are NaN, 0 / 0 as the row loop computes them.
  // The dynamic scales of a quantization of empty rows (rows left, one
  // group of 0 elements each) are those of amax = 0: min_scale
  // (docs/Ops.md#quantization). Block scales of an empty input have no
  // elements (N = 0 has no groups).
  SmallVector<Value> empties;
  llvm::SmallDenseMap<Type, Value> emptyOfType;
  for (auto [index, type, typeSizes] : llvm::enumerate(resultTypes, sizes)) {
    bool isScales = quant && quant.isDynamic() && !blockScaled && index == 1;
    bool hasElements = !llvm::is_contained(type.getShape(), 0);
    if (hasElements && (index >= numRowResults || isScales)) {
      Value fill =
          isScales
              ? buildGroupScale(b, loc, quant,
                                buildFloatConstant(b, loc, b.getF32Type(), 0.0))
              : buildFloatConstant(b, loc, type.getElementType(),
                                   std::numeric_limits<double>::quiet_NaN());
      empties.push_back(tensor::SplatOp::create(b, loc, fill, typeSizes));
      continue;
    }
    Value &empty = emptyOfType[type];
    if (!empty)
      empty = tensor::EmptyOp::create(b, loc, typeSizes, type.getElementType());
    empties.push_back(empty);
  }
  return empties;
}

FailureOr<SmallVector<Value>>
mlir::norm::lowerNormOpToVectorLoops(RewriterBase &rewriter, NormOpInterface op,
                                     const NormLowerCPUPassOptions &options,
                                     QuantizeOp quant) {
  return RowLoopBuilder(rewriter, op, quant, options).build();
}

FailureOr<SmallVector<Value>> mlir::norm::lowerQuantizeOpToVectorLoops(
    RewriterBase &rewriter, QuantizeOp op,
    const NormLowerCPUPassOptions &options) {
  return RowLoopBuilder(rewriter, NormOpInterface(), op, options).build();
}
