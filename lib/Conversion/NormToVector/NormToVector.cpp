//===- NormToVector.cpp - Lower norm ops to vector row loops ----*- C++ -*-===//
//
// norm-lower-cpu: every norm op becomes an scf.forall over rows whose body
// sweeps the row with vector ops on tensors (statistics in registers, one
// horizontal reduction per statistic, a masked tail step). After
// bufferization, norm-forall-to-loops (lib/Transforms) picks sequential or
// parallel loops for it.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToVector/NormToVector.h"
#include "RowLoopBuilder.h"
#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Support/HostCPU.h"
#include "norm/Support/ReshapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLOWERCPUPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

//===----------------------------------------------------------------------===//
// Patterns and passes
//===----------------------------------------------------------------------===//

namespace {

struct NormLowerCPUPass
    : public norm::impl::NormLowerCPUPassBase<NormLowerCPUPass> {
  using NormLowerCPUPassBase::NormLowerCPUPassBase;
  void runOnOperation() override;
};

} // namespace

namespace {

/// Rewrites a norm op (with the norm.quantize of its y, when fusable) into
/// vector row loops.
struct NormToVectorPattern : public OpInterfaceRewritePattern<NormOpInterface> {
  NormToVectorPattern(MLIRContext *context,
                      const NormLowerCPUPassOptions &options)
      : OpInterfaceRewritePattern(context), options(options) {
    setDebugName("NormOpToVectorLoops");
  }

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    QuantizeOp quant = getFusableQuantizeOp(op);
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToVectorLoops(rewriter, op, options, quant);
    if (failed(replacements))
      return rewriter.notifyMatchFailure(op, "the lowering does not apply");
    replaceNormOpAndQuantize(rewriter, op, quant, *replacements);
    return success();
  }

  NormLowerCPUPassOptions options;
};

} // namespace

void mlir::norm::populateNormToVectorPatterns(
    RewritePatternSet &patterns, const NormLowerCPUPassOptions &options) {
  patterns.add<NormToVectorPattern>(patterns.getContext(), options);
  // A gradient op: row loops where they apply; the linalg decomposition, at
  // a lower benefit, takes the others.
  patterns.add<LowerGradOpPattern>(
      patterns.getContext(), "GradOpToVectorLoops",
      [options](RewriterBase &rewriter, NormGradOpInterface op) {
        return lowerGradOpToVectorLoops(rewriter, op, options);
      },
      /*benefit=*/2);
  // A norm.quantize that no norm op took in (every form, block-scaled
  // included): its own row loop.
  patterns.add<LowerOpPattern<QuantizeOp>>(
      patterns.getContext(), "QuantizeOpToVectorLoops",
      [options](RewriterBase &rewriter, QuantizeOp op) {
        return lowerQuantizeOpToVectorLoops(rewriter, op, options);
      });
}

void NormLowerCPUPass::runOnOperation() {
  if (!isValidVectorWidthOption(vectorWidth)) {
    getOperation()->emitError("norm-lower-cpu: option 'vector-width' must be ")
        << kVectorWidthExpectation << ", got " << unsigned(vectorWidth);
    return signalPassFailure();
  }
  if (threads < 1) {
    getOperation()->emitError(
        "norm-lower-cpu: option 'threads' must be >= 1, got ")
        << unsigned(threads);
    return signalPassFailure();
  }
  if (parallelThreshold < 0) {
    getOperation()->emitError("norm-lower-cpu: option 'parallel-threshold' "
                              "must be >= 0, got ")
        << int64_t(parallelThreshold);
    return signalPassFailure();
  }
  if (nontemporalThreshold < -1) {
    getOperation()->emitError("norm-lower-cpu: option 'nontemporal-threshold' "
                              "must be >= 0, or -1 for never, got ")
        << int64_t(nontemporalThreshold);
    return signalPassFailure();
  }
  NormLowerCPUPassOptions options;
  options.vectorWidth = vectorWidth;
  options.threads = threads;
  options.parallelThreshold = parallelThreshold;
  options.nontemporalThreshold = nontemporalThreshold;
  options.nativeBF16 = nativeBF16;

  bool hasNormOps = false;
  getOperation()->walk([&](Operation *op) {
    if (!isa<NormOpInterface, QuantizeOp>(op) && !isGradientOp(op))
      return WalkResult::advance();
    hasNormOps = true;
    return WalkResult::interrupt();
  });
  if (!hasNormOps)
    return;
  RewritePatternSet lowering(&getContext());
  populateNormToVectorPatterns(lowering, options);
  // The gradient ops the row loops do not cover (dyt_grad, scalar weights,
  // several normalized dims): their linalg decomposition
  // (docs/Passes.md#norm-lower-cpu).
  populateGradToLinalgPatterns(lowering);
  if (failed(applyNormLoweringPatterns(getOperation(), std::move(lowering),
                                       "failed to lower to vector loops")))
    return signalPassFailure();

  // Fold the index arithmetic and constants the row loops were built with
  // (static trip counts, masks), as the greedy driver does with no patterns.
  if (failed(applyPatternsGreedily(getOperation(), FrozenRewritePatternSet())))
    return signalPassFailure();
}
