//===- NarrowFloatStores.cpp - 16-bit float vector memory ops as ints -----===//
//
// norm-store-narrow-floats-as-ints: keeps LLVM from scalarizing stores of
// bf16/f16 vectors on targets without native support for them.
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMSTORENARROWFLOATSASINTSPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

/// True for a vector of 16-bit floats.
static bool isNarrowFloatVector(Type type) {
  auto vectorType = dyn_cast<VectorType>(type);
  return vectorType && isa<FloatType>(vectorType.getElementType()) &&
         vectorType.getElementTypeBitWidth() == 16;
}

namespace {

struct NormStoreNarrowFloatsAsIntsPass
    : public norm::impl::NormStoreNarrowFloatsAsIntsPassBase<
          NormStoreNarrowFloatsAsIntsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      // arith-emulate-unsupported-floats marks its extf/truncf `contract`;
      // the LLVM conversion copies that arith attribute onto llvm.fpext and
      // llvm.fptrunc, which have no fastmath flags, and the printed module
      // then needs the arith dialect to parse.
      if (isa<LLVM::FPExtOp, LLVM::FPTruncOp>(op) &&
          isa_and_nonnull<arith::FastMathFlagsAttr>(op->getAttr("fastmath"))) {
        op->removeAttr("fastmath");
        return;
      }
      // store (bitcast iN-vector to fN-vector) -> store iN-vector.
      if (auto store = dyn_cast<LLVM::StoreOp>(op)) {
        auto cast = store.getValue().getDefiningOp<LLVM::BitcastOp>();
        if (cast && isNarrowFloatVector(cast.getType()) &&
            isa<VectorType>(cast.getArg().getType()))
          store.getValueMutable().assign(cast.getArg());
        return;
      }
      if (auto store = dyn_cast<LLVM::MaskedStoreOp>(op)) {
        auto cast = store.getValue().getDefiningOp<LLVM::BitcastOp>();
        if (cast && isNarrowFloatVector(cast.getType()) &&
            isa<VectorType>(cast.getArg().getType()))
          store.getValueMutable().assign(cast.getArg());
      }
    });
  }
};

} // namespace
