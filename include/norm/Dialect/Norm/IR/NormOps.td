//===- NormOps.td - Norm dialect ops -----------------------*- tablegen -*-===//
//
// norm.layer_norm, norm.rms_norm and norm.dyt.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_NORMOPS_TD
#define NORM_DIALECT_NORM_IR_NORMOPS_TD

include "norm/Dialect/Norm/IR/NormDialect.td"
include "norm/Dialect/Norm/IR/NormAttrs.td"
include "norm/Dialect/Norm/IR/NormInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// `tensor<T>` or `tensor<1xT>`: a scalar parameter (DyT's alpha, a static
/// quantization scale).
def Norm_ScalarShapePred : CPred<"::mlir::norm::isScalarParameterShape("
    "::llvm::cast<::mlir::ShapedType>($_self).getShape())">;

/// The element types the norm ops compute on (DESIGN.md section 2).
defvar Norm_FloatTypes = [F16, BF16, F32, F64];

def Norm_FloatTensor : RankedTensorOf<Norm_FloatTypes> {
  let summary = "ranked tensor of f16, bf16, f32 or f64";
}

/// The normalized input: at least one dim.
def Norm_FloatInputTensor
    : RankedTensorOf<Norm_FloatTypes, [HasRankGreaterOrEqualPred<1>]> {
  let summary = "ranked tensor of rank >= 1 of f16, bf16, f32 or f64";
}

def Norm_FloatScalarTensor
    : RankedTensorOf<Norm_FloatTypes, [Norm_ScalarShapePred]> {
  let summary = "scalar (tensor<T> or tensor<1xT>) of f16, bf16, f32 or f64";
}

/// The input of norm.quantize: no f64.
def Norm_QuantizeInputTensor
    : RankedTensorOf<[F16, BF16, F32], [HasRankGreaterOrEqualPred<1>]> {
  let summary = "ranked tensor of rank >= 1 of f16, bf16 or f32";
}

/// The quantized values of norm.quantize (sections 2a and 2d).
def Norm_QuantizedTensor : RankedTensorOf<[F8E4M3FN, F4E2M1FN, I8]> {
  let summary = "ranked tensor of f8E4M3FN, f4E2M1FN or i8";
}

/// The scales norm.quantize computes: f32, or the block scales of the MX
/// (f8E8M0FNU) and NVFP4 (f8E4M3FN) forms.
def Norm_QuantizeScalesTensor
    : RankedTensorOf<[F32, F8E8M0FNU, F8E4M3FN]> {
  let summary = "ranked tensor of f32, f8E8M0FNU or f8E4M3FN";
}

def Norm_F32Tensor : RankedTensorOf<[F32]> {
  let summary = "ranked tensor of f32";
}

def Norm_F32ScalarTensor : RankedTensorOf<[F32], [Norm_ScalarShapePred]> {
  let summary = "tensor<f32> or tensor<1xf32>";
}

/// `type` with the operand or result name in front of its summary, so that
/// the generated verifier's diagnostic names the value, not only its
/// position ("operand #1 must be 'alpha': scalar ..., but got ...").
class Norm_Named<Type type, string name>
    : Type<type.predicate, "'" # name # "': " # type.summary, type.cppType>;

