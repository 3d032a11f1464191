//===- Pipelines.cpp - norm-cpu-pipeline and norm-gpu-pipeline --*- C++ -*-===//
//
// The whole-module pipelines: norm lowering, TOSA and tensor-level
// elementwise ops to linalg, bufferization, loops, and the LLVM dialect; for
// the GPU also kernel outlining, NVVM and a gpu.binary.
//
//===----------------------------------------------------------------------===//

#include "norm/Pipelines/Pipelines.h"
#include "norm/Conversion/Passes.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Conversion/ShardToMPI/ShardToMPI.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

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
  if (!isValidVectorWidthOption(options.vectorWidth))
    return fail("norm-cpu-pipeline: option 'vector-width' must be " +
                kVectorWidthExpectation + ", got " +
                Twine(unsigned(options.vectorWidth)));

  // Frontend forms: TOSA and tensor-level arith/math become linalg.
  // Without TOSA's profile validation: torch-mlir computes LayerNorm's
  // statistics in f64, which no TOSA profile allows but linalg lowers fine.
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions(),
                              TosaToLinalgNamedOptions(),
                              /*validationOptions=*/std::nullopt);
  if (failed(appendPipeline(pm, "func.func(tosa-to-arith,tosa-to-tensor)")))
    return failure();

  // Norm ops: direct vector row loops or the portable decomposition.
  if (options.lowering == CPULowering::Direct) {
    NormLowerCPUPassOptions lowerOptions;
    lowerOptions.vectorWidth = options.vectorWidth;
    lowerOptions.threads = options.threads;
    lowerOptions.nativeBF16 = options.nativeBF16;
    pm.addNestedPass<func::FuncOp>(createNormLowerCPUPass(lowerOptions));
  } else {
    pm.addNestedPass<func::FuncOp>(createNormToLinalgPass());
  }
  // Matmuls (next to norms, or fused with them): register-tiled vector code.
  if (options.vectorizeMatmul) {
    NormVectorizeMatmulPassOptions matmulOptions;
    matmulOptions.vectorWidth = options.vectorWidth;
    matmulOptions.threads = options.threads;
    pm.addNestedPass<func::FuncOp>(
        createNormVectorizeMatmulPass(matmulOptions));
  }

  bool parallelRows = options.threads > 1;
  std::string tail = llvm::formatv(
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops),"
      "canonicalize,cse,norm-collapse-destinations,norm-split-shared-inits,"
      "eliminate-empty-tensors,"
      "norm-legalize-reshapes,"
      "one-shot-bufferize{{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map "
      "unknown-type-conversion=identity-layout-map},"
      "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
      "func.func(norm-forall-to-loops{{threads={0} native-bf16={4}},"
      "lower-vector-mask,"
      "convert-vector-to-scf{{full-unroll=true},{1}),{2}"
      "func.func(norm-expand-f8-conversions,"
      "arith-emulate-unsupported-floats{{source-types=bf16,f16 "
      "target-type=f32}),"
      "math-expand-ops{{ops=rsqrt,tanh},"
      "arith-expand{{include-bf16={3}},"
      "expand-strided-metadata,"
      "lower-affine,"
      "finalize-memref-to-llvm,"
      "convert-scf-to-cf,"
      "convert-vector-to-llvm,"
      "convert-math-to-llvm,convert-math-to-libm,"
      "norm-mpi-implementation,"
      "convert-to-llvm,"
      "reconcile-unrealized-casts,"
      "norm-mpi-implementation{{strip=true},"
      "norm-store-narrow-floats-as-ints,canonicalize",
      unsigned(options.threads),
      parallelRows ? "convert-linalg-to-parallel-loops"
                   : "convert-linalg-to-loops",
      parallelRows ? llvm::formatv("convert-scf-to-openmp{{num-threads={0}},",
                                   unsigned(options.threads))
                         .str()
                   : std::string(),
      options.nativeBF16 ? "false" : "true",
      options.nativeBF16 ? "true" : "false");
  return appendPipeline(pm, tail);
}

//===----------------------------------------------------------------------===//
// norm-gpu-pipeline
//===----------------------------------------------------------------------===//

std::string mlir::norm::getDefaultCUDAToolkitPath() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return "/usr/local/cuda";
}

/// Whether `chip` names an NVIDIA GPU architecture the NVPTX backend knows
/// the form of: `sm_` and a number >= 50, with an optional `a` or `f`
/// suffix (sm_90a, sm_100f).
static bool isValidChip(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return false;
  if (!chip.consume_back("a"))
    chip.consume_back("f");
  unsigned number = 0;
  return chip.size() >= 2 && chip.size() <= 3 &&
         llvm::all_of(chip, llvm::isDigit) && !chip.getAsInteger(10, number) &&
         number >= 50;
}

