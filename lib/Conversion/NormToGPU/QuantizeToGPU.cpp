//===- QuantizeToGPU.cpp - norm.quantize alone to a GPU kernel ------------===//
//
// norm-lower-gpu's kernel for a norm.quantize that no norm kernel takes in
// (its input is not a norm's y, that y has other users, or its groups do not
// map to the norm kernel's lanes).
//
// The rows [M, N] (leading dims flattened) are cut into segments: the groups
// of the dynamic form (G elements; per token, whole rows), or the rows with a
// static scale. `L` consecutive lanes take one segment and stride over it
// with vector accesses of `V` elements (16 bytes where the segment length
// allows): L is a power of two up to 32 (a warp holds 32 / L segments, a
// block 8 warps) for segments of at most 64 vectors, else the whole block
// of 256 threads, so that a long row is read by many loads in flight rather
// than by one warp's long loop. Dynamic scales: a first sweep takes max |y|
// over the segment, the lanes combine it with shuffles (and, for a block,
// through workgroup memory after a barrier), the segment's first lane
// writes the scale, and a second sweep (reading the segment again, from
// cache) writes q. A static scale: one sweep. Segment lengths known only at
// run time (whole rows) get a block per row and two kernels, chosen at run
// time: V elements per access when it divides the length, else one.
//
// The block-scaled forms (docs/Numerics.md "Block-scaled formats") have
// groups of 16, 32 or 128 elements: the lanes of a group combine max |y|,
// each computes the group's scale and element multiplier from it, the first
// writes the scale, and every lane converts and stores its V elements (an
// even number: f4E2M1FN vectors are whole bytes once norm-pack-fp4 packs
// the buffer). With swizzled_128x4 scales the kernel's segments are the
// entries of the padded scale matrix (rows rounded up to 128, groups per
// row to 4): a segment past the data has no elements and writes a 0 scale.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

namespace {

/// Warps per block of the quantization kernel.
constexpr int64_t kQuantizeWarps = 8;
constexpr int64_t kQuantizeThreads = kQuantizeWarps * kWarpSize;
/// Segments of more vectors than this get a whole block (at most two
/// iterations per lane of a warp otherwise).
constexpr int64_t kWarpSegmentVectors = 2 * kWarpSize;

/// Emits the buffers and launches of one norm.quantize.
class QuantizeLowering {
public:
  QuantizeLowering(RewriterBase &b, QuantizeOp op,
                   const NormLowerGPUPassOptions &options)
      : b(b), op(op), loc(op.getLoc()), options(options) {}

  SmallVector<Value> build();

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  /// The launch over every segment, `lanes` lanes per segment (a power of
  /// two up to 32, or kQuantizeThreads), accesses of `vectorLength` elements
  /// (which divides the segment length).
  void emitKernel(int64_t vectorLength, int64_t lanes);

