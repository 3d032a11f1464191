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

    Decomposed static quantization after a norm (or of any f16/bf16/f32
    tensor) becomes `norm.quantize`: `y / s` or `y * (1/s)` in f32 with a
    per-tensor f32 scale, clamped to [-448, 448] and truncated to f8E4M3FN,
    or rounded with `math.roundeven`, clamped to [-128, 127] and converted
    with `arith.fptosi` to i8. `y / s` is raised as the op's `y * (1/s)`
    (at most one quantization step apart, at rare ties). A clamp, floor or
    max-reduction that turns a NaN into a number (`maxnumf`/`minnumf`,
    `cmpf` + `select` picking the bound on NaN, TOSA `nan_mode = IGNORE`)
    differs from the op, which propagates NaN: it is raised only when its
    `cmpf`/`maxnumf` carries `fastmath<nnan>` or with `assume-no-nans`.
    See docs/Passes.md.

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
           "Emit a remark at every declined candidate saying why">,
    Option<"assumeNoNans", "assume-no-nans", "bool", /*default=*/"false",
           "Assume no value is NaN (like -ffinite-math-only): raise clamps "
           "and max-reductions that would turn a NaN into a number">
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
}

def NormFoldMatmulWeightsPass : Pass<"norm-fold-matmul-weights"> {
  let summary = "Fold norm weights and biases into the constant RHS of matmul consumers";
  let description = [{
    FlashNorm-style weight folding. When every user of a norm op's result is
    a matmul whose right-hand side is a constant (`linalg.matmul`, its
    transposed-B form, `linalg.transpose` of a constant feeding
    `linalg.matmul` as torch-mlir emits `nn.Linear`, `linalg.batch_matmul`,
    and `linalg.matmul` after a `tensor.collapse_shape` of the result; in
    TOSA form `tosa.matmul` on the result or on a row-keeping `tosa.reshape`
    of it, with a constant or `tosa.transpose` of a constant), the
    per-column `weight` (plus `weight_offset`) is folded into the rows of
    each RHS (`W'[k, n] = w'[k] * W[k, n]`) and the `bias` into a row vector
    added to each product (`c = bias @ W`). The norm op loses its weight and
    bias; several consumers share the one rewritten op. A `dense_resource`
    RHS is folded into a new blob; the constants left unused are erased.

    With `defer-scale` (rms_norm without residual, `cast_mode = final`), the
    per-row `1/rms` also moves after the matmul as an epilogue, so the
    matmul reads raw `x`: `y @ W' = diag(r) (x @ W')`. LayerNorm is never
    deferred (its mean correction would bring back large-offset
    cancellation).

    The result changes by rounding only: the products are reassociated and
    the folded RHS is rounded to its element type (see the tolerances in the
    execution tests). Not applied when a RHS is not constant or larger than
    `max-rhs-elements`, when the result has other users, or when shapes do
    not line up; such candidates are counted and, with `remarks=true`,
    explained.

    ```mlir
    // Before
    %y = norm.rms_norm %x weight(%w) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    %o = linalg.matmul ins(%y, %W : tensor<8x64xf32>, tensor<64x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
    // After
    %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %o = linalg.matmul ins(%y, %Wfolded : tensor<8x64xf32>, tensor<64x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"maxRhsElements", "max-rhs-elements", "int64_t",
           /*default=*/"16777216",
           "Largest constant RHS (in elements) that is folded">,
    Option<"deferScale", "defer-scale", "bool", /*default=*/"false",
           "Also move rms_norm's per-row 1/rms after the matmul">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every declined candidate saying why">
  ];
}

def NormFuseMatmulPass : Pass<"norm-fuse-matmul"> {
  let summary = "Tile-and-fuse norm ops with adjacent matmuls over row tiles";
  let description = [{
    Prologue fusion: a matmul (`linalg.matmul`, `linalg.batch_matmul`) whose
    left-hand side is produced by a norm op is tiled over its rows
    (`tile-rows` rows per tile) and the norm op is fused into the loop, so
    each normalized row tile is consumed while it is in cache. Epilogue
    fusion: a norm op whose input is produced by a matmul is tiled over its
    rows and the matmul is fused into the loop; a tile holds whole rows, so
    the row statistics are complete. Both use the ops' TilingInterface and
    upstream `scf` tile-and-fuse; static and dynamic row counts work. The
    result is regular tensor IR that norm-cpu-pipeline lowers.

    ```mlir
    // Before
    %y = norm.rms_norm %x weight(%w) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %o = linalg.matmul ins(%y, %W : ...) outs(%z : tensor<?x32xf32>) -> tensor<?x32xf32>
    // After (sketch)
    %o = scf.for %i = %c0 to %m step %c16 iter_args(%acc = %z) {
      %xs = tensor.extract_slice %x[%i, 0] [%t, 64] [1, 1]
      %ys = norm.rms_norm %xs weight(%w) : ...
      %os = linalg.matmul ins(%ys, %W : ...) outs(...)
      scf.yield (tensor.insert_slice %os into %acc[%i, 0] ...)
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"tileRows", "tile-rows", "int64_t", /*default=*/"16",
           "Rows per tile (must be positive)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at every declined candidate saying why">
  ];
}

#endif // NORM_DIALECT_NORM_TRANSFORMS_PASSES_TD
