//===- BlockScaledSweeps.cpp - Block-scaled quantization of a row -*- C++ -*-=//
//
// norm-lower-cpu's output sweep for the block-scaled forms of norm.quantize
// (MXFP8, FP8 1x128, MXFP4, NVFP4; DESIGN 2d), alone or fused with the norm
// op that computes y: the row is taken in chunks of max(G, vector length)
// columns whose y stays in registers while each group's max |y| is reduced,
// its scale computed and written, and its elements converted with integer
// vector ops and stored. The swizzled_128x4 scales are built as a
// [T, K4, 32, 4, 4] view of the flat result, of which every row owns a
// [K4, 4] slice.
//
//===----------------------------------------------------------------------===//

#include "RowLoopBuilder.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::cpu_lowering;

/// The tiles of the swizzled_128x4 layout: 128 rows by 4 groups, 512
/// consecutive scales, row m of the tile from (m % 32) * 16 + (m / 32) * 4.
static constexpr int64_t kSwizzledTileRows = 128;
static constexpr int64_t kSwizzledTileGroups = 4;

/// Lanes [offset, offset + size) of the 1-D vector `value`.
static Value extractLanes(OpBuilder &b, Location loc, Value value,
                          int64_t offset, int64_t size) {
  if (offset == 0 && cast<VectorType>(value.getType()).getNumElements() == size)
    return value;
  return vector::ExtractStridedSliceOp::create(b, loc, value, {offset}, {size},
                                               {1});
}

//===----------------------------------------------------------------------===//
// The swizzled_128x4 scales
//===----------------------------------------------------------------------===//

OpFoldResult RowLoopBuilder::buildNumSwizzledTiles(OpBuilder &rb,
                                                   OpFoldResult rows) {
  if (std::optional<int64_t> known = getConstantIntValue(rows))
    return rb.getIndexAttr(llvm::divideCeil(*known, kSwizzledTileRows));
  Value padded = arith::AddIOp::create(
      rb, loc, getValueOrCreateConstantIndexOp(rb, loc, rows),
      arith::ConstantIndexOp::create(rb, loc, kSwizzledTileRows - 1));
  return arith::DivUIOp::create(
             rb, loc, padded,
             arith::ConstantIndexOp::create(rb, loc, kSwizzledTileRows))
      .getResult();
}

Value RowLoopBuilder::buildSwizzledScalesInit(OpBuilder &rb,
                                              OpFoldResult rows) {
  // [T, K4, 32, 4, 4]: row m = 128 * t + 32 * i + r, group k = 4 * j + l is
  // at [t, j, r, i, l], which flattens to DESIGN 2d's offset
  // (getSwizzled128x4Offset).
  int64_t groupBlocks = llvm::divideCeil(numGroups, kSwizzledTileGroups);
  SmallVector<OpFoldResult> sizes{
      buildNumSwizzledTiles(rb, rows), rb.getIndexAttr(groupBlocks),
      rb.getIndexAttr(32), rb.getIndexAttr(kSwizzledTileRows / 32),
      rb.getIndexAttr(kSwizzledTileGroups)};
  Value empty = tensor::EmptyOp::create(rb, loc, sizes, scalesElementType);
  // The padding (rows past M, groups past N / G) is the code 0 of the scale
  // type (f8E8M0FNU has no zero: its 0x00 is 2^-127). Every row then
  // writes its scales over the fill.
  Value zero = arith::BitcastOp::create(
      rb, loc, scalesElementType,
      arith::ConstantOp::create(rb, loc, rb.getI8IntegerAttr(0)));
  return linalg::FillOp::create(rb, loc, zero, empty).getResult(0);
}

OpFoldResult RowLoopBuilder::buildSwizzledScalesSize() {
  // roundup(M, 128) * roundup(N / G, 4), M the product of the leading dims.
  int64_t rowScales = llvm::alignTo(numGroups, kSwizzledTileGroups);
  ArrayRef<OpFoldResult> leading = ArrayRef(xSizes).drop_back();
  if (llvm::all_of(leading, [](OpFoldResult size) {
        return getConstantIntValue(size).has_value();
      })) {
    int64_t numRows = 1;
    for (OpFoldResult size : leading)
      numRows *= *getConstantIntValue(size);
    return b.getIndexAttr(getSwizzled128x4Size(numRows, numGroups));
  }
  Value rows = arith::ConstantIndexOp::create(b, loc, 1);
  for (OpFoldResult size : leading)
    rows = arith::MulIOp::create(b, loc, rows,
                                 getValueOrCreateConstantIndexOp(b, loc, size));
  Value tiles = getValueOrCreateConstantIndexOp(
      b, loc, buildNumSwizzledTiles(b, getAsOpFoldResult(rows)));
  return arith::MulIOp::create(b, loc, tiles,
                               arith::ConstantIndexOp::create(
                                   b, loc, kSwizzledTileRows * rowScales))
      .getResult();
}

