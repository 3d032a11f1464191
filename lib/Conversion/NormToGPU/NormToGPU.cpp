//===- NormToGPU.cpp - Lower norm ops to GPU kernels ------------*- C++ -*-===//
//
// norm-lower-gpu: every norm op becomes buffers and a gpu.launch in which a
// warp (short rows) or a block (long rows) normalizes one row. Threads read
// the row with 128-bit vector loads and keep it in registers between the
// reductions and the write; sums are reduced with warp shuffles and, across
// the warps of a block, through workgroup memory.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/NormLoweringUtils.h"
#include "norm/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLOWERGPUPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

static constexpr int64_t kWarpSize = 32;
/// Bytes per global access: 128-bit loads and stores.
static constexpr int64_t kAccessBytes = 16;
/// Vectors per thread the block size is chosen for: four independent 128-bit
/// loads in flight per thread hide DRAM latency without costing occupancy.
static constexpr int64_t kTargetChunks = 4;
/// Most vectors per thread kept in registers (32 registers of row data);
/// longer rows are finished by loops that read the rest again.
static constexpr int64_t kMaxCachedChunks = 8;
/// Warps per block when each warp normalizes its own row.
static constexpr int64_t kWarpsPerBlock = 4;
/// Threads per block of the block-per-row kernel when the row length is only
/// known at run time.
static constexpr int64_t kDynamicBlockSize = 256;

namespace {

/// The thread layout of one kernel variant.
struct KernelShape {
  /// Elements per vector access (divides the row length).
  int64_t vectorLength = 1;
  /// Threads that normalize one row: a warp, or a whole block.
  int64_t groupSize = kWarpSize;
  /// Rows per block (one per warp in the warp-per-row layout).
  int64_t rowsPerBlock = 1;
  /// Vectors per thread loaded up front and kept in registers.
  int64_t cachedChunks = 1;
  /// Whether rows may be longer than the cached chunks cover; the rest of
  /// the row is then swept by loops that read it from memory in each pass.
  bool needsLoop = false;
};

/// A weight, bias or alpha operand as a kernel reads it.
struct KernelParam {
  /// A device-visible flat buffer: N elements, or one for a scalar.
  Value buffer;
  bool isScalar = false;

  explicit operator bool() const { return static_cast<bool>(buffer); }
};

/// The device-visible buffers a kernel reads and writes; rows are flat
/// `memref<?xT>` of M * N elements.
struct KernelBuffers {
  Value x, residual, y, residualOut;
  KernelParam weight, bias, alpha;
};

/// Builds the lowering of one norm op: buffers, copies and the launch(es).
class GPULoweringBuilder {
public:
  GPULoweringBuilder(RewriterBase &rewriter, NormOpInterface op,
                     const NormGPULoweringOptions &options)
      : b(rewriter), op(op), loc(op.getLoc()), options(options) {}

  FailureOr<SmallVector<Value>> build();

private:
  /// Views an identity-layout buffer as `memref<?xT>`.
  Value flatten(Value buffer);
  /// A buffer holding `tensor` that the device can read: the tensor's own
  /// buffer (device memory) or a device copy of it (copy mode).
  Value deviceInput(Value tensor);
  /// Prepares a weight/bias/alpha operand.
  KernelParam prepareParam(Value tensor, bool isAlpha);
  /// The output buffer (shaped like x) for `result`, and in `direct`
  /// whether the kernel writes it in place (no copy back).
  Value outputBuffer(Value result, bool &direct);
  /// Emits the launch(es) over `buffers`, choosing the variant at run time
  /// when the row length is dynamic.
  void emitLaunches(const KernelBuffers &buffers);
  /// The layout for vector length `vectorLength`, warp or block per row.
  KernelShape chooseShape(int64_t vectorLength, bool warpPerRow) const;

  RewriterBase &b;
  NormOpInterface op;
  Location loc;
  const NormGPULoweringOptions &options;

