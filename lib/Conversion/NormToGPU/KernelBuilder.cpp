//===- KernelBuilder.cpp - Bodies of the norm GPU kernels -------*- C++ -*-===//
//
// A warp (short rows) or a block (long rows) normalizes one row. Threads
// read the row with 128-bit vector loads and keep it in registers between
// the reductions and the write; sums are reduced with warp shuffles and,
// across the warps of a block, through workgroup memory (the primitives
// every kernel shares are in KernelPrimitives.cpp).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

//===----------------------------------------------------------------------===//
// Kernel body
//===----------------------------------------------------------------------===//

Value KernelBodyBuilder::elementOffset(Value index) {
  Value scaled =
      arith::MulIOp::create(b, loc, index, constantIndex(shape.vectorLength));
  return arith::AddIOp::create(b, loc, rowBase, scaled);
}

Value KernelBodyBuilder::loadRow(Value buffer, Value index) {
  Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
  auto vectorType = VectorType::get({shape.vectorLength}, elementType);
  return vector::LoadOp::create(
      b, loc, vectorType, buffer, ValueRange{elementOffset(index)},
      /*nontemporal=*/false,
      getAccessAlignment(elementType, shape.vectorLength));
}

void KernelBodyBuilder::storeRow(Value value, Value buffer, Value index,
                                 Value valid) {
  OpBuilder::InsertionGuard guard(b);
  if (rowValid)
    valid = valid ? arith::AndIOp::create(b, loc, valid, rowValid).getResult()
                  : rowValid;
  if (valid) {
    auto ifOp = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
  vector::StoreOp::create(b, loc, value, buffer,
                          ValueRange{elementOffset(index)},
                          /*nontemporal=*/false,
                          getAccessAlignment(elementType, shape.vectorLength));
}

Value KernelBodyBuilder::loadInput(Value index) {
  Value s = loadRow(buffers.x, index);
  if (buffers.residual)
    s = buildResidualSum(b, loc, s, loadRow(buffers.residual, index));
  return s;
}

Value KernelBodyBuilder::loadParam(const KernelParam &param, Value index) {
  if (!param.isScalar) {
    if (paramBase)
      index = arith::AddIOp::create(b, loc, index, paramBase);
    Type elementType =
        cast<MemRefType>(param.buffer.getType()).getElementType();
    auto vectorType = VectorType::get({shape.vectorLength}, elementType);
    Value offset =
        arith::MulIOp::create(b, loc, index, constantIndex(shape.vectorLength));
    return vector::LoadOp::create(
        b, loc, vectorType, param.buffer, ValueRange{offset},
        /*nontemporal=*/false,
        getAccessAlignment(elementType, shape.vectorLength));
  }
  auto type = cast<MemRefType>(param.buffer.getType());
  SmallVector<Value> zeros(type.getRank(), constantIndex(0));
  Value scalar = memref::LoadOp::create(b, loc, param.buffer, zeros);
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({shape.vectorLength}, type.getElementType()),
      scalar);
}

Value KernelBodyBuilder::loopInput(Value index, unsigned sweep) {
  if (sweep == 0) {
    Value s = loadInput(index);
    if (buffers.residualOut)
      storeRow(s, buffers.residualOut, index, Value());
    return s;
  }
  // s was rounded to the input type and stored: reading it back is exact.
  return loadRow(buffers.residualOut ? buffers.residualOut : buffers.x, index);
}

Value KernelBodyBuilder::groupReduce(Value value, Value scratch, bool maximum) {
  auto combine = [maximum](OpBuilder &cb, Location cl, Value lhs,
                           Value rhs) -> Value {
    if (maximum)
      return arith::MaximumFOp::create(cb, cl, lhs, rhs);
    return arith::AddFOp::create(cb, cl, lhs, rhs);
  };
  // Butterfly within the group's lanes (a whole warp, or a power-of-two
  // part of one when several rows share a warp).
  value = buildLanesReduce(b, loc, value, std::min(shape.groupSize, kWarpSize),
                           combine);
  if (shape.groupSize <= kWarpSize)
    return value;
  // Across warps: every thread combines the warps' values in the same
  // order, so all threads agree bit for bit.
  return buildWarpsReduce(b, loc, value, scratch, lane,
                          shape.groupSize / kWarpSize, combine)
      .front();
}

