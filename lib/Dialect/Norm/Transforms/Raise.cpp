//===- Raise.cpp - Raise decomposed normalizations into norm ops -*- C++
//-*-===//
//
// norm-raise: recognizes LayerNorm, RMSNorm and DyT written out as
// elementwise and reduction ops (linalg, TOSA, tensor-level arith/math, as
// torch-mlir and hand-written IR have them) and replaces each chain by one
// norm op with exactly the semantics the chain computes.
//
// The chain ending at a candidate op is first turned into a hash-consed
// element-level expression (TensorExpr.h), which hides how the frontend
// spelled it; the expression is then matched against the op semantics of
// DESIGN section 2, binding the input, the parameters and every attribute.
//
//===----------------------------------------------------------------------===//

#include "TensorExpr.h"

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <cmath>
#include <memory>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMRAISEPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

namespace {

//===----------------------------------------------------------------------===//
// Match result
//===----------------------------------------------------------------------===//

enum class NormKind { LayerNorm, RMSNorm, DyT };

/// How far a match attempt got; the failure of the attempt that got
/// furthest is the one reported. From `kStatistic` on, the chain is a
/// normalization candidate (a declined one is counted and explained).
enum Progress : int {
  kNothing = 0,
  /// The normalized value has the shape of a normalization.
  kShape = 1,
  /// A row statistic of the input (mean, mean square) was recognized.
  kStatistic = 2,
  /// The statistics, epsilon and form were recognized.
  kStructure = 3,
  /// The whole expression matched; types and parameters are checked.
  kCore = 4,
  /// Everything matched; the IR around the chain is checked.
  kChecked = 5,
};

/// A chain in the terms of the op semantics (DESIGN section 2).
struct NormMatch {
  NormKind kind = NormKind::RMSNorm;
  /// The input as the arithmetic sees it (`x` or `extf(x)`), and `x`.
  TensorExpr *xc = nullptr;
  TensorExpr *x = nullptr;
  /// `T` (element type of `x` and of the result) and the arithmetic type.
  Type inputType, computeType;
  /// Type in which weight and bias are applied (the compute type, or for
  /// `before_weight` the wider of `T` and the parameter types).
  Type paramType;
  uint64_t reducedDims = 0;
  int64_t axis = -1;
  std::optional<double> epsilon;
  EpsilonMode epsilonMode = EpsilonMode::inside_sqrt;
  /// ScaleNorm's `||x||` (a root sum of squares) instead of the RMS.
  bool sumOfSquares = false;
  /// Leaf or Const nodes of the parameters, or null.
  TensorExpr *weight = nullptr, *bias = nullptr, *alpha = nullptr;
  double weightOffset = 0.0;
  CastMode castMode = CastMode::final;
};

/// Formats a frame-dim bit set as `[1, 2]`.
static std::string formatDims(uint64_t dims) {
  std::string text = "[";
  bool first = true;
  for (unsigned d = 0; d < 64; ++d) {
    if (!(dims & (uint64_t(1) << d)))
      continue;
    if (!first)
      text += ", ";
    text += std::to_string(d);
    first = false;
  }
  return text + "]";
}

static std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static unsigned getWidth(Type type) { return type.getIntOrFloatBitWidth(); }

/// Formats a constant with up to 9 significant digits.
static std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%.9g", value)).str();
}

//===----------------------------------------------------------------------===//
// Matcher
//===----------------------------------------------------------------------===//

/// Matches the expression of a candidate root against LayerNorm, RMSNorm and
/// DyT in every form the op semantics allow, trying each reading of the
/// epilogue (weight, bias, final or before-weight rounding) in turn.
class NormChainMatcher {
public:
  explicit NormChainMatcher(TensorExprBuilder &builder)
      : builder(builder), rank(builder.getRank()) {}

  std::optional<NormMatch> match(TensorExpr *root);

  int getProgress() const { return bestProgress; }
  StringRef getReason() const {
    return bestReason.empty() ? "the chain matches no normalization form"
                              : StringRef(bestReason);
  }

  /// Records a failure; the one of the attempt that got furthest is kept
  /// (the first on a tie).
  bool fail(int progress, const Twine &reason) {
    if (progress > bestProgress ||
        (progress == bestProgress && bestReason.empty())) {
      bestProgress = progress;
      bestReason = reason.str();
    }
    return false;
  }
  /// Records that an attempt got to `progress`, without a reason yet.
  void reach(int progress) {
    if (progress > bestProgress) {
      bestProgress = progress;
      bestReason.clear();
    }
  }

private:
  using CoreFn = function_ref<bool(TensorExpr *, NormMatch &)>;

  bool matchEpilogue(TensorExpr *e, const NormMatch &base, bool allowOffset,
                     CoreFn matchRest, NormMatch &out);
  TensorExpr *asParam(TensorExpr *e, Type paramType);
  TensorExpr *asWeight(TensorExpr *e, Type paramType, bool allowOffset,
                       double &offset);

  bool matchCore(TensorExpr *n, NormMatch &m);
  bool matchDyT(TensorExpr *n, NormMatch &m);
  bool matchRMSNorm(TensorExpr *n, NormMatch &m);
  bool matchRMSFactor(TensorExpr *r, NormMatch &m);
  bool matchRMSDenominator(TensorExpr *d, NormMatch &m);
  bool matchMeanSquare(TensorExpr *ms, NormMatch &m);
  bool matchLayerNorm(TensorExpr *n, NormMatch &m);
  bool matchVariance(TensorExpr *v, NormMatch &m);
  bool matchMean(TensorExpr *e, TensorExpr *&summand, uint64_t &dims);
  bool matchEpsilonAdd(TensorExpr *e, TensorExpr *&stat, NormMatch &m);
  bool matchEpsilonOrNone(TensorExpr *e, TensorExpr *&stat, NormMatch &m);
  bool bindInput(TensorExpr *xc, NormMatch &m);
  bool setDims(uint64_t dims, NormMatch &m);
  bool finish(NormMatch &m);
  bool checkParam(TensorExpr *p, StringRef name, bool allowScalar,
                  bool scalarOnly, NormMatch &m);
  std::optional<int64_t> getParamAxis(TensorExpr *p);