  int64_t rank = 0, axis = 0;
  Type inputType;
  SmallVector<OpFoldResult> xSizes;
  Value numRows, rowSize, numElements;
  int64_t staticRowSize = ShapedType::kDynamic;
  /// Device buffers allocated by this lowering and freed after the kernel.
  SmallVector<Value> temporaries;
  /// materialize_in_destination ops made redundant by direct writes.
  SmallVector<Operation *> absorbed;
};

/// Emits the body of one kernel variant.
class KernelBodyBuilder {
public:
  KernelBodyBuilder(OpBuilder &b, Location loc, NormOpInterface op,
                    const KernelShape &shape, const KernelBuffers &buffers,
                    Value numRows, Value rowSize, int64_t staticRowSize)
      : b(b), loc(loc), op(op), shape(shape), buffers(buffers),
        numRows(numRows), rowSize(rowSize), staticRowSize(staticRowSize) {}

  /// Fills `launch`'s body.
  void build(gpu::LaunchOp launch);

private:
  /// One vector of a thread's share of the row kept in registers.
  struct Chunk {
    /// Vector index in the row (may be past the end when `valid` is set).
    Value index;
    /// Clamped in-bounds vector index used for loads.
    Value loadIndex;
    /// i1 "index is inside the row", or null when it always is.
    Value valid;
    /// s = x (+ residual) in the input type.
    Value s;
  };

  /// Normalizes row `row`; `lane` is the thread's index among the group.
  void buildRow(Value row, Value lane);

