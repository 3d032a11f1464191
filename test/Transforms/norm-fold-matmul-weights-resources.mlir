// RUN: norm-opt %s -norm-fold-matmul-weights -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-fold-matmul-weights=defer-scale=true -split-input-file | FileCheck %s --check-prefix=DEFER

// Weights as torch-mlir exports them (dense_resource blobs): the folded RHS
// is a new blob named after the original, and the constants the fold left
// unused (the norm weight, the original RHS and its transpose) are erased,
// so that they no longer take space in the module. A constant that was
// unused before the fold is not the fold's to erase.
// CHECK-LABEL: func @resource_linear
//   CHECK-NOT: dense_resource<norm_w>
//   CHECK-NOT: dense_resource<lin_w>
//       CHECK: %[[DEAD:.*]] = arith.constant dense<7.000000e+00> : tensor<3xf32>
//       CHECK: %[[E:.*]] = tensor.empty() : tensor<2x2xf32>
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
//       CHECK: %[[W:.*]] = arith.constant dense_resource<lin_w_folded> : tensor<2x2xf32>
//       CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<2x2xf32>) outs(%[[E]] : tensor<2x2xf32>) permutation = [1, 0]
//       CHECK: linalg.matmul ins(%[[Y]], %[[T]] : tensor<4x2xf32>, tensor<2x2xf32>)
//   CHECK-NOT: linalg.transpose
//       CHECK: dialect_resources
//   CHECK-NOT: norm_w:
//   CHECK-NOT: lin_w:
//       CHECK: lin_w_folded: "0x04000000000000400000803F0000C04000000040"
//   CHECK-NOT: norm_w:
//   CHECK-NOT: lin_w:
func.func @resource_linear(%x: tensor<4x2xf32>, %z: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %dead = arith.constant dense<7.0> : tensor<3xf32>
  %w = arith.constant dense_resource<norm_w> : tensor<2xf32>
  %m = arith.constant dense_resource<lin_w> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %t = linalg.transpose ins(%m : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
  %o = linalg.matmul ins(%y, %t : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      norm_w: "0x04000000000000400000003F",
      lin_w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Constants other ops still read stay: the norm weight (also returned) and
// the RHS (also read by a second, unrelated matmul).
// CHECK-LABEL: func @resource_shared
//       CHECK: %[[W:.*]] = arith.constant dense_resource<norm_w> : tensor<2xf32>
//       CHECK: %[[M:.*]] = arith.constant dense_resource<lin_w> : tensor<2x2xf32>
//       CHECK: %[[F:.*]] = arith.constant dense_resource<lin_w_folded> : tensor<2x2xf32>
//       CHECK: linalg.matmul ins(%{{.*}}, %[[F]] : tensor<4x2xf32>, tensor<2x2xf32>)
//       CHECK: linalg.matmul ins(%{{.*}}, %[[M]] : tensor<4x2xf32>, tensor<2x2xf32>)
//       CHECK: return %{{.*}}, %{{.*}}, %[[W]]
//       CHECK: dialect_resources
//   CHECK-DAG: norm_w: "0x04000000000000400000003F"
//   CHECK-DAG: lin_w: "0x040000000000803F000000400000404000008040"
//   CHECK-DAG: lin_w_folded: "0x0400000000000040000080400000C03F00000040"
func.func @resource_shared(%x: tensor<4x2xf32>, %x2: tensor<4x2xf32>, %z: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<2xf32>) {
  %w = arith.constant dense_resource<norm_w> : tensor<2xf32>
  %m = arith.constant dense_resource<lin_w> : tensor<2x2xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %o2 = linalg.matmul ins(%x2, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o, %o2, %w : tensor<4x2xf32>, tensor<4x2xf32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      norm_w: "0x04000000000000400000003F",
      lin_w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// With defer-scale the norm op goes away, and its weight with it.
// DEFER-LABEL: func @resource_defer
//   DEFER-NOT: norm_w
//       DEFER: arith.constant dense_resource<lin_w_folded> : tensor<2x2xf32>
//   DEFER-NOT: norm.rms_norm
//       DEFER: dialect_resources
//   DEFER-NOT: norm_w:
//       DEFER: lin_w_folded: "0x0400000000000040000080400000C03F00000040"
func.func @resource_defer(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense_resource<norm_w> : tensor<2xf32>
  %m = arith.constant dense_resource<lin_w> : tensor<2x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      norm_w: "0x04000000000000400000003F",
      lin_w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
