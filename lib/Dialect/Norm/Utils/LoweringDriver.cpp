//===- LoweringDriver.cpp - Apply a norm lowering's patterns --------------===//
//
// One application of the patterns to every existing op, then a check that
// no norm op is left.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/LoweringDriver.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

LogicalResult mlir::norm::applyNormLoweringPatterns(
    Operation *root, const FrozenRewritePatternSet &patterns, StringRef error) {
  // Each norm op is rewritten once, and nothing else is touched: no folding,
  // no region simplification, and only the ops that exist now are visited
  // (a lowering may erase users of the op it rewrites, which a plain walk
  // cannot survive).
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps)
      .enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  (void)applyPatternsGreedily(root, patterns, config);
  bool failed = false;
  root->walk([&](NormOpInterface op) {
    op->emitError(error);
    failed = true;
  });
  return failure(failed);
}
