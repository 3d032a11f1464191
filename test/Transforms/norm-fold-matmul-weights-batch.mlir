// RUN: norm-opt %s -norm-fold-matmul-weights="remarks=true" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: norm-opt %s --pass-pipeline="builtin.module(func.func(norm-fold-matmul-weights{defer-scale=true}))" -split-input-file | FileCheck %s --check-prefix=DEFER

// norm-fold-matmul-weights on linalg.batch_matmul: a rank-3 norm result
// [B, S, K] feeding batch_matmuls with a constant RHS [B, K, N].

// RMSNorm weight folded into the rows of every batch of the RHS:
// W'[b, k, n] = w[k] * W[b, k, n].
// CHECK-LABEL: func @rms_norm_batch_matmul
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
//       CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[}}2.000000e+00, 4.000000e+00], [1.500000e+00, 2.000000e+00]], {{\[\[}}1.000000e+01, 1.200000e+01], [3.500000e+00, 4.000000e+00]]]> : tensor<2x2x2xf32>
//       CHECK: %[[O:.*]] = linalg.batch_matmul ins(%[[Y]], %[[W]] : tensor<2x3x2xf32>, tensor<2x2x2xf32>)
//       CHECK: return %[[O]]
// With defer-scale the batch_matmul reads raw x and each row [b, s] of the
// product is scaled after it.
// DEFER-LABEL: func @rms_norm_batch_matmul
//  DEFER-SAME: (%[[X:.*]]: tensor<2x3x2xf32>)
//       DEFER: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
//       DEFER: math.rsqrt
//       DEFER: %[[MM:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<2x3x2xf32>, tensor<2x2x2xf32>)
//       DEFER: %[[S:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[R]] : tensor<2x3x2xf32>, tensor<2x3xf32>)
//   DEFER-NOT: norm.rms_norm
//       DEFER: return %[[S]]
func.func @rms_norm_batch_matmul(%x: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %z = arith.constant dense<0.0> : tensor<2x3x2xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<2x3x2xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
  %o = linalg.batch_matmul ins(%y, %m : tensor<2x3x2xf32>, tensor<2x2x2xf32>) outs(%z : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return %o : tensor<2x3x2xf32>
}

// -----

// LayerNorm (dynamic sequence dim): the weight is folded into the RHS and
// the bias becomes one row vector per batch, c[b, n] = sum_k bias[k] *
// W[b, k, n], added to the product. LayerNorm is never deferred.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @layer_norm_batch_matmul
//       CHECK: %[[Y:.*]] = norm.layer_norm %{{.*}} : (tensor<2x?x2xf32>) -> tensor<2x?x2xf32>
//       CHECK: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [2.000000e+00, 2.500000e+00, 3.000000e+00]], {{\[\[}}-1.000000e+00, 0.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00]]]> : tensor<2x2x3xf32>
//       CHECK: %[[MM:.*]] = linalg.batch_matmul ins(%[[Y]], %[[W]] : tensor<2x?x2xf32>, tensor<2x2x3xf32>)
//       CHECK: %[[C:.*]] = arith.constant dense<{{\[\[}}-3.000000e+00, -3.000000e+00, -3.000000e+00], [-3.000000e+00, -2.000000e+00, -1.000000e+00]]> : tensor<2x3xf32>
//       CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], {{.*}}} ins(%[[MM]], %[[C]] : tensor<2x?x3xf32>, tensor<2x3xf32>)
//       CHECK: arith.addf
//       CHECK: return %[[R]]
// DEFER-LABEL: func @layer_norm_batch_matmul
//       DEFER: norm.layer_norm %{{.*}} : (tensor<2x?x2xf32>) -> tensor<2x?x2xf32>
//       DEFER: linalg.batch_matmul
func.func @layer_norm_batch_matmul(%x: tensor<2x?x2xf32>, %z: tensor<2x?x3xf32>) -> tensor<2x?x3xf32> {
  %g = arith.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %b = arith.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %m = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[-1.0, 0.0, 1.0], [2.0, 2.0, 2.0]]]> : tensor<2x2x3xf32>
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<2x?x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x?x2xf32>
  %o = linalg.batch_matmul ins(%y, %m : tensor<2x?x2xf32>, tensor<2x2x3xf32>) outs(%z : tensor<2x?x3xf32>) -> tensor<2x?x3xf32>
  return %o : tensor<2x?x3xf32>
}

// -----

// Not folded: a batch_matmul with its own indexing maps (B transposed).
// CHECK-LABEL: func @batch_matmul_transposed_b
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
//       CHECK: linalg.batch_matmul
#bA = affine_map<(b, m, n, k) -> (b, m, k)>
#bB = affine_map<(b, m, n, k) -> (b, n, k)>
#bC = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batch_matmul_transposed_b(%x: tensor<2x3x2xf32>, %z: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<1.0> : tensor<2x2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: batch_matmul with user-defined indexing maps}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x3x2xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
  %o = linalg.batch_matmul indexing_maps = [#bA, #bB, #bC] ins(%y, %m : tensor<2x3x2xf32>, tensor<2x2x2xf32>) outs(%z : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return %o : tensor<2x3x2xf32>
}

// -----

// Not folded: the batch_matmul's right-hand side is not a constant.
// CHECK-LABEL: func @batch_matmul_dynamic_rhs
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @batch_matmul_dynamic_rhs(%x: tensor<2x3x2xf32>, %m: tensor<2x2x2xf32>, %z: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  // expected-remark @+1 {{not folded into matmuls: the matmul's right-hand side is not a constant}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x3x2xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
  %o = linalg.batch_matmul ins(%y, %m : tensor<2x3x2xf32>, tensor<2x2x2xf32>) outs(%z : tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return %o : tensor<2x3x2xf32>
}
