//===- GradToGPU.cpp - Gradient ops to GPU kernels ------------------------===//
//
// norm-lower-gpu's kernels for norm.layer_norm_grad, norm.rms_norm_grad and
// norm.dyt_grad, rows [M, N] as the forward kernels see them:
//
// 1. The row kernel: block b takes rows [b*R, b*R + R) in order. For each
//    row its threads sum `g` and `g * xh` over their columns and combine the
//    sums in a fixed order (xor shuffles within each warp, then the 8 warps'
//    sums in order through shared memory, two barriers a row), then write
//    dx and add the row's `dy * xh` (DyT: `dy * t`) and `dy` to the block's
//    partial rows `partials[b, :]`, each column owned by one thread. DyT's
//    dalpha terms are summed per thread and combined per block in the same
//    order.
// 2. The column kernel: thread c sums partials[0..B-1, c] in block order in
//    f64 and rounds once (dweight, dbias); thread 0 of block 0 sums the
//    blocks' dalpha.
//
// No atomics: the block of a row, the owner of a column and every order of
// summation are fixed by the shape, so results are the same bits on every
// run. This first version reads and writes scalars (one element per thread
// and step, coalesced across the block).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Dialect/Norm/Utils/TanhApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

namespace {

/// Rows per block of the row kernel (and so rows per partial row).
constexpr int64_t kGradRowsPerBlock = 16;
/// Threads per block of both kernels (a power of two: the reduction tree).
constexpr int64_t kGradThreads = 256;

/// The operands of a gradient op, whatever its kind.
struct GradOperands {
  Value dy, x, mean, rstd, weight, alpha;
  double weightOffset = 0.0;
  bool hasBias = false;
  bool subtractsMean = false;
  bool isDyT = false;
  int64_t axis = 0;
  Type computeType;
};

GradOperands getGradOperands(NormGradOpInterface op) {
  GradOperands g{op.getDy(),   op.getX(),      op.getMean(),
                 op.getRstd(), op.getWeight(), op.getAlpha()};
  g.weightOffset = op.getWeightOffsetValue();
  g.hasBias = op.getHasBiasFlag();
  g.subtractsMean = op.subtractsMean();
  g.isDyT = static_cast<bool>(op.getAlpha());
  g.axis = op.getNormalizedDim();
  g.computeType = op.getComputeElementType();
  return g;
}

/// Emits the two kernels and their buffers for one gradient op.
class GradLowering {
public:
  GradLowering(RewriterBase &b, NormGradOpInterface op,
               const NormLowerGPUPassOptions &options)
      : b(b), op(op), loc(op->getLoc()), options(options),
        g(getGradOperands(op)) {}

  FailureOr<SmallVector<Value>> build();

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  void emitRowKernel(Value dx, Value partialW, Value partialB, Value partialA);
  void emitColumnKernel(Value partialW, Value partialB, Value partialA,
                        Value dweight, Value dbias, Value dalpha);
  gpu::LaunchOp launch(Value grid, unsigned numScratch);
  /// The sums of `values` over the block's threads, for every thread: each
  /// warp's by xor shuffles, then the warps' in order (through `scratch`,
  /// one per value, after one barrier), so every order of summation is
  /// fixed.
  SmallVector<Value> blockSums(ValueRange values,
                               ArrayRef<BlockArgument> scratch, Value tid);