  TensorExprBuilder &builder;
  int64_t rank;
  int bestProgress = kNothing;
  std::string bestReason = "not a normalization";
};

std::optional<NormMatch> NormChainMatcher::match(TensorExpr *root) {
  Type resultType = root->type;
  NormMatch result;

  // cast_mode = final: y = round_T(core * w + b), or y = core * w + b when
  // the arithmetic happens in T itself.
  SmallVector<std::pair<TensorExpr *, Type>> finalForms;
  if (root->is(Kind::Cast) &&
      getWidth(root->getOperand(0)->type) > getWidth(resultType))
    finalForms.push_back({root->getOperand(0), root->getOperand(0)->type});
  finalForms.push_back({root, resultType});
  for (auto [yc, computeType] : finalForms) {
    NormMatch base;
    base.inputType = resultType;
    base.computeType = computeType;
    base.paramType = computeType;
    auto core = [&](TensorExpr *n, NormMatch &m) {
      return matchCore(n, m) && finish(m);
    };
    if (matchEpilogue(yc, base, /*allowOffset=*/true, core, result))
      return result;
  }

  // cast_mode = before_weight: y = round_T(round_T(n) * w + b) computed in
  // the wider of T and the parameter types (Hugging Face LLaMA).
  TensorExpr *wide = root;
  Type arithmeticType = resultType;
  if (root->is(Kind::Cast) &&
      getWidth(root->getOperand(0)->type) > getWidth(resultType)) {
    wide = root->getOperand(0);
    arithmeticType = wide->type;
  }
  NormMatch base;
  base.inputType = resultType;
  base.paramType = arithmeticType;
  base.castMode = CastMode::before_weight;
  auto roundedCore = [&](TensorExpr *core, NormMatch &m) {
    if (!m.weight && !m.bias)
      return false;
    TensorExpr *rounded = core;
    if (arithmeticType != resultType) {
      if (!rounded->is(Kind::Cast) ||
          rounded->getOperand(0)->type != resultType)
        return false;
      rounded = rounded->getOperand(0);
    }
    if (!rounded->is(Kind::Cast) || rounded->type != resultType ||
        getWidth(rounded->getOperand(0)->type) <= getWidth(resultType))
      return false;
    TensorExpr *n = rounded->getOperand(0);
    m.computeType = n->type;
    return matchCore(n, m) && finish(m);
  };
  if (matchEpilogue(wide, base, /*allowOffset=*/false, roundedCore, result))
    return result;
  return std::nullopt;
}

TensorExpr *NormChainMatcher::asParam(TensorExpr *e, Type paramType) {
  if (e->containsSum || e->type != paramType)
    return nullptr;
  if (e->is(Kind::Leaf) || e->is(Kind::Const))
    return e;
  if (e->is(Kind::Cast) && e->getOperand(0)->is(Kind::Leaf))
    return e->getOperand(0);
  return nullptr;
}

TensorExpr *NormChainMatcher::asWeight(TensorExpr *e, Type paramType,
                                       bool allowOffset, double &offset) {
  offset = 0.0;
  if (TensorExpr *param = asParam(e, paramType))
    return param;
  // Gemma: (1 + w) added in the arithmetic type.
  if (!allowOffset || !e->is(Kind::Add))
    return nullptr;
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *constant = e->getOperand(i);
    TensorExpr *param = asParam(e->getOperand(1 - i), paramType);
    if (constant->is(Kind::Const) && param && !param->is(Kind::Const)) {
      offset = constant->constant;
      return param;
    }
  }
  return nullptr;
}

bool NormChainMatcher::matchEpilogue(TensorExpr *e, const NormMatch &base,
                                     bool allowOffset, CoreFn matchRest,
                                     NormMatch &out) {
  // Readings of e as core [* weight] [+ bias], the fullest first.
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 3> biasSplits;
  if (e->is(Kind::Add))
    for (unsigned i = 0; i < 2; ++i)
      if (TensorExpr *bias = asParam(e->getOperand(1 - i), base.paramType))
        biasSplits.push_back({e->getOperand(i), bias});
  biasSplits.push_back({e, nullptr});

  for (auto [rest, bias] : biasSplits) {
    SmallVector<std::tuple<TensorExpr *, TensorExpr *, double>, 3> weightSplits;
    if (rest->is(Kind::Mul))
      for (unsigned i = 0; i < 2; ++i) {
        double offset;
        if (TensorExpr *weight = asWeight(rest->getOperand(1 - i),
                                          base.paramType, allowOffset, offset))
          weightSplits.push_back({rest->getOperand(i), weight, offset});
      }
    weightSplits.push_back({rest, nullptr, 0.0});
    for (auto [core, weight, offset] : weightSplits) {
      NormMatch m = base;
      m.weight = weight;
      m.bias = bias;
      m.weightOffset = offset;
      if (matchRest(core, m)) {
        out = m;
        return true;
      }
    }
  }
  return false;
}

bool NormChainMatcher::matchCore(TensorExpr *n, NormMatch &m) {
  if (!isSupportedFloat(m.computeType) || n->type != m.computeType)
    return false;
  NormMatch attempt = m;
  if (matchDyT(n, attempt)) {
    m = attempt;
    return true;
  }
  attempt = m;
  if (matchRMSNorm(n, attempt)) {
    m = attempt;
    return true;
  }
  attempt = m;
  if (matchLayerNorm(n, attempt)) {
    m = attempt;
    return true;
  }
  return false;
}

bool NormChainMatcher::bindInput(TensorExpr *xc, NormMatch &m) {
  if (m.xc)
    return m.xc == xc ||
           fail(kStructure, "the statistics are computed from another tensor "
                            "than the one normalized");
  if (xc->containsSum || xc->is(Kind::Const))
    return false;
  m.xc = xc;
  m.x = xc;
  if (xc->is(Kind::Cast) &&
      getWidth(xc->type) > getWidth(xc->getOperand(0)->type))
    m.x = xc->getOperand(0);
  return true;
}

