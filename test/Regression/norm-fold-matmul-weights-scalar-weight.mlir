// RUN: norm-opt %s -split-input-file -norm-fold-matmul-weights="remarks=true" -verify-diagnostics | FileCheck %s

// Found by norm-fuzz: a scalar weight on a norm whose last dim is dynamic
// made norm-fold-matmul-weights expand the scalar to a vector of
// ShapedType::kDynamic elements (a fatal "SmallVector unable to grow")
// before it looked at the users. The candidate is now declined first.

// CHECK-LABEL: func @scalar_weight_no_matmul
//       CHECK:   norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @scalar_weight_no_matmul(%arg0: tensor<32x?xf16>, %arg1: tensor<32x?xf16>) -> tensor<32x?xf16> {
  %sum = arith.addf %arg0, %arg1 : tensor<32x?xf16>
  %w = arith.constant dense<-1.0> : tensor<f16>
  // expected-remark @+1 {{not folded into matmuls: only rank-2/3 inputs normalized over the last dim}}
  %y = norm.rms_norm %sum weight(%w) {epsilon = 1.0e+30 : f32, epsilon_mode = #norm<epsilon_mode clamp>, weight_offset = 1.0 : f32, axis = 0 : i64} : (tensor<32x?xf16>, tensor<f16>) -> tensor<32x?xf16>
  return %y : tensor<32x?xf16>
}

// -----

// The last dim normalized, no matmul user.
// CHECK-LABEL: func @scalar_weight_last_dim
//       CHECK:   norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @scalar_weight_last_dim(%x: tensor<?xf16>) -> tensor<?xf16> {
  %w = arith.constant dense<2.0> : tensor<f16>
  // expected-remark @+1 {{not folded into matmuls: only rank-2/3 inputs normalized over the last dim}}
  %y = norm.rms_norm %x weight(%w) : (tensor<?xf16>, tensor<f16>) -> tensor<?xf16>
  return %y : tensor<?xf16>
}

// -----

// CHECK-LABEL: func @scalar_weight_rank2
//       CHECK:   norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @scalar_weight_rank2(%x: tensor<15x?xf32>) -> tensor<15x?xf32> {
  %w = arith.constant dense<2.0> : tensor<f32>
  // expected-remark @+1 {{not folded into matmuls: a user is not a matmul}}
  %y = norm.rms_norm %x weight(%w) : (tensor<15x?xf32>, tensor<f32>) -> tensor<15x?xf32>
  return %y : tensor<15x?xf32>
}

// -----

// A one-element weight (tensor<1xT>) is a scalar too (the dialect's
// scalar-parameter rule) and is folded like tensor<T>: every row of the
// RHS is scaled by it. It was declined with a misleading "the normalized
// dim is not static".
// CHECK-LABEL: func @one_element_weight
//   CHECK-NOT:   weight(
//       CHECK:   %[[RHS:.*]] = arith.constant dense<{{\[}}[2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
//       CHECK:   linalg.matmul ins(%{{.*}}, %[[RHS]] :
func.func @one_element_weight(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<2.0> : tensor<1xf32>
  %rhs = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<1xf32>) -> tensor<4x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = linalg.matmul ins(%y, %rhs : tensor<4x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}
