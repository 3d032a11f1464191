// RUN: norm-opt %s -norm-fold-matmul-weights="remarks=true max-rhs-elements=8" -split-input-file -verify-diagnostics | FileCheck %s

// Declined candidates stay unchanged and are explained by remarks (they are
// also counted in the pass statistic `declined`, which norm-opt
// --norm-pass-statistics reports).

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

// -----

// Not folded: the normalized value is also the matmul's init; folding the
// weight out of it would change what the matmul accumulates into.
// CHECK-LABEL: func @lhs_also_init
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} weight(%{{.*}})
//       CHECK: linalg.matmul ins(%[[Y]], %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[Y]] : tensor<2x2xf32>)
func.func @lhs_also_init(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<1.0> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the normalized value is not only the matmul's left operand}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf32>, tensor<2x2xf32>) outs(%y : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: the same through a collapse of a rank-3 result.
// CHECK-LABEL: func @collapsed_lhs_also_init
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
//       CHECK: %[[C:.*]] = tensor.collapse_shape
//       CHECK: linalg.matmul ins(%[[C]], %{{.*}} : tensor<4x2xf32>, tensor<2x2xf32>) outs(%[[C]] : tensor<4x2xf32>)
func.func @collapsed_lhs_also_init(%x: tensor<2x2x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<1.0> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the normalized value is not only the matmul's left operand}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2x2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  %c = tensor.collapse_shape %y [[0, 1], [2]] : tensor<2x2x2xf32> into tensor<4x2xf32>
  %o = linalg.matmul ins(%c, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// Not folded: the normalized value is the matmul's right operand (wrong
// operand role).
// CHECK-LABEL: func @normalized_rhs
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} weight(%{{.*}})
//       CHECK: linalg.matmul ins(%{{.*}}, %[[Y]] : tensor<2x2xf32>, tensor<2x2xf32>)
func.func @normalized_rhs(%x: tensor<2x2xf32>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<1.0> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the normalized value is not only the matmul's left operand}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %o = linalg.matmul ins(%m, %y : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: 300 * 300 overflows an f16 RHS (the matmul accumulates in f32,
// where the unfolded products stay finite).
// CHECK-LABEL: func @f16_rhs_overflow
//       CHECK: arith.constant dense<3.000000e+02> : tensor<2x2xf16>
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @f16_rhs_overflow(%x: tensor<2x2xf16>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[300.0, 1.0]> : tensor<2xf16>
  %m = arith.constant dense<300.0> : tensor<2x2xf16>
  // expected-remark @+1 {{not folded into matmuls: a folded element of the right-hand side would overflow, or flush to zero or a subnormal, in its element type}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf16>, tensor<2x2xf16>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: 1e-4 * 1e-4 flushes to zero in f16.
// CHECK-LABEL: func @f16_rhs_underflow
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @f16_rhs_underflow(%x: tensor<2x2xf16>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[1.0e-4, 1.0]> : tensor<2xf16>
  %m = arith.constant dense<1.0e-4> : tensor<2x2xf16>
  // expected-remark @+1 {{not folded into matmuls: a folded element of the right-hand side would overflow, or flush to zero or a subnormal, in its element type}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf16>, tensor<2x2xf16>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: 0.01 * 0.001 is an f16 subnormal (precision lost).
// CHECK-LABEL: func @f16_rhs_subnormal
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @f16_rhs_subnormal(%x: tensor<2x2xf16>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[0.01, 1.0]> : tensor<2xf16>
  %m = arith.constant dense<0.001> : tensor<2x2xf16>
  // expected-remark @+1 {{not folded into matmuls: a folded element of the right-hand side would overflow, or flush to zero or a subnormal, in its element type}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf16>, tensor<2x2xf16>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: 1e30 * 1e30 overflows bf16 (and f32) as well.
// CHECK-LABEL: func @bf16_rhs_overflow
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @bf16_rhs_overflow(%x: tensor<2x2xbf16>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[1.0e30, 1.0]> : tensor<2xbf16>
  %m = arith.constant dense<1.0e30> : tensor<2x2xbf16>
  // expected-remark @+1 {{not folded into matmuls: a folded element of the right-hand side would overflow, or flush to zero or a subnormal, in its element type}}
  %y = norm.rms_norm %x weight(%w) : (tensor<2x2xbf16>, tensor<2xbf16>) -> tensor<2x2xbf16>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: the same for an f32 RHS, whose folded elements take the host
// float path.
// CHECK-LABEL: func @f32_rhs_overflow
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}})
func.func @f32_rhs_overflow(%x: tensor<2x2xf32>, %z: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[1.0e30, 1.0]> : tensor<2xf32>
  %m = arith.constant dense<1.0e30> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: a folded element of the right-hand side would overflow, or flush to zero or a subnormal, in its element type}}
  %y = norm.layer_norm %x weight(%w) : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %o : tensor<2x2xf32>
}

// -----

// Not folded: the bias row bias @ W = 2 * 60000 * 60000 is not finite in
// the f16 result.
// CHECK-LABEL: func @f16_bias_row_overflow
//       CHECK: norm.layer_norm %{{.*}} bias(%{{.*}})
func.func @f16_bias_row_overflow(%x: tensor<2x2xf16>, %z: tensor<2x2xf16>) -> tensor<2x2xf16> {
  %b = arith.constant dense<60000.0> : tensor<2xf16>
  %m = arith.constant dense<60000.0> : tensor<2x2xf16>
  // expected-remark @+1 {{not folded into matmuls: the bias row bias @ W would not be finite in the matmul's result type}}
  %y = norm.layer_norm %x bias(%b) : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16>
  %o = linalg.matmul ins(%y, %m : tensor<2x2xf16>, tensor<2x2xf16>) outs(%z : tensor<2x2xf16>) -> tensor<2x2xf16>
  return %o : tensor<2x2xf16>
}
