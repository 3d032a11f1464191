//===- GradToLinalg.cpp - Decompose the gradient ops into linalg -*- C++ -*-=//
//
// norm.layer_norm_grad, norm.rms_norm_grad and norm.dyt_grad as linalg.generic
// ops on tensors: f64 row sums, one elementwise op for dx, f64 column sums
// for the parameter gradients (each a sequential loop nest: the same bits on
// every run), rounded once to their types.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/TanhApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::norm;

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Shapes and maps of one gradient decomposition.
struct GradContext {
  /// The context of gradient op `op`, building at `b`.
  static GradContext of(OpBuilder &b, NormGradOpInterface op) {
    RankedTensorType xType = op.getInputType();
    return GradContext{b,
                       op.getLoc(),
                       xType.getRank(),
                       op.getNormalizedDim(),
                       op.getComputeElementType(),
                       tensor::getMixedSizes(b, op.getLoc(), op.getX())};
  }

  OpBuilder &b;
  Location loc;
  int64_t rank;
  int64_t axis;
  Type computeType;
  SmallVector<OpFoldResult> sizes;

  MLIRContext *context() { return b.getContext(); }
  Type f64() { return b.getF64Type(); }

  AffineMap map(int64_t begin, int64_t end) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = begin; d < end; ++d)
      exprs.push_back(getAffineDimExpr(d, context()));
    return AffineMap::get(rank, 0, exprs, context());
  }
  AffineMap identity() { return map(0, rank); }
  AffineMap rows() { return map(0, axis); }
  AffineMap columns() { return map(axis, rank); }

  /// The map of a parameter operand: the normalized dims, or a broadcast of
  /// its single element (`tensor<T>` / `tensor<1xT>`).
  AffineMap parameter(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (isRowParameter(type))
      return columns();
    SmallVector<AffineExpr> zeros(type.getRank(),
                                  getAffineConstantExpr(0, context()));
    return AffineMap::get(rank, 0, zeros, context());
  }
  /// A parameter of the normalized shape (not `tensor<T>`/`tensor<1xT>`,
  /// which hold one value for every element).
  bool isRowParameter(RankedTensorType type) {
    return type.getRank() == rank - axis &&
           !isScalarParameterShape(type.getShape());
  }

  SmallVector<utils::IteratorType> iterators(int64_t reduceBegin,
                                             int64_t reduceEnd) {
    SmallVector<utils::IteratorType> types(rank, utils::IteratorType::parallel);
    for (int64_t d = reduceBegin; d < reduceEnd; ++d)
      types[d] = utils::IteratorType::reduction;
    return types;
  }

  Value zeros(ArrayRef<OpFoldResult> shape, Type type) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, type);
    return linalg::FillOp::create(b, loc, buildFloatConstant(b, loc, type, 0.0),
                                  empty)
        .getResult(0);
  }

  /// Sums `body` (computed in the compute type) into f64 accumulators of
  /// the shape given by `outMap` over the dims `sizes` selects.
  Value sum(ValueRange inputs, ArrayRef<AffineMap> inputMaps, AffineMap outMap,
            ArrayRef<OpFoldResult> outSizes,
            ArrayRef<utils::IteratorType> types, BodyFn body) {
    Value init = zeros(outSizes, f64());
    SmallVector<AffineMap> maps(inputMaps);
    maps.push_back(outMap);
    return linalg::GenericOp::create(
               b, loc, init.getType(), inputs, init, maps, types,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value term =
                     castFloat(nb, nl, body(nb, nl, args.drop_back()), f64());
                 linalg::YieldOp::create(
                     nb, nl,
                     Value(arith::AddFOp::create(nb, nl, args.back(), term)));
               })
        .getResult(0);
  }

  /// Per-row f64 sums of `body` over the normalized dims.
  Value rowSum(ValueRange inputs, ArrayRef<AffineMap> maps, BodyFn body) {
    return sum(inputs, maps, rows(), ArrayRef(sizes).take_front(axis),
               iterators(axis, rank), body);
  }

  /// The gradient of a parameter of type `paramType`: the f64 sums of
  /// `body` over the leading dims (a scalar parameter: over all dims),
  /// rounded once to the parameter's element type.
  Value parameterGradient(RankedTensorType paramType, ValueRange inputs,
                          ArrayRef<AffineMap> maps, BodyFn body) {
    bool row = isRowParameter(paramType);
    Value sums =
        row ? sum(inputs, maps, columns(), ArrayRef(sizes).drop_front(axis),
                  iterators(0, axis), body)
            : sum(inputs, maps, AffineMap::get(rank, 0, context()), {},
                  iterators(0, rank), body);
    if (!row && paramType.getRank() == 1)
      sums = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({1}, f64()), sums,
          ArrayRef<ReassociationIndices>{});
    auto sumsType = cast<RankedTensorType>(sums.getType());
    int64_t paramRank = sumsType.getRank();
    AffineMap id = AffineMap::getMultiDimIdentityMap(paramRank, context());
    Value init =
        tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, sums),
                                paramType.getElementType());
    Value result =
        linalg::GenericOp::create(
            b, loc, init.getType(), ValueRange{sums}, init,
            ArrayRef<AffineMap>{id, id},
            SmallVector<utils::IteratorType>(paramRank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  castFloat(nb, nl, args[0], paramType.getElementType()));
            })
            .getResult(0);
    if (result.getType() != paramType)
      result = tensor::CastOp::create(b, loc, paramType, result);
    return result;
  }

  /// N, the number of normalized elements per row, as a value of `type`.
  Value rowSize(Type type) {
    Value count = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t d = axis; d < rank; ++d)
      count = b.createOrFold<arith::MulIOp>(
          loc, count, getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
    return buildIndexToFloat(b, loc, count, type);
  }

  Value widen(OpBuilder &nb, Location nl, Value v) {
    return castFloat(nb, nl, v, computeType);
  }
};

