//===- AggregatedOpInterfaceImpl.cpp - AggregatedOpInterface of norm ops --===//
//
// `linalg::AggregatedOpInterface` of the norm ops: their decomposition into
// linalg (norm-to-linalg's), so upstream's decompose_interface applies.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/ExternalModels/ExternalModels.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::norm;

namespace {

/// `linalg::AggregatedOpInterface` for a norm op: its linalg decomposition.
template <typename OpTy>
struct NormAggregatedOpModel
    : public linalg::AggregatedOpInterface::ExternalModel<
          NormAggregatedOpModel<OpTy>, OpTy> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    return decomposeNormOp(b, cast<NormOpInterface>(op));
  }
};

/// `linalg::AggregatedOpInterface` for norm.quantize.
struct QuantizeAggregatedOpModel
    : public linalg::AggregatedOpInterface::ExternalModel<
          QuantizeAggregatedOpModel, QuantizeOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    return decomposeQuantizeOp(b, cast<QuantizeOp>(op));
  }
};

/// `linalg::AggregatedOpInterface` for a gradient op.
template <typename OpTy>
struct GradAggregatedOpModel
    : public linalg::AggregatedOpInterface::ExternalModel<
          GradAggregatedOpModel<OpTy>, OpTy> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    return decomposeGradOp(b, cast<NormGradOpInterface>(op));
  }
};

} // namespace

void mlir::norm::registerAggregatedOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NormDialect *) {
    LayerNormOp::attachInterface<NormAggregatedOpModel<LayerNormOp>>(*ctx);
    RMSNormOp::attachInterface<NormAggregatedOpModel<RMSNormOp>>(*ctx);
    DyTOp::attachInterface<NormAggregatedOpModel<DyTOp>>(*ctx);
    QuantizeOp::attachInterface<QuantizeAggregatedOpModel>(*ctx);
    LayerNormGradOp::attachInterface<GradAggregatedOpModel<LayerNormGradOp>>(
        *ctx);
    RMSNormGradOp::attachInterface<GradAggregatedOpModel<RMSNormGradOp>>(*ctx);
    DyTGradOp::attachInterface<GradAggregatedOpModel<DyTGradOp>>(*ctx);
  });
}
