//===- norm-opt.cpp - norm-mlir optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt with every upstream dialect, pass and extension plus the norm
// dialect and its passes, and --norm-pass-statistics.
//
//===----------------------------------------------------------------------===//

#include "norm/InitAllNorm.h"
#include "norm/Support/PassStatistics.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdio>

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::norm::registerAllNormPasses();

  // Every upstream dialect and extension, the LLVM IR translations
  // (gpu-module-to-binary in norm-gpu-pipeline translates kernels) and the
  // norm dialect: what an embedder registers for the pipelines.
  mlir::DialectRegistry registry;
  mlir::norm::registerNormPipelineDialects(registry);

  // The statistics of the norm passes, which -mlir-pass-statistics cannot
  // show with an LLVM built without statistics (see PassStatistics.h).
  static llvm::cl::opt<bool> normPassStatistics(
      "norm-pass-statistics",
      llvm::cl::desc("Print the statistics of the norm passes (in the "
                     "format of -mlir-pass-statistics) to stderr"),
      llvm::cl::init(false));

  // MlirOptMain(argc, argv, ...) with a pass manager setup that adds the
  // statistics instrumentation to the pipeline the options describe.
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "norm-mlir optimizer driver\n", registry);
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (normPassStatistics) {
    config.setPassPipelineSetupFn(
        [parsedConfig = config](mlir::PassManager &pm) {
          if (mlir::failed(parsedConfig.setupPassPipeline(pm)))
            return mlir::failure();
          mlir::norm::enableNormPassStatistics(pm, llvm::errs());
          return mlir::success();
        });
  }
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));
  if (inputFilename == "-" &&
      llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
