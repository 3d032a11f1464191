//===- FinalizeSPMD.cpp - After convert-shard-to-mpi ------------*- C++ -*-===//
//
// norm-finalize-spmd (communicators, grids and the MPI DLTI entry after
// convert-shard-to-mpi) and norm-mpi-implementation (the DLTI entry around
// the MPI-to-LLVM conversion).
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFINALIZESPMDPASS
#define GEN_PASS_DEF_NORMMPIIMPLEMENTATIONPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

namespace {

constexpr StringLiteral kImplementationKey = "MPI:Implementation";

/// The module's MPI implementation entry, or null.
StringAttr getMPIImplementation(ModuleOp module) {
  auto map = module->getAttrOfType<MapAttr>(MapAttr::name);
  if (!map)
    return {};
  for (DataLayoutEntryInterface entry : map.getEntries())
    if (auto key = dyn_cast<StringAttr>(entry.getKey()))
      if (key.getValue() == kImplementationKey)
        return dyn_cast<StringAttr>(entry.getValue());
  return {};
}

/// Rewrites the module's `dlti.map` without the MPI implementation entry
/// (and drops an empty map).
void removeMPIImplementation(ModuleOp module) {
  auto map = module->getAttrOfType<MapAttr>(MapAttr::name);
  if (!map)
    return;
  SmallVector<DataLayoutEntryInterface> kept;
  for (DataLayoutEntryInterface entry : map.getEntries()) {
    auto key = dyn_cast<StringAttr>(entry.getKey());
    if (!key || key.getValue() != kImplementationKey)
      kept.push_back(entry);
  }
  if (kept.empty())
    module->removeAttr(MapAttr::name);
  else
    module->setAttr(MapAttr::name, MapAttr::get(module.getContext(), kept));
}

bool isMPICH(ModuleOp module) { return norm::usesMPICHABI(module); }

/// `MPI_Comm_free(&comm)` after `after`, with MPICH's int handles (the
/// MPI-to-LLVM conversion turns `!mpi.comm` into an i64 holding it).
void freeCommunicator(OpBuilder &b, Location loc, Value comm,
                      func::FuncOp commFree) {
  MLIRContext *context = b.getContext();
  auto i32 = b.getI32Type();
  Value handle =
      UnrealizedConversionCastOp::create(b, loc, b.getI64Type(), comm)
          .getResult(0);
  handle = arith::TruncIOp::create(b, loc, i32, handle);
  Value slot = memref::AllocaOp::create(b, loc, MemRefType::get({}, i32));
  memref::StoreOp::create(b, loc, handle, slot);
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slot));
  Value pointer = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(context), address);
  func::CallOp::create(b, loc, commFree, ValueRange{pointer});
}

struct NormFinalizeSPMDPass
    : public norm::impl::NormFinalizeSPMDPassBase<NormFinalizeSPMDPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult left =
        module.walk([](Operation *op) {
          if (isa<shard::ShardDialect>(op->getDialect()) &&
              !isa<shard::GridOp>(op)) {
            op->emitOpError()
                << "was not lowered to MPI (convert-shard-to-mpi left it)";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (left.wasInterrupted())
      return signalPassFailure();

    // Splits with a constant color keep every rank: the world itself.
    SmallVector<mpi::CommSplitOp> splits;
    module.walk([&](mpi::CommSplitOp split) { splits.push_back(split); });
    SmallVector<mpi::CommSplitOp> kept;
    for (mpi::CommSplitOp split : splits) {
      if (matchPattern(split.getColor(), m_Constant())) {
        split.getNewcomm().replaceAllUsesWith(split.getComm());
        split.erase();
      } else {
        kept.push_back(split);
      }
    }

    // Free the others after their last use in their block.
    if (!kept.empty() && isMPICH(module)) {
      OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
      auto commFree = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          module, StringAttr::get(&getContext(), "MPI_Comm_free"));
      if (!commFree) {
        commFree = func::FuncOp::create(
            moduleBuilder, module.getLoc(), "MPI_Comm_free",
            FunctionType::get(&getContext(),
                              {LLVM::LLVMPointerType::get(&getContext())},
                              {moduleBuilder.getI32Type()}));
        commFree.setPrivate();
      }
      for (mpi::CommSplitOp split : kept) {
        Block *block = split->getBlock();
        Operation *last = split;
        for (Operation *user : split.getNewcomm().getUsers()) {
          Operation *ancestor = block->findAncestorOpInBlock(*user);
          if (ancestor && last->isBeforeInBlock(ancestor))
            last = ancestor;
        }
        OpBuilder b(last->getContext());
        b.setInsertionPointAfter(last);
        freeCommunicator(b, split.getLoc(), split.getNewcomm(), commFree);
      }
    }

    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
    if (isMPICH(module))
      removeMPIImplementation(module);
  }
};

struct NormMPIImplementationPass
    : public norm::impl::NormMPIImplementationPassBase<
          NormMPIImplementationPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (strip) {
      removeMPIImplementation(module);
      return;
    }
    if (getMPIImplementation(module))
      return;
    bool usesMPI = module
                       .walk([](Operation *op) {
                         return isa<mpi::MPIDialect>(op->getDialect())
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
    if (!usesMPI)
      return;
    MLIRContext *context = &getContext();
    SmallVector<DataLayoutEntryInterface> entries;
    if (auto map = module->getAttrOfType<MapAttr>(MapAttr::name))
      entries.append(map.getEntries().begin(), map.getEntries().end());
    entries.push_back(
        DataLayoutEntryAttr::get(StringAttr::get(context, kImplementationKey),
                                 StringAttr::get(context, "MPICH")));
    module->setAttr(MapAttr::name, MapAttr::get(context, entries));
  }
};

} // namespace

bool mlir::norm::usesMPICHABI(ModuleOp module) {
  StringAttr implementation = getMPIImplementation(module);
  return !implementation || implementation.getValue() == "MPICH";
}
