//===- RaiseGradNumeric.cpp - Numeric identities of gradients -------------===//
//
// Evaluates the expressions of the gradient raise in f64 at sample elements
// for pseudo-random fillings of their leaves, with a bound on the rounding
// errors, so that two groupings of one formula are told equal and anything
// else apart.
//
//===----------------------------------------------------------------------===//

#include "RaiseGradInternal.h"

#include "llvm/ADT/Hashing.h"

#include <cmath>

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::raisegrad;

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
  case Kind::Floor:
  case Kind::Ceil:
  case Kind::Log2:
  case Kind::Exp2:
  case Kind::SelectEq:
    // Only block-scale builders make these; no gradient is checked on them.
    break;
  }
  return {NAN, 0.0};
}

bool raisegrad::agree(NumericEvaluator &evaluator, TensorExpr *a,
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
SmallVector<SmallVector<int64_t>>
raisegrad::getSamplePoints(ArrayRef<int64_t> sizes, int64_t axis,
                           bool firstRow) {
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
