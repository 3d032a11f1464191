//===- NormToLinalg.cpp - Decompose norm ops into linalg --------*- C++ -*-===//
//
// The portable lowering: every norm op becomes linalg.generic ops on tensors
// (row reductions, then one elementwise op), and the norm-to-linalg pass
// (norm.quantize's decomposition is in QuantizeToLinalg.cpp, the gradient
// ops' in GradToLinalg.cpp).
// The ops' AggregatedOpInterface, which returns this decomposition, is in
// lib/ExternalModels/.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMTOLINALGPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

namespace {

/// Shapes, maps and sizes shared by the linalg ops of one decomposition.
struct DecompositionContext {
  OpBuilder &b;
  Location loc;
  NormOpInterface op;
  int64_t rank;
  int64_t axis;
  Type inputType;
  Type computeType;
  SmallVector<OpFoldResult> sizes;
  /// Independent partial sums per row (0: one sequential sum per row).
  int64_t lanes = 0;

  MLIRContext *getContext() { return b.getContext(); }

  /// (d0, ..., dR-1) -> (d0, ..., dR-1).
  AffineMap identityMap() {
    return AffineMap::getMultiDimIdentityMap(rank, getContext());
  }

  /// (d0, ..., dR-1) -> (d0, ..., d(axis-1)): the per-row statistics.
  AffineMap rowMap() {
    return AffineMap::get(rank, 0, getAffineDimExprs(0, axis), getContext());
  }

  /// (d0, ..., dR-1) -> (d0, ..., d(axis-1), 0, ..., 0): the first element of
  /// the row.
  AffineMap firstElementMap() {
    SmallVector<AffineExpr> exprs = getAffineDimExprs(0, axis);
    for (int64_t d = axis; d < rank; ++d)
      exprs.push_back(getAffineConstantExpr(0, getContext()));
    return AffineMap::get(rank, 0, exprs, getContext());
  }

  /// Map of a weight, bias or alpha operand: the normalized dims, or a
  /// broadcast of element 0 for a scalar (`tensor<T>` / `tensor<1xT>`).
  AffineMap parameterMap(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (RowView::getParameterAccess(value) == ParameterAccess::Row)
      return AffineMap::get(rank, 0, getAffineDimExprs(axis, rank),
                            getContext());
    SmallVector<AffineExpr> zeros(type.getRank(),
                                  getAffineConstantExpr(0, getContext()));
    return AffineMap::get(rank, 0, zeros, getContext());
  }