bool NormChainMatcher::setDims(uint64_t dims, NormMatch &m) {
  if (m.reducedDims && m.reducedDims != dims)
    return fail(kStructure,
                llvm::formatv("the statistics reduce different dims ({0} and "
                              "{1})",
                              formatDims(m.reducedDims), formatDims(dims)));
  unsigned lowest = llvm::countr_zero(dims);
  uint64_t all = rank == 64 ? ~uint64_t(0) : (uint64_t(1) << rank) - 1;
  uint64_t trailing = all & ~((uint64_t(1) << lowest) - 1);
  if (dims != trailing)
    return fail(kStructure,
                llvm::formatv("the statistics reduce dims {0} of a rank-{1} "
                              "input, not trailing dims ending at dim {2}",
                              formatDims(dims), rank, rank - 1));
  m.reducedDims = dims;
  m.axis = lowest;
  return true;
}

bool NormChainMatcher::matchMean(TensorExpr *e, TensorExpr *&summand,
                                 uint64_t &dims) {
  // sum / N, sum * (1/N), (1/N) * sum.
  TensorExpr *sum = nullptr, *scale = nullptr;
  bool divides = false;
  if (e->is(Kind::Div) && e->getOperand(0)->is(Kind::Sum) &&
      e->getOperand(1)->is(Kind::Const)) {
    sum = e->getOperand(0);
    scale = e->getOperand(1);
    divides = true;
  } else if (e->is(Kind::Mul)) {
    for (unsigned i = 0; i < 2; ++i)
      if (e->getOperand(i)->is(Kind::Sum) &&
          e->getOperand(1 - i)->is(Kind::Const)) {
        sum = e->getOperand(i);
        scale = e->getOperand(1 - i);
      }
  }
  if (!sum)
    return false;
  int64_t count = 1;
  ArrayRef<int64_t> shape = builder.getFrameShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (!(sum->reducedDims & (uint64_t(1) << d)))
      continue;
    if (ShapedType::isDynamic(shape[d]))
      return fail(kStatistic, "the number of normalized elements is not "
                              "static (dynamic normalized dims)");
    count *= shape[d];
  }
  Type type = e->type;
  double c = scale->constant;
  // N itself is rounded to the arithmetic type, as the op's lowering does.
  double expected = divides ? roundToType(static_cast<double>(count), type)
                            : roundToType(1.0 / count, type);
  if (c != expected) {
    double unbiased = divides ? roundToType(count - 1.0, type)
                              : roundToType(1.0 / (count - 1), type);
    std::string what =
        (divides ? "divided by " : "scaled by ") + formatNumber(c);
    return fail(kStructure,
                llvm::formatv("the sum over {0} elements is {1}, not {2} N{3}",
                              count, what, divides ? "by" : "by 1 /",
                              c == unbiased ? " (unbiased variance)" : ""));
  }
  summand = sum->getOperand(0);
  dims = sum->reducedDims;
  return true;
}

bool NormChainMatcher::matchEpsilonAdd(TensorExpr *e, TensorExpr *&stat,
                                       NormMatch &m) {
  if (!e->is(Kind::Add))
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *eps = e->getOperand(i);
    if (!eps->is(Kind::Const))
      continue;
    if (m.epsilon && *m.epsilon != eps->constant)
      return fail(kStructure, "the chain adds two different epsilons");
    stat = e->getOperand(1 - i);
    // (s + e1) + e2: two epsilons where the op has one.
    if (stat->is(Kind::Add) && stat->containsSum &&
        (stat->getOperand(0)->is(Kind::Const) ||
         stat->getOperand(1)->is(Kind::Const)))
      return fail(kStructure, "the chain adds two epsilons to the statistic");
    m.epsilon = eps->constant;
    return true;
  }
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *eps = e->getOperand(i);
    if (!eps->containsSum && eps->deps == 0 &&
        e->getOperand(1 - i)->containsSum) {
      stat = e->getOperand(1 - i);
      return fail(kStructure, "epsilon is not a constant");
    }
  }
  return false;
}

bool NormChainMatcher::matchEpsilonOrNone(TensorExpr *e, TensorExpr *&stat,
                                          NormMatch &m) {
  if (e->is(Kind::Add))
    return matchEpsilonAdd(e, stat, m);
  // No epsilon (torch-mlir's rms_norm with eps=None): epsilon 0, since
  // s + 0 = s for the nonnegative statistic s.
  if (!e->containsSum || (m.epsilon && *m.epsilon != 0.0))
    return false;
  m.epsilon = 0.0;
  stat = e;
  return true;
}

//===----------------------------------------------------------------------===//
// DyT
//===----------------------------------------------------------------------===//

