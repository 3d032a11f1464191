//===- ExpandF8Conversions.cpp - narrow float conversions as integer ops --===//
//
// norm-expand-f8-conversions: arith.truncf to f8E4M3FN, f8E8M0FNU and
// f4E2M1FN and arith.extf from them, on scalars and vectors, as i32/f32
// arithmetic (LLVM has no 8-bit or 4-bit float type).
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMEXPANDF8CONVERSIONSPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

/// True for float types of 8 bits or fewer.
static bool isNarrowFloat(Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return floatType && floatType.getWidth() <= 8;
}

/// The f16/bf16/f32 operand of a truncf as f32 (exactly).
static Value getF32Operand(OpBuilder &b, Location loc, arith::TruncFOp op) {
  Value in = op.getIn();
  if (getElementTypeOrSelf(in.getType()).isF32())
    return in;
  return arith::ExtFOp::create(b, loc,
                               getTypeLike(in.getType(), b.getF32Type()), in);
}

/// An f32 value (exact in every target type but f16, which rounds it) as
/// the extf's result type.
static Value castF32ToResult(OpBuilder &b, Location loc, arith::ExtFOp op,
                             Value f32) {
  Type target = getElementTypeOrSelf(op.getType());
  if (target.isF32())
    return f32;
  if (target.isF64())
    return arith::ExtFOp::create(b, loc, op.getType(), f32);
  return arith::TruncFOp::create(b, loc, op.getType(), f32);
}

/// `arith.truncf` of an f16/bf16/f32 value to f8E4M3FN.
static Value expandTruncFToE4M3(OpBuilder &b, Location loc,
                                arith::TruncFOp op) {
  Value in = getF32Operand(b, loc, op);
  Type f32Type = in.getType();
  // The saturating conversion of norm.quantize, then NaN where truncf
  // overflows: magnitudes above 464 (ties at 464 round to 448, even) and
  // infinities.
  Value bits = buildFloat8E4M3FNBits(b, loc, in);
  Type i32Type = getTypeLike(f32Type, b.getI32Type());
  Type i8Type = getTypeLike(f32Type, b.getI8Type());
  Value raw = arith::BitcastOp::create(b, loc, i32Type, in);
  Value magnitude = arith::AndIOp::create(
      b, loc, raw, buildIntConstant(b, loc, i32Type, 0x7FFFFFFF));
  Value overflows =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, magnitude,
                            buildIntConstant(b, loc, i32Type, 0x43E80000));
  Value nan = arith::OrIOp::create(b, loc, bits,
                                   buildIntConstant(b, loc, i8Type, 0x7F));
  Value result = arith::SelectOp::create(b, loc, overflows, nan, bits);
  return arith::BitcastOp::create(b, loc, op.getType(), result);
}

/// The encoding of an extf's narrow-float operand, zero-extended to i32.
static Value getOperandCode(OpBuilder &b, Location loc, arith::ExtFOp op) {
  Value in = op.getIn();
  unsigned width =
      cast<FloatType>(getElementTypeOrSelf(in.getType())).getWidth();
  Value code = arith::BitcastOp::create(
      b, loc, getTypeLike(in.getType(), b.getIntegerType(width)), in);
  return arith::ExtUIOp::create(
      b, loc, getTypeLike(in.getType(), b.getI32Type()), code);
}

/// `value`, or the i32 constant `replacement` where `code` is `match`.
static Value selectWhereCode(OpBuilder &b, Location loc, Value code,
                             int64_t match, int64_t replacement, Value value) {
  Type type = code.getType();
  return arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, code,
                            buildIntConstant(b, loc, type, match)),
      buildIntConstant(b, loc, type, replacement), value);
}

