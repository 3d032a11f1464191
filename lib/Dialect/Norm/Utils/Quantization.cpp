//===- Quantization.cpp - Element arithmetic of norm.quantize ---*- C++ -*-===//
//
// Scale, reciprocal and the FP8/int8 conversion of norm.quantize, on scalars
// and vectors.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::norm;

Value mlir::norm::buildGroupScale(OpBuilder &b, Location loc, QuantizeOp op,
                                  Value amax) {
  Type type = amax.getType();
  Value capped = arith::MinimumFOp::create(
      b, loc, amax,
      buildFloatConstant(b, loc, type, op.getScaleUb().convertToDouble()));
  Value scaled = arith::DivFOp::create(
      b, loc, capped, buildFloatConstant(b, loc, type, op.getQMax()));
  return arith::MaximumFOp::create(
      b, loc, scaled, buildFloatConstant(b, loc, type, op.getMinScaleValue()));
}

Value mlir::norm::buildReciprocal(OpBuilder &b, Location loc, Value scale) {
  return arith::DivFOp::create(
      b, loc, buildFloatConstant(b, loc, scale.getType(), 1.0), scale);
}

Value mlir::norm::buildWidenedQuantizeInput(OpBuilder &b, Location loc, Value y,
                                            bool nativeBF16) {
  auto trunc = y.getDefiningOp<arith::TruncFOp>();
  if (nativeBF16 || !trunc || !getElementTypeOrSelf(y.getType()).isBF16() ||
      !getElementTypeOrSelf(trunc.getIn().getType()).isF32() ||
      trunc.getRoundingmodeAttr())
    return castFloat(b, loc, y, b.getF32Type());
  // Round to nearest even at bit 16, in the f32 encoding; NaN stays NaN.
  Value in = trunc.getIn();
  Type i32Type = getTypeLike(in.getType(), b.getI32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32Type, in);
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32(16)), i32(1));
  Value rounded = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, bits,
                            arith::AddIOp::create(b, loc, lsb, i32(0x7FFF))),
      i32(static_cast<int32_t>(0xFFFF0000u)));
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, in, in);
  return arith::SelectOp::create(
      b, loc, isNaN, in,
      arith::BitcastOp::create(b, loc, in.getType(), rounded));
}

Value mlir::norm::buildMagnitude(OpBuilder &b, Location loc, Value y) {
  return math::AbsFOp::create(b, loc, buildWidenedQuantizeInput(b, loc, y));
}

Value mlir::norm::buildFloat8E4M3FNBits(OpBuilder &b, Location loc, Value v) {
  Type f32Type = v.getType();
  Type i32Type = getTypeLike(f32Type, b.getI32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32Type, v);
  Value magnitude = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFFFF));
  // NaN: any f32 NaN. Everything else saturates at 448 (0x43E00000),
  // infinities included.
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      magnitude, i32(0x7F800000));
  Value clamped = arith::MinUIOp::create(b, loc, magnitude, i32(0x43E00000));

  // Only the low 8 bits of `encoded` below are kept. One f32 add rounds and
  // encodes normal and subnormal results alike. With E the biased f32
  // exponent of |v|, raised to 121 (that of 2^-6, the smallest e4m3
  // normal) for smaller values, the e4m3 step at |v| is 2^(E-127-3), which
  // is the f32 ulp of 2^(E-127+20). Adding
  //   B = 2^(E-127+20) + k * 2^(E-127-3),  k = 8E + 56 (even),
  // rounds |v| to the nearest multiple c of the step (ties to even: k is
  // even, so the parity of the sum's mantissa is that of c), and the sum's
  // encoding is that of B plus c. Its low byte is 8E + 56 + c, which is
  // the e4m3 encoding (E - 120) * 8 + (c - 8) modulo 256 for normals
  // (8 <= c <= 16, 16 carrying into the next exponent) and c for
  // subnormals (E = 121, 0 <= c <= 8).
  Value exponent = arith::MaxUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, clamped, i32(0x7F800000)),
      i32(0x3C800000));
  Value bias = arith::AddIOp::create(
      b, loc, exponent,
      arith::AddIOp::create(b, loc,
                            arith::ShRUIOp::create(b, loc, exponent, i32(20)),
                            i32((20 << 23) + 56)));
  Value sum = arith::AddFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, f32Type, clamped),
      arith::BitcastOp::create(b, loc, f32Type, bias));
  Value encoded = arith::BitcastOp::create(b, loc, i32Type, sum);
  encoded = arith::SelectOp::create(b, loc, isNaN, i32(0x7F), encoded);
  // The sign goes to bit 7.
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32(24)), i32(0x80));
  encoded = arith::OrIOp::create(b, loc, encoded, sign);
  return arith::TruncIOp::create(b, loc, getTypeLike(f32Type, b.getI8Type()),
                                 encoded);
}