/// The architecture number of a valid `chip` (90 for sm_90a).
static unsigned getChipNumber(StringRef chip) {
  chip.consume_front("sm_");
  if (!chip.consume_back("a"))
    chip.consume_back("f");
  unsigned number = 0;
  (void)chip.getAsInteger(10, number);
  return number;
}

/// Whether `features` is a PTX ISA version feature (`+ptxNN`).
static bool isValidFeatures(StringRef features) {
  if (!features.consume_front("+ptx"))
    return false;
  return features.size() >= 2 && features.size() <= 3 &&
         llvm::all_of(features, llvm::isDigit);
}

LogicalResult
mlir::norm::buildNormGPUPipeline(OpPassManager &pm,
                                 const NormGPUPipelineOptions &options) {
  auto fail = [&](const Twine &message) {
    pm.addPass(std::make_unique<PipelineErrorPass>(message.str()));
    return failure();
  };
  if (pm.getOpAnchorName() != ModuleOp::getOperationName() &&
      pm.getOpAnchorName() != OpPassManager::getAnyOpAnchorName())
    return fail("norm-gpu-pipeline runs on builtin.module, not on '" +
                pm.getOpAnchorName() + "'");
  if (!isValidChip(options.chip))
    return fail("norm-gpu-pipeline: option 'chip' must name an NVIDIA GPU "
                "architecture such as sm_80, sm_90 or sm_90a, got '" +
                options.chip + "'");
  if (!isValidFeatures(options.features))
    return fail("norm-gpu-pipeline: option 'features' must be a PTX ISA "
                "version such as +ptx80, got '" +
                options.features + "'");
  StringRef format = options.format;
  if (format != "isa" && format != "bin" && format != "fatbin")
    return fail("norm-gpu-pipeline: option 'format' must be 'isa', 'bin' or "
                "'fatbin', got '" +
                format + "'");
  StringRef memory = options.memory;
  if (memory != "copy" && memory != "device")
    return fail("norm-gpu-pipeline: option 'memory' must be 'copy' or "
                "'device', got '" +
                memory + "'");
  if (options.splitMinElements < 0)
    return fail("norm-gpu-pipeline: option 'split-min-elements' must be >= "
                "0, got " +
                Twine(int64_t(options.splitMinElements)));
  if (options.optLevel > 3)
    return fail("norm-gpu-pipeline: option 'opt-level' must be in [0, 3], "
                "got " +
                Twine(unsigned(options.optLevel)));

  // The toolkit: libdevice (tanh, f64 math) always, ptxas and fatbinary for
  // binary formats.
  std::string toolkit = options.toolkit.empty() ? getDefaultCUDAToolkitPath()
                                                : options.toolkit.getValue();
  SmallString<256> libdevice(toolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::exists(libdevice))
    return fail("norm-gpu-pipeline: no CUDA toolkit at '" + toolkit +
                "' (missing " + libdevice +
                "); set option 'toolkit' or CUDA_HOME");
  SmallVector<StringRef> tools;
  if (format != "isa")
    tools.push_back("ptxas");
  if (format == "fatbin")
    tools.push_back("fatbinary");
  for (StringRef tool : tools) {
    SmallString<256> path(toolkit);
    llvm::sys::path::append(path, "bin", tool);
    if (!llvm::sys::fs::can_execute(path))
      return fail("norm-gpu-pipeline: format '" + format + "' needs " + path +
                  "; set option 'toolkit' or CUDA_HOME");
  }

  // Frontend forms: TOSA and tensor-level arith/math become linalg.
  // Without TOSA's profile validation: torch-mlir computes LayerNorm's
  // statistics in f64, which no TOSA profile allows but linalg lowers fine.
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions(),
                              TosaToLinalgNamedOptions(),
                              /*validationOptions=*/std::nullopt);
  if (failed(appendPipeline(pm, "func.func(tosa-to-arith,tosa-to-tensor)")))
    return failure();

  // Norm ops: kernels on buffers, still at tensor level.
  NormLowerGPUPassOptions lowerOptions;
  lowerOptions.memory =
      memory == "device" ? GPUMemory::Device : GPUMemory::Copy;
  lowerOptions.splitMinElements = options.splitMinElements;
  // tanh.approx.f32 exists from sm_75 on.
  lowerOptions.fastTanh = getChipNumber(options.chip) >= 75;
  // cvt.rn.satfinite.e4m3x2.f32 exists from sm_89 with PTX 8.1 on (llc
  // aborts on it elsewhere); other targets convert with integer ops.
  unsigned ptx = 0;
  (void)StringRef(options.features)
      .drop_front(strlen("+ptx"))
      .getAsInteger(10, ptx);
  unsigned chipNumber = getChipNumber(options.chip);
  lowerOptions.fp8Cvt = chipNumber >= 90 || (chipNumber == 89 && ptx >= 81);
  pm.addNestedPass<func::FuncOp>(createNormLowerGPUPass(lowerOptions));

  // Kernels are outlined into a gpu.module right away, so that buffer
  // deallocation (which cannot look into kernels) sees only launches. Then
  // bufferization, the remaining host loops, and streams for the host-side
  // GPU ops.
  std::string text = llvm::formatv(
      "gpu-kernel-outlining,"
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops),"
      "canonicalize,cse,norm-collapse-destinations,norm-split-shared-inits,"
      "eliminate-empty-tensors,"
      "norm-legalize-reshapes,"
      "one-shot-bufferize{{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-deallocation-pipeline,convert-bufferization-to-memref,"
      "func.func(convert-linalg-to-loops),"
      "func.func(gpu-async-region),"
      // Device code: NVVM, with the target attached for serialization; the
      // kernels' buffer pointers marked noalias (readonly for inputs).
      "nvvm-attach-target{{chip={0} features={1} O={2}},"
      "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,canonicalize,"
      "norm-annotate-kernel-args,cse,reconcile-unrealized-casts),"
      // Host code, as in norm-cpu-pipeline.
      "func.func(arith-emulate-unsupported-floats{{source-types=bf16,f16 "
      "target-type=f32},"
      "math-expand-ops{{ops=rsqrt,tanh},arith-expand{{include-bf16=true}),"
      "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
      "convert-scf-to-cf,convert-vector-to-llvm,"
      "convert-math-to-llvm,convert-math-to-libm,"
      "convert-func-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
      "convert-cf-to-llvm,"
      // Runtime calls for host-side GPU ops, and the kernels' binary.
      "gpu-to-llvm,"
      "gpu-module-to-binary{{format={3} toolkit={4}},"
      "canonicalize,cse,reconcile-unrealized-casts",
      options.chip.getValue(), options.features.getValue(),
      unsigned(options.optLevel), format, toolkit);
  return appendPipeline(pm, text);
}

