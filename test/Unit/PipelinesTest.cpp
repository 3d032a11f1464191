//===- PipelinesTest.cpp - The pipelines for an embedder --------*- C++ -*-===//
//
// norm-cpu-pipeline, norm-gpu-pipeline and norm-spmd-pipeline as an
// embedding compiler uses them: it registers the norm passes and pipelines
// (registerAllNormPasses) but no upstream pass. The pipelines must build
// and run without looking upstream passes up by name, and a pipeline that
// cannot be built must fail the run with a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "norm/Pipelines/Pipelines.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/ExternalModels/ExternalModels.h"
#include "norm/InitAllNorm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::norm;

namespace {

constexpr const char *kRMSNorm = R"mlir(
func.func @rms(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
)mlir";

/// A context with every dialect and extension (registering them registers
/// no pass) and the norm passes and pipelines only.
class PipelinesTest : public ::testing::Test {
protected:
  void SetUp() override {
    registerAllNormPasses();
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registerAllNormDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
  }

  /// Parses `pipeline` (the passes of a pipeline on builtin.module) and
  /// runs it on `source`; the diagnostics go to `diagnostics`.
  LogicalResult run(StringRef pipeline, StringRef source,
                    OwningOpRef<ModuleOp> &module, std::string &diagnostics) {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diag) {
      os << diag.getLocation() << ": " << diag.str() << "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, context.get());
    if (!module)
      return failure();
    PassManager pm(context.get(), ModuleOp::getOperationName());
    if (failed(parsePassPipeline(pipeline, pm, os)))
      return failure();
    return pm.run(*module);
  }

  std::unique_ptr<MLIRContext> context;
};

/// The test's premise: no upstream pass can be looked up by name.
TEST_F(PipelinesTest, NoUpstreamPassRegistered) {
  EXPECT_EQ(PassInfo::lookup("canonicalize"), nullptr);
  EXPECT_EQ(PassInfo::lookup("convert-to-llvm"), nullptr);
  EXPECT_NE(PassPipelineInfo::lookup("norm-cpu-pipeline"), nullptr);
}

/// norm-cpu-pipeline lowers the whole module to the LLVM dialect (it used
/// to print "does not refer to a registered pass", run a partial pipeline
/// and succeed with the norm op left).
TEST_F(PipelinesTest, CPUPipelineLowersWithoutUpstreamRegistry) {
  for (StringRef pipeline :
       {"norm-cpu-pipeline", "norm-cpu-pipeline{lowering=linalg threads=2}"}) {
    OwningOpRef<ModuleOp> module;
    std::string diagnostics;
    ASSERT_TRUE(succeeded(run(pipeline, kRMSNorm, module, diagnostics)))
        << pipeline.str() << ":\n"
        << diagnostics;
    EXPECT_TRUE(diagnostics.empty()) << diagnostics;
    // LLVM dialect ops (and OpenMP ones with threads, which translate to
    // LLVM IR as well).
    module->walk([&](Operation *op) {
      StringRef dialect = op->getDialect()->getNamespace();
      EXPECT_TRUE(isa<ModuleOp>(op) || dialect == "llvm" || dialect == "omp")
          << pipeline.str() << " left " << op->getName().getStringRef().str();
    });
  }
}

/// norm-spmd-pipeline builds and runs too (a module without annotations
/// passes through).
TEST_F(PipelinesTest, SPMDPipelineWithoutUpstreamRegistry) {
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  EXPECT_TRUE(
      succeeded(run("norm-spmd-pipeline", kRMSNorm, module, diagnostics)))
      << diagnostics;
}

/// norm-gpu-pipeline builds as well (with a stand-in toolkit holding the
/// libdevice it checks for; format=isa needs no ptxas).
TEST_F(PipelinesTest, GPUPipelineBuildsWithoutUpstreamRegistry) {
  SmallString<128> toolkit;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("norm-toolkit", toolkit));
  SmallString<128> libdevice(toolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice");
  ASSERT_FALSE(llvm::sys::fs::create_directories(libdevice));
  llvm::sys::path::append(libdevice, "libdevice.10.bc");
  {
    std::error_code error;
    llvm::raw_fd_ostream file(libdevice, error);
    ASSERT_FALSE(error);
  }
  NormGPUPipelineOptions options;
  options.toolkit = std::string(toolkit);
  options.format = "isa";
  PassManager pm(context.get());
  std::string diagnostics;
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diag) {
      os << diag.str() << "\n";
      return success();
    });
    EXPECT_TRUE(succeeded(buildNormGPUPipeline(pm, options)));
  }
  EXPECT_TRUE(diagnostics.empty()) << diagnostics;
  EXPECT_GT(pm.size(), 10u);
  llvm::sys::fs::remove_directories(toolkit);
}

