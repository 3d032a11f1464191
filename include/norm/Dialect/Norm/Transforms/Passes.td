//===- Passes.td - Norm dialect transformation passes ------*- tablegen -*-===//
//
// Passes that raise decomposed normalizations into norm ops and fuse norm ops
// with their neighbours.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_TRANSFORMS_PASSES_TD
#define NORM_DIALECT_NORM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NormRaisePass : Pass<"norm-raise"> {
  let summary = "Raise decomposed LayerNorm, RMSNorm and DyT into norm ops";
  let description = [{
    Recognizes normalizations written out as tensor-level elementwise and
    reduction ops, the way frontends emit them, and replaces each chain by
    one norm op of exactly the same semantics:

    - `linalg.generic` chains and named linalg ops (`linalg.reduce`,
      `linalg.broadcast`, `linalg.add`/`sub`/`mul`/`div`, `linalg.fill`),
      as torch-mlir emits `aten.layer_norm`, `aten.native_layer_norm`,
      `aten.rms_norm` and Hugging Face's RMSNorm;
    - TOSA as torch-mlir's TorchToTosa emits it (`tosa.reduce_sum` per axis,
      the mean as a multiply by `1/N`, `tosa.mul` with its shift, `tosa.rsqrt`,
      `tosa.reciprocal`, `tosa.pow`, `tosa.clamp`, `tosa.tanh`);
    - tensor-level `arith`/`math` ops;
    - through `tensor.expand_shape`/`collapse_shape`, `tosa.reshape` and
      broadcasts of the row statistics and of the parameters.

    Attributes are set to what the decomposed IR computes: the epsilon value
    in the arithmetic type (an f64 constant truncated to f32 gives that f32
    value), the normalized `axis`, `compute_type` for the LLaMA-style
    `extf ... truncf` upcast, `cast_mode = before_weight` for Hugging Face's
    `weight * x.to(input_dtype)`, `weight_offset` for Gemma's `(1 + w)`, and
    `epsilon_mode = outside_sqrt` or `clamp` (ScaleNorm) for RMSNorm.

    A chain is left untouched when anything differs from the op semantics:
    unbiased variance, a reduction over other dims than the trailing
    normalized ones, an intermediate (such as the mean) used outside the
    chain, an epsilon that is not one constant, parameters of the wrong
    shape. Each declined candidate is counted, and with `remarks=true` a
    remark at the candidate says why.

    ```mlir
    // Before (sketch of torch-mlir's aten.rms_norm)
    %sq  = linalg.generic ins(%x, %x) { mulf }                  : tensor<2x4x32xf32>
    %sum = linalg.generic ins(%sq) outs(%zero) { addf }         : tensor<2x4x1xf32>
    %ms  = linalg.generic ins(%sum) { divf %in, 32.0 }
    %r   = linalg.generic ins(%ms) { addf %in, truncf(1e-6 : f64); rsqrt }
    %n   = linalg.generic ins(%x, %r) { mulf }
    %y   = linalg.generic ins(%n, %w) { mulf }
    // After
    %y = norm.rms_norm %x weight(%w) {epsilon = 9.99999997E-7 : f32}
         : (tensor<2x4x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::norm::NormDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every declined candidate saying why">
  ];
  let statistics = [
    Statistic<"numRaisedLayerNorm", "raised-layer-norm",
              "Number of chains raised to norm.layer_norm">,
    Statistic<"numRaisedRMSNorm", "raised-rms-norm",
              "Number of chains raised to norm.rms_norm">,
    Statistic<"numRaisedDyT", "raised-dyt",
              "Number of chains raised to norm.dyt">,
    Statistic<"numDeclined", "declined",
              "Number of normalization candidates left unchanged">
  ];
}

def NormFuseResidualPass : Pass<"norm-fuse-residual"> {
  let summary = "Fuse the residual add feeding a norm op into the op";
  let description = [{
    Rewrites a norm op whose input is the sum of two tensors of its type (a
    tensor-level `arith.addf`, `linalg.add`, an elementwise `linalg.generic`
    adding its two inputs, or `tosa.add` without broadcasting) into the same
    op with a `residual` operand. The op rounds `x + residual` to the element
    type of `x` exactly as the add did, and returns the sum as
    `residual_out`, which replaces every other use of the add. Chains of
    pre-norm blocks fuse at every step.

    Declined candidates (a broadcasting add, an add in another type, a norm
    that already has a residual) are counted, and explained by a remark with
    `remarks=true`.

    ```mlir
    // Before
    %h = arith.addf %x, %attn : tensor<8x4096xf32>
    %y = norm.rms_norm %h weight(%w) : (tensor<8x4096xf32>, tensor<4096xf32>) -> tensor<8x4096xf32>
    %o = arith.addf %h, %mlp : tensor<8x4096xf32>
    // After
    %y, %h = norm.rms_norm %x weight(%w) residual(%attn)
        : (tensor<8x4096xf32>, tensor<4096xf32>, tensor<8x4096xf32>) -> (tensor<8x4096xf32>, tensor<8x4096xf32>)
    %o = arith.addf %h, %mlp : tensor<8x4096xf32>
    ```
  }];
  let dependentDialects = ["::mlir::norm::NormDialect"];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every declined candidate saying why">
  ];
  let statistics = [
    Statistic<"numFused", "fused", "Number of residual adds fused">,
    Statistic<"numDeclined", "declined",
              "Number of add-fed norm ops left unchanged">
  ];
}

#endif // NORM_DIALECT_NORM_TRANSFORMS_PASSES_TD
