//===- NormToGPU.cpp - Lower norm ops to GPU kernels ------------*- C++ -*-===//
//
// norm-lower-gpu, host side: every norm op becomes device buffers (copies
// in `memory=copy` mode), the choice of a kernel variant (warp or block per
// row, vector length; at run time when the row length is dynamic) and the
// gpu.launch whose body KernelBuilder.cpp emits.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "KernelBuilder.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLOWERGPUPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

namespace {

/// Builds the lowering of one norm op: buffers, copies and the launch(es).
class GPULoweringBuilder {
public:
  /// `quant`: a norm.quantize of `op`'s y that isQuantizeFusedOnGPU
  /// accepts, computed in the same kernel (or null).
  GPULoweringBuilder(RewriterBase &rewriter, NormOpInterface op,
                     const NormLowerGPUPassOptions &options,
                     QuantizeOp quant = {})
      : b(rewriter), op(op), quant(quant), loc(op.getLoc()), options(options) {}

  FailureOr<SmallVector<Value>> build();

private:
  /// Views an identity-layout buffer as `memref<?xT>`.
  Value flatten(Value buffer);
  /// A buffer holding `tensor` that the device can read: the tensor's own
  /// buffer (device memory) or a device copy of it (copy mode).
  Value deviceInput(Value tensor);
  /// Prepares a weight/bias/alpha operand.
  KernelParam prepareParam(Value tensor);
  /// The output buffer (shaped like x) for `result`, and in `direct`
  /// whether the kernel writes it in place (no copy back).
  Value outputBuffer(Value result, bool &direct);
  /// Emits the launch(es) over `buffers`, choosing the variant at run time
  /// when the row length is dynamic.
  void emitLaunches(const KernelBuffers &buffers);
  /// The layout for vector length `vectorLength`, warp or block per row.
  /// `vectorBound` (dynamic row lengths only) is the most vectors a row
  /// taking this variant has: the block and its registers are sized for it.
  KernelShape chooseShape(int64_t vectorLength, bool warpPerRow,
                          std::optional<int64_t> vectorBound = {}) const;

  RewriterBase &b;
  NormOpInterface op;
  QuantizeOp quant;
  Location loc;
  const NormLowerGPUPassOptions &options;

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

} // namespace

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

Value gpu_lowering::flattenBuffer(OpBuilder &b, Location loc, Value buffer) {
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

Value GPULoweringBuilder::flatten(Value buffer) {
  return flattenBuffer(b, loc, buffer);
}

Value gpu_lowering::allocateDevice(OpBuilder &b, Location loc, MemRefType type,
                                   ValueRange dynamicSizes) {
  auto alloc = gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                                    ValueRange{}, dynamicSizes, ValueRange{});
  alloc->setAttr(bufferization::BufferizationDialect::kManualDeallocation,
                 b.getUnitAttr());
  return alloc.getMemref();
}

/// The last user of `result` when every user is a norm, norm.quantize or
/// gradient op of the same block: those become kernels that read the
/// result's buffer in place, so the buffer is neither returned nor viewed by
/// another op and can be freed after them. Null otherwise.
static Operation *getLastNormUser(Value result) {
  Block *block = result.getParentBlock();
  Operation *last = nullptr;
  for (Operation *user : result.getUsers()) {
    if (!(isa<NormOpInterface, QuantizeOp>(user) || isGradientOp(user)) ||
        user->getBlock() != block)
      return nullptr;
    if (!last || last->isBeforeInBlock(user))
      last = user;
  }
  return last;
}

/// Parts to cut rows of `rowSize` elements into for the split kernels: the
/// most of 8, 4, 2 whose parts are whole vectors of at least
/// `minElements` elements; 1 when none is (or `minElements` is 0).
static int64_t getSplitParts(int64_t rowSize, int64_t vectorLength,
                             int64_t minElements) {
  if (minElements == 0)
    return 1;
  for (int64_t parts : {8, 4, 2})
    if (rowSize % (parts * vectorLength) == 0 && rowSize / parts >= minElements)
      return parts;
  return 1;
}

Value gpu_lowering::getDirectDestination(Value result, Operation *kernelAt,
                                         ArrayRef<Operation *> lowered,
                                         Operation *&materialize) {
  materialize = nullptr;
  if (!result.hasOneUse())
    return Value();
  auto op = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *result.getUsers().begin());
  if (!op || op.getSource() != result)
    return Value();
  MemRefType type = getBufferType(result);
  auto destType = dyn_cast<MemRefType>(op.getDest().getType());
  if (!destType || !destType.getLayout().isIdentity() ||
      destType.getMemorySpace() != nullptr ||
      destType.getElementType() != type.getElementType() ||
      destType.getRank() != type.getRank())
    return Value();
  // The kernel writes the memref where it runs: the memref must exist
  // there, the materialization must follow in the same block (not
  // conditionally), and nothing in between may touch memory but the lowered
  // ops and the materializations of their results.
  if (op->getBlock() != kernelAt->getBlock() ||
      !kernelAt->isBeforeInBlock(op) ||
      !DominanceInfo(kernelAt->getParentOp())
           .properlyDominates(op.getDest(), kernelAt))
    return Value();
  auto isLowered = [&](Operation *candidate) {
    return candidate && llvm::is_contained(lowered, candidate);
  };
  for (Operation *between = kernelAt->getNextNode(); between != op;
       between = between->getNextNode()) {
    auto other = dyn_cast<bufferization::MaterializeInDestinationOp>(between);
    if (!isLowered(between) && !isMemoryEffectFree(between) &&
        !(other && isLowered(other.getSource().getDefiningOp())))
      return Value();
  }
  materialize = op;
  return op.getDest();
}

