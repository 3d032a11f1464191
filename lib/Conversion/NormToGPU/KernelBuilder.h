//===- KernelBuilder.h - Bodies of the norm GPU kernels ---------*- C++ -*-===//
//
// The device side of norm-lower-gpu: the thread layout of a kernel variant,
// the buffers it reads and writes, and the builder of its body. The host
// side (NormToGPU.cpp) chooses the variants and launches them.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_NORMTOGPU_KERNELBUILDER_H
#define LIB_CONVERSION_NORMTOGPU_KERNELBUILDER_H

#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace norm {
namespace gpu_lowering {

constexpr int64_t kWarpSize = 32;
/// Bytes per global access: 128-bit loads and stores.
constexpr int64_t kAccessBytes = 16;
/// Vectors per thread the block size is chosen for: four independent 128-bit
/// loads in flight per thread hide DRAM latency without costing occupancy.
constexpr int64_t kTargetChunks = 4;
/// Most vectors per thread kept in registers (32 registers of row data);
/// longer rows are finished by loops that read the rest again.
constexpr int64_t kMaxCachedChunks = 8;
/// Warps per block when each warp normalizes its own row.
constexpr int64_t kWarpsPerBlock = 4;
/// Threads per block of the block-per-row kernel when the row length is only
/// known at run time and longer than every size class below.
constexpr int64_t kDynamicBlockSize = 256;
/// Size classes (most 128-bit vectors per row) of the block-per-row
/// variants compiled for a dynamic row length, each sized like a static row
/// of that many vectors: 512 is N = 4096 bf16 (128 threads, 4 vectors
/// each), 1024 N = 8192 bf16, 4096 N = 32768 bf16 (1024 threads, 4 each).
constexpr int64_t kDynamicRowClasses[] = {512, 1024, 4096};

/// Rows of fewer than this many get the split kernels (when the row length
/// allows): too few blocks to keep an H100/H200's 132 SMs busy otherwise.
constexpr int64_t kSplitRowsBelow = 64;

/// How a kernel covers the rows of the op.
enum class RowSplit {
  /// A group of threads normalizes a whole row.
  None,
  /// Rows are cut in `parts` equal parts, which are the kernel's rows; each
  /// part's statistics go to the partials buffer (and residual_out is
  /// written).
  Partials,
  /// The same parts: the row's statistics combined from the partials, then
  /// each part normalized.
  Finish,
};

/// The thread layout of one kernel variant.
struct KernelShape {
  RowSplit split = RowSplit::None;
  /// Parts per row of the split kernels (1 otherwise).
  int64_t parts = 1;
  /// Elements per vector access (divides the row length).
  int64_t vectorLength = 1;
  /// Threads that normalize one row: a whole block, a warp, or a
  /// power-of-two part of a warp (rows of fewer vectors than 32).
  int64_t groupSize = kWarpSize;
  /// Rows per block (one per warp in the warp-per-row layout).
  int64_t rowsPerBlock = 1;
  /// Vectors per thread loaded up front and kept in registers.
  int64_t cachedChunks = 1;
  /// Whether rows may be longer than the cached chunks cover; the rest of
  /// the row is then swept by loops that read it from memory in each pass.
  bool needsLoop = false;
};

/// The widest vector access (at most kAccessBytes) of `elementType` whose
/// length divides `staticRowSize`, which keeps every row aligned; for a
/// dynamic row length, the full width.
int64_t getRowVectorLength(int64_t staticRowSize, Type elementType);

/// The thread layout of a row of `staticRowSize` elements (kDynamic: known
/// at run time) in accesses of `vectorLength`, a warp (or part of one) or
/// a block per row. `vectorBound` (dynamic row lengths only) is the most
/// vectors a row taking this variant has: the block and its registers are
/// sized for it.
KernelShape computeKernelShape(int64_t staticRowSize, int64_t vectorLength,
                               bool warpPerRow,
                               const NormLowerGPUPassOptions &options,
                               std::optional<int64_t> vectorBound = {});

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
  /// A fused norm.quantize of y (null otherwise): the kernel writes q into
  /// `y` (a flat buffer of the quantized type) and, in the dynamic form,
  /// the scales into `scales` (flat, M * N / G); the static scale is read
  /// from `scale` (one f32). With `useCvt`, FP8 values are converted by
  /// cvt.rn.satfinite.e4m3x2.f32 (sm_89 with PTX 8.1, sm_90 and later).
  /// The block-scaled forms (row_major scales) write their scales, of the
  /// scales element type, to `scales` and read NVFP4's global scale from
  /// `globalScale` (one f32); with `useFP4Cvt` FP4 values are converted by
  /// cvt.rn.satfinite.e2m1x2.f32 (sm_100a, sm_100f and later).
  QuantizeOp quant;
  Value scale, scales, globalScale;
  bool useCvt = false, useFP4Cvt = false;
  KernelParam weight, bias, alpha;
  /// `return_stats`: flat `memref<?xC>` of one value per row (LayerNorm's
  /// mean, and rstd), or null.
  Value mean, rstd;
  /// The split kernels' `memref<?xC>` (C the compute type): two values per
  /// part (RMSNorm: the sum of squares; LayerNorm: the mean of s - shift and
  /// the sum of squared deviations from it, shift being the row's first
  /// element).
  Value partials;
};