  Value constantIndex(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  /// Element offset of vector `index` of the current row.
  Value elementOffset(Value index);
  /// Loads vector `index` of the current row of `buffer`.
  Value loadRow(Value buffer, Value index);
  /// Stores `value` as vector `index` of the current row of `buffer`, only
  /// where `valid` (when given) holds.
  void storeRow(Value value, Value buffer, Value index, Value valid);
  /// s = x (+ residual) at vector `index`.
  Value loadInput(Value index);
  /// Reads a parameter's vector at `index` (broadcasting a scalar).
  Value loadParam(const KernelParam &param, Value index);
  /// Reads s at `index` in sweep `sweep` of the loop over the uncached part
  /// of the row: the first sweep computes it (and writes residual_out),
  /// later sweeps read it back.
  Value loopInput(Value index, unsigned sweep);

  /// Sums `term(s)` over the row: cached chunks in registers, the rest by a
  /// loop accumulating in f64, then across the group. `scratch` is the
  /// workgroup buffer of the block-wide step.
  Value rowSum(function_ref<Value(Value s)> term, Value scratch);
  /// Sums `value` over the group of threads of a row; all of them get the
  /// same result.
  Value groupReduce(Value value, Value scratch);
  /// Applies `normalize` and the epilogue to every element of the row and
  /// writes y.
  void writeOutput(function_ref<Value(Value s)> normalize);

  OpBuilder &b;
  Location loc;
  NormOpInterface op;
  const KernelShape &shape;
  const KernelBuffers &buffers;
  Value numRows, rowSize;
  int64_t staticRowSize;

  SmallVector<Value> scratchBuffers;
  Type inputType, computeType;
  VectorType computeVectorType;
  Value lane, rowBase, numVectors, loopStart, groupSizeValue;
  SmallVector<Chunk> chunks;
  unsigned loopSweeps = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Kernel body
//===----------------------------------------------------------------------===//

Value KernelBodyBuilder::elementOffset(Value index) {
  Value scaled =
      arith::MulIOp::create(b, loc, index, constantIndex(shape.vectorLength));
  return arith::AddIOp::create(b, loc, rowBase, scaled);
}

/// The alignment in bytes of a vector access of `vectorLength` elements of
/// `elementType` at a multiple of its own size (capped at 16 bytes).
static llvm::MaybeAlign accessAlignment(Type elementType,
                                        int64_t vectorLength) {
  int64_t bytes = vectorLength * elementType.getIntOrFloatBitWidth() / 8;
  return llvm::MaybeAlign(
      std::min<int64_t>(std::max<int64_t>(bytes, 1), kAccessBytes));
}

Value KernelBodyBuilder::loadRow(Value buffer, Value index) {
  Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
  auto vectorType = VectorType::get({shape.vectorLength}, elementType);
  return vector::LoadOp::create(
      b, loc, vectorType, buffer, ValueRange{elementOffset(index)},
      /*nontemporal=*/false, accessAlignment(elementType, shape.vectorLength));
}

void KernelBodyBuilder::storeRow(Value value, Value buffer, Value index,
                                 Value valid) {
  OpBuilder::InsertionGuard guard(b);
  if (valid) {
    auto ifOp = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
  vector::StoreOp::create(
      b, loc, value, buffer, ValueRange{elementOffset(index)},
      /*nontemporal=*/false, accessAlignment(elementType, shape.vectorLength));
}

Value KernelBodyBuilder::loadInput(Value index) {
  Value s = loadRow(buffers.x, index);
  if (buffers.residual)
    s = buildResidualSum(b, loc, s, loadRow(buffers.residual, index));
  return s;
}

Value KernelBodyBuilder::loadParam(const KernelParam &param, Value index) {
  if (!param.isScalar) {
    Type elementType =
        cast<MemRefType>(param.buffer.getType()).getElementType();
    auto vectorType = VectorType::get({shape.vectorLength}, elementType);
    Value offset =
        arith::MulIOp::create(b, loc, index, constantIndex(shape.vectorLength));
    return vector::LoadOp::create(
        b, loc, vectorType, param.buffer, ValueRange{offset},
        /*nontemporal=*/false,
        accessAlignment(elementType, shape.vectorLength));
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

Value KernelBodyBuilder::groupReduce(Value value, Value scratch) {
  for (int32_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, value, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::AddFOp::create(b, loc, value, other);
  }
  if (shape.groupSize == kWarpSize)
    return value;

  // Across warps: lane 0 of every warp publishes its warp's sum, and after
  // one barrier every thread adds the partial sums in the same order, so all
  // threads agree bit for bit.
  Value warpSize = constantIndex(kWarpSize);
  Value warp = arith::DivUIOp::create(b, loc, lane, warpSize);
  Value warpLane = arith::RemUIOp::create(b, loc, lane, warpSize);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        warpLane, constantIndex(0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, value, scratch, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, loc);
  Value total;
  for (int64_t w = 0; w < shape.groupSize / kWarpSize; ++w) {
    Value partial =
        memref::LoadOp::create(b, loc, scratch, ValueRange{constantIndex(w)});
    total = total ? arith::AddFOp::create(b, loc, total, partial).getResult()
                  : partial;
  }
  return total;
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
    Type f64 = b.getF64Type();
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

void KernelBodyBuilder::writeOutput(function_ref<Value(Value s)> normalize) {
  // Weight and bias are read at `paramIndex`: the clamped in-bounds index
  // for lanes past the end of the row, whose store is skipped.
  auto emit = [&](Value s, Value index, Value paramIndex, Value valid) {
    Value n = normalize(castFloat(b, loc, s, computeType));
    Value weight =
        buffers.weight ? loadParam(buffers.weight, paramIndex) : Value();
    Value bias = buffers.bias ? loadParam(buffers.bias, paramIndex) : Value();
    Value y = buildNormOutput(b, loc, op, n, weight, bias);
    storeRow(y, buffers.y, index, valid);
  };
  for (const Chunk &chunk : chunks)
    emit(chunk.s, chunk.index, chunk.loadIndex, chunk.valid);
  if (!shape.needsLoop)
    return;
  unsigned sweep = loopSweeps++;
  scf::ForOp::create(
      b, loc, loopStart, numVectors, groupSizeValue, ValueRange{},
      [&](OpBuilder &lb, Location, Value index, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(lb.getInsertionBlock(), lb.getInsertionPoint());
        emit(loopInput(index, sweep), index, index, Value());
        scf::YieldOp::create(b, loc);
      });
}

void KernelBodyBuilder::buildRow(Value row, Value laneValue) {
  lane = laneValue;
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
  if (buffers.residualOut)
    for (const Chunk &chunk : chunks)
      storeRow(chunk.s, buffers.residualOut, chunk.index, chunk.valid);
  loopStart = arith::AddIOp::create(
      b, loc, lane, constantIndex(shape.cachedChunks * groupSize));

  auto widen = [&](Value s) { return castFloat(b, loc, s, computeType); };
  Value count = buildIndexToFloat(b, loc, n, computeType);
  auto broadcast = [&](Value scalar) -> Value {
    return vector::BroadcastOp::create(b, loc, computeVectorType, scalar);
  };

  if (!op.hasReduction()) {
    // DyT: tanh(alpha * s) * weight + bias, no statistics.
    Value alpha = loadParam(buffers.alpha, constantIndex(0));
    writeOutput(
        [&](Value s) -> Value { return buildDyTCore(b, loc, op, alpha, s); });
    return;
  }

  if (!op.subtractsMean()) {
    // RMSNorm: one sum of squares.
    Value squares = rowSum(
        [&](Value s) -> Value {
          Value v = widen(s);
          return arith::MulFOp::create(b, loc, v, v);
        },
        scratchBuffers.empty() ? Value() : scratchBuffers[0]);
    Value meanSquare = arith::DivFOp::create(b, loc, squares, count);
    Value scale = broadcast(buildInverseScale(b, loc, op, meanSquare));
    writeOutput([&](Value v) -> Value {
      return arith::MulFOp::create(b, loc, v, scale);
    });
    return;
  }

  // LayerNorm: statistics of the row shifted by its first element (exact),
  // accurate for rows with a large common offset; the second sum runs over
  // the registers again.
  Value firstX = memref::LoadOp::create(b, loc, buffers.x, ValueRange{rowBase});
  if (buffers.residual)
    firstX = buildResidualSum(
        b, loc, firstX,
        memref::LoadOp::create(b, loc, buffers.residual, ValueRange{rowBase}));
  Value shift = broadcast(widen(firstX));
  Value shiftedSum = rowSum(
      [&](Value s) -> Value {
        return arith::SubFOp::create(b, loc, widen(s), shift);
      },
      scratchBuffers.empty() ? Value() : scratchBuffers[0]);
  Value mean = broadcast(arith::DivFOp::create(b, loc, shiftedSum, count));
  auto centered = [&](Value v) -> Value {
    return arith::SubFOp::create(b, loc,
                                 arith::SubFOp::create(b, loc, v, shift), mean);
  };
  Value squares = rowSum(
      [&](Value s) -> Value {
        Value d = centered(widen(s));
        return arith::MulFOp::create(b, loc, d, d);
      },
      scratchBuffers.empty() ? Value() : scratchBuffers[1]);
  Value variance = arith::DivFOp::create(b, loc, squares, count);
  Value scale = broadcast(buildInverseScale(b, loc, op, variance));
  writeOutput([&](Value v) -> Value {
    return arith::MulFOp::create(b, loc, centered(v), scale);
  });
}

void KernelBodyBuilder::build(gpu::LaunchOp launch) {
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(b, loc);
  b.setInsertionPoint(terminator);
  for (BlockArgument attribution : launch.getWorkgroupAttributions())
    scratchBuffers.push_back(attribution);

  Value row = launch.getBlockIds().x;
  if (shape.rowsPerBlock > 1) {
    row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, row, constantIndex(shape.rowsPerBlock)),
        launch.getThreadIds().y);
    // Warps past the last row have nothing to do (whole warps: no shuffle
    // or barrier is left half-executed).
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, numRows);
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  buildRow(row, launch.getThreadIds().x);
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

Value GPULoweringBuilder::flatten(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value flat = buffer;
  if (type.getRank() == 0) {
    flat = memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1}, type.getElementType()), buffer,
        ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  } else if (type.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    // The collapsed size is dynamic exactly when a dim is: upstream's type
    // inference makes it a static 0 when a static dim is 0, which the
    // verifier then rejects for a group that also holds a dynamic dim.
    int64_t size = 1;
    for (int64_t dim : type.getShape())
      size = ShapedType::isDynamic(dim) || ShapedType::isDynamic(size)
                 ? ShapedType::kDynamic
                 : size * dim;
    auto collapsedType = memref::CollapseShapeOp::computeCollapsedType(
        type, ArrayRef<ReassociationIndices>{all});
    if (collapsedType.getDimSize(0) != size)
      collapsedType = MemRefType::get({size}, type.getElementType(),
                                      collapsedType.getLayout());
    flat = memref::CollapseShapeOp::create(b, loc, collapsedType, buffer,
                                           ArrayRef<ReassociationIndices>{all});
  }
  auto dynamicType =
      MemRefType::get({ShapedType::kDynamic}, type.getElementType());
  if (flat.getType() != dynamicType)
    flat = memref::CastOp::create(b, loc, dynamicType, flat);
  return flat;
}

/// Allocates a device buffer of `type`. The buffer is freed explicitly (or
/// owned by the caller), so it is marked for manual deallocation: the
/// ownership-based deallocation pass leaves it alone.
static Value allocateDevice(OpBuilder &b, Location loc, MemRefType type,
                            ValueRange dynamicSizes) {
  auto alloc = gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                                    ValueRange{}, dynamicSizes, ValueRange{});
  alloc->setAttr(bufferization::BufferizationDialect::kManualDeallocation,
                 b.getUnitAttr());
  return alloc.getMemref();
}

/// Frees a device buffer from allocateDevice.
static void freeDevice(OpBuilder &b, Location loc, Value buffer) {
  auto dealloc = gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(),
                                        ValueRange{}, buffer);
  dealloc->setAttr(bufferization::BufferizationDialect::kManualDeallocation,
                   b.getUnitAttr());
}

/// The memref type with `tensor`'s shape and element type, identity layout.
static MemRefType getBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// Number of elements of the shaped value `buffer` as an index.
static Value getNumElements(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    count = b.createOrFold<arith::MulIOp>(
        loc, count, b.createOrFold<memref::DimOp>(loc, buffer, d));
  return count;
}

Value GPULoweringBuilder::deviceInput(Value tensor) {
  Value host = bufferization::ToBufferOp::create(b, loc, getBufferType(tensor),
                                                 tensor, /*read_only=*/true);
  Value flat = flatten(host);
  if (options.memory == GPUMemory::Device)
    return flat;
  Value length = getNumElements(b, loc, host);
  auto deviceType = cast<MemRefType>(flat.getType());
  Value device = allocateDevice(b, loc, deviceType, ValueRange{length});
  gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, device,
                        flat);
  temporaries.push_back(device);
  return device;
}

KernelParam GPULoweringBuilder::prepareParam(Value tensor, bool isAlpha) {
  KernelParam param;
  if (!tensor)
    return param;
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t normalizedRank = rank - axis;
  // A scalar: alpha, a rank-0 weight, or a one-element weight of a
  // different rank than the normalized dims (ScaleNorm's gain).
  param.isScalar = isAlpha || type.getRank() == 0 ||
                   (type.getShape() == ArrayRef<int64_t>{1} &&
                    (normalizedRank != 1 || staticRowSize != 1)) ||
                   type.getRank() != normalizedRank;
  // Scalars are read as element 0 of the flat buffer.
  param.buffer = deviceInput(tensor);
  return param;
}

Value GPULoweringBuilder::outputBuffer(Value result, bool &direct) {
  direct = false;
  MemRefType type = getBufferType(result);
  if (options.memory == GPUMemory::Device && result.hasOneUse()) {
    // Write straight into the memref the result is materialized into.
    auto materialize = dyn_cast<bufferization::MaterializeInDestinationOp>(
        *result.getUsers().begin());
    if (materialize && materialize.getSource() == result) {
      auto destType = dyn_cast<MemRefType>(materialize.getDest().getType());
      if (destType && destType.getLayout().isIdentity() &&
          destType.getMemorySpace() == nullptr &&
          destType.getElementType() == type.getElementType() &&
          destType.getRank() == type.getRank()) {
        direct = true;
        absorbed.push_back(materialize);
        return materialize.getDest();
      }
    }
  }
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(
          getValueOrCreateConstantIndexOp(b, loc, xSizes[d]));
  if (options.memory == GPUMemory::Device) {
    direct = true;
    return allocateDevice(b, loc, type, dynamicSizes);
  }
  return memref::AllocOp::create(b, loc, type, dynamicSizes);
}

KernelShape GPULoweringBuilder::chooseShape(int64_t vectorLength,
                                            bool warpPerRow) const {
  KernelShape shape;
  shape.vectorLength = vectorLength;
  int64_t staticVectors = ShapedType::isDynamic(staticRowSize)
                              ? ShapedType::kDynamic
                              : staticRowSize / vectorLength;
  // Most vectors a row of this variant can have (dynamic: unbounded).
  int64_t maxVectors = staticVectors;
  if (warpPerRow && ShapedType::isDynamic(maxVectors))
    maxVectors = llvm::divideCeil(options.warpMaxElements, vectorLength);

  if (warpPerRow) {
    shape.groupSize = kWarpSize;
    shape.rowsPerBlock = kWarpsPerBlock;
  } else {
    shape.rowsPerBlock = 1;
    int64_t groupSize =
        ShapedType::isDynamic(staticVectors)
            ? kDynamicBlockSize
            : llvm::alignTo(llvm::divideCeil(staticVectors, kTargetChunks),
                            kWarpSize);
    shape.groupSize = std::min(std::max<int64_t>(groupSize, 2 * kWarpSize),
                               options.maxBlockSize);
  }
  // A full 1024-thread block can afford 64 registers per thread: half the
  // row data then.
  int64_t maxChunks = shape.groupSize * shape.rowsPerBlock > 512
                          ? kMaxCachedChunks / 2
                          : kMaxCachedChunks;
  if (ShapedType::isDynamic(maxVectors)) {
    shape.cachedChunks = warpPerRow ? maxChunks : kTargetChunks;
    shape.needsLoop = true;
  } else {
    int64_t chunks = llvm::divideCeil(maxVectors, shape.groupSize);
    shape.cachedChunks = std::clamp<int64_t>(chunks, 1, maxChunks);
    shape.needsLoop = shape.cachedChunks * shape.groupSize < maxVectors;
  }
  return shape;
}

void GPULoweringBuilder::emitLaunches(const KernelBuffers &buffers) {
  Type computeType = op.getComputeElementType();
  int64_t maxVectorLength = std::max<int64_t>(
      1, kAccessBytes * 8 / inputType.getIntOrFloatBitWidth());
  unsigned numScratch = !op.hasReduction() ? 0 : op.subtractsMean() ? 2 : 1;

  auto emitKernel = [&](OpBuilder &kb, const KernelShape &shape) {
    Value one = arith::ConstantIndexOp::create(kb, loc, 1);
    Value rowsPerBlock =
        arith::ConstantIndexOp::create(kb, loc, shape.rowsPerBlock);
    Value grid =
        kb.createOrFold<arith::CeilDivUIOp>(loc, numRows, rowsPerBlock);
    Value groupSize = arith::ConstantIndexOp::create(kb, loc, shape.groupSize);
    SmallVector<Type> scratchTypes;
    if (shape.groupSize > kWarpSize) {
      auto workgroup = gpu::AddressSpaceAttr::get(
          kb.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
      scratchTypes.assign(numScratch,
                          MemRefType::get({shape.groupSize / kWarpSize},
                                          computeType, AffineMap(), workgroup));
    }
    auto launch = gpu::LaunchOp::create(
        kb, loc, grid, one, one, groupSize, rowsPerBlock, one,
        /*dynamicSharedMemorySize=*/Value(),
        /*asyncTokenType=*/Type(), ValueRange{}, scratchTypes);
    OpBuilder::InsertionGuard guard(kb);
    KernelBodyBuilder(kb, loc, op, shape, buffers, numRows, rowSize,
                      staticRowSize)
        .build(launch);
  };

  /// Emits `then` or `otherwise` under `condition` (no results).
  auto emitIf = [&](OpBuilder &ib, Value condition,
                    function_ref<void(OpBuilder &)> then,
                    function_ref<void(OpBuilder &)> otherwise) {
    auto ifOp = scf::IfOp::create(ib, loc, condition,
                                  /*withElseRegion=*/true);
    OpBuilder thenBuilder(ifOp.thenBlock()->getTerminator());
    then(thenBuilder);
    OpBuilder elseBuilder(ifOp.elseBlock()->getTerminator());
    otherwise(elseBuilder);
  };

  // Nothing to launch for empty inputs (a grid of zero blocks is an error).
  OpBuilder::InsertionGuard guard(b);
  std::optional<int64_t> staticElements = getConstantIntValue(numElements);
  if (!staticElements || *staticElements == 0) {
    if (staticElements)
      return;
    Value nonEmpty =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, numElements,
                              arith::ConstantIndexOp::create(b, loc, 0));
    auto ifOp = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }

  if (!ShapedType::isDynamic(staticRowSize)) {
    // The widest access that divides the row keeps every row aligned.
    int64_t vectorLength = maxVectorLength;
    while (staticRowSize % vectorLength != 0)
      vectorLength /= 2;
    emitKernel(
        b, chooseShape(vectorLength, staticRowSize <= options.warpMaxElements));
    return;
  }

  // Row length known at run time: pick the layout and the vector length
  // (full width when it divides the row, else scalar accesses).
  Value isShort = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule, rowSize,
      arith::ConstantIndexOp::create(b, loc, options.warpMaxElements));
  Value isAligned = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(
          b, loc, rowSize,
          arith::ConstantIndexOp::create(b, loc, maxVectorLength)),
      arith::ConstantIndexOp::create(b, loc, 0));
  auto emitForLayout = [&](OpBuilder &lb, bool warpPerRow) {
    emitIf(
        lb, isAligned,
        [&](OpBuilder &ab) {
          emitKernel(ab, chooseShape(maxVectorLength, warpPerRow));
        },
        [&](OpBuilder &ab) { emitKernel(ab, chooseShape(1, warpPerRow)); });
  };
  emitIf(
      b, isShort, [&](OpBuilder &lb) { emitForLayout(lb, true); },
      [&](OpBuilder &lb) { emitForLayout(lb, false); });
}