/// The weight factor `w + offset` in the compute type (1 without weight).
Value weightFactor(GradContext &ctx, OpBuilder &nb, Location nl, Value w,
                   double offset) {
  if (!w)
    return buildFloatConstant(nb, nl, ctx.computeType, 1.0);
  Value widened = ctx.widen(nb, nl, w);
  if (offset == 0.0)
    return widened;
  return arith::AddFOp::create(
      nb, nl, widened, buildFloatConstant(nb, nl, ctx.computeType, offset));
}

/// layer_norm_grad and rms_norm_grad.
SmallVector<Value> decomposeNormGrad(OpBuilder &b, NormGradOpInterface op) {
  Location loc = op.getLoc();
  Value mean = op.getMean();
  double weightOffset = op.getWeightOffsetValue();
  RankedTensorType xType = op.getX().getType();
  GradContext ctx = GradContext::of(b, op);
  Value dy = op.getDy(), x = op.getX(), rstd = op.getRstd(),
        weight = op.getWeight();
  AffineMap id = ctx.identity(), rows = ctx.rows();

  // Inputs of the row sums and of dx: dy, x, [mean], rstd, [weight].
  SmallVector<Value> inputs{dy, x};
  SmallVector<AffineMap> maps{id, id};
  if (mean) {
    inputs.push_back(mean);
    maps.push_back(rows);
  }
  inputs.push_back(rstd);
  maps.push_back(rows);
  if (weight) {
    inputs.push_back(weight);
    maps.push_back(ctx.parameter(weight));
  }
  // xh and g from the block arguments laid out as above.
  auto unpack = [&, mean, weight](OpBuilder &nb, Location nl, ValueRange args) {
    unsigned next = 2;
    Value m = mean ? args[next++] : Value();
    Value r = args[next++];
    Value w = weight ? args[next++] : Value();
    Value xv = ctx.widen(nb, nl, args[1]);
    if (m)
      xv = arith::SubFOp::create(nb, nl, xv, m);
    Value xh = arith::MulFOp::create(nb, nl, xv, r);
    Value g = arith::MulFOp::create(nb, nl, ctx.widen(nb, nl, args[0]),
                                    weightFactor(ctx, nb, nl, w, weightOffset));
    return std::make_tuple(xh, g, r);
  };
  Value sumGXh = ctx.rowSum(
      inputs, maps, [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        auto [xh, g, r] = unpack(nb, nl, args);
        return arith::MulFOp::create(nb, nl, g, xh);
      });
  Value sumG;
  if (mean)
    sumG = ctx.rowSum(inputs, maps,
                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                        return std::get<1>(unpack(nb, nl, args));
                      });

  // dx = rstd * (g - sum(g)/N - xh * sum(g*xh)/N), in the compute type.
  Value count = ctx.rowSize(ctx.f64());
  SmallVector<Value> dxInputs(inputs);
  SmallVector<AffineMap> dxMaps(maps);
  dxInputs.push_back(sumGXh);
  dxMaps.push_back(rows);
  if (sumG) {
    dxInputs.push_back(sumG);
    dxMaps.push_back(rows);
  }
  dxMaps.push_back(id);
  Value dxInit =
      tensor::EmptyOp::create(b, loc, ctx.sizes, xType.getElementType());
  unsigned numInputs = inputs.size();
  Value dx =
      linalg::GenericOp::create(
          b, loc, xType, dxInputs, dxInit, dxMaps, ctx.iterators(0, 0),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            auto [xh, g, r] = unpack(nb, nl, args);
            auto meanOf = [&](Value sum) {
              return castFloat(nb, nl,
                               arith::DivFOp::create(nb, nl, sum, count),
                               ctx.computeType);
            };
            Value inner = arith::SubFOp::create(
                nb, nl, g,
                arith::MulFOp::create(nb, nl, xh, meanOf(args[numInputs])));
            if (sumG)
              inner = arith::SubFOp::create(nb, nl, inner,
                                            meanOf(args[numInputs + 1]));
            Value value = arith::MulFOp::create(nb, nl, r, inner);
            linalg::YieldOp::create(
                nb, nl, castFloat(nb, nl, value, xType.getElementType()));
          })
          .getResult(0);

  SmallVector<Value> results{dx};
  if (weight)
    results.push_back(ctx.parameterGradient(
        op.getWeight().getType(), inputs, maps,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          auto [xh, g, r] = unpack(nb, nl, args);
          return arith::MulFOp::create(nb, nl, ctx.widen(nb, nl, args[0]), xh);
        }));
  if (TypedValue<RankedTensorType> dbias = op.getDbias())
    results.push_back(ctx.parameterGradient(
        dbias.getType(), ValueRange{dy}, ArrayRef<AffineMap>{id},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return ctx.widen(nb, nl, args[0]);
        }));
  return results;
}

