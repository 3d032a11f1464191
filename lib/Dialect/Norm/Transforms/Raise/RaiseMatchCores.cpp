//===- RaiseMatchCores.cpp - The normalized cores of the norm ops ---------===//
//
// The norm-raise matcher's reading of the normalized value `n` (what the
// epilogue scales and shifts): LayerNorm's `(x - mean) * rstd`, RMSNorm's
// `x * r` in each epsilon mode (ScaleNorm's root sum of squares included)
// and DyT's `tanh(alpha * x)`, each in the forms frontends spell them.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatcher.h"

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

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
  } else if (!matchMean(ms, square, dims, m)) {
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

/// The (value, scale) readings of a normalized node: both operand orders of
/// a product, the numerator and denominator of a quotient, none otherwise.
static SmallVector<std::pair<TensorExpr *, TensorExpr *>, 2>
valueScaleSplits(TensorExpr *n) {
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 2> splits;
  if (n->is(Kind::Mul)) {
    splits.push_back({n->getOperand(0), n->getOperand(1)});
    splits.push_back({n->getOperand(1), n->getOperand(0)});
  } else if (n->is(Kind::Div)) {
    splits.push_back({n->getOperand(0), n->getOperand(1)});
  }
  return splits;
}

bool NormChainMatcher::matchRMSNorm(TensorExpr *n, NormMatch &m) {
  m.kind = NormKind::RMSNorm;
  // x * r, r * x, x / denominator.
  bool divides = n->is(Kind::Div);
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 2> splits =
      valueScaleSplits(n);
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
    (divides ? attempt.rstdDivisor : attempt.rstd) = scale;
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
  if (!matchMean(variance, square, dims, m))
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
  if (!matchMean(centered->getOperand(1), meanSummand, meanDims, m))
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
  m.varianceMean = centered->getOperand(1);
  return setDims(dims, m) && setDims(meanDims, m);
}

bool NormChainMatcher::matchLayerNorm(TensorExpr *n, NormMatch &m) {
  m.kind = NormKind::LayerNorm;
  // (x - mean) * rstd, rstd * (x - mean), (x - mean) / sqrt(var + eps).
  bool divides = n->is(Kind::Div);
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 2> splits =
      valueScaleSplits(n);
  for (auto [centered, scale] : splits) {
    if (!centered->is(Kind::Sub) || !scale->containsSum)
      continue;
    reach(kShape);
    NormMatch attempt = m;
    TensorExpr *summand;
    uint64_t dims;
    if (!matchMean(centered->getOperand(1), summand, dims, attempt))
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
    attempt.mean = centered->getOperand(1);
    (divides ? attempt.rstdDivisor : attempt.rstd) = scale;
    m = attempt;
    return true;
  }
  return false;
}