//===----------------------------------------------------------------------===//
// Host-side buffers (HostBuffers.cpp)
//===----------------------------------------------------------------------===//

/// `buffer` as a flat `memref<?xT>` (a rank-0 buffer as one element).
Value flattenBuffer(OpBuilder &b, Location loc, Value buffer);
/// Allocates a device buffer of `type`. The buffer is freed explicitly (or
/// owned by the caller), so it is marked for manual deallocation: the
/// ownership-based deallocation pass leaves it alone.
Value allocateDevice(OpBuilder &b, Location loc, MemRefType type,
                     ValueRange dynamicSizes);
/// memory=device: the memref that `result` (of one of the ops `lowered`
/// into a kernel placed at `kernelAt`) is materialized into by its only use,
/// a `bufferization.materialize_in_destination` into an identity-layout
/// memref of its element type and rank, which the kernel can write directly:
/// the memref exists at `kernelAt`, the materialization follows in its block,
/// and nothing in between touches memory but the lowered ops and the
/// materializations of their results. Null otherwise. `materialize` is set
/// to that op.
Value getDirectDestination(Value result, Operation *kernelAt,
                           ArrayRef<Operation *> lowered,
                           Operation *&materialize);
/// memory=device: turns every `bufferization.materialize_in_destination` of
/// `result` into a memref (which the kernel did not write directly) into a
/// `gpu.memcpy` from the result's device buffer `buffer`, at its place, and
/// erases it (one-shot bufferization would copy on the host). When those were
/// all the uses of `result`, returns true (the caller keeps its hands off
/// `buffer`) and frees `buffer` after the last op of its block that holds a
/// copy.
bool copyMaterializationsFromDevice(RewriterBase &b, Value result,
                                    Value buffer);
/// Frees a device buffer from allocateDevice.
void freeDevice(OpBuilder &b, Location loc, Value buffer);
/// The memref type with `tensor`'s shape and element type, identity layout.
MemRefType getBufferType(Value tensor);
/// The flat buffer a kernel reads `tensor` from: the tensor's own buffer
/// (`bufferization.to_buffer`, read-only), in device memory with
/// memory=device; with memory=copy a host buffer that norm-gpu-host-copies
/// copies to the device after bufferization.
Value buildKernelInput(OpBuilder &b, Location loc, Value tensor);

/// The result buffers of an op whose kernels write each of its results
/// whole (the gradient ops, a norm.quantize alone). memory=device: the
/// memref the result is materialized into (getDirectDestination) or a new
/// device buffer; memory=copy: a host buffer (norm-gpu-host-copies places
/// it on the device after bufferization).
class ResultBuffers {
public:
  ResultBuffers(RewriterBase &b, Operation *op, bool deviceMemory)
      : b(b), op(op), loc(op->getLoc()), deviceMemory(deviceMemory) {}

  /// Adds `result`, of sizes `sizes`, and returns the flat device buffer the
  /// kernels write it to.
  Value add(Value result, ArrayRef<OpFoldResult> sizes);
  /// After the kernels: frees `temporaries` and the device buffers nothing
  /// keeps, erases the materializations written in place, and returns the
  /// replacements of the results, in the order they were added.
  SmallVector<Value> finish(ArrayRef<Value> temporaries);

private:
  RewriterBase &b;
  Operation *op;
  Location loc;
  bool deviceMemory;
  SmallVector<Value> results, shaped;
  /// materialize_in_destination ops made redundant by direct writes.
  SmallVector<Operation *> absorbed;
};

