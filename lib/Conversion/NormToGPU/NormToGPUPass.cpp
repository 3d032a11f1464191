//===- NormToGPUPass.cpp - The norm-lower-gpu pass ------------*- C++ -*-===//
//
// norm-lower-gpu: the patterns (norm ops with a fused norm.quantize,
// norm.quantize alone, gradient ops) and the pass that applies them.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLOWERGPUPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

//===----------------------------------------------------------------------===//
// Patterns and pass
//===----------------------------------------------------------------------===//

namespace {

struct NormLowerGPUPass
    : public norm::impl::NormLowerGPUPassBase<NormLowerGPUPass> {
  using NormLowerGPUPassBase::NormLowerGPUPassBase;
  void runOnOperation() override;
};

} // namespace

namespace {

/// Rewrites a norm op, with the norm.quantize of its y when it can be
/// fused, into buffers and GPU kernel launches.
struct NormToGPUPattern : public OpInterfaceRewritePattern<NormOpInterface> {
  NormToGPUPattern(MLIRContext *context, const NormLowerGPUPassOptions &options)
      : OpInterfaceRewritePattern(context), options(options) {
    setDebugName("NormOpToGPUKernel");
  }

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    QuantizeOp quant = getFusableQuantizeOp(op);
    if (quant && !isQuantizeFusedOnGPU(quant, options))
      quant = {};
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToGPUKernel(rewriter, op, options, quant);
    if (failed(replacements))
      return rewriter.notifyMatchFailure(op, "the lowering does not apply");
    replaceNormOpAndQuantize(rewriter, op, quant, *replacements);
    return success();
  }

  NormLowerGPUPassOptions options;
};

} // namespace

void mlir::norm::populateNormToGPUPatterns(
    RewritePatternSet &patterns, const NormLowerGPUPassOptions &options) {
  patterns.add<NormToGPUPattern>(patterns.getContext(), options);
  // A norm.quantize that no norm kernel takes in: its own kernel.
  patterns.add<LowerOpPattern<QuantizeOp>>(
      patterns.getContext(), "QuantizeOpToGPUKernel",
      [options](RewriterBase &rewriter, QuantizeOp op) {
        return lowerQuantizeOpToGPUKernel(rewriter, op, options);
      });
  // A gradient op: buffers and its two kernel launches.
  patterns.add<LowerGradOpPattern>(
      patterns.getContext(), "GradOpToGPUKernels",
      [options](RewriterBase &rewriter, NormGradOpInterface op) {
        return lowerGradOpToGPUKernels(rewriter, op, options);
      });
}

void NormLowerGPUPass::runOnOperation() {
  if (maxBlockSize < kWarpSize || maxBlockSize > 1024 ||
      maxBlockSize % kWarpSize != 0) {
    getOperation()->emitError("norm-lower-gpu: option 'max-block-size' must "
                              "be a multiple of 32 in [32, 1024], got ")
        << static_cast<int64_t>(maxBlockSize);
    return signalPassFailure();
  }
  if (warpMaxElements < 0) {
    getOperation()->emitError("norm-lower-gpu: option 'warp-max-elements' "
                              "must be >= 0, got ")
        << static_cast<int64_t>(warpMaxElements);
    return signalPassFailure();
  }
  if (splitMinElements < 0) {
    getOperation()->emitError("norm-lower-gpu: option 'split-min-elements' "
                              "must be >= 0, got ")
        << static_cast<int64_t>(splitMinElements);
    return signalPassFailure();
  }
  NormLowerGPUPassOptions options;
  options.memory = memory;
  options.warpMaxElements = warpMaxElements;
  options.maxBlockSize = maxBlockSize;
  options.splitMinElements = splitMinElements;
  options.fastTanh = fastTanh;
  options.fp8Cvt = fp8Cvt;
  options.fp4Cvt = fp4Cvt;

  bool blocked = false;
  getOperation()->walk([&](NormOpInterface op) {
    if (!op.getReturnStatsFlag() || op.getNormalizedDim() > 0)
      return;
    op->emitError("norm-lower-gpu: 'return_stats' over every dim of x (rank-0 "
                  "statistics) has no GPU kernel (norm-to-linalg decomposes "
                  "the op with its statistics for the host)");
    blocked = true;
  });
  getOperation()->walk([&](NormGradOpInterface op) {
    std::string reason = getGPUGradBlocker(op);
    if (reason.empty())
      return;
    op->emitError("norm-lower-gpu: '")
        << op->getName() << "' has no GPU kernel here: " << reason
        << " (norm-to-linalg decomposes it for the host)";
    blocked = true;
  });
  // memory=device: results stay in device memory, so a materialization into
  // a memref is a device-to-device write or copy, which needs a contiguous
  // memref.
  if (options.memory == GPUMemory::Device) {
    getOperation()->walk([&](bufferization::MaterializeInDestinationOp op) {
      Operation *producer = op.getSource().getDefiningOp();
      if (!producer || !(isa<NormOpInterface, QuantizeOp>(producer) ||
                         isGradientOp(producer)))
        return;
      auto destType = dyn_cast<MemRefType>(op.getDest().getType());
      if (!destType || destType.getLayout().isIdentity())
        return;
      op.emitError("norm-lower-gpu: with memory=device, a result of '")
          << producer->getName()
          << "' can be materialized only into a memref with the identity "
             "layout (contiguous), got "
          << destType;
      blocked = true;
    });
  }
  if (blocked)
    return signalPassFailure();

  RewritePatternSet patterns(&getContext());
  populateNormToGPUPatterns(patterns, options);
  if (failed(applyNormLoweringPatterns(getOperation(), std::move(patterns),
                                       "failed to lower to a GPU kernel")))
    return signalPassFailure();
}