Value mlir::norm::buildFloat8E4M3FNRounded(OpBuilder &b, Location loc,
                                           Value v) {
  // The sum of buildFloat8E4M3FNBits, minus its bias: |v| rounded to a
  // multiple of the e4m3 step at |v| (exact: both terms are in one binade).
  Type f32Type = v.getType();
  Type i32Type = getTypeLike(f32Type, b.getI32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32Type, v);
  Value magnitude = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFFFF));
  Value clamped = arith::MinUIOp::create(b, loc, magnitude, i32(0x43E00000));
  Value exponent = arith::MaxUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, clamped, i32(0x7F800000)),
      i32(0x3C800000));
  // 2^(E-127+20): the step at |v| is its ulp.
  Value bias = arith::BitcastOp::create(
      b, loc, f32Type, arith::AddIOp::create(b, loc, exponent, i32(20 << 23)));
  Value rounded = arith::SubFOp::create(
      b, loc,
      arith::AddFOp::create(
          b, loc, arith::BitcastOp::create(b, loc, f32Type, clamped), bias),
      bias);
  Value sign = arith::AndIOp::create(b, loc, bits,
                                     i32(static_cast<int32_t>(0x80000000)));
  Value result = arith::BitcastOp::create(
      b, loc, f32Type,
      arith::OrIOp::create(
          b, loc, arith::BitcastOp::create(b, loc, i32Type, rounded), sign));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  return arith::SelectOp::create(b, loc, isNaN, v, result);
}

Value mlir::norm::buildFloat4E2M1FNBits(OpBuilder &b, Location loc, Value v) {
  Type f32Type = v.getType();
  Type i32Type = getTypeLike(f32Type, b.getI32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32Type, v);
  Value magnitude = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFFFF));
  // Saturate at 6 (0x40C00000), infinities included.
  Value clamped = arith::MinUIOp::create(b, loc, magnitude, i32(0x40C00000));
  // With E the biased f32 exponent of |v|, raised to 127 (that of 1, where
  // the e2m1 step stops being 0.5), the step at |v| is 2^(E-128), the f32
  // ulp of 2^(E-105). Adding B = 2^(E-105) + 2 * (E - 127) steps rounds |v|
  // to the nearest multiple c of the step (ties to even: the added count
  // is even), and the low bits of the sum are c + 2 * (E - 127), the e2m1
  // code: c for |v| < 2 (step 0.5), c + 2 in [2, 4) (step 1), c + 4 in
  // [4, 6] (step 2).
  Value exponent = arith::MaxUIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, clamped, i32(23)), i32(127));
  Value bias = arith::AddIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, arith::AddIOp::create(b, loc, exponent, i32(22)), i32(23)),
      arith::ShLIOp::create(
          b, loc, arith::SubIOp::create(b, loc, exponent, i32(127)), i32(1)));
  Value sum = arith::AddFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, f32Type, clamped),
      arith::BitcastOp::create(b, loc, f32Type, bias));
  Value code = arith::AndIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32Type, sum), i32(0x7));
  // The sign goes to bit 3; NaN (no e2m1 encoding) becomes +0.
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32(28)), i32(0x8));
  code = arith::OrIOp::create(b, loc, code, sign);
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      magnitude, i32(0x7F800000));
  code = arith::SelectOp::create(b, loc, isNaN, i32(0), code);
  return arith::TruncIOp::create(b, loc, getTypeLike(f32Type, b.getI8Type()),
                                 code);
}

