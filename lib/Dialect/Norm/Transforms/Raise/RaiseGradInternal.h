//===- RaiseGradInternal.h - Parts of the gradient raise -------*- C++ -*-===//
//
// What the parts of the gradient raise share: the numeric evaluator of
// expressions (RaiseGradNumeric.cpp), the roles and the matcher that assigns
// them (RaiseGradMatch.cpp), and the rewrite to the gradient op
// (RaiseGradRewrite.cpp). RaiseGrad.cpp drives them over a function.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEGRADINTERNAL_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEGRADINTERNAL_H

#include "TensorExpr.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace mlir {
namespace norm {
namespace raisegrad {

using Kind = TensorExprKind;

//===----------------------------------------------------------------------===//
// Numeric evaluation (RaiseGradNumeric.cpp)
//===----------------------------------------------------------------------===//

/// A value computed in f64 with a bound on its rounding error: the error is
/// at most `2^-52 * scale` (to first order), however the expression groups
/// and orders its terms.
struct Sample {
  double value;
  double scale;
};

/// The number of pseudo-random fillings of the leaves (see
/// NumericEvaluator) a numeric identity is checked with.
constexpr uint64_t kNumFillings = 4;

/// Evaluates expressions of one frame in f64 at given elements, with every
/// leaf element a pseudo-random value drawn from (tensor, access, coordinates,
/// seed), conversions exact and sums over the frame's sizes (the leading dims
/// clamped to 3: the formulas do not depend on them). The seed modulo
/// kNumFillings picks how the values are spread: both signs with magnitudes
/// in [0.5, 2); both signs over [1e-3, 1e3]; positive in [3, 1e3]; both signs
/// in [1e-3, 0.1]. So what equals a leaf on positive values only (`|x|`,
/// `max(x, 0)`) or within a range (`min(x, 2)`, `max(s, 1)`) does not pass.
class NumericEvaluator {
public:
  NumericEvaluator(ArrayRef<int64_t> sizes, uint64_t seed)
      : sizes(sizes), seed(seed) {}

  Sample eval(TensorExpr *e, SmallVectorImpl<int64_t> &coords);

private:
  double leaf(TensorExpr *e, ArrayRef<int64_t> coords) const;
  Sample reduce(TensorExpr *e, SmallVectorImpl<int64_t> &coords);
  Sample compute(TensorExpr *e, SmallVectorImpl<int64_t> &coords);

  SmallVector<int64_t> sizes;
  uint64_t seed;
  std::map<std::pair<TensorExpr *, SmallVector<int64_t>>, Sample> memo;
};

/// True when `a` less the sum of `aLess` and `b` are finite and agree at
/// every point, within the bound of their f64 rounding errors: they are one
/// formula grouped and ordered differently.
bool agree(NumericEvaluator &evaluator, TensorExpr *a,
           ArrayRef<TensorExpr *> aLess, TensorExpr *b,
           ArrayRef<SmallVector<int64_t>> points);

/// Sample elements of a frame of `sizes` whose normalized dims start at
/// `axis` (see RaiseGradNumeric.cpp). With `firstRow`, the leading
/// coordinates are all 0.
SmallVector<SmallVector<int64_t>> getSamplePoints(ArrayRef<int64_t> sizes,
                                                  int64_t axis, bool firstRow);

//===----------------------------------------------------------------------===//
// Roles and matching (RaiseGradMatch.cpp)
//===----------------------------------------------------------------------===//

enum class GradKind { LayerNorm, RMSNorm, DyT };

/// The access of a parameter-shaped value from the frame of dx: the
/// normalized dims (`[N...]` or `[1..., N...]`), or none (a scalar). With
/// `compatible`, the normalized sizes may differ from the frame's where one
/// of them is dynamic.
AffineMap getParamAccess(RankedTensorType type, int64_t axis,
                         ArrayRef<int64_t> frame, bool scalar,
                         bool compatible = false);

/// The roles found for a candidate `dx`.
struct GradMatch {
  GradKind kind = GradKind::RMSNorm;
  TensorExpr *dy = nullptr, *x = nullptr, *mean = nullptr, *rstd = nullptr,
             *weight = nullptr, *alpha = nullptr;
  /// Tensors added to the gradient as they are (the residual path's dy, and
  /// gradients of x reaching it on other paths), in the order met.
  SmallVector<TensorExpr *, 2> extras;
  /// RMSNorm: the constant added to the weight (Gemma's `1 + w`).
  double weightOffset = 0.0;
  /// LayerNorm and RMSNorm: `x` is the normalized input `(x - mean) * rstd`
  /// or `x * rstd` (no mean role). The gradient is then that of the op
  /// with mean 0 and rstd 1, times rstd.
  bool normalizedInput = false;
  /// With `normalizedInput`: the row value read is rstd divided by this
  /// (1, or N where the forward saved `rstd / N`).
  double rstdDivisor = 1.0;
  int64_t axis = 0;
  uint64_t normalizedMask = 0;
  /// The expressions of dweight, dbias and dalpha in the frame of dx.
  TensorExpr *dweight = nullptr, *dbias = nullptr, *dalpha = nullptr;
  /// The values of dy and x (a leaf's tensor, or a value the function
  /// materializes).
  Value dyValue, xValue;
};

/// Everything reachable from `root`, operands first.
/// With `opaque`, the nodes it accepts are collected but not looked into.
void collectNodes(TensorExpr *root, SmallVectorImpl<TensorExpr *> &out,
                  function_ref<bool(TensorExpr *)> opaque = nullptr);

/// True when `e` reads nothing but the roles of `m` and `extras`: walking it
/// down to them, it meets no other leaf (a tensor read another way, a
/// scalar), no clamp, absolute value or rounding (to an integer, or to a
/// type narrower than dy's), and its element counts are N's: they count
/// normalized dims of dy or x, or dims whose static sizes are the frame's,
/// exactly in their type.
bool readsOnlyRoles(TensorExpr *e, const GradMatch &m,
                    ArrayRef<TensorExpr *> extras, ArrayRef<int64_t> frame);

/// Finds the gradient formula that `root` computes, trying every
/// assignment of roles to its leaves.
class GradMatcher {
public:
  GradMatcher(TensorExprBuilder &builder, const TensorExprEvaluation &root)
      : builder(builder), root(root), rank(builder.getRank()) {}

