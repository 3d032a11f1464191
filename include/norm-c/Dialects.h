/*===- norm-c/Dialects.h - C API of the norm dialect --------------*- C -*-===*\
|*                                                                            *|
|* The norm dialect through MLIR's C API: the dialect handle, isa functions   *|
|* and builders of the ops, and the enum attributes. The functions live in    *|
|* libNormMLIR-C.so, which also carries upstream's C API (mlir-c/*.h); never  *|
|* load it together with libMLIR.so in one process.                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NORM_C_DIALECTS_H
#define NORM_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// `mlirGetDialectHandle__norm__()`. Inserting the handle into a registry
/// also registers the external interface models of the norm ops
/// (TilingInterface, AggregatedOpInterface).
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Norm, norm);

/// Adds to `registry` everything norm-cpu-pipeline, norm-gpu-pipeline and
/// norm-spmd-pipeline need of a context: the norm dialect with its models,
/// every upstream dialect with its extensions (bufferization,
/// convert-to-llvm, ... models) and the translations to LLVM IR
/// (mlir::norm::registerNormPipelineDialects). Passes are registered apart
/// (mlirRegisterNormPasses).
MLIR_CAPI_EXPORTED void
mlirNormRegisterPipelineDialects(MlirDialectRegistry registry);

//===----------------------------------------------------------------------===//
// Enum attributes
//===----------------------------------------------------------------------===//

/// Where epsilon enters the RMS denominator of `norm.rms_norm`.
typedef enum MlirNormEpsilonMode {
  MlirNormEpsilonModeInsideSqrt = 0,  ///< rsqrt(ms + eps)
  MlirNormEpsilonModeOutsideSqrt = 1, ///< 1 / (sqrt(ms) + eps)
  MlirNormEpsilonModeClamp = 2,       ///< 1 / max(sqrt(ms), eps)
} MlirNormEpsilonMode;

/// Where the result is rounded to the element type of `x`.
typedef enum MlirNormCastMode {
  MlirNormCastModeFinal = 0,        ///< once, at the end
  MlirNormCastModeBeforeWeight = 1, ///< before the weight (Hugging Face LLaMA)
} MlirNormCastMode;

/// How a power-of-two (f8E8M0FNU) block scale of `norm.quantize` is chosen.
typedef enum MlirNormScaleRounding {
  MlirNormScaleRoundingFloor = 0, ///< OCP MX: 2^(floor(log2(amax)) - emax)
  MlirNormScaleRoundingUp = 1,    ///< the smallest power of two >= amax / QMAX
} MlirNormScaleRounding;

/// The memory layout of the block scales of `norm.quantize`.
typedef enum MlirNormScaleLayout {
  MlirNormScaleLayoutRowMajor = 0,      ///< the input shape, last dim N / G
  MlirNormScaleLayoutSwizzled128x4 = 1, ///< flat 128x4 tiles (CUTLASS, cuBLAS)
} MlirNormScaleLayout;

/// Whether `attr` is a `#norm<epsilon_mode ...>` attribute.
MLIR_CAPI_EXPORTED bool mlirAttributeIsANormEpsilonModeAttr(MlirAttribute attr);

/// `#norm<epsilon_mode value>`; loads the norm dialect into `ctx` if needed.
MLIR_CAPI_EXPORTED MlirAttribute
mlirNormEpsilonModeAttrGet(MlirContext ctx, MlirNormEpsilonMode value);

/// The value of a `#norm<epsilon_mode ...>` attribute.
MLIR_CAPI_EXPORTED MlirNormEpsilonMode
mlirNormEpsilonModeAttrGetValue(MlirAttribute attr);

/// Whether `attr` is a `#norm<cast_mode ...>` attribute.
MLIR_CAPI_EXPORTED bool mlirAttributeIsANormCastModeAttr(MlirAttribute attr);

/// `#norm<cast_mode value>`; loads the norm dialect into `ctx` if needed.
MLIR_CAPI_EXPORTED MlirAttribute
mlirNormCastModeAttrGet(MlirContext ctx, MlirNormCastMode value);

/// The value of a `#norm<cast_mode ...>` attribute.
MLIR_CAPI_EXPORTED MlirNormCastMode
mlirNormCastModeAttrGetValue(MlirAttribute attr);

/// Whether `attr` is a `#norm<scale_rounding ...>` attribute.
MLIR_CAPI_EXPORTED bool
mlirAttributeIsANormScaleRoundingAttr(MlirAttribute attr);

/// `#norm<scale_rounding value>`; loads the norm dialect into `ctx` if needed.
MLIR_CAPI_EXPORTED MlirAttribute
mlirNormScaleRoundingAttrGet(MlirContext ctx, MlirNormScaleRounding value);

/// The value of a `#norm<scale_rounding ...>` attribute.
MLIR_CAPI_EXPORTED MlirNormScaleRounding
mlirNormScaleRoundingAttrGetValue(MlirAttribute attr);

/// Whether `attr` is a `#norm<scale_layout ...>` attribute.
MLIR_CAPI_EXPORTED bool mlirAttributeIsANormScaleLayoutAttr(MlirAttribute attr);

/// `#norm<scale_layout value>`; loads the norm dialect into `ctx` if needed.
MLIR_CAPI_EXPORTED MlirAttribute
mlirNormScaleLayoutAttrGet(MlirContext ctx, MlirNormScaleLayout value);

/// The value of a `#norm<scale_layout ...>` attribute.
MLIR_CAPI_EXPORTED MlirNormScaleLayout
mlirNormScaleLayoutAttrGetValue(MlirAttribute attr);

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// Whether `op` is `norm.layer_norm`.
MLIR_CAPI_EXPORTED bool mlirOperationIsANormLayerNormOp(MlirOperation op);

/// Whether `op` is `norm.rms_norm`.
MLIR_CAPI_EXPORTED bool mlirOperationIsANormRMSNormOp(MlirOperation op);

/// Whether `op` is `norm.dyt`.
MLIR_CAPI_EXPORTED bool mlirOperationIsANormDyTOp(MlirOperation op);

/// Whether `op` is `norm.quantize`.
MLIR_CAPI_EXPORTED bool mlirOperationIsANormQuantizeOp(MlirOperation op);

/// Whether `op` is any norm op (implements the NormOpInterface).
MLIR_CAPI_EXPORTED bool mlirOperationIsANormOp(MlirOperation op);

/// Creates a detached `norm.layer_norm` on `x` with default attributes.
/// `weight`, `bias` and `residual` may be null values (absent). The result
/// types follow `x` (`y`, and `residual_out` when `residual` is given). The
/// op is not verified: call `mlirOperationVerify` once it is in a block.
/// Attributes are set with `mlirOperationSetAttributeByName` ("epsilon",
/// "axis", "compute_type", "cast_mode").
MLIR_CAPI_EXPORTED MlirOperation mlirNormLayerNormOpCreate(MlirLocation loc,
                                                           MlirValue x,
                                                           MlirValue weight,
                                                           MlirValue bias,
                                                           MlirValue residual);

/// Creates a detached `norm.rms_norm` on `x` (see
/// `mlirNormLayerNormOpCreate`; further attributes: "epsilon_mode",
/// "weight_offset").
MLIR_CAPI_EXPORTED MlirOperation mlirNormRMSNormOpCreate(MlirLocation loc,
                                                         MlirValue x,
                                                         MlirValue weight,
                                                         MlirValue residual);

/// Creates a detached `norm.dyt` on `x` with the scalar `alpha` (see
/// `mlirNormLayerNormOpCreate`).
MLIR_CAPI_EXPORTED MlirOperation
mlirNormDyTOpCreate(MlirLocation loc, MlirValue x, MlirValue alpha,
                    MlirValue weight, MlirValue bias, MlirValue residual);

/// Creates a detached `norm.quantize` of `input` (a ranked tensor) to
/// `quantizedElementType` (f8E4M3FN or i8). With a `scale` value (tensor<f32>
/// or tensor<1xf32>) it has one result, q; with a null `scale`, a second
/// result holds the f32 scales of groups of `groupSize` elements of the last
/// dim (0: one per row). "scale_ub" and "min_scale" are set with
/// `mlirOperationSetAttributeByName`; the op is not verified.
MLIR_CAPI_EXPORTED MlirOperation
mlirNormQuantizeOpCreate(MlirLocation loc, MlirValue input, MlirValue scale,
                         MlirType quantizedElementType, int64_t groupSize);

/// Creates a detached block-scaled `norm.quantize` of `input` (a ranked
/// tensor of f16, bf16 or f32, static last dim): MXFP8 (`quantizedElementType`
/// f8E4M3FN, `scalesElementType` f8E8M0FNU, `groupSize` 32), FP8 1x128 (the
/// same with `groupSize` 128), MXFP4 (f4E2M1FN, f8E8M0FNU, 32) or NVFP4
/// (f4E2M1FN, f8E4M3FN, 16, with `globalScale`, a tensor<f32> or
/// tensor<1xf32> value; null for the other forms). `scaleRounding` applies
/// to f8E8M0FNU scales (NVFP4 takes floor). The result types are inferred:
/// `q` of the input shape, the scales row-major (the input shape with the
/// last dim N / groupSize) or swizzled_128x4 (roundup(M, 128) *
/// roundup(N / groupSize, 4) scales, M the product of the leading dims;
/// dynamic when one of them is). The op is verified: an invalid combination
/// is reported through the context's diagnostic handlers at `loc` and gives
/// a null operation.
MLIR_CAPI_EXPORTED MlirOperation mlirNormQuantizeOpCreateBlockScaled(
    MlirLocation loc, MlirValue input, MlirValue globalScale,
    MlirType quantizedElementType, MlirType scalesElementType,
    int64_t groupSize, MlirNormScaleRounding scaleRounding,
    MlirNormScaleLayout scaleLayout);

/// Creates a detached `norm.layer_norm` with `return_stats` (see
/// `mlirNormLayerNormOpCreate`): its results are `y`, `residual_out` (when
/// `residual` is given), then `mean` and `rstd`, typed for the default
/// `axis` (-1) and compute type (f32, f64 for f64 inputs).
MLIR_CAPI_EXPORTED MlirOperation mlirNormLayerNormOpCreateWithStats(
    MlirLocation loc, MlirValue x, MlirValue weight, MlirValue bias,
    MlirValue residual);

/// Creates a detached `norm.rms_norm` with `return_stats`: results `y`,
/// `residual_out` (when `residual` is given), then `rstd` (see
/// `mlirNormLayerNormOpCreateWithStats`).
MLIR_CAPI_EXPORTED MlirOperation mlirNormRMSNormOpCreateWithStats(
    MlirLocation loc, MlirValue x, MlirValue weight, MlirValue residual);

/// Whether `op` is a gradient op (`norm.layer_norm_grad`,
/// `norm.rms_norm_grad` or `norm.dyt_grad`).
MLIR_CAPI_EXPORTED bool mlirOperationIsANormGradOp(MlirOperation op);

/// Creates a detached `norm.layer_norm_grad` of `dy` and `x` with the saved
/// `mean` and `rstd`; `weight` may be null. Results: `dx` (x's type), then
/// `dweight` (the weight's type) when `weight` is given, then `dbias` when
/// `hasBias` (the weight's type, or x's last dim and element type). Types
/// follow the default `axis` (-1); not verified (see
/// `mlirNormLayerNormOpCreate`).
MLIR_CAPI_EXPORTED MlirOperation mlirNormLayerNormGradOpCreate(
    MlirLocation loc, MlirValue dy, MlirValue x, MlirValue mean, MlirValue rstd,
    MlirValue weight, bool hasBias);

/// Creates a detached `norm.rms_norm_grad` (results `dx`, then `dweight`
/// when `weight` is given; see `mlirNormLayerNormGradOpCreate`).
MLIR_CAPI_EXPORTED MlirOperation mlirNormRMSNormGradOpCreate(MlirLocation loc,
                                                             MlirValue dy,
                                                             MlirValue x,
                                                             MlirValue rstd,
                                                             MlirValue weight);

/// Creates a detached `norm.dyt_grad` (results `dx`, [`dweight`], [`dbias`],
/// then `dalpha` of alpha's type; see `mlirNormLayerNormGradOpCreate`).
MLIR_CAPI_EXPORTED MlirOperation
mlirNormDyTGradOpCreate(MlirLocation loc, MlirValue dy, MlirValue x,
                        MlirValue alpha, MlirValue weight, bool hasBias);

#ifdef __cplusplus
}
#endif

#endif // NORM_C_DIALECTS_H
