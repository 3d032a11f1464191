//===- QuantizeToLinalg.cpp - Decompose norm.quantize into linalg ---------===//
//
// The portable lowering of norm.quantize: linalg.generic ops on tensors (the
// group `max |y|` reduction and the scales in the dynamic form, then one
// elementwise conversion), shared by norm-to-linalg and the op's
// AggregatedOpInterface.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace mlir::norm;

FailureOr<SmallVector<Value>> mlir::norm::decomposeQuantizeOp(OpBuilder &b,
                                                              QuantizeOp op) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  MLIRContext *context = b.getContext();
  RankedTensorType inputType = op.getInputType();
  int64_t rank = inputType.getRank();
  Type quantizedType = op.getQuantizedElementType();
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, loc, op.getInput());
  auto parallel = [](int64_t n) {
    return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
  };

  if (TypedValue<RankedTensorType> scale = op.getScale()) {
    // Static: the reciprocal once, then one elementwise op.
    SmallVector<Value> indices(scale.getType().getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    Value inverse = buildReciprocal(
        b, loc, tensor::ExtractOp::create(b, loc, scale, indices));
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, context);
    Value init = tensor::EmptyOp::create(b, loc, sizes, quantizedType);
    Value q = linalg::GenericOp::create(
                  b, loc, init.getType(), ValueRange{op.getInput()}, init,
                  ArrayRef<AffineMap>{id, id}, parallel(rank),
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, nl,
                        buildQuantize(nb, nl, args[0], inverse, quantizedType));
                  })
                  .getResult(0);
    return SmallVector<Value>{q};
  }

  // Dynamic: view the input as [..., N / G, G], reduce max |y| over the
  // groups, compute the scales, quantize, and collapse back.
  RankedTensorType scalesType = op.getScales().getType();
  int64_t numGroups = scalesType.getShape().back();
  SmallVector<OpFoldResult> groupedSizes(sizes);
  groupedSizes.back() = b.getIndexAttr(numGroups);
  groupedSizes.push_back(op.getGroupSize() != 0
                             ? OpFoldResult(b.getIndexAttr(op.getGroupSize()))
                             : sizes.back());
  SmallVector<int64_t> groupedShape(inputType.getShape());
  groupedShape.back() = numGroups;
  groupedShape.push_back(op.getGroupSize() != 0 ? op.getGroupSize()
                                                : inputType.getShape().back());
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  Value grouped =
      tensor::ExpandShapeOp::create(b, loc, inputType.clone(groupedShape),
                                    op.getInput(), groups, groupedSizes);

  int64_t groupedRank = rank + 1;
  AffineMap groupedId = AffineMap::getMultiDimIdentityMap(groupedRank, context);
  AffineMap perGroup = AffineMap::getMultiDimIdentityMap(groupedRank, context)
                           .dropResult(groupedRank - 1);
  SmallVector<OpFoldResult> scaleSizes(groupedSizes.begin(),
                                       groupedSizes.end() - 1);
  Type f32 = b.getF32Type();
  Value zero = buildFloatConstant(b, loc, f32, 0.0);
  Value amaxInit =
      linalg::FillOp::create(
          b, loc, zero,
          ValueRange{tensor::EmptyOp::create(b, loc, scaleSizes, f32)})
          .getResult(0);
  SmallVector<utils::IteratorType> reduceLast = parallel(groupedRank);
  reduceLast.back() = utils::IteratorType::reduction;
  Value amax =
      linalg::GenericOp::create(
          b, loc, amaxInit.getType(), ValueRange{grouped}, ValueRange{amaxInit},
          ArrayRef<AffineMap>{groupedId, perGroup}, reduceLast,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl,
                Value(arith::MaximumFOp::create(
                    nb, nl, args[1], buildMagnitude(nb, nl, args[0]))));
          })
          .getResult(0);
  AffineMap scaleId = AffineMap::getMultiDimIdentityMap(rank, context);
  Value scales =
      linalg::GenericOp::create(
          b, loc, amaxInit.getType(), ValueRange{amax},
          ValueRange{tensor::EmptyOp::create(b, loc, scaleSizes, f32)},
          ArrayRef<AffineMap>{scaleId, scaleId}, parallel(rank),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(nb, nl,
                                    buildGroupScale(nb, nl, op, args[0]));
          })
          .getResult(0);
  Value inverses =
      linalg::GenericOp::create(
          b, loc, amaxInit.getType(), ValueRange{scales},
          ValueRange{tensor::EmptyOp::create(b, loc, scaleSizes, f32)},
          ArrayRef<AffineMap>{scaleId, scaleId}, parallel(rank),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(nb, nl, buildReciprocal(nb, nl, args[0]));
          })
          .getResult(0);
  Value qInit = tensor::EmptyOp::create(b, loc, groupedSizes, quantizedType);
  Value groupedQ =
      linalg::GenericOp::create(
          b, loc, qInit.getType(), ValueRange{grouped, inverses}, qInit,
          ArrayRef<AffineMap>{groupedId, perGroup, groupedId},
          parallel(groupedRank),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl, buildQuantize(nb, nl, args[0], args[1], quantizedType));
          })
          .getResult(0);
  Value q = tensor::CollapseShapeOp::create(b, loc, op.getQ().getType(),
                                            groupedQ, groups);
  if (scales.getType() != scalesType)
    scales = tensor::CastOp::create(b, loc, scalesType, scales);
  return SmallVector<Value>{q, scales};
}