SmallVector<Value> decomposeDyTGrad(OpBuilder &b, NormGradOpInterface op) {
  Location loc = op.getLoc();
  RankedTensorType xType = op.getX().getType();
  GradContext ctx = GradContext::of(b, op);
  Value dy = op.getDy(), x = op.getX(), alpha = op.getAlpha(),
        weight = op.getWeight();
  AffineMap id = ctx.identity();
  SmallVector<Value> inputs{dy, x, alpha};
  SmallVector<AffineMap> maps{id, id, ctx.parameter(alpha)};
  if (weight) {
    inputs.push_back(weight);
    maps.push_back(ctx.parameter(weight));
  }
  // t = tanh(alpha x), 1 - t^2, the weight factor and dy, in the compute
  // type (1 - t^2 keeps its relative accuracy near saturation; see
  // buildTanhAndSlope).
  struct Terms {
    Value dy, x, a, w, t, slope;
  };
  auto unpack = [&, weight](OpBuilder &nb, Location nl, ValueRange args) {
    Terms terms;
    terms.dy = ctx.widen(nb, nl, args[0]);
    terms.x = ctx.widen(nb, nl, args[1]);
    terms.a = ctx.widen(nb, nl, args[2]);
    terms.w = weightFactor(ctx, nb, nl, weight ? args[3] : Value(), 0.0);
    std::tie(terms.t, terms.slope) = buildTanhAndSlope(
        nb, nl, arith::MulFOp::create(nb, nl, terms.a, terms.x));
    return terms;
  };
  Value dxInit =
      tensor::EmptyOp::create(b, loc, ctx.sizes, xType.getElementType());
  SmallVector<AffineMap> dxMaps(maps);
  dxMaps.push_back(id);
  Value dx = linalg::GenericOp::create(
                 b, loc, xType, inputs, dxInit, dxMaps, ctx.iterators(0, 0),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   Terms t = unpack(nb, nl, args);
                   Value v = arith::MulFOp::create(
                       nb, nl, arith::MulFOp::create(nb, nl, t.dy, t.w),
                       arith::MulFOp::create(nb, nl, t.a, t.slope));
                   linalg::YieldOp::create(
                       nb, nl, castFloat(nb, nl, v, xType.getElementType()));
                 })
                 .getResult(0);
  SmallVector<Value> results{dx};
  if (weight)
    results.push_back(ctx.parameterGradient(
        op.getWeight().getType(), inputs, maps,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Terms t = unpack(nb, nl, args);
          return arith::MulFOp::create(nb, nl, t.dy, t.t);
        }));
  if (TypedValue<RankedTensorType> dbias = op.getDbias())
    results.push_back(ctx.parameterGradient(
        dbias.getType(), ValueRange{dy}, ArrayRef<AffineMap>{id},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return ctx.widen(nb, nl, args[0]);
        }));
  results.push_back(ctx.parameterGradient(
      op.getAlpha().getType(), inputs, maps,
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Terms t = unpack(nb, nl, args);
        return arith::MulFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, t.dy, t.w),
            arith::MulFOp::create(nb, nl, t.x, t.slope));
      }));
  return results;
}

} // namespace

FailureOr<SmallVector<Value>>
mlir::norm::decomposeGradOp(OpBuilder &b, NormGradOpInterface grad) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(grad);
  if (grad.getAlpha())
    return decomposeDyTGrad(b, grad);
  return decomposeNormGrad(b, grad);
}