bool NormChainMatcher::matchDyT(TensorExpr *n, NormMatch &m) {
  // tanh(alpha * x) with a scalar alpha.
  if (!n->is(Kind::Tanh) || !n->getOperand(0)->is(Kind::Mul))
    return false;
  TensorExpr *product = n->getOperand(0);
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *alpha = asParam(product->getOperand(i), m.computeType);
    TensorExpr *input = product->getOperand(1 - i);
    if (!alpha || alpha->deps != 0 || input->deps == 0)
      continue;
    NormMatch attempt = m;
    attempt.kind = NormKind::DyT;
    attempt.alpha = alpha;
    if (!bindInput(input, attempt))
      continue;
    // A tanh of a scaled value alone (as in tanh-GELU) is not DyT: DyT has
    // a learned per-channel weight or bias.
    bool learned = (m.weight && !m.weight->is(Kind::Const)) ||
                   (m.bias && !m.bias->is(Kind::Const));
    if (!learned) {
      fail(kShape, "tanh(alpha * x) without a learned weight or bias is not "
                   "treated as DyT");
      continue;
    }
    reach(kStructure);
    m = attempt;
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

bool NormChainMatcher::matchMeanSquare(TensorExpr *ms, NormMatch &m) {
  TensorExpr *square = nullptr;
  uint64_t dims = 0;
  bool sumOfSquares = false;
  if (ms->is(Kind::Sum)) {
    square = ms->getOperand(0);
    dims = ms->reducedDims;
    sumOfSquares = true;
  } else if (!matchMean(ms, square, dims)) {
    return false;
  }
  if (!square->is(Kind::Mul) || square->getOperand(0) != square->getOperand(1))
    return false;
  if (!bindInput(square->getOperand(0), m))
    return false;
  reach(kStatistic);
  m.sumOfSquares = sumOfSquares;
  return setDims(dims, m);
}

bool NormChainMatcher::matchRMSDenominator(TensorExpr *d, NormMatch &m) {
  // sqrt(ms + eps): inside_sqrt.
  if (d->is(Kind::Sqrt)) {
    TensorExpr *ms;
    return matchEpsilonOrNone(d->getOperand(0), ms, m) &&
           matchMeanSquare(ms, m);
  }
  // sqrt(ms) + eps: outside_sqrt; max(sqrt(ms), eps): clamp.
  TensorExpr *root = nullptr;
  if (d->is(Kind::Add)) {
    if (!matchEpsilonAdd(d, root, m))
      return false;
    m.epsilonMode = EpsilonMode::outside_sqrt;
  } else if (d->is(Kind::Max)) {
    for (unsigned i = 0; i < 2; ++i)
      if (d->getOperand(i)->is(Kind::Const)) {
        m.epsilon = d->getOperand(i)->constant;
        root = d->getOperand(1 - i);
      }
    if (!root)
      return false;
    m.epsilonMode = EpsilonMode::clamp;
  } else {
    return false;
  }
  if (!root->is(Kind::Sqrt))
    return false;
  TensorExpr *ms = root->getOperand(0);
  NormMatch attempt = m;
  if (matchMeanSquare(ms, attempt)) {
    m = attempt;
    return true;
  }
  // sqrt(ms + eps1) + eps2: epsilon on both sides of the root.
  TensorExpr *inner;
  NormMatch probe = m;
  probe.epsilon.reset();
  if (matchEpsilonAdd(ms, inner, probe) && matchMeanSquare(inner, probe))
    return fail(kStructure, "epsilon is added both inside and outside the "
                            "square root");
  return false;
}

bool NormChainMatcher::matchRMSFactor(TensorExpr *r, NormMatch &m) {
  // rsqrt(ms + eps) or 1 / denominator.
  if (r->is(Kind::Rsqrt)) {
    TensorExpr *ms;
    return matchEpsilonOrNone(r->getOperand(0), ms, m) &&
           matchMeanSquare(ms, m);
  }
  if (r->is(Kind::Recip))
    return matchRMSDenominator(r->getOperand(0), m);
  return false;
}

bool NormChainMatcher::matchRMSNorm(TensorExpr *n, NormMatch &m) {
  m.kind = NormKind::RMSNorm;
  // x * r, r * x, x / denominator.
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 2> splits;
  bool divides = n->is(Kind::Div);
  if (n->is(Kind::Mul)) {
    splits.push_back({n->getOperand(0), n->getOperand(1)});
    splits.push_back({n->getOperand(1), n->getOperand(0)});
  } else if (divides) {
    splits.push_back({n->getOperand(0), n->getOperand(1)});
  }
  for (auto [value, scale] : splits) {
    if (!scale->containsSum || value->containsSum)
      continue;
    reach(kShape);
    NormMatch attempt = m;
    bool matched = divides ? matchRMSDenominator(scale, attempt)
                           : matchRMSFactor(scale, attempt);
    if (!matched)
      continue;
    if (value != attempt.xc) {
      fail(kStructure, "the value normalized is not the input of the "
                       "mean square");
      continue;
    }
    reach(kCore);
    m = attempt;
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

bool NormChainMatcher::matchVariance(TensorExpr *v, NormMatch &m) {
  // mean((xk - mean(xk))^2) in a type K at least as wide as the compute
  // type, rounded to it (torch-mlir computes it in f64).
  TensorExpr *variance = v;
  if (v->is(Kind::Cast)) {
    variance = v->getOperand(0);
    if (getWidth(variance->type) <= getWidth(v->type))
      return false;
  }
  TensorExpr *square;
  uint64_t dims;
  if (!matchMean(variance, square, dims))
    return false;
  if (!square->is(Kind::Mul) || square->getOperand(0) != square->getOperand(1))
    return fail(kStructure, "the second statistic is not a mean of squares");
  TensorExpr *centered = square->getOperand(0);
  if (!centered->is(Kind::Sub))
    return fail(kStructure, "the variance is not the mean of squared "
                            "deviations from the mean");
  TensorExpr *xk = centered->getOperand(0);
  TensorExpr *meanSummand;
  uint64_t meanDims;
  if (!matchMean(centered->getOperand(1), meanSummand, meanDims))
    return fail(kStructure, "the variance is not centered on the mean");
  if (meanSummand != xk)
    return fail(kStructure, "the variance is centered on the mean of "
                            "another tensor");
  bool sameInput =
      xk == m.xc || (xk->is(Kind::Cast) &&
                     (xk->getOperand(0) == m.x || xk->getOperand(0) == m.xc));
  if (!sameInput)
    return fail(kStructure, "the variance is computed from another tensor "
                            "than the one normalized");
  return setDims(dims, m) && setDims(meanDims, m);
}

bool NormChainMatcher::matchLayerNorm(TensorExpr *n, NormMatch &m) {
  m.kind = NormKind::LayerNorm;
  // (x - mean) * rstd, rstd * (x - mean), (x - mean) / sqrt(var + eps).
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 2> splits;
  bool divides = n->is(Kind::Div);
  if (n->is(Kind::Mul)) {
    splits.push_back({n->getOperand(0), n->getOperand(1)});
    splits.push_back({n->getOperand(1), n->getOperand(0)});
  } else if (divides) {
    splits.push_back({n->getOperand(0), n->getOperand(1)});
  }
  for (auto [centered, scale] : splits) {
    if (!centered->is(Kind::Sub) || !scale->containsSum)
      continue;
    reach(kShape);
    NormMatch attempt = m;
    TensorExpr *summand;
    uint64_t dims;
    if (!matchMean(centered->getOperand(1), summand, dims))
      continue;
    if (summand != centered->getOperand(0)) {
      fail(kShape, "the value centered is not the input of the mean");
      continue;
    }
    if (!bindInput(summand, attempt))
      continue;
    reach(kStatistic);
    if (!setDims(dims, attempt))
      continue;
    // The denominator sqrt(var + eps), or its reciprocal as a factor.
    TensorExpr *sum = nullptr;
    if (divides && scale->is(Kind::Sqrt))
      sum = scale->getOperand(0);
    else if (!divides && scale->is(Kind::Rsqrt))
      sum = scale->getOperand(0);
    else if (!divides && scale->is(Kind::Recip) &&
             scale->getOperand(0)->is(Kind::Sqrt))
      sum = scale->getOperand(0)->getOperand(0);
    if (!sum) {
      fail(kStatistic, "the centered value is not scaled by the inverse "
                       "square root of the variance plus epsilon");
      continue;
    }
    TensorExpr *variance;
    if (!matchEpsilonOrNone(sum, variance, attempt)) {
      fail(kStatistic, "no constant epsilon is added to the variance");
      continue;
    }
    if (!matchVariance(variance, attempt))
      continue;
    reach(kCore);
    m = attempt;
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Final checks
//===----------------------------------------------------------------------===//

std::optional<int64_t> NormChainMatcher::getParamAxis(TensorExpr *p) {
  if (!p || !p->is(Kind::Leaf))
    return std::nullopt;
  ArrayRef<AffineExpr> results = p->map.getResults();
  for (AffineExpr result : results)
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      return dim.getPosition();
  return std::nullopt;
}

bool NormChainMatcher::checkParam(TensorExpr *p, StringRef name,
                                  bool allowScalar, bool scalarOnly,
                                  NormMatch &m) {
  if (p->is(Kind::Const))
    return true;
  auto type = dyn_cast<RankedTensorType>(p->value.getType());
  if (!type)
    return fail(kCore, llvm::formatv("the {0} is a scalar value, not a "
                                     "tensor",
                                     name));
  Type elementType = type.getElementType();
  if (elementType != m.inputType && !elementType.isF32())
    return fail(kCore, llvm::formatv("the {0} has element type {1}; the op "
                                     "takes {2} or f32",
                                     name, formatType(elementType),
                                     formatType(m.inputType)));
  ArrayRef<AffineExpr> results = p->map.getResults();
  ArrayRef<int64_t> shape = type.getShape();
  bool isScalar = llvm::all_of(shape, [](int64_t s) { return s == 1; });
  if (isScalar && (allowScalar || scalarOnly))
    return true;
  if (scalarOnly)
    return fail(kCore, llvm::formatv("the {0} is not a scalar", name));
  // Leading unit dims (dropped by a reshape), then exactly the normalized
  // dims axis..rank-1.
  int64_t normalizedRank = rank - m.axis;
  int64_t leading = static_cast<int64_t>(shape.size()) - normalizedRank;
  ArrayRef<int64_t> frame = builder.getFrameShape();
  bool ok = leading >= 0;
  for (int64_t i = 0; ok && i < leading; ++i)
    ok = shape[i] == 1;
  for (int64_t j = 0; ok && j < normalizedRank; ++j) {
    int64_t d = m.axis + j;
    AffineExpr result = results[leading + j];
    auto dim = dyn_cast<AffineDimExpr>(result);
    ok = (dim && dim.getPosition() == d) ||
         (shape[leading + j] == 1 && frame[d] == 1);
  }
  if (!ok)
    return fail(kCore, llvm::formatv("the {0} of type {1} is not applied "
                                     "along the normalized dims {2}..{3}",
                                     name, formatType(type), m.axis, rank - 1));
  return true;
}

bool NormChainMatcher::finish(NormMatch &m) {
  Type inputType = m.inputType, computeType = m.computeType;
  if (!isSupportedFloat(inputType))
    return fail(kCore, "the element type is not f16, bf16, f32 or f64");
  if (m.x->type != inputType)
    return fail(kCore,
                llvm::formatv("the input has element type {0} but the "
                              "result {1}",
                              formatType(m.x->type), formatType(inputType)));
  if ((computeType != inputType && !computeType.isF32() &&
       !computeType.isF64()) ||
      getWidth(computeType) < getWidth(inputType))
    return fail(kCore,
                llvm::formatv("the arithmetic happens in {0}, which "
                              "is not a compute type for {1}",
                              formatType(computeType), formatType(inputType)));
  if (m.epsilon && (!std::isfinite(*m.epsilon) || *m.epsilon < 0.0))
    return fail(kCore, "epsilon is negative or not finite");
  if (!std::isfinite(m.weightOffset) ||
      roundToType(m.weightOffset, Float32Type::get(builder.getContext())) !=
          m.weightOffset)
    return fail(kCore, "the constant added to the weight is not an f32 value");
  if (m.weightOffset != 0.0 && m.kind != NormKind::RMSNorm)
    return fail(kCore, "a constant is added to the weight of a LayerNorm or "
                       "DyT");

  if (m.kind == NormKind::DyT) {
    // DyT has no reduction: the parameters give the axis.
    std::optional<int64_t> weightAxis = getParamAxis(m.weight);
    std::optional<int64_t> biasAxis = getParamAxis(m.bias);
    if (weightAxis && biasAxis && *weightAxis != *biasAxis)
      return fail(kCore, "weight and bias are applied along different dims");
    m.axis = weightAxis ? *weightAxis : biasAxis ? *biasAxis : rank - 1;
    if (!checkParam(m.alpha, "alpha", true, true, m))
      return false;
  }
  if (m.weight &&
      !checkParam(m.weight, "weight", m.kind == NormKind::RMSNorm, false, m))
    return false;
  if (m.bias && !checkParam(m.bias, "bias", false, false, m))
    return false;

  // Constant parameters become splat tensors of x.shape[axis:].
  bool staticParams =
      llvm::all_of(builder.getFrameShape().drop_front(m.axis),
                   [](int64_t size) { return !ShapedType::isDynamic(size); });
  if (((m.weight && m.weight->is(Kind::Const) && m.kind != NormKind::RMSNorm) ||
       (m.bias && m.bias->is(Kind::Const))) &&
      !staticParams)
    return fail(kCore, "a constant parameter over dynamic normalized dims");

  if (m.sumOfSquares &&
      (m.weightOffset != 0.0 || (m.weight && !m.weight->is(Kind::Const))))
    return fail(kCore, "a root sum of squares (||x||) is raised only with a "
                       "constant or no weight, which absorbs sqrt(N)");

  if (m.castMode == CastMode::before_weight) {
    // The arithmetic type of the epilogue is fixed by the parameter types.
    Type expected = inputType;
    for (TensorExpr *p : {m.weight, m.bias})
      if (p && p->is(Kind::Leaf)) {
        Type type = getElementTypeOrSelf(p->value.getType());
        if (getWidth(type) > getWidth(expected))
          expected = type;
      }
    if (expected != m.paramType)
      return fail(kCore,
                  llvm::formatv("the rounded value is scaled in {0}, "
                                "not in the wider of the input and "
                                "parameter types ({1})",
                                formatType(m.paramType), formatType(expected)));
  }
  if (m.kind != NormKind::DyT && !m.epsilon)
    return fail(kCore, "no epsilon");
  return true;
}

//===----------------------------------------------------------------------===//
// Chain analysis
//===----------------------------------------------------------------------===//

/// What was found at one candidate root.
struct ChainAnalysis {
  /// Owns the expression nodes `match` points to.
  std::shared_ptr<TensorExprBuilder> builder;
  std::optional<NormMatch> match;
  int progress = kNothing;
  std::string reason;
  /// The materialized input `x`.
  Value x;
  /// The chain's ops (the root included), in program order.
  SmallVector<Operation *> interior;
  /// Ops whose value was a Sum or a Tanh: the anchors of a candidate.
  SmallVector<Operation *> anchors;
};

/// True for ops that may end a chain: one ranked float tensor result.
static bool isPossibleRoot(Operation *op) {
  if (op->getNumResults() != 1 || isa<NormOpInterface>(op) ||
      op->hasTrait<OpTrait::ConstantLike>())
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.getRank() >= 1 && type.getRank() <= 64 &&
         isSupportedFloat(type.getElementType());
}

/// Collects the ops computing the chain: from the root up to the input and
/// parameters, through every value that was evaluated to something else
/// than them (or a constant).
static void collectInterior(TensorExprBuilder &builder, Operation *root,
                            const NormMatch &match,
                            SmallVectorImpl<Operation *> &interior) {
  llvm::SmallPtrSet<TensorExpr *, 4> stops{match.x};
  for (TensorExpr *p : {match.weight, match.bias, match.alpha})
    if (p)
      stops.insert(p);
  auto isStop = [&](TensorExpr *e) {
    return stops.contains(e) || e->is(Kind::Const) ||
           (e->is(Kind::Leaf) && e->map.getNumResults() == 0);
  };
  llvm::SetVector<Operation *> ops;
  ops.insert(root);
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation *op = ops[i];
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value value : used) {
      ArrayRef<TensorExpr *> nodes = builder.getNodesOf(value);
      if (nodes.empty() || llvm::all_of(nodes, isStop))
        continue;
      if (Operation *def = value.getDefiningOp())
        ops.insert(def);
    }
  }
  interior.assign(ops.begin(), ops.end());
  llvm::sort(interior, [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b) : a < b;
  });
}

/// Analyzes the chain ending at `root`: the match, or why there is none.
static ChainAnalysis analyzeChain(Operation *root) {
  ChainAnalysis analysis;
  if (!isPossibleRoot(root))
    return analysis;
  Value result = root->getResult(0);
  analysis.builder = std::make_shared<TensorExprBuilder>(
      cast<RankedTensorType>(result.getType()));
  TensorExprBuilder &builder = *analysis.builder;
  TensorExpr *expr = builder.evaluate(result);
  if (!expr || expr->is(Kind::Leaf) || expr->is(Kind::Const))
    return analysis;
  NormChainMatcher matcher(builder);
  std::optional<NormMatch> match = matcher.match(expr);

  // Anchors: the reductions and tanh ops the expression went through.
  llvm::SmallPtrSet<Operation *, 8> anchorSet;
  builder.forEachEvaluatedValue([&](Value value, ArrayRef<TensorExpr *> nodes) {
    Operation *op = value.getDefiningOp();
    if (!op || anchorSet.contains(op))
      return;
    if (llvm::any_of(nodes, [](TensorExpr *node) {
          return node->is(Kind::Sum) || node->is(Kind::Tanh);
        })) {
      anchorSet.insert(op);
      analysis.anchors.push_back(op);
    }
  });
  // A chain fused into one op anchors itself.
  if (analysis.anchors.empty())
    analysis.anchors.push_back(root);

  if (!match) {
    analysis.progress = matcher.getProgress();
    analysis.reason = matcher.getReason().str();
    return analysis;
  }
  analysis.progress = kChecked;
  analysis.x = builder.getMaterialization(match->x);
  if (!analysis.x) {
    analysis.reason = "the normalized input is not available as a tensor "
                      "(it is computed inside the chain's first op)";
    return analysis;
  }
  collectInterior(builder, root, *match, analysis.interior);
  Block *block = root->getBlock();
  llvm::SmallPtrSet<Operation *, 16> interiorSet(analysis.interior.begin(),
                                                 analysis.interior.end());
  for (Operation *op : analysis.interior) {
    if (op->getBlock() != block) {
      analysis.reason = "the chain spans several blocks";
      return analysis;
    }
    if (op == root)
      continue;
    for (Value value : op->getResults())
      for (Operation *user : value.getUsers()) {
        Operation *owner = block->findAncestorOpInBlock(*user);
        if (owner && interiorSet.contains(owner))
          continue;
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "an intermediate value of the chain (the result of '"
           << op->getName() << "' at " << op->getLoc()
           << ") is also used outside it";
        analysis.reason = text;
        return analysis;
      }
  }
  analysis.match = match;
  return analysis;
}

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

/// Ops created detached from the IR, inserted only once the new norm op
/// verifies.
struct DetachedOps {
  SmallVector<Operation *> ops;
  ~DetachedOps() {
    for (Operation *op : llvm::reverse(ops))
      op->erase();
  }
  template <typename OpTy>
  OpTy track(OpTy op) {
    ops.push_back(op.getOperation());
    return op;
  }
};

/// Storage type of a constant parameter: the arithmetic type when the op
/// takes it, else the input type or f32 when the value is exact there.
static Type getConstantStorageType(double value, Type arithmeticType,
                                   Type inputType) {
  if (arithmeticType == inputType || arithmeticType.isF32())
    return arithmeticType;
  if (roundToType(value, inputType) == value)
    return inputType;
  Type f32 = Float32Type::get(inputType.getContext());
  if (roundToType(value, f32) == value)
    return f32;
  return {};
}

/// Builds the tensor operand for a parameter node: the leaf value (with
/// leading unit dims collapsed away) or a splat constant.
static Value materializeParam(OpBuilder &b, Location loc, TensorExpr *p,
                              ArrayRef<int64_t> normalizedShape, bool scalar,
                              const NormMatch &m, DetachedOps &created,
                              std::optional<double> valueOverride = {}) {
  if (p && p->is(Kind::Leaf)) {
    auto type = cast<RankedTensorType>(p->value.getType());
    int64_t targetRank = scalar ? std::min<int64_t>(type.getRank(), 1)
                                : static_cast<int64_t>(normalizedShape.size());
    if (type.getRank() == targetRank)
      return p->value;
    int64_t leading = type.getRank() - targetRank;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices first;
    for (int64_t i = 0; i <= leading; ++i)
      first.push_back(i);
    groups.push_back(first);
    for (int64_t i = leading + 1; i < type.getRank(); ++i)
      groups.push_back({i});
    auto resultType = RankedTensorType::get(type.getShape().drop_front(leading),
                                            type.getElementType());
    return created
        .track(tensor::CollapseShapeOp::create(b, loc, resultType, p->value,
                                               groups))
        .getResult();
  }
  double value = valueOverride ? *valueOverride : p->constant;
  Type storage =
      getConstantStorageType(value, p ? p->type : m.paramType, m.inputType);
  if (!storage)
    return {};
  auto type = scalar ? RankedTensorType::get({}, storage)
                     : RankedTensorType::get(normalizedShape, storage);
  auto attr = DenseElementsAttr::get(
      type, b.getFloatAttr(storage, roundToType(value, storage)));
  return created.track(arith::ConstantOp::create(b, loc, attr)).getResult();
}

/// Replaces the chain ending at `root` by the norm op of `analysis`.
static LogicalResult rewriteChain(PatternRewriter &rewriter, Operation *root,
                                  ChainAnalysis &analysis) {
  const NormMatch &m = *analysis.match;
  MLIRContext *context = rewriter.getContext();
  Location loc = root->getLoc();
  OpBuilder b(context);
  DetachedOps created;
  auto xType = cast<RankedTensorType>(analysis.x.getType());
  int64_t rank = xType.getRank();
  ArrayRef<int64_t> normalizedShape = xType.getShape().drop_front(m.axis);

  // ScaleNorm's ||x|| = sqrt(N) * rms(x): the op's clamp/outside form with
  // epsilon and weight divided by sqrt(N) (epsilon by N inside the root).
  double epsilon = m.epsilon.value_or(0.0);
  std::optional<double> weightValue;
  bool scalarWeight =
      m.kind == NormKind::RMSNorm &&
      (!m.weight || m.weight->is(Kind::Const) ||
       llvm::all_of(
           cast<RankedTensorType>(m.weight->value.getType()).getShape(),
           [](int64_t s) { return s == 1; }));
  if (m.sumOfSquares) {
    double count = 1.0;
    for (int64_t size : normalizedShape)
      count *= static_cast<double>(size);
    double root = std::sqrt(count);
    epsilon = m.epsilonMode == EpsilonMode::inside_sqrt ? epsilon / count
                                                        : epsilon / root;
    weightValue = (m.weight ? m.weight->constant : 1.0) / root;
  }

  Value weight, bias, alpha;
  if (m.weight || weightValue) {
    weight = materializeParam(b, loc, m.weight, normalizedShape, scalarWeight,
                              m, created, weightValue);
    if (!weight)
      return rewriter.notifyMatchFailure(root, "weight not representable");
  }
  if (m.bias) {
    bias = materializeParam(b, loc, m.bias, normalizedShape, false, m, created);
    if (!bias)
      return rewriter.notifyMatchFailure(root, "bias not representable");
  }
  if (m.alpha) {
    alpha =
        materializeParam(b, loc, m.alpha, normalizedShape, true, m, created);
    if (!alpha)
      return rewriter.notifyMatchFailure(root, "alpha not representable");
  }

  Type computeType = m.computeType;
  Type defaultCompute =
      m.inputType.isF64() ? m.inputType : Float32Type::get(context);
  TypeAttr computeTypeAttr;
  if (computeType != m.inputType || computeType != defaultCompute)
    computeTypeAttr = TypeAttr::get(computeType);
  FloatAttr epsilonAttr = computeType.isF64()
                              ? b.getF64FloatAttr(epsilon)
                              : b.getF32FloatAttr(static_cast<float>(epsilon));
  IntegerAttr axisAttr = b.getI64IntegerAttr(m.axis - rank);
  auto castModeAttr = CastModeAttr::get(context, m.castMode);

  Operation *normOp = nullptr;
  switch (m.kind) {
  case NormKind::LayerNorm: {
    auto op = created.track(
        LayerNormOp::create(b, loc, analysis.x, weight, bias, Value()));
    op.setEpsilonAttr(epsilonAttr);
    op.setAxisAttr(axisAttr);
    op.setComputeTypeAttr(computeTypeAttr);
    op.setCastModeAttr(castModeAttr);
    normOp = op;
    break;
  }
  case NormKind::RMSNorm: {
    auto op =
        created.track(RMSNormOp::create(b, loc, analysis.x, weight, Value()));
    op.setEpsilonAttr(epsilonAttr);
    op.setEpsilonModeAttr(EpsilonModeAttr::get(context, m.epsilonMode));
    op.setWeightOffsetAttr(
        b.getF32FloatAttr(static_cast<float>(m.weightOffset)));
    op.setAxisAttr(axisAttr);
    op.setComputeTypeAttr(computeTypeAttr);
    op.setCastModeAttr(castModeAttr);
    normOp = op;
    break;
  }
  case NormKind::DyT: {
    auto op = created.track(
        DyTOp::create(b, loc, analysis.x, alpha, weight, bias, Value()));
    op.setAxisAttr(axisAttr);
    op.setComputeTypeAttr(computeTypeAttr);
    op.setCastModeAttr(castModeAttr);
    normOp = op;
    break;
  }
  }

  // The new op must verify before the IR changes.
  std::string diagnostic;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      diagnostic = diag.str();
      return success();
    });
    if (failed(mlir::verify(normOp)))
      return rewriter.notifyMatchFailure(
          root,
          "the norm op built for the chain does not verify: " + diagnostic);
  }

  rewriter.setInsertionPoint(root);
  for (Operation *op : created.ops)
    rewriter.insert(op);
  created.ops.clear();
  // Replace the root, erase the chain, then what only it used (inits,
  // constants).
  llvm::SetVector<Operation *> maybeDead;
  llvm::SmallPtrSet<Operation *, 8> erasedHere;
  auto eraseAndCollect = [&](Operation *op, function_ref<void()> erase) {
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    erasedHere.insert(op);
    erase();
    for (Value value : used)
      if (Operation *def = value.getDefiningOp())
        maybeDead.insert(def);
  };
  eraseAndCollect(root,
                  [&] { rewriter.replaceOp(root, normOp->getResult(0)); });
  for (Operation *op : llvm::reverse(analysis.interior)) {
    if (erasedHere.contains(op) || !op->use_empty())
      continue;
    eraseAndCollect(op, [&] { rewriter.eraseOp(op); });
  }
  SmallVector<Operation *> worklist(maybeDead.begin(), maybeDead.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erasedHere.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value value : op->getOperands())
      if (Operation *def = value.getDefiningOp())
        worklist.push_back(def);
    erasedHere.insert(op);
    rewriter.eraseOp(op);
  }
  return success();
}