/// Common base of the three normalization ops. Operand and result types are
/// constrained here; the shared verifier checks what relates them to `x`
/// (shapes, element types, result count) and the attributes, naming the
/// operand and the expected shape or type in its diagnostics.
class Norm_NormalizationOp<string mnemonic, string operandFormat>
    : Norm_Op<mnemonic, [
        Pure, AttrSizedOperandSegments, Norm_NormOpInterface,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                                  ["reifyResultShapes"]>,
        DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  // `y`, then `residual_out` (iff `residual`), then the statistics (iff
  // `return_stats`): one typed variadic group, laid out by the operands and
  // attributes, so that the custom and generic forms need no segment sizes.
  let results = (outs Norm_Named<Norm_FloatTensor, "y">:$y,
                      Variadic<Norm_Named<Norm_FloatTensor,
                          "residual_out', 'mean' or 'rstd">>:$extra_results);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let assemblyFormat = "$x " # operandFormat # [{
    (`residual` `(` $residual^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  code normClassDeclaration = [{
    using TensorValue = ::mlir::TypedValue<::mlir::RankedTensorType>;
    /// The `residual_out` result (x + residual), or null.
    TensorValue getResidualOut() { return getResultOrNull(getResidual() ? 1 : 0); }
    /// The `mean` result of `return_stats` (layer_norm), or null.
    TensorValue getMean() {
      return kSubtractsMean && getReturnStatsFlag()
                 ? getResultOrNull(getNumOutputs()) : TensorValue();
    }
    /// The `rstd` result of `return_stats`, or null.
    TensorValue getRstd() {
      return getReturnStatsFlag()
                 ? getResultOrNull(getNumOutputs() + (kSubtractsMean ? 1 : 0))
                 : TensorValue();
    }
    /// The results before the statistics: `y` and `residual_out`.
    unsigned getNumOutputs() { return getResidual() ? 2 : 1; }
    /// The number of statistics results the attributes ask for.
    unsigned getNumStatsResults() {
      return getReturnStatsFlag() ? (kSubtractsMean ? 2 : 1) : 0;
    }
  private:
    /// Result `index` (0 is `y`), or null when there are not that many
    /// (only in IR that fails to verify).
    TensorValue getResultOrNull(unsigned index) {
      return index != 0 && index < getNumResults()
                 ? ::llvm::cast<TensorValue>(getResult(index))
                 : TensorValue();
    }
  public:
  }];
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

def Norm_LayerNormOp : Norm_NormalizationOp<"layer_norm",
    "(`weight` `(` $weight^ `)`)? (`bias` `(` $bias^ `)`)?"> {
  let summary = "Layer normalization (mean and biased variance)";
  let description = [{
    Normalizes the trailing dimensions `axis..rank-1` of `x`:

    ```
    mu  = sum(x) / N
    var = sum((x - mu)^2) / N
    y   = (x - mu) * rsqrt(var + epsilon) * weight + bias
    ```

    Arithmetic happens in `compute_type` (default f32, f64 for f64 inputs);
    the statistics are accurate for rows with a large common offset.
    `weight` and `bias` have shape `x.shape[axis:]` and element type that of
    `x` or f32. With `residual`, the op first forms `s = x + residual`
    rounded to the element type of `x`, normalizes `s` and also returns it
    as `residual_out`. `cast_mode = before_weight` rounds the normalized
    value to the element type of `x` before the weight is applied.

    With `return_stats`, the op also returns the row statistics `mean` and
    `rstd = rsqrt(var + epsilon)` (after `residual_out`; shape: the leading
    dims `x.shape[:axis]`, element type: the compute type), as a training
    forward saves them for `norm.layer_norm_grad`.

    Example:

    ```mlir
    %y = norm.layer_norm %x weight(%g) bias(%b) {epsilon = 1.0e-05 : f32}
         : (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
           -> tensor<8x4096xbf16>
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_FloatInputTensor, "x">:$x,
    Optional<Norm_Named<Norm_FloatTensor, "weight">>:$weight,
    Optional<Norm_Named<Norm_FloatTensor, "bias">>:$bias,
    Optional<Norm_Named<Norm_FloatTensor, "residual">>:$residual,
    DefaultValuedAttr<Norm_EpsilonAttr, "1e-5">:$epsilon,
    DefaultValuedAttr<I64Attr, "-1">:$axis,
    OptionalAttr<Norm_ComputeTypeAttr>:$compute_type,
    DefaultValuedAttr<Norm_CastModeAttr,
                      "::mlir::norm::CastMode::final">:$cast_mode,
    UnitAttr:$return_stats
  );
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x,
                   CArg<"::mlir::Value", "{}">:$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"::mlir::Value", "{}">:$residual), [{
      build($_builder, $_state,
            ::mlir::norm::inferNormResultTypes(x, residual), x, weight, bias,
            residual, ::mlir::FloatAttr(), ::mlir::IntegerAttr(),
            ::mlir::TypeAttr(), ::mlir::norm::CastModeAttr(),
            ::mlir::UnitAttr());
    }]>
  ];
  let extraClassDeclaration = normClassDeclaration # [{
    bool getReturnStatsFlag() { return getReturnStats(); }
    static constexpr bool kSubtractsMean = true;
    static constexpr bool kHasReduction = true;
    TensorValue getAlpha() { return {}; }
    ::mlir::norm::EpsilonMode getEpsilonMode() {
      return ::mlir::norm::EpsilonMode::inside_sqrt;
    }
    ::llvm::APFloat getWeightOffset() { return ::llvm::APFloat(0.0f); }
  }];
}

//===----------------------------------------------------------------------===//
// RMSNormOp
//===----------------------------------------------------------------------===//

def Norm_RMSNormOp : Norm_NormalizationOp<"rms_norm",
    "(`weight` `(` $weight^ `)`)?"> {
  let summary = "Root-mean-square normalization";
  let description = [{
    Normalizes the trailing dimensions `axis..rank-1` of `x` by their root
    mean square:

    ```
    ms = sum(x^2) / N
    y  = x * r * (weight + weight_offset)
    ```

    where `r` is `rsqrt(ms + epsilon)` (`inside_sqrt`, LLaMA/T5),
    `1 / (sqrt(ms) + epsilon)` (`outside_sqrt`) or
    `1 / max(sqrt(ms), epsilon)` (`clamp`, ScaleNorm). `weight_offset` is
    added in the compute type (Gemma's `1 + w`). `weight` has shape
    `x.shape[axis:]` or is a scalar (`tensor<T>` or `tensor<1xT>`,
    ScaleNorm's gain). `residual`, `compute_type` and `cast_mode` behave as
    for `norm.layer_norm`; `cast_mode = before_weight` with a bf16 input is
    exactly Hugging Face's LLaMA RMSNorm. With `return_stats`, the op also
    returns `rstd`, the factor `r` of each row (after `residual_out`; shape:
    `x.shape[:axis]`, element type: the compute type).

    Example:

    ```mlir
    %y, %s = norm.rms_norm %x weight(%w) residual(%r) {epsilon = 1.0e-06 : f32}
         : (tensor<?x4096xf32>, tensor<4096xf32>, tensor<?x4096xf32>)
           -> (tensor<?x4096xf32>, tensor<?x4096xf32>)
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_FloatInputTensor, "x">:$x,
    Optional<Norm_Named<Norm_FloatTensor, "weight">>:$weight,
    Optional<Norm_Named<Norm_FloatTensor, "residual">>:$residual,
    DefaultValuedAttr<Norm_EpsilonAttr, "1e-6">:$epsilon,
    DefaultValuedAttr<Norm_EpsilonModeAttr,
                      "::mlir::norm::EpsilonMode::inside_sqrt">:$epsilon_mode,
    DefaultValuedAttr<F32Attr, "0.0">:$weight_offset,
    DefaultValuedAttr<I64Attr, "-1">:$axis,
    OptionalAttr<Norm_ComputeTypeAttr>:$compute_type,
    DefaultValuedAttr<Norm_CastModeAttr,
                      "::mlir::norm::CastMode::final">:$cast_mode,
    UnitAttr:$return_stats
  );
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x,
                   CArg<"::mlir::Value", "{}">:$weight,
                   CArg<"::mlir::Value", "{}">:$residual), [{
      build($_builder, $_state,
            ::mlir::norm::inferNormResultTypes(x, residual), x, weight,
            residual, ::mlir::FloatAttr(), ::mlir::norm::EpsilonModeAttr(),
            ::mlir::FloatAttr(), ::mlir::IntegerAttr(), ::mlir::TypeAttr(),
            ::mlir::norm::CastModeAttr(), ::mlir::UnitAttr());
    }]>
  ];
  let extraClassDeclaration = normClassDeclaration # [{
    bool getReturnStatsFlag() { return getReturnStats(); }
    static constexpr bool kSubtractsMean = false;
    static constexpr bool kHasReduction = true;
    TensorValue getAlpha() { return {}; }
    TensorValue getBias() { return {}; }
  }];
}

