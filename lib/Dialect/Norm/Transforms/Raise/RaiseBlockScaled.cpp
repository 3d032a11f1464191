//===- RaiseBlockScaled.cpp - Decomposed block-scaled quantization --------===//
//
// Recognizes the block-scaled forms of norm.quantize (DESIGN section 2d)
// written out as elementwise ops in a frame [..., K, G] whose last dim is
// the group (a frontend reshapes y [..., N] to [..., N/G, G]), in whatever
// dialect the evaluator reads, with amax = max |y'| over the last dim
// (y' = y or extf(y) to f32):
//
//   MX (f8E4M3FN with G = 32 or 128, f4E2M1FN with G = 32):
//     X      = clamp(floor(log2(amax)) - emax, -127, 127)     floor
//            | clamp(ceil(log2(amax / QMAX)), -127, 127)      up
//     q      = convert(clamp(y' / 2^X, -QMAX, QMAX))   (or y' * 2^-X)
//     scales = truncf(2^X) to f8E8M0FNU
//   NVFP4 (f4E2M1FN, G = 16, a per-tensor f32 global scale g):
//     sf     = truncf(clamp(g * (amax / 6), -448, 448)) to f8E4M3FN
//     out    = (f32(sf) == 0) ? 0 : g / f32(sf)
//     q      = truncf(clamp(y' * out, -6, 6)) to f4E2M1FN
//
// The exponent must be computed exactly: log2 (and amax / QMAX) in f64.
// In f32, log2 rounds the values within about 2^-24 below 2^k up to k (and
// amax / QMAX may round onto a power of two), so floor or ceil of it is
// not the exponent the op computes; such chains are declined with a
// remark. Conversions between f32 and f64 are looked through where the
// values are integers or powers of two of the exponent range (exact).
//
// NaN: a group holding a NaN gives a NaN exponent and scale, which the
// chain carries to every element (y / NaN), as the op does; upstream
// folds `arith.truncf` of a NaN to f4E2M1FN (no NaN code) to 0x0, the op's
// code. A clamp that turns a NaN into a number declines the raise (see
// describeNaNDrop).
//
//===----------------------------------------------------------------------===//

#include "RaiseBlockScaled.h"
#include "RaiseQuantize.h"
#include "RaiseRewrite.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

/// `e` without conversions between f32 and f64: exact for the values of
/// the exponent computation (integers of the exponent range, their powers
/// of two, infinities and NaN), and for amax (an f32 maximum).
static TensorExpr *stripWideCasts(TensorExpr *e) {
  auto isWide = [](Type type) { return type.isF32() || type.isF64(); };
  while (e->is(Kind::Cast) && isWide(e->type) &&
         isWide(e->getOperand(0)->type))
    e = e->getOperand(0);
  return e;
}

/// Peels `max(., lo)` and `min(., hi)` with constant bounds off `e`, in
/// either order, looking through f32/f64 conversions when `throughCasts`.
static TensorExpr *peelClamp(TensorExpr *e, std::optional<double> &lo,
                             std::optional<double> &hi, bool throughCasts) {
  if (throughCasts)
    e = stripWideCasts(e);
  while (e->is(Kind::Max) || e->is(Kind::Min)) {
    unsigned constant = e->getOperand(0)->is(Kind::Const)   ? 0
                        : e->getOperand(1)->is(Kind::Const) ? 1
                                                            : 2;
    std::optional<double> &slot = e->is(Kind::Max) ? lo : hi;
    if (constant == 2 || slot)
      break;
    slot = e->getOperand(constant)->constant;
    e = e->getOperand(1 - constant);
    if (throughCasts)
      e = stripWideCasts(e);
  }
  return e;
}

/// Checks that `e` was clamped to [lo, hi] exactly; returns why not.
static std::string checkClamp(const std::optional<double> &lo,
                              const std::optional<double> &hi, double bound,
                              StringRef what) {
  std::string range = "[" + formatNumber(-bound) + ", " + formatNumber(bound) +
                      "]";
  if (!lo && !hi)
    return (what + " is not clamped to " + range).str();
  if (!lo || !hi)
    return llvm::formatv("{0} is clamped only from {1}, not to {2}", what,
                         lo ? "below" : "above", range)
        .str();
  if (*lo != -bound || *hi != bound)
    return llvm::formatv("{0} is clamped to [{1}, {2}], not to {3}", what,
                         formatNumber(*lo), formatNumber(*hi), range)
        .str();
  return "";
}

