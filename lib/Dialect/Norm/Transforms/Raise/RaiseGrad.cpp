//===- RaiseGrad.cpp - Raise decomposed norm gradients --------------------===//
//
// A candidate `dx` is read as an element-level expression (TensorExpr.h).
// Its leaves are given roles, each read through its own access (dy and x:
// tensors of x's shape read as is; the statistics: tensors of the leading
// dims that the backward reads or computes, read as rows; weight: a tensor
// of the normalized dims, read in order; alpha: a one-element tensor), the
// expression must read nothing else, and it is compared with the gradient
// formula of DESIGN section 2b built from those roles. The comparison
// evaluates both expressions numerically, in f64 with every conversion
// taken as exact, at sample elements of several rows for pseudo-random
// fillings of the leaves of both signs and many magnitudes: autograd and
// the decompositions order and group the terms in many ways (DESIGN 2b
// allows the raise to reassociate them), so equal values, not equal trees,
// decide.
// The sums of the parameter gradients are found the same way among the
// values of the block. A sum of `dx` and tensors read as is (the residual
// path's gradient, gradients of x from other paths, added by autograd)
// keeps those tensors as adds.
//
//===----------------------------------------------------------------------===//

#include "RaiseGrad.h"
#include "RaiseMatcher.h"
#include "TensorExpr.h"

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

namespace {

//===----------------------------------------------------------------------===//
// Numeric evaluation
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

double NumericEvaluator::leaf(TensorExpr *e, ArrayRef<int64_t> coords) const {
  llvm::hash_code h = llvm::hash_combine(e->value.getAsOpaquePointer(), seed);
  if (e->map)
    for (AffineExpr result : e->map.getResults())
      h = llvm::hash_combine(
          h, isa<AffineDimExpr>(result)
                 ? coords[cast<AffineDimExpr>(result).getPosition()]
                 : int64_t(-1));
  uint64_t bits = static_cast<uint64_t>(static_cast<size_t>(h));
  bits ^= bits >> 33;
  bits *= 0xff51afd7ed558ccdULL;
  bits ^= bits >> 33;
  double sign = (bits & 1) ? -1.0 : 1.0;
  double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;
  switch (seed % kNumFillings) {
  case 0:
    return sign * (0.5 + 1.5 * unit);
  case 1:
    return sign * std::pow(10.0, 6.0 * unit - 3.0);
  case 2:
    return 3.0 * std::pow(10.0, 2.5 * unit);
  default:
    return sign * std::pow(10.0, 2.0 * unit - 3.0);
  }
}

Sample NumericEvaluator::reduce(TensorExpr *e,
                                SmallVectorImpl<int64_t> &coords) {
  SmallVector<unsigned> dims;
  for (unsigned d = 0; d < coords.size(); ++d)
    if (e->reducedDims >> d & 1)
      dims.push_back(d);
  bool isSum = e->is(Kind::Sum);
  Sample acc{isSum ? 0.0 : -INFINITY, 0.0};
  // An empty dim: nothing to reduce.
  for (unsigned d : dims)
    if (sizes[d] <= 0)
      return acc;
  SmallVector<int64_t> saved(coords.begin(), coords.end());
  for (unsigned d : dims)
    coords[d] = 0;
  double count = 0.0, magnitude = 0.0;
  while (true) {
    Sample v = eval(e->getOperand(0), coords);
    if (isSum) {
      acc.value += v.value;
      acc.scale += v.scale;
      magnitude += std::fabs(v.value);
      count += 1.0;
    } else {
      acc.value = std::fmax(acc.value, v.value);
      acc.scale = std::max(acc.scale, v.scale);
    }
    unsigned i = 0;
    for (; i < dims.size(); ++i) {
      if (++coords[dims[i]] < sizes[dims[i]])
        break;
      coords[dims[i]] = 0;
    }
    if (i == dims.size())
      break;
  }
  coords.assign(saved.begin(), saved.end());
  // Each addition of a sum in any order rounds once.
  acc.scale += count * magnitude;
  return acc;
}

Sample NumericEvaluator::eval(TensorExpr *e, SmallVectorImpl<int64_t> &coords) {
  SmallVector<int64_t> key(coords.size(), -1);
  for (unsigned d = 0; d < coords.size(); ++d)
    if (e->deps >> d & 1)
      key[d] = coords[d];
  auto memoKey = std::make_pair(e, key);
  auto it = memo.find(memoKey);
  if (it != memo.end())
    return it->second;
  Sample r = compute(e, coords);
  memo[memoKey] = r;
  return r;
}

Sample NumericEvaluator::compute(TensorExpr *e,
                                 SmallVectorImpl<int64_t> &coords) {
  auto operand = [&](unsigned i) { return eval(e->getOperand(i), coords); };
  // The error of a result: what the operands' errors become through the op
  // (first order), plus one rounding of the result.
  auto result = [](double value, double propagated) {
    return Sample{value, propagated + std::fabs(value)};
  };
  switch (e->kind) {
  case Kind::Leaf: {
    double v = leaf(e, coords);
    return {v, 0.0};
  }
  case Kind::Const:
    return {e->constant, 0.0};
  case Kind::DimSize: {
    double n = 1.0;
    for (unsigned d = 0; d < sizes.size(); ++d)
      if (e->reducedDims >> d & 1)
        n *= static_cast<double>(sizes[d]);
    return {n, 0.0};
  }
  case Kind::Acc:
    return {NAN, 0.0};
  case Kind::Add:
  case Kind::Sub: {
    Sample a = operand(0), b = operand(1);
    return result(e->is(Kind::Add) ? a.value + b.value : a.value - b.value,
                  a.scale + b.scale);
  }
  case Kind::Mul: {
    Sample a = operand(0), b = operand(1);
    return result(a.value * b.value, std::fabs(a.value) * b.scale +
                                         std::fabs(b.value) * a.scale);
  }
  case Kind::Div: {
    Sample a = operand(0), b = operand(1);
    double q = a.value / b.value;
    return result(q, (a.scale + std::fabs(q) * b.scale) / std::fabs(b.value));
  }
  case Kind::Max:
  case Kind::Min: {
    Sample a = operand(0), b = operand(1);
    return {e->is(Kind::Max) ? std::fmax(a.value, b.value)
                             : std::fmin(a.value, b.value),
            std::max(a.scale, b.scale)};
  }
  case Kind::Neg: {
    Sample a = operand(0);
    return {-a.value, a.scale};
  }
  case Kind::Abs: {
    Sample a = operand(0);
    return {std::fabs(a.value), a.scale};
  }
  case Kind::Sqrt: {
    Sample a = operand(0);
    double r = std::sqrt(a.value);
    return result(r, a.scale / (2.0 * r));
  }
  case Kind::Rsqrt: {
    Sample a = operand(0);
    double r = 1.0 / std::sqrt(a.value);
    return result(r, a.scale * r / (2.0 * std::fabs(a.value)));
  }
  case Kind::Recip: {
    Sample a = operand(0);
    double r = 1.0 / a.value;
    return result(r, a.scale * r * r);
  }
  case Kind::Tanh: {
    Sample a = operand(0);
    double r = std::tanh(a.value);
    return result(r, a.scale * (1.0 - r * r));
  }
  case Kind::Exp: {
    Sample a = operand(0);
    double r = std::exp(a.value);
    return result(r, a.scale * r);
  }
  case Kind::Pow: {
    Sample a = operand(0);
    double r = std::pow(a.value, e->constant);
    return result(r, a.scale * std::fabs(e->constant * r / a.value));
  }
  case Kind::RoundEven: {
    Sample a = operand(0);
    return {std::nearbyint(a.value), a.scale};
  }
  case Kind::Cast:
    return operand(0);
  case Kind::FPToSI: {
    Sample a = operand(0);
    return {std::trunc(a.value), a.scale};
  }
  case Kind::Sum:
  case Kind::ReduceMax:
    return reduce(e, coords);
  }
  return {NAN, 0.0};
}

/// True when `a` less the sum of `aLess` and `b` are finite and agree at
/// every point, within the bound of their f64 rounding errors: they are one
/// formula grouped and ordered differently.
static bool agree(NumericEvaluator &evaluator, TensorExpr *a,
                  ArrayRef<TensorExpr *> aLess, TensorExpr *b,
                  ArrayRef<SmallVector<int64_t>> points) {
  for (const SmallVector<int64_t> &point : points) {
    SmallVector<int64_t> coords(point);
    Sample va = evaluator.eval(a, coords);
    for (TensorExpr *less : aLess) {
      Sample v = evaluator.eval(less, coords);
      va.value -= v.value;
      va.scale += v.scale + std::fabs(va.value);
    }
    Sample vb = evaluator.eval(b, coords);
    if (!std::isfinite(va.value) || !std::isfinite(vb.value) ||
        !std::isfinite(va.scale) || !std::isfinite(vb.scale))
      return false;
    // 2^-52 per unit of scale, with a margin of 2^8 for the second-order
    // terms the bound leaves out.
    if (std::fabs(va.value - vb.value) > 0x1.0p-44 * (va.scale + vb.scale))
      return false;
  }
  return true;
}

/// Sample elements of a frame of `sizes` whose normalized dims start at
/// `axis`: corners, and pseudo-random elements whose leading coordinates
/// differ from one another (so that reading a row through a map that mixes
/// or repeats the leading dims is not mistaken for reading it as is), as do
/// their normalized coordinates. With `firstRow`, the leading coordinates
/// are all 0.
static SmallVector<SmallVector<int64_t>>
getSamplePoints(ArrayRef<int64_t> sizes, int64_t axis, bool firstRow) {
  int64_t rank = sizes.size();
  SmallVector<SmallVector<int64_t>> points;
  auto add = [&](SmallVector<int64_t> point) {
    for (int64_t d = 0; d < rank; ++d) {
      if (sizes[d] <= 0)
        return;
      point[d] = ((point[d] % sizes[d]) + sizes[d]) % sizes[d];
      if (firstRow && d < axis)
        point[d] = 0;
    }
    if (!llvm::is_contained(points, point))
      points.push_back(point);
  };
  add(SmallVector<int64_t>(rank, 0));
  add(SmallVector<int64_t>(rank, -1));
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 8; ++i) {
    SmallVector<int64_t> point(rank);
    for (int64_t d = 0; d < rank; ++d) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      // Leading dims: each point its own mix of coordinates.
      point[d] = d < axis ? static_cast<int64_t>((i + d * (i + 1)) % 3)
                          : static_cast<int64_t>(state >> 33);
    }
    add(point);
  }
  return points;
}

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