  std::optional<GradMatch> match();

  /// Materialized row-shaped values (`[leading..., 1...]` or
  /// `[leading...]`) met while evaluating the root, with their accesses.
  struct RowEntry {
    TensorExpr *expr;
    Value value;
    AffineMap map;
  };
  SmallVector<RowEntry> rowEntries;
  /// The row values among them read as rows (the leading dims as they are,
  /// see getRowMap) for the normalized dims last tried, by expression.
  DenseMap<TensorExpr *, Value> rowValues;
  /// Materialized values of the root's shape, by expression.
  DenseMap<TensorExpr *, Value> fullValues;

  /// Whether the root reads like a norm gradient (set by match(), whatever
  /// its result): a row sum of the product of two different tensors of its
  /// shape (`Sum(g * xh)`), or DyT's `tanh(alpha * v)` times a tensor of
  /// its shape that the tanh does not read. Then `anchors` holds its row
  /// sums and tanh nodes, and `reason` why no formula matched.
  bool isCandidate = false;
  SmallVector<TensorExpr *> anchors;
  std::string reason;
  /// When set, the memo of isSumOfTensors, shared by the matchers of one
  /// builder (the residual stream's sums are met by every candidate after
  /// them).
  DenseMap<TensorExpr *, bool> *sumOfTensorsMemo = nullptr;

private:
  /// The leaves and values the roles are taken from.
  struct Candidates {
    /// Leaves of the frame read as is, and materialized sums of such: dy,
    /// x, tensors added to dx.
    SmallVector<TensorExpr *> full;
    /// Other tensor leaves: of some frame dims (weights), of none (alpha).
    SmallVector<TensorExpr *> params, scalars;
    /// What may be x: `full` and values the function materializes.
    SmallVector<TensorExpr *> inputs;
    /// Terms of the top-level sum added to dx as they are.
    SmallVector<TensorExpr *, 2> added;
    /// The dims of the row sums (0 without); whether a tanh occurs.
    uint64_t sumMask = 0;
    bool hasTanh = false;
  };