/// Checks that `amax` is max |y| over the last frame dim of the quantized
/// value `yc` (f32; the maximum may be taken in y's own type and extended).
static std::string matchGroupMax(TensorExprBuilder &builder, TensorExpr *amax,
                                 TensorExpr *yc) {
  TensorExpr *reduced = stripWideCasts(amax);
  if (reduced->is(Kind::Cast) && reduced->getOperand(0)->is(Kind::ReduceMax))
    reduced = reduced->getOperand(0);
  if (!reduced->is(Kind::ReduceMax))
    return "the group's scale is not computed from a max-reduction max |y|";
  uint64_t lastDim = uint64_t(1) << (builder.getRank() - 1);
  if (reduced->reducedDims != lastDim)
    return "max |y| is not reduced over the last dim alone (the group); "
           "norm.quantize takes one scale per group of the last dim";
  TensorExpr *magnitude = reduced->getOperand(0);
  TensorExpr *y = magnitude->is(Kind::Abs) ? magnitude->getOperand(0) : nullptr;
  bool same = y && (y == yc || (yc->is(Kind::Cast) && yc->getOperand(0) == y));
  if (!same)
    return "the group's scale is not computed from max |y| of the quantized "
           "value y";
  return "";
}

namespace {
/// The parts of an MX scaling `y' / 2^X`.
struct MXScaling {
  TensorExpr *yc = nullptr;
  /// The clamped exponent, without f32/f64 conversions.
  TensorExpr *exponent = nullptr;
};
} // namespace

/// `2^X` computed in f32 or f64 (through conversions between them): X
/// without them, else null.
static TensorExpr *matchPowerOfTwo(TensorExpr *e) {
  e = stripWideCasts(e);
  if (!e->is(Kind::Exp2) || !(e->type.isF32() || e->type.isF64()))
    return nullptr;
  return stripWideCasts(e->getOperand(0));
}

/// Reads `v` as y' / 2^X, y' * 2^-X or y' * (1 / 2^X).
static std::string matchMXScaling(TensorExpr *v, MXScaling &scaling) {
  if (v->is(Kind::Div)) {
    scaling.yc = v->getOperand(0);
    scaling.exponent = matchPowerOfTwo(v->getOperand(1));
  } else if (v->is(Kind::Mul)) {
    for (unsigned i = 0; i < 2 && !scaling.exponent; ++i) {
      TensorExpr *factor = stripWideCasts(v->getOperand(1 - i));
      TensorExpr *x = nullptr;
      if (factor->is(Kind::Recip)) {
        x = matchPowerOfTwo(factor->getOperand(0));
      } else if (TensorExpr *negated = matchPowerOfTwo(factor)) {
        if (negated->is(Kind::Neg))
          x = stripWideCasts(negated->getOperand(0));
        else if (negated->is(Kind::Sub) &&
                 negated->getOperand(0)->is(Kind::Const) &&
                 negated->getOperand(0)->constant == 0.0)
          x = stripWideCasts(negated->getOperand(1));
      }
      if (x) {
        scaling.yc = v->getOperand(i);
        scaling.exponent = x;
      }
    }
  }
  if (!scaling.exponent)
    return "the clamped value is not y / 2^X, y * 2^-X or y * (1 / 2^X) "
           "with 2^X computed by exp2";
  if (!scaling.yc->type.isF32())
    return "the scaling is computed in " + formatType(scaling.yc->type) +
           ", not f32";
  return "";
}