Value KernelBodyBuilder::rowSum(function_ref<Value(Value s)> term,
                                Value scratch) {
  // The cached chunks, in registers.
  Value zero = buildFloatConstant(b, loc, computeVectorType, 0.0);
  Value accumulator = zero;
  for (const Chunk &chunk : chunks) {
    Value value = term(chunk.s);
    if (chunk.valid)
      value = arith::SelectOp::create(b, loc, chunk.valid, value, zero);
    accumulator = arith::AddFOp::create(b, loc, accumulator, value);
  }
  Value partial =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                  accumulator, arith::FastMathFlags::reassoc);

  if (shape.needsLoop) {
    // The rest of the row: many terms per thread, so accumulate in f64.
    Type f64 = RowView::getRowSumType(b.getContext());
    VectorType wideType = computeVectorType.clone(f64);
    unsigned sweep = loopSweeps++;
    auto loop = scf::ForOp::create(
        b, loc, loopStart, numVectors, groupSizeValue,
        ValueRange{buildFloatConstant(b, loc, wideType, 0.0)},
        [&](OpBuilder &lb, Location, Value index, ValueRange iterArgs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
          Value value = castFloat(b, loc, term(loopInput(index, sweep)), f64);
          scf::YieldOp::create(
              b, loc,
              ValueRange{arith::AddFOp::create(b, loc, iterArgs[0], value)});
        });
    Value loopSum = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD, loop.getResult(0),
        arith::FastMathFlags::reassoc);
    partial = castFloat(
        b, loc,
        arith::AddFOp::create(b, loc, castFloat(b, loc, partial, f64), loopSum),
        computeType);
  }
  return groupReduce(partial, scratch);
}

Value KernelBodyBuilder::buildNormOutputContracted(Value n, Value weight,
                                                   Value bias) {
  // With cast_mode = final, y = round_T(n * w' + bias) is formed in the
  // compute type with no rounding point between the product and the sum:
  // allow the backend to fuse them into one FMA (`contract`). The other
  // cast mode rounds the product first and is left as built.
  Block *block = b.getInsertionBlock();
  Block::iterator point = b.getInsertionPoint();
  Operation *previous = point == block->begin() ? nullptr : &*std::prev(point);
  Value y = buildNormOutput(b, loc, op, n, weight, bias);
  if (op.getCastMode() != CastMode::final)
    return y;
  Operation *first = previous ? previous->getNextNode() : &block->front();
  auto contract = arith::FastMathFlagsAttr::get(b.getContext(),
                                                arith::FastMathFlags::contract);
  for (Operation *created = first;
       created && created != &*b.getInsertionPoint();
       created = created->getNextNode())
    if (auto mul = dyn_cast<arith::MulFOp>(created))
      mul.setFastmathAttr(contract);
    else if (auto add = dyn_cast<arith::AddFOp>(created))
      add.setFastmathAttr(contract);
  return y;
}

Value KernelBodyBuilder::broadcastF32(Value scalar) {
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({shape.vectorLength}, b.getF32Type()), scalar);
}

Value KernelBodyBuilder::lanesMax(Value value, int64_t lanes) {
  return buildLanesMax(b, loc, value, lanes);
}

Value KernelBodyBuilder::quantizeVector(Value y, Value inverse) {
  QuantizeOp quant = buffers.quant;
  if (quant.isBlockScaled())
    return buildBlockQuantizeVector(b, loc, y, inverse,
                                    quant.getQuantizedElementType(),
                                    buffers.useCvt, buffers.useFP4Cvt);
  return buildQuantizeVector(b, loc, y, inverse,
                             quant.getQuantizedElementType(), buffers.useCvt);
}