/// `arith.extf` of an f8E4M3FN value to f16/bf16/f32/f64 (exact).
static Value expandExtFFromE4M3(OpBuilder &b, Location loc, arith::ExtFOp op) {
  Value bits = getOperandCode(b, loc, op);
  Type i32Type = bits.getType();
  Type f32Type = getTypeLike(i32Type, b.getF32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, bits, i32(0x80)), i32(24));
  Value magnitude = arith::AndIOp::create(b, loc, bits, i32(0x7F));
  // Normal: exponent and mantissa move up 20 bits, rebiased (7 -> 127).
  Value normal = arith::AddIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, magnitude, i32(20)),
      i32((127 - 7) << 23));
  // Subnormal (exponent 0): m * 2^-9, exact in f32.
  Value mantissa = arith::AndIOp::create(b, loc, bits, i32(7));
  Value scaled = arith::MulFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, f32Type, mantissa),
      buildFloatConstant(b, loc, f32Type, 1.0 / 512.0));
  Value subnormal = arith::BitcastOp::create(b, loc, i32Type, scaled);
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            magnitude, i32(8));
  Value value = arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  value = selectWhereCode(b, loc, magnitude, 0x7F, 0x7FC00000, value);
  value = arith::OrIOp::create(b, loc, value, sign);
  // f16 and bf16 hold every f8E4M3FN value: the truncation is exact.
  return castF32ToResult(b, loc, op,
                         arith::BitcastOp::create(b, loc, f32Type, value));
}

/// `arith.truncf` of an f16/bf16/f32 value to f4E2M1FN: to nearest, ties to
/// even, saturating to +-6 (infinities included), the sign of zero kept,
/// NaN (no e2m1 encoding) to +0, as `norm.quantize` converts.
static Value expandTruncFToE2M1(OpBuilder &b, Location loc,
                                arith::TruncFOp op) {
  Value in = getF32Operand(b, loc, op);
  Value code = buildFloat4E2M1FNBits(b, loc, in);
  Value nibble = arith::TruncIOp::create(
      b, loc, getTypeLike(in.getType(), b.getIntegerType(4)), code);
  return arith::BitcastOp::create(b, loc, op.getType(), nibble);
}

/// `arith.extf` of an f4E2M1FN value to f16/bf16/f32/f64 (exact).
static Value expandExtFFromE2M1(OpBuilder &b, Location loc, arith::ExtFOp op) {
  Value bits = getOperandCode(b, loc, op);
  Type i32Type = bits.getType();
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value magnitude = arith::AndIOp::create(b, loc, bits, i32(7));
  // Codes 2..7 (1, 1.5, 2, 3, 4, 6): exponent and mantissa bit move up 22
  // bits, rebiased (1 -> 127). Code 1 is 0.5, code 0 is 0.
  Value value = arith::ShLIOp::create(
      b, loc, arith::AddIOp::create(b, loc, magnitude, i32(252)), i32(22));
  value = selectWhereCode(b, loc, magnitude, 1, 0x3F000000, value);
  value = selectWhereCode(b, loc, magnitude, 0, 0, value);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, bits, i32(8)), i32(28));
  value = arith::OrIOp::create(b, loc, value, sign);
  return castF32ToResult(
      b, loc, op,
      arith::BitcastOp::create(b, loc, getTypeLike(i32Type, b.getF32Type()),
                               value));
}

/// `arith.truncf` of an f16/bf16/f32 value to f8E8M0FNU, as ml_dtypes
/// converts: the nearest power of two, ties up (the tie of a one-digit
/// significand), saturating at 2^-127 below; NaN (0xFF) for NaN, infinities,
/// zeros, negative values and magnitudes that round past 2^127.
static Value expandTruncFToE8M0(OpBuilder &b, Location loc,
                                arith::TruncFOp op) {
  Value in = getF32Operand(b, loc, op);
  Type i32Type = getTypeLike(in.getType(), b.getI32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32Type, in);
  Value exponent = arith::ShRUIOp::create(b, loc, bits, i32(23));
  Value mantissa = arith::AndIOp::create(b, loc, bits, i32(0x7FFFFF));
  // Normal: E, one more from 1.5 * 2^E up (254 + 1 is the NaN code).
  Value roundsUp = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                         mantissa, i32(0x400000));
  Value normal = arith::AddIOp::create(
      b, loc, exponent, arith::ExtUIOp::create(b, loc, i32Type, roundsUp));
  // Subnormal (E = 0): 2^-127 is mantissa 0x400000, 2^-126 from 1.5 * 2^-127.
  Value subnormal = arith::ExtUIOp::create(
      b, loc, i32Type,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, mantissa,
                            i32(0x600000)));
  Value code = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exponent, i32(0)),
      subnormal, normal);
  // Sign set (also -0 and negative NaN: the exponent field above is 256 or
  // more), +0, or an exponent field of 255 (infinities, NaN): NaN.
  Value isNaN = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, exponent,
                            i32(255)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bits, i32(0)));
  code = arith::SelectOp::create(b, loc, isNaN, i32(255), code);
  Value byte = arith::TruncIOp::create(
      b, loc, getTypeLike(in.getType(), b.getI8Type()), code);
  return arith::BitcastOp::create(b, loc, op.getType(), byte);
}

