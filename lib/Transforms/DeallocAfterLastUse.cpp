//===- DeallocAfterLastUse.cpp - Free local buffers after last use --------===//
//
// norm-dealloc-after-last-use: a memref.alloc whose aliases stay in its block
// is freed right after the last op of the block that uses it, before the
// ownership-based deallocation pipeline sees the function.
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMDEALLOCAFTERLASTUSEPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

/// The last op of `alloc`'s block that uses the allocation or one of its
/// aliases (the memref results of every op that takes one), or null when an
/// alias may leave the block (a terminator takes it, or it is stored as a
/// value) or is freed already.
static Operation *getLastLocalUse(memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *last = nullptr;
  SmallVector<Value> worklist{alloc.getResult()};
  DenseSet<Value> visited{alloc.getResult()};
  while (!worklist.empty()) {
    Value alias = worklist.pop_back_val();
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && use.get() == store.getValueToStore())
        return nullptr;
      // Already freed, or back in the tensor world.
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (isa<bufferization::ToTensorOp>(user) ||
          (effects && effects.getEffectOnValue<MemoryEffects::Free>(alias)))
        return nullptr;
      Operation *local = block->findAncestorOpInBlock(*user);
      if (!local)
        return nullptr;
      if (!last || last->isBeforeInBlock(local))
        last = local;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) &&
            visited.insert(result).second)
          worklist.push_back(result);
    }
  }
  return last;
}

namespace {
struct NormDeallocAfterLastUsePass
    : public norm::impl::NormDeallocAfterLastUsePassBase<
          NormDeallocAfterLastUsePass> {
  void runOnOperation() override {
    StringRef manual = bufferization::BufferizationDialect::kManualDeallocation;
    // Allocations of sizes known statically (constants, dims of static
    // memrefs) are made static first, as the canonicalizer that starts the
    // deallocation pipeline would do: it replaces them with new ops, which
    // would not carry the marks.
    SmallVector<Operation *> dynamicAllocs;
    getOperation()->walk([&](memref::AllocOp alloc) {
      if (alloc.getDynamicSizes().empty())
        return;
      for (Value size : alloc.getDynamicSizes())
        if (Operation *producer = size.getDefiningOp())
          dynamicAllocs.push_back(producer);
      dynamicAllocs.push_back(alloc);
    });
    if (!dynamicAllocs.empty()) {
      RewritePatternSet patterns(&getContext());
      memref::AllocOp::getCanonicalizationPatterns(patterns, &getContext());
      memref::DimOp::getCanonicalizationPatterns(patterns, &getContext());
      (void)applyOpPatternsGreedily(
          dynamicAllocs, std::move(patterns),
          GreedyRewriteConfig().setStrictness(
              GreedyRewriteStrictness::ExistingAndNewOps));
    }
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp alloc) {
      if (!alloc->hasAttr(manual))
        allocs.push_back(alloc);
    });
    OpBuilder b(&getContext());
    for (memref::AllocOp alloc : allocs) {
      Operation *last = getLastLocalUse(alloc);
      if (!last)
        continue;
      b.setInsertionPointAfter(last);
      auto dealloc = memref::DeallocOp::create(b, alloc.getLoc(), alloc);
      dealloc->setAttr(manual, b.getUnitAttr());
      alloc->setAttr(manual, b.getUnitAttr());
    }
  }
};
} // namespace
