//===- ExpandF8Conversions.cpp - f8E4M3FN conversions as integer ops ------===//
//
// norm-expand-f8-conversions: arith.truncf to f8E4M3FN and arith.extf from
// it, on scalars and vectors, as i32/f32 arithmetic (LLVM has no 8-bit
// float type).
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

/// `arith.truncf` of an f16/bf16/f32 value to f8E4M3FN.
static Value expandTruncF(OpBuilder &b, Location loc, arith::TruncFOp op) {
  Value in = op.getIn();
  Type f32Type = getTypeLike(in.getType(), b.getF32Type());
  if (!getElementTypeOrSelf(in.getType()).isF32())
    in = arith::ExtFOp::create(b, loc, f32Type, in); // exact
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

/// `arith.extf` of an f8E4M3FN value to f16/bf16/f32/f64 (exact).
static Value expandExtF(OpBuilder &b, Location loc, arith::ExtFOp op) {
  Value in = op.getIn();
  Type i8Type = getTypeLike(in.getType(), b.getI8Type());
  Type i32Type = getTypeLike(in.getType(), b.getI32Type());
  Type f32Type = getTypeLike(in.getType(), b.getF32Type());
  auto i32 = [&](int64_t value) {
    return buildIntConstant(b, loc, i32Type, value);
  };
  Value byte = arith::BitcastOp::create(b, loc, i8Type, in);
  Value bits = arith::ExtUIOp::create(b, loc, i32Type, byte);
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
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      magnitude, i32(0x7F));
  Value value = arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  value = arith::SelectOp::create(b, loc, isNaN, i32(0x7FC00000), value);
  value = arith::OrIOp::create(b, loc, value, sign);
  Value f32 = arith::BitcastOp::create(b, loc, f32Type, value);
  Type target = getElementTypeOrSelf(op.getType());
  if (target.isF32())
    return f32;
  if (target.isF64())
    return arith::ExtFOp::create(b, loc, op.getType(), f32);
  // f16 and bf16 hold every f8E4M3FN value: the truncation is exact.
  return arith::TruncFOp::create(b, loc, op.getType(), f32);
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
      Type from = getElementTypeOrSelf(op->getOperand(0).getType());
      Type to = getElementTypeOrSelf(op->getResult(0).getType());
      bool shaped = isa<TensorType, MemRefType>(op->getResult(0).getType());
      OpBuilder b(op);
      Value replacement;
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        bool roundsToNearestEven =
            !trunc.getRoundingmode() ||
            *trunc.getRoundingmode() == arith::RoundingMode::to_nearest_even;
        if (!shaped && isa<Float8E4M3FNType>(to) && roundsToNearestEven &&
            (from.isF32() || from.isF16() || from.isBF16()))
          replacement = expandTruncF(b, op->getLoc(), trunc);
      } else if (!shaped && isa<Float8E4M3FNType>(from) &&
                 (to.isF16() || to.isBF16() || to.isF32() || to.isF64())) {
        replacement = expandExtF(b, op->getLoc(), cast<arith::ExtFOp>(op));
      }
      if (!replacement) {
        op->emitError("conversion from ")
            << from << " to " << to
            << " has no CPU lowering (f8E4M3FN to or from f16, bf16 or f32 "
               "and to f64, on scalars and vectors, rounding to nearest even, "
               "are expanded)";
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
