//===- BlockScaledSweeps.cpp - Block-scaled quantization of a row -*- C++ -*-=//
//
// norm-lower-cpu's output sweep for the block-scaled forms of norm.quantize
// (MXFP8, FP8 1x128, MXFP4, NVFP4; DESIGN 2d), alone or fused with the norm
// op that computes y: the row is taken in chunks of one group of G >=
// vector length columns, or of several vector steps of smaller groups,
// whose y stays in registers while the max |y| of the chunk's groups is
// reduced (several together, by shuffles), their scales computed (in one
// vector) and written, and the elements converted with integer vector ops
// and stored. The swizzled_128x4 scales are built as a
// [T, K4, 32, 4, 4] view of the flat result, of which every row owns a
// [K4, 4] slice.
//
//===----------------------------------------------------------------------===//

#include "RowLoopBuilder.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Support/HostCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/bit.h"

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

/// The vector steps of one chunk of groups smaller than the vector length:
/// as many as keep y of the chunk in half the vector registers (32 of
/// 512 bits, or 16 narrower ones), so that each group's scale is computed
/// once per chunk in one vector of up to 16 groups.
static int64_t chunkStepsOf(unsigned width, int64_t vectorLength) {
  int64_t lanesPerRegister = std::max<int64_t>(1, width / 32);
  int64_t registers = width >= 512 ? 32 : 16;
  int64_t budget = lanesPerRegister * registers / 2;
  return std::max<int64_t>(
      1, int64_t(llvm::bit_floor(uint64_t(std::max<int64_t>(
             1, budget / vectorLength)))));
}

SmallVector<Value> RowLoopBuilder::buildBlockScaledSweep(
    OpBuilder &rb, ValueRange outputs, bool writeResidual,
    function_ref<std::pair<Value, Value>(OpBuilder &, Value, Value)> computeY) {
  // A chunk is one group of G >= vector length columns (G / vector length
  // steps), or some steps of vector length / G groups each: G and the
  // vector length are powers of two, and N (static) is a multiple of G.
  // The columns past the last whole chunk are taken one step at a time,
  // and a row whose length is not a multiple of the step ends with one
  // shorter, masked chunk of whole groups.
  int64_t groupSize = staticGroupSize;
  int64_t stepLength = std::max(groupSize, vectorLength);
  int64_t chunkLength = stepLength;
  if (groupSize < vectorLength)
    chunkLength *= chunkStepsOf(resolveVectorWidth(options.vectorWidth),
                                vectorLength);
  SmallVector<Value> rows(outputs);
  auto sweep = [&](int64_t begin, int64_t end, int64_t length) {
    if (begin >= end)
      return;
    auto loop = scf::ForOp::create(
        rb, loc, arith::ConstantIndexOp::create(rb, loc, begin),
        arith::ConstantIndexOp::create(rb, loc, end),
        arith::ConstantIndexOp::create(rb, loc, length), rows,
        [&](OpBuilder &lb, Location, Value col, ValueRange iter) {
          scf::YieldOp::create(lb, loc,
                               buildBlockScaledChunk(lb, col,
                                                     length / groupSize, iter,
                                                     writeResidual, computeY));
        });
    rows.assign(loop.getResults().begin(), loop.getResults().end());
  };
  int64_t chunksEnd = staticRowSize / chunkLength * chunkLength;
  int64_t stepsEnd = staticRowSize / stepLength * stepLength;
  sweep(0, chunksEnd, chunkLength);
  sweep(chunksEnd, stepsEnd, stepLength);
  if (stepsEnd < staticRowSize)
    rows = buildBlockScaledChunk(
        rb, arith::ConstantIndexOp::create(rb, loc, stepsEnd),
        (staticRowSize - stepsEnd) / groupSize, rows, writeResidual, computeY);
  return rows;
}

/// Each group's max of the unsigned `magnitudes` of a chunk's steps (groups
/// of `groupSize` lanes, a power of two, in order; each step holds whole
/// groups): a vector of one lane per group, in order. Pairs of steps, then
/// halves of the last vector, are combined with two shuffles and one max
/// per level, so that the groups are reduced together rather than one
/// horizontal reduction each.
static Value buildGroupMaxima(OpBuilder &b, Location loc,
                              SmallVector<Value> magnitudes,
                              int64_t groupSize) {
  int64_t lanes = groupSize;
  // The lanes [0, lanes / 2) (or [lanes / 2, lanes)) of every group of
  // `lanes` in `count` lanes of each of the shuffled vectors.
  auto halves = [&](int64_t count, int64_t sources, bool upper) {
    SmallVector<int64_t> indices;
    for (int64_t source = 0; source < sources; ++source)
      for (int64_t group = 0; group < count / lanes; ++group)
        for (int64_t lane = 0; lane < lanes / 2; ++lane)
          indices.push_back(source * count + group * lanes + lane +
                            (upper ? lanes / 2 : 0));
    return indices;
  };
  auto combine = [&](Value first, Value second, int64_t count) {
    Value low = vector::ShuffleOp::create(
        b, loc, first, second, halves(count, second == first ? 1 : 2, false));
    Value high = vector::ShuffleOp::create(
        b, loc, first, second, halves(count, second == first ? 1 : 2, true));
    return arith::MaxUIOp::create(b, loc, low, high).getResult();
  };
  while (magnitudes.size() > 1 && lanes > 1) {
    SmallVector<Value> next;
    int64_t count = cast<VectorType>(magnitudes.front().getType()).getNumElements();
    for (size_t i = 0; i + 1 < magnitudes.size(); i += 2)
      next.push_back(combine(magnitudes[i], magnitudes[i + 1], count));
    magnitudes = std::move(next);
    lanes /= 2;
  }
  assert(magnitudes.size() == 1 && "a power of two of steps per chunk");
  Value maxima = magnitudes.front();
  for (; lanes > 1; lanes /= 2)
    maxima = combine(maxima, maxima,
                     cast<VectorType>(maxima.getType()).getNumElements());
  return maxima;
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
    if (length < vectorLength)
      magnitudes.front() = extractLanes(rb, loc, magnitudes.front(), 0, length);
    amax = arith::BitcastOp::create(
        rb, loc, VectorType::get({numChunkGroups}, rb.getF32Type()),
        buildGroupMaxima(rb, loc, magnitudes, groupSize));
  }
  auto [scales, multipliers] = buildBlockScales(rb, amax);

  // q: whole vectors (of an even number of elements, stored at even
  // columns), never single elements, so that the stores of f4E2M1FN stay
  // whole bytes once it is packed two per byte. The multiplier of every
  // lane: broadcast, or each group's repeated over its G lanes (the lanes
  // past a short chunk take the last group's).
  int64_t stepGroups = vectorLength / groupSize;
  for (auto [step, stepCol, wide] :
       llvm::enumerate(stepCols, values)) {
    Value multiplier;
    if (numChunkGroups == 1) {
      multiplier =
          vector::BroadcastOp::create(rb, loc, f32VectorType, multipliers);
    } else {
      SmallVector<int64_t> lanes(vectorLength);
      for (int64_t lane = 0; lane < vectorLength; ++lane)
        lanes[lane] = std::min<int64_t>(step * stepGroups + lane / groupSize,
                                        numChunkGroups - 1);
      multiplier =
          vector::ShuffleOp::create(rb, loc, multipliers, multipliers, lanes);
    }
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