//===----------------------------------------------------------------------===//
// The sweep
//===----------------------------------------------------------------------===//

SmallVector<Value> RowLoopBuilder::buildBlockScaledSweep(
    OpBuilder &rb, ValueRange outputs, bool writeResidual,
    function_ref<std::pair<Value, Value>(OpBuilder &, Value, Value)> computeY) {
  // A chunk is one group of G >= vector length columns (G / vector length
  // steps) or the vector length / G groups of one step: G and the vector
  // length are powers of two, and N (static) is a multiple of G. A row
  // whose length is not a multiple of the chunk's ends with one shorter,
  // masked chunk of whole groups.
  int64_t chunkLength = std::max(staticGroupSize, vectorLength);
  int64_t fullLength = staticRowSize / chunkLength * chunkLength;
  auto loop = scf::ForOp::create(
      rb, loc, arith::ConstantIndexOp::create(rb, loc, 0),
      arith::ConstantIndexOp::create(rb, loc, fullLength),
      arith::ConstantIndexOp::create(rb, loc, chunkLength), outputs,
      [&](OpBuilder &lb, Location, Value col, ValueRange iter) {
        scf::YieldOp::create(
            lb, loc,
            buildBlockScaledChunk(lb, col, chunkLength / staticGroupSize, iter,
                                  writeResidual, computeY));
      });
  SmallVector<Value> rows(loop.getResults());
  if (fullLength < staticRowSize)
    rows = buildBlockScaledChunk(
        rb, arith::ConstantIndexOp::create(rb, loc, fullLength),
        (staticRowSize - fullLength) / staticGroupSize, rows, writeResidual,
        computeY);
  return rows;
}

SmallVector<Value> RowLoopBuilder::buildBlockScaledChunk(
    OpBuilder &rb, Value col, int64_t numChunkGroups, ValueRange rows,
    bool writeResidual,
    function_ref<std::pair<Value, Value>(OpBuilder &, Value, Value)> computeY) {
  int64_t groupSize = staticGroupSize;
  int64_t length = numChunkGroups * groupSize;
  int64_t numSteps = llvm::divideCeil(length, vectorLength);
  VectorType f32VectorType = VectorType::get({vectorLength}, rb.getF32Type());
  VectorType i32VectorType = VectorType::get({vectorLength}, rb.getI32Type());
  // A chunk shorter than a vector reads masked; the lanes past it belong to
  // groups that are not used.
  Value mask;
  if (length < vectorLength)
    mask = vector::CreateMaskOp::create(
        rb, loc, maskType,
        ValueRange{arith::ConstantIndexOp::create(rb, loc, length)});
  Value qRow = rows[0], scalesRow = rows[1];
  Value sRow = writeResidual ? rows[2] : Value();

  // y of every step, in f32 registers, and the encodings of |y|: with the
  // sign cleared, floats (infinity and NaN included) order like their bits
  // as unsigned integers, so an unsigned max is max |y| with NaN
  // propagated.
  SmallVector<Value> stepCols, values, magnitudes;
  for (int64_t step = 0; step < numSteps; ++step) {
    Value stepCol =
        step == 0 ? col
                  : arith::AddIOp::create(rb, loc, col,
                                          arith::ConstantIndexOp::create(
                                              rb, loc, step * vectorLength));
    auto [y, s] = computeY(rb, stepCol, mask);
    Value wide = buildWidenedQuantizeInput(rb, loc, y, options.nativeBF16);
    stepCols.push_back(stepCol);
    values.push_back(wide);
    magnitudes.push_back(arith::BitcastOp::create(
        rb, loc, i32VectorType, math::AbsFOp::create(rb, loc, wide)));
    if (sRow)
      sRow = writeRow(rb, s, sRow, stepCol, mask);
  }

  // amax: a scalar for a chunk of one group, else one lane per group.
  auto reduceMax = [&](Value bits) -> Value {
    return vector::ReductionOp::create(rb, loc, vector::CombiningKind::MAXUI,
                                       bits);
  };
  Value amax;
  if (numChunkGroups == 1) {
    Value bits = magnitudes.front();
    for (Value next : llvm::drop_begin(magnitudes))
      bits = arith::MaxUIOp::create(rb, loc, bits, next);
    amax = arith::BitcastOp::create(
        rb, loc, rb.getF32Type(),
        reduceMax(
            extractLanes(rb, loc, bits, 0, std::min(groupSize, vectorLength))));
  } else {
    SmallVector<Value> groupMax;
    for (int64_t group = 0; group < numChunkGroups; ++group)
      groupMax.push_back(reduceMax(extractLanes(rb, loc, magnitudes.front(),
                                                group * groupSize, groupSize)));
    amax = arith::BitcastOp::create(
        rb, loc, VectorType::get({numChunkGroups}, rb.getF32Type()),
        vector::FromElementsOp::create(
            rb, loc, VectorType::get({numChunkGroups}, rb.getI32Type()),
            groupMax));
  }
  auto [scales, multipliers] = buildBlockScales(rb, amax);

  // The multiplier of every lane: broadcast, or each group's repeated over
  // its G lanes (the lanes past a short chunk take the last group's).
  Value multiplier;
  if (numChunkGroups == 1) {
    multiplier =
        vector::BroadcastOp::create(rb, loc, f32VectorType, multipliers);
  } else {
    SmallVector<int64_t> lanes(vectorLength);
    for (int64_t lane = 0; lane < vectorLength; ++lane)
      lanes[lane] = std::min(lane / groupSize, numChunkGroups - 1);
    multiplier =
        vector::ShuffleOp::create(rb, loc, multipliers, multipliers, lanes);
  }
  // q: whole vectors (of an even number of elements, stored at even
  // columns), never single elements, so that the stores of f4E2M1FN stay
  // whole bytes once it is packed two per byte.
  for (auto [stepCol, wide] : llvm::zip_equal(stepCols, values)) {
    Value q = buildBlockQuantize(rb, loc, wide, multiplier, quantizedType);
    q = extractLanes(rb, loc, q, 0, std::min(length, vectorLength));
    qRow = writeRow(rb, q, qRow, stepCol, Value());
  }

  Value firstGroup = arith::DivUIOp::create(
      rb, loc, col, arith::ConstantIndexOp::create(rb, loc, groupSize));
  SmallVector<Value> next{qRow,
                          writeBlockScales(rb, scales, scalesRow, firstGroup)};
  if (sRow)
    next.push_back(sRow);
  return next;
}

