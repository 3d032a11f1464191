//===- PatternDriver.cpp - Apply a pattern set once per op ----------------===//
//
// applyPatternsOnce: one visit per op, in the caller's order, with
// upstream's PatternApplicator choosing the pattern; and the lowering
// passes' use of it.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Rewrite/PatternApplicator.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace {
/// Remembers the erased ops, so that they are not visited, and forwards
/// every notification to the caller's listener.
struct ErasedOpsListener : public RewriterBase::ForwardingListener {
  using ForwardingListener::ForwardingListener;

  void notifyOperationErased(Operation *op) override {
    erased.insert(op);
    ForwardingListener::notifyOperationErased(op);
  }

  llvm::DenseSet<Operation *> erased;
};
} // namespace

unsigned
mlir::norm::applyPatternsOnce(ArrayRef<Operation *> ops,
                              const FrozenRewritePatternSet &patterns,
                              RewriterBase::Listener *listener,
                              function_ref<void(Operation *, bool)> onVisit) {
  if (ops.empty())
    return 0;
  ErasedOpsListener erasedOps(listener);
  PatternRewriter rewriter(ops.front()->getContext());
  rewriter.setListener(&erasedOps);
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  unsigned numRewritten = 0;
  for (Operation *op : ops) {
    if (erasedOps.erased.contains(op))
      continue;
    rewriter.setInsertionPoint(op);
    bool rewritten = succeeded(applicator.matchAndRewrite(op, rewriter));
    numRewritten += rewritten;
    if (onVisit)
      onVisit(op, rewritten);
  }
  return numRewritten;
}

LogicalResult mlir::norm::applyNormLoweringPatterns(
    Operation *root, const FrozenRewritePatternSet &patterns, StringRef error) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<NormOpInterface, QuantizeOp>(op) || isGradientOp(op))
      ops.push_back(op);
  });
  applyPatternsOnce(ops, patterns);
  bool failed = false;
  root->walk([&](Operation *op) {
    if (!isa<NormOpInterface, QuantizeOp>(op) && !isGradientOp(op))
      return;
    op->emitError(error);
    failed = true;
  });
  return failure(failed);
}

void mlir::norm::replaceNormOpAndQuantize(RewriterBase &rewriter,
                                          NormOpInterface op, QuantizeOp quant,
                                          ArrayRef<Value> replacements) {
  if (!quant) {
    rewriter.replaceOp(op, replacements);
    return;
  }
  unsigned numQuantResults = quant->getNumResults();
  rewriter.replaceOp(quant, replacements.take_front(numQuantResults));
  // Then residual_out and the statistics, in the op's order.
  unsigned next = numQuantResults;
  for (Value result : op->getResults().drop_front())
    rewriter.replaceAllUsesWith(result, replacements[next++]);
  rewriter.eraseOp(op);
}