Value mlir::norm::buildPowerOfTwoScaleCode(OpBuilder &b, Location loc,
                                           QuantizeOp op, Value amax) {
  Type i32Type = getTypeLike(amax.getType(), b.getI32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  bool fp4 = isa<Float4E2M1FNType>(op.getQuantizedElementType());
  // QMAX = 1.75 * 2^8 (e4m3) or 1.5 * 2^2 (e2m1).
  int64_t emax = fp4 ? 2 : 8;
  Value bits = arith::AndIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32Type, amax), i32(0x7FFFFFFF));
  Value exponent = arith::ShRUIOp::create(b, loc, bits, i32(23));
  // floor: X = E - 127 - emax, so the code X + 127 is E - emax. up: one
  // more when the significand is above QMAX's (amax / QMAX then exceeds
  // 2^(E - 127 - emax)). Zero and subnormal amax (E = 0) clamp to -127.
  Value code = arith::SubIOp::create(b, loc, exponent, i32(emax));
  if (op.getScaleRounding() == ScaleRounding::up) {
    Value mantissa = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFF));
    Value above =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, mantissa,
                              i32(fp4 ? 0x400000 : 0x600000));
    code = arith::AddIOp::create(
        b, loc, code, arith::ExtUIOp::create(b, loc, i32Type, above));
  }
  code = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, code, i32(0)), i32(254));
  // +inf: log2 is +inf, so X = 127; NaN: 255.
  Value isInf = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bits,
                                      i32(0x7F800000));
  code = arith::SelectOp::create(b, loc, isInf, i32(254), code);
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, bits,
                                      i32(0x7F800000));
  return arith::SelectOp::create(b, loc, isNaN, i32(255), code);
}

Value mlir::norm::buildPowerOfTwoMultiplier(OpBuilder &b, Location loc,
                                            Value code) {
  Type i32Type = code.getType();
  Type f32Type = getTypeLike(i32Type, b.getF32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  // 2^-X has the biased exponent 127 - X = 254 - code; at X = 127 it is the
  // subnormal 2^-127 (0x00400000).
  Value biased = arith::SubIOp::create(b, loc, i32(254), code);
  Value normal = arith::ShLIOp::create(b, loc, biased, i32(23));
  Value isSubnormal =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code, i32(254));
  Value multiplier = arith::BitcastOp::create(
      b, loc, f32Type,
      arith::SelectOp::create(b, loc, isSubnormal, i32(0x00400000), normal));
  Value isNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code, i32(255));
  return arith::SelectOp::create(
      b, loc, isNaN,
      buildFloatConstant(b, loc, f32Type,
                         std::numeric_limits<double>::quiet_NaN()),
      multiplier);
}

std::pair<Value, Value> mlir::norm::buildNVFP4Scale(OpBuilder &b, Location loc,
                                                    Value globalScale,
                                                    Value amax) {
  Type f32Type = amax.getType();
  Value encode = arith::MulFOp::create(
      b, loc, globalScale,
      arith::DivFOp::create(b, loc, amax,
                            buildFloatConstant(b, loc, f32Type, 6.0)));
  Value sf = buildFloat8E4M3FNRounded(b, loc, encode);
  Value zero = buildFloatConstant(b, loc, f32Type, 0.0);
  Value isZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sf, zero);
  Value out = arith::SelectOp::create(
      b, loc, isZero, zero, arith::DivFOp::create(b, loc, globalScale, sf));
  return {sf, out};
}