bool gpu_lowering::copyMaterializationsFromDevice(RewriterBase &b, Value result,
                                                  Value buffer) {
  SmallVector<bufferization::MaterializeInDestinationOp> copies;
  bool onlyCopies = !result.use_empty();
  for (Operation *user : result.getUsers()) {
    auto op = dyn_cast<bufferization::MaterializeInDestinationOp>(user);
    auto destType =
        op ? dyn_cast<MemRefType>(op.getDest().getType()) : MemRefType();
    // gpu.memcpy copies contiguous memrefs (the pass rejects others).
    if (op && op.getSource() == result && destType &&
        destType.getLayout().isIdentity())
      copies.push_back(op);
    else
      onlyCopies = false;
  }
  if (copies.empty())
    return false;
  // The buffer is freed after the last op of its block that holds a copy
  // (copies may sit in nested regions, e.g. an scf.if after the kernel).
  Block *home = buffer.getParentBlock();
  Operation *last = nullptr;
  bool freeable = true;
  OpBuilder::InsertionGuard guard(b);
  for (bufferization::MaterializeInDestinationOp op : copies) {
    b.setInsertionPoint(op);
    gpu::MemcpyOp::create(b, op.getLoc(), /*asyncToken=*/Type(), ValueRange{},
                          op.getDest(), buffer);
    Operation *holder = home->findAncestorOpInBlock(*op);
    if (holder && (!last || last->isBeforeInBlock(holder)))
      last = holder;
    freeable &= holder != nullptr;
  }
  if (onlyCopies && freeable) {
    b.setInsertionPointAfter(last);
    freeDevice(b, last->getLoc(), buffer);
  }
  for (bufferization::MaterializeInDestinationOp op : copies)
    b.eraseOp(op);
  return onlyCopies;
}

void gpu_lowering::freeDevice(OpBuilder &b, Location loc, Value buffer) {
  auto dealloc = gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(),
                                        ValueRange{}, buffer);
  dealloc->setAttr(bufferization::BufferizationDialect::kManualDeallocation,
                   b.getUnitAttr());
}

MemRefType gpu_lowering::getBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

Value gpu_lowering::getNumElements(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    count = b.createOrFold<arith::MulIOp>(
        loc, count, b.createOrFold<memref::DimOp>(loc, buffer, d));
  return count;
}

