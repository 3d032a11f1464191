//===- Pipelines.cpp - norm-cpu-pipeline and norm-gpu-pipeline --*- C++ -*-===//
//
// The whole-module pipelines: norm lowering, TOSA and tensor-level
// elementwise ops to linalg, bufferization, loops, and the LLVM dialect; for
// the GPU also kernel outlining, NVVM and a gpu.binary. Every pass is
// created directly, not looked up by name: the pipelines work for an
// embedder that registers no upstream pass.
//
//===----------------------------------------------------------------------===//

#include "norm/Pipelines/Pipelines.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ShardToMPI/ShardToMPI.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferDeallocationOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
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

/// Which pipeline a registration check is for.
enum class PipelineKind { CPU, GPU, SPMD };

/// The mpi ops whose memory effects registerNormUpstreamOpModels declares.
constexpr StringLiteral kMPIOpsWithModels[] = {
    "mpi.init", "mpi.finalize", "mpi.allreduce", "mpi.send", "mpi.recv"};

/// Something a pipeline needs of the context that loading a dialect does not
/// give by itself: an interface that an external model (registered in the
/// context's DialectRegistry) attaches to an op, an attribute or a dialect.
struct RequiredModel {
  enum Kind { Op, Attr, Dialect } kind;
  /// The op name, attribute name or dialect namespace.
  StringRef name;
  TypeID interfaceID;
  StringRef interfaceName;
  /// Whether norm-mlir patches the model onto an upstream op
  /// (registerNormUpstreamOpModels) rather than upstream providing it.
  bool upstreamOpModel = false;
};