FailureOr<SmallVector<Value>> GPULoweringBuilder::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  RankedTensorType xType = op.getInputType();
  rank = xType.getRank();
  axis = op.getNormalizedDim();
  inputType = xType.getElementType();
  xSizes = tensor::getMixedSizes(b, loc, op.getX());

  staticRowSize = 1;
  for (int64_t d = axis; d < rank; ++d)
    staticRowSize = ShapedType::isDynamic(xType.getDimSize(d)) ||
                            ShapedType::isDynamic(staticRowSize)
                        ? ShapedType::kDynamic
                        : staticRowSize * xType.getDimSize(d);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  numRows = one;
  rowSize = one;
  for (int64_t d = 0; d < rank; ++d) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, xSizes[d]);
    Value &product = d < axis ? numRows : rowSize;
    product = b.createOrFold<arith::MulIOp>(loc, product, size);
  }
  numElements = b.createOrFold<arith::MulIOp>(loc, numRows, rowSize);

  KernelBuffers buffers;
  buffers.x = deviceInput(op.getX());
  if (Value residual = op.getResidual())
    buffers.residual = deviceInput(residual);
  buffers.weight = prepareParam(op.getWeight(), /*isAlpha=*/false);
  buffers.bias = prepareParam(op.getBias(), /*isAlpha=*/false);
  buffers.alpha = prepareParam(op.getAlpha(), /*isAlpha=*/true);

  // Outputs: shaped buffers, and flat device views the kernel writes.
  SmallVector<Value> results{op.getY()};
  if (Value residualOut = op.getResidualOut())
    results.push_back(residualOut);
  SmallVector<Value> shapedOutputs, deviceOutputs;
  SmallVector<bool> directOutputs;
  for (Value result : results) {
    bool direct = false;
    Value shaped = outputBuffer(result, direct);
    Value flat = flatten(shaped);
    if (!direct) {
      Value device = allocateDevice(b, loc, cast<MemRefType>(flat.getType()),
                                    ValueRange{numElements});
      temporaries.push_back(device);
      flat = device;
    }
    shapedOutputs.push_back(shaped);
    deviceOutputs.push_back(flat);
    directOutputs.push_back(direct);
  }
  buffers.y = deviceOutputs[0];
  if (deviceOutputs.size() > 1)
    buffers.residualOut = deviceOutputs[1];

  emitLaunches(buffers);

  // Copy results back (copy mode) and free the device temporaries.
  SmallVector<Value> replacements;
  for (auto [result, shaped, device, direct] :
       llvm::zip_equal(results, shapedOutputs, deviceOutputs, directOutputs)) {
    if (!direct)
      gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                            flatten(shaped), device);
  }
  for (Value temporary : temporaries)
    freeDevice(b, loc, temporary);
  for (auto [result, shaped] : llvm::zip_equal(results, shapedOutputs)) {
    bool absorbedResult = llvm::any_of(absorbed, [&](Operation *materialize) {
      return materialize->getOperand(0) == result;
    });
    if (absorbedResult) {
      // Written in place; the result has no other use.
      replacements.push_back(
          tensor::EmptyOp::create(b, loc, xSizes, inputType));
      continue;
    }
    replacements.push_back(bufferization::ToTensorOp::create(
        b, loc, result.getType(), shaped, /*restrict=*/true,
        /*writable=*/true));
  }
  for (Operation *materialize : absorbed)
    b.eraseOp(materialize);
  return replacements;
}