/// Reads the clamped exponent `x` of an MX scaling as the floor or up rule
/// for the element format (`qmax`, `emax`), checking that its amax is the
/// group's max |yc|.
static std::string matchMXExponent(TensorExprBuilder &builder, TensorExpr *x,
                                   TensorExpr *yc, double qmax, int64_t emax,
                                   ScaleRounding &rounding) {
  std::optional<double> lo, hi;
  TensorExpr *e = peelClamp(x, lo, hi, /*throughCasts=*/true);
  std::string reason = checkClamp(lo, hi, 127.0, "the scale exponent");
  if (!reason.empty())
    return reason;
  // floor(log2(amax)) - emax, or ceil(log2(amax / QMAX)).
  TensorExpr *log = nullptr;
  std::optional<double> offset;
  // a - c, or a + (-c) with the constant on either side.
  unsigned constant = 2;
  if (e->is(Kind::Sub) && e->getOperand(1)->is(Kind::Const))
    constant = 1;
  else if (e->is(Kind::Add))
    constant = e->getOperand(1)->is(Kind::Const)   ? 1
               : e->getOperand(0)->is(Kind::Const) ? 0
                                                   : 2;
  if (constant != 2) {
    double c = e->getOperand(constant)->constant;
    offset = e->is(Kind::Sub) ? c : -c;
    TensorExpr *floor = stripWideCasts(e->getOperand(1 - constant));
    if (floor->is(Kind::Floor))
      log = stripWideCasts(floor->getOperand(0));
    rounding = ScaleRounding::floor;
  } else if (e->is(Kind::Ceil)) {
    log = stripWideCasts(e->getOperand(0));
    rounding = ScaleRounding::up;
  }
  if (!log || !log->is(Kind::Log2))
    return llvm::formatv("the scale exponent is neither floor(log2(max |y|)) "
                         "- {0} nor ceil(log2(max |y| / {1}))",
                         emax, formatNumber(qmax))
        .str();
  if (rounding == ScaleRounding::floor && *offset != static_cast<double>(emax))
    return llvm::formatv("the scale exponent subtracts {0} from "
                         "floor(log2(max |y|)), not emax = {1} of {2}",
                         formatNumber(*offset), emax,
                         qmax == 6.0 ? "f4E2M1FN" : "f8E4M3FN")
        .str();
  if (!log->type.isF64())
    return "log2 is computed in " + formatType(log->type) +
           ": rounded, it gives 2^k for values just below 2^k, so its "
           "floor or ceil is not the exact exponent of norm.quantize "
           "(compute it in f64)";
  TensorExpr *amax = log->getOperand(0);
  if (rounding == ScaleRounding::up) {
    if (!amax->is(Kind::Div) || !amax->getOperand(1)->is(Kind::Const) ||
        amax->getOperand(1)->constant != qmax)
      return llvm::formatv("the scale exponent is ceil(log2(.)) of something "
                           "else than max |y| / {0}",
                           formatNumber(qmax))
          .str();
    amax = amax->getOperand(0);
  }
  return matchGroupMax(builder, amax, yc);
}

namespace {
/// The parts of an NVFP4 scaling `y' * out`.
struct NVFP4Scaling {
  TensorExpr *yc = nullptr;
  /// The e4m3 scale code node, and the global scale.
  TensorExpr *scale = nullptr;
  TensorExpr *global = nullptr;
};
} // namespace

/// Reads `v` as y' * ((f32(sf) == 0) ? 0 : g / f32(sf)) with
/// sf = truncf(clamp(g * (amax / 6), -448, 448)) to f8E4M3FN.
static std::string matchNVFP4Scaling(TensorExprBuilder &builder, TensorExpr *v,
                                     NVFP4Scaling &scaling) {
  TensorExpr *select = nullptr;
  if (v->is(Kind::Mul))
    for (unsigned i = 0; i < 2 && !select; ++i)
      if (v->getOperand(1 - i)->is(Kind::SelectEq)) {
        select = v->getOperand(1 - i);
        scaling.yc = v->getOperand(i);
      }
  if (!select)
    return "the value is not y * ((sf == 0) ? 0 : g / sf)";
  TensorExpr *sf32 = select->getOperand(0), *zero = select->getOperand(1);
  TensorExpr *thenValue = select->getOperand(2);
  TensorExpr *elseValue = select->getOperand(3);
  if (!zero->is(Kind::Const) || zero->constant != 0.0)
    return "the NVFP4 multiplier compares the scale with something else than 0";
  if (!thenValue->is(Kind::Const) || thenValue->constant != 0.0 ||
      std::signbit(thenValue->constant))
    return "the NVFP4 multiplier of a zero scale is not +0";
  if (!sf32->is(Kind::Cast) || !sf32->type.isF32() ||
      !isa<Float8E4M3FNType>(sf32->getOperand(0)->type))
    return "the NVFP4 multiplier does not test the f8E4M3FN scale read back "
           "as f32";
  if (!elseValue->is(Kind::Div) || elseValue->getOperand(1) != sf32)
    return "the NVFP4 multiplier of a nonzero scale sf is not g / f32(sf)";
  scaling.global = elseValue->getOperand(0);
  scaling.scale = sf32->getOperand(0);
  if (!scaling.yc->type.isF32())
    return "the scaling is computed in " + formatType(scaling.yc->type) +
           ", not f32";
  // sf = e4m3(clamp(g * (amax / 6), -448, 448)).
  if (!scaling.scale->is(Kind::Cast))
    return "the NVFP4 scale is not computed by the chain (a conversion to "
           "f8E4M3FN of g * (amax / 6))";
  TensorExpr *converted = scaling.scale->getOperand(0);
  if (!converted->type.isF32())
    return "the NVFP4 scale is converted from " + formatType(converted->type) +
           ", not f32";
  std::optional<double> lo, hi;
  TensorExpr *product = peelClamp(converted, lo, hi, /*throughCasts=*/false);
  std::string reason = checkClamp(lo, hi, 448.0, "the NVFP4 scale");
  if (!reason.empty())
    return reason;
  TensorExpr *quotient = nullptr;
  if (product->is(Kind::Mul))
    for (unsigned i = 0; i < 2 && !quotient; ++i)
      if (product->getOperand(i) == scaling.global)
        quotient = product->getOperand(1 - i);
  if (!quotient)
    return "the NVFP4 scale is not g * (amax / 6) with the g of g / sf";
  if (!quotient->is(Kind::Div) || !quotient->getOperand(1)->is(Kind::Const) ||
      quotient->getOperand(1)->constant != 6.0)
    return "the NVFP4 scale is not g * (amax / 6) (in this order: "
           "another order rounds differently)";
  return matchGroupMax(builder, quotient->getOperand(0), scaling.yc);
}

