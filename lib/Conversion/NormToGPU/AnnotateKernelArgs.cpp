//===- AnnotateKernelArgs.cpp - noalias/readonly on norm kernel args ------===//
//
// norm-annotate-kernel-args: the buffers of the kernels of norm-lower-gpu
// are distinct; say so to LLVM on the kernels' pointer arguments.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMANNOTATEKERNELARGSPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

static constexpr llvm::StringLiteral kKernelSuffix = "_norm_kernel";

std::string mlir::norm::getNormKernelName(Operation *op) {
  auto symbol = op->getParentOfType<SymbolOpInterface>();
  std::string prefix = symbol ? symbol.getName().str() : std::string("norm");
  return prefix + kKernelSuffix.str();
}

bool mlir::norm::isNormKernelName(StringRef name) {
  if (name.ends_with(kKernelSuffix))
    return true;
  // The outliner's `_<n>` for names already taken.
  auto [stem, number] = name.rsplit('_');
  return !number.empty() && llvm::all_of(number, llvm::isDigit) &&
         stem.ends_with(kKernelSuffix);
}

/// Whether memory is only read through `pointer`: every user, through
/// address computations (getelementptr, addrspacecast), is a load.
static bool isOnlyLoadedFrom(Value pointer) {
  SmallVector<Value> worklist{pointer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LLVM::LoadOp>(user))
        continue;
      if (isa<LLVM::GEPOp, LLVM::AddrSpaceCastOp>(user) &&
          use.getOperandNumber() == 0) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      return false;
    }
  }
  return true;
}

namespace {
struct NormAnnotateKernelArgsPass
    : public norm::impl::NormAnnotateKernelArgsPassBase<
          NormAnnotateKernelArgsPass> {
  void runOnOperation() override {
    StringRef noalias = LLVM::LLVMDialect::getNoAliasAttrName();
    StringRef readonly = LLVM::LLVMDialect::getReadonlyAttrName();
    Builder builder(&getContext());
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      if (func.isExternal() || !isNormKernelName(func.getName()) ||
          !func->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()))
        continue;
      // A memref argument is expanded to its descriptor: the allocated and
      // the aligned pointer, offset, sizes, strides. Loads and stores go
      // through the aligned pointer only.
      ArrayRef<BlockArgument> args = func.getArguments();
      for (size_t i = 0; i + 1 < args.size(); ++i) {
        if (!isa<LLVM::LLVMPointerType>(args[i].getType()) ||
            !isa<LLVM::LLVMPointerType>(args[i + 1].getType()))
          continue;
        unsigned aligned = i + 1;
        func.setArgAttr(aligned, noalias, builder.getUnitAttr());
        if (isOnlyLoadedFrom(args[aligned]))
          func.setArgAttr(aligned, readonly, builder.getUnitAttr());
        ++i;
      }
    }
  }
};
} // namespace
