// RUN: norm-opt %s -norm-fold-matmul-weights -split-input-file | FileCheck %s
// RUN: norm-opt %s --pass-pipeline="builtin.module(func.func(norm-fold-matmul-weights{defer-scale=true}))" -split-input-file | FileCheck %s --check-prefix=DEFER
// RUN: not norm-opt %s -norm-fold-matmul-weights="max-rhs-elements=0" 2>&1 | FileCheck %s --check-prefix=BADOPT

// BADOPT: norm-fold-matmul-weights: option 'max-rhs-elements' must be positive, got 0

// RMSNorm weight folded into the rows of a constant RHS: W'[k, n] = w[k] * W[k, n].
// CHECK-LABEL: func @rms_norm_matmul
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
//       CHECK: %[[W:.*]] = arith.constant dense<{{\[\[}}2.000000e+00, 4.000000e+00], [1.500000e+00, 2.000000e+00]]> : tensor<2x2xf32>
//       CHECK: linalg.matmul ins(%[[Y]], %[[W]] : tensor<4x2xf32>, tensor<2x2xf32>)
// With defer-scale the matmul reads raw x and the rows are scaled after it.
// DEFER-LABEL: func @rms_norm_matmul
//  DEFER-SAME: (%[[X:.*]]: tensor<4x2xf32>)
//       DEFER: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       DEFER: math.rsqrt
//       DEFER: %[[MM:.*]] = linalg.matmul ins(%[[X]], %{{.*}} : tensor<4x2xf32>, tensor<2x2xf32>)
//       DEFER: %[[S:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<4x2xf32>, tensor<4xf32>)
//   DEFER-NOT: norm.rms_norm
//       DEFER: return %[[S]]
func.func @rms_norm_matmul(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// LayerNorm bias becomes bias @ W added to the product; nn.Linear as
// torch-mlir emits it (transpose of a [N, K] constant) is folded in the
// constant's own layout. w' = w + 0.
// CHECK-LABEL: func @layer_norm_linear
//       CHECK: %[[Y:.*]] = norm.layer_norm %{{.*}} : (tensor<?x3xf32>) -> tensor<?x3xf32>
//       CHECK: %[[WT:.*]] = arith.constant dense<{{\[\[}}2.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<1x3xf32>
//       CHECK: %[[T:.*]] = linalg.transpose ins(%[[WT]] : tensor<1x3xf32>)
//       CHECK: %[[MM:.*]] = linalg.matmul ins(%[[Y]], %[[T]] : tensor<?x3xf32>, tensor<3x1xf32>)
//       CHECK: %[[C:.*]] = arith.constant dense<4.000000e+00> : tensor<1xf32>
//       CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[C]] : tensor<?x1xf32>, tensor<1xf32>)
//       CHECK: return %[[R]]
func.func @layer_norm_linear(%x: tensor<?x3xf32>, %z: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %g = arith.constant dense<[1.0, 0.5, 2.0]> : tensor<3xf32>
  %b = arith.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf32>
  %lin = arith.constant dense<[[2.0, 2.0, 0.0]]> : tensor<1x3xf32>
  %e = tensor.empty() : tensor<3x1xf32>
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %t = linalg.transpose ins(%lin : tensor<1x3xf32>) outs(%e : tensor<3x1xf32>) permutation = [1, 0]
  %o = linalg.matmul ins(%y, %t : tensor<?x3xf32>, tensor<3x1xf32>) outs(%z : tensor<?x1xf32>) -> tensor<?x1xf32>
  return %o : tensor<?x1xf32>
}

// -----

// Three projections share the rewritten norm op (Gemma offset folded too).
// CHECK-LABEL: func @three_projections
//       CHECK: norm.rms_norm %{{.*}} : (tensor<2x2xbf16>) -> tensor<2x2xbf16>
//   CHECK-NOT: weight_offset
//       CHECK: linalg.matmul
//       CHECK: linalg.matmul
//       CHECK: linalg.matmul
func.func @three_projections(%x: tensor<2x2xbf16>, %z: tensor<2x2xbf16>) -> (tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<2x2xbf16>) {
  %w = arith.constant dense<[0.5, -0.5]> : tensor<2xbf16>
  %q = arith.constant dense<1.0> : tensor<2x2xbf16>
  %k = arith.constant dense<2.0> : tensor<2x2xbf16>
  %v = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xbf16>
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<2x2xbf16>, tensor<2xbf16>) -> tensor<2x2xbf16>
  %0 = linalg.matmul ins(%y, %q : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%z : tensor<2x2xbf16>) -> tensor<2x2xbf16>
  %1 = linalg.matmul ins(%y, %k : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%z : tensor<2x2xbf16>) -> tensor<2x2xbf16>
  %2 = linalg.matmul ins(%y, %v : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%z : tensor<2x2xbf16>) -> tensor<2x2xbf16>
  return %0, %1, %2 : tensor<2x2xbf16>, tensor<2x2xbf16>, tensor<2x2xbf16>
}

// -----

// f16 subnormal elements of the RHS are kept where the fold leaves them
// exact (a weight of 1, or 2 doubling a subnormal), and the normal products
// fold as usual; only a product that loses range is declined
// (norm-fold-matmul-weights-declined.mlir).
// CHECK-LABEL: func @f16_subnormal_rhs_kept
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<2x2xf16>) -> tensor<2x2xf16>
//       CHECK: %[[W:.*]] = arith.constant dense<{{\[\[}}6.020070e-06, 1.000000e+00], [5.960460e-06, 3.000000e+00]]> : tensor<2x2xf16>
//       CHECK: linalg.matmul ins(%[[Y]], %[[W]]
func.func @f16_subnormal_rhs_kept(%x: tensor<2x2xf16>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf16>
  %m = arith.constant dense<[[6.0e-6, 1.0], [3.0e-6, 1.5]]> : tensor<2x2xf16>
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf16>, tensor<2x2xf16>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}
