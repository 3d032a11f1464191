//===- RaiseQuantize.cpp - Decomposed quantization to norm.quantize -------===//
//
// Recognizes the static form of norm.quantize (DESIGN section 2a) written
// out as elementwise ops, in whatever dialect the evaluator reads (linalg,
// tensor-level arith/math):
//
//   f8E4M3FN: truncf(clamp(y' * (1/s), -448, 448))
//   i8:       fptosi(clamp(roundeven(y' * (1/s)), -128, 127))
//             (or roundeven outside the clamp: the bounds are integers)
//
// with y' = y or extf(y) to f32, the scaling written `y' / s`,
// `y' * (1/s)` or `y' * c` for a constant c, and the clamp in either order
// with maximumf/minimumf, maxnumf/minnumf or compare-and-select.
//
// The op propagates a NaN (NaN scale, f8 NaN, i8 0). A clamp, floor or
// max-reduction that turns a NaN into a number (maxnumf/minnumf, a select
// that picks the bound on NaN, TOSA nan_mode = IGNORE) computes something
// else on a row holding a NaN or an infinity; such a chain is raised only
// when NaNs are excluded (fastmath<nnan>, or the assume-no-nans option).
//
// The dynamic per-token form computes s per row from the row's magnitude:
//
//   s = max(min(amax, ub) / QMAX, floor),  amax = max |y'| over the last dim
//
// (the cap optional, the floor required), and becomes the two-result
// norm.quantize whose scales replace the chain's.
//
//===----------------------------------------------------------------------===//

#include "RaiseQuantize.h"
#include "RaiseRewrite.h"

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

std::string mlir::norm::formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

std::string mlir::norm::formatNumber(double value) {
  SmallString<16> text;
  llvm::APFloat(value).toString(text);
  return text.str().str();
}

/// The f32 value `1 / value`.
static double f32Reciprocal(double value) {
  return static_cast<double>(1.0f / static_cast<float>(value));
}

/// A splat of a scalar (`tensor.splat`, `linalg.fill`): the scalar, else
/// null.
static Value getSplatScalar(Value value) {
  if (auto splat = value.getDefiningOp<tensor::SplatOp>())
    return splat.getInput();
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    if (fill.hasPureTensorSemantics())
      return fill.getInputs()[0];
  return {};
}

/// Finds the materialized value of the frame's shape that computes `expr`
/// among the evaluations that evaluating `root` went through.
Value mlir::norm::findMaterialized(TensorExprBuilder &builder, Value root,
                                  TensorExpr *expr) {
  if (expr->is(Kind::Leaf) && expr->map == builder.getIdentityMap() &&
      cast<RankedTensorType>(expr->value.getType()).getShape() ==
          builder.getFrameShape())
    return expr->value;
  const TensorExprEvaluation *evaluation = builder.lookup(root);
  if (!evaluation)
    return {};
  Value found;
  builder.walkEvaluations(
      *evaluation,
      [](const TensorExprEvaluation &, const TensorExprEvaluation &) {
        return true;
      },
      [&](const TensorExprEvaluation &visited) {
        if (visited.materializes && visited.expr == expr)
          found = visited.value;
      });
  return found;
}

//===----------------------------------------------------------------------===//
// NaN behavior
//===----------------------------------------------------------------------===//

/// True when `op` carries the `nnan` fast-math flag (its operands are not
/// NaN, or its result is poison).
static bool hasNoNaNsFlag(Operation *op) {
  auto fastMath = dyn_cast<arith::ArithFastMathInterface>(op);
  return fastMath &&
         arith::bitEnumContainsAll(fastMath.getFastMathFlagsAttr().getValue(),
                                   arith::FastMathFlags::nnan);
}

