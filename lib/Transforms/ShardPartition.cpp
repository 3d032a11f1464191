//===- ShardPartition.cpp - Propagation + partition, guarded ----*- C++ -*-===//
//
// Upstream sharding propagation and partition on the functions that hold
// shard annotations, after legalizing the inputs LLVM 22's partition cannot
// take, and with every split dim checked between the two.
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMSHARDPARTITIONPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

namespace {

bool holdsShardAnnotations(func::FuncOp func) {
  if (func.isDeclaration())
    return false;
  return func.walk([](shard::ShardOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Gives each ranked-tensor argument that propagation left without a
/// `shard.shard` of its own a replicated annotation on the function's first
/// grid: partition looks up the sharding of every argument through its
/// uses, and of every operand through its definition (it crashed on an
/// argument that was only returned). An unused argument gets an annotation
/// for its users; the uses of a used one read the annotated value.
void annotateUnshardedArguments(func::FuncOp func) {
  shard::ShardingOp first;
  func.walk([&](shard::ShardingOp op) {
    first = op;
    return WalkResult::interrupt();
  });
  if (!first)
    return;
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Value replicated;
  for (BlockArgument arg : entry.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()) ||
        llvm::any_of(arg.getUsers(), llvm::IsaPred<shard::ShardOp>))
      continue;
    if (!replicated) {
      SmallVector<shard::GridAxesAttr> none{
          shard::GridAxesAttr::get(b.getContext(), {})};
      replicated = shard::ShardingOp::create(b, func.getLoc(),
                                             first.getGridAttr(), none);
    }
    auto annotation =
        shard::ShardOp::create(b, arg.getLoc(), arg, replicated,
                               /*annotate_for_users=*/arg.use_empty());
    arg.replaceAllUsesExcept(annotation.getResult(), annotation);
  }
}

/// The sharding of the value `result` is annotated with (a `shard.shard`
/// of it, not for its users), or null.
Value getResultSharding(Value result) {
  for (Operation *user : result.getUsers())
    if (auto shardOp = dyn_cast<shard::ShardOp>(user);
        shardOp && !shardOp.getAnnotateForUsers())
      return shardOp.getSharding();
  return {};
}

/// Gives each unused ranked-tensor result of an op that propagation left
/// without a sharding the sharding of an annotated result of the same op
/// and type (an unused residual_out takes y's): partition looks up the
/// sharding of every result of a partitioned op through its uses, and
/// crashed on such a result. Fails with a diagnostic on an unused result
/// of an op with annotated results of other types only.
LogicalResult annotateUnusedResults(func::FuncOp func) {
  WalkResult result = func.walk([](Operation *op) {
    if (isa<shard::ShardOp, shard::ShardingOp>(op))
      return WalkResult::advance();
    for (OpResult value : op->getResults()) {
      if (!value.use_empty() || !isa<RankedTensorType>(value.getType()))
        continue;
      Value sharding;
      for (OpResult sibling : op->getResults())
        if (sibling.getType() == value.getType())
          if ((sharding = getResultSharding(sibling)))
            break;
      bool annotated = llvm::any_of(op->getResults(), [](Value sibling) {
        return bool(getResultSharding(sibling));
      });
      if (!sharding && !annotated)
        continue;
      if (!sharding) {
        op->emitOpError() << "result #" << value.getResultNumber()
                          << " is unused and has no sharding; sharding "
                             "partition needs one (use or annotate it)";
        return WalkResult::interrupt();
      }
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      shard::ShardOp::create(b, op->getLoc(), value, sharding);
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Routes the other uses of a value whose definition is annotated through
/// the annotation (`shard.shard` is the identity on values).
void routeUsesThroughAnnotations(func::FuncOp func) {
  DominanceInfo dominance(func);
  func.walk([&](shard::ShardOp op) {
    if (op.getAnnotateForUsers())
      return;
    Value source = op.getSrc();
    source.replaceUsesWithIf(op.getResult(), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return !isa<shard::ShardOp>(user) &&
             dominance.properlyDominates(op.getOperation(), user);
    });
  });
}

/// Clones constants used inside a linalg op's body but defined outside it
/// into the body; any other outside value in the body of a reduction gets a
/// diagnostic (partition of a split reduction cannot take it).
LogicalResult internalizeBodyCaptures(func::FuncOp func) {
  WalkResult result = func.walk([](linalg::LinalgOp op) {
    Region &body = op->getRegion(0);
    bool hasReduction = op.getNumReductionLoops() > 0;
    WalkResult inner = body.walk([&](Operation *nested) {
      for (OpOperand &operand : nested->getOpOperands()) {
        Value value = operand.get();
        if (body.isAncestor(value.getParentRegion()))
          continue;
        Operation *def = value.getDefiningOp();
        if (def && matchPattern(def, m_Constant())) {
          OpBuilder b = OpBuilder::atBlockBegin(&body.front());
          operand.set(b.clone(*def)->getResult(0));
          continue;
        }
        if (!hasReduction)
          continue;
        op->emitOpError()
            << "uses a value defined outside its body, which sharding "
               "partition cannot handle in a reduction; pass it as an input "
               "operand";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return inner.wasInterrupted() ? WalkResult::interrupt()
                                  : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Checks the annotations left by propagation: every split dim static and
/// even over the processes of its grid axes, no explicit shard offsets.
LogicalResult verifySplits(func::FuncOp func,
                           SymbolTableCollection &symbolTable) {
  WalkResult result = func.walk([&](shard::ShardOp op) {
    auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!type)
      return WalkResult::advance();
    shard::Sharding sharding(op.getSharding());
    shard::GridOp grid =
        shard::getGrid(op, sharding.getGridAttr(), symbolTable);
    if (!grid) {
      op.emitOpError() << "refers to an unknown grid "
                       << sharding.getGridAttr();
      return WalkResult::interrupt();
    }
    if (!sharding.getStaticShardedDimsOffsets().empty() ||
        !sharding.getDynamicShardedDimsOffsets().empty()) {
      op.emitOpError() << "has explicit sharded_dims_offsets; only even "
                          "splits are supported";
      return WalkResult::interrupt();
    }
    ArrayRef<int64_t> gridShape = grid.getShape();
    for (auto [dim, axes] : llvm::enumerate(sharding.getSplitAxes())) {
      if (axes.empty())
        continue;
      if (dim >= static_cast<size_t>(type.getRank())) {
        op.emitOpError() << "splits dim " << dim << " of a rank-"
                         << type.getRank() << " tensor";
        return WalkResult::interrupt();
      }
      int64_t processes = 1;
      for (shard::GridAxis axis : axes.asArrayRef()) {
        if (ShapedType::isDynamic(gridShape[axis])) {
          op.emitOpError() << "splits over axis " << axis << " of grid @"
                           << grid.getSymName() << ", which has a dynamic size";
          return WalkResult::interrupt();
        }
        processes *= gridShape[axis];
      }
      int64_t size = type.getDimSize(dim);
      if (ShapedType::isDynamic(size)) {
        op.emitOpError() << "splits dynamic dim " << dim << " of " << type
                         << " over " << processes
                         << " processes; split dims must be static";
        return WalkResult::interrupt();
      }
      if (size % processes != 0) {
        op.emitOpError() << "splits dim " << dim << " of " << type
                         << " unevenly: " << size << " over " << processes
                         << " processes";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// How an argument or result of a partitioned function is split: the
/// grid axes of each dim (no grid: not a ranked tensor or not annotated).
struct BoundarySharding {
  FlatSymbolRefAttr grid;
  SmallVector<SmallVector<shard::GridAxis>> axesOfDim;
};

BoundarySharding getBoundarySharding(Value sharding) {
  BoundarySharding result;
  shard::Sharding attrs(sharding);
  result.grid = attrs.getGridAttr();
  for (shard::GridAxesAttr axes : attrs.getSplitAxes())
    result.axesOfDim.emplace_back(axes.asArrayRef());
  return result;
}

/// The shardings of `func`'s arguments and results after propagation.
struct FunctionBoundary {
  SmallVector<BoundarySharding> arguments, results;
};

FunctionBoundary getFunctionBoundary(func::FuncOp func) {
  FunctionBoundary boundary;
  for (BlockArgument arg : func.getArguments()) {
    BoundarySharding sharding;
    for (Operation *user : arg.getUsers())
      if (auto shardOp = dyn_cast<shard::ShardOp>(user)) {
        sharding = getBoundarySharding(shardOp.getSharding());
        break;
      }
    boundary.arguments.push_back(sharding);
  }
  boundary.results.resize(func.getNumResults());
  func.walk([&](func::ReturnOp ret) {
    for (auto [i, operand] : llvm::enumerate(ret.getOperands()))
      if (auto shardOp = operand.getDefiningOp<shard::ShardOp>())
        boundary.results[i] = getBoundarySharding(shardOp.getSharding());
  });
  return boundary;
}

/// Converts `value` between its global type and the local shard of
/// `sharding`: `shard.all_slice` per split dim towards the shard (each
/// process keeps its own piece, no communication), `shard.all_gather`
/// back.
Value convertAtBoundary(OpBuilder &b, Location loc, Value value,
                        const BoundarySharding &sharding, bool toLocal,
                        SymbolTableCollection &symbolTable, Operation *from) {
  if (!sharding.grid)
    return value;
  shard::GridOp grid = shard::getGrid(from, sharding.grid, symbolTable);
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (auto [dim, axes] : llvm::enumerate(sharding.axesOfDim)) {
    if (axes.empty())
      continue;
    int64_t processes = 1;
    for (shard::GridAxis axis : axes)
      processes *= grid.getShape()[axis];
    APInt axisAttr(64, dim);
    if (toLocal) {
      shape[dim] /= processes;
      value = shard::AllSliceOp::create(b, loc, type.clone(shape),
                                        sharding.grid.getValue(), axes, value,
                                        axisAttr);
    } else {
      shape[dim] *= processes;
      value = shard::AllGatherOp::create(b, loc, type.clone(shape),
                                         sharding.grid.getValue(), axes, value,
                                         axisAttr);
    }
  }
  return value;
}

/// Callers outside the partitioned functions keep the global view: each
/// call to a partitioned function passes its process's shard of every
/// argument and gathers every split result.
void adaptCalls(ModuleOp module,
                const llvm::DenseMap<StringAttr, FunctionBoundary> &bounds,
                SymbolTableCollection &symbolTable) {
  module.walk([&](func::CallOp call) {
    auto it = bounds.find(call.getCalleeAttr().getAttr());
    if (it == bounds.end())
      return;
    const FunctionBoundary &boundary = it->second;
    OpBuilder b(call);
    for (auto [i, operand] : llvm::enumerate(call->getOpOperands()))
      if (i < boundary.arguments.size())
        operand.set(convertAtBoundary(b, call.getLoc(), operand.get(),
                                      boundary.arguments[i], true, symbolTable,
                                      call));
    b.setInsertionPointAfter(call);
    for (auto [i, result] : llvm::enumerate(call.getResults())) {
      if (i >= boundary.results.size() || !boundary.results[i].grid)
        continue;
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : result.getUses())
        uses.push_back(&use);
      auto callee = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      result.setType(callee.getResultTypes()[i]);
      Value global =
          convertAtBoundary(b, call.getLoc(), result, boundary.results[i],
                            /*toLocal=*/false, symbolTable, call);
      for (OpOperand *use : uses)
        use->set(global);
    }
  });
}

struct NormShardPartitionPass
    : public norm::impl::NormShardPartitionPassBase<NormShardPartitionPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (holdsShardAnnotations(func))
        funcs.push_back(func);

    SymbolTableCollection symbolTable;
    llvm::DenseMap<StringAttr, FunctionBoundary> boundaries;
    for (func::FuncOp func : funcs) {
      if (failed(internalizeBodyCaptures(func)))
        return signalPassFailure();
      routeUsesThroughAnnotations(func);

      OpPassManager propagate(func::FuncOp::getOperationName());
      propagate.addPass(norm::createNormSplitSharedInitsPass());
      propagate.addPass(shard::createShardingPropagation());
      if (failed(runPipeline(propagate, func)))
        return signalPassFailure();
      annotateUnshardedArguments(func);
      if (failed(annotateUnusedResults(func)) ||
          failed(verifySplits(func, symbolTable)))
        return signalPassFailure();
      boundaries[func.getSymNameAttr()] = getFunctionBoundary(func);

      OpPassManager partition(func::FuncOp::getOperationName());
      partition.addPass(shard::createPartition());
      if (failed(runPipeline(partition, func)))
        return signalPassFailure();
    }
    adaptCalls(getOperation(), boundaries, symbolTable);
  }
};

} // namespace
