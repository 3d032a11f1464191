//===- norm-opt.cpp - norm-mlir optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt with every upstream dialect, pass and extension plus the norm
// dialect and its passes.
//
//===----------------------------------------------------------------------===//

#include "norm/InitAllNorm.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::norm::registerAllNormPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::norm::registerAllNormDialects(registry);
  // gpu-module-to-binary (norm-gpu-pipeline) translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "norm-mlir optimizer driver\n", registry));
}