/// The alignment in bytes of a vector access of `vectorLength` elements of
/// `elementType` at a multiple of its own size (capped at 16 bytes).
llvm::MaybeAlign getAccessAlignment(Type elementType, int64_t vectorLength);

/// A gpu.launch of the kernel of `op` (named getNormKernelName(op)) over a
/// 1-D grid of `grid` blocks of `threadsX` x `threadsY` threads, with a
/// workgroup buffer of each of `workgroupTypes`; its body is empty.
gpu::LaunchOp createKernelLaunch(OpBuilder &b, Location loc, Operation *op,
                                 Value grid, Value threadsX, Value threadsY,
                                 TypeRange workgroupTypes);

/// Combines two values of a reduction (arith.addf, arith.maximumf, ...).
using CombineFn = function_ref<Value(OpBuilder &, Location, Value, Value)>;

/// `value` combined with `combine` over `lanes` consecutive lanes of a warp
/// (a power of two up to 32, aligned), for all of them, by xor shuffles
/// (offsets lanes / 2 down to 1).
Value buildLanesReduce(OpBuilder &b, Location loc, Value value, int64_t lanes,
                       CombineFn combine);

/// The maximum (arith.maximumf: NaN propagates) of `value` over `lanes`
/// consecutive lanes of a warp, by buildLanesReduce.
Value buildLanesMax(OpBuilder &b, Location loc, Value value, int64_t lanes);

/// Combines over the `numWarps` warps of a block the values each warp
/// holds in all its lanes (`thread` counts the block's threads from 0):
/// lane 0 of warp w stores `values[i]` at `scratch[i][w]` (workgroup
/// memory), and after a barrier every thread combines the `numWarps`
/// entries of each in warp order, so all threads agree bit for bit. Every
/// thread of the block must reach the barrier; a caller reusing `scratch`
/// needs another barrier first.
SmallVector<Value> buildWarpsReduce(OpBuilder &b, Location loc,
                                    ValueRange values, ValueRange scratch,
                                    Value thread, int64_t numWarps,
                                    CombineFn combine);

/// The type of a workgroup (shared) memory buffer of `size` `elementType`s.
MemRefType getWorkgroupBufferType(MLIRContext *context, int64_t size,
                                  Type elementType);

/// q of the vector `y` (f16, bf16 or f32) times the f32 vector `inverse`,
/// as a vector of `quantizedType` (f8E4M3FN or i8). With `useCvt`, FP8
/// values are converted by cvt.rn.satfinite.e4m3x2.f32, else by the integer
/// ops of buildQuantize.
Value buildQuantizeVector(OpBuilder &b, Location loc, Value y, Value inverse,
                          Type quantizedType, bool useCvt);

/// The scale of one group of a block-scaled `op` (docs/Numerics.md) from
/// its `amax` (f32): the value stored, of the scales element type, and the
/// f32 multiplier of the group's elements (`2^-X` for the power-of-two
/// scales, NVFP4's `g / sf` with `globalScale` the f32 `g`).
std::pair<Value, Value> buildBlockScale(OpBuilder &b, Location loc,
                                        QuantizeOp op, Value amax,
                                        Value globalScale);

/// q of the vector `y` (f16, bf16 or f32, an even number of elements for
/// f4E2M1FN) of a block-scaled form times the f32 vector `multiplier` (the
/// same value in every lane: one group), as a vector of `quantizedType`
/// (f8E4M3FN or f4E2M1FN). With `useCvt`, FP8 values are converted by
/// cvt.rn.satfinite.e4m3x2.f32, with `useFP4Cvt` FP4 values by
/// cvt.rn.satfinite.e2m1x2.f32 (sm_100a/sm_100f and later), else by the
/// integer ops of buildBlockQuantize.
Value buildBlockQuantizeVector(OpBuilder &b, Location loc, Value y,
                               Value multiplier, Type quantizedType,
                               bool useCvt, bool useFP4Cvt);

/// The position of the scale of row `row`, group `group` in the
/// swizzled_128x4 layout with `paddedGroups` (the groups per row rounded up
/// to 4) columns (getSwizzled128x4Offset).
Value buildSwizzledScaleOffset(OpBuilder &b, Location loc, Value row,
                               Value group, Value paddedGroups);