Value mlir::norm::buildBlockQuantize(OpBuilder &b, Location loc, Value y,
                                     Value multiplier, Type quantizedType,
                                     bool nativeBF16) {
  Value v = arith::MulFOp::create(
      b, loc, buildWidenedQuantizeInput(b, loc, y, nativeBF16), multiplier);
  Type type = v.getType();
  if (isa<Float8E4M3FNType>(quantizedType))
    return arith::BitcastOp::create(b, loc, getTypeLike(type, quantizedType),
                                    buildFloat8E4M3FNBits(b, loc, v));
  Value code =
      arith::TruncIOp::create(b, loc, getTypeLike(type, b.getIntegerType(4)),
                              buildFloat4E2M1FNBits(b, loc, v));
  return arith::BitcastOp::create(b, loc, getTypeLike(type, quantizedType),
                                  code);
}

Value mlir::norm::buildBlockScaleValue(OpBuilder &b, Location loc, Value scale,
                                       Type scalesType) {
  Type type = scale.getType();
  if (isa<Float8E8M0FNUType>(scalesType))
    return arith::BitcastOp::create(
        b, loc, getTypeLike(type, scalesType),
        arith::TruncIOp::create(b, loc, getTypeLike(type, b.getI8Type()),
                                scale));
  // An f8E4M3FN value already rounded: encode it (exactly) with its sign;
  // any NaN is 0x7F.
  Value bits = buildFloat8E4M3FNBits(b, loc, scale);
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, scale, scale);
  bits = arith::SelectOp::create(
      b, loc, isNaN, buildIntConstant(b, loc, bits.getType(), 0x7F), bits);
  return arith::BitcastOp::create(b, loc, getTypeLike(type, scalesType), bits);
}

Value mlir::norm::buildQuantize(OpBuilder &b, Location loc, Value y,
                                Value inverse, Type quantizedType,
                                bool nativeBF16) {
  Value v = arith::MulFOp::create(
      b, loc, buildWidenedQuantizeInput(b, loc, y, nativeBF16), inverse);
  Type type = v.getType();
  if (isa<Float8E4M3FNType>(quantizedType))
    return arith::BitcastOp::create(b, loc, getTypeLike(type, quantizedType),
                                    buildFloat8E4M3FNBits(b, loc, v));
  // int8: round to nearest even, clamp to [-128, 127]; NaN -> 0.
  Value rounded = math::RoundEvenOp::create(b, loc, v);
  Value clamped = arith::MinimumFOp::create(
      b, loc,
      arith::MaximumFOp::create(b, loc, rounded,
                                buildFloatConstant(b, loc, type, -128.0)),
      buildFloatConstant(b, loc, type, 127.0));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  clamped = arith::SelectOp::create(
      b, loc, isNaN, buildFloatConstant(b, loc, type, 0.0), clamped);
  return arith::FPToSIOp::create(b, loc, getTypeLike(type, quantizedType),
                                 clamped);
}

/// The scalar operand of `quant` that a fused lowering reads before its
/// loop: the static scale or NVFP4's global scale (or null).
static Value getScalarOperand(QuantizeOp quant) {
  if (Value scale = quant.getScale())
    return scale;
  return quant.getGlobalScale();
}

QuantizeOp mlir::norm::getFusableQuantizeOp(NormOpInterface op) {
  Value y = op.getY();
  if (!y.hasOneUse())
    return {};
  auto quant = dyn_cast<QuantizeOp>(*y.getUsers().begin());
  if (!quant || quant.getInput() != y ||
      op.getNormalizedDim() != op.getInputType().getRank() - 1)
    return {};
  // The fused loop goes where the norm is, or, when the static (or global)
  // scale is defined after the norm, where the quantization is: then every
  // other use of the norm's results must come after it.
  Value scale = getScalarOperand(quant);
  DominanceInfo dominance;
  if (!scale || dominance.properlyDominates(scale, op))
    return quant;
  if (quant->getBlock() != op->getBlock())
    return {};
  if (Value residualOut = op.getResidualOut())
    for (Operation *user : residualOut.getUsers())
      if (!dominance.properlyDominates(quant.getOperation(), user))
        return {};
  return quant;
}

Operation *mlir::norm::getFusedInsertionPoint(NormOpInterface op,
                                              QuantizeOp quant) {
  Value scale = quant ? getScalarOperand(quant) : Value();
  if (scale && !DominanceInfo().properlyDominates(scale, op))
    return quant;
  return op;
}