/// Reads the global scale: a constant, or one f32 value for the whole
/// tensor.
static std::string matchGlobalScale(TensorExpr *global,
                                    BlockScaledMatch &match) {
  if (global->deps != 0)
    return "the global scale varies along the quantized tensor; NVFP4 takes "
           "one per-tensor f32 scale";
  if (!global->type.isF32())
    return "the global scale is " + formatType(global->type) + ", not f32";
  if (global->is(Kind::Const)) {
    match.globalScaleConstant = global->constant;
    return "";
  }
  if (!global->is(Kind::Leaf))
    return "the global scale is computed by the chain, not a tensor or "
           "scalar value";
  if (auto type = dyn_cast<RankedTensorType>(global->value.getType()))
    if (!llvm::all_of(type.getShape(), [](int64_t s) { return s == 1; }))
      return "the global scale is one element of a " + formatType(type) +
             ", not a per-tensor scale";
  match.globalScale = global;
  return "";
}

/// True when `e` holds an op of the block-scaled forms below its root.
static bool hasBlockScaleOps(TensorExpr *e) {
  if (e->is(Kind::Exp2) || e->is(Kind::Log2) || e->is(Kind::SelectEq) ||
      e->is(Kind::Floor) || e->is(Kind::Ceil))
    return true;
  return llvm::any_of(e->operands, hasBlockScaleOps);
}

/// The shapes and maps of per-group scale tensors in `builder`'s frame:
/// the frame with the last dim 1 (`keep`) or dropped (`flat`).
static std::pair<AffineMap, AffineMap>
getScaleMaps(TensorExprBuilder &builder, SmallVectorImpl<int64_t> &keepShape) {
  MLIRContext *context = builder.getContext();
  ArrayRef<int64_t> frame = builder.getFrameShape();
  int64_t rank = builder.getRank();
  SmallVector<AffineExpr> leading;
  for (int64_t d = 0; d + 1 < rank; ++d)
    leading.push_back(getAffineDimExpr(d, context));
  keepShape.assign(frame.begin(), frame.end() - 1);
  keepShape.push_back(1);
  SmallVector<AffineExpr> keep(leading);
  keep.push_back(getAffineConstantExpr(0, context));
  return {builder.normalizeMap(AffineMap::get(rank, 0, keep, context),
                               keepShape),
          builder.normalizeMap(AffineMap::get(rank, 0, leading, context),
                               frame.drop_back())};
}

/// The accessing map of a per-group scale tensor of `type`, or null.
static AffineMap getScaleAccess(TensorExprBuilder &builder,
                                RankedTensorType type, Type element) {
  SmallVector<int64_t> keepShape;
  auto [keepMap, flatMap] = getScaleMaps(builder, keepShape);
  if (type.getElementType() != element)
    return {};
  if (type.getShape() == ArrayRef<int64_t>(keepShape))
    return keepMap;
  if (type.getShape() == builder.getFrameShape().drop_back())
    return flatMap;
  return {};
}