/// True when `value` is a float constant (a scalar or a splat, possibly
/// through float casts) that is not NaN.
static bool isNonNaNConstant(Value value) {
  while (isa_and_nonnull<arith::ExtFOp, arith::TruncFOp>(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  FloatAttr scalar;
  if (matchPattern(value, m_Constant(&scalar)))
    return !scalar.getValue().isNaN();
  DenseFPElementsAttr splat;
  if (matchPattern(value, m_Constant(&splat)) && splat.isSplat())
    return !splat.getSplatValue<APFloat>().isNaN();
  return false;
}

/// True for the predicates that hold when an operand is NaN.
static bool isUnordered(arith::CmpFPredicate predicate) {
  using P = arith::CmpFPredicate;
  switch (predicate) {
  case P::UEQ:
  case P::UGT:
  case P::UGE:
  case P::ULT:
  case P::ULE:
  case P::UNE:
  case P::UNO:
  case P::AlwaysTrue:
    return true;
  default:
    return false;
  }
}

std::string mlir::norm::describeNaNDrop(Operation *op) {
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
    if (!cmp || !isa<FloatType>(getElementTypeOrSelf(select.getType())) ||
        hasNoNaNsFlag(cmp))
      return "";
    // On a NaN the select takes its true value after an unordered
    // predicate, its false value after an ordered one; the NaN propagates
    // when the other value is a number.
    bool unordered = isUnordered(cmp.getPredicate());
    Value other = unordered ? select.getFalseValue() : select.getTrueValue();
    if (isNonNaNConstant(other))
      return "";
    return llvm::formatv("a NaN would take the clamp's bound or the other "
                         "operand here ('arith.select' on 'arith.cmpf {0}')",
                         arith::stringifyCmpFPredicate(cmp.getPredicate()))
        .str();
  }
  if (isa<arith::MaxNumFOp, arith::MinNumFOp>(op) && !hasNoNaNsFlag(op))
    return ("a NaN would take the other operand's value here ('" +
            op->getName().getStringRef() + "')")
        .str();
  if (op->getDialect() && isa<tosa::TosaDialect>(op->getDialect()))
    if (auto mode = dyn_cast_or_null<tosa::NanPropagationModeAttr>(
            op->getInherentAttr("nan_mode").value_or(Attribute())))
      if (mode.getValue() == tosa::NanPropagationMode::IGNORE)
        return ("a NaN would take the other operand's value here ('" +
                op->getName().getStringRef() + "' with nan_mode = IGNORE)")
            .str();
  return "";
}

/// The first float min/max among the ops that compute `root` from `y`
/// (the ops the raise replaces) that may turn a NaN into a number: why, or
/// an empty string.
std::string mlir::norm::findNaNDrop(TensorExprBuilder &builder,
                                    Operation *root, Value y) {
  const TensorExprEvaluation *evaluation = builder.lookup(root->getResult(0));
  if (!evaluation)
    return "";
  llvm::SmallPtrSet<Operation *, 16> seen;
  std::string reason;
  builder.walkEvaluations(
      *evaluation,
      [&](const TensorExprEvaluation &, const TensorExprEvaluation &used) {
        return used.value != y;
      },
      [&](const TensorExprEvaluation &visited) {
        if (!reason.empty() || visited.value == y || !visited.expr ||
            visited.expr->is(Kind::Leaf))
          return;
        Operation *op = visited.value.getDefiningOp();
        if (!op || !seen.insert(op).second)
          return;
        op->walk([&](Operation *nested) {
          if (reason.empty())
            reason = describeNaNDrop(nested);
        });
      });
  return reason;
}

/// True when a ReduceMax occurs in `expr`.
static bool containsReduceMax(TensorExpr *expr) {
  if (expr->is(Kind::ReduceMax))
    return true;
  return llvm::any_of(expr->operands, containsReduceMax);
}

/// `max(a, c)` or `min(a, c)` (`kind`) with a constant `c`: `a`, and `c`
/// in `constant`; else null.
static TensorExpr *peelConstantOperand(TensorExpr *expr, Kind kind,
                                       double &constant) {
  if (!expr->is(kind))
    return nullptr;
  for (unsigned i = 0; i < 2; ++i)
    if (expr->getOperand(i)->is(Kind::Const)) {
      constant = expr->getOperand(i)->constant;
      return expr->getOperand(1 - i);
    }
  return nullptr;
}

/// Matches the dynamic per-token scale `scale` of the quantization of `yc`
/// (f32) as `max(min(amax, ub) / qmax, floor)` with `amax = max |yc|` over
/// the last frame dim, and sets the dynamic fields of `match`. Returns why
/// it does not match, or an empty string.
static std::string matchDynamicScale(TensorExprBuilder &builder,
                                     TensorExpr *scale, TensorExpr *yc,
                                     double qmax, QuantizeMatch &match) {
  if (!scale->type.isF32())
    return "the dynamic scale is " + formatType(scale->type) + ", not f32";
  std::string form = llvm::formatv("max(min(max |y|, scale_ub) / {0}, "
                                   "min_scale)",
                                   formatNumber(qmax));
  // The floor.
  double floor = 0.0;
  TensorExpr *scaled = peelConstantOperand(scale, Kind::Max, floor);
  if (!scaled && scale->is(Kind::Max))
    return "the floor of the dynamic scale is not a constant";
  if (!scaled)
    return "the dynamic scale has no floor max(s, min_scale) (norm.quantize "
           "always applies one; without it a row of zeros divides by 0)";
  if (!(floor > 0.0) || std::isinf(floor))
    return "the floor " + formatNumber(floor) +
           " of the dynamic scale is not finite and > 0";
  // The division by QMAX.
  TensorExpr *capped = nullptr;
  if (scaled->is(Kind::Mul)) {
    for (unsigned i = 0; i < 2; ++i)
      if (scaled->getOperand(i)->is(Kind::Const)) {
        double factor = scaled->getOperand(i)->constant;
        if (factor == f32Reciprocal(qmax))
          return llvm::formatv(
              "the dynamic scale multiplies max |y| by {0} instead of "
              "dividing it by {1} (1 / {1} is not exact in f32)",
              formatNumber(factor), formatNumber(qmax));
        return llvm::formatv("the dynamic scale multiplies max |y| by {0}, "
                             "not by 1 / {1}",
                             formatNumber(factor), formatNumber(qmax));
      }
  }
  if (scaled->is(Kind::Div) && scaled->getOperand(1)->is(Kind::Const)) {
    double divisor = scaled->getOperand(1)->constant;
    if (divisor != qmax)
      return llvm::formatv("the dynamic scale divides by {0}, not by {1}",
                           formatNumber(divisor), formatNumber(qmax));
    capped = scaled->getOperand(0);
  }
  if (!capped)
    return "the dynamic scale is not " + form;
  // The optional cap.
  double ub = std::numeric_limits<double>::infinity();
  TensorExpr *amax = capped;
  if (TensorExpr *inner = peelConstantOperand(capped, Kind::Min, ub)) {
    amax = inner;
    if (!(ub > 0.0))
      return "the cap " + formatNumber(ub) +
             " of the dynamic scale (scale_ub) is not > 0";
  }
  // amax = max |y'| over the last dim, in f32 or in y's type and extended.
  TensorExpr *reduced = amax;
  if (amax->is(Kind::Cast) && amax->getOperand(0)->is(Kind::ReduceMax))
    reduced = amax->getOperand(0);
  if (!reduced->is(Kind::ReduceMax))
    return "the dynamic scale is not " + form + " with max |y| a max-reduction";
  uint64_t lastDim = uint64_t(1) << (builder.getRank() - 1);
  if (reduced->reducedDims != lastDim) {
    if (reduced->reducedDims & lastDim)
      return "max |y| is taken over more dims than the last one (a scale "
             "shared across rows); norm.quantize computes one scale per row "
             "or group of the last dim";
    return "max |y| is reduced over another dim than the last one";
  }
  TensorExpr *magnitude = reduced->getOperand(0);
  TensorExpr *y = magnitude->is(Kind::Abs) ? magnitude->getOperand(0) : nullptr;
  bool sameValue = y && (y == yc || (reduced != amax && yc->is(Kind::Cast) &&
                                     yc->getOperand(0) == y));
  if (!sameValue)
    return "the dynamic scale is not computed from max |y| of the quantized "
           "value y";
  match.dynamic = true;
  match.scaleUb = ub;
  match.minScale = floor;
  return "";
}

/// The tensors that materialize the per-row `scale` among the evaluations
/// that evaluating `root` went through: of shape [..., 1] or [...] (the
/// frame's shape with the last dim 1 or dropped), f32.
static SmallVector<Value, 1> findScaleValues(TensorExprBuilder &builder,
                                             Value root, TensorExpr *scale) {
  SmallVector<Value, 1> found;
  const TensorExprEvaluation *evaluation = builder.lookup(root);
  if (!evaluation)
    return found;
  ArrayRef<int64_t> frame = builder.getFrameShape();
  int64_t rank = builder.getRank();
  MLIRContext *context = builder.getContext();
  SmallVector<AffineExpr> leading;
  for (int64_t d = 0; d + 1 < rank; ++d)
    leading.push_back(getAffineDimExpr(d, context));
  SmallVector<int64_t> keepShape(frame.drop_back());
  keepShape.push_back(1);
  SmallVector<AffineExpr> keepResults(leading);
  keepResults.push_back(getAffineConstantExpr(0, context));
  AffineMap keepMap = builder.normalizeMap(
      AffineMap::get(rank, 0, keepResults, context), keepShape);
  AffineMap flatMap = builder.normalizeMap(
      AffineMap::get(rank, 0, leading, context), frame.drop_back());
  builder.walkEvaluations(
      *evaluation,
      [](const TensorExprEvaluation &, const TensorExprEvaluation &) {
        return true;
      },
      [&](const TensorExprEvaluation &visited) {
        if (visited.expr != scale)
          return;
        auto type = dyn_cast<RankedTensorType>(visited.value.getType());
        if (!type || !type.getElementType().isF32())
          return;
        if ((type.getShape() == ArrayRef(keepShape) &&
             visited.map == keepMap) ||
            (type.getShape() == frame.drop_back() && visited.map == flatMap))
          found.push_back(visited.value);
      });
  return found;
}

/// Peels the saturation off `v`: the clamp to [qmin, qmax] and, for i8, the
/// roundeven, in either order. Returns why it is not norm.quantize's, or
/// the empty string with `v` the value clamped.
static std::string peelSaturation(TensorExpr *&v, Type elementType) {
  bool int8 = elementType.isSignlessInteger(8);
  double qmin = int8 ? -128.0 : -448.0;
  double qmax = int8 ? 127.0 : 448.0;
  bool rounded = false;
  auto peelRound = [&] {
    if (int8 && !rounded && v->is(Kind::RoundEven)) {
      rounded = true;
      v = v->getOperand(0);
    }
  };
  peelRound();
  std::optional<double> lo, hi;
  while (v->is(Kind::Max) || v->is(Kind::Min)) {
    TensorExpr *bound = nullptr, *other = nullptr;
    if (v->getOperand(0)->is(Kind::Const)) {
      bound = v->getOperand(0);
      other = v->getOperand(1);
    } else if (v->getOperand(1)->is(Kind::Const)) {
      bound = v->getOperand(1);
      other = v->getOperand(0);
    } else {
      break;
    }
    std::optional<double> &slot = v->is(Kind::Max) ? lo : hi;
    if (slot)
      break;
    slot = bound->constant;
    v = other;
  }
  peelRound();
  std::string range =
      "[" + formatNumber(qmin) + ", " + formatNumber(qmax) + "]";
  if (!lo && !hi)
    return "the value converted to " + formatType(elementType) +
           " is not clamped to " + range + " (no saturation)";
  if (!lo || !hi)
    return llvm::formatv("the value converted to {0} is clamped only from "
                         "{1}, not to {2}",
                         formatType(elementType), lo ? "below" : "above",
                         range);
  if (*lo != qmin || *hi != qmax)
    return llvm::formatv("the value is clamped to [{0}, {1}], not to {2}",
                         formatNumber(*lo), formatNumber(*hi), range);
  if (int8 && !rounded)
    return "no math.roundeven before arith.fptosi, which rounds toward zero";
  return "";
}

namespace {
/// The scaling of a quantization: y' / s, y' * (1/s) or y' * c.
struct Scaling {
  TensorExpr *yc = nullptr;
  /// The scale, when not a constant.
  TensorExpr *scale = nullptr;
  std::optional<double> constantScale;
  bool divides = false;
};
} // namespace

/// Reads the scaling of the clamped value `v` into `scaling`; returns why
/// it is not norm.quantize's, or the empty string.
static std::string matchScaling(TensorExpr *v, Scaling &scaling) {
  if (v->is(Kind::Div)) {
    scaling.yc = v->getOperand(0);
    scaling.scale = v->getOperand(1);
    scaling.divides = true;
    if (scaling.scale->is(Kind::Const)) {
      scaling.constantScale = scaling.scale->constant;
      scaling.scale = nullptr;
    }
  } else if (v->is(Kind::Mul)) {
    for (unsigned i = 0; i < 2 && !scaling.yc; ++i) {
      TensorExpr *factor = v->getOperand(1 - i);
      if (factor->is(Kind::Recip)) {
        scaling.yc = v->getOperand(i);
        scaling.scale = factor->getOperand(0);
      } else if (factor->is(Kind::Const)) {
        // y * c is y * (1/s) for s = 1/c when 1/s gives c back.
        double s = f32Reciprocal(factor->constant);
        if (f32Reciprocal(s) != factor->constant)
          return llvm::formatv("the value is multiplied by {0}, which is not "
                               "the f32 reciprocal of an f32 scale",
                               formatNumber(factor->constant));
        scaling.yc = v->getOperand(i);
        scaling.constantScale = s;
      }
    }
    if (!scaling.yc)
      return "the value is multiplied by a factor that is neither a "
             "constant nor the reciprocal 1 / s of a scale (norm.quantize "
             "computes y * (1 / s))";
  } else {
    return "the clamped value is not y / s, y * (1 / s) or y * c";
  }
  if (!scaling.yc->type.isF32())
    return "the scaling is computed in " + formatType(scaling.yc->type) +
           ", not f32";
  return "";
}

/// Checks that the static scale of `scaling` is one f32 value for the
/// whole tensor (a constant, or one element of a tensor or scalar value);
/// returns why not, or the empty string.
static std::string matchStaticScale(TensorExprBuilder &builder,
                                    Scaling &scaling) {
  TensorExpr *&scale = scaling.scale;
  if (!scale)
    return "";
  if (scale->is(Kind::Leaf))
    if (Value scalar = getSplatScalar(scale->value))
      scale = builder.getLeaf(
          scalar,
          AffineMap::get(builder.getRank(), 0, {}, builder.getContext()),
          scale->type);
  if (scale->deps != 0)
    return "the scale varies along the quantized tensor; norm.quantize "
           "takes one per-tensor scale";
  if (!scale->type.isF32())
    return "the scale is " + formatType(scale->type) + ", not f32";
  if (scale->is(Kind::Const)) {
    scaling.constantScale = scale->constant;
    scale = nullptr;
  } else if (!scale->is(Kind::Leaf)) {
    return "the scale is computed by the chain, not a tensor or scalar value";
  } else if (auto type = dyn_cast<RankedTensorType>(scale->value.getType())) {
    if (!llvm::all_of(type.getShape(), [](int64_t s) { return s == 1; }))
      return "the scale is one element of a " + formatType(type) +
             ", not a per-tensor scale";
  }
  return "";
}

QuantizeAnalysis mlir::norm::analyzeQuantize(TensorExprBuilder &builder,
                                             Operation *root,
                                             bool assumeNoNans) {
  QuantizeAnalysis analysis;
  if (root->getNumResults() != 1)
    return analysis;
  auto resultType = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  if (!resultType || resultType.getShape() != builder.getFrameShape())
    return analysis;
  Type elementType = resultType.getElementType();
  if (isSupportedFloat(elementType) ||
      !isa<FloatType, IntegerType>(elementType))
    return analysis;
  TensorExpr *expr = builder.evaluate(root->getResult(0));
  if (!expr || !(expr->is(Kind::Cast) || expr->is(Kind::FPToSI)))
    return analysis;

  // A conversion of floats to a quantized type: a candidate.
  analysis.candidate = true;
  auto decline = [&](const Twine &reason) {
    analysis.reason = reason.str();
    return analysis;
  };
  bool fp8 = isa<Float8E4M3FNType>(elementType);
  if (!fp8 && !elementType.isSignlessInteger(8))
    return decline("the result element type is " + formatType(elementType) +
                   "; norm.quantize produces f8E4M3FN or i8");
  TensorExpr *v = expr->getOperand(0);
  if (!v->type.isF32())
    return decline("the converted value is " + formatType(v->type) +
                   ", not f32");
  std::string reason = peelSaturation(v, elementType);
  if (!reason.empty())
    return decline(reason);
  Scaling scaling;
  reason = matchScaling(v, scaling);
  if (!reason.empty())
    return decline(reason);

  QuantizeMatch match;
  match.quantizedType = elementType;
  match.divides = scaling.divides;
  // A scale computed from a max-reduction: the dynamic form.
  if (scaling.scale && containsReduceMax(scaling.scale)) {
    reason = matchDynamicScale(builder, scaling.scale, scaling.yc,
                               fp8 ? 448.0 : 127.0, match);
    if (!reason.empty())
      return decline(reason);
    match.scaleValues =
        findScaleValues(builder, root->getResult(0), scaling.scale);
    scaling.scale = nullptr;
  }
  reason = matchStaticScale(builder, scaling);
  if (!reason.empty())
    return decline(reason);
  match.scale = scaling.scale;
  match.scaleConstant = scaling.constantScale.value_or(0.0);

  // The quantized tensor: y (f32) or the f16/bf16 tensor it extends.
  TensorExpr *yc = scaling.yc, *y = yc;
  if (yc->is(Kind::Cast) &&
      (yc->getOperand(0)->type.isF16() || yc->getOperand(0)->type.isBF16()))
    y = yc->getOperand(0);
  match.y = findMaterialized(builder, root->getResult(0), y);
  if (!match.y)
    return decline("the quantized value is not a tensor of its own (it is "
                   "computed in the op that quantizes it)");
  if (!assumeNoNans) {
    std::string nanDrop = findNaNDrop(builder, root, match.y);
    if (!nanDrop.empty())
      return decline(nanDrop + "; norm.quantize propagates it "
                               "(assume-no-nans or fastmath<nnan> to raise)");
  }
  analysis.match = match;
  return analysis;
}

/// The scale operand of the static form, built detached in `created`: the
/// constant, the scale tensor, or the scalar made a tensor<f32>.
static Value buildScaleOperand(DetachedRewrite &created, Location loc,
                               const QuantizeMatch &match) {
  OpBuilder &b = created.getBuilder();
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  if (!match.scale) {
    auto attr = DenseElementsAttr::get(
        scalarType, b.getF32FloatAttr(static_cast<float>(match.scaleConstant)));
    return created.track(arith::ConstantOp::create(b, loc, attr));
  }
  // A scalar extracted from a one-element tensor<f32> or tensor<1xf32> is
  // that tensor.
  Value scaleValue = match.scale->value;
  if (auto extract = scaleValue.getDefiningOp<tensor::ExtractOp>()) {
    RankedTensorType sourceType = extract.getTensor().getType();
    if (sourceType.getRank() <= 1 && sourceType.hasStaticShape() &&
        sourceType.getNumElements() == 1)
      scaleValue = extract.getTensor();
  }
  if (!isa<RankedTensorType>(scaleValue.getType()))
    return created.track(tensor::FromElementsOp::create(
        b, loc, scalarType, ValueRange{scaleValue}));
  if (cast<RankedTensorType>(scaleValue.getType()).getRank() <= 1)
    return scaleValue;
  return created.track(tensor::CollapseShapeOp::create(
      b, loc, scalarType, scaleValue, ArrayRef<ReassociationIndices>{}));
}

LogicalResult mlir::norm::rewriteQuantize(RewriterBase &rewriter,
                                          Operation *root,
                                          const QuantizeMatch &match) {
  Location loc = root->getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  DetachedRewrite created(rewriter.getContext());
  OpBuilder &b = created.getBuilder();
  // y with the root's shape (they differ only in dynamic sizes).
  Value y = castToShape(
      b, loc, match.y,
      cast<RankedTensorType>(root->getResult(0).getType()).getShape());
  if (!y)
    return failure();
  created.track(y);
  // Dynamic: no scale operand, the op computes the scales.
  Value scale =
      match.dynamic ? Value() : buildScaleOperand(created, loc, match);
  auto op =
      created.track(QuantizeOp::create(b, loc, y, scale, match.quantizedType,
                                       /*groupSize=*/0));
  if (match.dynamic) {
    if (!std::isinf(match.scaleUb))
      op.setScaleUbAttr(b.getF32FloatAttr(match.scaleUb));
    op.setMinScaleAttr(b.getF32FloatAttr(match.minScale));
  }

  // The new op must verify and have the root's type before the IR changes.
  std::string diagnostic;
  if (failed(DetachedRewrite::verify(op, diagnostic)) ||
      op.getQ().getType() != root->getResult(0).getType())
    return failure();
  created.commit(rewriter, root);

  // The chain's scales: their users after the op read the op's scales
  // (without the last dim for a [...] tensor).
  if (match.dynamic) {
    Value scales = op.getScales();
    auto scalesType = cast<RankedTensorType>(scales.getType());
    rewriter.setInsertionPointAfter(op);
    auto flatType = RankedTensorType::get(scalesType.getShape().drop_back(),
                                          scalesType.getElementType());
    Value flat;
    DominanceInfo dominance;
    for (Value value : match.scaleValues) {
      Value replacement = scales;
      if (value.getType() == flatType) {
        if (!flat) {
          SmallVector<ReassociationIndices> groups;
          int64_t rank = scalesType.getRank();
          for (int64_t d = 0; d + 2 < rank; ++d)
            groups.push_back({d});
          if (rank >= 2)
            groups.push_back({rank - 2, rank - 1});
          flat = tensor::CollapseShapeOp::create(rewriter, loc, flatType,
                                                 scales, groups);
        }
        replacement = flat;
      } else if (value.getType() != scalesType) {
        continue;
      }
      Operation *definer = replacement.getDefiningOp();
      rewriter.replaceUsesWithIf(value, replacement, [&](OpOperand &use) {
        Operation *user = use.getOwner();
        return !root->isAncestor(user) && user != definer &&
               dominance.properlyDominates(definer, user);
      });
    }
    if (flat && flat.use_empty())
      rewriter.eraseOp(flat.getDefiningOp());
  }
  // Replace the root, then erase what only the chain used.
  eraseReplacedChain(rewriter, root, op.getQ(), {});
  return success();
}
