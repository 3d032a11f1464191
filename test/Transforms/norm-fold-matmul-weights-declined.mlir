// RUN: norm-opt %s -norm-fold-matmul-weights="remarks=true max-rhs-elements=8" -split-input-file -verify-diagnostics | FileCheck %s

// Declined candidates stay unchanged and are explained by remarks (they are
// also counted in the pass statistic `declined`, which Debian's LLVM build
// compiles out).

// Not folded: the RHS is not a constant.
// CHECK-LABEL: func @dynamic_rhs
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @dynamic_rhs(%x: tensor<4x2xf32>, %m: tensor<2x2xf32>, %z: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  // expected-remark @+1 {{not folded into matmuls: the matmul's right-hand side is not a constant}}
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// Not folded: a resource blob under a dynamically shaped type has no known
// element count.
// CHECK-LABEL: func @resource_rhs_dynamic_type
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @resource_rhs_dynamic_type(%x: tensor<4x2xf32>, %z: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense_resource<rhs22> : tensor<2x?xf32>
  // expected-remark @+1 {{not folded into matmuls: the matmul's right-hand side is not a constant}}
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x?xf32>) outs(%z : tensor<4x?xf32>) -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}

{-#
  dialect_resources: {
    builtin: {
      rhs22: "0x040000000000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// Not folded: the normalized value has another user.
// CHECK-LABEL: func @other_user
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @other_user(%x: tensor<4x2xf32>, %z: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<1.0> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: a user is not a matmul}}
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o, %y : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Not folded with max-rhs-elements=8: the RHS has 9 elements.
// CHECK-LABEL: func @large_rhs
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
func.func @large_rhs(%x: tensor<2x3xf32>, %z: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense<[2.0, 0.5, 1.5]> : tensor<3xf32>
  %m = arith.constant dense<1.0> : tensor<3x3xf32>
  // expected-remark @+1 {{not folded into matmuls: the constant right-hand side exceeds max-rhs-elements}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %o = linalg.matmul ins(%y, %m : tensor<2x3xf32>, tensor<3x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}

// -----

// Not folded: a scalar weight on a dynamic normalized dim (found by
// norm-fuzz: expanding the scalar to a row of the dynamic size crashed).
// CHECK-LABEL: func @scalar_weight_dynamic_row
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}}) : (tensor<4x?xf32>, tensor<f32>) -> tensor<4x?xf32>
func.func @scalar_weight_dynamic_row(%x: tensor<4x?xf32>, %z: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<2.0> : tensor<f32>
  %m = arith.constant dense<1.0> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the normalized dim is not static}}
  %y = norm.rms_norm %x weight(%w) : (tensor<4x?xf32>, tensor<f32>) -> tensor<4x?xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x?xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}