  RewriterBase &b;
  QuantizeOp op;
  Location loc;
  const NormLowerGPUPassOptions &options;
  Value numSegments, segmentSize;
  /// Block-scaled forms: rows, groups per row, and for swizzled_128x4
  /// scales the groups per row rounded up to 4 (null otherwise).
  Value numRows, groupsPerRow, paddedGroups;
  Value inputBuf, scaleBuf, globalScaleBuf, qBuf, scalesBuf;
};

void QuantizeLowering::emitKernel(int64_t vectorLength, int64_t lanes) {
  OpBuilder::InsertionGuard guard(b);
  int64_t threads = kQuantizeThreads;
  bool wholeBlock = lanes == threads;
  assert((wholeBlock || lanes <= kWarpSize) && "lanes: a warp part or a block");
  Value grid = b.createOrFold<arith::CeilDivUIOp>(loc, numSegments,
                                                  index(threads / lanes));
  // A block per segment with dynamic scales: one max per warp in workgroup
  // memory.
  SmallVector<Type> scratchTypes;
  if (wholeBlock && op.isDynamic())
    scratchTypes.push_back(
        getWorkgroupBufferType(b.getContext(), kQuantizeWarps, b.getF32Type()));
  gpu::LaunchOp launchOp = createKernelLaunch(b, loc, op, grid, index(threads),
                                              index(1), scratchTypes);
  b.setInsertionPointToStart(&launchOp.getBody().front());
  b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));

  Value tid = launchOp.getThreadIds().x;
  Value blk = launchOp.getBlockIds().x;
  // Segment blk * (threads / lanes) + tid / lanes; lane `sub` of it.
  Value segment = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blk, index(threads / lanes)),
      arith::DivUIOp::create(b, loc, tid, index(lanes)));
  Value sub = arith::RemUIOp::create(b, loc, tid, index(lanes));
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      segment, numSegments);
  // Lanes of segments past the end run no iteration, but take part in the
  // shuffles of their warp.
  Value vectors =
      arith::DivUIOp::create(b, loc, segmentSize, index(vectorLength));
  // The segment's elements (swizzled_128x4: its entry of the padded scale
  // matrix, which may hold none) and where its scale goes.
  Value hasData = valid, dataSegment = segment, scaleIndex = segment;
  if (paddedGroups) {
    Value row = arith::DivUIOp::create(b, loc, segment, paddedGroups);
    Value group = arith::RemUIOp::create(b, loc, segment, paddedGroups);
    hasData = arith::AndIOp::create(
        b, loc, valid,
        arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                  numRows),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, group,
                                  groupsPerRow)));
    dataSegment = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, groupsPerRow), group);
    scaleIndex = buildSwizzledScaleOffset(b, loc, row, group, paddedGroups);
  }
  Value limit = arith::SelectOp::create(b, loc, hasData, vectors, index(0));
  Value base = arith::MulIOp::create(b, loc, dataSegment, segmentSize);

  Type inputElement = op.getInputType().getElementType();
  Type quantizedType = op.getQuantizedElementType();
  auto offsetOf = [&](OpBuilder &lb, Value vector) -> Value {
    return arith::AddIOp::create(
        lb, loc, base,
        arith::MulIOp::create(lb, loc, vector, index(vectorLength)));
  };
  auto load = [&](OpBuilder &lb, Value vector) -> Value {
    return vector::LoadOp::create(
        lb, loc, VectorType::get({vectorLength}, inputElement), inputBuf,
        ValueRange{offsetOf(lb, vector)}, /*nontemporal=*/false,
        getAccessAlignment(inputElement, vectorLength));
  };
  auto sweep =
      [&](ValueRange inits,
          function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)>
              body) {
        auto loop = scf::ForOp::create(
            b, loc, sub, limit, index(lanes), inits,
            [&](OpBuilder &lb, Location, Value vector, ValueRange iter) {
              scf::YieldOp::create(lb, loc, body(lb, vector, iter));
            });
        return SmallVector<Value>(loop.getResults());
      };
  auto f32VectorType = VectorType::get({vectorLength}, b.getF32Type());

  Value inverse;
  if (!op.isDynamic()) {
    Value scale =
        memref::LoadOp::create(b, loc, scaleBuf, ValueRange{index(0)});
    inverse = vector::BroadcastOp::create(b, loc, f32VectorType,
                                          buildReciprocal(b, loc, scale));
  } else {
    Value zero = buildFloatConstant(b, loc, b.getF32Type(), 0.0);
    Value amax =
        sweep({zero}, [&](OpBuilder &lb, Value vector, ValueRange iter) {
          Value magnitude = vector::ReductionOp::create(
              lb, loc, vector::CombiningKind::MAXIMUMF,
              buildMagnitude(lb, loc, load(lb, vector)));
          return SmallVector<Value>{
              arith::MaximumFOp::create(lb, loc, iter[0], magnitude)};
        }).front();
    amax = buildLanesMax(b, loc, amax, std::min(lanes, kWarpSize));
    if (wholeBlock) {
      // Then over the warps, in order (every segment of the grid is valid:
      // all threads reach the barrier).
      amax =
          buildWarpsReduce(
              b, loc, amax, launchOp.getWorkgroupAttributions().front(), tid,
              kQuantizeWarps,
              [](OpBuilder &cb, Location cl, Value lhs, Value rhs) {
                return arith::MaximumFOp::create(cb, cl, lhs, rhs).getResult();
              })
              .front();
    }
    Value scale;
    if (op.isBlockScaled()) {
      Value globalScale;
      if (globalScaleBuf)
        globalScale = memref::LoadOp::create(b, loc, globalScaleBuf,
                                             ValueRange{index(0)});
      auto [value, multiplier] = buildBlockScale(b, loc, op, amax, globalScale);
      inverse = vector::BroadcastOp::create(b, loc, f32VectorType, multiplier);
      scale = value;
      if (paddedGroups) {
        // Padding entries are 0.
        Value zero = arith::BitcastOp::create(
            b, loc, op.getScalesElementType(),
            arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0));
        scale = arith::SelectOp::create(b, loc, hasData, scale, zero);
      }
    } else {
      scale = buildGroupScale(b, loc, op, amax);
      inverse = vector::BroadcastOp::create(b, loc, f32VectorType,
                                            buildReciprocal(b, loc, scale));
    }
    // The segment's first lane writes its scale.
    Value leader = arith::AndIOp::create(
        b, loc, valid,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sub, index(0)));
    auto ifOp = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, scale, scalesBuf, ValueRange{scaleIndex});
  }
  sweep({}, [&](OpBuilder &lb, Value vector, ValueRange) {
    Value y = load(lb, vector);
    Value q = op.isBlockScaled()
                  ? buildBlockQuantizeVector(lb, loc, y, inverse, quantizedType,
                                             options.fp8Cvt, options.fp4Cvt)
                  : buildQuantizeVector(lb, loc, y, inverse, quantizedType,
                                        options.fp8Cvt);
    vector::StoreOp::create(lb, loc, q, qBuf, ValueRange{offsetOf(lb, vector)},
                            /*nontemporal=*/false,
                            getAccessAlignment(quantizedType, vectorLength));
    return SmallVector<Value>{};
  });
}

