//===- MPIMemoryEffects.cpp - Memory effects of MPI buffer ops --*- C++ -*-===//
//
// LLVM 22's mpi.init, mpi.finalize, mpi.allreduce, mpi.send and mpi.recv
// declare no memory effects,
// so buffer-deallocation-pipeline rejects any module holding them (and
// norm-cpu-pipeline runs it). These external models declare what they do:
// read the send buffer, write the receive buffer, and communicate (a read
// and write of the default resource, so they are never reordered or
// removed).
//
//===----------------------------------------------------------------------===//

#include "norm/ExternalModels/ExternalModels.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

using Effects =
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>;

void addCommunication(Effects &effects) {
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

struct AllReduceEffects
    : public MemoryEffectOpInterface::ExternalModel<AllReduceEffects,
                                                    mpi::AllReduceOp> {
  void getEffects(Operation *op, Effects &effects) const {
    auto allReduce = cast<mpi::AllReduceOp>(op);
    addCommunication(effects);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &allReduce.getSendbufMutable());
    effects.emplace_back(MemoryEffects::Write::get(),
                         &allReduce.getRecvbufMutable());
  }
};

struct SendEffects
    : public MemoryEffectOpInterface::ExternalModel<SendEffects, mpi::SendOp> {
  void getEffects(Operation *op, Effects &effects) const {
    addCommunication(effects);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &cast<mpi::SendOp>(op).getRefMutable());
  }
};

struct RecvEffects
    : public MemoryEffectOpInterface::ExternalModel<RecvEffects, mpi::RecvOp> {
  void getEffects(Operation *op, Effects &effects) const {
    addCommunication(effects);
    effects.emplace_back(MemoryEffects::Write::get(),
                         &cast<mpi::RecvOp>(op).getRefMutable());
  }
};

/// mpi.init and mpi.finalize: communication only.
template <typename OpTy>
struct CommunicationEffects
    : public MemoryEffectOpInterface::ExternalModel<CommunicationEffects<OpTy>,
                                                    OpTy> {
  void getEffects(Operation *op, Effects &effects) const {
    addCommunication(effects);
  }
};

} // namespace

void mlir::norm::registerMPIMemoryEffectsModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, mpi::MPIDialect *) {
    mpi::AllReduceOp::attachInterface<AllReduceEffects>(*context);
    mpi::SendOp::attachInterface<SendEffects>(*context);
    mpi::RecvOp::attachInterface<RecvEffects>(*context);
    mpi::InitOp::attachInterface<CommunicationEffects<mpi::InitOp>>(*context);
    mpi::FinalizeOp::attachInterface<CommunicationEffects<mpi::FinalizeOp>>(
        *context);
  });
}