//===----------------------------------------------------------------------===//
// DyTOp
//===----------------------------------------------------------------------===//

def Norm_DyTOp : Norm_NormalizationOp<"dyt",
    "`alpha` `(` $alpha `)` (`weight` `(` $weight^ `)`)? "
    "(`bias` `(` $bias^ `)`)?"> {
  let summary = "Dynamic Tanh: tanh(alpha * x) * weight + bias";
  let description = [{
    Dynamic Tanh (DyT), the normalization-free replacement of LayerNorm:

    ```
    y = tanh(alpha * x) * weight + bias
    ```

    `alpha` is a learned scalar (`tensor<T>` or `tensor<1xT>`). There is no
    reduction; `axis` only fixes the shape `x.shape[axis:]` of `weight` and
    `bias`. `residual`, `compute_type` and `cast_mode` behave as for
    `norm.layer_norm`.

    Example:

    ```mlir
    %y = norm.dyt %x alpha(%a) weight(%w) bias(%b)
         : (tensor<8x768xf32>, tensor<f32>, tensor<768xf32>, tensor<768xf32>)
           -> tensor<8x768xf32>
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_FloatInputTensor, "x">:$x,
    Norm_Named<Norm_FloatScalarTensor, "alpha">:$alpha,
    Optional<Norm_Named<Norm_FloatTensor, "weight">>:$weight,
    Optional<Norm_Named<Norm_FloatTensor, "bias">>:$bias,
    Optional<Norm_Named<Norm_FloatTensor, "residual">>:$residual,
    DefaultValuedAttr<I64Attr, "-1">:$axis,
    OptionalAttr<Norm_ComputeTypeAttr>:$compute_type,
    DefaultValuedAttr<Norm_CastModeAttr,
                      "::mlir::norm::CastMode::final">:$cast_mode
  );
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::mlir::Value":$alpha,
                   CArg<"::mlir::Value", "{}">:$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"::mlir::Value", "{}">:$residual), [{
      build($_builder, $_state,
            ::mlir::norm::inferNormResultTypes(x, residual), x, alpha,
            weight, bias, residual, ::mlir::IntegerAttr(), ::mlir::TypeAttr(),
            ::mlir::norm::CastModeAttr());
    }]>
  ];
  let extraClassDeclaration = normClassDeclaration # [{
    /// DyT has no statistics.
    bool getReturnStatsFlag() { return false; }
    static constexpr bool kSubtractsMean = false;
    static constexpr bool kHasReduction = false;
    ::llvm::APFloat getEpsilon() { return ::llvm::APFloat(0.0f); }
    ::mlir::norm::EpsilonMode getEpsilonMode() {
      return ::mlir::norm::EpsilonMode::inside_sqrt;
    }
    ::llvm::APFloat getWeightOffset() { return ::llvm::APFloat(0.0f); }
  }];
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

def Norm_QuantizeOp : Norm_Op<"quantize", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                              ["reifyResultShapes"]>]> {
  let summary = "FP8, FP4 or int8 quantization along the last dim";
  let description = [{
    Quantizes `input` (f16, bf16 or f32) along its last dim to `f8E4M3FN`
    (QMAX = 448) or `i8` (QMAX = 127, stored range [-128, 127]).

    Static form: `scale(%s)` with `%s : tensor<f32>` or `tensor<1xf32>`;
    one result. Dynamic form (no `scale`): a second result holds the f32
    scales, one per group of `group_size` elements of the last dim
    (`group_size = 0`, the default: one per row, "per token"), of the input
    shape with the last dim `N / group_size` (1 per token). For a group,
    `s = max(min(amax, scale_ub) / QMAX, min_scale)` with `amax = max |y|`
    over the group, `scale_ub` (default +inf) and `min_scale` (default
    `1 / (QMAX * 512)`).

    Per element: `v = y * (1 / s)` in f32 (the reciprocal once per scale).
    f8E4M3FN: NaN stays NaN, other values are clamped to [-448, 448] and
    rounded to nearest even (keeping the sign of zero). i8: NaN becomes 0,
    other values are rounded to nearest even and clamped to [-128, 127]. A
    NaN in a dynamic group makes its `amax` and scale NaN.

    Block-scaled forms (dynamic, chosen by the result element types and
    `group_size`):

    | form | `q` | `group_size` | scales |
    |---|---|---|---|
    | MXFP8 | `f8E4M3FN` | 32 | `f8E8M0FNU` |
    | FP8 1x128 | `f8E4M3FN` | 128 | `f8E8M0FNU` |
    | MXFP4 | `f4E2M1FN` | 32 | `f8E8M0FNU` |
    | NVFP4 | `f4E2M1FN` | 16 | `f8E4M3FN`, with `global_scale(%g)` |

    A `f8E8M0FNU` scale is the power of two `2^X`: `scale_rounding = floor`
    (OCP MX: `X = floor(log2(amax)) - emax`, emax 8 for e4m3, 2 for e2m1) or
    `up` (the smallest power of two `>= amax / QMAX`), X clamped to
    [-127, 127], -127 for an all-zero group; elements `y / 2^X` rounded to
    nearest even with saturation. NVFP4 (`%g : tensor<f32>`, the per-tensor
    encode scale): `sf = e4m3(g * (amax / 6))`, `q = e2m1(y * (g / sf))`
    (0 when `sf` is 0). A NaN in a group makes its scale NaN, its e4m3
    elements NaN and its e2m1 elements 0. `scale_layout = swizzled_128x4`
    stores the scales as the flat tiles of the block-scaled matmuls:
    `roundup(M, 128) * roundup(N / G, 4)` scales, M the product of the
    leading dims, padding 0.

    Example:

    ```mlir
    %q = norm.quantize %y scale(%s)
         : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
    %q, %sc = norm.quantize %y {group_size = 128 : i64}
         : (tensor<8x4096xbf16>) -> (tensor<8x4096xf8E4M3FN>, tensor<8x32xf32>)
    %q, %sc = norm.quantize %y global_scale(%g) {group_size = 16 : i64,
             scale_layout = #norm<scale_layout swizzled_128x4>}
         : (tensor<8x4096xbf16>, tensor<f32>)
        -> (tensor<8x4096xf4E2M1FN>, tensor<32768xf8E4M3FN>)
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_QuantizeInputTensor, "input">:$input,
    Optional<Norm_Named<Norm_F32ScalarTensor, "scale">>:$scale,
    Optional<Norm_Named<Norm_F32ScalarTensor, "global_scale">>:$global_scale,
    DefaultValuedAttr<I64Attr, "0">:$group_size,
    DefaultValuedAttr<F32Attr,
                      "std::numeric_limits<double>::infinity()">:$scale_ub,
    OptionalAttr<F32Attr>:$min_scale,
    DefaultValuedAttr<Norm_ScaleRoundingAttr,
                      "::mlir::norm::ScaleRounding::floor">:$scale_rounding,
    DefaultValuedAttr<Norm_ScaleLayoutAttr,
                      "::mlir::norm::ScaleLayout::row_major">:$scale_layout
  );
  let results = (outs Norm_Named<Norm_QuantizedTensor, "q">:$q,
                      Optional<Norm_Named<Norm_QuantizeScalesTensor,
                                          "scales">>:$scales);
  let builders = [
    // Result types from `input`: q of `quantizedType` and, without `scale`,
    // the f32 scales of groups of `groupSize` (0: per token).
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$scale,
                   "::mlir::Type":$quantizedType,
                   CArg<"int64_t", "0">:$groupSize), [{
      build($_builder, $_state,
            ::mlir::norm::inferQuantizeResultTypes(input, scale,
                                                   quantizedType, groupSize),
            input, scale, /*global_scale=*/::mlir::Value(),
            $_builder.getI64IntegerAttr(groupSize), ::mlir::FloatAttr(),
            ::mlir::FloatAttr(), ::mlir::norm::ScaleRoundingAttr(),
            ::mlir::norm::ScaleLayoutAttr());
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `)`)?
    (`global_scale` `(` $global_scale^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The type of `input`.
    ::mlir::RankedTensorType getInputType() { return getInput().getType(); }
    /// The element type of `q`: f8E4M3FN, f4E2M1FN or i8.
    ::mlir::Type getQuantizedElementType() {
      return getQ().getType().getElementType();
    }
    /// The element type of `scales` (null in the static form).
    ::mlir::Type getScalesElementType() {
      return getScales() ? getScales().getType().getElementType()
                         : ::mlir::Type();
    }
    /// True for the block-scaled forms (scales of f8E8M0FNU or f8E4M3FN).
    bool isBlockScaled() {
      return getScales() && !getScalesElementType().isF32();
    }
    /// True for the MX and 1x128 forms (power-of-two f8E8M0FNU scales).
    bool isPowerOfTwoScaled() {
      return getScales() &&
             ::llvm::isa<::mlir::Float8E8M0FNUType>(getScalesElementType());
    }
    /// 448 for f8E4M3FN, 6 for f4E2M1FN, 127 for i8.
    double getQMax();
    /// `min_scale`, or its default 1 / (QMAX * 512), as an f32 value.
    float getMinScaleValue();
    /// The number of elements of a group: `group_size`, or N when 0
    /// (dynamic when N is).
    int64_t getStaticGroupSize();
    /// True for the dynamic form (scales computed, second result).
    bool isDynamic() { return !getScale(); }
  }];
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

/// Common base of the three gradient ops: `dy` and `x` (the normalized
/// input: the residual sum when the forward had a residual), the forward's
/// saved statistics or `alpha`, its optional `weight`, and the results `dx`,
/// then `dweight` (iff `weight`), `dbias` (iff `has_bias`) and, for DyT,
/// `dalpha`. Checked by one shared verifier.
class Norm_GradOp<string mnemonic, string operandFormat>
    : Norm_Op<mnemonic, [Pure, Norm_NormGradOpInterface]> {
  // `dx`, then `dweight` (iff `weight`), `dbias` (iff `has_bias`) and
  // `dalpha` (dyt): one typed variadic group, laid out by the operands and
  // attributes.
  let results = (outs Variadic<Norm_Named<Norm_FloatTensor,
                      "dx', 'dweight', 'dbias' or 'dalpha">>:$results);
  let hasVerifier = 1;
  let assemblyFormat = "$dy `,` $x " # operandFormat # [{
    (`weight` `(` $weight^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  code gradClassDeclaration = [{
    using TensorValue = ::mlir::TypedValue<::mlir::RankedTensorType>;
    /// `dx`: the gradient with respect to `x`, of x's type.
    TensorValue getDx() {
      return ::llvm::cast<TensorValue>(getResults().front());
    }
    /// `dweight`, or null without `weight`.
    TensorValue getDweight() {
      return getWeight() ? ::llvm::cast<TensorValue>(getResults()[1])
                         : TensorValue();
    }
    /// `dbias`, or null without `has_bias`.
    TensorValue getDbias() {
      return getHasBiasFlag()
                 ? ::llvm::cast<TensorValue>(getResults()[getWeight() ? 2 : 1])
                 : TensorValue();
    }
    /// The number of results the operands and attributes imply.
    unsigned getExpectedNumResults() {
      return 1 + (getWeight() ? 1 : 0) + (getHasBiasFlag() ? 1 : 0) +
             (kHasAlpha ? 1 : 0);
    }
    /// First normalized dimension, in [0, rank).
    int64_t getNormalizedDim() {
      return ::mlir::norm::detail::getNormalizedDim(
          static_cast<int64_t>(getAxis()), getX().getType().getRank());
    }
    /// `compute_type`, or the default: f32 for f16/bf16/f32 inputs, f64 for
    /// f64.
    ::mlir::Type getComputeElementType() {
      auto explicitType = getComputeType();
      return ::mlir::norm::detail::getComputeElementType(
          explicitType ? ::mlir::Type(*explicitType) : ::mlir::Type(),
          getX().getType().getElementType());
    }
  }];
}

def Norm_LayerNormGradOp : Norm_GradOp<"layer_norm_grad",
    "`mean` `(` $mean `)` `rstd` `(` $rstd `)`"> {
  let summary = "Gradients of norm.layer_norm";
  let description = [{
    From the upstream gradient `dy`, the normalized input `x` and the
    forward's statistics `mean` and `rstd` (shape: the leading dims of `x`,
    element type: the compute type), with `xh = (x - mean) * rstd` and
    `g = dy * weight`:

    ```
    dx      = rstd * (g - mean(g) - xh * mean(g * xh))   (row means over N)
    dweight = sum over the leading dims of dy * xh        (iff weight)
    dbias   = sum over the leading dims of dy             (iff has_bias)
    ```

    `has_bias` says the forward had a bias, so `dbias` is returned.
    Example:

    ```mlir
    %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias}
        : (tensor<8x4096xbf16>, tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<4096xbf16>)
          -> (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_FloatTensor, "dy">:$dy,
    Norm_Named<Norm_FloatInputTensor, "x">:$x,
    Norm_Named<Norm_FloatTensor, "mean">:$mean,
    Norm_Named<Norm_FloatTensor, "rstd">:$rstd,
    Optional<Norm_Named<Norm_FloatTensor, "weight">>:$weight,
    DefaultValuedAttr<I64Attr, "-1">:$axis,
    OptionalAttr<Norm_ComputeTypeAttr>:$compute_type,
    UnitAttr:$has_bias
  );
  let extraClassDeclaration = gradClassDeclaration # [{
    static constexpr bool kHasAlpha = false;
    bool getHasBiasFlag() { return getHasBias(); }
  }];
}

def Norm_RMSNormGradOp : Norm_GradOp<"rms_norm_grad",
    "`rstd` `(` $rstd `)`"> {
  let summary = "Gradients of norm.rms_norm (epsilon_mode inside_sqrt)";
  let description = [{
    From the upstream gradient `dy`, the normalized input `x` and the
    forward's `rstd` (`rsqrt(mean(x^2) + epsilon)`, shape: the leading dims
    of `x`, element type: the compute type), with `xh = x * rstd` and
    `g = dy * (weight + weight_offset)`:

    ```
    dx      = rstd * (g - xh * mean(g * xh))              (row mean over N)
    dweight = sum over the leading dims of dy * xh        (iff weight)
    ```

    A scalar weight (`tensor<T>`, `tensor<1xT>`) gets the sum over all
    elements. Only the `inside_sqrt` forward has this gradient; the op has
    no epsilon attributes (rstd carries epsilon). Example:

    ```mlir
    %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w)
        : (tensor<?x4096xf32>, tensor<?x4096xf32>, tensor<?xf32>, tensor<4096xf32>)
          -> (tensor<?x4096xf32>, tensor<4096xf32>)
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_FloatTensor, "dy">:$dy,
    Norm_Named<Norm_FloatInputTensor, "x">:$x,
    Norm_Named<Norm_FloatTensor, "rstd">:$rstd,
    Optional<Norm_Named<Norm_FloatTensor, "weight">>:$weight,
    DefaultValuedAttr<F32Attr, "0.0">:$weight_offset,
    DefaultValuedAttr<I64Attr, "-1">:$axis,
    OptionalAttr<Norm_ComputeTypeAttr>:$compute_type
  );
  let extraClassDeclaration = gradClassDeclaration # [{
    static constexpr bool kHasAlpha = false;
    bool getHasBiasFlag() { return false; }
  }];
}

def Norm_DyTGradOp : Norm_GradOp<"dyt_grad", "`alpha` `(` $alpha `)`"> {
  let summary = "Gradients of norm.dyt";
  let description = [{
    From the upstream gradient `dy`, the input `x`, `alpha` and `weight`,
    with `t = tanh(alpha * x)`:

    ```
    dx      = dy * weight * alpha * (1 - t^2)
    dweight = sum over the leading dims of dy * t         (iff weight)
    dbias   = sum over the leading dims of dy             (iff has_bias)
    dalpha  = sum over all elements of dy * weight * x * (1 - t^2)
    ```

    `dalpha` (last result) has the type of `alpha`. Example:

    ```mlir
    %dx, %dw, %db, %da = norm.dyt_grad %dy, %x alpha(%a) weight(%w) {has_bias}
        : (tensor<8x768xf32>, tensor<8x768xf32>, tensor<f32>, tensor<768xf32>)
          -> (tensor<8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<f32>)
    ```
  }];
  let arguments = (ins
    Norm_Named<Norm_FloatTensor, "dy">:$dy,
    Norm_Named<Norm_FloatInputTensor, "x">:$x,
    Norm_Named<Norm_FloatScalarTensor, "alpha">:$alpha,
    Optional<Norm_Named<Norm_FloatTensor, "weight">>:$weight,
    DefaultValuedAttr<I64Attr, "-1">:$axis,
    OptionalAttr<Norm_ComputeTypeAttr>:$compute_type,
    UnitAttr:$has_bias
  );
  let extraClassDeclaration = gradClassDeclaration # [{
    static constexpr bool kHasAlpha = true;
    bool getHasBiasFlag() { return getHasBias(); }
    /// `dalpha`, the last result.
    TensorValue getDalpha() {
      return ::llvm::cast<TensorValue>(getResults().back());
    }
  }];
}

#endif // NORM_DIALECT_NORM_IR_NORMOPS_TD
