//===- RaiseRewrite.cpp - The rewrite shared by the raises ----------------===//
//
// Detached construction, verification and commit of a raise's replacement,
// and the erasure of the chain it replaces (RaiseRewrite.h).
//
//===----------------------------------------------------------------------===//

#include "RaiseRewrite.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::norm;

DetachedRewrite::~DetachedRewrite() {
  // Users first: an op is erased once nothing uses its results.
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

/// The values `op` uses: its operands and the values its regions capture.
static llvm::SetVector<Value> getUsedValues(Operation *op) {
  llvm::SetVector<Value> used(op->getOperands().begin(),
                              op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  return used;
}

void DetachedRewrite::trackWithProducers(Operation *root) {
  auto isNew = [&](Operation *op) {
    return op && !op->getBlock() && !tracked.contains(op);
  };
  if (!isNew(root))
    return;
  // Producers first (operands before their users), iteratively.
  struct Frame {
    Operation *op;
    SmallVector<Value> used;
    unsigned next = 0;
  };
  SmallVector<Frame> stack;
  llvm::SmallPtrSet<Operation *, 8> onStack{root};
  stack.push_back({root, getUsedValues(root).takeVector()});
  while (!stack.empty()) {
    Frame &frame = stack.back();
    if (frame.next < frame.used.size()) {
      Operation *def = frame.used[frame.next++].getDefiningOp();
      if (isNew(def) && onStack.insert(def).second)
        stack.push_back({def, getUsedValues(def).takeVector()});
      continue;
    }
    tracked.insert(frame.op);
    ops.push_back(frame.op);
    stack.pop_back();
  }
}

Value DetachedRewrite::track(Value value) {
  trackWithProducers(value.getDefiningOp());
  return value;
}

bool DetachedRewrite::isTracked(Operation *op) const {
  return tracked.contains(op);
}

LogicalResult DetachedRewrite::verify(Operation *op, std::string &diagnostic) {
  ScopedDiagnosticHandler handler(op->getContext(), [&](Diagnostic &diag) {
    if (diagnostic.empty())
      diagnostic = diag.str();
    return success();
  });
  return mlir::verify(op);
}

void DetachedRewrite::commit(RewriterBase &rewriter,
                             Operation *insertionPoint) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(insertionPoint);
  for (Operation *op : ops)
    rewriter.insert(op);
  ops.clear();
  tracked.clear();
}

void mlir::norm::eraseReplacedChain(RewriterBase &rewriter, Operation *root,
                                    ValueRange replacements,
                                    ArrayRef<Operation *> chain) {
  llvm::SetVector<Operation *> maybeDead;
  llvm::SmallPtrSet<Operation *, 16> erased;
  auto collectOperands = [&](Operation *op) {
    for (Value value : getUsedValues(op))
      if (Operation *def = value.getDefiningOp())
        maybeDead.insert(def);
  };
  collectOperands(root);
  erased.insert(root);
  if (replacements.empty() && root->use_empty())
    rewriter.eraseOp(root);
  else
    rewriter.replaceOp(root, replacements);

  // The chain's ops, consumers first.
  for (Operation *op : llvm::reverse(chain)) {
    if (erased.contains(op) || !op->use_empty() || !isMemoryEffectFree(op))
      continue;
    collectOperands(op);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
  SmallVector<Operation *> worklist(maybeDead.begin(), maybeDead.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value value : getUsedValues(op))
      if (Operation *def = value.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
}