enum class GradKind { LayerNorm, RMSNorm, DyT };

/// The access of a parameter-shaped value from the frame of dx: the
/// normalized dims (`[N...]` or `[1..., N...]`), or none (a scalar). With
/// `compatible`, the normalized sizes may differ from the frame's where one
/// of them is dynamic.
static AffineMap getParamAccess(RankedTensorType type, int64_t axis,
                                ArrayRef<int64_t> frame, bool scalar,
                                bool compatible = false) {
  MLIRContext *context = type.getContext();
  int64_t rank = frame.size();
  SmallVector<AffineExpr> results;
  AffineExpr zero = getAffineConstantExpr(0, context);
  if (scalar) {
    if (!llvm::all_of(type.getShape(), [](int64_t s) { return s == 1; }))
      return {};
    results.assign(type.getRank(), zero);
    return AffineMap::get(rank, 0, results, context);
  }
  int64_t numNormalized = rank - axis;
  int64_t lead = type.getRank() - numNormalized;
  if (lead < 0)
    return {};
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i < lead) {
      if (type.getDimSize(i) != 1)
        return {};
      results.push_back(zero);
      continue;
    }
    int64_t size = type.getDimSize(i), frameSize = frame[axis + i - lead];
    if (size != frameSize &&
        !(compatible &&
          (ShapedType::isDynamic(size) || ShapedType::isDynamic(frameSize))))
      return {};
    results.push_back(getAffineDimExpr(axis + i - lead, context));
  }
  return AffineMap::get(rank, 0, results, context);
}


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
static void collectNodes(TensorExpr *root, SmallVectorImpl<TensorExpr *> &out,
                         function_ref<bool(TensorExpr *)> opaque = nullptr) {
  llvm::SmallPtrSet<TensorExpr *, 32> seen;
  SmallVector<std::pair<TensorExpr *, unsigned>> stack{{root, 0}};
  seen.insert(root);
  while (!stack.empty()) {
    auto &[node, next] = stack.back();
    if (next < node->operands.size() && !(opaque && opaque(node))) {
      TensorExpr *operand = node->operands[next++];
      if (seen.insert(operand).second)
        stack.push_back({operand, 0});
      continue;
    }
    out.push_back(node);
    stack.pop_back();
  }
}

static bool containsNode(TensorExpr *e, TensorExpr *target) {
  SmallVector<TensorExpr *> nodes;
  collectNodes(e, nodes);
  return llvm::is_contained(nodes, target);
}

