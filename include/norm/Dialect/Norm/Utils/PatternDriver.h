//===- PatternDriver.h - Apply a pattern set once per op --------*- C++ -*-===//
//
// The one driver the norm passes run their pattern sets with: norm-raise,
// norm-fuse-residual and norm-fold-matmul-weights (applyPatternsOnce), and
// the lowerings norm-to-linalg, norm-lower-cpu and norm-lower-gpu
// (applyNormLoweringPatterns, which also reports a norm op left over).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_PATTERNDRIVER_H
#define NORM_DIALECT_NORM_UTILS_PATTERNDRIVER_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <functional>

namespace mlir {
namespace norm {

/// Visits `ops` once each, in the given order, and rewrites each with the
/// first pattern of `patterns` that applies (highest benefit first). Ops
/// erased by an earlier rewrite are skipped; ops a rewrite creates are not
/// visited; nothing is folded and no dead op is removed.
///
/// This is what these passes need and `applyPatternsGreedily` does not do:
/// each candidate is tried once, so the pass counts every declined
/// candidate once and its compile time stays linear in the IR (the greedy
/// driver revisits the neighbours of every rewrite until a fixpoint); and
/// the IR around the candidates stays as it was (the greedy driver folds
/// and erases every dead op it meets). The pattern sets work with either.
///
/// `listener` sees every change and every match failure; `onVisit` is
/// called after each visit with the op (which a successful rewrite may have
/// erased: compare the pointer only) and whether it was rewritten. Returns
/// the number of ops rewritten.
unsigned applyPatternsOnce(
    ArrayRef<Operation *> ops, const FrozenRewritePatternSet &patterns,
    RewriterBase::Listener *listener = nullptr,
    function_ref<void(Operation *, bool rewritten)> onVisit = nullptr);

/// The pattern of each norm lowering (to linalg, to vector loops, to GPU
/// kernels): rewrites an op of type `OpTy` with `lower`, which returns the
/// values replacing its results or fails (the op is then left as it is).
/// `BaseT` is the pattern base matching `OpTy` (an op interface needs
/// OpInterfaceRewritePattern). Where two lowerings of one op type are in a
/// set, the higher `benefit` is tried first.
template <typename OpTy, typename BaseT = OpRewritePattern<OpTy>>
class LowerOpPattern : public BaseT {
public:
  using LowerFn =
      std::function<FailureOr<SmallVector<Value>>(RewriterBase &, OpTy)>;

  LowerOpPattern(MLIRContext *context, StringRef debugName, LowerFn lower,
                 PatternBenefit benefit = 1)
      : BaseT(context, benefit), lower(std::move(lower)) {
    this->setDebugName(debugName);
  }

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> replacements = lower(rewriter, op);
    if (failed(replacements))
      return rewriter.notifyMatchFailure(op, "the lowering does not apply");
    rewriter.replaceOp(op, *replacements);
    return success();
  }

private:
  LowerFn lower;
};

/// LowerOpPattern of every norm op.
using LowerNormOpPattern =
    LowerOpPattern<NormOpInterface, OpInterfaceRewritePattern<NormOpInterface>>;

/// LowerOpPattern for every gradient op.
using LowerGradOpPattern =
    LowerOpPattern<NormGradOpInterface,
                   OpInterfaceRewritePattern<NormGradOpInterface>>;

/// Replaces `op`, lowered together with `quant` (a norm.quantize of its y,
/// or null), by `replacements`: those of `op`'s results without `quant`;
/// with it, those of `quant`'s results followed by `op`'s residual_out and
/// statistics (`y` then has no other use). Both ops are erased.
void replaceNormOpAndQuantize(RewriterBase &rewriter, NormOpInterface op,
                              QuantizeOp quant, ArrayRef<Value> replacements);

/// Applies `patterns` once to every norm op (and norm.quantize) nested under
/// `root` (applyPatternsOnce, in program order), then reports `error` at every
/// norm op still there. Fails when one is.
LogicalResult applyNormLoweringPatterns(Operation *root,
                                        const FrozenRewritePatternSet &patterns,
                                        StringRef error);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_PATTERNDRIVER_H