void KernelBodyBuilder::writeOutput(function_ref<Value(Value s)> normalize) {
  QuantizeOp quant = buffers.quant;
  auto computeY = [&](Value s, Value weight, Value bias) {
    Value n = normalize(castFloat(b, loc, s, computeType));
    return buildNormOutputContracted(n, weight, bias);
  };
  // Lanes sharing one group of a per-group quantization (0: none).
  int64_t groupLanes = 0;
  if (quant && quant.isDynamic() && quant.getGroupSize() != 0)
    groupLanes = quant.getGroupSize() / shape.vectorLength;

  if (quant && !quant.isDynamic()) {
    Value scale = memref::LoadOp::create(b, loc, buffers.scale,
                                         ValueRange{constantIndex(0)});
    quantInverse = broadcastF32(buildReciprocal(b, loc, scale));
  } else if (quant && groupLanes == 0) {
    // Per token: max |y| over the row (y computed twice: in registers for
    // the cached chunks, from the row again for the rest), then the scale.
    Value zero = buildFloatConstant(b, loc, b.getF32Type(), 0.0);
    auto magnitude = [&](Value y, Value valid) -> Value {
      Value m = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::MAXIMUMF, buildMagnitude(b, loc, y));
      return valid ? arith::SelectOp::create(b, loc, valid, m, zero).getResult()
                   : m;
    };
    Value amax = zero;
    for (const Chunk &chunk : chunks)
      amax = arith::MaximumFOp::create(
          b, loc, amax,
          magnitude(computeY(chunk.s, chunk.weight, chunk.bias), chunk.valid));
    if (shape.needsLoop) {
      unsigned sweep = loopSweeps++;
      auto loop = scf::ForOp::create(
          b, loc, loopStart, numVectors, groupSizeValue, ValueRange{amax},
          [&](OpBuilder &lb, Location, Value index, ValueRange iterArgs) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
            Value s = loopInput(index, sweep);
            Value weight =
                buffers.weight ? loadParam(buffers.weight, index) : Value();
            Value bias =
                buffers.bias ? loadParam(buffers.bias, index) : Value();
            scf::YieldOp::create(
                b, loc,
                ValueRange{arith::MaximumFOp::create(
                    b, loc, iterArgs[0],
                    magnitude(computeY(s, weight, bias), Value()))});
          });
      amax = loop.getResult(0);
    }
    amax = castFloat(
        b, loc,
        groupReduce(castFloat(b, loc, amax, computeType),
                    scratchBuffers.empty() ? Value() : scratchBuffers.back(),
                    /*maximum=*/true),
        b.getF32Type());
    Value scale = buildGroupScale(b, loc, quant, amax);
    quantInverse = broadcastF32(buildReciprocal(b, loc, scale));
    // Lane 0 of the row writes its scale.
    OpBuilder::InsertionGuard guard(b);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        constantIndex(0));
    if (rowValid)
      first = arith::AndIOp::create(b, loc, first, rowValid);
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value rowIndex = arith::DivUIOp::create(b, loc, rowBase,
                                            ShapedType::isDynamic(staticRowSize)
                                                ? rowSize
                                                : constantIndex(staticRowSize));
    memref::StoreOp::create(b, loc, scale, buffers.scales,
                            ValueRange{rowIndex});
  }

  // NVFP4's global scale, read once.
  Value globalScale;
  if (buffers.globalScale)
    globalScale = memref::LoadOp::create(b, loc, buffers.globalScale,
                                         ValueRange{constantIndex(0)});

  // Cached chunks come with their weight and bias (loaded in buildRow); the
  // loop over the rest of the row loads them with s.
  auto emit = [&](Value s, Value weight, Value bias, Value index, Value valid) {
    Value y = computeY(s, weight, bias);
    if (!quant) {
      storeRow(y, buffers.y, index, valid);
      return;
    }
    Value inverse = quantInverse;
    if (groupLanes != 0) {
      // Per group: the group's vectors are held by `groupLanes` aligned
      // consecutive lanes, which all take part (lanes past the end of the
      // row hold whole groups of their own, whose stores are skipped).
      Value amax = lanesMax(
          vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXIMUMF,
                                      buildMagnitude(b, loc, y)),
          groupLanes);
      Value scale;
      if (quant.isBlockScaled()) {
        // The block scale (stored) and the element multiplier.
        auto [value, multiplier] =
            buildBlockScale(b, loc, quant, amax, globalScale);
        scale = value;
        inverse = broadcastF32(multiplier);
      } else {
        scale = buildGroupScale(b, loc, quant, amax);
        inverse = broadcastF32(buildReciprocal(b, loc, scale));
      }
      OpBuilder::InsertionGuard guard(b);
      Value leader = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, lane, constantIndex(groupLanes)),
          constantIndex(0));
      if (valid)
        leader = arith::AndIOp::create(b, loc, leader, valid);
      if (rowValid)
        leader = arith::AndIOp::create(b, loc, leader, rowValid);
      auto ifOp = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      Value group = arith::DivUIOp::create(b, loc, elementOffset(index),
                                           constantIndex(quant.getGroupSize()));
      if (quant.getScaleLayout() == ScaleLayout::swizzled_128x4) {
        int64_t groupsPerRow = staticRowSize / quant.getGroupSize();
        Value row =
            arith::DivUIOp::create(b, loc, group, constantIndex(groupsPerRow));
        Value column =
            arith::RemUIOp::create(b, loc, group, constantIndex(groupsPerRow));
        group = buildSwizzledScaleOffset(
            b, loc, row, column, constantIndex(llvm::alignTo(groupsPerRow, 4)));
      }
      memref::StoreOp::create(b, loc, scale, buffers.scales, ValueRange{group});
    }
    storeRow(quantizeVector(y, inverse), buffers.y, index, valid);
  };
  for (const Chunk &chunk : chunks)
    emit(chunk.s, chunk.weight, chunk.bias, chunk.index, chunk.valid);
  if (!shape.needsLoop)
    return;
  unsigned sweep = loopSweeps++;
  scf::ForOp::create(
      b, loc, loopStart, numVectors, groupSizeValue, ValueRange{},
      [&](OpBuilder &lb, Location, Value index, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value s = loopInput(index, sweep);
        Value weight =
            buffers.weight ? loadParam(buffers.weight, index) : Value();
        Value bias = buffers.bias ? loadParam(buffers.bias, index) : Value();
        emit(s, weight, bias, index, Value());
        scf::YieldOp::create(b, loc);
      });
}

