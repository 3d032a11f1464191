//===- TilingInterfaceImpl.cpp - TilingInterface of the norm ops ----------===//
//
// Tiling of norm ops over their leading (row) dims. A tile of the iteration
// domain is a block of whole rows: x and residual are sliced, weight, bias
// and alpha are used whole, and the results are the matching row blocks.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/ExternalModels/ExternalModels.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::norm;

/// Extends a tile of the leading dims to a tile of the whole tensor `value`
/// (the normalized dims are taken whole).
static void extendToFullRank(OpBuilder &b, Location loc, Value value,
                             ArrayRef<OpFoldResult> offsets,
                             ArrayRef<OpFoldResult> sizes,
                             SmallVectorImpl<OpFoldResult> &fullOffsets,
                             SmallVectorImpl<OpFoldResult> &fullSizes) {
  SmallVector<OpFoldResult> dims = tensor::getMixedSizes(b, loc, value);
  fullOffsets.assign(offsets.begin(), offsets.end());
  fullSizes.assign(sizes.begin(), sizes.end());
  for (size_t d = offsets.size(); d < dims.size(); ++d) {
    fullOffsets.push_back(b.getIndexAttr(0));
    fullSizes.push_back(dims[d]);
  }
}

/// Whether `size` is the whole extent `dim` of dim `d` of the norm op `op`:
/// equal to it, or a `tensor.dim` at `d` of x or of a result of a norm op
/// reading the same x (all of x's shape), as a tile of a consumer of a
/// dynamic result asks (tile-and-fuse tiles a clone of the producer).
static bool isWholeDim(OpFoldResult size, OpFoldResult dim, Operation *op,
                       int64_t d) {
  if (isEqualConstantIntOrValue(size, dim))
    return true;
  auto dimOp = dyn_cast_if_present<tensor::DimOp>(
      dyn_cast_if_present<Value>(size) ? cast<Value>(size).getDefiningOp()
                                       : nullptr);
  if (!dimOp)
    return false;
  std::optional<int64_t> index = dimOp.getConstantIndex();
  Value x = cast<NormOpInterface>(op).getX();
  Value source = dimOp.getSource();
  auto producer = source.getDefiningOp<NormOpInterface>();
  return index && *index == d &&
         (source == x || (producer && producer.getX() == x));
}

/// generateResultTileValue of the models below: the iteration-domain tile
/// of whole rows that produces the result tile, tiled, exposing only the
/// requested result.
template <typename Model>
static FailureOr<TilingResult> generateWholeRowsResultTile(
    const Model &model, Operation *op, OpBuilder &b, unsigned resultNumber,
    ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> tileOffsets, tileSizes;
  if (failed(model.getIterationDomainTileFromResultTile(
          op, b, resultNumber, offsets, sizes, tileOffsets, tileSizes)))
    return failure();
  FailureOr<TilingResult> result =
      model.getTiledImplementation(op, b, tileOffsets, tileSizes);
  if (failed(result))
    return failure();
  result->tiledValues = {result->tiledValues[resultNumber]};
  return result;
}

