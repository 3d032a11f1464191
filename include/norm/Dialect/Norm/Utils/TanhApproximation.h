//===- TanhApproximation.h - Rational tanh for DyT on the CPU --*- C++ -*-===//
//
// The f32 tanh of the vectorized DyT lowering: an odd rational function
// whose degree is chosen by the precision of the result it feeds.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_TANHAPPROXIMATION_H
#define NORM_DIALECT_NORM_UTILS_TANHAPPROXIMATION_H

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir {
namespace norm {

/// `tanh(x)` for an f32 scalar or vector `x` as `x * P(x^2) / Q(x^2)` on `x`
/// clamped to `[-c, c]` (NaN stays NaN): multiply-adds and one division, no
/// calls and no branches. The degrees are chosen for `resultType`, the
/// element type the value is rounded to in the end: a [5/4] rational for
/// bf16 (absolute error <= 5.9e-5), [5/6] for f16 (<= 1.7e-5) and [7/8]
/// otherwise (<= 4.2e-7, about 3.5 ulp of f32 near 1). The bounds are the
/// maximum over every 61st f32 in [0, 12] evaluated as this code does
/// (`utils/fit-tanh.py`, which also fits the coefficients); docs/Numerics.md
/// has them and the tests check them.
Value buildApproximateTanh(OpBuilder &b, Location loc, Value x,
                           Type resultType);

/// `tanh(z)` and its derivative `1 - tanh(z)^2` for an f32 or f64 scalar or
/// vector `z`. f64: `math.tanh`, and the slope as `4e / (1 + e)^2` with `e =
/// math.exp(-2|z|)`. f32: both from `e = exp(-2|z|)` (range-reduced, a degree-7
/// expm1 on the reduced argument, scaled by 2^k through the exponent bits): `t
/// = sign(z) * (1 - e) / (1 + e)`, `1 - t^2 = 4e / (1 + e)^2`, with `1 - e`
/// computed as `-expm1(-2|z|)`. Both keep their relative accuracy (a few
/// ulp) where `1 - t * t` of a rounded t cancels: near saturation the slope
/// is tiny and comes out right, not as a difference of neighbouring floats.
/// Past |z| = 44, `e` is taken as 0 (t = +-1, slope 0). NaN stays NaN.
std::pair<Value, Value> buildTanhAndSlope(OpBuilder &b, Location loc, Value z);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_TANHAPPROXIMATION_H