/// True when the ops computing `value` (walked up to `stop`) may turn a
/// NaN into a number.
static bool mayDropNaN(Value value, Value stop) {
  SmallVector<Value> worklist{value};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    Operation *op = current.getDefiningOp();
    if (current == stop || !op || !seen.insert(op).second)
      continue;
    if (seen.size() > 256)
      return true;
    bool drops = false;
    op->walk([&](Operation *nested) {
      drops |= !describeNaNDrop(nested).empty();
    });
    if (drops)
      return true;
    llvm::append_range(worklist, op->getOperands());
  }
  return false;
}

/// MX: the f8E8M0FNU tensors of the root's block that hold truncf(2^X) of
/// the exponent `x` per group.
static void findMXScaleValues(TensorExprBuilder &builder, Operation *root,
                              TensorExpr *x, bool assumeNoNans, Value y,
                              BlockScaledMatch &match) {
  for (Operation &op : *root->getBlock()) {
    if (op.getNumResults() != 1)
      continue;
    auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!type)
      continue;
    AffineMap map = getScaleAccess(builder, type, match.scalesElementType);
    if (!map)
      continue;
    TensorExpr *e = builder.evaluate(op.getResult(0), map);
    if (!e || !e->is(Kind::Cast) || matchPowerOfTwo(e->getOperand(0)) != x)
      continue;
    if (!assumeNoNans && mayDropNaN(op.getResult(0), y))
      continue;
    match.scaleValues.push_back(op.getResult(0));
  }
}

/// NVFP4: the f8E4M3FN tensors of the scale code among the evaluations of
/// the root.
static void findNVFP4ScaleValues(TensorExprBuilder &builder, Operation *root,
                                 TensorExpr *scale, BlockScaledMatch &match) {
  const TensorExprEvaluation *evaluation = builder.lookup(root->getResult(0));
  if (!evaluation)
    return;
  builder.walkEvaluations(
      *evaluation,
      [](const TensorExprEvaluation &, const TensorExprEvaluation &) {
        return true;
      },
      [&](const TensorExprEvaluation &visited) {
        auto type = dyn_cast<RankedTensorType>(visited.value.getType());
        if (visited.expr != scale || !type)
          return;
        AffineMap map = getScaleAccess(builder, type, match.scalesElementType);
        if (map && visited.map == map &&
            !llvm::is_contained(match.scaleValues, visited.value))
          match.scaleValues.push_back(visited.value);
      });
}