/// Emits the body of one kernel variant.
class KernelBodyBuilder {
public:
  /// With `approximateTanh`, DyT's tanh is the hardware approximation
  /// (`tanh.approx.f32`, sm_75 and later) instead of libdevice's.
  KernelBodyBuilder(OpBuilder &b, Location loc, NormOpInterface op,
                    const KernelShape &shape, const KernelBuffers &buffers,
                    Value numRows, Value rowSize, int64_t staticRowSize,
                    bool approximateTanh)
      : b(b), loc(loc), op(op), shape(shape), buffers(buffers),
        numRows(numRows), rowSize(rowSize), staticRowSize(staticRowSize),
        approximateTanh(approximateTanh) {}

  /// Fills `launch`'s body.
  void build(gpu::LaunchOp launch);

private:
  /// A fused quantization with swizzled_128x4 scales: the grid's threads
  /// write the 0 scales of the padding (columns past N / G, rows past M up
  /// to a multiple of 128), which no row of the kernel writes.
  void zeroScalePadding(gpu::LaunchOp launch);

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
    /// The weight and bias vectors at `loadIndex` (null when absent), loaded
    /// with x, before the reductions.
    Value weight, bias;
  };

  /// Normalizes row `row`; `lane` is the thread's index among the group.
  void buildRow(Value row, Value lane);
  /// The row geometry of `row` (bases, vector counts, split part) and its
  /// cached chunks, loaded with their weight and bias; returns the row
  /// length.
  Value loadCachedRow(Value row);
  /// buildRow for DyT: tanh(alpha * s) * weight + bias, no statistics.
  void buildDyTRow();
  /// buildRow for RMSNorm: one sum of squares over `count` (`fullCount`
  /// for a split row) elements.
  void buildRMSNormRow(Value row, Value fullCount);
  /// buildRow for LayerNorm: the shifted mean and the squared deviations
  /// over `count` elements per part (`fullCount` per row).
  void buildLayerNormRow(Value row, Value count, Value fullCount);
  /// `s` in the compute type.
  Value widen(Value s);
  /// `scalar` (compute type) broadcast to a vector of the row's length.
  Value broadcastCompute(Value scalar);

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
  Value groupReduce(Value value, Value scratch, bool maximum = false);
  /// The maximum of `value` over `lanes` consecutive lanes (a power of two
  /// up to a warp, aligned), for all of them.
  Value lanesMax(Value value, int64_t lanes);
  /// q of the y vector `y` (input type) with the f32 vector `inverse`.
  Value quantizeVector(Value y, Value inverse);
  /// The f32 vector of the quantization's scale reciprocal broadcast.
  Value broadcastF32(Value scalar);
  /// buildNormOutput, with the multiply-add of `cast_mode = final` marked
  /// contractible (one FMA).
  Value buildNormOutputContracted(Value n, Value weight, Value bias);
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
  bool approximateTanh;

  SmallVector<Value> scratchBuffers;
  Type inputType, computeType;
  VectorType computeVectorType;
  Value lane, rowBase, numVectors, loopStart, groupSizeValue;
  /// i1 "this group's row exists", when groups past the last row run (rows
  /// sharing a warp); stores are skipped where it is false.
  Value rowValid;
  /// Split kernels: the part's first vector within its row (weight and bias
  /// are read from there), and the element offset of the whole row.
  Value paramBase, fullRowBase;

  /// Split kernels: the position of partial `slot` of part `part` in the
  /// partials buffer.
  Value partialIndex(Value part, unsigned slot);
  /// `return_stats`: the row's first lane (of the first part when split)
  /// stores its mean (LayerNorm) and rstd.
  void storeStats(Value row, Value mean, Value rstd);
  /// Split kernels: lane 0 stores `value` as partial `slot` of this part.
  void storePartial(Value row, unsigned slot, Value value);
  /// Split kernels: partial `slot` of every part of this part's row, in
  /// part order.
  SmallVector<Value> loadPartials(Value row, unsigned slot);
  SmallVector<Chunk> chunks;
  unsigned loopSweeps = 0;
  /// Static or per-token quantization: the inverse scale, as an f32 vector.
  Value quantInverse;
};

} // namespace gpu_lowering
} // namespace norm
} // namespace mlir

#endif // LIB_CONVERSION_NORMTOGPU_KERNELBUILDER_H