Value gpu_lowering::buildDeviceInput(OpBuilder &b, Location loc, Value tensor,
                                     bool deviceMemory,
                                     SmallVectorImpl<Value> &temporaries) {
  Value host = bufferization::ToBufferOp::create(b, loc, getBufferType(tensor),
                                                 tensor, /*read_only=*/true);
  Value flat = flattenBuffer(b, loc, host);
  if (deviceMemory)
    return flat;
  Value length = getNumElements(b, loc, host);
  auto deviceType = cast<MemRefType>(flat.getType());
  Value device = allocateDevice(b, loc, deviceType, ValueRange{length});
  gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, device,
                        flat);
  temporaries.push_back(device);
  return device;
}

gpu::LaunchOp gpu_lowering::createKernelLaunch(OpBuilder &b, Location loc,
                                               Operation *op, Value grid,
                                               Value threadsX, Value threadsY,
                                               TypeRange workgroupTypes) {
  // Named so that gpu-kernel-outlining gives the kernel (and its module)
  // the name norm-annotate-kernel-args recognizes.
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto kernelSymbol =
      FlatSymbolRefAttr::get(b.getContext(), getNormKernelName(op));
  return gpu::LaunchOp::create(
      b, loc, grid, one, one, threadsX, threadsY, one,
      /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
      ValueRange{}, workgroupTypes, /*privateAttributions=*/TypeRange{},
      /*clusterSizeX=*/Value(), /*clusterSizeY=*/Value(),
      /*clusterSizeZ=*/Value(), /*module=*/kernelSymbol,
      /*function=*/kernelSymbol);
}

Value ResultBuffers::add(Value result, ArrayRef<OpFoldResult> sizes) {
  MemRefType type = getBufferType(result);
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  Value buffer, flat;
  if (deviceMemory) {
    // Straight into the memref the result is materialized into, else a
    // device buffer.
    Operation *materialize = nullptr;
    buffer = getDirectDestination(result, op, op, materialize);
    if (buffer)
      absorbed.push_back(materialize);
    else
      buffer = allocateDevice(b, loc, type, dynamicSizes);
    flat = flattenBuffer(b, loc, buffer);
  } else {
    buffer = memref::AllocOp::create(b, loc, type, dynamicSizes);
    Value host = flattenBuffer(b, loc, buffer);
    flat = allocateDevice(b, loc, cast<MemRefType>(host.getType()),
                          ValueRange{getNumElements(b, loc, buffer)});
  }
  results.push_back(result);
  shaped.push_back(buffer);
  device.push_back(flat);
  return flat;
}

SmallVector<Value> ResultBuffers::finish(ArrayRef<Value> temporaries) {
  // Copy back (memory=copy) and free the temporaries.
  if (!deviceMemory) {
    for (auto [buffer, flat] : llvm::zip_equal(shaped, device)) {
      gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                            flattenBuffer(b, loc, buffer), flat);
      freeDevice(b, loc, flat);
    }
  }
  for (Value temporary : temporaries)
    freeDevice(b, loc, temporary);
  SmallVector<Value> replacements;
  for (auto [result, buffer] : llvm::zip_equal(results, shaped)) {
    bool absorbedResult = llvm::any_of(absorbed, [&](Operation *materialize) {
      return materialize->getOperand(0) == result;
    });
    if (absorbedResult) {
      // Written in place; the result has no other use.
      replacements.push_back(tensor::EmptyOp::create(
          b, loc, memref::getMixedSizes(b, loc, buffer),
          cast<RankedTensorType>(result.getType()).getElementType()));
      continue;
    }
    // memory=device: a result nothing uses is freed after the kernels, one
    // only materialized into memrefs after copying it there; others belong
    // to the caller.
    if (deviceMemory && !copyMaterializationsFromDevice(b, result, buffer) &&
        result.use_empty())
      freeDevice(b, loc, buffer);
    replacements.push_back(bufferization::ToTensorOp::create(
        b, loc, result.getType(), buffer, /*restrict=*/true,
        /*writable=*/true));
  }
  for (Operation *materialize : absorbed)
    b.eraseOp(materialize);
  return replacements;
}

Value GPULoweringBuilder::deviceInput(Value tensor) {
  return buildDeviceInput(b, loc, tensor, options.memory == GPUMemory::Device,
                          temporaries);
}

