//===- LaunchFuncMemoryEffects.cpp - Effects of gpu.launch_func -*- C++ -*-===//
//
// The memory effects norm-lower-gpu's host code relies on: upstream's
// gpu.launch_func declares none, so buffer deallocation would free (or
// hoist) buffers a kernel still reads or writes.
//
//===----------------------------------------------------------------------===//

#include "norm/ExternalModels/ExternalModels.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// Memory effects of `gpu.launch_func`, which upstream does not declare: the
/// kernel reads and writes the buffers passed to it, and (once they are
/// lowered to pointers) any memory.
struct LaunchFuncMemoryEffectsModel
    : public MemoryEffectOpInterface::ExternalModel<
          LaunchFuncMemoryEffectsModel, gpu::LaunchFuncOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
    }
  }
};

} // namespace

void mlir::norm::registerGPULaunchFuncMemoryEffectsModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffectsModel>(*context);
  });
}