  RewriterBase &b;
  Operation *op;
  Location loc;
  const NormLowerGPUPassOptions &options;
  GradOperands g;
  Value numRows, rowSize, numBlocks;
  Value dyBuf, xBuf, meanBuf, rstdBuf, weightBuf, alphaBuf;
  SmallVector<Value> temporaries;
};

gpu::LaunchOp GradLowering::launch(Value grid, unsigned numScratch) {
  SmallVector<Type> scratchTypes(
      numScratch, getWorkgroupBufferType(
                      b.getContext(), kGradThreads / kWarpSize, g.computeType));
  gpu::LaunchOp launchOp = createKernelLaunch(
      b, loc, op, grid, index(kGradThreads), index(1), scratchTypes);
  b.setInsertionPointToStart(&launchOp.getBody().front());
  b.setInsertionPoint(gpu::TerminatorOp::create(b, loc));
  return launchOp;
}

SmallVector<Value> GradLowering::blockSums(ValueRange values,
                                           ArrayRef<BlockArgument> scratch,
                                           Value tid) {
  auto add = [](OpBuilder &cb, Location cl, Value lhs, Value rhs) -> Value {
    return arith::AddFOp::create(cb, cl, lhs, rhs);
  };
  // Within each warp a butterfly, after which every lane holds the warp's
  // sum (a + b and b + a are the same bits); then the warps' in order.
  SmallVector<Value> sums;
  for (Value value : values)
    sums.push_back(buildLanesReduce(b, loc, value, kWarpSize, add));
  SmallVector<Value> totals = buildWarpsReduce(
      b, loc, sums, ValueRange(scratch).take_front(sums.size()), tid,
      kGradThreads / kWarpSize, add);
  // Every thread has read the totals before the scratch is reused.
  gpu::BarrierOp::create(b, loc);
  return totals;
}

void GradLowering::emitRowKernel(Value dx, Value partialW, Value partialB,
                                 Value partialA) {
  OpBuilder::InsertionGuard guard(b);
  gpu::LaunchOp launchOp = launch(numBlocks, g.isDyT ? 1 : 2);
  Type c = g.computeType;
  Type xElement = cast<RankedTensorType>(g.x.getType()).getElementType();
  Value tid = launchOp.getThreadIds().x;
  Value blk = launchOp.getBlockIds().x;
  ArrayRef<BlockArgument> scratch = launchOp.getWorkgroupAttributions();
  Value threads = index(kGradThreads);
  Value firstRow = arith::MulIOp::create(b, loc, blk, index(kGradRowsPerBlock));
  Value rows =
      arith::MinUIOp::create(b, loc, index(kGradRowsPerBlock),
                             arith::SubIOp::create(b, loc, numRows, firstRow));
  Value partialBase = arith::MulIOp::create(b, loc, blk, rowSize);
  Value zero = buildFloatConstant(b, loc, c, 0.0);
  Value n = buildIndexToFloat(b, loc, rowSize, c);
  auto load = [&](OpBuilder &lb, Value buffer, Value at) -> Value {
    return castFloat(lb, loc, memref::LoadOp::create(lb, loc, buffer, at), c);
  };
  auto columns =
      [&](ValueRange inits,
          function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)>
              body) {
        auto loop = scf::ForOp::create(
            b, loc, tid, rowSize, threads, inits,
            [&](OpBuilder &lb, Location, Value col, ValueRange iter) {
              scf::YieldOp::create(lb, loc, body(lb, col, iter));
            });
        return SmallVector<Value>(loop.getResults());
      };

  // The block's partial rows start at zero.
  columns({}, [&](OpBuilder &lb, Value col, ValueRange) {
    Value at = arith::AddIOp::create(lb, loc, partialBase, col);
    for (Value partial : {partialW, partialB})
      if (partial)
        memref::StoreOp::create(lb, loc, zero, partial, ValueRange{at});
    return SmallVector<Value>{};
  });