  SmallVector<AffineExpr> getAffineDimExprs(int64_t begin, int64_t end) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = begin; d < end; ++d)
      exprs.push_back(getAffineDimExpr(d, getContext()));
    return exprs;
  }

  SmallVector<utils::IteratorType> iterators(bool reduceNormalizedDims) {
    SmallVector<utils::IteratorType> types(rank, utils::IteratorType::parallel);
    if (reduceNormalizedDims)
      for (int64_t d = axis; d < rank; ++d)
        types[d] = utils::IteratorType::reduction;
    return types;
  }

  /// A zero-filled tensor of per-row values of `type`.
  Value zeroRowTensor(Type type) {
    ArrayRef<OpFoldResult> rowSizes = ArrayRef(sizes).take_front(axis);
    Value empty = tensor::EmptyOp::create(b, loc, rowSizes, type);
    Value zero = buildFloatConstant(b, loc, type, 0.0);
    return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  }

  /// N, the number of normalized elements per row, as an f64 (the type row
  /// sums are accumulated in); `factor` times the local count when the rows
  /// are split over processes.
  Value rowSizeAsFloat(int64_t factor = 1) {
    Value count = arith::ConstantIndexOp::create(b, loc, factor);
    for (int64_t d = axis; d < rank; ++d)
      count = b.createOrFold<arith::MulIOp>(
          loc, count, getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
    return buildIndexToFloat(b, loc, count,
                             RowView::getRowSumType(b.getContext()));
  }

  /// Builds a linalg.generic over all dims of x reducing the normalized ones
  /// into a per-row f64 accumulator; `body` returns the value (in the compute
  /// type, or in f64) added to it. Accumulating a row of up to 2^20 and more
  /// f32 terms one after the other loses too much in f32.
  Value
  rowReduction(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
               function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    if (Value laned = rowReductionInLanes(inputs, inputMaps, body))
      return laned;
    Value init = zeroRowTensor(RowView::getRowSumType(b.getContext()));
    SmallVector<AffineMap> maps(inputMaps);
    maps.push_back(rowMap());
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), inputs, init, maps, iterators(true),
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          Value term = castFloat(nested, nestedLoc,
                                 body(nested, nestedLoc, args.drop_back()),
                                 RowView::getRowSumType(nested.getContext()));
          Value sum =
              arith::AddFOp::create(nested, nestedLoc, args.back(), term);
          linalg::YieldOp::create(nested, nestedLoc, sum);
        });
    return generic.getResult(0);
  }

  /// With `lanes` = L, one normalized dim of static size divisible by L, and
  /// inputs mapped by identityMap() or rowMap(): the row viewed as [N/L, L],
  /// L independent f64 partial sums per row (no chain of N dependent adds,
  /// so the loops vectorize), then their sum. Null when not applicable.
  Value rowReductionInLanes(
      ValueRange inputs, ArrayRef<AffineMap> inputMaps,
      function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    if (lanes <= 1 || axis != rank - 1)
      return {};
    std::optional<int64_t> n = getConstantIntValue(sizes[axis]);
    if (!n || *n % lanes != 0 || *n < lanes)
      return {};
    MLIRContext *context = getContext();
    Type f64 = RowView::getRowSumType(context);
    int64_t laneRank = rank + 1;
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < axis; ++d)
      groups.push_back({d});
    groups.push_back({axis, axis + 1});
    SmallVector<Value> laneInputs;
    SmallVector<AffineMap> maps;
    for (auto [input, map] : llvm::zip_equal(inputs, inputMaps)) {
      if (map == identityMap()) {
        auto type = cast<RankedTensorType>(input.getType());
        SmallVector<int64_t> shape(type.getShape().drop_back());
        shape.append({*n / lanes, lanes});
        SmallVector<OpFoldResult> laneSizes(
            ArrayRef<OpFoldResult>(sizes).drop_back());
        laneSizes.append({b.getIndexAttr(*n / lanes), b.getIndexAttr(lanes)});
        laneInputs.push_back(tensor::ExpandShapeOp::create(
            b, loc, type.clone(shape), input, groups, laneSizes));
        maps.push_back(AffineMap::getMultiDimIdentityMap(laneRank, context));
      } else if (map == rowMap()) {
        laneInputs.push_back(input);
        maps.push_back(AffineMap::getMultiDimIdentityMap(laneRank, context)
                           .getMajorSubMap(axis));
      } else {
        return {};
      }
    }
    SmallVector<OpFoldResult> accSizes(
        ArrayRef<OpFoldResult>(sizes).take_front(axis));
    accSizes.push_back(b.getIndexAttr(lanes));
    Value zero = buildFloatConstant(b, loc, f64, 0.0);
    Value acc = linalg::FillOp::create(
                    b, loc, zero,
                    ValueRange{tensor::EmptyOp::create(b, loc, accSizes, f64)})
                    .getResult(0);
    SmallVector<AffineExpr> accExprs;
    for (int64_t d = 0; d < axis; ++d)
      accExprs.push_back(getAffineDimExpr(d, context));
    accExprs.push_back(getAffineDimExpr(laneRank - 1, context));
    maps.push_back(AffineMap::get(laneRank, 0, accExprs, context));
    SmallVector<utils::IteratorType> types(laneRank,
                                           utils::IteratorType::parallel);
    types[axis] = utils::IteratorType::reduction;
    Value partial =
        linalg::GenericOp::create(
            b, loc, acc.getType(), laneInputs, acc, maps, types,
            [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
              Value term =
                  castFloat(nested, nestedLoc,
                            body(nested, nestedLoc, args.drop_back()), f64);
              linalg::YieldOp::create(
                  nested, nestedLoc,
                  Value(arith::AddFOp::create(nested, nestedLoc, args.back(),
                                              term)));
            })
            .getResult(0);
    // The L partial sums of each row, added up.
    Value init = zeroRowTensor(f64);
    AffineMap laneId = AffineMap::getMultiDimIdentityMap(axis + 1, context);
    SmallVector<utils::IteratorType> sumTypes(axis + 1,
                                              utils::IteratorType::parallel);
    sumTypes[axis] = utils::IteratorType::reduction;
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{partial}, init,
               ArrayRef<AffineMap>{laneId, laneId.getMajorSubMap(axis)},
               sumTypes,
               [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
                 linalg::YieldOp::create(
                     nested, nestedLoc,
                     Value(arith::AddFOp::create(nested, nestedLoc, args[1],
                                                 args[0])));
               })
        .getResult(0);
  }

  /// The per-row factor of the normalization from the f64 row sums of
  /// squares (centered for layer_norm): the statistic sum / N in the
  /// compute type, through the op's epsilon and epsilon_mode.
  Value inverseScale(Value sumOfSquares, Value count) {
    return rowElementwise(
        {sumOfSquares},
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value statistic =
              castFloat(nb, nl, arith::DivFOp::create(nb, nl, args[0], count),
                        computeType);
          return buildInverseScale(nb, nl, op, statistic);
        });
  }

  /// The row mean of LayerNorm in the type of `shiftedMean` (f64): the
  /// first element of the row `s` (the shift) plus `shiftedMean`, the mean
  /// of the row minus it, added in that type (rounded once to the compute
  /// type by the caller). A reduction over the row that adds the shift at
  /// the first element only, so that an empty row reads nothing (its mean
  /// stays 0 / 0).
  Value rowMeanFromShift(Value s, Value shiftedMean) {
    SmallVector<utils::IteratorType> types = iterators(true);
    return linalg::GenericOp::create(
               b, loc, shiftedMean.getType(), ValueRange{s}, shiftedMean,
               ArrayRef<AffineMap>{identityMap(), rowMap()}, types,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value isFirst;
                 Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
                 for (int64_t d = axis; d < rank; ++d) {
                   Value index = linalg::IndexOp::create(nb, nl, d);
                   Value atZero = arith::CmpIOp::create(
                       nb, nl, arith::CmpIPredicate::eq, index, zero);
                   isFirst =
                       isFirst ? arith::AndIOp::create(nb, nl, isFirst, atZero)
                                     .getResult()
                               : atZero;
                 }
                 Value withShift = arith::AddFOp::create(
                     nb, nl,
                     castFloat(nb, nl, castFloat(nb, nl, args[0], computeType),
                               args[1].getType()),
                     args[1]);
                 linalg::YieldOp::create(
                     nb, nl,
                     Value(arith::SelectOp::create(nb, nl, isFirst, withShift,
                                                   args[1])));
               })
        .getResult(0);
  }

  /// Builds an elementwise linalg.generic over the row dims only, mapping
  /// per-row statistics to new per-row values of `resultType` (default: the
  /// compute type).
  Value
  rowElementwise(ValueRange inputs,
                 function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                 Type resultType = {}) {
    Value init = zeroRowTensor(resultType ? resultType : computeType);
    SmallVector<AffineMap> maps(
        inputs.size() + 1,
        AffineMap::getMultiDimIdentityMap(axis, getContext()));
    SmallVector<utils::IteratorType> types(axis, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, init.getType(), inputs, init, maps, types,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          linalg::YieldOp::create(nested, nestedLoc,
                                  body(nested, nestedLoc, args.drop_back()));
        });
    return generic.getResult(0);
  }
};