/// The first pass of each pipeline: checks that the context has the external
/// models the pipeline's passes rely on (bufferization, buffer deallocation,
/// convert-to-llvm, sharding, the NVVM target, the LLVM IR translations, the
/// memory effects norm-mlir declares for gpu.launch_func and the mpi ops) and
/// otherwise fails with one diagnostic naming what is missing and the
/// registration function that provides it, rather than letting a later pass
/// fail on an op it cannot handle ("op was not bufferized").
struct CheckRegistrationPass
    : public PassWrapper<CheckRegistrationPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckRegistrationPass)
  CheckRegistrationPass(StringRef pipeline, PipelineKind kind, bool openMP)
      : pipeline(pipeline.str()), kind(kind), openMP(openMP) {}
  StringRef getArgument() const final { return "norm-check-registration"; }

  void getDependentDialects(DialectRegistry &registry) const override {
    // The dialects whose models are checked, loaded so that the context's
    // registry attaches them.
    switch (kind) {
    case PipelineKind::SPMD:
      registry.insert<NormDialect>();
      return;
    case PipelineKind::GPU:
      registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect>();
      [[fallthrough]];
    case PipelineKind::CPU:
      registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                      cf::ControlFlowDialect, func::FuncDialect,
                      linalg::LinalgDialect, scf::SCFDialect,
                      tensor::TensorDialect, vector::VectorDialect>();
      if (openMP)
        registry.insert<omp::OpenMPDialect>();
      return;
    }
  }

  SmallVector<RequiredModel> getRequiredModels(ModuleOp module) const {
    SmallVector<RequiredModel> models;
    auto opModel = [&](StringRef op, TypeID id, StringRef interface,
                       bool upstreamOpModel = false) {
      models.push_back({RequiredModel::Op, op, id, interface, upstreamOpModel});
    };
    TypeID memoryEffects = TypeID::get<MemoryEffectOpInterface>();
    if (kind == PipelineKind::SPMD) {
      opModel("norm.rms_norm", TypeID::get<shard::ShardingInterface>(),
              "ShardingInterface");
      return models;
    }
    TypeID bufferizable = TypeID::get<bufferization::BufferizableOpInterface>();
    for (StringRef op :
         {"arith.constant", "func.func", "linalg.generic", "scf.for",
          "tensor.extract_slice", "vector.transfer_write"})
      opModel(op, bufferizable, "BufferizableOpInterface");
    opModel("arith.select",
            TypeID::get<bufferization::BufferDeallocationOpInterface>(),
            "BufferDeallocationOpInterface");
    // Buffer deallocation rejects ops without memory effects: those of the
    // mpi ops (norm-spmd-pipeline's output) come from norm-mlir.
    llvm::SetVector<StringRef> mpiOps;
    module.walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() == "mpi")
        mpiOps.insert(op->getName().getStringRef());
    });
    for (StringRef op : mpiOps)
      if (llvm::is_contained(kMPIOpsWithModels, op))
        opModel(op, memoryEffects, "MemoryEffectOpInterface",
                /*upstreamOpModel=*/true);
    if (kind == PipelineKind::CPU) {
      SmallVector<StringRef> toLLVM = {"arith", "cf", "func"};
      if (openMP)
        toLLVM.push_back("omp");
      for (StringRef dialect : toLLVM)
        models.push_back({RequiredModel::Dialect, dialect,
                          TypeID::get<ConvertToLLVMPatternInterface>(),
                          "ConvertToLLVMPatternInterface"});
      return models;
    }
    opModel("gpu.launch_func", memoryEffects, "MemoryEffectOpInterface",
            /*upstreamOpModel=*/true);
    models.push_back({RequiredModel::Attr, "nvvm.target",
                      TypeID::get<gpu::TargetAttrInterface>(),
                      "TargetAttrInterface"});
    for (StringRef dialect : {"gpu", "llvm", "nvvm"})
      models.push_back({RequiredModel::Dialect, dialect,
                        TypeID::get<LLVMTranslationDialectInterface>(),
                        "LLVMTranslationDialectInterface"});
    return models;
  }

  static bool hasModel(MLIRContext *context, const RequiredModel &model) {
    switch (model.kind) {
    case RequiredModel::Op: {
      std::optional<RegisteredOperationName> op =
          RegisteredOperationName::lookup(model.name, context);
      return op && op->hasInterface(model.interfaceID);
    }
    case RequiredModel::Attr: {
      std::optional<std::reference_wrapper<const AbstractAttribute>> attr =
          AbstractAttribute::lookup(model.name, context);
      return attr && attr->get().hasInterface(model.interfaceID);
    }
    case RequiredModel::Dialect: {
      mlir::Dialect *dialect = context->getLoadedDialect(model.name);
      // A model promised but never registered is missing (asking the
      // dialect for it would be a fatal error where assertions are on).
      return dialect &&
             !dialect->hasPromisedInterface(dialect->getTypeID(),
                                            model.interfaceID) &&
             dialect->getRegisteredInterface(model.interfaceID);
    }
    }
    return false;
  }

  void runOnOperation() override {
    SmallVector<std::string> missing;
    bool missingUpstreamOpModel = false;
    for (const RequiredModel &model : getRequiredModels(getOperation())) {
      if (hasModel(&getContext(), model))
        continue;
      missingUpstreamOpModel |= model.upstreamOpModel;
      missing.push_back(
          (model.interfaceName + " of " +
           (model.kind == RequiredModel::Dialect ? "dialect '" : "'") +
           model.name + "'")
              .str());
    }
    if (missing.empty())
      return;
    InFlightDiagnostic diag = getOperation().emitError();
    diag << pipeline << ": the context lacks external models the pipeline "
         << "needs (" << llvm::join(missing, ", ")
         << "); create the MLIRContext from a DialectRegistry filled by "
            "mlir::norm::registerNormPipelineDialects (norm/InitAllNorm.h; C "
            "API: mlirNormRegisterPipelineDialects)";
    if (missingUpstreamOpModel)
      diag << "; the memory effects of upstream ops come from "
              "mlir::norm::registerNormUpstreamOpModels "
              "(norm/ExternalModels/ExternalModels.h)";
    signalPassFailure();
  }

  std::string pipeline;
  PipelineKind kind;
  bool openMP;
};
} // namespace

/// Frontend forms: TOSA and tensor-level arith/math become linalg. Without
/// TOSA's profile validation: torch-mlir computes LayerNorm's statistics in
/// f64, which no TOSA profile allows but linalg lowers fine.
static void addFrontendPasses(OpPassManager &pm) {
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions(),
                              TosaToLinalgNamedOptions(),
                              /*validationOptions=*/std::nullopt);
  OpPassManager &funcPM = pm.nest<func::FuncOp>();
  funcPM.addPass(createTosaToArithPass());
  funcPM.addPass(createTosaToTensorPass());
}

