//===- NormArithmetic.cpp - Element arithmetic of the norm ops -----------===//
//
// Element-level arithmetic shared by the norm lowerings and transforms.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/TanhApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::norm;

Type mlir::norm::getTypeLike(Type like, Type elementType) {
  if (auto vectorType = dyn_cast<VectorType>(like))
    return vectorType.clone(elementType);
  return elementType;
}

/// `scalar` as a constant of `type`: itself, or splatted over a vector.
static Value buildSplatConstant(OpBuilder &b, Location loc, Type type,
                                TypedAttr scalar) {
  if (auto vectorType = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, vectorType, DenseElementsAttr::get(vectorType, scalar));
  return arith::ConstantOp::create(b, loc, scalar.getType(), scalar);
}

Value mlir::norm::buildFloatConstant(OpBuilder &b, Location loc, Type type,
                                     double value) {
  auto elementType = cast<FloatType>(getElementTypeOrSelf(type));
  return buildSplatConstant(b, loc, type, b.getFloatAttr(elementType, value));
}

Value mlir::norm::buildIntConstant(OpBuilder &b, Location loc, Type type,
                                   int64_t value) {
  auto elementType = cast<IntegerType>(getElementTypeOrSelf(type));
  return buildSplatConstant(b, loc, type, b.getIntegerAttr(elementType, value));
}

Value mlir::norm::castFloat(OpBuilder &b, Location loc, Value value,
                            Type elementType) {
  Type from = getElementTypeOrSelf(value.getType());
  if (from == elementType)
    return value;
  Type to = getTypeLike(value.getType(), elementType);
  if (elementType.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

Value mlir::norm::buildResidualSum(OpBuilder &b, Location loc, Value x,
                                   Value residual) {
  // A sum of two values of at most 16 bits is exact enough in f32 that one
  // rounding to the narrow type gives the correctly rounded sum.
  Type elementType = getElementTypeOrSelf(x.getType());
  Type wide =
      elementType.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : elementType;
  Value sum = arith::AddFOp::create(b, loc, castFloat(b, loc, x, wide),
                                    castFloat(b, loc, residual, wide));
  return castFloat(b, loc, sum, elementType);
}

Value mlir::norm::buildInverseScale(OpBuilder &b, Location loc,
                                    NormOpInterface op, Value stat) {
  Type type = stat.getType();
  Value eps =
      buildFloatConstant(b, loc, type, op.getEpsilon().convertToDouble());
  auto reciprocal = [&](Value value) -> Value {
    return arith::DivFOp::create(b, loc, buildFloatConstant(b, loc, type, 1.0),
                                 value);
  };
  if (op.subtractsMean())
    return math::RsqrtOp::create(b, loc,
                                 arith::AddFOp::create(b, loc, stat, eps));
  switch (op.getEpsilonMode()) {
  case EpsilonMode::inside_sqrt:
    return math::RsqrtOp::create(b, loc,
                                 arith::AddFOp::create(b, loc, stat, eps));
  case EpsilonMode::outside_sqrt: {
    Value root = math::SqrtOp::create(b, loc, stat);
    return reciprocal(arith::AddFOp::create(b, loc, root, eps));
  }
  case EpsilonMode::clamp: {
    // maximumf propagates NaN, so a NaN row stays NaN.
    Value root = math::SqrtOp::create(b, loc, stat);
    return reciprocal(arith::MaximumFOp::create(b, loc, root, eps));
  }
  }
  llvm_unreachable("unknown epsilon mode");
}

Value mlir::norm::buildDyTCore(OpBuilder &b, Location loc, NormOpInterface op,
                               Value alpha, Value x, bool approximateTanh) {
  Type computeType = op.getComputeElementType();
  Value scaled =
      arith::MulFOp::create(b, loc, castFloat(b, loc, alpha, computeType),
                            castFloat(b, loc, x, computeType));
  if (approximateTanh && computeType.isF32())
    return buildApproximateTanh(b, loc, scaled, getInputElementType(op));
  return math::TanhOp::create(b, loc, scaled);
}

Value mlir::norm::buildNormOutput(OpBuilder &b, Location loc,
                                  NormOpInterface op, Value n, Value weight,
                                  Value bias) {
  Type inputType = getInputElementType(op);
  Type computeType = op.getComputeElementType();
  // Effective weight w' = w + weight_offset, in the compute type.
  Value effectiveWeight;
  if (weight) {
    effectiveWeight = castFloat(b, loc, weight, computeType);
    double offset = op.getWeightOffset().convertToDouble();
    if (offset != 0.0)
      effectiveWeight = arith::AddFOp::create(
          b, loc, effectiveWeight,
          buildFloatConstant(b, loc, effectiveWeight.getType(), offset));
  }

  if (op.getCastMode() == CastMode::final) {
    Value y = n;
    if (effectiveWeight)
      y = arith::MulFOp::create(b, loc, y, effectiveWeight);
    if (bias)
      y = arith::AddFOp::create(b, loc, y,
                                castFloat(b, loc, bias, computeType));
    return castFloat(b, loc, y, inputType);
  }

  // before_weight: round n to the input type, then form n * w' + b in the
  // widest of the input, weight and bias types, and round to the input type.
  // Products and sums of 16-bit floats are formed in f32 and rounded after
  // each operation: f32 carries more than twice their precision, so this is
  // the correctly rounded narrow result, with no narrow arithmetic emitted.
  Type arithmeticType = getBeforeWeightArithmeticType(op);
  Type opType = arithmeticType.getIntOrFloatBitWidth() < 32 ? b.getF32Type()
                                                            : arithmeticType;
  auto roundToArithmetic = [&](Value value) {
    return castFloat(b, loc, castFloat(b, loc, value, arithmeticType), opType);
  };
  Value y = castFloat(b, loc, castFloat(b, loc, n, inputType), opType);
  // w' itself is not rounded to the arithmetic type: Gemma's `1 + w` keeps
  // the compute type's precision.
  if (effectiveWeight)
    y = roundToArithmetic(arith::MulFOp::create(
        b, loc, y, castFloat(b, loc, effectiveWeight, opType)));
  if (bias)
    y = roundToArithmetic(
        arith::AddFOp::create(b, loc, y, castFloat(b, loc, bias, opType)));
  return castFloat(b, loc, y, inputType);
}

Value mlir::norm::buildIndexToFloat(OpBuilder &b, Location loc, Value index,
                                    Type type) {
  Value asInt = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
  return arith::UIToFPOp::create(b, loc, type, asInt);
}