/// True for an element count that `m`'s gradient may take as (a factor of)
/// N: it counts normalized dims of dy or x, or dims whose static sizes are
/// the frame's, and its type holds the count exactly.
static bool isNormalizedCount(TensorExpr *count, const GradMatch &m,
                              ArrayRef<int64_t> frame) {
  uint64_t dims = count->reducedDims;
  if (!dims || (dims & ~m.normalizedMask))
    return false;
  bool ofInput = count->value == m.dyValue || count->value == m.xValue;
  auto type = dyn_cast<RankedTensorType>(count->value.getType());
  if (!type || type.getRank() != static_cast<int64_t>(frame.size()))
    return false;
  double n = 1.0;
  for (unsigned d = 0; d < frame.size(); ++d) {
    if (!(dims >> d & 1))
      continue;
    if (ShapedType::isDynamic(frame[d]) ||
        (!ofInput && type.getDimSize(d) != frame[d]))
      return false;
    n *= static_cast<double>(frame[d]);
  }
  return !isa<FloatType>(count->type) || roundToType(n, count->type) == n;
}

/// True when `e` reads nothing but the roles of `m` and `extras`: walking it
/// down to them, it meets no other leaf (a tensor read another way, a
/// scalar), and its element counts are N's (see isNormalizedCount).
static bool readsOnlyRoles(TensorExpr *e, const GradMatch &m,
                           ArrayRef<TensorExpr *> extras,
                           ArrayRef<int64_t> frame) {
  SmallPtrSet<TensorExpr *, 8> roles(extras.begin(), extras.end());
  for (TensorExpr *role : {m.dy, m.x, m.mean, m.rstd, m.weight, m.alpha})
    if (role)
      roles.insert(role);
  SmallVector<TensorExpr *> nodes;
  collectNodes(e, nodes,
               [&](TensorExpr *node) { return roles.contains(node); });
  return llvm::all_of(nodes, [&](TensorExpr *node) {
    if (roles.contains(node))
      return true;
    if (node->is(Kind::Leaf) || node->is(Kind::Acc))
      return false;
    return !node->is(Kind::DimSize) || isNormalizedCount(node, m, frame);
  });
}

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

private:
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
    return access &&
           leaf->map == builder.normalizeMap(access, type.getShape());
  }
  /// The formula's constants are exact: N need not be a value of dy's type.
  TensorExpr *constant(double value, TensorExpr *) {
    return builder.getConst(value, Float64Type::get(builder.getContext()));
  }

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

/// The leaves of `e` of the full frame read as is.
static void collectFullLeaves(TensorExpr *e, uint64_t fullMask,
                              SmallPtrSetImpl<TensorExpr *> &out) {
  SmallVector<TensorExpr *> nodes;
  collectNodes(e, nodes);
  for (TensorExpr *node : nodes)
    if (node->is(Kind::Leaf) && node->deps == fullMask)
      out.insert(node);
}

void GradMatcher::classify(ArrayRef<TensorExpr *> nodes, bool hasTanh) {
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  auto differentTensors = [&](TensorExpr *a, TensorExpr *b) {
    if (a == b || a->deps != fullMask || b->deps != fullMask)
      return false;
    SmallPtrSet<TensorExpr *, 4> la, lb;
    collectFullLeaves(a, fullMask, la);
    collectFullLeaves(b, fullMask, lb);
    return !la.empty() && !lb.empty() && la != lb;
  };
  anchors.clear();
  isCandidate = false;
  for (TensorExpr *node : nodes) {
    if (node->is(Kind::Sum)) {
      anchors.push_back(node);
      SmallVector<TensorExpr *> factors, pending{node->getOperand(0)};
      while (!pending.empty()) {
        TensorExpr *factor = pending.pop_back_val();
        if (factor->is(Kind::Mul))
          pending.append(factor->operands.begin(), factor->operands.end());
        else
          factors.push_back(factor);
      }
      for (size_t i = 0; i < factors.size() && !isCandidate; ++i)
        for (size_t j = i + 1; j < factors.size() && !isCandidate; ++j)
          isCandidate = differentTensors(factors[i], factors[j]);
    } else if (node->is(Kind::Tanh)) {
      anchors.push_back(node);
    } else if (node->is(Kind::Mul) && !isCandidate && hasTanh) {
      // DyT: tanh(alpha * v) (alpha a scalar tensor) times a tensor the
      // tanh does not read.
      for (unsigned i = 0; i < 2 && !isCandidate; ++i) {
        TensorExpr *t = node->getOperand(i), *other = node->getOperand(1 - i);
        SmallVector<TensorExpr *> inner;
        collectNodes(t, inner);
        for (TensorExpr *tanh : inner) {
          if (!tanh->is(Kind::Tanh) || !tanh->getOperand(0)->is(Kind::Mul))
            continue;
          TensorExpr *arg = tanh->getOperand(0);
          bool scalarAlpha = llvm::any_of(arg->operands, [](TensorExpr *a) {
            return a->is(Kind::Leaf) && a->deps == 0;
          });
          if (scalarAlpha && differentTensors(arg, other)) {
            isCandidate = true;
            break;
          }
        }
      }
    }
  }
  llvm::sort(anchors,
             [](TensorExpr *a, TensorExpr *b) { return a->id < b->id; });
}

TensorExpr *GradMatcher::scaleOf(const GradMatch &m) {
  if (!m.normalizedInput || m.rstdDivisor == 1.0)
    return m.rstd;
  return builder.getBinary(Kind::Mul, m.rstd, constant(m.rstdDivisor, m.dy));
}

TensorExpr *GradMatcher::formula(const GradMatch &m) {
  TensorExprBuilder &b = builder;
  TensorExpr *weight = m.weight;
  if (weight && m.weightOffset != 0.0)
    weight = b.getBinary(Kind::Add, weight, constant(m.weightOffset, m.dy));
  TensorExpr *g = weight ? b.getBinary(Kind::Mul, m.dy, weight) : m.dy;
  TensorExpr *n = constant(count, m.dy);
  auto rowMean = [&](TensorExpr *e) {
    return b.getBinary(Kind::Div, b.getSum(e, m.normalizedMask), n);
  };
  switch (m.kind) {
  case GradKind::LayerNorm: {
    TensorExpr *xh =
        m.normalizedInput
            ? m.x
            : b.getBinary(Kind::Mul, b.getBinary(Kind::Sub, m.x, m.mean),
                          m.rstd);
    TensorExpr *inner = b.getBinary(
        Kind::Sub, b.getBinary(Kind::Sub, g, rowMean(g)),
        b.getBinary(Kind::Mul, xh, rowMean(b.getBinary(Kind::Mul, g, xh))));
    return b.getBinary(Kind::Mul, scaleOf(m), inner);
  }
  case GradKind::RMSNorm: {
    TensorExpr *xh =
        m.normalizedInput ? m.x : b.getBinary(Kind::Mul, m.x, m.rstd);
    TensorExpr *inner = b.getBinary(
        Kind::Sub, g,
        b.getBinary(Kind::Mul, xh, rowMean(b.getBinary(Kind::Mul, g, xh))));
    return b.getBinary(Kind::Mul, scaleOf(m), inner);
  }
  case GradKind::DyT: {
    TensorExpr *t =
        b.getUnary(Kind::Tanh, b.getBinary(Kind::Mul, m.alpha, m.x));
    TensorExpr *d = b.getBinary(Kind::Sub, constant(1.0, m.dy),
                                b.getBinary(Kind::Mul, t, t));
    return b.getBinary(Kind::Mul, b.getBinary(Kind::Mul, g, m.alpha), d);
  }
  }
  return nullptr;
}

