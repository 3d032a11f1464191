//===- Passes.td - Norm conversion passes ------------------*- tablegen -*-===//
//
// Lowerings of norm ops: portable linalg, direct vector loops, GPU kernels.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_PASSES_TD
#define NORM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def NormToLinalgPass : Pass<"norm-to-linalg"> {
  let summary = "Decompose norm ops into linalg.generic on tensors";
  let description = [{
    Rewrites every norm op into `linalg.generic` ops on tensors: one
    reduction per row statistic over the normalized dimensions, then one
    elementwise op that applies the statistics, weight, bias and casts. It is
    the ops' `AggregatedOpInterface` decomposition applied everywhere, the
    portable form for a host compiler with its own code generation.
    LayerNorm accumulates on data shifted by the first element of each row
    (exact), so rows with a large common offset stay accurate.

    ```mlir
    // Before
    %y = norm.rms_norm %x weight(%w) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    // After (sketch)
    %sq = linalg.generic {iterator_types = ["parallel", "reduction"]} ins(%x) outs(%zeros) { x*x + acc }
    %r  = linalg.generic {iterator_types = ["parallel"]} ins(%sq) outs(%e) { rsqrt(acc/N + eps) }
    %y  = linalg.generic {iterator_types = ["parallel", "parallel"]} ins(%x, %r, %w) outs(%init) { x*r*w }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // NORM_CONVERSION_PASSES_TD
