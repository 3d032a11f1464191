//===- Pipelines.cpp - norm-cpu-pipeline ------------------------*- C++ -*-===//
//
// The whole-module CPU pipeline: norm lowering, TOSA and tensor-level
// elementwise ops to linalg, bufferization, loops, and the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "norm/Pipelines/Pipelines.h"
#include "norm/Conversion/Passes.h"

#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::norm;

namespace {
/// Stands in for a pipeline that cannot be built (bad options, wrong anchor):
/// fails with `message` at the op it runs on instead of running a partial
/// pipeline.
struct PipelineErrorPass
    : public PassWrapper<PipelineErrorPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PipelineErrorPass)
  explicit PipelineErrorPass(std::string message)
      : message(std::move(message)) {}
  StringRef getArgument() const final { return "norm-pipeline-error"; }
  void runOnOperation() override {
    getOperation()->emitError(message);
    signalPassFailure();
  }
  std::string message;
};
} // namespace

/// Appends a textual pipeline (upstream pass names and options) to `pm`.
static LogicalResult appendPipeline(OpPassManager &pm, StringRef text) {
  return parsePassPipeline(text, pm, llvm::errs());
}

LogicalResult
mlir::norm::buildNormCPUPipeline(OpPassManager &pm,
                                 const NormCPUPipelineOptions &options) {
  auto fail = [&](const Twine &message) {
    pm.addPass(std::make_unique<PipelineErrorPass>(message.str()));
    return failure();
  };
  if (pm.getOpAnchorName() != ModuleOp::getOperationName() &&
      pm.getOpAnchorName() != OpPassManager::getAnyOpAnchorName())
    return fail("norm-cpu-pipeline runs on builtin.module, not on '" +
                pm.getOpAnchorName() + "'");
  if (options.threads < 1)
    return fail("norm-cpu-pipeline: option 'threads' must be >= 1, got " +
                Twine(unsigned(options.threads)));
  if (options.vectorWidth != 0 &&
      (options.vectorWidth < 64 || options.vectorWidth > 2048 ||
       !llvm::isPowerOf2_32(options.vectorWidth)))
    return fail("norm-cpu-pipeline: option 'vector-width' must be 0 or a "
                "power of two in [64, 2048], got " +
                Twine(unsigned(options.vectorWidth)));

  // Frontend forms: TOSA and tensor-level arith/math become linalg.
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
  if (failed(appendPipeline(pm, "func.func(tosa-to-arith,tosa-to-tensor)")))
    return failure();

  // Norm ops: direct vector row loops or the portable decomposition.
  if (options.lowering == CPULowering::Direct) {
    NormLowerCPUPassOptions lowerOptions;
    lowerOptions.vectorWidth = options.vectorWidth;
    lowerOptions.threads = options.threads;
    pm.addNestedPass<func::FuncOp>(createNormLowerCPUPass(lowerOptions));
  } else {
    pm.addNestedPass<func::FuncOp>(createNormToLinalgPass());
  }

  bool parallelRows = options.threads > 1;
  std::string tail = llvm::formatv(
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops),"
      "canonicalize,cse,eliminate-empty-tensors,"
      "one-shot-bufferize{{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map "
      "unknown-type-conversion=identity-layout-map},"
      "buffer-deallocation-pipeline,"
      "func.func(norm-forall-to-loops{{threads={0}},{1}),{2}"
      "func.func(arith-emulate-unsupported-floats{{source-types=bf16,f16 "
      "target-type=f32}),"
      "math-expand-ops{{ops=rsqrt,tanh},"
      "arith-expand{{include-bf16=true},"
      "expand-strided-metadata,"
      "lower-affine,"
      "finalize-memref-to-llvm,"
      "convert-scf-to-cf,"
      "convert-vector-to-llvm,"
      "convert-math-to-llvm,convert-math-to-libm,"
      "convert-to-llvm,"
      "reconcile-unrealized-casts,"
      "norm-store-narrow-floats-as-ints,canonicalize",
      unsigned(options.threads),
      parallelRows ? "convert-linalg-to-parallel-loops"
                   : "convert-linalg-to-loops",
      parallelRows ? llvm::formatv("convert-scf-to-openmp{{num-threads={0}},",
                                   unsigned(options.threads))
                         .str()
                   : std::string());
  return appendPipeline(pm, tail);
}

void mlir::norm::registerNormPipelines() {
  PassPipelineRegistration<NormCPUPipelineOptions>(
      "norm-cpu-pipeline",
      "Lower a module of norm and upstream tensor-level ops to the LLVM "
      "dialect for the CPU (runnable by mlir-runner)",
      [](OpPassManager &pm, const NormCPUPipelineOptions &options) {
        // Invalid options add a pass that reports them and fails.
        (void)buildNormCPUPipeline(pm, options);
      });
}
