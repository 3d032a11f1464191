//===- LowerShardCollectives.cpp - Collectives MLIR 22 leaves ---*- C++ -*-===//
//
// Rewrites the `shard` collectives that LLVM 22's convert-shard-to-mpi does
// not lower into local tensor ops and `shard.all_reduce` (which it lowers to
// MPI_Allreduce), and guards each function that uses a grid with a run-time
// check of the number of MPI ranks.
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Transforms.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLOWERSHARDCOLLECTIVESPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using shard::GridAxis;
using shard::ReductionKind;

namespace {

/// The type of `type` with dim `dim` multiplied (or divided) by `factor`.
RankedTensorType scaleDim(RankedTensorType type, int64_t dim, int64_t factor,
                          bool divide) {
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape[dim]))
    shape[dim] = divide ? shape[dim] / factor : shape[dim] * factor;
  return type.clone(shape);
}

int64_t getGroupSize(Operation *op, FlatSymbolRefAttr gridAttr,
                     ArrayRef<GridAxis> axes,
                     SymbolTableCollection &symbolTable) {
  shard::GridOp grid = shard::getGrid(op, gridAttr, symbolTable);
  if (!grid)
    return ShapedType::kDynamic;
  int64_t size = 1;
  for (GridAxis axis : axes) {
    int64_t extent = grid.getShape()[axis];
    if (ShapedType::isDynamic(extent))
      return ShapedType::kDynamic;
    size *= extent;
  }
  return size;
}

/// all_gather: each process places its piece, bit-cast to integers, into a
/// zero tensor of the gathered shape at its offset, and a bitwise-or
/// all-reduce assembles the whole tensor bit for bit (any element type,
/// bf16/f16 as 16-bit integers: MPI has no bf16 type).
struct LowerAllGather : public OpRewritePattern<shard::AllGatherOp> {
  LowerAllGather(MLIRContext *context, SymbolTableCollection &symbolTable)
      : OpRewritePattern(context), symbolTable(symbolTable) {}

  LogicalResult matchAndRewrite(shard::AllGatherOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto resultType = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!inputType || !resultType)
      return rewriter.notifyMatchFailure(op, "unranked tensor");
    Type elementType = inputType.getElementType();
    if (!elementType.isIntOrFloat())
      return rewriter.notifyMatchFailure(op, "element type has no bit width");
    int64_t axis = op.getGatherAxis().getSExtValue();
    if (inputType.isDynamicDim(axis) || resultType.isDynamicDim(axis))
      return rewriter.notifyMatchFailure(op, "dynamic gathered dim");

    auto intType = rewriter.getIntegerType(elementType.getIntOrFloatBitWidth());
    Value piece = op.getInput();
    if (elementType != intType)
      piece = arith::BitcastOp::create(rewriter, loc, inputType.clone(intType),
                                       piece);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, piece);
    SmallVector<OpFoldResult> wholeSizes(sizes);
    wholeSizes[axis] = rewriter.getIndexAttr(resultType.getDimSize(axis));
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getIntegerAttr(intType, 0));
    Value zeros =
        linalg::FillOp::create(rewriter, loc, zero,
                               ValueRange{tensor::EmptyOp::create(
                                   rewriter, loc, wholeSizes, intType)})
            .getResult(0);
    ImplicitLocOpBuilder builder(loc, rewriter);
    Value index = shard::createProcessLinearIndex(op.getGrid(),
                                                  op.getGridAxes(), builder);
    SmallVector<OpFoldResult> offsets(inputType.getRank(),
                                      rewriter.getIndexAttr(0));
    offsets[axis] =
        arith::MulIOp::create(rewriter, loc, index,
                              arith::ConstantIndexOp::create(
                                  rewriter, loc, inputType.getDimSize(axis)))
            .getResult();
    SmallVector<OpFoldResult> strides(inputType.getRank(),
                                      rewriter.getIndexAttr(1));
    Value placed = tensor::InsertSliceOp::create(rewriter, loc, piece, zeros,
                                                 offsets, sizes, strides);
    Value whole = shard::AllReduceOp::create(rewriter, loc, placed.getType(),
                                             op.getGrid(), op.getGridAxes(),
                                             placed, ReductionKind::BitwiseOr);
    if (elementType != intType)
      whole = arith::BitcastOp::create(
          rewriter, loc,
          cast<RankedTensorType>(whole.getType()).clone(elementType), whole);
    if (whole.getType() != resultType)
      whole = tensor::CastOp::create(rewriter, loc, resultType, whole);
    rewriter.replaceOp(op, whole);
    return success();
  }

  SymbolTableCollection &symbolTable;
};