/// The row statistics of one decomposition and how the final elementwise op
/// uses them: its inputs after `s` (with their indexing maps), how its body
/// computes the normalized value n from them (`args[0]` is s), and the
/// `return_stats` results: the row mean (layer_norm) and the factor of the
/// normalization, in the compute type.
struct NormStatistics {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  std::function<Value(OpBuilder &, Location, ValueRange)> normalized;
  Value meanStat, rstdStat;
};

} // namespace

/// DyT: n = tanh(alpha * s); no statistics.
static NormStatistics buildDyTStatistics(DecompositionContext &ctx) {
  NormOpInterface op = ctx.op;
  NormStatistics stats;
  stats.inputs.push_back(op.getAlpha());
  stats.maps.push_back(ctx.parameterMap(op.getAlpha()));
  stats.normalized = [op](OpBuilder &nb, Location nl, ValueRange args) {
    return buildDyTCore(nb, nl, op, args[1], args[0]);
  };
  return stats;
}

/// LayerNorm over rows split across processes: each holds a different
/// first element, so no common shift. Sum in f64, combine, mean in f64;
/// then the centered squares about that mean, in f64, combined.
static NormStatistics
buildDistributedLayerNormStatistics(DecompositionContext &ctx, Value s,
                                    const DistributedRows &distributed) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  NormOpInterface op = ctx.op;
  Type computeType = ctx.computeType;
  NormStatistics stats;
  Type f64 = RowView::getRowSumType(b.getContext());
  Value count = ctx.rowSizeAsFloat(distributed.rowSizeFactor);
  // By value: `normalized` calls it after this block.
  auto centered = [computeType, f64](OpBuilder &nb, Location nl, Value v,
                                     Value mean) {
    return arith::SubFOp::create(
        nb, nl, castFloat(nb, nl, castFloat(nb, nl, v, computeType), f64),
        mean);
  };
  Value sum = distributed.combine(
      b, loc,
      ctx.rowReduction({s}, {ctx.identityMap()},
                       [&](OpBuilder &nb, Location nl, ValueRange args) {
                         return castFloat(nb, nl, args[0], computeType);
                       }));
  Value mean = ctx.rowElementwise(
      {sum},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::DivFOp::create(nb, nl, args[0], count);
      },
      f64);
  Value squares = distributed.combine(
      b, loc,
      ctx.rowReduction({s, mean}, {ctx.identityMap(), ctx.rowMap()},
                       [&](OpBuilder &nb, Location nl, ValueRange args) {
                         Value d = centered(nb, nl, args[0], args[1]);
                         return arith::MulFOp::create(nb, nl, d, d).getResult();
                       }));
  Value scale = ctx.inverseScale(squares, count);
  if (op.getReturnStatsFlag())
    stats.meanStat = ctx.rowElementwise(
        {mean, scale}, [&](OpBuilder &nb, Location nl, ValueRange args) {
          return buildMeanStatistic(
              nb, nl, castFloat(nb, nl, args[0], computeType), args[1]);
        });
  stats.rstdStat = scale;
  stats.inputs.append({mean, scale});
  stats.maps.append({ctx.rowMap(), ctx.rowMap()});
  stats.normalized = [computeType, centered](OpBuilder &nb, Location nl,
                                             ValueRange args) {
    Value d =
        castFloat(nb, nl, centered(nb, nl, args[0], args[1]), computeType);
    return arith::MulFOp::create(nb, nl, d, args[2]).getResult();
  };
  return stats;
}