/// A pipeline that cannot be built fails the run with one diagnostic at
/// the module; the builder reports the failure.
TEST_F(PipelinesTest, UnbuildablePipelineFailsTheRun) {
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  EXPECT_TRUE(failed(
      run("norm-cpu-pipeline{threads=0}", kRMSNorm, module, diagnostics)));
  EXPECT_NE(diagnostics.find("norm-cpu-pipeline: option 'threads' must be "
                             ">= 1, got 0"),
            std::string::npos)
      << diagnostics;

  PassManager pm(context.get(), func::FuncOp::getOperationName());
  EXPECT_TRUE(failed(buildNormCPUPipeline(pm, NormCPUPipelineOptions())));
  EXPECT_TRUE(failed(buildNormSPMDPipeline(pm, NormSPMDPipelineOptions())));
  NormGPUPipelineOptions gpu;
  gpu.chip = "sm_xx";
  PassManager modulePM(context.get());
  EXPECT_TRUE(failed(buildNormGPUPipeline(modulePM, gpu)));
  diagnostics.clear();
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &diag) {
      os << diag.str() << "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(kRMSNorm, context.get());
    ASSERT_TRUE(module);
    EXPECT_TRUE(failed(modulePM.run(*module)));
  }
  EXPECT_NE(diagnostics.find("norm-gpu-pipeline: option 'chip'"),
            std::string::npos)
      << diagnostics;
}

/// A stand-in CUDA toolkit holding only the libdevice norm-gpu-pipeline
/// checks for (enough for format=isa up to the registration check).
static std::string createStandInToolkit() {
  SmallString<128> toolkit;
  if (llvm::sys::fs::createUniqueDirectory("norm-toolkit", toolkit))
    return "";
  SmallString<128> libdevice(toolkit);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice");
  if (llvm::sys::fs::create_directories(libdevice))
    return "";
  llvm::sys::path::append(libdevice, "libdevice.10.bc");
  std::error_code error;
  llvm::raw_fd_ostream file(libdevice, error);
  return error ? "" : std::string(toolkit);
}

/// Builds a pipeline with `build` (no pass registry involved) and runs it on
/// `source` in a context created from `registry`; the diagnostics go to
/// `diagnostics`, one per line.
static LogicalResult
runBuiltPipeline(const DialectRegistry &registry, StringRef source,
                 function_ref<LogicalResult(OpPassManager &)> build,
                 std::string &diagnostics) {
  MLIRContext context(registry);
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    os << diag.str() << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module)
    return failure();
  PassManager pm(&context);
  if (failed(build(pm)))
    return failure();
  return pm.run(*module);
}

/// registerNormPipelineDialects alone gives the pipelines all they need.
TEST(PipelineRegistrationTest, PipelineDialectsAreEnough) {
  DialectRegistry registry;
  registerNormPipelineDialects(registry);
  NormCPUPipelineOptions direct, linalg;
  linalg.lowering = CPULowering::Linalg;
  linalg.threads = 2;
  for (const NormCPUPipelineOptions *options : {&direct, &linalg}) {
    std::string diagnostics;
    EXPECT_TRUE(succeeded(runBuiltPipeline(
        registry, kRMSNorm,
        [&](OpPassManager &pm) { return buildNormCPUPipeline(pm, *options); },
        diagnostics)))
        << diagnostics;
    EXPECT_TRUE(diagnostics.empty()) << diagnostics;
  }
  std::string diagnostics;
  EXPECT_TRUE(succeeded(runBuiltPipeline(
      registry, kRMSNorm,
      [](OpPassManager &pm) {
        return buildNormSPMDPipeline(pm, NormSPMDPipelineOptions());
      },
      diagnostics)))
      << diagnostics;
}

