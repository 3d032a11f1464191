//===- Quantization.h - Element arithmetic of norm.quantize ----*- C++ -*-===//
//
// The element-level arithmetic of norm.quantize (docs/Ops.md#normquantize),
// emitted by every lowering: the group scale from `max |y|`, the reciprocal,
// and the conversion of an f32 value to FP8 e4m3fn or int8 with integer and
// float ops that every backend lowers (MLIR lowers no `arith.truncf` to an
// 8-bit float). Each builder works on scalars and on vectors alike.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_UTILS_QUANTIZATION_H
#define NORM_DIALECT_NORM_UTILS_QUANTIZATION_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace norm {

/// The scale of a group from its `amax = max |y|` (f32):
/// `max(min(amax, scale_ub) / QMAX, min_scale)`, NaN when amax is NaN.
Value buildGroupScale(OpBuilder &b, Location loc, QuantizeOp op, Value amax);

/// `1 / scale` in f32.
Value buildReciprocal(OpBuilder &b, Location loc, Value scale);

/// `y` widened to f32. When `y` is an `arith.truncf` of f32 values to bf16
/// (round to nearest even) and `nativeBF16` is false, the f32 values are
/// rounded to bf16 precision in f32 instead: the same numbers without
/// packing the lanes to 16 bits and back, cheaper than an expanded truncf.
/// With `nativeBF16` (a target with a conversion instruction, such as
/// AVX-512 BF16's vcvtneps2bf16), `y` is widened as it is.
Value buildWidenedQuantizeInput(OpBuilder &b, Location loc, Value y,
                                bool nativeBF16 = false);

/// `|y|` widened to f32, the term of a group's `max |y|` (combine terms with
/// `arith.maximumf`, which propagates NaN).
Value buildMagnitude(OpBuilder &b, Location loc, Value y);

/// Quantizes `y` (the op's input element type) with the inverse scale
/// `inverse` (f32, same shape): `v = f32(y) * inverse`, then the saturating,
/// round-to-nearest-even conversion to `quantizedType` (f8E4M3FN or i8).
/// Returns a value of `quantizedType` (or a vector of it).
Value buildQuantize(OpBuilder &b, Location loc, Value y, Value inverse,
                    Type quantizedType, bool nativeBF16 = false);

/// The bits of the f8E4M3FN value nearest to the f32 `v` (saturating to
/// +-448, NaN stays NaN, ties to even) as an i8, with i32 and f32 ops only.
Value buildFloat8E4M3FNBits(OpBuilder &b, Location loc, Value v);

/// The bits of the f4E2M1FN value nearest to the f32 `v` (values 0, 0.5,
/// 1, 1.5, 2, 3, 4, 6; saturating to +-6, ties to even, the sign of zero
/// kept, NaN to 0x0) as an i8 code in [0, 15], with i32 and f32 ops only.
Value buildFloat4E2M1FNBits(OpBuilder &b, Location loc, Value v);

/// The f32 value of the f8E4M3FN value nearest to the f32 `v` (saturating,
/// ties to even, NaN stays NaN): `v` rounded to e4m3 without encoding it.
Value buildFloat8E4M3FNRounded(OpBuilder &b, Location loc, Value v);

/// The block scales of the MX and 1x128 forms (f8E8M0FNU scales): from a
/// group's `amax` (f32, >= 0 or NaN) the i32 exponent code `X + 127` of the
/// scale `2^X` (`op`'s scale_rounding and QMAX; X clamped to [-127, 127];
/// 255 for NaN), and from the code the f32 multiplier `2^-X` the elements
/// are scaled by (exact, 2^-127 a subnormal; NaN for code 255).
Value buildPowerOfTwoScaleCode(OpBuilder &b, Location loc, QuantizeOp op,
                               Value amax);
Value buildPowerOfTwoMultiplier(OpBuilder &b, Location loc, Value code);

/// The NVFP4 scale of a group: `sf = e4m3(g * (amax / 6))` as its f32 value
/// (`first`) and the element multiplier `out = sf == 0 ? 0 : g / sf`
/// (`second`), all in f32.
std::pair<Value, Value> buildNVFP4Scale(OpBuilder &b, Location loc,
                                        Value globalScale, Value amax);

/// A block-scaled element: `v = f32(y) * multiplier`, converted to
/// `quantizedType` (f8E4M3FN or f4E2M1FN) with saturation and ties to even.
Value buildBlockQuantize(OpBuilder &b, Location loc, Value y, Value multiplier,
                         Type quantizedType, bool nativeBF16 = false);

/// The block scale of the element type `scalesType` (f8E8M0FNU from its
/// i32 code, f8E4M3FN from its f32 value).
Value buildBlockScaleValue(OpBuilder &b, Location loc, Value scale,
                           Type scalesType);

/// The norm.quantize that a lowering of `op` can compute in the same
/// kernel: the only user of `y`, quantizing along the rows `op` normalizes
/// (its axis is the last dim), with a static scale or NVFP4 global scale
/// (if any) defined before `op`, or defined after it in the same block when
/// every use of `op`'s `residual_out` comes after the quantization. Null
/// otherwise. Every form qualifies, block-scaled included; a lowering that
/// does not fuse some of them declines them itself (isQuantizeFusedOnGPU).
QuantizeOp getFusableQuantizeOp(NormOpInterface op);

/// Where the lowering of `op` fused with `quant` (getFusableQuantizeOp; or
/// null) is built: at `op`, or at `quant` when its static or global scale
/// is defined after `op`.
Operation *getFusedInsertionPoint(NormOpInterface op, QuantizeOp quant);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_UTILS_QUANTIZATION_H
