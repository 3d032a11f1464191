//===- SetTargetCPU.cpp - Compile LLVM dialect functions for a CPU --------===//
//
// norm-set-target-cpu: the target CPU and its features on every llvm.func,
// so that neither the JIT nor llc compiles a cross-compiled module for the
// host.
//
//===----------------------------------------------------------------------===//

#include "norm/Support/HostCPU.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMSETTARGETCPUPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

namespace {

/// Sets `target_cpu` and `target_features` on the llvm.func definitions
/// nested in the op it runs on. Both are needed: a function with only
/// `target-cpu` takes its features from the target machine (the host's
/// under `llc -mcpu=native` and in the JIT).
struct NormSetTargetCPUPass
    : public norm::impl::NormSetTargetCPUPassBase<NormSetTargetCPUPass> {
  using NormSetTargetCPUPassBase::NormSetTargetCPUPassBase;
  void runOnOperation() override;
};

} // namespace

void NormSetTargetCPUPass::runOnOperation() {
  FailureOr<TargetCPUInfo> info = lookupTargetCPU(cpu);
  if (failed(info)) {
    getOperation()->emitError("norm-set-target-cpu: option 'cpu' must be ")
        << kTargetCPUExpectation << ", got '" << cpu << "'";
    return signalPassFailure();
  }
  MLIRContext *context = &getContext();
  SmallVector<StringRef> features(info->features.begin(), info->features.end());
  auto cpuAttr = StringAttr::get(context, cpu);
  auto featuresAttr = LLVM::TargetFeaturesAttr::get(context, features);
  getOperation()->walk([&](LLVM::LLVMFuncOp func) {
    if (func.isExternal())
      return;
    func.setTargetCpuAttr(cpuAttr);
    func.setTargetFeaturesAttr(featuresAttr);
  });
}