bool GradMatcher::tryRoles(GradMatch &m) {
  m.dyValue = m.dy->value;
  m.xValue = m.x->is(Kind::Leaf) ? m.x->value : fullValues.lookup(m.x);
  TensorExpr *expected = formula(m);
  ArrayRef<int64_t> frame = builder.getFrameShape();
  for (const SmallVector<TensorExpr *, 2> &less : targets) {
    bool ok = true;
    for (auto &evaluator : evaluators)
      ok = ok && agree(*evaluator, root.expr, less, expected, points);
    // The numeric identity holds; the expression must also read nothing but
    // the roles, each through its access.
    if (ok && readsOnlyRoles(root.expr, m, less, frame)) {
      m.extras = less;
      return true;
    }
  }
  return false;
}

std::optional<GradMatch> GradMatcher::match() {
  TensorExpr *expr = root.expr;
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  if (!expr || expr->deps != fullMask)
    return std::nullopt;

  // The terms of the top-level sum that may be tensors added to dx as they
  // are (autograd accumulates x's gradient from every path, in any order:
  // the residual's dy, the gradients of later blocks): tensors read as is,
  // and sums of such tensors that the function materializes (taken whole).
  // The roles are looked for in the rest.
  AffineMap identity = builder.getIdentityMap();
  std::function<bool(TensorExpr *)> isSumOfTensors = [&](TensorExpr *e) {
    if (e->is(Kind::Leaf))
      return e->deps == fullMask && e->map == identity;
    return e->is(Kind::Add) && isSumOfTensors(e->getOperand(0)) &&
           isSumOfTensors(e->getOperand(1));
  };
  SmallVector<TensorExpr *> terms{expr}, coreTerms;
  SmallVector<TensorExpr *, 2> added;
  while (!terms.empty()) {
    TensorExpr *term = terms.pop_back_val();
    if (term->is(Kind::Add) &&
        (term == expr || !fullValues.count(term) || !isSumOfTensors(term))) {
      terms.append(term->operands.begin(), term->operands.end());
      continue;
    }
    if (term != expr && isSumOfTensors(term))
      added.push_back(term);
    else
      coreTerms.push_back(term);
  }
  if (coreTerms.empty())
    return std::nullopt;
  TensorExpr *core = coreTerms.front();
  for (TensorExpr *term : ArrayRef(coreTerms).drop_front())
    core = builder.getBinary(Kind::Add, core, term);
  // A materialized sum of tensors in the rest (a residual stream value the
  // backward recomputes, x of a later block) is one tensor for the roles,
  // however many it sums.
  SmallVector<TensorExpr *> nodes;
  collectNodes(core, nodes, [&](TensorExpr *node) {
    return node != core && node->is(Kind::Add) && fullValues.count(node) &&
           isSumOfTensors(node);
  });
  if (nodes.size() > 4096)
    return std::nullopt;

  // The normalized dims: those of the row sums (LayerNorm, RMSNorm), or
  // of a weight, or the last dim (DyT).
  bool hasTanh = false, sumsDiffer = false;
  uint64_t sumMask = 0;
  for (TensorExpr *node : nodes) {
    hasTanh |= node->is(Kind::Tanh);
    if (node->is(Kind::Sum)) {
      sumsDiffer |= sumMask && sumMask != node->reducedDims;
      sumMask = node->reducedDims;
    }
  }
  classify(nodes, hasTanh);
  if (sumsDiffer) {
    decline("its row sums are over different dims");
    return std::nullopt;
  }
  if (!sumMask && !hasTanh)
    return std::nullopt;

  SmallVector<TensorExpr *> full, params, scalars;
  for (TensorExpr *node : nodes) {
    if (!node->is(Kind::Leaf) || !isa<RankedTensorType>(node->value.getType()))
      continue;
    if (node->deps == fullMask && node->map == identity)
      full.push_back(node);
    else if (node->deps == 0)
      scalars.push_back(node);
    else
      params.push_back(node);
  }
  // dy, x and the tensors added to dx as they are.
  if (full.size() > 6) {
    decline("it reads " + Twine(full.size()) +
            " tensors of its shape; at most 6 are tried as dy, x and "
            "tensors added to dx");
    return std::nullopt;
  }
  if (full.empty())
    return std::nullopt;
  // x may also be a value the expression computes (a residual sum, which a
  // backward graph may recompute): what the row sums or DyT's tanh are
  // taken of, a factor of a product summed (`Sum(v)`, `Sum(v * v)`,
  // autograd's `Sum(g * v)`), `tanh(a * v)`, a power of it (`pow(v, 1)`),
  // what a row value is taken from (LayerNorm's `v - mean`), if the
  // function materializes it.
  SmallVector<TensorExpr *> inputs(full);
  auto addInput = [&](TensorExpr *v) {
    if (v->deps != fullMask || v->containsSum || v->is(Kind::Const))
      return;
    for (TensorExpr *candidate :
         {v, v->is(Kind::Cast) ? v->getOperand(0) : nullptr})
      if (candidate && candidate->deps == fullMask &&
          fullValues.count(candidate) && !llvm::is_contained(inputs, candidate))
        inputs.push_back(candidate);
  };
  for (TensorExpr *node : nodes) {
    if (node->is(Kind::Sum)) {
      SmallVector<TensorExpr *> factors{node->getOperand(0)};
      while (!factors.empty()) {
        TensorExpr *factor = factors.pop_back_val();
        if (factor->is(Kind::Mul))
          factors.append(factor->operands.begin(), factor->operands.end());
        else
          addInput(factor);
      }
    } else if (node->is(Kind::Pow)) {
      addInput(node->getOperand(0));
    } else if (node->is(Kind::Sub) && node->getOperand(1)->deps != fullMask) {
      // LayerNorm's x - mean (the mean read per row).
      addInput(node->getOperand(0));
    } else if (node->is(Kind::Tanh) && node->getOperand(0)->is(Kind::Mul)) {
      addInput(node->getOperand(0)->getOperand(0));
      addInput(node->getOperand(0)->getOperand(1));
    }
  }
  if (inputs.size() < 2 || inputs.size() > 8) {
    decline(inputs.size() < 2
                ? "it reads no tensor of its shape besides dy to take as x"
                : "more than 8 tensors of its shape could be x");
    return std::nullopt;
  }

  SmallVector<uint64_t, 2> masks;
  if (sumMask) {
    masks.push_back(sumMask);
  } else {
    for (TensorExpr *p : params)
      if (!llvm::is_contained(masks, p->deps))
        masks.push_back(p->deps);
    if (masks.empty())
      masks.push_back(uint64_t(1) << (rank - 1));
  }

  ArrayRef<int64_t> shape = builder.getFrameShape();
  for (uint64_t mask : masks) {
    // Trailing dims only, static.
    int64_t axis = rank;
    while (axis > 0 && (mask >> (axis - 1) & 1))
      --axis;
    if (axis == rank || mask != (fullMask & ~((uint64_t(1) << axis) - 1))) {
      decline("its row sums are not over trailing dims");
      continue;
    }
    count = 1.0;
    SmallVector<int64_t> sizes;
    bool staticNormalized = true;
    for (int64_t d = 0; d < rank; ++d) {
      if (d >= axis) {
        staticNormalized &= !ShapedType::isDynamic(shape[d]);
        count *= static_cast<double>(shape[d]);
        sizes.push_back(shape[d]);
      } else {
        sizes.push_back(ShapedType::isDynamic(shape[d])
                            ? 3
                            : std::min<int64_t>(shape[d], 3));
      }
    }
    if (!staticNormalized || count == 0.0 || count > double(1 << 22)) {
      decline(!staticNormalized ? "the normalized dims are dynamic"
              : count == 0.0    ? "the normalized dims have no elements"
                                : "the rows have more than 2^22 elements");
      continue;
    }
    decline("no assignment of its tensors to dy, x, the statistics and the "
            "parameters computes the LayerNorm, RMSNorm or DyT gradient of "
            "DESIGN 2b");
    points = getSamplePoints(sizes, axis, /*firstRow=*/false);
    for (uint64_t seed = 0; seed < kNumFillings; ++seed)
      evaluators[seed] = std::make_unique<NumericEvaluator>(sizes, seed);

    // Statistics: row values read as rows.
    rowValues.clear();
    for (const RowEntry &entry : rowEntries) {
      auto type = cast<RankedTensorType>(entry.value.getType());
      if ((entry.expr->deps & mask) == 0 && isRowValue(type, axis) &&
          entry.map == getRowMap(type, axis))
        rowValues.try_emplace(entry.expr, entry.value);
    }

    // The whole expression, or it less the tensors it adds as they are:
    // one of them, or all.
    targets.assign(1, {});
    for (TensorExpr *term : added)
      targets.push_back({term});
    if (added.size() > 1)
      targets.push_back(added);

    // Parameters: read through the parameter map.
    SmallVector<TensorExpr *> weights{nullptr}, alphas;
    for (TensorExpr *p : params)
      if (p->deps == mask && isParamRead(p, axis, /*scalar=*/false))
        weights.push_back(p);
    for (TensorExpr *s : scalars)
      if (isParamRead(s, axis, /*scalar=*/true))
        alphas.push_back(s);

    for (TensorExpr *dy : full) {
      for (TensorExpr *x : inputs) {
        if (x == dy)
          continue;
        // Statistics: those that do not depend on dy.
        SmallVector<TensorExpr *> rows;
        for (auto &[node, value] : rowValues)
          if (!containsNode(node, dy))
            rows.push_back(node);
        llvm::sort(rows,
                   [](TensorExpr *a, TensorExpr *b) { return a->id < b->id; });
        for (TensorExpr *weight : weights) {
          GradMatch m;
          m.dy = dy;
          m.x = x;
          m.weight = weight;
          m.axis = axis;
          m.normalizedMask = mask;
          if (hasTanh) {
            m.kind = GradKind::DyT;
            for (TensorExpr *alpha : alphas) {
              m.alpha = alpha;
              if (tryRoles(m))
                return m;
            }
            m.alpha = nullptr;
          }
          if (!sumMask)
            continue;
          m.kind = GradKind::RMSNorm;
          // With a weight, also Gemma's `1 + w` (weight_offset 1).
          for (double offset : {0.0, 1.0}) {
            if (offset != 0.0 && !weight)
              continue;
            m.weightOffset = offset;
            for (TensorExpr *rstd : rows) {
              m.rstd = rstd;
              if (tryRoles(m))
                return m;
            }
          }
          m.weightOffset = 0.0;
          m.kind = GradKind::LayerNorm;
          for (TensorExpr *mean : rows)
            for (TensorExpr *rstd : rows) {
              if (mean == rstd)
                continue;
              m.mean = mean;
              m.rstd = rstd;
              if (tryRoles(m))
                return m;
            }
          // The normalized input as x: `(x - mean) * rstd` (LayerNorm) or
          // `x * rstd` (RMSNorm) that the forward saved and the backward
          // reads in place of x and the mean.
          m.mean = nullptr;
          m.normalizedInput = true;
          for (GradKind kind : {GradKind::LayerNorm, GradKind::RMSNorm})
            for (double divisor : {1.0, count}) {
              m.kind = kind;
              m.rstdDivisor = divisor;
              for (TensorExpr *rstd : rows) {
                m.rstd = rstd;
                if (tryRoles(m))
                  return m;
              }
            }
        }
      }
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Parameter gradients
//===----------------------------------------------------------------------===//

/// A value of the block that computes a parameter gradient.
struct ParamGrad {
  Value value;
  /// 0: dweight, 1: dbias, 2: dalpha.
  unsigned index;
};

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

/// The float tensor `value` with elements of type `element` (extf or truncf;
/// null between distinct types of one width).
static Value convertElements(OpBuilder &b, Location loc, Value value,
                             Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  Type from = type.getElementType();
  if (from == element)
    return value;
  if (getWidth(from) == getWidth(element))
    return {};
  auto target = RankedTensorType::get(type.getShape(), element);
  if (getWidth(from) < getWidth(element))
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

/// `value` reshaped (unit dims added or dropped), cast to `type`'s shape
/// and converted to `type`.
static Value adapt(OpBuilder &b, Location loc, Value value,
                   RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getRank() != type.getRank()) {
    int64_t smallRank = std::min(from.getRank(), type.getRank());
    // Unit dims join the next kept dim (or the last group).
    int64_t lead = std::max(from.getRank(), type.getRank()) - smallRank;
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < smallRank; ++i)
      groups.push_back({lead + i});
    for (int64_t i = lead - 1; i >= 0; --i) {
      if (groups.empty())
        break;
      groups.front().insert(groups.front().begin(), i);
    }
    if (groups.empty())
      return {};
    if (from.getRank() < type.getRank()) {
      // The added dims are type's (unit), the kept ones value's own.
      SmallVector<int64_t> shape(type.getShape());
      for (int64_t i = 0; i < smallRank; ++i)
        shape[lead + i] = from.getDimSize(i);
      value = tensor::ExpandShapeOp::create(b, loc, from.clone(shape), value,
                                            groups);
    } else {
      value = tensor::CollapseShapeOp::create(b, loc, value, groups);
    }
  }
  value = castToShape(b, loc, value, type.getShape());
  if (!value)
    return {};
  return convertElements(b, loc, value, type.getElementType());
}

/// `value` collapsed to the leading dims `shape` (dropping unit normalized
/// dims), cast to `shape` and converted to `element`.
static Value adaptRow(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> shape, Type element) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getRank() != static_cast<int64_t>(shape.size())) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
      groups.push_back({i});
    for (int64_t i = shape.size(); i < from.getRank(); ++i) {
      if (groups.empty())
        break;
      groups.back().push_back(i);
    }
    value = tensor::CollapseShapeOp::create(b, loc, value, groups);
  }
  value = castToShape(b, loc, value, shape);
  if (!value)
    return {};
  return convertElements(b, loc, value, element);
}

