//===- TanhApproximation.h - Rational tanh for DyT on the CPU --*- C++ -*-===//
//
// The f32 tanh of the vectorized DyT lowering: an odd rational function
// whose degree is chosen by the precision of the result it feeds.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_TANHAPPROXIMATION_H
#define NORM_DIALECT_NORM_UTILS_TANHAPPROXIMATION_H

#include "mlir/IR/Builders.h"

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

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_TANHAPPROXIMATION_H