BlockScaledAnalysis mlir::norm::analyzeBlockScaled(TensorExprBuilder &builder,
                                                   Operation *root,
                                                   bool assumeNoNans) {
  BlockScaledAnalysis analysis;
  if (root->getNumResults() != 1)
    return analysis;
  auto resultType = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  if (!resultType || resultType.getShape() != builder.getFrameShape())
    return analysis;
  Type elementType = resultType.getElementType();
  bool fp4 = isa<Float4E2M1FNType>(elementType);
  if (!fp4 && !isa<Float8E4M3FNType>(elementType))
    return analysis;
  TensorExpr *expr = builder.evaluate(root->getResult(0));
  if (!expr || !expr->is(Kind::Cast))
    return analysis;
  if (!fp4 && !hasBlockScaleOps(expr))
    return analysis;
  analysis.candidate = true;
  // The narrow float tensors the chain reads (NVFP4's e4m3 scales): part
  // of this candidate, not candidates of their own.
  if (const TensorExprEvaluation *evaluation =
          builder.lookup(root->getResult(0)))
    builder.walkEvaluations(
        *evaluation,
        [](const TensorExprEvaluation &, const TensorExprEvaluation &) {
          return true;
        },
        [&](const TensorExprEvaluation &visited) {
          Operation *op = visited.value.getDefiningOp();
          if (op && op != root && isa<FloatType>(getElementTypeOrSelf(
                                      visited.value.getType())) &&
              !isSupportedFloat(getElementTypeOrSelf(visited.value.getType())))
            analysis.scaleOps.push_back(op);
        });
  auto decline = [&](const Twine &reason) {
    analysis.reason = reason.str();
    return analysis;
  };
  TensorExpr *v = expr->getOperand(0);
  if (!v->type.isF32())
    return decline("the converted value is " + formatType(v->type) +
                   ", not f32");
  double qmax = fp4 ? 6.0 : 448.0;
  std::optional<double> lo, hi;
  v = peelClamp(v, lo, hi, /*throughCasts=*/false);
  std::string reason = checkClamp(
      lo, hi, qmax, "the value converted to " + formatType(elementType));
  if (!reason.empty())
    return decline(reason);
  int64_t group = builder.getFrameShape().back();
  if (ShapedType::isDynamic(group))
    return decline("the group (the last dim) has a dynamic size");

  BlockScaledMatch match;
  match.quantizedType = elementType;
  match.groupSize = group;
  TensorExpr *yc = nullptr;
  bool nvfp4 = false;
  MXScaling mx;
  NVFP4Scaling nv;
  if (v->is(Kind::Mul) && (v->getOperand(0)->is(Kind::SelectEq) ||
                           v->getOperand(1)->is(Kind::SelectEq))) {
    nvfp4 = true;
    if (!fp4)
      return decline("an NVFP4 scaling of f8E4M3FN elements (NVFP4 produces "
                     "f4E2M1FN)");
    if (group != 16)
      return decline(llvm::formatv("NVFP4 groups of {0} elements; NVFP4 "
                                   "takes groups of 16",
                                   group));
    reason = matchNVFP4Scaling(builder, v, nv);
    if (reason.empty())
      reason = matchGlobalScale(nv.global, match);
    yc = nv.yc;
    match.scalesElementType = Float8E4M3FNType::get(root->getContext());
  } else {
    bool validGroup = fp4 ? group == 32 : (group == 32 || group == 128);
    if (fp4 && group == 16)
      return decline("groups of 16 f4E2M1FN elements without the NVFP4 "
                     "multiplier (f32(sf) == 0) ? 0 : g / f32(sf) (an "
                     "ordered test: cmpf oeq, or une with the values "
                     "swapped); MXFP4 takes groups of 32");
    if (!validGroup)
      return decline(llvm::formatv(
          "MX groups of {0} elements; {1} takes groups of {2}", group,
          fp4 ? "MXFP4" : "MXFP8 (or FP8 1x128)", fp4 ? "32" : "32 or 128"));
    reason = matchMXScaling(v, mx);
    if (reason.empty())
      reason = matchMXExponent(builder, mx.exponent, mx.yc, qmax, fp4 ? 2 : 8,
                               match.rounding);
    yc = mx.yc;
    match.scalesElementType = Float8E8M0FNUType::get(root->getContext());
  }
  if (!reason.empty())
    return decline(reason);

  // The quantized tensor: y (f32) or the f16/bf16 tensor it extends.
  TensorExpr *y = yc;
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
  if (nvfp4)
    findNVFP4ScaleValues(builder, root, nv.scale, match);
  else
    findMXScaleValues(builder, root, mx.exponent, assumeNoNans, match.y,
                      match);
  analysis.match = match;
  return analysis;
}

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

/// The reassociation of `expand` when it splits the last dim of its source
/// in two and keeps every other dim: its source, else null.
static Value getSplitLastDimSource(Value y) {
  auto expand = y.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return {};
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  int64_t rank = expand.getResultType().getRank();
  if (groups.empty() || groups.back() != ReassociationIndices{rank - 2,
                                                              rank - 1})
    return {};
  for (auto [i, group] : llvm::enumerate(ArrayRef(groups).drop_back()))
    if (group.size() != 1)
      return {};
  return expand.getSrc();
}

/// The global scale operand, built detached: the constant, the scale
/// tensor, or the scalar made a tensor<f32>.
static Value buildGlobalScale(DetachedRewrite &created, Location loc,
                              const BlockScaledMatch &match) {
  OpBuilder &b = created.getBuilder();
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  if (!match.globalScale) {
    auto attr = DenseElementsAttr::get(
        scalarType,
        b.getF32FloatAttr(static_cast<float>(match.globalScaleConstant)));
    return created.track(arith::ConstantOp::create(b, loc, attr));
  }
  Value value = match.globalScale->value;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return created.track(tensor::FromElementsOp::create(b, loc, scalarType,
                                                        ValueRange{value}));
  if (type.getRank() == 0)
    return value;
  return created.track(tensor::CollapseShapeOp::create(
      b, loc, scalarType, value, ArrayRef<ReassociationIndices>{}));
}