Value KernelBodyBuilder::partialIndex(Value part, unsigned slot) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, part, constantIndex(2)),
      constantIndex(slot));
}

void KernelBodyBuilder::storePartial(Value row, unsigned slot, Value value) {
  OpBuilder::InsertionGuard guard(b);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      constantIndex(0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  Value at = partialIndex(row, slot);
  Type partialType =
      cast<MemRefType>(buffers.partials.getType()).getElementType();
  memref::StoreOp::create(b, loc, castFloat(b, loc, value, partialType),
                          buffers.partials, ValueRange{at});
}

void KernelBodyBuilder::storeStats(Value row, Value mean, Value rstd) {
  if (!buffers.rstd)
    return;
  // NaN for a row with a NaN or an infinity, as on the CPU paths.
  if (buffers.mean && mean)
    mean = buildMeanStatistic(b, loc, mean, rstd);
  OpBuilder::InsertionGuard guard(b);
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                       constantIndex(0));
  Value statRow = row;
  if (shape.split != RowSplit::None) {
    Value parts = constantIndex(shape.parts);
    Value firstPart = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, row, parts), constantIndex(0));
    leader = arith::AndIOp::create(b, loc, leader, firstPart);
    statRow = arith::DivUIOp::create(b, loc, row, parts);
  }
  if (rowValid)
    leader = arith::AndIOp::create(b, loc, leader, rowValid);
  auto ifOp = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  if (buffers.mean && mean)
    memref::StoreOp::create(b, loc, mean, buffers.mean, ValueRange{statRow});
  memref::StoreOp::create(b, loc, rstd, buffers.rstd, ValueRange{statRow});
}

SmallVector<Value> KernelBodyBuilder::loadPartials(Value row, unsigned slot) {
  Value parts = constantIndex(shape.parts);
  Value firstPart = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, row, parts), parts);
  SmallVector<Value> values;
  for (int64_t k = 0; k < shape.parts; ++k) {
    Value part = arith::AddIOp::create(b, loc, firstPart, constantIndex(k));
    Value value = memref::LoadOp::create(b, loc, buffers.partials,
                                         ValueRange{partialIndex(part, slot)});
    values.push_back(castFloat(b, loc, value, computeType));
  }
  return values;
}

Value KernelBodyBuilder::widen(Value s) {
  return castFloat(b, loc, s, computeType);
}

Value KernelBodyBuilder::broadcastCompute(Value scalar) {
  return vector::BroadcastOp::create(b, loc, computeVectorType, scalar);
}

/// The sum of `values` from the first to the last.
static Value sumInOrder(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value total = values.front();
  for (Value value : values.drop_front())
    total = arith::AddFOp::create(b, loc, total, value);
  return total;
}