KernelParam GPULoweringBuilder::prepareParam(Value tensor) {
  KernelParam param;
  ParameterAccess access = RowView::getParameterAccess(tensor);
  if (access == ParameterAccess::None)
    return param;
  // Scalars are read as element 0 of the flat buffer.
  param.isScalar = access == ParameterAccess::Scalar;
  param.buffer = deviceInput(tensor);
  return param;
}

Value GPULoweringBuilder::outputBuffer(Value result, bool &direct) {
  direct = false;
  MemRefType type = getBufferType(result);
  if (options.memory == GPUMemory::Device) {
    // Write straight into the memref the result is materialized into.
    Operation *materialize = nullptr;
    SmallVector<Operation *, 2> lowered{op.getOperation()};
    if (quant)
      lowered.push_back(quant);
    if (Value dest = getDirectDestination(
            result, getFusedInsertionPoint(op, quant), lowered, materialize)) {
      direct = true;
      absorbed.push_back(materialize);
      return dest;
    }
  }
  // Results have x's dims (the statistics its leading ones, the scales all
  // but the last).
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(
          getValueOrCreateConstantIndexOp(b, loc, xSizes[d]));
  if (options.memory == GPUMemory::Device) {
    direct = true;
    return allocateDevice(b, loc, type, dynamicSizes);
  }
  return memref::AllocOp::create(b, loc, type, dynamicSizes);
}

