//===- ExternalModels.cpp - Register the interface models -------*- C++ -*-===//
//
// The two registration groups of norm-mlir's external models: those of the
// norm ops (with the dialect) and those patched onto upstream ops (opt-in).
//
//===----------------------------------------------------------------------===//

#include "norm/ExternalModels/ExternalModels.h"

#include "mlir/IR/DialectRegistry.h"

void mlir::norm::registerNormOpExternalModels(DialectRegistry &registry) {
  registerAggregatedOpInterfaceExternalModels(registry);
  registerTilingInterfaceExternalModels(registry);
  registerShardingInterfaceExternalModels(registry);
}

void mlir::norm::registerNormUpstreamOpModels(DialectRegistry &registry) {
  registerGPULaunchFuncMemoryEffectsModel(registry);
  registerMPIMemoryEffectsModels(registry);
}
