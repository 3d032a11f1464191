//===- InitAllNorm.cpp - Register the norm dialect and passes ---*- C++ -*-===//
//
// Registration entry points used by norm-opt, the C API and embedders.
//
//===----------------------------------------------------------------------===//

#include "norm/InitAllNorm.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/ExternalModels/ExternalModels.h"
#include "norm/Pipelines/Pipelines.h"
#include "norm/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::norm::registerAllNormDialects(DialectRegistry &registry) {
  registry.insert<NormDialect>();
  registerNormOpExternalModels(registry);
}

void mlir::norm::registerNormPipelineDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAllNormDialects(registry);
  registerNormUpstreamOpModels(registry);
}

void mlir::norm::registerAllNormPasses() {
  registerNormConversionPasses();
  registerNormTransformsPasses();
  registerNormUpstreamTransformsPasses();
  registerNormPipelines();
}