KernelShape
gpu_lowering::computeKernelShape(int64_t staticRowSize, int64_t vectorLength,
                                 bool warpPerRow,
                                 const NormLowerGPUPassOptions &options,
                                 std::optional<int64_t> vectorBound) {
  KernelShape shape;
  shape.vectorLength = vectorLength;
  int64_t staticVectors = ShapedType::isDynamic(staticRowSize)
                              ? ShapedType::kDynamic
                              : staticRowSize / vectorLength;
  // Most vectors a row of this variant can have (dynamic: unbounded).
  int64_t maxVectors = staticVectors;
  if (vectorBound)
    maxVectors = *vectorBound;
  else if (warpPerRow && ShapedType::isDynamic(maxVectors))
    maxVectors = llvm::divideCeil(options.warpMaxElements, vectorLength);
  if (warpPerRow) {
    shape.groupSize = kWarpSize;
    // Rows of fewer vectors than a warp has lanes (head-dim norms: 64 or
    // 128 elements) share a warp: a power-of-two group of lanes per row.
    if (!ShapedType::isDynamic(maxVectors) && maxVectors < kWarpSize)
      shape.groupSize = std::max<int64_t>(
          llvm::PowerOf2Ceil(static_cast<uint64_t>(maxVectors)), 1);
    shape.rowsPerBlock = kWarpsPerBlock * (kWarpSize / shape.groupSize);
  } else {
    shape.rowsPerBlock = 1;
    int64_t groupSize =
        ShapedType::isDynamic(maxVectors)
            ? kDynamicBlockSize
            : llvm::alignTo(llvm::divideCeil(maxVectors, kTargetChunks),
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

KernelShape
GPULoweringBuilder::chooseShape(int64_t vectorLength, bool warpPerRow,
                                std::optional<int64_t> vectorBound) const {
  return computeKernelShape(staticRowSize, vectorLength, warpPerRow, options,
                            vectorBound);
}

void GPULoweringBuilder::emitLaunches(const KernelBuffers &buffers) {
  Type computeType = op.getComputeElementType();
  // The hardware tanh only where its error is below the result's rounding:
  // 16-bit results computed in f32.
  bool approximateTanh = options.fastTanh && !op.hasReduction() &&
                         computeType.isF32() &&
                         inputType.getIntOrFloatBitWidth() == 16;
  int64_t maxVectorLength = getRowVectorLength(ShapedType::kDynamic, inputType);
  unsigned numScratch = !op.hasReduction() ? 0 : op.subtractsMean() ? 2 : 1;
  // A per-token quantization reduces max |y| across the block too.
  bool perTokenQuant = quant && quant.isDynamic() && quant.getGroupSize() == 0;
  if (perTokenQuant)
    ++numScratch;

  // A launch over `rows` rows of `staticSize` (or `size`) elements; the
  // split kernels pass the parts of the rows.
  auto emitKernelOver = [&](OpBuilder &kb, const KernelShape &shape,
                            const KernelBuffers &kernelBuffers, Value rows,
                            Value size, int64_t staticSize) {
    Value rowsPerBlock =
        arith::ConstantIndexOp::create(kb, loc, shape.rowsPerBlock);
    Value grid = kb.createOrFold<arith::CeilDivUIOp>(loc, rows, rowsPerBlock);
    Value groupSize = arith::ConstantIndexOp::create(kb, loc, shape.groupSize);
    SmallVector<Type> scratchTypes;
    if (shape.groupSize > kWarpSize)
      scratchTypes.assign(numScratch,
                          getWorkgroupBufferType(kb.getContext(),
                                                 shape.groupSize / kWarpSize,
                                                 computeType));
    auto launch = createKernelLaunch(kb, loc, op, grid, groupSize, rowsPerBlock,
                                     scratchTypes);
    OpBuilder::InsertionGuard guard(kb);
    KernelBodyBuilder(kb, loc, op, shape, kernelBuffers, rows, size, staticSize,
                      approximateTanh)
        .build(launch);
  };
  auto emitKernel = [&](OpBuilder &kb, const KernelShape &shape) {
    emitKernelOver(kb, shape, buffers, numRows, rowSize, staticRowSize);
  };
  // Few long rows: each row cut in `parts`, one kernel for the parts'
  // statistics and one that combines them and normalizes the parts, so that
  // parts * rows blocks share the work.
  auto emitSplitKernels = [&](OpBuilder &kb, int64_t vectorLength,
                              int64_t parts) {
    int64_t partSize = staticRowSize / parts;
    Value partRows = arith::MulIOp::create(
        kb, loc, numRows, arith::ConstantIndexOp::create(kb, loc, parts));
    Value partSizeValue = arith::ConstantIndexOp::create(kb, loc, partSize);
    KernelBuffers split = buffers;
    split.partials = allocateDevice(
        kb, loc, MemRefType::get({ShapedType::kDynamic}, computeType),
        ValueRange{arith::MulIOp::create(
            kb, loc, partRows, arith::ConstantIndexOp::create(kb, loc, 2))});
    KernelShape shape = chooseShape(vectorLength, /*warpPerRow=*/false,
                                    partSize / vectorLength);
    shape.parts = parts;
    shape.split = RowSplit::Partials;
    emitKernelOver(kb, shape, split, partRows, partSizeValue, partSize);
    shape.split = RowSplit::Finish;
    emitKernelOver(kb, shape, split, partRows, partSizeValue, partSize);
    freeDevice(kb, loc, split.partials);
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
    int64_t vectorLength = getRowVectorLength(staticRowSize, inputType);
    bool warpPerRow = staticRowSize <= options.warpMaxElements;
    // Dynamic quantization scales need whole rows (or groups) in a block.
    int64_t parts =
        warpPerRow || !op.hasReduction() || (quant && quant.isDynamic())
            ? 1
            : getSplitParts(staticRowSize, vectorLength,
                            options.splitMinElements);
    std::optional<int64_t> staticRows = getConstantIntValue(numRows);
    if (parts == 1 || (staticRows && *staticRows >= kSplitRowsBelow)) {
      emitKernel(b, chooseShape(vectorLength, warpPerRow));
      return;
    }
    if (staticRows) {
      emitSplitKernels(b, vectorLength, parts);
      return;
    }
    Value fewRows = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, numRows,
        arith::ConstantIndexOp::create(b, loc, kSplitRowsBelow));
    emitIf(
        b, fewRows,
        [&](OpBuilder &sb) { emitSplitKernels(sb, vectorLength, parts); },
        [&](OpBuilder &nb) {
          emitKernel(nb, chooseShape(vectorLength, warpPerRow));
        });
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
  // Long aligned rows: one variant per size class, so that a row fills the
  // registers of its variant (no loads of lanes past the end at N = 4096
  // bf16) and rows up to kDynamicRowClasses.back() vectors are read once.
  auto emitLongAligned = [&](OpBuilder &ab) {
    Value numVectors = arith::DivUIOp::create(
        ab, loc, rowSize,
        arith::ConstantIndexOp::create(ab, loc, maxVectorLength));
    std::function<void(OpBuilder &, size_t)> emitClass = [&](OpBuilder &cb,
                                                             size_t i) {
      if (i == std::size(kDynamicRowClasses)) {
        emitKernel(cb, chooseShape(maxVectorLength, false));
        return;
      }
      int64_t bound = kDynamicRowClasses[i];
      Value fits =
          arith::CmpIOp::create(cb, loc, arith::CmpIPredicate::ule, numVectors,
                                arith::ConstantIndexOp::create(cb, loc, bound));
      emitIf(
          cb, fits,
          [&](OpBuilder &tb) {
            emitKernel(tb, chooseShape(maxVectorLength, false, bound));
          },
          [&](OpBuilder &eb) { emitClass(eb, i + 1); });
    };
    emitClass(ab, 0);
  };
  auto emitForLayout = [&](OpBuilder &lb, bool warpPerRow) {
    emitIf(
        lb, isAligned,
        [&](OpBuilder &ab) {
          if (warpPerRow)
            emitKernel(ab, chooseShape(maxVectorLength, warpPerRow));
          else
            emitLongAligned(ab);
        },
        [&](OpBuilder &ab) { emitKernel(ab, chooseShape(1, warpPerRow)); });
  };
  emitIf(
      b, isShort, [&](OpBuilder &lb) { emitForLayout(lb, true); },
      [&](OpBuilder &lb) { emitForLayout(lb, false); });
}

FailureOr<SmallVector<Value>> GPULoweringBuilder::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(getFusedInsertionPoint(op, quant));
  RankedTensorType xType = op.getInputType();
  rank = xType.getRank();
  axis = op.getNormalizedDim();
  inputType = xType.getElementType();
  xSizes = tensor::getMixedSizes(b, loc, op.getX());

  RowView view(op);
  staticRowSize = view.getStaticRowSize();
  std::tie(numRows, rowSize) = view.buildRowCounts(b, loc, xSizes);
  numElements = b.createOrFold<arith::MulIOp>(loc, numRows, rowSize);

  KernelBuffers buffers;
  buffers.x = deviceInput(op.getX());
  if (Value residual = op.getResidual())
    buffers.residual = deviceInput(residual);
  buffers.weight = prepareParam(op.getWeight());
  buffers.bias = prepareParam(op.getBias());
  buffers.alpha = prepareParam(op.getAlpha());

  // Outputs: shaped buffers, and flat device views the kernel writes: y
  // (or q and the scales of a fused quantization) and residual_out.
  SmallVector<Value> results{quant ? quant.getQ() : op.getY()};
  if (quant && quant.isDynamic())
    results.push_back(quant.getScales());
  if (Value residualOut = op.getResidualOut())
    results.push_back(residualOut);
  // return_stats: one value per row each.
  Value meanResult = op.getReturnStatsFlag() ? op.getMean() : Value();
  Value rstdResult = op.getReturnStatsFlag() ? op.getRstd() : Value();
  if (meanResult)
    results.push_back(meanResult);
  if (rstdResult)
    results.push_back(rstdResult);
  SmallVector<Value> shapedOutputs, deviceOutputs;
  SmallVector<bool> directOutputs;
  for (Value result : results) {
    bool direct = false;
    Value shaped = outputBuffer(result, direct);
    Value flat = flatten(shaped);
    if (!direct) {
      Value count = numElements;
      if (result == meanResult || result == rstdResult)
        count = numRows;
      if (quant && result == quant.getScales())
        count = b.createOrFold<arith::MulIOp>(
            loc, numRows,
            arith::ConstantIndexOp::create(
                b, loc,
                cast<RankedTensorType>(result.getType()).getShape().back()));
      Value device = allocateDevice(b, loc, cast<MemRefType>(flat.getType()),
                                    ValueRange{count});
      temporaries.push_back(device);
      flat = device;
    }
    shapedOutputs.push_back(shaped);
    deviceOutputs.push_back(flat);
    directOutputs.push_back(direct);
  }
  unsigned next = 0;
  buffers.y = deviceOutputs[next++];
  if (quant) {
    buffers.quant = quant;
    buffers.useCvt = options.fp8Cvt;
    if (quant.isDynamic())
      buffers.scales = deviceOutputs[next++];
    else
      buffers.scale = flatten(deviceInput(quant.getScale()));
  }
  if (op.getResidualOut())
    buffers.residualOut = deviceOutputs[next++];
  if (meanResult)
    buffers.mean = deviceOutputs[next++];
  if (rstdResult)
    buffers.rstd = deviceOutputs[next++];

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
  // memory=device: a result buffer that nothing uses is freed after the
  // kernel, one that only feeds other norm ops after the last of them;
  // others belong to the caller.
  if (options.memory == GPUMemory::Device) {
    for (auto [result, shaped] : llvm::zip_equal(results, shapedOutputs)) {
      if (!shaped.getDefiningOp<gpu::AllocOp>())
        continue;
      if (copyMaterializationsFromDevice(b, result, shaped))
        continue;
      if (result.use_empty()) {
        freeDevice(b, loc, shaped);
        continue;
      }
      if (Operation *lastUser = getLastNormUser(result)) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointAfter(lastUser);
        freeDevice(b, loc, shaped);
      }
    }
  }
  for (auto [result, shaped] : llvm::zip_equal(results, shapedOutputs)) {
    bool absorbedResult = llvm::any_of(absorbed, [&](Operation *materialize) {
      return materialize->getOperand(0) == result;
    });
    if (absorbedResult) {
      // Written in place; the result has no other use.
      // Every result has x's dims but the last of the scales (static).
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<OpFoldResult> sizes(xSizes.begin(),
                                      xSizes.begin() + type.getRank());
      if (type.getRank() == rank && !type.isDynamicDim(rank - 1))
        sizes.back() = b.getIndexAttr(type.getShape().back());
      replacements.push_back(
          tensor::EmptyOp::create(b, loc, sizes, type.getElementType()));
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
                                   const NormLowerGPUPassOptions &options,
                                   QuantizeOp quant) {
  return GPULoweringBuilder(rewriter, op, options, quant).build();
}

bool mlir::norm::isQuantizeFusedOnGPU(QuantizeOp quant,
                                      const NormLowerGPUPassOptions &options) {
  auto norm = quant.getInput().getDefiningOp<NormOpInterface>();
  if (!norm || getFusableQuantizeOp(norm) != quant)
    return false;
  if (!quant.isDynamic() || quant.getGroupSize() == 0)
    return true;
  // Per group: the group's vectors must be held by a power-of-two number of
  // lanes (at most a warp) of one register pass over the row, in the layout
  // the kernel takes (no split: dynamic scales keep whole rows in a block).
  int64_t rowSize = norm.getInputType().getShape().back();
  if (ShapedType::isDynamic(rowSize))
    return false;
  int64_t vectorLength = gpu_lowering::getRowVectorLength(
      rowSize, norm.getInputType().getElementType());
  int64_t groupSize = quant.getGroupSize();
  int64_t lanes = groupSize / vectorLength;
  gpu_lowering::KernelShape shape = gpu_lowering::computeKernelShape(
      rowSize, vectorLength, rowSize <= options.warpMaxElements, options);
  return groupSize % vectorLength == 0 && llvm::isPowerOf2_64(lanes) &&
         lanes <= gpu_lowering::kWarpSize && shape.groupSize % lanes == 0 &&
         !shape.needsLoop;
}

//===----------------------------------------------------------------------===//
// Patterns and pass
//===----------------------------------------------------------------------===//

namespace {

struct NormLowerGPUPass
    : public norm::impl::NormLowerGPUPassBase<NormLowerGPUPass> {
  using NormLowerGPUPassBase::NormLowerGPUPassBase;
  void runOnOperation() override;
};

} // namespace

namespace {

/// Rewrites a norm op, with the norm.quantize of its y when it can be
/// fused, into buffers and GPU kernel launches.
struct NormToGPUPattern : public OpInterfaceRewritePattern<NormOpInterface> {
  NormToGPUPattern(MLIRContext *context, const NormLowerGPUPassOptions &options)
      : OpInterfaceRewritePattern(context), options(options) {
    setDebugName("NormOpToGPUKernel");
  }

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    QuantizeOp quant = getFusableQuantizeOp(op);
    if (quant && !isQuantizeFusedOnGPU(quant, options))
      quant = {};
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToGPUKernel(rewriter, op, options, quant);
    if (failed(replacements))
      return rewriter.notifyMatchFailure(op, "the lowering does not apply");
    replaceNormOpAndQuantize(rewriter, op, quant, *replacements);
    return success();
  }

  NormLowerGPUPassOptions options;
};

} // namespace

void mlir::norm::populateNormToGPUPatterns(
    RewritePatternSet &patterns, const NormLowerGPUPassOptions &options) {
  patterns.add<NormToGPUPattern>(patterns.getContext(), options);
  // A norm.quantize that no norm kernel takes in: its own kernel.
  patterns.add<LowerOpPattern<QuantizeOp>>(
      patterns.getContext(), "QuantizeOpToGPUKernel",
      [options](RewriterBase &rewriter, QuantizeOp op) {
        return lowerQuantizeOpToGPUKernel(rewriter, op, options);
      });
  // A gradient op: buffers and its two kernel launches.
  addLowerOpPatterns<LayerNormGradOp, RMSNormGradOp, DyTGradOp>(
      patterns, "GradOpToGPUKernels",
      [options](RewriterBase &rewriter, Operation *op) {
        return lowerGradOpToGPUKernels(rewriter, op, options);
      });
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
  if (splitMinElements < 0) {
    getOperation()->emitError("norm-lower-gpu: option 'split-min-elements' "
                              "must be >= 0, got ")
        << static_cast<int64_t>(splitMinElements);
    return signalPassFailure();
  }
  NormLowerGPUPassOptions options;
  options.memory = memory;
  options.warpMaxElements = warpMaxElements;
  options.maxBlockSize = maxBlockSize;
  options.splitMinElements = splitMinElements;
  options.fastTanh = fastTanh;
  options.fp8Cvt = fp8Cvt;

  bool blocked = false;
  getOperation()->walk([&](NormOpInterface op) {
    if (!op.getReturnStatsFlag() || op.getNormalizedDim() > 0)
      return;
    op->emitError("norm-lower-gpu: 'return_stats' over every dim of x (rank-0 "
                  "statistics) has no GPU kernel (norm-to-linalg decomposes "
                  "the op with its statistics for the host)");
    blocked = true;
  });
  getOperation()->walk([&](Operation *op) {
    if (!isGradientOp(op))
      return;
    std::string reason = getGPUGradBlocker(op);
    if (reason.empty())
      return;
    op->emitError("norm-lower-gpu: '")
        << op->getName() << "' has no GPU kernel here: " << reason
        << " (norm-to-linalg decomposes it for the host)";
    blocked = true;
  });
  // memory=device: results stay in device memory, so a materialization into
  // a memref is a device-to-device write or copy, which needs a contiguous
  // memref.
  if (options.memory == GPUMemory::Device) {
    getOperation()->walk([&](bufferization::MaterializeInDestinationOp op) {
      Operation *producer = op.getSource().getDefiningOp();
      if (!producer || !(isa<NormOpInterface, QuantizeOp>(producer) ||
                         isGradientOp(producer)))
        return;
      auto destType = dyn_cast<MemRefType>(op.getDest().getType());
      if (!destType || destType.getLayout().isIdentity())
        return;
      op.emitError("norm-lower-gpu: with memory=device, a result of '")
          << producer->getName()
          << "' can be materialized only into a memref with the identity "
             "layout (contiguous), got "
          << destType;
      blocked = true;
    });
  }
  if (blocked)
    return signalPassFailure();

  RewritePatternSet patterns(&getContext());
  populateNormToGPUPatterns(patterns, options);
  if (failed(applyNormLoweringPatterns(getOperation(), std::move(patterns),
                                       "failed to lower to a GPU kernel")))
    return signalPassFailure();
}
