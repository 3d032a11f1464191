//===- RaiseMatcher.h - Match TensorExprs against the norm ops --*- C++ -*-===//
//
// The matcher of norm-raise: reads the element-level expression of a
// candidate chain (TensorExpr.h) as LayerNorm, RMSNorm or DyT with exactly
// the semantics of DESIGN section 2, binding the input, the parameters and
// every attribute, or says how far it got and why it stopped.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEMATCHER_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEMATCHER_H

#include "TensorExpr.h"

#include "norm/Dialect/Norm/IR/NormOps.h"

#include <optional>
#include <string>

namespace mlir {
namespace norm {

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
  /// The row statistics as the chain computes them (`return_stats`): the
  /// mean (LayerNorm), and the factor `rstd` itself or, when the chain
  /// divides, what it divides by (`rstdDivisor`: sqrt(var + eps), or RMSNorm's
  /// denominator), whose reciprocal is the factor.
  TensorExpr *mean = nullptr, *rstd = nullptr, *rstdDivisor = nullptr;
  /// The mean the variance is centered on (LayerNorm; torch-mlir's is an
  /// f64 mean beside the f32 one the chain subtracts).
  TensorExpr *varianceMean = nullptr;
  /// The tensors whose dynamic sizes give N where the chain divides by it.
  SmallVector<Value, 1> countTensors;
};

/// Bit width of an integer or float type.
inline unsigned getWidth(Type type) { return type.getIntOrFloatBitWidth(); }

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
  bool matchMean(TensorExpr *e, TensorExpr *&summand, uint64_t &dims,
                 NormMatch &m);
  bool matchEpsilonAdd(TensorExpr *e, TensorExpr *&stat, NormMatch &m);
  bool matchEpsilonOrNone(TensorExpr *e, TensorExpr *&stat, NormMatch &m);
  bool bindInput(TensorExpr *xc, NormMatch &m);
  bool setDims(uint64_t dims, NormMatch &m);
  bool finish(NormMatch &m);
  /// True when `tensor` has x's elements in the frame's dims, so that its
  /// sizes count x's elements (a count read with `tensor.dim`).
  bool isInputShaped(Value tensor, const NormMatch &m);
  bool checkParam(TensorExpr *p, StringRef name, bool allowScalar,
                  bool scalarOnly, NormMatch &m);
  std::optional<int64_t> getParamAxis(TensorExpr *p);

  TensorExprBuilder &builder;
  int64_t rank;
  int bestProgress = kNothing;
  std::string bestReason = "not a normalization";
};

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEMATCHER_H