/// Raises the normalization chain ending at the matched op. Only the
/// outermost op of a chain is rewritten: when the single user of the op
/// would end a larger chain containing it, the pattern leaves the op to it.
struct RaiseNormalizationChain : public RewritePattern {
  RaiseNormalizationChain(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isPossibleRoot(op))
      return failure();
    ChainAnalysis analysis = analyzeChain(op);
    if (!analysis.match)
      return rewriter.notifyMatchFailure(op, analysis.reason);
    Value result = op->getResult(0);
    if (result.hasOneUse()) {
      Operation *user = *result.getUsers().begin();
      ChainAnalysis outer = analyzeChain(user);
      if (outer.match && llvm::is_contained(outer.interior, op))
        return rewriter.notifyMatchFailure(op, "part of a larger chain");
    }
    return rewriteChain(rewriter, op, analysis);
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Records the ops a rewrite erases, so the driver skips them.
struct ErasedOpsListener : public RewriterBase::Listener {
  llvm::SmallPtrSet<Operation *, 32> erased;
  void notifyOperationErased(Operation *op) override { erased.insert(op); }
};

struct NormRaisePass : public norm::impl::NormRaisePassBase<NormRaisePass> {
  using NormRaisePassBase::NormRaisePassBase;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateNormRaisePatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override;