FailureOr<SmallVector<Value>>
mlir::norm::lowerNormOpToGPUKernel(RewriterBase &rewriter, NormOpInterface op,
                                   const NormGPULoweringOptions &options) {
  return GPULoweringBuilder(rewriter, op, options).build();
}

//===----------------------------------------------------------------------===//
// Patterns and pass
//===----------------------------------------------------------------------===//

namespace {

/// Memory effects of `gpu.launch_func`, which upstream does not declare: the
/// kernel reads and writes the buffers passed to it, and (once they are
/// lowered to pointers) any memory.
struct LaunchFuncMemoryEffectsModel
    : public MemoryEffectOpInterface::ExternalModel<
          LaunchFuncMemoryEffectsModel, gpu::LaunchFuncOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
    }
  }
};

/// Rewrites a norm op into buffers and a GPU kernel launch.
struct NormOpToGPUKernel : public OpInterfaceRewritePattern<NormOpInterface> {
  NormOpToGPUKernel(MLIRContext *context, NormGPULoweringOptions options)
      : OpInterfaceRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToGPUKernel(rewriter, op, options);
    if (failed(replacements))
      return failure();
    rewriter.replaceOp(op, *replacements);
    return success();
  }

  NormGPULoweringOptions options;
};

struct NormLowerGPUPass
    : public norm::impl::NormLowerGPUPassBase<NormLowerGPUPass> {
  using NormLowerGPUPassBase::NormLowerGPUPassBase;
  void getDependentDialects(DialectRegistry &registry) const override {
    NormLowerGPUPassBase::getDependentDialects(registry);
    // Kernels launched from host code must survive buffer deallocation
    // once outlined.
    registerGPULaunchFuncMemoryEffectsModel(registry);
  }
  void runOnOperation() override;
};

} // namespace