/// Elementwise tensor ops to linalg, then bufferization of the whole module
/// (function boundaries with identity layouts; with
/// `identityUnknownLayouts`, unknown types too) and buffer deallocation
/// (with `freeAfterLastUse`, local buffers freed right after their last use
/// first).
static void addBufferizationPasses(OpPassManager &pm,
                                   bool identityUnknownLayouts,
                                   bool freeAfterLastUse) {
  OpPassManager &funcPM = pm.nest<func::FuncOp>();
  funcPM.addPass(createConvertElementwiseToLinalgPass());
  funcPM.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createNormCollapseDestinationsPass());
  pm.addPass(createNormSplitSharedInitsPass());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(createNormDropKernelResultsPass());
  pm.addPass(createNormLegalizeReshapesPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  if (identityUnknownLayouts)
    bufferize.unknownTypeConversion =
        bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createNormDropKernelResultsPass());
  if (!freeAfterLastUse) {
    bufferization::BufferDeallocationPipelineOptions deallocation;
    bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  } else {
    // Upstream's buffer-deallocation-pipeline, with the local buffers freed
    // after their last use right before the ownership-based deallocation
    // (no canonicalizer in between may replace the allocations it marks).
    OpPassManager &dealloc = pm.nest<func::FuncOp>();
    memref::ExpandReallocPassOptions realloc;
    realloc.emitDeallocs = false;
    dealloc.addPass(memref::createExpandReallocPass(realloc));
    dealloc.addPass(createCanonicalizerPass());
    dealloc.addPass(createNormDeallocAfterLastUsePass());
    dealloc.addPass(
        bufferization::createOwnershipBasedBufferDeallocationPass());
    dealloc.addPass(createCanonicalizerPass());
    dealloc.addPass(
        bufferization::createBufferDeallocationSimplificationPass());
    pm.addPass(bufferization::createLowerDeallocationsPass());
    OpPassManager &cleanup = pm.nest<func::FuncOp>();
    cleanup.addPass(createCSEPass());
    cleanup.addPass(createCanonicalizerPass());
  }
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// The conversions to the LLVM dialect that the CPU pipeline and the GPU
/// pipeline's host code share, up to the function and arith conversions in
/// which the two differ.
static void addMemRefSCFVectorMathToLLVM(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
}