  Value alpha = g.isDyT ? load(b, alphaBuf, index(0)) : Value();
  Value offset = g.weightOffset != 0.0
                     ? buildFloatConstant(b, loc, c, g.weightOffset)
                     : Value();
  auto rowLoop = scf::ForOp::create(
      b, loc, index(0), rows, index(1), ValueRange{zero},
      [&](OpBuilder &rb, Location, Value local, ValueRange rowIter) {
        OpBuilder::InsertionGuard rowGuard(b);
        b.setInsertionPoint(rb.getInsertionBlock(), rb.getInsertionPoint());
        Value row = arith::AddIOp::create(b, loc, firstRow, local);
        Value base = arith::MulIOp::create(b, loc, row, rowSize);
        Value mean = meanBuf ? load(b, meanBuf, row) : Value();
        Value rstd = rstdBuf ? load(b, rstdBuf, row) : Value();
        // dy, g = dy * w, x and xh (LayerNorm, RMSNorm) at a column.
        struct Terms {
          Value dy, g, x, xh;
        };
        auto terms = [&](OpBuilder &tb, Value col) {
          Terms t;
          Value at = arith::AddIOp::create(tb, loc, base, col);
          t.dy = load(tb, dyBuf, at);
          t.x = load(tb, xBuf, at);
          t.g = t.dy;
          if (weightBuf) {
            Value w = load(tb, weightBuf, col);
            if (offset)
              w = arith::AddFOp::create(tb, loc, w, offset);
            t.g = arith::MulFOp::create(tb, loc, t.dy, w);
          }
          if (!g.isDyT) {
            Value centered =
                mean ? arith::SubFOp::create(tb, loc, t.x, mean).getResult()
                     : t.x;
            t.xh = arith::MulFOp::create(tb, loc, centered, rstd);
          }
          return t;
        };
        // Adds `value` to the block's partial row at `col`.
        auto accumulate = [&](OpBuilder &ab, Value partial, Value col,
                              Value value) {
          if (!partial)
            return;
          Value at = arith::AddIOp::create(ab, loc, partialBase, col);
          Value sum = arith::AddFOp::create(
              ab, loc, memref::LoadOp::create(ab, loc, partial, at), value);
          memref::StoreOp::create(ab, loc, sum, partial, ValueRange{at});
        };
        auto storeDx = [&](OpBuilder &sb, Value col, Value value) {
          Value at = arith::AddIOp::create(sb, loc, base, col);
          memref::StoreOp::create(sb, loc, castFloat(sb, loc, value, xElement),
                                  dx, ValueRange{at});
        };

        Value alphaAcc = rowIter[0];
        if (g.isDyT) {
          SmallVector<Value> acc = columns(
              {alphaAcc}, [&](OpBuilder &lb, Value col, ValueRange iter) {
                Terms t = terms(lb, col);
                auto [tanh, d] = buildTanhAndSlope(
                    lb, loc, arith::MulFOp::create(lb, loc, alpha, t.x));
                Value gd = arith::MulFOp::create(lb, loc, t.g, d);
                storeDx(lb, col, arith::MulFOp::create(lb, loc, gd, alpha));
                accumulate(lb, partialW, col,
                           arith::MulFOp::create(lb, loc, t.dy, tanh));
                accumulate(lb, partialB, col, t.dy);
                return SmallVector<Value>{arith::AddFOp::create(
                    lb, loc, iter[0], arith::MulFOp::create(lb, loc, gd, t.x))};
              });
          scf::YieldOp::create(rb, loc, acc[0]);
          return;
        }
        // Row sums of g and g * xh, combined over the block.
        SmallVector<Value> sums = columns({zero, zero}, [&](OpBuilder &lb,
                                                            Value col,
                                                            ValueRange iter) {
          Terms t = terms(lb, col);
          return SmallVector<Value>{
              arith::AddFOp::create(lb, loc, iter[0], t.g),
              arith::AddFOp::create(lb, loc, iter[1],
                                    arith::MulFOp::create(lb, loc, t.g, t.xh))};
        });
        SmallVector<Value> totals = blockSums(sums, scratch, tid);
        Value meanG = arith::DivFOp::create(b, loc, totals[0], n);
        Value meanGX = arith::DivFOp::create(b, loc, totals[1], n);
        columns({}, [&](OpBuilder &lb, Value col, ValueRange) {
          Terms t = terms(lb, col);
          Value inner = arith::SubFOp::create(
              lb, loc, t.g, arith::MulFOp::create(lb, loc, t.xh, meanGX));
          if (g.subtractsMean)
            inner = arith::SubFOp::create(lb, loc, inner, meanG);
          storeDx(lb, col, arith::MulFOp::create(lb, loc, rstd, inner));
          accumulate(lb, partialW, col,
                     arith::MulFOp::create(lb, loc, t.dy, t.xh));
          accumulate(lb, partialB, col, t.dy);
          return SmallVector<Value>{};
        });
        scf::YieldOp::create(b, loc, alphaAcc);
      });
  if (partialA) {
    Value total = blockSums(rowLoop.getResult(0), scratch, tid).front();
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0));
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, total, partialA, ValueRange{blk});
  }
}

void GradLowering::emitColumnKernel(Value partialW, Value partialB,
                                    Value partialA, Value dweight, Value dbias,
                                    Value dalpha) {
  OpBuilder::InsertionGuard guard(b);
  Value grid =
      b.createOrFold<arith::CeilDivUIOp>(loc, rowSize, index(kGradThreads));
  gpu::LaunchOp launchOp = launch(grid, 0);
  Type f64 = b.getF64Type();
  Value tid = launchOp.getThreadIds().x;
  Value blk = launchOp.getBlockIds().x;
  Value col = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blk, index(kGradThreads)), tid);
  // Sums over the blocks in order, in f64, rounded once.
  auto sumBlocks = [&](Value partials, Value stride, Value offset, Value result,
                       Value at) {
    auto loop = scf::ForOp::create(
        b, loc, index(0), numBlocks, index(1),
        ValueRange{buildFloatConstant(b, loc, f64, 0.0)},
        [&](OpBuilder &lb, Location, Value block, ValueRange iter) {
          Value position = arith::AddIOp::create(
              lb, loc, arith::MulIOp::create(lb, loc, block, stride), offset);
          Value part = castFloat(
              lb, loc, memref::LoadOp::create(lb, loc, partials, position),
              f64);
          scf::YieldOp::create(
              lb, loc,
              ValueRange{arith::AddFOp::create(lb, loc, iter[0], part)});
        });
    Type element = cast<MemRefType>(result.getType()).getElementType();
    memref::StoreOp::create(b, loc,
                            castFloat(b, loc, loop.getResult(0), element),
                            result, ValueRange{at});
  };
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, rowSize);
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    if (dweight)
      sumBlocks(partialW, rowSize, col, dweight, col);
    if (dbias)
      sumBlocks(partialB, rowSize, col, dbias, col);
  }
  if (dalpha) {
    Value first = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, blk, index(0)));
    auto alphaIf = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPoint(alphaIf.thenBlock()->getTerminator());
    sumBlocks(partialA, index(1), index(0), dalpha, index(0));
  }
}