void mlir::norm::registerGPULaunchFuncMemoryEffectsModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffectsModel>(*context);
  });
}

void mlir::norm::populateNormToGPUPatterns(
    RewritePatternSet &patterns, const NormGPULoweringOptions &options) {
  patterns.add<NormOpToGPUKernel>(patterns.getContext(), options);
}

void NormLowerGPUPass::runOnOperation() {
  if (maxBlockSize < kWarpSize || maxBlockSize > 1024 ||
      maxBlockSize % kWarpSize != 0) {
    getOperation()->emitError("norm-lower-gpu: option 'max-block-size' must "
                              "be a multiple of 32 in [32, 1024], got ")
        << static_cast<int64_t>(maxBlockSize);
    return signalPassFailure();
  }
  if (warpMaxElements < 0) {
    getOperation()->emitError("norm-lower-gpu: option 'warp-max-elements' "
                              "must be >= 0, got ")
        << static_cast<int64_t>(warpMaxElements);
    return signalPassFailure();
  }
  NormGPULoweringOptions options;
  options.memory = memory;
  options.warpMaxElements = warpMaxElements;
  options.maxBlockSize = maxBlockSize;

  IRRewriter rewriter(&getContext());
  SmallVector<NormOpInterface> ops;
  getOperation()->walk([&](NormOpInterface op) { ops.push_back(op); });
  for (NormOpInterface op : ops) {
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToGPUKernel(rewriter, op, options);
    if (failed(replacements)) {
      op->emitError("failed to lower to a GPU kernel");
      return signalPassFailure();
    }
    rewriter.replaceOp(op, *replacements);
  }
}