void KernelBodyBuilder::buildRow(Value row, Value laneValue) {
  lane = laneValue;
  Value n = loadCachedRow(row);
  Value count = buildIndexToFloat(b, loc, n, computeType);
  if (!op.hasReduction()) {
    buildDyTRow();
    return;
  }
  // Split kernels: the statistics are over the whole row of parts * n.
  Value fullCount = count;
  if (shape.split != RowSplit::None)
    fullCount = buildIndexToFloat(
        b, loc, arith::MulIOp::create(b, loc, n, constantIndex(shape.parts)),
        computeType);
  if (!op.subtractsMean()) {
    buildRMSNormRow(row, fullCount);
    return;
  }
  buildLayerNormRow(row, count, fullCount);
}

Value KernelBodyBuilder::loadCachedRow(Value row) {
  inputType = getInputElementType(op);
  computeType = op.getComputeElementType();
  int64_t vectorLength = shape.vectorLength;
  computeVectorType = VectorType::get({vectorLength}, computeType);
  int64_t groupSize = shape.groupSize;
  groupSizeValue = constantIndex(groupSize);

  Value n = ShapedType::isDynamic(staticRowSize) ? rowSize
                                                 : constantIndex(staticRowSize);
  int64_t staticVectors = ShapedType::isDynamic(staticRowSize)
                              ? ShapedType::kDynamic
                              : staticRowSize / vectorLength;
  numVectors =
      ShapedType::isDynamic(staticVectors)
          ? arith::DivUIOp::create(b, loc, n, constantIndex(vectorLength))
                .getResult()
          : constantIndex(staticVectors);
  rowBase = arith::MulIOp::create(b, loc, row, n);
  fullRowBase = rowBase;
  if (shape.split != RowSplit::None) {
    Value part =
        arith::RemUIOp::create(b, loc, row, constantIndex(shape.parts));
    paramBase = arith::MulIOp::create(b, loc, part, numVectors);
    fullRowBase = arith::SubIOp::create(b, loc, rowBase,
                                        arith::MulIOp::create(b, loc, part, n));
  }
  Value lastVector =
      arith::SubIOp::create(b, loc, numVectors, constantIndex(1));

  // Load every cached chunk first: independent 128-bit loads in flight.
  for (int64_t j = 0; j < shape.cachedChunks; ++j) {
    Chunk chunk;
    chunk.index =
        arith::AddIOp::create(b, loc, lane, constantIndex(j * groupSize));
    if (!ShapedType::isDynamic(staticVectors) &&
        (j + 1) * groupSize <= staticVectors) {
      chunk.loadIndex = chunk.index;
    } else {
      chunk.valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          chunk.index, numVectors);
      chunk.loadIndex = arith::MinUIOp::create(b, loc, chunk.index, lastVector);
    }
    chunk.s = loadInput(chunk.loadIndex);
    chunks.push_back(chunk);
  }
  // Weight and bias of the cached chunks are loaded right behind x, so that
  // their latency overlaps the reductions instead of following them (lanes
  // past the end read the clamped in-bounds index; their store is skipped).
  // (The partials kernel writes no y and needs neither.)
  for (Chunk &chunk : chunks) {
    if (shape.split == RowSplit::Partials)
      break;
    if (buffers.weight)
      chunk.weight = loadParam(buffers.weight, chunk.loadIndex);
    if (buffers.bias)
      chunk.bias = loadParam(buffers.bias, chunk.loadIndex);
  }
  // residual_out: written once, by the partials kernel when split.
  if (buffers.residualOut && shape.split != RowSplit::Finish)
    for (const Chunk &chunk : chunks)
      storeRow(chunk.s, buffers.residualOut, chunk.index, chunk.valid);
  loopStart = arith::AddIOp::create(
      b, loc, lane, constantIndex(shape.cachedChunks * groupSize));
  return n;
}

void KernelBodyBuilder::buildDyTRow() {
  Value alpha = loadParam(buffers.alpha, constantIndex(0));
  writeOutput([&](Value s) -> Value {
    if (!approximateTanh)
      return buildDyTCore(b, loc, op, alpha, s);
    // tanh.approx.f32 (relative error below 2^-10.9, PTX ISA): llvm.tanh
    // with `afn`, which the NVPTX backend selects to it.
    Value scaled = arith::MulFOp::create(b, loc, widen(alpha), widen(s));
    return LLVM::TanhOp::create(
        b, loc, scaled,
        LLVM::FastmathFlagsAttr::get(b.getContext(), LLVM::FastmathFlags::afn));
  });
}

