//===- ConstantValues.h - Elements of float tensor constants ----*- C++ -*-===//
//
// The one way the dialect's folders and transforms read constant weights,
// biases and inputs: a dense (or splat) elements attribute, or a
// dense_resource blob, as torch-mlir's fx.export_and_import stores every
// exported parameter.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_CONSTANTVALUES_H
#define NORM_DIALECT_NORM_IR_CONSTANTVALUES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <optional>

namespace mlir {
namespace norm {

/// The elements of a constant float tensor, in row-major order.
struct FloatConstant {
  RankedTensorType type;
  SmallVector<APFloat> values;

  /// The elements as doubles (exact for f16, bf16, f32 and f64).
  SmallVector<double> getValuesAsDoubles() const;
};

/// `value` as a double (exact for f16, bf16, f32 and f64).
double getAsDouble(const APFloat &value);

/// Largest number of input elements a norm op or norm.quantize is
/// constant-folded for.
constexpr int64_t kMaxFoldedElements = 4096;

/// Reads the float tensor constant (`arith.constant` or any constant-like
/// op) that defines `value`: a DenseElementsAttr (splats included) or a
/// DenseResourceElementsAttr whose blob is available. Returns nullopt for
/// anything else, for an elided or malformed blob, and for constants of
/// more than `maxElements` elements.
std::optional<FloatConstant>
readFloatConstant(Value value,
                  int64_t maxElements = std::numeric_limits<int64_t>::max());

/// The same for the attribute of such a constant.
std::optional<FloatConstant>
readFloatConstant(Attribute attr,
                  int64_t maxElements = std::numeric_limits<int64_t>::max());

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_IR_CONSTANTVALUES_H