/// True for a row-shaped tensor: the leading dims of `frame` up to `axis`,
/// then unit dims or nothing.
static bool isRowShaped(Type type, ArrayRef<int64_t> frame) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !isSupportedFloat(ranked.getElementType()))
    return false;
  int64_t rank = ranked.getRank();
  if (rank > static_cast<int64_t>(frame.size()))
    return false;
  // Trailing unit dims are taken as normalized dims.
  for (int64_t i = 0; i < rank; ++i)
    if (ranked.getDimSize(i) != frame[i] && ranked.getDimSize(i) != 1)
      return false;
  return true;
}

/// Why a candidate gradient stayed decomposed.
struct GradDecline {
  bool isCandidate = false;
  /// The builder of its frame, whose node ids `anchors` are.
  const TensorExprBuilder *builder = nullptr;
  std::string reason;
  /// Ids of its row sums and tanh nodes.
  SmallVector<unsigned> anchors;
};

/// Raises the gradient whose dx `rootOp` computes, if it is one; otherwise
/// says in `decline` whether it reads like one and why it was not raised.
static bool raiseAt(Operation *rootOp, TensorExprBuilder &builder,
                    function_ref<void(Operation *)> forget,
                    GradDecline *decline = nullptr) {
  Value rootValue = rootOp->getResult(0);
  TensorExpr *expr = builder.evaluate(rootValue);
  if (!expr || expr->is(Kind::Leaf) || expr->is(Kind::Const))
    return false;
  const TensorExprEvaluation *evaluation = builder.lookup(rootValue);
  if (!evaluation)
    return false;
  ArrayRef<int64_t> frame = builder.getFrameShape();
  GradMatcher matcher(builder, *evaluation);
  SmallPtrSet<Operation *, 32> chainOps;
  builder.walkEvaluations(
      *evaluation,
      [](const TensorExprEvaluation &, const TensorExprEvaluation &) {
        return true;
      },
      [&](const TensorExprEvaluation &e) {
        if (Operation *def = e.value.getDefiningOp())
          chainOps.insert(def);
        if (e.expr && e.materializes &&
            getElementTypeOrSelf(e.value.getType()) ==
                getElementTypeOrSelf(rootValue.getType()))
          matcher.fullValues.try_emplace(e.expr, e.value);
        if (!e.expr || !isRowShaped(e.value.getType(), frame))
          return;
        // A row value, with its access (the matcher takes those read as
        // rows).
        auto type = cast<RankedTensorType>(e.value.getType());
        if (e.expr->deps == ((uint64_t(1) << frame.size()) - 1))
          return;
        if (!e.expr->is(Kind::Const) && type.getRank() >= 1)
          matcher.rowEntries.push_back({e.expr, e.value, e.map});
      });
  std::optional<GradMatch> found = matcher.match();
  if (decline) {
    decline->isCandidate = matcher.isCandidate;
    decline->builder = &builder;
    decline->reason =
        found ? "the gradient matched but could not be rewritten (operand "
                "types, operands defined after the values it replaces, or "
                "the op does not verify)"
        : matcher.reason.empty() ? "it matches no gradient form"
                                 : matcher.reason;
    for (TensorExpr *anchor : matcher.anchors)
      decline->anchors.push_back(anchor->id);
  }
  if (!found)
    return false;
  GradMatch &m = *found;
  Block *block = rootOp->getBlock();
  int64_t rank = frame.size();
  uint64_t leadingMask = ((uint64_t(1) << rank) - 1) & ~m.normalizedMask;

  // Operands.
  Value dy = m.dy->value;
  Value x = m.x->is(Kind::Leaf) ? m.x->value : matcher.fullValues.lookup(m.x);
  if (!x)
    return false;
  // dy and x have the root's type, or one that differs from it only in
  // dynamic sizes (then cast to it).
  auto xType = cast<RankedTensorType>(rootValue.getType());
  auto hasCompatibleType = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.getElementType() == xType.getElementType() &&
           succeeded(verifyCompatibleShape(type, xType));
  };
  if (!hasCompatibleType(dy) || !hasCompatibleType(x))
    return false;
  Type xElement = xType.getElementType();
  Type computeType =
      xElement.isF64() ? xElement : Float32Type::get(rootOp->getContext());
  ArrayRef<int64_t> leadingShape = xType.getShape().take_front(m.axis);

  // Parameter gradients among the block's values.
  TensorExprBuilder &b = builder;
  TensorExpr *xh = nullptr, *t = nullptr, *d = nullptr;
  if (m.normalizedInput)
    xh = m.x;
  else if (m.kind == GradKind::LayerNorm)
    xh = b.getBinary(Kind::Mul, b.getBinary(Kind::Sub, m.x, m.mean), m.rstd);
  else if (m.kind == GradKind::RMSNorm)
    xh = b.getBinary(Kind::Mul, m.x, m.rstd);
  else {
    t = b.getUnary(Kind::Tanh, b.getBinary(Kind::Mul, m.alpha, m.x));
    d = b.getBinary(Kind::Sub, b.getConst(1.0, m.dy->type),
                    b.getBinary(Kind::Mul, t, t));
  }
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  SmallVector<TensorExpr *, 3> expected{
      b.getSum(b.getBinary(Kind::Mul, m.dy, xh ? xh : t), leadingMask),
      m.kind == GradKind::RMSNorm ? nullptr : b.getSum(m.dy, leadingMask),
      nullptr};
  if (m.kind == GradKind::DyT) {
    TensorExpr *g = m.weight ? b.getBinary(Kind::Mul, m.dy, m.weight) : m.dy;
    expected[2] = b.getSum(
        b.getBinary(Kind::Mul, b.getBinary(Kind::Mul, g, m.x), d), fullMask);
  }
  // Parameter gradients are checked at normalized coordinates of the first
  // row (their values do not depend on the leading coordinates), and must
  // read nothing but the roles too.
  SmallVector<int64_t> sizes;
  for (int64_t i = 0; i < rank; ++i)
    sizes.push_back(i < m.axis ? (ShapedType::isDynamic(frame[i])
                                      ? 3
                                      : std::min<int64_t>(frame[i], 3))
                               : frame[i]);
  SmallVector<SmallVector<int64_t>> points =
      getSamplePoints(sizes, m.axis, /*firstRow=*/true);
  SmallVector<NumericEvaluator> evaluators;
  for (uint64_t seed = kNumFillings; seed < 2 * kNumFillings; ++seed)
    evaluators.emplace_back(sizes, seed);
  SmallVector<ParamGrad> paramGrads;
  bool found3[3] = {false, false, false};
  // Last values first: of a sum and its reshape, the reshape.
  for (Operation &op : llvm::reverse(*block)) {
    if (&op == rootOp || op.getNumResults() != 1)
      continue;
    Value value = op.getResult(0);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !isSupportedFloat(type.getElementType()))
      continue;
    for (unsigned index = 0; index < 3; ++index) {
      if (!expected[index] || found3[index])
        continue;
      AffineMap access = getParamAccess(type, m.axis, frame, index == 2);
      if (!access)
        continue;
      TensorExpr *e = builder.evaluate(value, access);
      if (!e || !e->containsSum)
        continue;
      if (!llvm::all_of(evaluators,
                        [&](NumericEvaluator &evaluator) {
                          return agree(evaluator, e, {}, expected[index],
                                       points);
                        }) ||
          !readsOnlyRoles(e, m, {}, frame))
        continue;
      paramGrads.push_back({value, index});
      found3[index] = true;
      break;
    }
  }

  // The op goes before the first of the values it replaces; what it uses
  // must be defined there.
  Operation *insertionPoint = rootOp;
  for (const ParamGrad &grad : paramGrads)
    if (Operation *def = grad.value.getDefiningOp())
      if (def->getBlock() == block && def->isBeforeInBlock(insertionPoint))
        insertionPoint = def;
  auto definedBefore = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return true;
    Operation *owner = block->findAncestorOpInBlock(*def);
    return !owner || owner->isBeforeInBlock(insertionPoint);
  };
  SmallVector<Value> needed{dy, x};
  Value mean, rstd;
  if (m.mean) {
    mean = matcher.rowValues.lookup(m.mean);
    needed.push_back(mean);
  }
  if (m.rstd) {
    rstd = matcher.rowValues.lookup(m.rstd);
    needed.push_back(rstd);
  }
  if (m.weight)
    needed.push_back(m.weight->value);
  if (m.alpha)
    needed.push_back(m.alpha->value);
  // The tensors added to dx: read as is, or materialized sums of such.
  SmallVector<Value> extras;
  for (TensorExpr *extra : m.extras)
    extras.push_back(extra->is(Kind::Leaf) ? extra->value
                                           : matcher.fullValues.lookup(extra));
  needed.append(extras.begin(), extras.end());
  for (Value value : needed)
    if (!value || !definedBefore(value))
      return false;

  // Every op the rewrite inserts is recorded, so that giving up erases
  // exactly those (the block's own; nested ones go with them), and no op
  // that was there before.
  struct InsertedOps : public OpBuilder::Listener {
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
    SmallVector<Operation *> ops;
  } inserted;
  OpBuilder ob(rootOp->getContext(), &inserted);
  ob.setInsertionPoint(insertionPoint);
  Location loc = rootOp->getLoc();
  auto rollback = [&] {
    SmallVector<Operation *> own;
    for (Operation *op : inserted.ops)
      if (op->getBlock() == block)
        own.push_back(op);
    for (Operation *op : llvm::reverse(own))
      op->erase();
    return false;
  };
  // dy, x and the tensors added to dx with the root's type.
  for (Value *value : {&dy, &x})
    *value = castToShape(ob, loc, *value, xType.getShape());
  for (Value &extra : extras)
    if (Value cast = castToShape(ob, loc, extra, xType.getShape()))
      extra = cast;
  Value weight;
  if (m.weight) {
    auto weightType = cast<RankedTensorType>(m.weight->value.getType());
    auto target = RankedTensorType::get(xType.getShape().drop_front(m.axis),
                                        weightType.getElementType());
    weight = adapt(ob, loc, m.weight->value, target);
    if (!weight)
      return rollback();
  }
  if (mean) {
    mean = adaptRow(ob, loc, mean, leadingShape, computeType);
    if (!mean)
      return rollback();
  }
  if (rstd) {
    rstd = adaptRow(ob, loc, rstd, leadingShape, computeType);
    if (!rstd)
      return rollback();
  }
  // With the normalized input, the op gets mean 0 and rstd 1; dx is scaled
  // by rstd after it.
  Value scale;
  if (m.normalizedInput) {
    scale = rstd;
    SmallVector<OpFoldResult> rowSizes(
        ArrayRef(tensor::getMixedSizes(ob, loc, x)).take_front(m.axis));
    auto rowConstant = [&](double value) {
      Value empty = tensor::EmptyOp::create(ob, loc, rowSizes, computeType);
      Value fill = buildFloatConstant(ob, loc, computeType, value);
      return linalg::FillOp::create(ob, loc, fill, empty).getResult(0);
    };
    if (m.kind == GradKind::LayerNorm)
      mean = rowConstant(0.0);
    rstd = rowConstant(1.0);
  }
  Value alpha;
  if (m.alpha) {
    alpha = m.alpha->value;
    auto alphaType = cast<RankedTensorType>(alpha.getType());
    if (alphaType.getRank() > 1) {
      alpha = adapt(ob, loc, alpha,
                    RankedTensorType::get({}, alphaType.getElementType()));
      if (!alpha)
        return rollback();
    }
  }
  bool hasBias = found3[1] && m.kind != GradKind::RMSNorm;
  SmallVector<Type> types{xType};
  if (weight)
    types.push_back(weight.getType());
  if (hasBias)
    types.push_back(weight
                        ? weight.getType()
                        : RankedTensorType::get(
                              xType.getShape().drop_front(m.axis), xElement));
  if (alpha)
    types.push_back(alpha.getType());
  IntegerAttr axisAttr = ob.getI64IntegerAttr(m.axis - rank);
  UnitAttr biasAttr = hasBias ? ob.getUnitAttr() : UnitAttr();
  Operation *gradOp = nullptr;
  switch (m.kind) {
  case GradKind::LayerNorm:
    gradOp = LayerNormGradOp::create(ob, loc, types, dy, x, mean, rstd, weight,
                                     axisAttr, TypeAttr(), biasAttr);
    break;
  case GradKind::RMSNorm:
    gradOp = RMSNormGradOp::create(ob, loc, types, dy, x, rstd, weight,
                                   m.weightOffset != 0.0
                                       ? ob.getF32FloatAttr(m.weightOffset)
                                       : FloatAttr(),
                                   axisAttr, TypeAttr());
    break;
  case GradKind::DyT:
    gradOp = DyTGradOp::create(ob, loc, types, dy, x, alpha, weight, axisAttr,
                               TypeAttr(), biasAttr);
    break;
  }
  {
    ScopedDiagnosticHandler handler(rootOp->getContext(),
                                    [](Diagnostic &) { return success(); });
    if (failed(mlir::verify(gradOp)))
      return rollback();
  }

  // Replacements: dx (plus the tensors added to it), then the parameter
  // gradients, reshaped and converted to the values they replace.
  ob.setInsertionPoint(rootOp);
  Value dx = gradOp->getResult(0);
  // x's sizes, for the elementwise ops on dx.
  SmallVector<OpFoldResult> sizesOf;
  if (scale || !extras.empty())
    sizesOf = tensor::getMixedSizes(ob, loc, x);
  if (scale) {
    // dx * rstd, rstd read per row.
    Value empty = tensor::EmptyOp::create(ob, loc, sizesOf, xElement);
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank, rootOp->getContext());
    AffineMap rows = identity.getMajorSubMap(m.axis);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    dx = linalg::GenericOp::create(
             ob, loc, xType, ValueRange{dx, scale}, ValueRange{empty},
             ArrayRef<AffineMap>{identity, rows, identity}, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value factor = args[1];
               if (m.rstdDivisor != 1.0)
                 factor = arith::MulFOp::create(
                     nb, nloc, factor,
                     buildFloatConstant(nb, nloc, computeType, m.rstdDivisor));
               Value product = arith::MulFOp::create(
                   nb, nloc, castFloat(nb, nloc, args[0], computeType), factor);
               linalg::YieldOp::create(nb, nloc,
                                       castFloat(nb, nloc, product, xElement));
             })
             .getResult(0);
  }
  for (Value added : extras) {
    Value empty = tensor::EmptyOp::create(ob, loc, sizesOf, xElement);
    dx =
        linalg::AddOp::create(ob, loc, ValueRange{added, dx}, ValueRange{empty})
            .getResult(0);
  }
  SmallVector<std::pair<Value, Value>> replacements{{rootValue, dx}};
  unsigned paramBase = 1;
  for (const ParamGrad &grad : paramGrads) {
    if (grad.index == 1 && !hasBias)
      continue;
    unsigned resultIndex = paramBase;
    if (grad.index == 0) {
      if (!weight)
        continue;
    } else if (grad.index == 1) {
      resultIndex += weight ? 1 : 0;
    } else {
      resultIndex = gradOp->getNumResults() - 1;
    }
    Value result = gradOp->getResult(resultIndex);
    OpBuilder::InsertionGuard guard(ob);
    if (Operation *def = grad.value.getDefiningOp())
      ob.setInsertionPoint(def);
    Value adapted =
        adapt(ob, loc, result, cast<RankedTensorType>(grad.value.getType()));
    if (!adapted)
      continue;
    replacements.push_back({grad.value, adapted});
  }
  for (auto [from, to] : replacements)
    from.replaceAllUsesWith(to);

  // Erase what the gradient computed with and nothing else uses, then the
  // inits and constants only those used.
  llvm::SetVector<Operation *> maybeDead;
  auto eraseOp = [&](Operation *op) {
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    maybeDead.remove(op);
    forget(op);
    op->erase();
    for (Value value : used)
      if (Operation *def = value.getDefiningOp())
        maybeDead.insert(def);
  };
  SmallVector<Operation *> chain;
  for (Operation &op : *block)
    if (chainOps.contains(&op) || &op == rootOp ||
        llvm::any_of(replacements,
                     [&](auto &r) { return r.first.getDefiningOp() == &op; }))
      chain.push_back(&op);
  for (Operation *op : llvm::reverse(chain))
    if (op->use_empty() && isMemoryEffectFree(op))
      eraseOp(op);
  while (!maybeDead.empty()) {
    Operation *op = maybeDead.pop_back_val();
    if (op != gradOp && isOpTriviallyDead(op))
      eraseOp(op);
  }
  return true;
}

} // namespace

