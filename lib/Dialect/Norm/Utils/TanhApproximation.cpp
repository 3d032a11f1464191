//===- TanhApproximation.cpp - Rational tanh for DyT on the CPU -----------===//
//
// Coefficients from utils/fit-tanh.py (minimax relative error on (0, c],
// rounded to f32); its docstring describes the fit and the measurement.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/TanhApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

using namespace mlir;

namespace {
struct RationalTanh {
  /// Inputs are clamped to [-clamp, clamp].
  float clamp;
  /// P and Q, lowest degree (in x^2) first; Q[0] = 1.
  llvm::ArrayRef<float> p;
  llvm::ArrayRef<float> q;
};

// [7/8] on [-8, 8]: max abs error 4.2e-7 as evaluated in f32.
const float kP32[] = {0.999999881f, 0.129256696f, 0.00295103039f,
                      1.1428483e-05f};
const float kQ32[] = {1.0f, 0.462588847f, 0.0238155834f, 0.000238670036f,
                      2.45922791e-07f};
// [5/6] on [-6.5, 6.5]: 1.7e-5.
const float kP16[] = {0.999987781f, 0.11386922f, 0.00145356287f};
const float kQ16[] = {1.0f, 0.447123528f, 0.0172491167f, 5.24537536e-05f};
// [5/4] on [-5.1, 5.1]: 5.9e-5.
const float kPB16[] = {0.999942064f, 0.102108911f, 0.000661054219f};
const float kQB16[] = {1.0f, 0.435092211f, 0.0127253411f};

RationalTanh getApproximation(Type resultType) {
  if (resultType && resultType.isBF16())
    return {5.1f, kPB16, kQB16};
  if (resultType && resultType.isF16())
    return {6.5f, kP16, kQ16};
  return {8.0f, kP32, kQ32};
}
} // namespace

Value mlir::norm::buildApproximateTanh(OpBuilder &b, Location loc, Value x,
                                       Type resultType) {
  RationalTanh approx = getApproximation(resultType);
  Type type = x.getType();
  auto constant = [&](float value) -> Value {
    TypedAttr attr = b.getF32FloatAttr(value);
    if (auto vectorType = dyn_cast<VectorType>(type))
      attr = DenseElementsAttr::get(vectorType, attr);
    return arith::ConstantOp::create(b, loc, attr);
  };
  // Clamp with unordered comparisons, so that a NaN passes through.
  Value upper = constant(approx.clamp);
  Value lower = constant(-approx.clamp);
  Value belowUpper =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ULT, x, upper);
  Value clamped = arith::SelectOp::create(b, loc, belowUpper, x, upper);
  Value aboveLower =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGT, clamped, lower);
  clamped = arith::SelectOp::create(b, loc, aboveLower, clamped, lower);

  Value square = arith::MulFOp::create(b, loc, clamped, clamped);
  auto horner = [&](llvm::ArrayRef<float> coefficients) {
    Value acc = constant(coefficients.back());
    for (float c : llvm::reverse(coefficients.drop_back()))
      acc = math::FmaOp::create(b, loc, acc, square, constant(c));
    return acc;
  };
  Value numerator = arith::MulFOp::create(b, loc, clamped, horner(approx.p));
  return arith::DivFOp::create(b, loc, numerator, horner(approx.q));
}