/// all_to_all = all_gather along the concat axis, then this process's
/// slice along the split axis (the two commute as the axes differ).
struct LowerAllToAll : public OpRewritePattern<shard::AllToAllOp> {
  LowerAllToAll(MLIRContext *context, SymbolTableCollection &symbolTable)
      : OpRewritePattern(context), symbolTable(symbolTable) {}

  LogicalResult matchAndRewrite(shard::AllToAllOp op,
                                PatternRewriter &rewriter) const override {
    auto inputType = dyn_cast<RankedTensorType>(op.getInput().getType());
    int64_t split = op.getSplitAxis().getSExtValue();
    int64_t concat = op.getConcatAxis().getSExtValue();
    int64_t processes =
        getGroupSize(op, op.getGridAttr(), op.getGridAxes(), symbolTable);
    if (!inputType || split == concat || ShapedType::isDynamic(processes))
      return rewriter.notifyMatchFailure(op, "unsupported all_to_all");
    RankedTensorType gatheredType =
        scaleDim(inputType, concat, processes, /*divide=*/false);
    Value gathered = shard::AllGatherOp::create(
        rewriter, op.getLoc(), gatheredType, op.getGrid(), op.getGridAxes(),
        op.getInput(), APInt(64, concat));
    rewriter.replaceOpWithNewOp<shard::AllSliceOp>(
        op, op.getResult().getType(), op.getGrid(), op.getGridAxes(), gathered,
        APInt(64, split));
    return success();
  }

  SymbolTableCollection &symbolTable;
};

/// reduce_scatter = all_reduce, then this process's slice.
struct LowerReduceScatter : public OpRewritePattern<shard::ReduceScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(shard::ReduceScatterOp op,
                                PatternRewriter &rewriter) const override {
    Value reduced = shard::AllReduceOp::create(
        rewriter, op.getLoc(), op.getInput().getType(), op.getGrid(),
        op.getGridAxes(), op.getInput(), op.getReduction());
    rewriter.replaceOpWithNewOp<shard::AllSliceOp>(
        op, op.getResult().getType(), op.getGrid(), op.getGridAxes(), reduced,
        op.getScatterAxis());
    return success();
  }
};

/// An all_reduce of bf16/f16 values reduces in f32 and rounds once: MPI
/// has no 16-bit float types (LLVM 22 emits datatype 0 for bf16).
struct WidenNarrowAllReduce : public OpRewritePattern<shard::AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(shard::AllReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!resultType || !isa<FloatType>(resultType.getElementType()) ||
        resultType.getElementType().getIntOrFloatBitWidth() >= 32)
      return failure();
    if (op.getReduction() != ReductionKind::Sum &&
        op.getReduction() != ReductionKind::Max &&
        op.getReduction() != ReductionKind::Min &&
        op.getReduction() != ReductionKind::Product)
      return rewriter.notifyMatchFailure(op, "not an arithmetic reduction");
    Value wide = shard::AllReduceOp::create(
        rewriter, op.getLoc(), resultType.clone(rewriter.getF32Type()),
        op.getGrid(), op.getGridAxes(), op.getInput(), op.getReduction());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, resultType, wide);
    return success();
  }
};