/// LayerNorm on data shifted by the row's first element (exact):
/// m = sum(s - s0) / N, var = sum((s - s0 - m)^2) / N.
static NormStatistics buildShiftedLayerNormStatistics(DecompositionContext &ctx,
                                                      Value s) {
  OpBuilder &b = ctx.b;
  NormOpInterface op = ctx.op;
  Type computeType = ctx.computeType;
  NormStatistics stats;
  Value count = ctx.rowSizeAsFloat();
  AffineMap first = ctx.firstElementMap();
  auto shifted = [computeType](OpBuilder &nb, Location nl, Value v, Value v0) {
    return arith::SubFOp::create(nb, nl, castFloat(nb, nl, v, computeType),
                                 castFloat(nb, nl, v0, computeType));
  };
  Value sum = ctx.rowReduction(
      {s, s}, {ctx.identityMap(), first},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return shifted(nb, nl, args[0], args[1]);
      });
  // The mean of s - s0 in the compute type; with return_stats also in
  // f64, for the mean statistic (s0 added before it is rounded).
  Type f64 = RowView::getRowSumType(b.getContext());
  bool wantsMean = op.getReturnStatsFlag();
  Value shiftedMean = ctx.rowElementwise(
      {sum},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value mean = arith::DivFOp::create(nb, nl, args[0], count);
        return wantsMean ? mean : castFloat(nb, nl, mean, computeType);
      },
      wantsMean ? f64 : computeType);
  Value mean =
      !wantsMean
          ? shiftedMean
          : ctx.rowElementwise(
                {shiftedMean},
                [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
                  return castFloat(nb, nl, args[0], computeType);
                });
  // The centered deviations are squared in f64: their squares may
  // overflow the compute type where the variance does not.
  Value squares = ctx.rowReduction(
      {s, s, mean}, {ctx.identityMap(), first, ctx.rowMap()},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value d =
            castFloat(nb, nl,
                      arith::SubFOp::create(
                          nb, nl, shifted(nb, nl, args[0], args[1]), args[2]),
                      f64);
        return arith::MulFOp::create(nb, nl, d, d);
      });
  Value scale = ctx.inverseScale(squares, count);
  if (op.getReturnStatsFlag())
    stats.meanStat = ctx.rowElementwise(
        {ctx.rowMeanFromShift(s, shiftedMean), scale},
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return buildMeanStatistic(
              nb, nl, castFloat(nb, nl, args[0], computeType), args[1]);
        });
  stats.rstdStat = scale;
  stats.inputs.append({s, mean, scale});
  stats.maps.append({first, ctx.rowMap(), ctx.rowMap()});
  stats.normalized = [shifted](OpBuilder &nb, Location nl, ValueRange args) {
    Value centered = arith::SubFOp::create(
        nb, nl, shifted(nb, nl, args[0], args[1]), args[2]);
    return arith::MulFOp::create(nb, nl, centered, args[3]).getResult();
  };
  return stats;
}