std::pair<Value, Value> RowLoopBuilder::buildBlockScales(OpBuilder &rb,
                                                         Value amax) {
  Value scale, multiplier;
  if (globalScale) {
    Value global = globalScale;
    if (auto vectorType = dyn_cast<VectorType>(amax.getType()))
      global = vector::BroadcastOp::create(rb, loc, vectorType, global);
    std::tie(scale, multiplier) = buildNVFP4Scale(rb, loc, global, amax);
  } else {
    scale = buildPowerOfTwoScaleCode(rb, loc, quant, amax);
    multiplier = buildPowerOfTwoMultiplier(rb, loc, scale);
  }
  return {buildBlockScaleValue(rb, loc, scale, scalesElementType), multiplier};
}

Value RowLoopBuilder::writeBlockScales(OpBuilder &rb, Value values,
                                       Value scalesRow, Value firstGroup) {
  // The place of group k: [k] (or [0, k] in a single-row result); swizzled,
  // [k / 4, k % 4] in the row's [K4, 4] slice.
  auto indicesOf = [&](Value group) -> SmallVector<Value> {
    if (swizzled) {
      Value four = arith::ConstantIndexOp::create(rb, loc, kSwizzledTileGroups);
      return {arith::DivUIOp::create(rb, loc, group, four),
              arith::RemUIOp::create(rb, loc, group, four)};
    }
    int64_t rank = cast<RankedTensorType>(scalesRow.getType()).getRank();
    SmallVector<Value> indices(rank - 1,
                               arith::ConstantIndexOp::create(rb, loc, 0));
    indices.push_back(group);
    return indices;
  };
  auto vectorType = dyn_cast<VectorType>(values.getType());
  if (!vectorType)
    return tensor::InsertOp::create(rb, loc, values, scalesRow,
                                    indicesOf(firstGroup));
  if (!swizzled)
    return write(rb, values, scalesRow, indicesOf(firstGroup), Value());
  // Swizzled: consecutive groups are consecutive up to a multiple of 4.
  // `firstGroup` is a multiple of a full chunk's groups, a power of two:
  // the chunk's groups do not cross a multiple of 4 when they are at most
  // 4, and start at one when they are more.
  int64_t count = vectorType.getNumElements();
  for (int64_t begin = 0; begin < count; begin += kSwizzledTileGroups) {
    Value group = firstGroup;
    if (begin != 0)
      group = arith::AddIOp::create(
          rb, loc, firstGroup, arith::ConstantIndexOp::create(rb, loc, begin));
    Value run = extractLanes(rb, loc, values, begin,
                             std::min(count - begin, kSwizzledTileGroups));
    scalesRow = write(rb, run, scalesRow, indicesOf(group), Value());
  }
  return scalesRow;
}
