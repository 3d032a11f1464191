//===- CollapseDestinations.cpp - Results in place through reshapes -------===//
//
// norm-collapse-destinations: a result computed on a collapsed view and
// expanded back is materialized, unexpanded, into the collapsed
// destination, so that eliminate-empty-tensors (which does not look through
// tensor.expand_shape) lets the computation write the destination in place.
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMCOLLAPSEDESTINATIONSPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

namespace {

/// materialize_in_destination (expand_shape %x) in %memref
///   -> materialize_in_destination %x in (collapse_shape %memref)
struct MaterializeExpandIntoCollapsedDestination
    : public OpRewritePattern<bufferization::MaterializeInDestinationOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(bufferization::MaterializeInDestinationOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand)
      return rewriter.notifyMatchFailure(op, "source is not an expand_shape");
    auto destType = dyn_cast<MemRefType>(op.getDest().getType());
    if (!destType)
      return rewriter.notifyMatchFailure(op, "destination is a tensor");
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(destType, groups))
      return rewriter.notifyMatchFailure(op, "destination does not collapse");
    Value collapsed = memref::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                      op.getDest(), groups);
    if (cast<MemRefType>(collapsed.getType()).getShape() !=
        expand.getSrcType().getShape()) {
      rewriter.eraseOp(collapsed.getDefiningOp());
      return rewriter.notifyMatchFailure(op, "collapsed shape differs");
    }
    auto replacement = bufferization::MaterializeInDestinationOp::create(
        rewriter, op.getLoc(), Type(), expand.getSrc(), collapsed);
    replacement.setRestrict(op.getRestrict());
    replacement.setWritable(op.getWritable());
    rewriter.eraseOp(op);
    return success();
  }
};

struct NormCollapseDestinationsPass
    : public norm::impl::NormCollapseDestinationsPassBase<
          NormCollapseDestinationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    norm::populateCollapseDestinationsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::norm::populateCollapseDestinationsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MaterializeExpandIntoCollapsedDestination>(
      patterns.getContext());
}