/// RMSNorm: ms = sum(s^2) / N (row sums combined when distributed).
static NormStatistics
buildRMSNormStatistics(DecompositionContext &ctx, Value s,
                       const DistributedRows *distributed) {
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  Type computeType = ctx.computeType;
  NormStatistics stats;
  Value count =
      ctx.rowSizeAsFloat(distributed ? distributed->rowSizeFactor : 1);
  Value squares = ctx.rowReduction(
      {s}, {ctx.identityMap()},
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        // Squared in f64 (after the rounding to the compute type): a
        // square may overflow the compute type where the mean does not.
        Value v = castFloat(nb, nl, castFloat(nb, nl, args[0], computeType),
                            RowView::getRowSumType(nb.getContext()));
        return arith::MulFOp::create(nb, nl, v, v);
      });
  if (distributed)
    squares = distributed->combine(b, loc, squares);
  Value scale = ctx.inverseScale(squares, count);
  stats.rstdStat = scale;
  stats.inputs.push_back(scale);
  stats.maps.push_back(ctx.rowMap());
  stats.normalized = [computeType](OpBuilder &nb, Location nl,
                                   ValueRange args) {
    return arith::MulFOp::create(
               nb, nl, castFloat(nb, nl, args[0], computeType), args[1])
        .getResult();
  };
  return stats;
}

