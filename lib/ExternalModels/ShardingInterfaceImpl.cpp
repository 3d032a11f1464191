//===- ShardingInterfaceImpl.cpp - ShardingInterface of the norm ops ------===//
//
// The norm ops and norm.quantize in upstream's `shard` partitioning: the
// leading dims are parallel loops, the normalized dims reduction loops (sum),
// weight and bias follow the normalized dims, scalar parameters stay
// replicated. Partition keeps the op local when no reduction loop is split;
// when the normalized dims are split (tensor parallelism) the op becomes its
// linalg decomposition with every row sum all-reduced over the grid axes of
// those dims and the global N.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/ExternalModels/ExternalModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::norm;
using shard::GridAxis;
using shard::ReductionKind;
using shard::Sharding;

namespace {

/// Independent f64 partial sums per local row in a partitioned norm op:
/// four AVX2 (two AVX-512) vectors of f64 in flight.
constexpr int64_t kPartialSumLanes = 16;

/// (d0, ..., d(rank-1)) -> (d(begin), ..., d(end-1)).
AffineMap dimRangeMap(MLIRContext *context, int64_t rank, int64_t begin,
                      int64_t end) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = begin; d < end; ++d)
    exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(rank, 0, exprs, context);
}

/// The grid of the first non-null sharding.
shard::GridOp getGridOf(Operation *op, ArrayRef<Sharding> operandShardings,
                        ArrayRef<Sharding> resultShardings,
                        SymbolTableCollection &symbolTable) {
  for (ArrayRef<Sharding> shardings : {operandShardings, resultShardings})
    for (const Sharding &sharding : shardings)
      if (sharding)
        return shard::getGrid(op, sharding.getGridAttr(), symbolTable);
  return nullptr;
}

/// Loop -> grid axes of an op with the given maps and shardings, and the
/// grid axes split on its reduction loops.
struct LoopSharding {
  shard::ShardingArray axesOfLoop;
  SmallVector<GridAxis> reductionAxes;
};

LoopSharding getLoopSharding(shard::ShardingInterface op,
                             ArrayRef<Sharding> operandShardings,
                             ArrayRef<Sharding> resultShardings) {
  SmallVector<utils::IteratorType> loopTypes = op.getLoopIteratorTypes();
  LoopSharding result;
  result.axesOfLoop = shard::getGridAxisAssignmentForLoopIterators(
      operandShardings, resultShardings, loopTypes, op.getIndexingMaps());
  if (shard::isAtLeastOneReductionIteratorSharded(loopTypes, result.axesOfLoop))
    result.reductionAxes =
        shard::getReductionGridAxes(loopTypes, result.axesOfLoop);
  return result;
}

/// Checks that every split loop of `op` (a dim of `loopSizes`) is static and
/// divides evenly among the processes of its grid axes. A dynamic or uneven
/// split would silently give wrong shard sizes.
LogicalResult verifyEvenSplits(Operation *op, ArrayRef<int64_t> loopSizes,
                               const shard::ShardingArray &axesOfLoop,
                               shard::GridOp grid) {
  ArrayRef<int64_t> gridShape = grid.getShape();
  for (auto [loop, axes] : llvm::enumerate(axesOfLoop)) {
    if (axes.empty() || loop >= loopSizes.size())
      continue;
    int64_t processes = 1;
    for (GridAxis axis : axes) {
      if (ShapedType::isDynamic(gridShape[axis]))
        return op->emitOpError()
               << "cannot be partitioned over grid @" << grid.getSymName()
               << ": axis " << axis << " has a dynamic size";
      processes *= gridShape[axis];
    }
    if (ShapedType::isDynamic(loopSizes[loop]))
      return op->emitOpError()
             << "cannot be partitioned: dim " << loop
             << " is dynamic and split over " << processes << " processes";
    if (loopSizes[loop] % processes != 0)
      return op->emitOpError()
             << "cannot be partitioned: dim " << loop << " of size "
             << loopSizes[loop] << " does not split evenly over " << processes
             << " processes";
  }
  return success();
}

/// The grid and loop sharding of `op` (iteration domain `loopSizes`), with
/// its split dims checked (verifyEvenSplits).
FailureOr<std::pair<shard::GridOp, LoopSharding>>
analyzeSplits(Operation *op, ArrayRef<int64_t> loopSizes,
              ArrayRef<Sharding> operandShardings,
              ArrayRef<Sharding> resultShardings,
              SymbolTableCollection &symbolTable) {
  shard::GridOp grid =
      getGridOf(op, operandShardings, resultShardings, symbolTable);
  LoopSharding loops = getLoopSharding(cast<shard::ShardingInterface>(op),
                                       operandShardings, resultShardings);
  if (grid && failed(verifyEvenSplits(op, loopSizes, loops.axesOfLoop, grid)))
    return failure();
  return std::make_pair(grid, std::move(loops));
}

