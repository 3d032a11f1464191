//===- RaiseRewrite.h - The rewrite shared by the raises --------*- C++ -*-===//
//
// One way for norm-raise's rewrites to change the IR: the replacement is
// built detached from the IR and verified first, so a declined rewrite
// leaves the IR untouched (nothing to roll back); only then is it inserted,
// the chain's result replaced and the chain erased, every change through
// the rewriter, whose listener sees each one (the analyses forget the ops
// erased). The erasure of a replaced chain and of what only it used is one
// function for every raise.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEREWRITE_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEREWRITE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace mlir {
namespace norm {

/// The ops of one replacement, built detached from the IR. The ops not
/// committed when it is destroyed are erased (they were never in the IR).
class DetachedRewrite {
public:
  explicit DetachedRewrite(MLIRContext *context) : builder(context) {}
  DetachedRewrite(const DetachedRewrite &) = delete;
  DetachedRewrite &operator=(const DetachedRewrite &) = delete;
  ~DetachedRewrite();

  /// A builder without insertion point: what it creates is detached, and
  /// must be tracked.
  OpBuilder &getBuilder() { return builder; }

  /// Tracks an op created detached, and before it the detached ops it uses
  /// that are not tracked yet (so a helper that builds several ops needs
  /// its result tracked only).
  template <typename OpTy>
  OpTy track(OpTy op) {
    trackWithProducers(op.getOperation());
    return op;
  }
  Operation *track(Operation *op) {
    trackWithProducers(op);
    return op;
  }
  /// Tracks the op defining `value`, with its producers, when it is
  /// detached; returns `value`.
  Value track(Value value);

  ArrayRef<Operation *> getOps() const { return ops; }
  bool isTracked(Operation *op) const;

  /// Verifies `op` (a tracked op) without printing: the first diagnostic
  /// goes to `diagnostic`.
  static LogicalResult verify(Operation *op, std::string &diagnostic);

  /// Inserts the tracked ops before `insertionPoint` through `rewriter`, in
  /// the order they were tracked; they are the IR's from then on.
  void commit(RewriterBase &rewriter, Operation *insertionPoint);

private:
  void trackWithProducers(Operation *op);

  OpBuilder builder;
  /// Operands first.
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> tracked;
};

/// Replaces `root` by `replacements` (erases it when they are empty and it
/// has no uses), then erases the ops of `chain` (the
/// ops that computed root, in program order) that are left without uses and
/// have no memory effects, consumers first, and then every op that only the
/// erased ops used and that is trivially dead (inits, constants, captured
/// scalars). Everything goes through `rewriter`.
void eraseReplacedChain(RewriterBase &rewriter, Operation *root,
                        ValueRange replacements, ArrayRef<Operation *> chain);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEREWRITE_H