/// `arith.extf` of an f8E8M0FNU value to f16/bf16/f32/f64: 2^(code - 127)
/// (2^-127 is an f32 subnormal), NaN for 0xFF; exact but in f16, where the
/// power of two rounds.
static Value expandExtFFromE8M0(OpBuilder &b, Location loc, arith::ExtFOp op) {
  Value code = getOperandCode(b, loc, op);
  Type i32Type = code.getType();
  Value value = arith::ShLIOp::create(b, loc, code,
                                      buildIntConstant(b, loc, i32Type, 23));
  value = selectWhereCode(b, loc, code, 0, 0x00400000, value);
  value = selectWhereCode(b, loc, code, 255, 0x7FC00000, value);
  return castF32ToResult(
      b, loc, op,
      arith::BitcastOp::create(b, loc, getTypeLike(i32Type, b.getF32Type()),
                               value));
}

/// The expansion of a narrow-float conversion, or null when there is none.
static Value expandConversion(OpBuilder &b, Operation *op) {
  Type from = getElementTypeOrSelf(op->getOperand(0).getType());
  Type to = getElementTypeOrSelf(op->getResult(0).getType());
  if (isa<TensorType, MemRefType>(op->getResult(0).getType()))
    return nullptr;
  Location loc = op->getLoc();
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    bool roundsToNearestEven =
        !trunc.getRoundingmode() ||
        *trunc.getRoundingmode() == arith::RoundingMode::to_nearest_even;
    if (!roundsToNearestEven ||
        !(from.isF32() || from.isF16() || from.isBF16()))
      return nullptr;
    if (isa<Float8E4M3FNType>(to))
      return expandTruncFToE4M3(b, loc, trunc);
    if (isa<Float4E2M1FNType>(to))
      return expandTruncFToE2M1(b, loc, trunc);
    if (isa<Float8E8M0FNUType>(to))
      return expandTruncFToE8M0(b, loc, trunc);
    return nullptr;
  }
  auto ext = cast<arith::ExtFOp>(op);
  if (!(to.isF16() || to.isBF16() || to.isF32() || to.isF64()))
    return nullptr;
  if (isa<Float8E4M3FNType>(from))
    return expandExtFFromE4M3(b, loc, ext);
  if (isa<Float4E2M1FNType>(from))
    return expandExtFFromE2M1(b, loc, ext);
  if (isa<Float8E8M0FNUType>(from))
    return expandExtFFromE8M0(b, loc, ext);
  return nullptr;
}

namespace {

struct NormExpandF8ConversionsPass
    : public norm::impl::NormExpandF8ConversionsPassBase<
          NormExpandF8ConversionsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::TruncFOp, arith::ExtFOp>(op) &&
          (isNarrowFloat(op->getOperand(0).getType()) ||
           isNarrowFloat(op->getResult(0).getType())))
        conversions.push_back(op);
    });
    bool failed = false;
    for (Operation *op : conversions) {
      OpBuilder b(op);
      Value replacement = expandConversion(b, op);
      if (!replacement) {
        op->emitError("conversion from ")
            << getElementTypeOrSelf(op->getOperand(0).getType()) << " to "
            << getElementTypeOrSelf(op->getResult(0).getType())
            << " has no CPU lowering (f8E4M3FN, f8E8M0FNU and f4E2M1FN to "
               "or from f16, bf16 or f32 and to f64, on scalars and vectors, "
               "rounding to nearest even, are expanded)";
        failed = true;
        continue;
      }
      op->getResult(0).replaceAllUsesWith(replacement);
      op->erase();
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