  FrozenRewritePatternSet patterns;
};

} // namespace

void mlir::norm::populateNormRaisePatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseNormalizationChain>(patterns.getContext());
}

/// Counts the norm ops of each kind under `root`.
static std::array<unsigned, 3> countNormOps(Operation *root) {
  std::array<unsigned, 3> counts{0, 0, 0};
  root->walk([&](Operation *op) {
    if (isa<LayerNormOp>(op))
      ++counts[0];
    else if (isa<RMSNormOp>(op))
      ++counts[1];
    else if (isa<DyTOp>(op))
      ++counts[2];
  });
  return counts;
}

void NormRaisePass::runOnOperation() {
  Operation *root = getOperation();
  std::array<unsigned, 3> before = countNormOps(root);

  // Chains are matched from their last op: visit ops consumers first, so
  // the outermost op of a chain is tried before the ops inside it. The
  // patterns erase the chain's ops themselves; no folding or dead-code
  // elimination touches the rest of the IR.
  SmallVector<Operation *> ops;
  for (Region &region : root->getRegions())
    region.walk([&](Operation *op) { ops.push_back(op); });
  ErasedOpsListener listener;
  PatternRewriter rewriter(&getContext());
  rewriter.setListener(&listener);
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  for (Operation *op : llvm::reverse(ops)) {
    if (listener.erased.contains(op))
      continue;
    rewriter.setInsertionPoint(op);
    (void)applicator.matchAndRewrite(op, rewriter);
  }

  std::array<unsigned, 3> after = countNormOps(root);
  numRaisedLayerNorm += after[0] - before[0];
  numRaisedRMSNorm += after[1] - before[1];
  numRaisedDyT += after[2] - before[2];

  // Declined candidates: chains whose analysis recognized a row statistic
  // (or DyT's tanh) but that are still there. Each reduction or tanh op is
  // attributed to the root whose analysis got furthest (the first on a
  // tie), and each such root is one candidate.
  struct Attribution {
    int progress = kNothing;
    Operation *root = nullptr;
  };
  llvm::MapVector<Operation *, Attribution> anchors;
  llvm::MapVector<Operation *, ChainAnalysis> analyses;
  SmallVector<Operation *> roots;
  for (Region &region : root->getRegions())
    region.walk([&](Operation *op) {
      if (isPossibleRoot(op))
        roots.push_back(op);
    });
  for (Operation *op : roots) {
    ChainAnalysis analysis = analyzeChain(op);
    if (analysis.progress < kStatistic)
      continue;
    bool best = false;
    for (Operation *anchor : analysis.anchors) {
      Attribution &entry = anchors[anchor];
      if (analysis.progress > entry.progress) {
        entry = {analysis.progress, op};
        best = true;
      }
    }
    if (best)
      analyses[op] = std::move(analysis);
  }
  SmallVector<Operation *> declined;
  llvm::SmallPtrSet<Operation *, 8> declinedSet;
  for (auto &[anchor, entry] : anchors)
    if (entry.root && declinedSet.insert(entry.root).second)
      declined.push_back(entry.root);
  llvm::sort(declined.begin(), declined.end(), [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b) : a < b;
  });
  for (Operation *op : declined) {
    ++numDeclined;
    if (remarks) {
      const ChainAnalysis &analysis = analyses[op];
      op->emitRemark("normalization not raised: ")
          << (analysis.match ? std::string("the chain matched but could not "
                                           "be rewritten")
                             : analysis.reason);
    }
  }
}
