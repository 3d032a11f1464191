//===- NormToGPU.cpp - Lower norm ops to GPU kernels ------------*- C++ -*-===//
//
// norm-lower-gpu's lowering of the norm ops: every norm op becomes device
// buffers (copies in `memory=copy` mode), the choice of a kernel variant
// (warp or block per row, vector length; at run time when the row length is
// dynamic) and the gpu.launch whose body KernelBuilder.cpp emits. The host
// helpers every GPU lowering shares are in HostBuffers.cpp, the patterns
// and the pass in NormToGPUPass.cpp.
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
  /// Prepares a weight/bias/alpha operand.
  KernelParam prepareParam(Value tensor);
  /// The output buffer (shaped like x) the kernel writes `result` into:
  /// memory=device: the memref it is materialized into or a device buffer;
  /// memory=copy: a host buffer (norm-gpu-host-copies places it).
  Value outputBuffer(Value result);
  /// The sizes of `result`: x's dims (the statistics its leading ones, the
  /// row_major scales all but the last, which is static), or for
  /// swizzled_128x4 scales roundup(rows, 128) * roundup(N / G, 4).
  SmallVector<OpFoldResult> getResultSizes(Value result);
  /// Emits the launch(es) over `buffers`, choosing the variant at run time
  /// when the row length is dynamic.
  void emitLaunches(const KernelBuffers &buffers);
  /// The launches of emitLaunches for a row length known at run time: one
  /// variant per layout, alignment and size class, chosen by scf.if.
  void emitDynamicRowLaunches(const KernelBuffers &buffers);
  /// A launch over `rows` rows of `staticSize` (or `size`) elements; the
  /// split kernels pass the parts of the rows.
  void emitKernelOver(OpBuilder &kb, const KernelShape &shape,
                      const KernelBuffers &kernelBuffers, Value rows,
                      Value size, int64_t staticSize);
  /// Few long rows: each row cut in `parts`, one kernel for the parts'
  /// statistics and one that combines them and normalizes the parts, so
  /// that parts * rows blocks share the work.
  void emitSplitKernels(OpBuilder &kb, const KernelBuffers &buffers,
                        int64_t vectorLength, int64_t parts);
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
  /// materialize_in_destination ops made redundant by direct writes.
  SmallVector<Operation *> absorbed;
};

} // namespace

