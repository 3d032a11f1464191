// RUN: norm-opt %s -canonicalize -split-input-file | FileCheck %s

// Constant folding follows the op semantics: v = y * (1 / s) in f32; FP8
// saturates at +-448 (infinities too), rounds to nearest even, keeps the sign
// of zero and reaches the e4m3 subnormals (2^-9 = 0.001953125); int8 rounds
// to nearest even and clamps to [-128, 127]. (Expected values from
// ml_dtypes.float8_e4m3fn and numpy.rint.)

// CHECK-LABEL: func @fold_static_fp8
//       CHECK: %[[Q:.*]] = arith.constant dense<[0.000000e+00, -0.000000e+00, 2.000000e+00, -3.000000e+00, 4.480000e+02, 1.953130e-03, 4.480000e+02, -4.480000e+02, 1.757810e-02, 6.500000e+00]> : tensor<10xf8E4M3FN>
//   CHECK-NOT: norm.quantize
//       CHECK: return %[[Q]]
func.func @fold_static_fp8() -> tensor<10xf8E4M3FN> {
  %y = arith.constant dense<[0.0, -0.0, 1.0, -1.5, 300.0, 1.0e-3, 0x7F800000, 0xFF800000, 0.0087890625, 3.3]> : tensor<10xf32>
  %s = arith.constant dense<0.5> : tensor<f32>
  %q = norm.quantize %y scale(%s) : (tensor<10xf32>, tensor<f32>) -> tensor<10xf8E4M3FN>
  return %q : tensor<10xf8E4M3FN>
}

// -----

// CHECK-LABEL: func @fold_static_int8
//       CHECK: %[[Q:.*]] = arith.constant dense<[0, 0, 2, -3, 127, 0, 127, -128, 0, 7]> : tensor<10xi8>
//       CHECK: return %[[Q]]
func.func @fold_static_int8() -> tensor<10xi8> {
  %y = arith.constant dense<[0.0, -0.0, 1.0, -1.5, 300.0, 1.0e-3, 0x7F800000, 0xFF800000, 0.0087890625, 3.3]> : tensor<10xf32>
  %s = arith.constant dense<0.5> : tensor<1xf32>
  %q = norm.quantize %y scale(%s) : (tensor<10xf32>, tensor<1xf32>) -> tensor<10xi8>
  return %q : tensor<10xi8>
}

// -----

// Per token: s = max(amax / 127, 1 / (127 * 512)); an all-zero row gets the
// floor and zeros.
// CHECK-LABEL: func @fold_per_token_int8
//   CHECK-DAG: %[[Q:.*]] = arith.constant dense<{{\[}}[32, -64, 16, 127], [0, 0, 0, 0]]> : tensor<2x4xi8>
//   CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[}}[0.0314960629], [1.5378937E-5]]> : tensor<2x1xf32>
//       CHECK: return %[[Q]], %[[S]]
func.func @fold_per_token_int8() -> (tensor<2x4xi8>, tensor<2x1xf32>) {
  %y = arith.constant dense<[[1.0, -2.0, 0.5, 4.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<2x4xf32>
  %q, %sc = norm.quantize %y : (tensor<2x4xf32>) -> (tensor<2x4xi8>, tensor<2x1xf32>)
  return %q, %sc : tensor<2x4xi8>, tensor<2x1xf32>
}

// -----

// Groups of 2 with scale_ub = 448 (caps the second group's scale at 1) and a
// NaN group (fp8: NaN scale, NaN values).
// CHECK-LABEL: func @fold_groups_fp8
//   CHECK-DAG: arith.constant dense<{{\[}}[4.480000e+02, -2.240000e+02, 4.480000e+02, 4.480000e+02, 0x7F, 0x7F]]> : tensor<1x6xf8E4M3FN>
//   CHECK-DAG: arith.constant dense<{{\[}}[0.00446428591, 1.000000e+00, 0x7FC00000]]> : tensor<1x3xf32>
func.func @fold_groups_fp8() -> (tensor<1x6xf8E4M3FN>, tensor<1x3xf32>) {
  %y = arith.constant dense<[[2.0, -1.0, 1000.0, 2000.0, 0x7FC00000, 1.0]]> : tensor<1x6xf32>
  %q, %sc = norm.quantize %y {group_size = 2 : i64, scale_ub = 448.0 : f32} : (tensor<1x6xf32>) -> (tensor<1x6xf8E4M3FN>, tensor<1x3xf32>)
  return %q, %sc : tensor<1x6xf8E4M3FN>, tensor<1x3xf32>
}

// -----

// A non-constant input is not folded.
// CHECK-LABEL: func @no_fold
//       CHECK: norm.quantize
func.func @no_fold(%y: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xi8> {
  %q = norm.quantize %y scale(%s) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}