/// Clones `op` on the partitioned operands with the local result types and
/// returns the clone (the trivially shardable partition, kept out of
/// `partitionMap`).
Operation *cloneLocally(Operation *op, ArrayRef<Value> partitionedOperands,
                        ArrayRef<Sharding> operandShardings,
                        ArrayRef<Sharding> resultShardings,
                        SymbolTableCollection &symbolTable,
                        OpBuilder &builder) {
  IRMapping local;
  for (auto [operand, partitioned] :
       llvm::zip_equal(op->getOperands(), partitionedOperands))
    local.map(operand, partitioned);
  shard::partitionTriviallyShardableOperation(*op, partitionedOperands,
                                              operandShardings, resultShardings,
                                              local, symbolTable, builder);
  return local.lookup(op->getResult(0)).getDefiningOp();
}

/// ShardingInterface of norm.layer_norm, norm.rms_norm and norm.dyt.
template <typename OpTy>
struct NormShardingModel
    : public shard::ShardingInterface::ExternalModel<NormShardingModel<OpTy>,
                                                     OpTy> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto normOp = cast<NormOpInterface>(op);
    int64_t rank = normOp.getInputType().getRank();
    SmallVector<utils::IteratorType> types(rank, utils::IteratorType::parallel);
    if (normOp.hasReduction())
      for (int64_t d = normOp.getNormalizedDim(); d < rank; ++d)
        types[d] = utils::IteratorType::reduction;
    return types;
  }

  SmallVector<ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    auto normOp = cast<NormOpInterface>(op);
    if (!normOp.hasReduction())
      return {};
    return SmallVector<ReductionKind>(normOp.getInputType().getRank() -
                                          normOp.getNormalizedDim(),
                                      ReductionKind::Sum);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto normOp = cast<NormOpInterface>(op);
    MLIRContext *context = op->getContext();
    int64_t rank = normOp.getInputType().getRank();
    int64_t axis = normOp.getNormalizedDim();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    SmallVector<AffineMap> maps;
    for (Value operand : op->getOperands()) {
      if (operand == normOp.getX() || operand == normOp.getResidual())
        maps.push_back(identity);
      else if (operand != normOp.getAlpha() &&
               RowView::getParameterAccess(operand) == ParameterAccess::Row)
        maps.push_back(dimRangeMap(context, rank, axis, rank));
      else
        // alpha and scalar weights: one value for every element, replicated.
        maps.push_back(AffineMap::get(rank, 0, context));
    }
    // y and residual_out are indexed like x, the statistics by the rows.
    maps.append(normOp.getNumOutputs(), identity);
    maps.append(normOp.getNumStatsResults(),
                dimRangeMap(context, rank, 0, axis));
    return maps;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto normOp = cast<NormOpInterface>(op);
    auto analysis =
        analyzeSplits(op, normOp.getInputType().getShape(), operandShardings,
                      resultShardings, symbolTable);
    if (failed(analysis))
      return failure();
    auto &[grid, loops] = *analysis;
    if (loops.reductionAxes.empty()) {
      // Whole rows on every process (or DyT): the op itself, locally.
      shard::partitionTriviallyShardableOperation(
          *op, partitionedOperands, operandShardings, resultShardings,
          partitionMap, symbolTable, builder);
      return success();
    }

    // The normalized dims are split: local partial row sums, all-reduced
    // over the grid axes of those dims, and the global N.
    if (normOp.getReturnStatsFlag())
      return op->emitOpError(
          "with 'return_stats' cannot be partitioned over split normalized "
          "dims yet (split the rows instead)");
    int64_t processes = 1;
    for (GridAxis axis : loops.reductionAxes)
      processes *= grid.getShape()[axis];
    DistributedRows distributed;
    distributed.rowSizeFactor = processes;
    distributed.lanes = kPartialSumLanes;
    StringRef gridName = grid.getSymName();
    SmallVector<GridAxis> axes = loops.reductionAxes;
    distributed.combine = [gridName, axes](OpBuilder &b, Location loc,
                                           Value partial) -> Value {
      return shard::AllReduceOp::create(b, loc, partial, gridName, axes,
                                        ReductionKind::Sum)
          .getResult();
    };
    Operation *local = cloneLocally(op, partitionedOperands, operandShardings,
                                    resultShardings, symbolTable, builder);
    FailureOr<SmallVector<Value>> replacements =
        decomposeNormOp(builder, cast<NormOpInterface>(local), &distributed);
    if (failed(replacements)) {
      local->erase();
      return op->emitOpError("failed to partition over split normalized dims");
    }
    for (auto [result, replacement] :
         llvm::zip_equal(op->getResults(), *replacements))
      partitionMap.map(result, replacement);
    local->erase();
    return success();
  }
};