/// bf16 and f16 arithmetic through f32, rsqrt and tanh expanded, and the
/// other arith ops the LLVM dialect lacks (with `expandBF16`, bf16
/// truncation and extension as integer operations too).
static void addNarrowFloatEmulation(OpPassManager &funcPM, bool expandBF16) {
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  emulate.targetTypeStr = "f32";
  funcPM.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"rsqrt", "tanh"};
  funcPM.addPass(math::createMathExpandOpsPass(expand));
  arith::ArithExpandOpsPassOptions arithExpand;
  arithExpand.includeBf16 = expandBF16;
  funcPM.addPass(arith::createArithExpandOpsPass(arithExpand));
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
  // The CPU the code is for: the host, or the one target-cpu names, whose
  // vector width and bf16 conversion replace the host's as the defaults.
  unsigned vectorWidth = options.vectorWidth;
  bool nativeBF16 = options.nativeBF16;
  if (!options.targetCPU.empty()) {
    FailureOr<TargetCPUInfo> cpu = lookupTargetCPU(options.targetCPU);
    if (failed(cpu))
      return fail("norm-cpu-pipeline: option 'target-cpu' must be " +
                  kTargetCPUExpectation + ", got '" + options.targetCPU + "'");
    if (vectorWidth == 0)
      vectorWidth = cpu->vectorWidth;
    if (!options.nativeBF16.hasValue())
      nativeBF16 = cpu->nativeBF16;
  }

  pm.addPass(std::make_unique<CheckRegistrationPass>(
      "norm-cpu-pipeline", PipelineKind::CPU,
      /*openMP=*/options.threads > 1));
  addFrontendPasses(pm);
  // Each distinct kernel once: the layers of a model share their norm and
  // matmul functions, so compile time grows with the distinct kernels.
  if (options.outlineKernels)
    pm.addPass(createNormOutlineKernelsPass());

  // Norm ops: direct vector row loops or the portable decomposition.
  OpPassManager &lower = pm.nest<func::FuncOp>();
  if (options.lowering == CPULowering::Direct) {
    NormLowerCPUPassOptions lowerOptions;
    lowerOptions.vectorWidth = vectorWidth;
    lowerOptions.threads = options.threads;
    lowerOptions.nativeBF16 = nativeBF16;
    lower.addPass(createNormLowerCPUPass(lowerOptions));
  } else {
    lower.addPass(createNormToLinalgPass());
  }
  // Matmuls (next to norms, or fused with them): register-tiled vector code.
  if (options.vectorizeMatmul) {
    NormVectorizeMatmulPassOptions matmulOptions;
    matmulOptions.vectorWidth = vectorWidth;
    matmulOptions.threads = options.threads;
    lower.addPass(createNormVectorizeMatmulPass(matmulOptions));
  }

  addBufferizationPasses(pm, /*identityUnknownLayouts=*/true,
                         /*freeAfterLastUse=*/true);

  // Loops: the norm ops' scf.forall, the remaining linalg ops (in parallel
  // with threads), vector transfers.
  bool parallelRows = options.threads > 1;
  OpPassManager &loops = pm.nest<func::FuncOp>();
  NormForallToLoopsPassOptions forallOptions;
  forallOptions.threads = options.threads;
  forallOptions.nativeBF16 = nativeBF16;
  loops.addPass(createNormForallToLoopsPass(forallOptions));
  loops.addPass(vector::createLowerVectorMaskPass());
  loops.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  loops.addPass(parallelRows ? createConvertLinalgToParallelLoopsPass()
                             : createConvertLinalgToLoopsPass());
  if (parallelRows) {
    ConvertSCFToOpenMPPassOptions openMP;
    openMP.numThreads = options.threads;
    pm.addPass(createConvertSCFToOpenMPPass(openMP));
  }

  // f4E2M1FN buffers two elements per byte, the function boundary
  // included.
  pm.addPass(createNormPackFP4Pass());

  // Scalar arithmetic the LLVM dialect lacks: f8 conversions, bf16/f16
  // arithmetic through f32, rsqrt and tanh, bf16 truncation (unless
  // native).
  OpPassManager &scalars = pm.nest<func::FuncOp>();
  scalars.addPass(createNormExpandF8ConversionsPass());
  addNarrowFloatEmulation(scalars, /*expandBF16=*/!nativeBF16);

  // The LLVM dialect.
  addMemRefSCFVectorMathToLLVM(pm);
  pm.addPass(createNormMPIImplementationPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  NormMPIImplementationPassOptions strip;
  strip.strip = true;
  pm.addPass(createNormMPIImplementationPass(strip));
  pm.addPass(createNormStoreNarrowFloatsAsIntsPass());
  // Functions marked for the target CPU, so that the JIT and llc, whose
  // target machines describe the host, compile them for it.
  if (!options.targetCPU.empty()) {
    NormSetTargetCPUPassOptions targetOptions;
    targetOptions.cpu = options.targetCPU;
    pm.addPass(createNormSetTargetCPUPass(targetOptions));
  }
  pm.addPass(createCanonicalizerPass());
  return success();
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

  pm.addPass(std::make_unique<CheckRegistrationPass>(
      "norm-gpu-pipeline", PipelineKind::GPU, /*openMP=*/false));
  addFrontendPasses(pm);
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
  // cvt.rn.satfinite.e2m1x2.f32 exists on the arch- and family-specific
  // targets from sm_100 on (sm_100a, sm_100f, sm_103a, sm_120a, ...; ptxas
  // rejects it for plain sm_100 and sm_120) with PTX 8.6 on.
  StringRef chip = options.chip.getValue();
  lowerOptions.fp4Cvt = chipNumber >= 100 &&
                        (chip.ends_with("a") || chip.ends_with("f")) &&
                        ptx >= 86;
  pm.addNestedPass<func::FuncOp>(createNormLowerGPUPass(lowerOptions));

  // Kernels are outlined into a gpu.module right away, so that buffer
  // deallocation (which cannot look into kernels) sees only launches. Then
  // bufferization, the host/device copies, the remaining host loops, and
  // streams for the host-side GPU ops.
  pm.addPass(createGpuKernelOutliningPass());
  addBufferizationPasses(pm, /*identityUnknownLayouts=*/false,
                         /*freeAfterLastUse=*/false);
  // memory=copy: the kernels' host buffers copied to and from the device
  // around each run of launches.
  if (lowerOptions.memory == GPUMemory::Copy)
    pm.addPass(createNormGPUHostCopiesPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // f4E2M1FN buffers two elements per byte, on the host and the device and
  // in the kernels' signatures (the kernels store whole bytes).
  pm.addPass(createNormPackFP4Pass());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  // Device code: NVVM, with the target attached for serialization; the
  // kernels' buffer pointers marked noalias (readonly for inputs).
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip.getValue();
  target.features = options.features.getValue();
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createSCFToControlFlowPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createNormAnnotateKernelArgsPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  // Host code, as in norm-cpu-pipeline.
  addNarrowFloatEmulation(pm.nest<func::FuncOp>(), /*expandBF16=*/true);
  addMemRefSCFVectorMathToLLVM(pm);
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());

  // Runtime calls for host-side GPU ops, and the kernels' binary.
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
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
  pm.addPass(std::make_unique<CheckRegistrationPass>(
      "norm-spmd-pipeline", PipelineKind::SPMD, /*openMP=*/false));
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

// A builder that fails has added a PipelineErrorPass and nothing else: the
// run fails with its diagnostic at the module (every failure of the
// builders is an invalid option or anchor; no pass is looked up by name).
void mlir::norm::registerNormPipelines() {
  PassPipelineRegistration<NormSPMDPipelineOptions>(
      "norm-spmd-pipeline",
      "Partition the functions of a module annotated with upstream shard "
      "shardings and lower their communication to MPI calls (run "
      "norm-cpu-pipeline after it)",
      [](OpPassManager &pm, const NormSPMDPipelineOptions &options) {
        // A wrong anchor adds a pass that reports it and fails.
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