FailureOr<SmallVector<Value>>
mlir::norm::decomposeNormOp(OpBuilder &b, NormOpInterface op,
                            const DistributedRows *distributed) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  RankedTensorType xType = op.getInputType();
  DecompositionContext ctx{b,
                           loc,
                           op,
                           xType.getRank(),
                           op.getNormalizedDim(),
                           xType.getElementType(),
                           op.getComputeElementType(),
                           tensor::getMixedSizes(b, loc, op.getX())};
  if (distributed)
    ctx.lanes = distributed->lanes;
  Value x = op.getX();

  // s = x + residual, rounded to the input type: also `residual_out`.
  SmallVector<Value> results;
  Value s = x;
  if (Value residual = op.getResidual()) {
    Value init = tensor::EmptyOp::create(b, loc, ctx.sizes, ctx.inputType);
    AffineMap id = ctx.identityMap();
    s = linalg::GenericOp::create(
            b, loc, xType, ValueRange{x, residual}, init,
            ArrayRef<AffineMap>{id, id, id}, ctx.iterators(false),
            [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
              linalg::YieldOp::create(
                  nested, nestedLoc,
                  buildResidualSum(nested, nestedLoc, args[0], args[1]));
            })
            .getResult(0);
  }

  // The row statistics, then one elementwise op: n from s and the
  // statistics, then weight and bias.
  NormStatistics stats =
      !op.hasReduction() ? buildDyTStatistics(ctx)
      : op.subtractsMean() && distributed
          ? buildDistributedLayerNormStatistics(ctx, s, *distributed)
      : op.subtractsMean() ? buildShiftedLayerNormStatistics(ctx, s)
                           : buildRMSNormStatistics(ctx, s, distributed);
  SmallVector<Value> inputs{s};
  inputs.append(stats.inputs);
  SmallVector<AffineMap> maps{ctx.identityMap()};
  maps.append(stats.maps);
  std::function<Value(OpBuilder &, Location, ValueRange)> normalized =
      std::move(stats.normalized);
  Value meanStat = stats.meanStat, rstdStat = stats.rstdStat;

  // Weight and bias come last among the inputs.
  int64_t numCoreInputs = inputs.size();
  Value weight = op.getWeight(), bias = op.getBias();
  if (weight) {
    inputs.push_back(weight);
    maps.push_back(ctx.parameterMap(weight));
  }
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(ctx.parameterMap(bias));
  }
  maps.push_back(ctx.identityMap());
  Value init = tensor::EmptyOp::create(b, loc, ctx.sizes, ctx.inputType);
  Value y = linalg::GenericOp::create(
                b, loc, xType, inputs, init, maps, ctx.iterators(false),
                [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
                  Value n = normalized(nested, nestedLoc,
                                       args.take_front(numCoreInputs));
                  int64_t next = numCoreInputs;
                  Value w = weight ? args[next++] : Value();
                  Value bv = bias ? args[next++] : Value();
                  linalg::YieldOp::create(
                      nested, nestedLoc,
                      buildNormOutput(nested, nestedLoc, op, n, w, bv));
                })
                .getResult(0);

  results.push_back(y);
  if (op.getResidual())
    results.push_back(s);
  if (op.getMean())
    results.push_back(meanStat);
  if (op.getRstd())
    results.push_back(rstdStat);
  return results;
}

//===----------------------------------------------------------------------===//
// Patterns and pass
//===----------------------------------------------------------------------===//

namespace {

struct NormToLinalgPass
    : public norm::impl::NormToLinalgPassBase<NormToLinalgPass> {
  void runOnOperation() override;
};

} // namespace

void mlir::norm::populateNormToLinalgPatterns(RewritePatternSet &patterns) {
  // Rewrites any norm op into its linalg decomposition.
  patterns.add<LowerNormOpPattern>(
      patterns.getContext(), "NormOpToLinalg",
      [](RewriterBase &rewriter, NormOpInterface op) {
        return decomposeNormOp(rewriter, op);
      });
  patterns.add<LowerOpPattern<QuantizeOp>>(
      patterns.getContext(), "QuantizeOpToLinalg",
      [](RewriterBase &rewriter, QuantizeOp op) {
        return decomposeQuantizeOp(rewriter, op);
      });
  populateGradToLinalgPatterns(patterns);
}

void mlir::norm::populateGradToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerGradOpPattern>(
      patterns.getContext(), "GradOpToLinalg",
      [](RewriterBase &rewriter, NormGradOpInterface op) {
        return decomposeGradOp(rewriter, op);
      });
}

void NormToLinalgPass::runOnOperation() {
  // Every norm op is rewritten in one walk; the decomposition never fails on
  // a verified op, so no greedy fixpoint is needed.
  RewritePatternSet patterns(&getContext());
  populateNormToLinalgPatterns(patterns);
  if (failed(applyNormLoweringPatterns(getOperation(), std::move(patterns),
                                       "failed to decompose into linalg")))
    return signalPassFailure();
}