unsigned
mlir::norm::raiseGradients(Operation *root,
                           SmallVectorImpl<DeclinedGradient> *declined) {
  unsigned raised = 0;
  DenseMap<Type, std::unique_ptr<TensorExprBuilder>> builders;
  SmallVector<Operation *> candidates;
  root->walk([&](Operation *op) {
    if (op == root || op->getNumResults() != 1 || isa<NormOpInterface>(op) ||
        op->hasTrait<OpTrait::ConstantLike>())
      return;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (type && type.getRank() >= 1 && type.getRank() <= 16 &&
        isSupportedFloat(type.getElementType()))
      candidates.push_back(op);
  });
  llvm::SmallPtrSet<Operation *, 32> erased;
  auto forget = [&](Operation *op) {
    erased.insert(op);
    for (Value result : op->getResults())
      for (auto &entry : builders)
        entry.second->forget(result);
  };
  llvm::MapVector<Operation *, GradDecline> declines;
  // Producers first: a gradient's dx is raised once every gradient it adds
  // (a later block's, reaching x through the residual) is a norm op, so
  // one walk raises the backward of a whole stack of blocks. The values a
  // dx is computed from cannot match a gradient formula themselves: each
  // lacks a term of it.
  for (Operation *op : candidates) {
    if (erased.contains(op))
      continue;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Type key = RankedTensorType::get(type.getShape(),
                                     IndexType::get(op->getContext()));
    std::unique_ptr<TensorExprBuilder> &builder = builders[key];
    if (!builder)
      builder = std::make_unique<TensorExprBuilder>(type);
    GradDecline decline;
    if (raiseAt(op, *builder, forget, declined ? &decline : nullptr)) {
      ++raised;
      // The rewrite changed the block; start the evaluations afresh.
      builders.clear();
    } else if (decline.isCandidate) {
      declines.insert({op, std::move(decline)});
    }
  }
  if (!declined)
    return raised;
  declined->clear();
  // Ops may have been erased since they were analyzed.
  if (raised)
    return raised;
  // One report per gradient: a term of a dx is left to the candidate using
  // it that reads all its row sums and tanh nodes (the dx, the sum adding
  // the residual's gradient to it). Through the adds of a residual stream,
  // that makes one report for the gradients of a stack of blocks.
  for (auto &[op, decline] : declines) {
    bool completedByUser = llvm::any_of(op->getUsers(), [&](Operation *user) {
      auto it = declines.find(user);
      return it != declines.end() && it->second.builder == decline.builder &&
             llvm::all_of(decline.anchors, [&](unsigned id) {
               return llvm::is_contained(it->second.anchors, id);
             });
    });
    if (!completedByUser)
      declined->push_back({op, decline.reason});
  }
  return raised;
}
