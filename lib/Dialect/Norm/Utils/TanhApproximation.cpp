//===- TanhApproximation.cpp - Rational tanh for DyT on the CPU -----------===//
//
// Coefficients from utils/fit-tanh.py (minimax relative error on (0, c],
// rounded to f32); its docstring describes the fit and the measurement.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/TanhApproximation.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
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
  auto constant = [&](float value) {
    return buildFloatConstant(b, loc, x.getType(), value);
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

std::pair<Value, Value> mlir::norm::buildTanhAndSlope(OpBuilder &b,
                                                      Location loc, Value z) {
  Type type = z.getType();
  if (getElementTypeOrSelf(type).isF64()) {
    // f64: math.tanh, and the slope from math.exp (no cancellation).
    Value e = math::ExpOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, math::AbsFOp::create(b, loc, z),
                              buildFloatConstant(b, loc, type, -2.0)));
    Value onePlusE =
        arith::AddFOp::create(b, loc, buildFloatConstant(b, loc, type, 1.0), e);
    Value slope = arith::DivFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, buildFloatConstant(b, loc, type, 4.0), e),
        arith::MulFOp::create(b, loc, onePlusE, onePlusE));
    return {math::TanhOp::create(b, loc, z), slope};
  }
  Type i32Type = getTypeLike(type, b.getI32Type());
  auto constant = [&](float value) {
    return buildFloatConstant(b, loc, type, value);
  };
  auto intConstant = [&](int32_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  auto fma = [&](Value x, Value y, Value addend) -> Value {
    return math::FmaOp::create(b, loc, x, y, addend);
  };

  // y = -2 min(|z|, 44) (a NaN stays NaN), in [-88, 0].
  Value a = arith::MinimumFOp::create(b, loc, math::AbsFOp::create(b, loc, z),
                                      constant(44.0f));
  Value y = arith::MulFOp::create(b, loc, a, constant(-2.0f));
  // y = k ln2 + r, k = roundeven(y / ln2) in [-127, 0]: added to 1.5 * 2^23,
  // whose ulp is 1, the quotient rounds to k, held in the low bits.
  Value shifter = constant(12582912.0f);
  Value shifted = fma(y, constant(1.44269502f), shifter);
  Value k = arith::SubFOp::create(b, loc, shifted, shifter);
  Value r = fma(k, constant(-0.693147182f), y);
  r = fma(k, constant(1.90465421e-09f), r);
  // expm1(r) = r + r^2 (1/2 + r/6 + ... + r^5/5040), |r| <= ln2 / 2: the
  // first omitted term is below 2^-27 of the result.
  Value poly = constant(1.0f / 5040.0f);
  for (float c :
       {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f})
    poly = fma(poly, r, constant(c));
  Value expm1r = fma(arith::MulFOp::create(b, loc, r, r), poly, r);
  // 2^k from its exponent field, k + 127 (0 for k = -127: e flushes to 0).
  Value exponent = arith::SubIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32Type, shifted),
      intConstant(0x4B400000 - 127));
  Value scale = arith::BitcastOp::create(
      b, loc, type, arith::ShLIOp::create(b, loc, exponent, intConstant(23)));
  // e = 2^k (1 + expm1(r)); e - 1 = 2^k expm1(r) + (2^k - 1).
  Value e = fma(scale, expm1r, scale);
  Value em1 =
      fma(scale, expm1r, arith::SubFOp::create(b, loc, scale, constant(1.0f)));
  Value inverse = arith::DivFOp::create(
      b, loc, constant(1.0f), arith::AddFOp::create(b, loc, constant(1.0f), e));
  Value t = math::CopySignOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, em1),
                            inverse),
      z);
  Value slope = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, constant(4.0f), e),
      arith::MulFOp::create(b, loc, inverse, inverse));
  return {t, slope};
}