/// `value` reshaped to `type`, which differs from its type by a trailing
/// unit dim (added or dropped); null otherwise.
static Value reshapeScales(OpBuilder &b, Location loc, Value value,
                           RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  auto groups = [](int64_t rank) {
    SmallVector<ReassociationIndices> result;
    for (int64_t d = 0; d + 2 < rank; ++d)
      result.push_back({d});
    if (rank >= 2)
      result.push_back({rank - 2, rank - 1});
    return result;
  };
  if (type.getRank() == from.getRank() + 1 && type.getShape().back() == 1 &&
      type.getShape().drop_back() == from.getShape())
    return tensor::ExpandShapeOp::create(b, loc, type, value,
                                         groups(type.getRank()));
  if (from.getRank() == type.getRank() + 1 && from.getShape().back() == 1 &&
      from.getShape().drop_back() == type.getShape())
    return tensor::CollapseShapeOp::create(b, loc, type, value,
                                           groups(from.getRank()));
  return {};
}

LogicalResult mlir::norm::rewriteBlockScaled(RewriterBase &rewriter,
                                             Operation *root,
                                             const BlockScaledMatch &match) {
  Location loc = root->getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  DetachedRewrite created(rewriter.getContext());
  OpBuilder &b = created.getBuilder();
  auto rootType = cast<RankedTensorType>(root->getResult(0).getType());
  // y with the root's shape, or the [..., N] tensor it splits.
  Value y = castToShape(b, loc, match.y, rootType.getShape());
  if (!y)
    return failure();
  Value input = getSplitLastDimSource(match.y);
  if (!input)
    input = created.track(y);
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> scalesShape(inputType.getShape());
  if (ShapedType::isDynamic(scalesShape.back()) ||
      scalesShape.back() % match.groupSize != 0)
    return failure();
  scalesShape.back() /= match.groupSize;
  auto qType = inputType.clone(match.quantizedType);
  auto scalesType =
      RankedTensorType::get(scalesShape, match.scalesElementType);
  Value global = isa<Float8E4M3FNType>(match.scalesElementType)
                     ? buildGlobalScale(created, loc, match)
                     : Value();
  MLIRContext *context = rewriter.getContext();
  auto op = created.track(QuantizeOp::create(
      b, loc, TypeRange{qType, scalesType}, input, /*scale=*/Value(), global,
      b.getI64IntegerAttr(match.groupSize), FloatAttr(), FloatAttr(),
      match.rounding == ScaleRounding::floor
          ? ScaleRoundingAttr()
          : ScaleRoundingAttr::get(context, match.rounding),
      ScaleLayoutAttr()));
  std::string diagnostic;
  if (failed(DetachedRewrite::verify(op, diagnostic)))
    return failure();
  // q in the root's shape: split again when the op took the [..., N] input.
  Value q = op.getQ();
  if (input != y) {
    auto expand = match.y.getDefiningOp<tensor::ExpandShapeOp>();
    q = created.track(tensor::ExpandShapeOp::create(
        b, loc, expand.getResultType().clone(match.quantizedType), q,
        expand.getReassociationIndices(), expand.getMixedOutputShape()));
    q = created.track(castToShape(b, loc, q, rootType.getShape()));
  }
  if (!q || q.getType() != rootType)
    return failure();
  created.commit(rewriter, root);

  // The chain's scale codes: their users after the op read the op's.
  DominanceInfo dominance;
  for (Value value : match.scaleValues) {
    rewriter.setInsertionPointAfter(op);
    Value replacement = reshapeScales(
        rewriter, loc, op.getScales(), cast<RankedTensorType>(value.getType()));
    if (!replacement)
      continue;
    Operation *definer = replacement.getDefiningOp();
    rewriter.replaceUsesWithIf(value, replacement, [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return !root->isAncestor(user) && user != definer &&
             dominance.properlyDominates(definer, user);
    });
    if (replacement != op.getScales() && replacement.use_empty())
      rewriter.eraseOp(definer);
  }
  // The scale ops left without uses, then the chain.
  for (Value value : match.scaleValues)
    if (Operation *definer = value.getDefiningOp())
      if (value.use_empty() && definer->getNumResults() == 1 &&
          isMemoryEffectFree(definer) && !root->isAncestor(definer) &&
          definer != root)
        eraseReplacedChain(rewriter, definer, /*replacements=*/{}, {});
  eraseReplacedChain(rewriter, root, q, {});
  return success();
}