/// ShardingInterface of norm.quantize. The last dim is a reduction (max)
/// for per-token scales; static and per-group quantization are elementwise
/// in it (a group never straddles two processes: checked at partition).
struct QuantizeShardingModel
    : public shard::ShardingInterface::ExternalModel<QuantizeShardingModel,
                                                     QuantizeOp> {
  static bool isPerToken(QuantizeOp op) {
    int64_t n = op.getInputType().getShape().back();
    return op.isDynamic() && (op.getGroupSize() == 0 ||
                              (!ShapedType::isDynamic(n) &&
                               static_cast<int64_t>(op.getGroupSize()) == n));
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    auto quantizeOp = cast<QuantizeOp>(op);
    SmallVector<utils::IteratorType> types(quantizeOp.getInputType().getRank(),
                                           utils::IteratorType::parallel);
    if (isPerToken(quantizeOp))
      types.back() = utils::IteratorType::reduction;
    return types;
  }

  SmallVector<ReductionKind>
  getReductionLoopIteratorKinds(Operation *op) const {
    if (isPerToken(cast<QuantizeOp>(op)))
      return {ReductionKind::Max};
    return {};
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto quantizeOp = cast<QuantizeOp>(op);
    MLIRContext *context = op->getContext();
    int64_t rank = quantizeOp.getInputType().getRank();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
    SmallVector<AffineMap> maps{identity};
    if (quantizeOp.getScale())
      maps.push_back(AffineMap::get(rank, 0, context));
    if (quantizeOp.getGlobalScale())
      maps.push_back(AffineMap::get(rank, 0, context));
    maps.push_back(identity);
    // Swizzled scales are one flat dim over all rows: tied to the first
    // loop here; partition declines any split.
    if (quantizeOp.getScaleLayout() == ScaleLayout::swizzled_128x4) {
      maps.push_back(dimRangeMap(context, rank, 0, 1));
      return maps;
    }
    if (quantizeOp.isDynamic())
      // Per group, the scales' last dim (N / G groups) is split like the
      // input's; per token it is 1 and never split.
      maps.push_back(isPerToken(quantizeOp)
                         ? dimRangeMap(context, rank, 0, rank - 1)
                         : identity);
    return maps;
  }

  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    auto quantizeOp = cast<QuantizeOp>(op);
    ArrayRef<int64_t> shape = quantizeOp.getInputType().getShape();
    auto analysis = analyzeSplits(op, shape, operandShardings, resultShardings,
                                  symbolTable);
    if (failed(analysis))
      return failure();
    auto &[grid, loops] = *analysis;
    // Swizzled scales: a replicated op runs whole on every process; no split
    // keeps the scales of a piece together.
    if (quantizeOp.getScaleLayout() == ScaleLayout::swizzled_128x4 &&
        llvm::any_of(loops.axesOfLoop,
                     [](const auto &axes) { return !axes.empty(); }))
      return op->emitOpError()
             << "cannot be partitioned: swizzled_128x4 scales interleave "
                "the scales of 128 rows (use the row_major layout)";
    if (!loops.reductionAxes.empty())
      return op->emitOpError()
             << "cannot be partitioned with its last dim split: per-token "
                "scales need the whole row (use group_size, or split the "
                "leading dims)";
    int64_t rank = shape.size();
    if (grid && quantizeOp.isDynamic() &&
        static_cast<int64_t>(loops.axesOfLoop.size()) >= rank &&
        !loops.axesOfLoop[rank - 1].empty()) {
      int64_t processes = 1;
      for (GridAxis axis : loops.axesOfLoop[rank - 1])
        processes *= grid.getShape()[axis];
      int64_t localN = shape.back() / processes;
      if (localN % quantizeOp.getGroupSize() != 0)
        return op->emitOpError()
               << "cannot be partitioned: the last dim splits into pieces of "
               << localN << " elements, not a multiple of group_size "
               << quantizeOp.getGroupSize();
    }
    shard::partitionTriviallyShardableOperation(
        *op, partitionedOperands, operandShardings, resultShardings,
        partitionMap, symbolTable, builder);
    return success();
  }
};

} // namespace

void mlir::norm::registerShardingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, NormDialect *) {
    // Partition creates these ops.
    ctx->loadDialect<arith::ArithDialect, linalg::LinalgDialect,
                     shard::ShardDialect, tensor::TensorDialect>();
    LayerNormOp::attachInterface<NormShardingModel<LayerNormOp>>(*ctx);
    RMSNormOp::attachInterface<NormShardingModel<RMSNormOp>>(*ctx);
    DyTOp::attachInterface<NormShardingModel<DyTOp>>(*ctx);
    QuantizeOp::attachInterface<QuantizeShardingModel>(*ctx);
  });
}
