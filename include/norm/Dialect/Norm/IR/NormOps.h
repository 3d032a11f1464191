//===- NormOps.h - Norm dialect ops -----------------------------*- C++ -*-===//
//
// Declares the ops, attributes and interface of the norm dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_NORMOPS_H
#define NORM_DIALECT_NORM_IR_NORMOPS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

#include "norm/Dialect/Norm/IR/NormEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "norm/Dialect/Norm/IR/NormAttrs.h.inc"

namespace mlir {
namespace norm {
namespace detail {
/// Whether a gradient op class has an accessor, for the defaults of
/// NormGradOpInterface (a null value where the op has no such operand or
/// result).
template <typename OpTy>
using GetMeanT = decltype(std::declval<OpTy &>().getMean());
template <typename OpTy>
using GetRstdT = decltype(std::declval<OpTy &>().getRstd());
template <typename OpTy>
using GetAlphaT = decltype(std::declval<OpTy &>().getAlpha());
template <typename OpTy>
using GetDalphaT = decltype(std::declval<OpTy &>().getDalpha());
template <typename OpTy>
using GetWeightOffsetT = decltype(std::declval<OpTy &>().getWeightOffsetAttr());
template <typename OpTy>
using HasGetMean = llvm::is_detected<GetMeanT, OpTy>;
template <typename OpTy>
using HasGetRstd = llvm::is_detected<GetRstdT, OpTy>;
template <typename OpTy>
using HasGetAlpha = llvm::is_detected<GetAlphaT, OpTy>;
template <typename OpTy>
using HasGetDalpha = llvm::is_detected<GetDalphaT, OpTy>;
template <typename OpTy>
using HasGetWeightOffset = llvm::is_detected<GetWeightOffsetT, OpTy>;

/// First normalized dimension of an op on a rank-`rank` input with `axis`
/// (possibly negative), in [0, rank). Shared by both op interfaces and the
/// gradient op classes.
inline int64_t getNormalizedDim(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}
/// The type arithmetic happens in: `explicitType` when set, else f32 for
/// f16/bf16/f32 inputs and f64 for f64 inputs.
inline Type getComputeElementType(Type explicitType, Type inputElementType) {
  if (explicitType)
    return explicitType;
  if (inputElementType.isF64())
    return inputElementType;
  return Float32Type::get(inputElementType.getContext());
}
/// A shape as the verifiers print it: `[8, ?, 4096]`.
std::string formatShape(ArrayRef<int64_t> shape);
} // namespace detail
} // namespace norm
} // namespace mlir

#include "norm/Dialect/Norm/IR/NormInterfaces.h.inc"

namespace mlir {
namespace norm {

/// Result types of a norm op on `x`: `y` has the type of `x`, and
/// `residual_out` (present iff `residual` is) has it too.
SmallVector<Type, 2> inferNormResultTypes(Value x, Value residual);

/// Result types of a norm.quantize of `input` to `quantizedType`: q with
/// the shape of `input` and, without `scale`, the f32 scales with the last
/// dim N / `groupSize` (1 when `groupSize` is 0; dynamic when it cannot be
/// computed, which the verifier rejects).
SmallVector<Type, 2> inferQuantizeResultTypes(Value input, Value scale,
                                              Type quantizedType,
                                              int64_t groupSize);

/// Rows and groups of the `swizzled_128x4` scale layout (DESIGN 2d): the
/// scale of row `m`, group `k` of `numGroups` per row is at
/// `(m / 128) * (K4 * 512) + (k / 4) * 512 + (m % 32) * 16 +
/// ((m % 128) / 32) * 4 + k % 4` with `K4 = roundup(numGroups, 4) / 4`.
inline int64_t getSwizzled128x4Size(int64_t numRows, int64_t numGroups) {
  return llvm::alignTo(numRows, 128) * llvm::alignTo(numGroups, 4);
}
inline int64_t getSwizzled128x4Offset(int64_t row, int64_t group,
                                      int64_t numGroups) {
  int64_t k4 = llvm::alignTo(numGroups, 4) / 4;
  return (row / 128) * (k4 * 512) + (group / 4) * 512 + (row % 32) * 16 +
         ((row % 128) / 32) * 4 + group % 4;
}

/// The scalar-parameter rule: a `weight`, `bias` or `alpha` operand of shape
/// `[]` or `[1]` is one value applied to every normalized element (DyT's
/// alpha, ScaleNorm's gain). Every other parameter has the normalized shape.
/// When the normalized shape is itself `[1]` both readings agree.
bool isScalarParameterShape(ArrayRef<int64_t> shape);

/// Names of every attribute the norm ops know. A name of this set that an op
/// does not take is rejected by the verifier.
ArrayRef<StringRef> getNormAttributeNames();

} // namespace norm
} // namespace mlir

#define GET_OP_CLASSES
#include "norm/Dialect/Norm/IR/NormOps.h.inc"

namespace mlir {
namespace norm {

/// The element type of `x` (`T` in the op semantics).
Type getInputElementType(NormOpInterface op);

/// The type in which `cast_mode = before_weight` forms `n * w' + b`: the
/// widest of the input, weight and bias element types.
Type getBeforeWeightArithmeticType(NormOpInterface op);

/// True for the gradient ops (NormGradOpInterface): norm.layer_norm_grad,
/// norm.rms_norm_grad and norm.dyt_grad.
inline bool isGradientOp(Operation *op) { return isa<NormGradOpInterface>(op); }

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_IR_NORMOPS_H