/// Inserts, at the entry of every function that uses a grid, a check that
/// the MPI run has exactly as many ranks as the grid has processes (fewer
/// or more ranks silently compute wrong numbers). MPICH ABI: MPI_Comm is an
/// int and MPI_COMM_WORLD is 0x44000000.
void insertRankChecks(ModuleOp module, SymbolTableCollection &symbolTable) {
  constexpr int32_t kMPICHCommWorld = 0x44000000;
  MLIRContext *context = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i32 = IntegerType::get(context, 32);
  func::FuncOp commSize;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    llvm::SetVector<shard::GridOp> grids;
    func.walk([&](Operation *op) {
      for (NamedAttribute attr : op->getAttrs())
        if (auto symbol = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
          if (auto grid = symbolTable.lookupNearestSymbolFrom<shard::GridOp>(
                  op, symbol))
            grids.insert(grid);
    });
    if (grids.empty())
      continue;
    if (!commSize) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      commSize = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(
          module, StringAttr::get(context, "MPI_Comm_size"));
      if (!commSize) {
        commSize = func::FuncOp::create(
            b, module.getLoc(), "MPI_Comm_size",
            FunctionType::get(context, {i32, ptrType}, {i32}));
        commSize.setPrivate();
      }
    }
    // After MPI_Init when the function calls it, else at its entry.
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    for (Operation &op : func.getBody().front())
      if (isa<mpi::InitOp>(op))
        b.setInsertionPointAfter(&op);
    Location loc = func.getLoc();
    Value slot = memref::AllocaOp::create(b, loc, MemRefType::get({}, i32));
    Value address = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slot));
    Value pointer = LLVM::IntToPtrOp::create(b, loc, ptrType, address);
    Value world = arith::ConstantIntOp::create(b, loc, i32, kMPICHCommWorld);
    func::CallOp::create(b, loc, commSize, ValueRange{world, pointer});
    Value ranks = memref::LoadOp::create(b, loc, slot);
    for (shard::GridOp grid : grids) {
      int64_t processes = 1;
      for (int64_t extent : grid.getShape())
        processes = ShapedType::isDynamic(extent) ? 0 : processes * extent;
      if (processes == 0)
        continue;
      Value expected = arith::ConstantIntOp::create(b, loc, i32, processes);
      Value equal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          ranks, expected);
      cf::AssertOp::create(b, loc, equal,
                           (Twine("norm-spmd: grid @") + grid.getSymName() +
                            " needs exactly " + Twine(processes) +
                            " MPI ranks (run with mpirun -np " +
                            Twine(processes) + ")")
                               .str());
    }
  }
}

struct NormLowerShardCollectivesPass
    : public norm::impl::NormLowerShardCollectivesPassBase<
          NormLowerShardCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTable;
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerAllGather, LowerAllToAll>(&getContext(), symbolTable);
    patterns.add<LowerReduceScatter, WidenNarrowAllReduce>(&getContext());
    shard::populateAllSliceOpLoweringPatterns(patterns, symbolTable);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();

    // What is left has no MPI lowering in LLVM 22: say so here rather than
    // let convert-shard-to-mpi pass it on.
    WalkResult unsupported = module.walk([](Operation *op) {
      if (isa<shard::AllGatherOp, shard::AllToAllOp, shard::ReduceScatterOp,
              shard::BroadcastOp, shard::GatherOp, shard::ScatterOp,
              shard::ReduceOp, shard::SendOp, shard::RecvOp, shard::ShiftOp,
              shard::AllSliceOp>(op)) {
        op->emitOpError() << "has no MPI lowering in norm-spmd-pipeline";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    // The check calls MPI with MPICH's handles.
    bool mpich = norm::usesMPICHABI(module);
    if (checkRanks && mpich)
      insertRankChecks(module, symbolTable);
  }
};

} // namespace
