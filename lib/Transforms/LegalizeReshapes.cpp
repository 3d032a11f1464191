//===- LegalizeReshapes.cpp - Reshapes LLVM 22 can lower --------*- C++ -*-===//
//
// norm-legalize-reshapes: keeps reshapes that LLVM 22's
// expand-strided-metadata cannot lower away from it. An expand_shape whose
// reassociation group holds more than one dynamic dim makes that pass crash
// (a null OpFoldResult in memref.reinterpret_cast's builder,
// llvm/llvm-project#186830). On tensors such a reshape becomes a
// tensor.reshape with its shape as a tensor, which bufferizes to
// memref.reshape; on memrefs, where that needs an identity layout, it is
// rejected with a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Support/ReshapeUtils.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLEGALIZERESHAPESPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

namespace {

/// Rewrites a tensor.expand_shape with several dynamic dims in one
/// reassociation group into a tensor.reshape to the same sizes.
struct ExpandShapeWithDynamicGroupToReshape
    : public OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!norm::hasGroupWithSeveralDynamicDims(op.getResultType(),
                                              op.getReassociationIndices()))
      return rewriter.notifyMatchFailure(
          op, "no reassociation group with several dynamic dims");
    Location loc = op.getLoc();
    Value shape = tensor::FromElementsOp::create(
        rewriter, loc,
        getValueOrCreateConstantIndexOp(rewriter, loc,
                                        op.getMixedOutputShape()));
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, op.getResultType(),
                                                   op.getSrc(), shape);
    return success();
  }
};

struct NormLegalizeReshapesPass
    : public norm::impl::NormLegalizeReshapesPassBase<
          NormLegalizeReshapesPass> {
  void runOnOperation() override;
};

} // namespace

void norm::populateLegalizeReshapesPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandShapeWithDynamicGroupToReshape>(patterns.getContext());
}

void NormLegalizeReshapesPass::runOnOperation() {
  // Memrefs first: a rejected module is left as it was.
  WalkResult result = getOperation()->walk([](memref::ExpandShapeOp op) {
    if (!norm::hasGroupWithSeveralDynamicDims(op.getResultType(),
                                              op.getReassociationIndices()))
      return WalkResult::advance();
    op.emitOpError("has several dynamic dims in one reassociation group, "
                   "which LLVM 22's expand-strided-metadata cannot lower "
                   "(llvm/llvm-project#186830); use memref.reshape, or "
                   "expand a tensor instead");
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return signalPassFailure();

  RewritePatternSet patterns(&getContext());
  norm::populateLegalizeReshapesPatterns(patterns);
  // Only the expand_shape ops themselves: no folding of unrelated IR.
  SmallVector<Operation *> candidates;
  getOperation()->walk(
      [&](tensor::ExpandShapeOp op) { candidates.push_back(op); });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  (void)applyOpPatternsGreedily(candidates, std::move(patterns), config);
}
