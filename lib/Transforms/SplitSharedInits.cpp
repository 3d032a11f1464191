//===- SplitSharedInits.cpp - One init per destination ----------*- C++ -*-===//
//
// norm-split-shared-inits: gives every destination-passing-style op its own
// `tensor.empty` / `linalg.fill` init. With LLVM 22, eliminate-empty-tensors
// followed by one-shot-bufferize computes wrong results when one init feeds
// several ops whose results are materialized in different buffers: the init
// is replaced by the first destination, and the other ops then start from
// (and overwrite) that buffer (see
// test/Upstream/eliminate-empty-tensors-shared-init.mlir).
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMSPLITSHAREDINITSPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

/// Whether `use` is written through: the init (destination) operand of a
/// destination-style op, or the initial value of a loop-carried tensor
/// (what a tiled op's destination becomes).
static bool isDestinationUse(OpOperand &use) {
  Operation *owner = use.getOwner();
  // A kernel function of norm-outline-kernels writes its destination
  // arguments (an empty tensor or a fill it was passed).
  if (auto call = dyn_cast<func::CallOp>(owner)) {
    Operation *callee =
        SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr());
    return callee && callee->hasAttr("norm.kernel");
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(owner))
    return dps.isDpsInit(&use);
  if (auto loop = dyn_cast<LoopLikeOpInterface>(owner))
    return llvm::is_contained(loop.getInitsMutable(), use);
  return false;
}

/// Gives each destination use of `op`'s (single) result but the first a
/// clone of `op`, placed right before `op`.
static void splitDestinationUses(RewriterBase &rewriter, Operation *op) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : op->getResult(0).getUses())
    if (isDestinationUse(use))
      uses.push_back(&use);
  if (uses.size() < 2)
    return;
  rewriter.setInsertionPoint(op);
  for (OpOperand *use : llvm::drop_begin(uses)) {
    Operation *clone = rewriter.clone(*op);
    rewriter.modifyOpInPlace(use->getOwner(),
                             [&] { use->set(clone->getResult(0)); });
  }
}

namespace {

struct NormSplitSharedInitsPass
    : public norm::impl::NormSplitSharedInitsPassBase<
          NormSplitSharedInitsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Fills first: their clones share the fill's init, which the second
    // walk then splits.
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills)
      splitDestinationUses(rewriter, fill);
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk(
        [&](tensor::EmptyOp empty) { empties.push_back(empty); });
    for (tensor::EmptyOp empty : empties)
      splitDestinationUses(rewriter, empty);
  }
};

} // namespace