/// With the norm and core dialects only, each pipeline fails at its start
/// with one diagnostic naming the missing models and the registration
/// function, not with "op was not bufferized" in the middle.
TEST(PipelineRegistrationTest, MissingModelsAreNamed) {
  DialectRegistry registry;
  registry.insert<NormDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
  std::string diagnostics;
  EXPECT_TRUE(failed(runBuiltPipeline(
      registry, kRMSNorm,
      [](OpPassManager &pm) {
        return buildNormCPUPipeline(pm, NormCPUPipelineOptions());
      },
      diagnostics)));
  EXPECT_NE(diagnostics.find("norm-cpu-pipeline: the context lacks external "
                             "models the pipeline needs"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("BufferizableOpInterface of "
                             "'tensor.extract_slice'"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("ConvertToLLVMPatternInterface of dialect "
                             "'func'"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("mlir::norm::registerNormPipelineDialects"),
            std::string::npos)
      << diagnostics;
  EXPECT_EQ(diagnostics.find("not bufferized"), std::string::npos)
      << diagnostics;
  EXPECT_EQ(std::count(diagnostics.begin(), diagnostics.end(), '\n'), 1)
      << diagnostics;

  diagnostics.clear();
  EXPECT_TRUE(failed(runBuiltPipeline(
      registry, kRMSNorm,
      [](OpPassManager &pm) {
        return buildNormSPMDPipeline(pm, NormSPMDPipelineOptions());
      },
      diagnostics)));
  EXPECT_NE(diagnostics.find("norm-spmd-pipeline: the context lacks external "
                             "models the pipeline needs (ShardingInterface "
                             "of 'norm.rms_norm')"),
            std::string::npos)
      << diagnostics;

  std::string toolkit = createStandInToolkit();
  ASSERT_FALSE(toolkit.empty());
  NormGPUPipelineOptions gpu;
  gpu.toolkit = toolkit;
  gpu.format = "isa";
  diagnostics.clear();
  EXPECT_TRUE(failed(runBuiltPipeline(
      registry, kRMSNorm,
      [&](OpPassManager &pm) { return buildNormGPUPipeline(pm, gpu); },
      diagnostics)));
  EXPECT_NE(diagnostics.find("norm-gpu-pipeline: the context lacks external "
                             "models the pipeline needs"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("TargetAttrInterface of 'nvvm.target'"),
            std::string::npos)
      << diagnostics;
  llvm::sys::fs::remove_directories(toolkit);
}

/// Registering the norm dialect patches no upstream op: a registry with
/// every upstream dialect, extension and translation and the norm dialect
/// (registerAllNormDialects) but not registerNormUpstreamOpModels lacks the
/// memory effects of gpu.launch_func and of the mpi ops, and the pipelines
/// that need them name them and the function that registers them.
TEST(PipelineRegistrationTest, UpstreamOpModelsAreOptIn) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAllNormDialects(registry);

  std::string toolkit = createStandInToolkit();
  ASSERT_FALSE(toolkit.empty());
  NormGPUPipelineOptions gpu;
  gpu.toolkit = toolkit;
  gpu.format = "isa";
  std::string diagnostics;
  EXPECT_TRUE(failed(runBuiltPipeline(
      registry, kRMSNorm,
      [&](OpPassManager &pm) { return buildNormGPUPipeline(pm, gpu); },
      diagnostics)));
  EXPECT_NE(diagnostics.find("norm-gpu-pipeline: the context lacks external "
                             "models the pipeline needs (MemoryEffectOpInterface "
                             "of 'gpu.launch_func')"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("mlir::norm::registerNormUpstreamOpModels"),
            std::string::npos)
      << diagnostics;
  llvm::sys::fs::remove_directories(toolkit);

  // The CPU pipeline needs the mpi models only for a module with mpi ops.
  constexpr const char *kMPI = R"mlir(
func.func @main() {
  mpi.init
  mpi.finalize
  return
}
)mlir";
  diagnostics.clear();
  EXPECT_TRUE(succeeded(runBuiltPipeline(
      registry, kRMSNorm,
      [](OpPassManager &pm) {
        return buildNormCPUPipeline(pm, NormCPUPipelineOptions());
      },
      diagnostics)))
      << diagnostics;
  diagnostics.clear();
  EXPECT_TRUE(failed(runBuiltPipeline(
      registry, kMPI,
      [](OpPassManager &pm) {
        return buildNormCPUPipeline(pm, NormCPUPipelineOptions());
      },
      diagnostics)));
  EXPECT_NE(diagnostics.find("(MemoryEffectOpInterface of 'mpi.init', "
                             "MemoryEffectOpInterface of 'mpi.finalize')"),
            std::string::npos)
      << diagnostics;
  EXPECT_NE(diagnostics.find("mlir::norm::registerNormUpstreamOpModels"),
            std::string::npos)
      << diagnostics;

  // Opting in is enough.
  registerNormUpstreamOpModels(registry);
  diagnostics.clear();
  EXPECT_TRUE(succeeded(runBuiltPipeline(
      registry, kMPI,
      [](OpPassManager &pm) {
        return buildNormCPUPipeline(pm, NormCPUPipelineOptions());
      },
      diagnostics)))
      << diagnostics;
}

} // namespace