void KernelBodyBuilder::buildRMSNormRow(Value row, Value fullCount) {
  Value squares;
  if (shape.split == RowSplit::Finish) {
    squares = sumInOrder(b, loc, loadPartials(row, 0));
  } else {
    squares = rowSum(
        [&](Value s) -> Value {
          Value v = widen(s);
          return arith::MulFOp::create(b, loc, v, v);
        },
        scratchBuffers.empty() ? Value() : scratchBuffers[0]);
    if (shape.split == RowSplit::Partials) {
      storePartial(row, 0, squares);
      return;
    }
  }
  Value meanSquare = arith::DivFOp::create(b, loc, squares, fullCount);
  Value rstd = buildInverseScale(b, loc, op, meanSquare);
  storeStats(row, Value(), rstd);
  Value scale = broadcastCompute(rstd);
  writeOutput([&](Value v) -> Value {
    return arith::MulFOp::create(b, loc, v, scale);
  });
}

void KernelBodyBuilder::buildLayerNormRow(Value row, Value count,
                                          Value fullCount) {
  // LayerNorm: statistics of the row shifted by its first element (exact),
  // accurate for rows with a large common offset; the second sum runs over
  // the registers again. Split rows shift every part by the row's first
  // element and combine the parts' means and squared deviations (Chan et
  // al.'s pairwise update, all parts of equal size).
  Value firstX =
      memref::LoadOp::create(b, loc, buffers.x, ValueRange{fullRowBase});
  if (buffers.residual)
    firstX = buildResidualSum(b, loc, firstX,
                              memref::LoadOp::create(b, loc, buffers.residual,
                                                     ValueRange{fullRowBase}));
  Value shift = broadcastCompute(widen(firstX));
  // (v - shift) - mean: the value centered on `mean`, a mean of v - shift.
  auto centerOn = [&](Value v, Value mean) -> Value {
    return arith::SubFOp::create(b, loc,
                                 arith::SubFOp::create(b, loc, v, shift), mean);
  };
  Value meanScalar, squares;
  if (shape.split == RowSplit::Finish) {
    SmallVector<Value> means = loadPartials(row, 0);
    meanScalar = arith::DivFOp::create(
        b, loc, sumInOrder(b, loc, means),
        buildFloatConstant(b, loc, computeType, double(shape.parts)));
    SmallVector<Value> between;
    for (Value partMean : means) {
      Value delta = arith::SubFOp::create(b, loc, partMean, meanScalar);
      between.push_back(arith::MulFOp::create(b, loc, delta, delta));
    }
    squares = arith::AddFOp::create(
        b, loc, sumInOrder(b, loc, loadPartials(row, 1)),
        arith::MulFOp::create(b, loc, count, sumInOrder(b, loc, between)));
  } else {
    Value shiftedSum = rowSum(
        [&](Value s) -> Value {
          return arith::SubFOp::create(b, loc, widen(s), shift);
        },
        scratchBuffers.empty() ? Value() : scratchBuffers[0]);
    meanScalar = arith::DivFOp::create(b, loc, shiftedSum, count);
    Value partMean = broadcastCompute(meanScalar);
    squares = rowSum(
        [&](Value s) -> Value {
          Value d = centerOn(widen(s), partMean);
          return arith::MulFOp::create(b, loc, d, d);
        },
        scratchBuffers.empty() ? Value() : scratchBuffers[1]);
    if (shape.split == RowSplit::Partials) {
      storePartial(row, 0, meanScalar);
      storePartial(row, 1, squares);
      return;
    }
  }
  Value mean = broadcastCompute(meanScalar);
  Value variance = arith::DivFOp::create(b, loc, squares, fullCount);
  Value rstd = buildInverseScale(b, loc, op, variance);
  // The row's mean: the shift plus the mean of the shifted row.
  storeStats(row, arith::AddFOp::create(b, loc, widen(firstX), meanScalar),
             rstd);
  Value scale = broadcastCompute(rstd);
  writeOutput([&](Value v) -> Value {
    return arith::MulFOp::create(b, loc, centerOn(v, mean), scale);
  });
}

