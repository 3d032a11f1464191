//===- FloatUtils.h - The float formats of the norm ops --------*- C++ -*-===//
//
// Facts about f16, bf16, f32 and f64 that the dialect's passes reason with
// (norm-raise's exact simplifications, norm-fuse-residual's check that a
// sum is exact in a wider type).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_FLOATUTILS_H
#define NORM_DIALECT_NORM_UTILS_FLOATUTILS_H

#include "mlir/IR/Types.h"

namespace mlir {
namespace norm {

/// True for f16, bf16, f32 and f64.
bool isSupportedFloat(Type type);

/// Number of significand bits (precision) of a supported float type.
unsigned getPrecision(Type type);

/// `value` rounded to `type` (round to nearest even).
double roundToType(double value, Type type);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_FLOATUTILS_H