FailureOr<SmallVector<Value>> GradLowering::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  auto xType = cast<RankedTensorType>(g.x.getType());
  SmallVector<OpFoldResult> xSizes = tensor::getMixedSizes(b, loc, g.x);
  numRows = index(1);
  rowSize = index(1);
  for (int64_t d = 0; d < xType.getRank(); ++d) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, xSizes[d]);
    Value &target = d < g.axis ? numRows : rowSize;
    target = b.createOrFold<arith::MulIOp>(loc, target, size);
  }
  numBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, numRows,
                                                 index(kGradRowsPerBlock));

  dyBuf = buildKernelInput(b, loc, g.dy);
  xBuf = buildKernelInput(b, loc, g.x);
  if (g.mean)
    meanBuf = buildKernelInput(b, loc, g.mean);
  if (g.rstd)
    rstdBuf = buildKernelInput(b, loc, g.rstd);
  if (g.weight)
    weightBuf = buildKernelInput(b, loc, g.weight);
  if (g.alpha)
    alphaBuf = buildKernelInput(b, loc, g.alpha);

  // Outputs, in the op's result order.
  // Their sizes come from the operands (dx: x; dweight, dbias: the weight
  // or x's normalized dims; dalpha: alpha), not from the op's results.
  SmallVector<OpFoldResult> paramSizes =
      g.weight
          ? tensor::getMixedSizes(b, loc, g.weight)
          : SmallVector<OpFoldResult>(xSizes.begin() + g.axis, xSizes.end());
  ResultBuffers outputs(b, op, options.memory == GPUMemory::Device);
  SmallVector<Value> device;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    SmallVector<OpFoldResult> sizes = paramSizes;
    if (i == 0)
      sizes = xSizes;
    else if (g.isDyT && i + 1 == op->getNumResults())
      sizes = tensor::getMixedSizes(b, loc, g.alpha);
    device.push_back(outputs.add(result, sizes));
  }
  unsigned next = 1;
  Value dx = device[0];
  Value dweight = g.weight ? device[next++] : Value();
  Value dbias = g.hasBias ? device[next++] : Value();
  Value dalpha = g.isDyT ? device[next++] : Value();

  // The partial rows [blocks, N] and DyT's partial dalpha [blocks].
  auto partialType = MemRefType::get({ShapedType::kDynamic}, g.computeType);
  Value partialSize = b.createOrFold<arith::MulIOp>(loc, numBlocks, rowSize);
  auto temporary = [&](Value size) {
    Value buffer = allocateDevice(b, loc, partialType, ValueRange{size});
    temporaries.push_back(buffer);
    return buffer;
  };
  Value partialW = g.weight ? temporary(partialSize) : Value();
  Value partialB = g.hasBias ? temporary(partialSize) : Value();
  Value partialA = g.isDyT ? temporary(numBlocks) : Value();

  // No launch over an empty grid: the row kernel needs rows and columns, the
  // column kernel columns (with no rows, the sums are zeros).
  Value zero = index(0);
  Value hasColumns =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, rowSize, zero);
  Value hasRows = arith::AndIOp::create(
      b, loc, hasColumns,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, numRows, zero));
  {
    auto ifOp = scf::IfOp::create(b, loc, hasRows, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    emitRowKernel(dx, partialW, partialB, partialA);
  }
  if (dweight || dbias || dalpha) {
    // dalpha needs the launch even without columns.
    Value launchIt =
        g.isDyT
            ? arith::ConstantOp::create(b, loc, b.getBoolAttr(true)).getResult()
            : hasColumns;
    auto ifOp = scf::IfOp::create(b, loc, launchIt, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    emitColumnKernel(partialW, partialB, partialA, dweight, dbias, dalpha);
  }

  return outputs.finish(temporaries);
}

} // namespace

std::string mlir::norm::getGPUGradBlocker(NormGradOpInterface op) {
  GradOperands g = getGradOperands(op);
  auto xType = dyn_cast<RankedTensorType>(g.x.getType());
  if (!xType || xType.getRank() == 0)
    return "x must be a ranked tensor of rank >= 1";
  if (g.axis == 0 && (g.mean || g.rstd))
    return "statistics over every dim of x (rank 0) have no GPU kernel";
  if (g.weight &&
      RowView::getParameterAccess(g.weight) == ParameterAccess::Scalar)
    return "a scalar weight has no GPU kernel";
  return "";
}

FailureOr<SmallVector<Value>>
mlir::norm::lowerGradOpToGPUKernels(RewriterBase &rewriter,
                                    NormGradOpInterface op,
                                    const NormLowerGPUPassOptions &options) {
  if (!getGPUGradBlocker(op).empty())
    return failure();
  return GradLowering(rewriter, op, options).build();
}
