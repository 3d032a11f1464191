//===- norm-opt.cpp - norm-mlir optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt with every upstream dialect, pass and extension plus the norm
// dialect and its passes.
//
//===----------------------------------------------------------------------===//

#include "norm/InitAllNorm.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::norm::registerAllNormPasses();

  // Every upstream dialect and extension, the LLVM IR translations
  // (gpu-module-to-binary in norm-gpu-pipeline translates kernels) and the
  // norm dialect: what an embedder registers for the pipelines.
  mlir::DialectRegistry registry;
  mlir::norm::registerNormPipelineDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "norm-mlir optimizer driver\n", registry));
}
