//===- NormArithmetic.h - Element arithmetic of the norm ops ---*- C++ -*-===//
//
// The element-level arithmetic of the norm ops (docs/Ops.md), emitted by
// every lowering (linalg bodies, vector loops, GPU kernels) and by the
// dialect's transforms: compute-type casts, the residual sum, epsilon modes,
// DyT, and the weight/bias/cast-mode epilogue. Each builder works on scalars
// and on vectors alike.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_NORMARITHMETIC_H
#define NORM_DIALECT_NORM_UTILS_NORMARITHMETIC_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace norm {

/// Returns `elementType`, or a vector of it shaped like `like` when `like`
/// is a vector type.
Type getTypeLike(Type like, Type elementType);

/// Builds a float constant of `type` (a float type or a vector of floats,
/// splatted).
Value buildFloatConstant(OpBuilder &b, Location loc, Type type, double value);

/// Builds an integer constant of `type` (an integer type or a vector of
/// integers, splatted).
Value buildIntConstant(OpBuilder &b, Location loc, Type type, int64_t value);

/// Converts a float scalar or vector to `elementType` with `arith.extf`,
/// `arith.truncf` (round to nearest even) or nothing.
Value castFloat(OpBuilder &b, Location loc, Value value, Type elementType);

/// `x + residual`, computed exactly enough and rounded once to the element
/// type of `x` (the op's `residual_out`).
Value buildResidualSum(OpBuilder &b, Location loc, Value x, Value residual);

/// The factor rows are multiplied by, from the row statistic `stat` (the
/// variance for layer_norm, the mean square for rms_norm), in the compute
/// type, honouring the op's epsilon and `epsilon_mode`.
Value buildInverseScale(OpBuilder &b, Location loc, NormOpInterface op,
                        Value stat);

/// `tanh(alpha * x)` in the compute type; `alpha` and `x` are raw element
/// values and are widened here. With `approximateTanh` and an f32 compute
/// type, tanh is the rational function of TanhApproximation.h chosen for
/// the op's element type (the vectorized CPU lowering); otherwise it is
/// `math.tanh`.
Value buildDyTCore(OpBuilder &b, Location loc, NormOpInterface op, Value alpha,
                   Value x, bool approximateTanh = false);

/// From the normalized value `n` (compute type), applies `weight` (+
/// `weight_offset`) and `bias` (raw element values, or null when absent)
/// with the op's `cast_mode`, and returns the value in the input element
/// type.
Value buildNormOutput(OpBuilder &b, Location loc, NormOpInterface op, Value n,
                      Value weight, Value bias);

/// Converts an index value to a float of type `type`.
Value buildIndexToFloat(OpBuilder &b, Location loc, Value index, Type type);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_NORMARITHMETIC_H