  /// True for a leaf of the frame read as is, or a sum of such. Memoized
  /// per node.
  bool isSumOfTensors(TensorExpr *e);
  /// True for a sum of tensors (isSumOfTensors, not a leaf) that the
  /// function materializes: read whole, as one tensor, by the roles.
  bool isMaterializedSum(TensorExpr *e);
  /// The root less the terms of its top-level sum added to dx as they are
  /// (into `added`); null when nothing is left.
  TensorExpr *splitAddedTerms(SmallVectorImpl<TensorExpr *> &added);
  /// Sorts the leaves and materialized sums of `nodes` (other than `core`)
  /// into `c` and finds what may be x; false (with a reason) when they are
  /// too many or too few.
  bool collectCandidates(ArrayRef<TensorExpr *> nodes, TensorExpr *core,
                         Candidates &c);
  /// Tries the role assignments with the normalized dims `mask`.
  std::optional<GradMatch> matchNormalizedDims(uint64_t mask,
                                               const Candidates &c);
  /// Tries the kinds, alpha and the statistics `rows` for `m`'s dy, x and
  /// weight.
  bool tryKinds(GradMatch &m, const Candidates &c, ArrayRef<TensorExpr *> rows,
                ArrayRef<TensorExpr *> alphas);
  bool decline(const Twine &why) {
    reason = why.str();
    return false;
  }
  void classify(ArrayRef<TensorExpr *> nodes, bool hasTanh);
  bool tryRoles(GradMatch &m);
  TensorExpr *formula(const GradMatch &m);
  /// What dx is scaled by: rstd.
  TensorExpr *scaleOf(const GradMatch &m);
  /// True for `[leading...]` or `[leading..., 1...]` (leading: the frame's
  /// dims before `axis`).
  bool isRowValue(Type type, int64_t axis) const {
    auto ranked = cast<RankedTensorType>(type);
    ArrayRef<int64_t> frame = builder.getFrameShape();
    if (ranked.getRank() != axis && ranked.getRank() != rank)
      return false;
    for (int64_t i = 0; i < ranked.getRank(); ++i)
      if (ranked.getDimSize(i) != (i < axis ? frame[i] : 1))
        return false;
    return true;
  }
  /// The access of a row value of `type` as rows: leading dim `i` of the
  /// frame to its dim `i`, its other dims 0.
  AffineMap getRowMap(RankedTensorType type, int64_t axis) const {
    MLIRContext *context = builder.getContext();
    SmallVector<AffineExpr> results;
    for (int64_t i = 0; i < type.getRank(); ++i)
      results.push_back(i < axis ? getAffineDimExpr(i, context)
                                 : getAffineConstantExpr(0, context));
    return builder.normalizeMap(AffineMap::get(rank, 0, results, context),
                                type.getShape());
  }
  /// True for a leaf read as a parameter of the normalized dims (`scalar`:
  /// as alpha): a tensor of those dims (or of one element) through
  /// getParamAccess.
  bool isParamRead(TensorExpr *leaf, int64_t axis, bool scalar) const {
    auto type = cast<RankedTensorType>(leaf->value.getType());
    AffineMap access = getParamAccess(type, axis, builder.getFrameShape(),
                                      scalar, /*compatible=*/true);
    return access && leaf->map == builder.normalizeMap(access, type.getShape());
  }
  /// The formula's constants are exact: N need not be a value of dy's type.
  TensorExpr *constant(double value, TensorExpr *) {
    return builder.getConst(value, Float64Type::get(builder.getContext()));
  }

  DenseMap<TensorExpr *, bool> localSumOfTensorsMemo;
  TensorExprBuilder &builder;
  const TensorExprEvaluation &root;
  int64_t rank;
  double count = 1.0;
  SmallVector<SmallVector<int64_t>> points;
  std::unique_ptr<NumericEvaluator> evaluators[kNumFillings];
  /// The sets of tensors to take from the expression before comparing it
  /// with the formula: none, each tensor added as is, all of them.
  SmallVector<SmallVector<TensorExpr *, 2>> targets;
};

/// A value of the block that computes a parameter gradient.
struct ParamGrad {
  Value value;
  /// 0: dweight, 1: dbias, 2: dalpha.
  unsigned index;
};

/// The values of `rootOp`'s block that compute the parameter gradients of
/// `m` (dweight, dbias, dalpha; the last value of a reshape chain first).
SmallVector<ParamGrad> findParamGrads(TensorExprBuilder &builder,
                                      const GradMatch &m, Operation *rootOp);

//===----------------------------------------------------------------------===//
// Rewrite (RaiseGradRewrite.cpp)
//===----------------------------------------------------------------------===//

/// dy and x of `m`, when their types are `rootOp`'s result type, or differ
/// from it only in dynamic sizes.
std::optional<std::pair<Value, Value>>
getInputs(Operation *rootOp, const GradMatch &m, const GradMatcher &matcher);

/// Replaces the gradient `m` that `rootOp` computes (dx, from `dy` and `x`)
/// and `paramGrads` by a gradient op, and erases the ops of `chainOps`, the
/// root and the values replaced that are left unused (and what only they
/// used), calling `forget` before erasing each op. Returns false, with the
/// IR unchanged, when an operand is not defined where the op goes, cannot
/// be adapted to it, or the op does not verify.
bool rewriteGradient(Operation *rootOp, const GradMatch &m,
                     const GradMatcher &matcher, Value dy, Value x,
                     ArrayRef<ParamGrad> paramGrads,
                     const SmallPtrSetImpl<Operation *> &chainOps,
                     function_ref<void(Operation *)> forget);

} // namespace raisegrad
} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEGRADINTERNAL_H
