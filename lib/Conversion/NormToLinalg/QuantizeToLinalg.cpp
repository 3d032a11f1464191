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

/// The block scales of the groups of `amax` (f32, of `sizes`) and the f32
/// multipliers of their elements, in one elementwise op.
static std::pair<Value, Value> buildBlockScales(OpBuilder &b, Location loc,
                                                QuantizeOp op, Value amax,
                                                ArrayRef<OpFoldResult> sizes,
                                                int64_t rank) {
  MLIRContext *context = b.getContext();
  Type scalesType = op.getScalesElementType();
  Type f32 = b.getF32Type();
  Value globalScale;
  if (TypedValue<RankedTensorType> global = op.getGlobalScale()) {
    SmallVector<Value> indices(global.getType().getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    globalScale = tensor::ExtractOp::create(b, loc, global, indices);
  }
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, context);
  Value scalesInit = tensor::EmptyOp::create(b, loc, sizes, scalesType);
  Value multipliersInit = tensor::EmptyOp::create(b, loc, sizes, f32);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{scalesInit.getType(), multipliersInit.getType()},
      ValueRange{amax}, ValueRange{scalesInit, multipliersInit},
      ArrayRef<AffineMap>{id, id, id},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value scale, multiplier;
        if (globalScale) {
          std::tie(scale, multiplier) =
              buildNVFP4Scale(nb, nl, globalScale, args[0]);
        } else {
          scale = buildPowerOfTwoScaleCode(nb, nl, op, args[0]);
          multiplier = buildPowerOfTwoMultiplier(nb, nl, scale);
        }
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{buildBlockScaleValue(nb, nl, scale, scalesType),
                       multiplier});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

/// `scales` ([..., K], row-major) in the swizzled_128x4 layout: the rows
/// (all leading dims) padded with zeros to a multiple of 128 and the groups
/// to a multiple of 4, viewed as [M/128, 4, 32, K/4, 4] (row m = 128 * m0
/// + 32 * m1 + m2, group k = 4 * k0 + k1), transposed to [m0, k0, m2, m1,
/// k1] and flattened.
static Value buildSwizzled128x4(OpBuilder &b, Location loc, Value scales) {
  auto type = cast<RankedTensorType>(scales.getType());
  int64_t rank = type.getRank();
  int64_t numGroups = type.getShape().back();
  // The bytes, so that the padding is the code 0 of every scale type.
  Type i8 = b.getI8Type();
  Value bytes = arith::BitcastOp::create(b, loc, type.clone(i8), scales);
  // [M, K].
  Value matrix;
  if (rank == 1) {
    matrix = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1, numGroups}, i8), bytes,
        ArrayRef<ReassociationIndices>{{0, 1}});
  } else if (rank == 2) {
    matrix = bytes;
  } else {
    ReassociationIndices leading;
    for (int64_t d = 0; d + 1 < rank; ++d)
      leading.push_back(d);
    matrix = tensor::CollapseShapeOp::create(
        b, loc, bytes, ArrayRef<ReassociationIndices>{leading, {rank - 1}});
  }
  auto matrixType = cast<RankedTensorType>(matrix.getType());
  int64_t paddedGroups = llvm::alignTo(numGroups, 4);
  int64_t staticRows = matrixType.getDimSize(0);
  bool dynamicRows = ShapedType::isDynamic(staticRows);
  int64_t staticPaddedRows =
      dynamicRows ? ShapedType::kDynamic : llvm::alignTo(staticRows, 128);
  // The rows of padding and the number of 128-row tiles.
  OpFoldResult padRows = b.getIndexAttr(staticPaddedRows - staticRows);
  OpFoldResult numTiles = b.getIndexAttr(staticPaddedRows / 128);
  if (dynamicRows) {
    Value numRows = tensor::DimOp::create(b, loc, matrix, 0);
    Value c128 = arith::ConstantIndexOp::create(b, loc, 128);
    Value tiles = arith::DivUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, numRows,
                              arith::ConstantIndexOp::create(b, loc, 127)),
        c128);
    numTiles = tiles;
    padRows = getAsOpFoldResult(arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, tiles, c128), numRows));
  }
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> high{padRows,
                                 b.getIndexAttr(paddedGroups - numGroups)};
  Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
  Value padded = tensor::PadOp::create(
      b, loc, RankedTensorType::get({staticPaddedRows, paddedGroups}, i8),
      matrix, low, high, zero);
  // [M/128, 4, 32, K/4, 4].
  int64_t tileRows =
      dynamicRows ? ShapedType::kDynamic : staticPaddedRows / 128;
  SmallVector<OpFoldResult> tiledSizes{
      numTiles, b.getIndexAttr(4), b.getIndexAttr(32),
      b.getIndexAttr(paddedGroups / 4), b.getIndexAttr(4)};
  Value tiled = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({tileRows, 4, 32, paddedGroups / 4, 4}, i8),
      padded, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4}}, tiledSizes);
  SmallVector<OpFoldResult> transposedSizes{tiledSizes[0], tiledSizes[3],
                                            tiledSizes[2], tiledSizes[1],
                                            tiledSizes[4]};
  Value init = tensor::EmptyOp::create(b, loc, transposedSizes, i8);
  Value transposed = linalg::TransposeOp::create(
                         b, loc, tiled, init, ArrayRef<int64_t>{0, 3, 2, 1, 4})
                         .getResult()[0];
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, transposed, ArrayRef<ReassociationIndices>{{0, 1, 2, 3, 4}});
  return arith::BitcastOp::create(
      b, loc,
      cast<RankedTensorType>(flat.getType()).clone(type.getElementType()),
      flat);
}

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
  // N / G groups per row (the verifier requires a static N for G > 0).
  int64_t numGroups = op.getGroupSize() == 0
                          ? 1
                          : inputType.getShape().back() / op.getGroupSize();
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
  if (op.isBlockScaled()) {
    auto [scales, multipliers] =
        buildBlockScales(b, loc, op, amax, scaleSizes, rank);
    Value qInit = tensor::EmptyOp::create(b, loc, groupedSizes, quantizedType);
    Value groupedQ =
        linalg::GenericOp::create(
            b, loc, qInit.getType(), ValueRange{grouped, multipliers}, qInit,
            ArrayRef<AffineMap>{groupedId, perGroup, groupedId},
            parallel(groupedRank),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  buildBlockQuantize(nb, nl, args[0], args[1], quantizedType));
            })
            .getResult(0);
    Value q = tensor::CollapseShapeOp::create(b, loc, op.getQ().getType(),
                                              groupedQ, groups);
    if (op.getScaleLayout() == ScaleLayout::swizzled_128x4)
      scales = buildSwizzled128x4(b, loc, scales);
    if (scales.getType() != scalesType)
      scales = tensor::CastOp::create(b, loc, scalesType, scales);
    return SmallVector<Value>{q, scales};
  }
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
