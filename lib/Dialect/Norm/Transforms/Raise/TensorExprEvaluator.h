//===- TensorExprEvaluator.h - Evaluator internals -------------*- C++ -*-===//
//
// The constant and count readers the two files of the tensor evaluator
// share (TensorExprEvaluator.cpp, TensorExprLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_LIB_DIALECT_NORM_TRANSFORMS_RAISE_TENSOREXPREVALUATOR_H
#define NORM_LIB_DIALECT_NORM_TRANSFORMS_RAISE_TENSOREXPREVALUATOR_H

#include "TensorExpr.h"

#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <utility>

namespace mlir {
namespace norm {
namespace tensor_expr {

/// True for the element types of a quantized root: floats narrower than f16
/// and integers.
bool isQuantizedType(Type type);

/// The value of a splat integer constant (seen through casts) as a double,
/// when it is exact.
std::optional<double> getSplatInteger(Value value);

/// The value of a splat float constant, or of an integer constant converted
/// by `sitofp`/`uitofp`, as a double.
std::optional<double> getSplatFloat(Value value);

/// `value` as the number of elements over some dims of a tensor of rank
/// `rank`: `tensor.dim`s of that tensor (constant dims), multiplied, through
/// index and integer casts and `sitofp`/`uitofp`. Returns the tensor and the
/// dims (a bit mask).
std::optional<std::pair<Value, uint64_t>> matchDimCount(Value value,
                                                        int64_t rank);

} // namespace tensor_expr
} // namespace norm
} // namespace mlir

#endif // NORM_LIB_DIALECT_NORM_TRANSFORMS_RAISE_TENSOREXPREVALUATOR_H