void KernelBodyBuilder::zeroScalePadding(gpu::LaunchOp launch) {
  QuantizeOp quant = buffers.quant;
  if (!quant || !quant.isBlockScaled() ||
      quant.getScaleLayout() != ScaleLayout::swizzled_128x4)
    return;
  OpBuilder::InsertionGuard guard(b);
  auto mul = [&](Value lhs, Value rhs) {
    return b.createOrFold<arith::MulIOp>(loc, lhs, rhs);
  };
  auto add = [&](Value lhs, Value rhs) {
    return b.createOrFold<arith::AddIOp>(loc, lhs, rhs);
  };
  auto sub = [&](Value lhs, Value rhs) {
    return b.createOrFold<arith::SubIOp>(loc, lhs, rhs);
  };
  // The padding of the [roundup(M, 128), Kp] scale matrix: the columns
  // [K, Kp) of the M rows (A), then the whole rows [M, roundup(M, 128)) (B).
  int64_t groupsPerRow = staticRowSize / quant.getGroupSize();
  int64_t paddedGroups = llvm::alignTo(groupsPerRow, 4);
  int64_t columnPadding = paddedGroups - groupsPerRow;
  Value paddedRows =
      mul(b.createOrFold<arith::CeilDivUIOp>(loc, numRows, constantIndex(128)),
          constantIndex(128));
  Value countA = mul(numRows, constantIndex(columnPadding));
  Value countB = mul(sub(paddedRows, numRows), constantIndex(paddedGroups));
  // Every thread of the grid takes entries in turn.
  Value blockThreads = mul(launch.getBlockSizeX(), launch.getBlockSizeY());
  Value thread = add(mul(launch.getBlockIds().x, blockThreads),
                     add(mul(launch.getThreadIds().y, launch.getBlockSizeX()),
                         launch.getThreadIds().x));
  Value stride = mul(launch.getGridSizeX(), blockThreads);
  Value zero = arith::BitcastOp::create(
      b, loc, quant.getScalesElementType(),
      arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0));
  scf::ForOp::create(
      b, loc, thread, add(countA, countB), stride, ValueRange{},
      [&](OpBuilder &lb, Location, Value entry, ValueRange) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        Value rest = sub(entry, countA);
        Value row =
            add(numRows, arith::DivUIOp::create(b, loc, rest,
                                                constantIndex(paddedGroups)));
        Value column =
            arith::RemUIOp::create(b, loc, rest, constantIndex(paddedGroups));
        if (columnPadding != 0) {
          Value inA = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            entry, countA);
          row = arith::SelectOp::create(
              b, loc, inA,
              arith::DivUIOp::create(b, loc, entry,
                                     constantIndex(columnPadding)),
              row);
          column = arith::SelectOp::create(
              b, loc, inA,
              add(constantIndex(groupsPerRow),
                  arith::RemUIOp::create(b, loc, entry,
                                         constantIndex(columnPadding))),
              column);
        }
        memref::StoreOp::create(
            b, loc, zero, buffers.scales,
            ValueRange{buildSwizzledScaleOffset(b, loc, row, column,
                                                constantIndex(paddedGroups))});
        scf::YieldOp::create(b, loc);
      });
}

void KernelBodyBuilder::build(gpu::LaunchOp launch) {
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  for (BlockArgument attribution : launch.getWorkgroupAttributions())
    scratchBuffers.push_back(attribution);
  zeroScalePadding(launch);

  Value row = launch.getBlockIds().x;
  if (shape.rowsPerBlock > 1) {
    row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, row, constantIndex(shape.rowsPerBlock)),
        launch.getThreadIds().y);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, numRows);
    if (shape.groupSize >= kWarpSize) {
      // Warps past the last row have nothing to do (whole warps: no shuffle
      // or barrier is left half-executed).
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    } else {
      // Rows share warps, whose lanes must all reach the shuffles: groups
      // past the last row normalize the last row again and store nothing.
      rowValid = inRange;
      row = arith::MinUIOp::create(
          b, loc, row,
          arith::SubIOp::create(b, loc, numRows, constantIndex(1)));
    }
  }
  buildRow(row, launch.getThreadIds().x);
}