namespace {

/// TilingInterface of a norm op: its loops are the leading dims.
template <typename OpTy>
struct NormTilingInterface
    : public TilingInterface::ExternalModel<NormTilingInterface<OpTy>, OpTy> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto norm = cast<NormOpInterface>(op);
    return SmallVector<utils::IteratorType>(norm.getNormalizedDim(),
                                            utils::IteratorType::parallel);
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto norm = cast<NormOpInterface>(op);
    Location loc = op->getLoc();
    SmallVector<OpFoldResult> dims = tensor::getMixedSizes(b, loc, norm.getX());
    SmallVector<Range> domain;
    for (int64_t d = 0, e = norm.getNormalizedDim(); d < e; ++d)
      domain.push_back(Range{b.getIndexAttr(0), dims[d], b.getIndexAttr(1)});
    return domain;
  }

  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto norm = cast<NormOpInterface>(op);
    Location loc = op->getLoc();
    SmallVector<OpFoldResult> fullOffsets, fullSizes;
    extendToFullRank(b, loc, norm.getX(), offsets, sizes, fullOffsets,
                     fullSizes);
    SmallVector<OpFoldResult> strides(fullOffsets.size(), b.getIndexAttr(1));

    // Slice the row operands; parameters are shared by every tile.
    SmallVector<Operation *> slices;
    IRMapping mapping;
    for (Value operand : {norm.getX(), norm.getResidual()}) {
      if (!operand)
        continue;
      auto slice = tensor::ExtractSliceOp::create(b, loc, operand, fullOffsets,
                                                  fullSizes, strides);
      mapping.map(operand, slice.getResult());
      slices.push_back(slice);
    }
    // y and residual_out are row blocks of x's tile, the statistics their
    // leading dims.
    auto tileType =
        cast<RankedTensorType>(mapping.lookup(norm.getX()).getType());
    SmallVector<Type> resultTypes(norm.getNumOutputs(), tileType);
    resultTypes.append(
        norm.getNumStatsResults(),
        tileType.clone(tileType.getShape().take_front(norm.getNormalizedDim()),
                       norm.getComputeElementType()));
    Operation *tiled =
        mlir::clone(b, op, resultTypes,
                    llvm::map_to_vector(op->getOperands(), [&](Value v) {
                      return mapping.lookupOrDefault(v);
                    }));
    return TilingResult{
        {tiled}, SmallVector<Value>(tiled->getResults()), slices};
  }

  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    // y and residual_out have the shape of x (the result itself may not
    // dominate the tile loop); the statistics are the tile of the loops.
    auto norm = cast<NormOpInterface>(op);
    if (resultNumber >= norm.getNumOutputs()) {
      resultOffsets.assign(offsets.begin(), offsets.end());
      resultSizes.assign(sizes.begin(), sizes.end());
      return success();
    }
    extendToFullRank(b, op->getLoc(), norm.getX(), offsets, sizes,
                     resultOffsets, resultSizes);
    return success();
  }

  LogicalResult getIterationDomainTileFromResultTile(
      Operation *op, OpBuilder &b, unsigned resultNumber,
      ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
      SmallVectorImpl<OpFoldResult> &iterDomainOffsets,
      SmallVectorImpl<OpFoldResult> &iterDomainSizes) const {
    // Only tiles of whole rows can be produced; a tile of a statistic is
    // one of the loops.
    auto norm = cast<NormOpInterface>(op);
    int64_t numLoops = norm.getNormalizedDim();
    if (resultNumber >= norm.getNumOutputs()) {
      if (static_cast<int64_t>(offsets.size()) != numLoops)
        return failure();
      iterDomainOffsets.assign(offsets.begin(), offsets.end());
      iterDomainSizes.assign(sizes.begin(), sizes.end());
      return success();
    }
    SmallVector<OpFoldResult> dims =
        tensor::getMixedSizes(b, op->getLoc(), norm.getX());
    for (size_t d = numLoops; d < offsets.size(); ++d) {
      if (!isZeroInteger(offsets[d]) ||
          !isWholeDim(sizes[d], dims[d], op, static_cast<int64_t>(d)))
        return failure();
    }
    iterDomainOffsets.assign(offsets.begin(), offsets.begin() + numLoops);
    iterDomainSizes.assign(sizes.begin(), sizes.begin() + numLoops);
    return success();
  }

  FailureOr<TilingResult>
  generateResultTileValue(Operation *op, OpBuilder &b, unsigned resultNumber,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) const {
    return generateWholeRowsResultTile(*this, op, b, resultNumber, offsets,
                                       sizes);
  }
};