//===----------------------------------------------------------------------===//
// norm-spmd-pipeline
//===----------------------------------------------------------------------===//

LogicalResult
mlir::norm::buildNormSPMDPipeline(OpPassManager &pm,
                                  const NormSPMDPipelineOptions &options) {
  if (pm.getOpAnchorName() != ModuleOp::getOperationName() &&
      pm.getOpAnchorName() != OpPassManager::getAnyOpAnchorName()) {
    pm.addPass(std::make_unique<PipelineErrorPass>(
        ("norm-spmd-pipeline runs on builtin.module, not on '" +
         pm.getOpAnchorName() + "'")
            .str()));
    return failure();
  }
  pm.addPass(createNormShardPartitionPass());
  NormLowerShardCollectivesPassOptions collectives;
  collectives.checkRanks = options.checkRanks;
  pm.addPass(createNormLowerShardCollectivesPass(collectives));
  pm.addPass(createConvertShardToMPIPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createNormFinalizeSPMDPass());
  return success();
}

void mlir::norm::registerNormPipelines() {
  PassPipelineRegistration<NormSPMDPipelineOptions>(
      "norm-spmd-pipeline",
      "Partition the functions of a module annotated with upstream shard "
      "shardings and lower their communication to MPI calls (run "
      "norm-cpu-pipeline after it)",
      [](OpPassManager &pm, const NormSPMDPipelineOptions &options) {
        (void)buildNormSPMDPipeline(pm, options);
      });
  PassPipelineRegistration<NormCPUPipelineOptions>(
      "norm-cpu-pipeline",
      "Lower a module of norm and upstream tensor-level ops to the LLVM "
      "dialect for the CPU (runnable by mlir-runner)",
      [](OpPassManager &pm, const NormCPUPipelineOptions &options) {
        // Invalid options add a pass that reports them and fails.
        (void)buildNormCPUPipeline(pm, options);
      });
  PassPipelineRegistration<NormGPUPipelineOptions>(
      "norm-gpu-pipeline",
      "Lower a module of norm and upstream tensor-level ops to the LLVM "
      "dialect with NVIDIA GPU kernels in a gpu.binary (run with "
      "norm_cuda_runtime)",
      [](OpPassManager &pm, const NormGPUPipelineOptions &options) {
        // Invalid options add a pass that reports them and fails.
        (void)buildNormGPUPipeline(pm, options);
      });
}