Value GPULoweringBuilder::flatten(Value buffer) {
  return flattenBuffer(b, loc, buffer);
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

KernelParam GPULoweringBuilder::prepareParam(Value tensor) {
  KernelParam param;
  ParameterAccess access = RowView::getParameterAccess(tensor);
  if (access == ParameterAccess::None)
    return param;
  // Scalars are read as element 0 of the flat buffer.
  param.isScalar = access == ParameterAccess::Scalar;
  param.buffer = buildKernelInput(b, loc, tensor);
  return param;
}

Value GPULoweringBuilder::outputBuffer(Value result) {
  MemRefType type = getBufferType(result);
  if (options.memory == GPUMemory::Device) {
    // Write straight into the memref the result is materialized into.
    Operation *materialize = nullptr;
    SmallVector<Operation *, 2> lowered{op.getOperation()};
    if (quant)
      lowered.push_back(quant);
    if (Value dest = getDirectDestination(
            result, getFusedInsertionPoint(op, quant), lowered, materialize)) {
      absorbed.push_back(materialize);
      return dest;
    }
  }
  SmallVector<OpFoldResult> sizes = getResultSizes(result);
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  if (options.memory == GPUMemory::Device)
    return allocateDevice(b, loc, type, dynamicSizes);
  return memref::AllocOp::create(b, loc, type, dynamicSizes);
}

SmallVector<OpFoldResult> GPULoweringBuilder::getResultSizes(Value result) {
  auto type = cast<RankedTensorType>(result.getType());
  if (quant && result == quant.getScales() &&
      quant.getScaleLayout() == ScaleLayout::swizzled_128x4) {
    if (type.hasStaticShape())
      return {b.getIndexAttr(type.getShape()[0])};
    // Fused only with a static row length (isQuantizeFusedOnGPU).
    int64_t paddedGroups =
        llvm::alignTo(staticRowSize / quant.getGroupSize(), 4);
    Value tiles = b.createOrFold<arith::CeilDivUIOp>(
        loc, numRows, arith::ConstantIndexOp::create(b, loc, 128));
    return {getAsOpFoldResult(b.createOrFold<arith::MulIOp>(
        loc, tiles,
        arith::ConstantIndexOp::create(b, loc, 128 * paddedGroups)))};
  }
  SmallVector<OpFoldResult> sizes(xSizes.begin(),
                                  xSizes.begin() + type.getRank());
  if (type.getRank() == rank && !type.isDynamicDim(rank - 1))
    sizes.back() = b.getIndexAttr(type.getShape().back());
  return sizes;
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

/// Emits `then` or `otherwise` under `condition` (no results).
static void emitIfElse(OpBuilder &ib, Location loc, Value condition,
                       function_ref<void(OpBuilder &)> then,
                       function_ref<void(OpBuilder &)> otherwise) {
  auto ifOp = scf::IfOp::create(ib, loc, condition,
                                /*withElseRegion=*/true);
  OpBuilder thenBuilder(ifOp.thenBlock()->getTerminator());
  then(thenBuilder);
  OpBuilder elseBuilder(ifOp.elseBlock()->getTerminator());
  otherwise(elseBuilder);
}

void GPULoweringBuilder::emitKernelOver(OpBuilder &kb, const KernelShape &shape,
                                        const KernelBuffers &kernelBuffers,
                                        Value rows, Value size,
                                        int64_t staticSize) {
  Type computeType = op.getComputeElementType();
  // The hardware tanh only where its error is below the result's rounding:
  // 16-bit results computed in f32.
  bool approximateTanh = options.fastTanh && !op.hasReduction() &&
                         computeType.isF32() &&
                         inputType.getIntOrFloatBitWidth() == 16;
  unsigned numScratch = !op.hasReduction() ? 0 : op.subtractsMean() ? 2 : 1;
  // A per-token quantization reduces max |y| across the block too.
  bool perTokenQuant = quant && quant.isDynamic() && quant.getGroupSize() == 0;
  if (perTokenQuant)
    ++numScratch;

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
}

void GPULoweringBuilder::emitSplitKernels(OpBuilder &kb,
                                          const KernelBuffers &buffers,
                                          int64_t vectorLength, int64_t parts) {
  Type computeType = op.getComputeElementType();
  int64_t partSize = staticRowSize / parts;
  Value partRows = arith::MulIOp::create(
      kb, loc, numRows, arith::ConstantIndexOp::create(kb, loc, parts));
  Value partSizeValue = arith::ConstantIndexOp::create(kb, loc, partSize);
  KernelBuffers split = buffers;
  split.partials = allocateDevice(
      kb, loc, MemRefType::get({ShapedType::kDynamic}, computeType),
      ValueRange{arith::MulIOp::create(
          kb, loc, partRows, arith::ConstantIndexOp::create(kb, loc, 2))});
  KernelShape shape =
      chooseShape(vectorLength, /*warpPerRow=*/false, partSize / vectorLength);
  shape.parts = parts;
  shape.split = RowSplit::Partials;
  emitKernelOver(kb, shape, split, partRows, partSizeValue, partSize);
  shape.split = RowSplit::Finish;
  emitKernelOver(kb, shape, split, partRows, partSizeValue, partSize);
  freeDevice(kb, loc, split.partials);
}

void GPULoweringBuilder::emitLaunches(const KernelBuffers &buffers) {
  auto emitKernel = [&](OpBuilder &kb, const KernelShape &shape) {
    emitKernelOver(kb, shape, buffers, numRows, rowSize, staticRowSize);
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

  if (ShapedType::isDynamic(staticRowSize)) {
    emitDynamicRowLaunches(buffers);
    return;
  }
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
    emitSplitKernels(b, buffers, vectorLength, parts);
    return;
  }
  Value fewRows = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, numRows,
      arith::ConstantIndexOp::create(b, loc, kSplitRowsBelow));
  emitIfElse(
      b, loc, fewRows,
      [&](OpBuilder &sb) {
        emitSplitKernels(sb, buffers, vectorLength, parts);
      },
      [&](OpBuilder &nb) {
        emitKernel(nb, chooseShape(vectorLength, warpPerRow));
      });
}

void GPULoweringBuilder::emitDynamicRowLaunches(const KernelBuffers &buffers) {
  auto emitKernel = [&](OpBuilder &kb, const KernelShape &shape) {
    emitKernelOver(kb, shape, buffers, numRows, rowSize, staticRowSize);
  };
  int64_t maxVectorLength = getRowVectorLength(ShapedType::kDynamic, inputType);
  // Pick the layout and the vector length (full width when it divides the
  // row, else scalar accesses).
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
      emitIfElse(
          cb, loc, fits,
          [&](OpBuilder &tb) {
            emitKernel(tb, chooseShape(maxVectorLength, false, bound));
          },
          [&](OpBuilder &eb) { emitClass(eb, i + 1); });
    };
    emitClass(ab, 0);
  };
  auto emitForLayout = [&](OpBuilder &lb, bool warpPerRow) {
    emitIfElse(
        lb, loc, isAligned,
        [&](OpBuilder &ab) {
          if (warpPerRow)
            emitKernel(ab, chooseShape(maxVectorLength, warpPerRow));
          else
            emitLongAligned(ab);
        },
        [&](OpBuilder &ab) { emitKernel(ab, chooseShape(1, warpPerRow)); });
  };
  emitIfElse(
      b, loc, isShort, [&](OpBuilder &lb) { emitForLayout(lb, true); },
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
  buffers.x = buildKernelInput(b, loc, op.getX());
  if (Value residual = op.getResidual())
    buffers.residual = buildKernelInput(b, loc, residual);
  buffers.weight = prepareParam(op.getWeight());
  buffers.bias = prepareParam(op.getBias());
  buffers.alpha = prepareParam(op.getAlpha());

  // Outputs: shaped buffers, and the flat views the kernel writes: y
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
  SmallVector<Value> shapedOutputs, kernelOutputs;
  for (Value result : results) {
    Value shaped = outputBuffer(result);
    shapedOutputs.push_back(shaped);
    kernelOutputs.push_back(flatten(shaped));
  }
  unsigned next = 0;
  buffers.y = kernelOutputs[next++];
  if (quant) {
    buffers.quant = quant;
    buffers.useCvt = options.fp8Cvt;
    buffers.useFP4Cvt = options.fp4Cvt;
    if (quant.isDynamic())
      buffers.scales = kernelOutputs[next++];
    else
      buffers.scale = buildKernelInput(b, loc, quant.getScale());
    if (Value globalScale = quant.getGlobalScale())
      buffers.globalScale = buildKernelInput(b, loc, globalScale);
  }
  if (op.getResidualOut())
    buffers.residualOut = kernelOutputs[next++];
  if (meanResult)
    buffers.mean = kernelOutputs[next++];
  if (rstdResult)
    buffers.rstd = kernelOutputs[next++];

  emitLaunches(buffers);

  SmallVector<Value> replacements;
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
      auto type = cast<RankedTensorType>(result.getType());
      replacements.push_back(tensor::EmptyOp::create(
          b, loc, getResultSizes(result), type.getElementType()));
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