SmallVector<Value> QuantizeLowering::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  RankedTensorType inputType = op.getInputType();
  int64_t rank = inputType.getRank();
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, loc, op.getInput());
  numRows = index(1);
  for (int64_t d = 0; d + 1 < rank; ++d)
    numRows = b.createOrFold<arith::MulIOp>(
        loc, numRows, getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  Value rowSize = getValueOrCreateConstantIndexOp(b, loc, sizes.back());
  int64_t staticSegment =
      op.isDynamic() ? op.getStaticGroupSize() : inputType.getShape().back();
  bool groups = op.isDynamic() && op.getGroupSize() != 0;
  segmentSize = groups ? index(op.getGroupSize()) : rowSize;
  numSegments =
      groups ? b.createOrFold<arith::MulIOp>(
                   loc, numRows,
                   b.createOrFold<arith::DivUIOp>(loc, rowSize, segmentSize))
             : numRows;
  if (op.isBlockScaled() &&
      op.getScaleLayout() == ScaleLayout::swizzled_128x4) {
    // A segment per entry of the padded scale matrix.
    groupsPerRow = b.createOrFold<arith::DivUIOp>(loc, rowSize, segmentSize);
    auto roundUp = [&](Value value, int64_t multiple) {
      return b.createOrFold<arith::MulIOp>(
          loc, b.createOrFold<arith::CeilDivUIOp>(loc, value, index(multiple)),
          index(multiple));
    };
    paddedGroups = roundUp(groupsPerRow, 4);
    numSegments =
        b.createOrFold<arith::MulIOp>(loc, roundUp(numRows, 128), paddedGroups);
  }

  inputBuf = buildKernelInput(b, loc, op.getInput());
  if (!op.isDynamic())
    scaleBuf = buildKernelInput(b, loc, op.getScale());
  if (Value globalScale = op.getGlobalScale())
    globalScaleBuf = buildKernelInput(b, loc, globalScale);
  ResultBuffers outputs(b, op, options.memory == GPUMemory::Device);
  qBuf = outputs.add(op.getQ(), sizes);
  if (op.isDynamic()) {
    SmallVector<OpFoldResult> scalesSizes(sizes);
    scalesSizes.back() = getAsOpFoldResult(
        b.createOrFold<arith::DivUIOp>(loc, rowSize, segmentSize));
    if (paddedGroups)
      scalesSizes = {getAsOpFoldResult(numSegments)};
    scalesBuf = outputs.add(op.getScales(), scalesSizes);
  }

  // No launch over an empty grid.
  Value hasWork = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, numSegments,
                            index(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, segmentSize,
                            index(0)));
  auto ifOp = scf::IfOp::create(b, loc, hasWork, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    int64_t maxVector =
        getRowVectorLength(ShapedType::kDynamic, inputType.getElementType());
    auto lanesFor = [](int64_t segmentVectors) {
      if (segmentVectors > kWarpSegmentVectors)
        return kQuantizeThreads;
      return std::min<int64_t>(
          kWarpSize, llvm::PowerOf2Ceil(std::max<int64_t>(segmentVectors, 1)));
    };
    if (!ShapedType::isDynamic(staticSegment)) {
      int64_t vectorLength =
          getRowVectorLength(staticSegment, inputType.getElementType());
      emitKernel(vectorLength, lanesFor(staticSegment / vectorLength));
    } else {
      Value divisible = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, segmentSize, index(maxVector)),
          index(0));
      auto choice = scf::IfOp::create(b, loc, divisible,
                                      /*withElseRegion=*/true);
      b.setInsertionPoint(choice.thenBlock()->getTerminator());
      emitKernel(maxVector, kQuantizeThreads);
      b.setInsertionPoint(choice.elseBlock()->getTerminator());
      emitKernel(1, kQuantizeThreads);
    }
  }
  return outputs.finish({});
}

} // namespace

FailureOr<SmallVector<Value>>
mlir::norm::lowerQuantizeOpToGPUKernel(RewriterBase &rewriter, QuantizeOp op,
                                       const NormLowerGPUPassOptions &options) {
  if (isQuantizeFusedOnGPU(op, options))
    return failure();
  return QuantizeLowering(rewriter, op, options).build();
}