/// TilingInterface of norm.quantize: its loops are all dims but the last
/// (a group never spans two rows). The scale operand is used whole; the
/// scales result is tiled like q, its last dim whole.
struct QuantizeTilingInterface
    : public TilingInterface::ExternalModel<QuantizeTilingInterface,
                                            QuantizeOp> {
  static int64_t getNumLoops(Operation *op) {
    return cast<QuantizeOp>(op).getInputType().getRank() - 1;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(getNumLoops(op),
                                            utils::IteratorType::parallel);
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    SmallVector<OpFoldResult> dims =
        tensor::getMixedSizes(b, op->getLoc(), cast<QuantizeOp>(op).getInput());
    SmallVector<Range> domain;
    for (int64_t d = 0, e = getNumLoops(op); d < e; ++d)
      domain.push_back(Range{b.getIndexAttr(0), dims[d], b.getIndexAttr(1)});
    return domain;
  }

  /// Whether the scales are in the swizzled_128x4 layout: no tile of rows
  /// has its scales in a slice of them, so nothing is tiled (the producer
  /// fusion paths below decline silently).
  static bool isSwizzled(Operation *op) {
    return cast<QuantizeOp>(op).getScaleLayout() == ScaleLayout::swizzled_128x4;
  }

  /// The last dim of result `resultNumber`: N for q, N / G for the scales.
  static OpFoldResult getLastResultDim(Operation *op, OpBuilder &b,
                                       unsigned resultNumber) {
    auto quantize = cast<QuantizeOp>(op);
    if (resultNumber == 1) {
      return b.getIndexAttr(quantize.getScales().getType().getShape().back());
    }
    return tensor::getMixedSizes(b, op->getLoc(), quantize.getInput()).back();
  }

  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto quantize = cast<QuantizeOp>(op);
    // Swizzled scales of a tile of rows are not a slice of the scales.
    if (isSwizzled(op))
      return op->emitOpError(
          "cannot be tiled: swizzled_128x4 scales interleave the scales of "
          "128 rows (use the row_major layout)");
    Location loc = op->getLoc();
    SmallVector<OpFoldResult> fullOffsets, fullSizes;
    extendToFullRank(b, loc, quantize.getInput(), offsets, sizes, fullOffsets,
                     fullSizes);
    SmallVector<OpFoldResult> strides(fullOffsets.size(), b.getIndexAttr(1));
    auto slice = tensor::ExtractSliceOp::create(
        b, loc, quantize.getInput(), fullOffsets, fullSizes, strides);
    auto tileType = cast<RankedTensorType>(slice.getType());
    SmallVector<Type> resultTypes{
        tileType.clone(quantize.getQuantizedElementType())};
    if (TypedValue<RankedTensorType> scales = quantize.getScales()) {
      SmallVector<int64_t> shape(tileType.getShape());
      shape.back() = scales.getType().getShape().back();
      resultTypes.push_back(
          tileType.clone(shape, scales.getType().getElementType()));
    }
    SmallVector<Value> operands{slice.getResult()};
    if (Value scale = quantize.getScale())
      operands.push_back(scale);
    if (Value globalScale = quantize.getGlobalScale())
      operands.push_back(globalScale);
    Operation *tiled = mlir::clone(b, op, resultTypes, operands);
    return TilingResult{{tiled},
                        SmallVector<Value>(tiled->getResults()),
                        SmallVector<Operation *>{slice}};
  }

  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    if (isSwizzled(op))
      return failure();
    resultOffsets.assign(offsets.begin(), offsets.end());
    resultSizes.assign(sizes.begin(), sizes.end());
    resultOffsets.push_back(b.getIndexAttr(0));
    resultSizes.push_back(getLastResultDim(op, b, resultNumber));
    return success();
  }

  LogicalResult getIterationDomainTileFromResultTile(
      Operation *op, OpBuilder &b, unsigned resultNumber,
      ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
      SmallVectorImpl<OpFoldResult> &iterDomainOffsets,
      SmallVectorImpl<OpFoldResult> &iterDomainSizes) const {
    // Only tiles of whole rows can be produced.
    int64_t numLoops = getNumLoops(op);
    if (isSwizzled(op) ||
        static_cast<int64_t>(offsets.size()) != numLoops + 1 ||
        !isZeroInteger(offsets.back()) ||
        !isEqualConstantIntOrValue(sizes.back(),
                                   getLastResultDim(op, b, resultNumber)))
      return failure();
    iterDomainOffsets.assign(offsets.begin(), offsets.begin() + numLoops);
    iterDomainSizes.assign(sizes.begin(), sizes.begin() + numLoops);
    return success();
  }

  FailureOr<TilingResult>
  generateResultTileValue(Operation *op, OpBuilder &b, unsigned resultNumber,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) const {
    return generateWholeRowsResultTile(*this, op, b, resultNumber, offsets,
                                       sizes);
  }
};

} // namespace

void mlir::norm::registerTilingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NormDialect *) {
    LayerNormOp::attachInterface<NormTilingInterface<LayerNormOp>>(*ctx);
    RMSNormOp::attachInterface<NormTilingInterface<RMSNormOp>>(*ctx);
    DyTOp::attachInterface<NormTilingInterface<DyTOp>>(*ctx);
    QuantizeOp::attachInterface<QuantizeTilingInterface>(*ctx);
  });
}
