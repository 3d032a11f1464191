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

// -----

// The block-scaled forms (DESIGN 2d), bit-exact: the expected codes are those
// of test/tools/blockscale.py. MLIR prints f8E4M3FN, f4E2M1FN and f8E8M0FNU
// attributes of up to 100 elements as decimal floats (NaN as its hex bit
// pattern), larger ones as a hex blob of one byte per element (an f4E2M1FN
// code in the low nibble).

// MXFP8, floor: amax 1.9 gives X = floor(log2 1.9) - 8 = -8 (scale 2^-8);
// v = y * 256: 486.4 saturates to 448, the ties 17 and 19 go to the even 16
// and 20, -2^-10 (half the smallest subnormal) to -0, -0 stays -0. A NaN
// group: scale 0xFF, every element NaN (0x7F).
// CHECK-LABEL: func @fold_mxfp8_floor
//   CHECK-DAG: arith.constant dense<{{\[}}[4.480000e+02, 1.600000e+01, 2.000000e+01, -0.000000e+00, -2.560000e+02, 1.280000e+02, -0.000000e+00{{((, 0\.000000e\+00){25})}}], [0x7F{{((, 0x7F){31})}}]]> : tensor<2x32xf8E4M3FN>
//   CHECK-DAG: arith.constant dense<{{\[}}[3.906250e-03], [0xFF]]> : tensor<2x1xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_mxfp8_floor() -> (tensor<2x32xf8E4M3FN>, tensor<2x1xf8E8M0FNU>) {
  %y = arith.constant dense<[[1.9, 0.06640625, 0.07421875, -3.814697265625e-06, -1.0, 0.5, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0x7FC00000, 1.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x32xf32>
  %q, %s = norm.quantize %y {group_size = 32 : i64} : (tensor<2x32xf32>) -> (tensor<2x32xf8E4M3FN>, tensor<2x1xf8E8M0FNU>)
  return %q, %s : tensor<2x32xf8E4M3FN>, tensor<2x1xf8E8M0FNU>
}

// -----

// The same row with scale_rounding up: 1.9 > 1.75 (the significand of 448),
// so X = -7 (scale 2^-7, one more than floor); v = y * 128: 243.2 -> 240,
// the ties 8.5 -> 8 and 9.5 -> 10.
// CHECK-LABEL: func @fold_mxfp8_up
//   CHECK-DAG: arith.constant dense<{{\[}}[2.400000e+02, 8.000000e+00, 1.000000e+01, -0.000000e+00, -1.280000e+02, 6.400000e+01, -0.000000e+00{{((, 0\.000000e\+00){25})}}]]> : tensor<1x32xf8E4M3FN>
//   CHECK-DAG: arith.constant dense<7.812500e-03> : tensor<1x1xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_mxfp8_up() -> (tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>) {
  %y = arith.constant dense<[[1.9, 0.06640625, 0.07421875, -3.814697265625e-06, -1.0, 0.5, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<1x32xf32>) -> (tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>)
  return %q, %s : tensor<1x32xf8E4M3FN>, tensor<1x1xf8E8M0FNU>
}

// -----

// swizzled_128x4 scales: (m, k) at (m % 32) * 16 + k for two rows of two
// groups (offsets 0, 1, 16, 17 of 128 * 4, padding 0). An infinite amax gives
// X = 127 (0xFE): 300 * 2^-127 -> 0, -inf -> -448; amax 0.001 gives X = -18.
// CHECK-LABEL: func @fold_mxfp8_swizzled
//   CHECK-DAG: arith.constant dense<"0x7EDA{{(0{62})}}FE{{(0{60})}}F8{{(0{124})}}78"> : tensor<2x64xf8E4M3FN>
//   CHECK-DAG: arith.constant dense<"0x77FE{{(0{28})}}6D76{{(0{254})}}{{(0{254})}}{{(0{254})}}{{(0{226})}}"> : tensor<512xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_mxfp8_swizzled() -> (tensor<2x64xf8E4M3FN>, tensor<512xf8E8M0FNU>) {
  %y = arith.constant dense<[[1.9, -0.07421875, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 300.0, 0xFF800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.001, 7.174648137343064e-43, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5]]> : tensor<2x64xf32>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<2x64xf32>) -> (tensor<2x64xf8E4M3FN>, tensor<512xf8E8M0FNU>)
  return %q, %s : tensor<2x64xf8E4M3FN>, tensor<512xf8E8M0FNU>
}

// -----

// FP8 1x128 (MX with G = 128), up: amax 3.6 = 1.8 * 2 gives X = -6; v = y * 64:
// 230.4 -> 224 (0x76), -32 (0xE0), 0.064 -> 0.0625 (0x18), 2^-14 -> 0, -115.2
// -> -112 (0xEE). More than 100 elements print as a hex blob, one byte each.
// CHECK-LABEL: func @fold_fp8_1x128_up
//   CHECK-DAG: arith.constant dense<"0x76E01800EE{{(0{246})}}"> : tensor<1x128xf8E4M3FN>
//   CHECK-DAG: arith.constant dense<1.562500e-02> : tensor<1x1xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_fp8_1x128_up() -> (tensor<1x128xf8E4M3FN>, tensor<1x1xf8E8M0FNU>) {
  %y = arith.constant dense<[[3.6, -0.5, 0.001, 9.5367431640625e-07, -1.8, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x128xf32>
  %q, %s = norm.quantize %y {group_size = 128 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<1x128xf32>) -> (tensor<1x128xf8E4M3FN>, tensor<1x1xf8E8M0FNU>)
  return %q, %s : tensor<1x128xf8E4M3FN>, tensor<1x1xf8E8M0FNU>
}

// -----

// FP8 1x128, floor, swizzled (offsets 0 and 16): amax 1e-30 gives X = -108
// (0x13); -2^-130 * 2^108 -> -0 (0x80).
// CHECK-LABEL: func @fold_fp8_1x128_swizzled
//   CHECK-DAG: arith.constant dense<"0x7EE8{{(0{252})}}7A{{(0{252})}}80"> : tensor<2x128xf8E4M3FN>
//   CHECK-DAG: arith.constant dense<"0x78{{(0{30})}}13{{(0{254})}}{{(0{254})}}{{(0{254})}}{{(0{228})}}"> : tensor<512xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_fp8_1x128_swizzled() -> (tensor<2x128xf8E4M3FN>, tensor<512xf8E8M0FNU>) {
  %y = arith.constant dense<[[3.6, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0e-30, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -7.346839692639297e-40]]> : tensor<2x128xf32>
  %q, %s = norm.quantize %y {group_size = 128 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<2x128xf32>) -> (tensor<2x128xf8E4M3FN>, tensor<512xf8E8M0FNU>)
  return %q, %s : tensor<2x128xf8E4M3FN>, tensor<512xf8E8M0FNU>
}

// -----

// MXFP4, floor: amax 7 = 1.75 * 4 gives X = 2 - 2 = 0, v = y: 7 and -5.5
// saturate to +-6, the e2m1 ties 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5 go to the
// even code (0, 1, 1, 2, 2, 4, 4), -0.25 and -0 to -0. A zero group (with -0):
// X = -127 (the E8M0 2^-127 prints as 5.877470e-39), signed zeros. A NaN group
// (with +inf): scale 0xFF, e2m1 elements 0x0.
// CHECK-LABEL: func @fold_mxfp4_floor
//   CHECK-DAG: arith.constant dense<{{\[}}[6.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00, 4.000000e+00, 4.000000e+00, -0.000000e+00, -0.000000e+00, -6.000000e+00{{((, 0\.000000e\+00){21})}}], [-0.000000e+00, 0.000000e+00, -0.000000e+00{{((, 0\.000000e\+00){29})}}], [0.000000e+00{{((, 0\.000000e\+00){31})}}]]> : tensor<3x32xf4E2M1FN>
//   CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00], [5.877470e-39], [0xFF]]> : tensor<3x1xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_mxfp4_floor() -> (tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>) {
  %y = arith.constant dense<[[7.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.0, -5.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0x7FC00000, -3.0, 0x7F800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<3x32xf32>
  %q, %s = norm.quantize %y {group_size = 32 : i64} : (tensor<3x32xf32>) -> (tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>)
  return %q, %s : tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>
}

// -----

// The same first row with scale_rounding up: 1.75 > 1.5 (the significand of
// 6), X = 1, v = y / 2: 3.5 -> 4, the ties 0.125, 0.375, 0.625, 0.875, 1.25,
// 1.75, 2.5 -> 0, 0.5, 0.5, 1, 1, 2, 2.
// CHECK-LABEL: func @fold_mxfp4_up
//   CHECK-DAG: arith.constant dense<{{\[}}[4.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01, 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00, -0.000000e+00, -0.000000e+00, -3.000000e+00{{((, 0\.000000e\+00){21})}}]]> : tensor<1x32xf4E2M1FN>
//   CHECK-DAG: arith.constant dense<2.000000e+00> : tensor<1x1xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_mxfp4_up() -> (tensor<1x32xf4E2M1FN>, tensor<1x1xf8E8M0FNU>) {
  %y = arith.constant dense<[[7.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.0, -5.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x32xf32>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<1x32xf32>) -> (tensor<1x32xf4E2M1FN>, tensor<1x1xf8E8M0FNU>)
  return %q, %s : tensor<1x32xf4E2M1FN>, tensor<1x1xf8E8M0FNU>
}

// -----

// MXFP4, up, swizzled: X = -1, -3 (row 0) and 1, 5 (row 1).
// CHECK-LABEL: func @fold_mxfp4_swizzled
//   CHECK-DAG: arith.constant dense<"0x070C{{(0{60})}}0502{{(0{60})}}0F04{{(0{76})}}05{{(0{46})}}"> : tensor<2x64xf4E2M1FN>
//   CHECK-DAG: arith.constant dense<"0x7E7C{{(0{28})}}8084{{(0{254})}}{{(0{254})}}{{(0{254})}}{{(0{226})}}"> : tensor<512xf8E8M0FNU>
//   CHECK-NOT: norm.quantize
func.func @fold_mxfp4_swizzled() -> (tensor<2x64xf4E2M1FN>, tensor<512xf8E8M0FNU>) {
  %y = arith.constant dense<[[3.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-12.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x64xf32>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<2x64xf32>) -> (tensor<2x64xf4E2M1FN>, tensor<512xf8E8M0FNU>)
  return %q, %s : tensor<2x64xf4E2M1FN>, tensor<512xf8E8M0FNU>
}

// -----

// NVFP4 with g = 1: sf = e4m3(amax / 6), out = 1 / sf. Row 0: sf 1, the e2m1
// ties of y; row 1: 7 / 6 rounds to sf = 1.125, y * (1 / 1.125) (7 saturates);
// a zero group: sf 0, out 0; a NaN group: sf NaN (0x7F), every q 0x0.
// CHECK-LABEL: func @fold_nvfp4
//   CHECK-DAG: arith.constant dense<{{\[}}[6.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00, 4.000000e+00, -0.000000e+00, -1.000000e+00{{((, 0\.000000e\+00){9})}}], [6.000000e+00, 3.000000e+00, -1.000000e+00, 5.000000e-01{{((, 0\.000000e\+00){12})}}], [0.000000e+00{{((, 0\.000000e\+00){15})}}], [0.000000e+00{{((, 0\.000000e\+00){15})}}]]> : tensor<4x16xf4E2M1FN>
//   CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00], [1.125000e+00], [0.000000e+00], [0x7F]]> : tensor<4x1xf8E4M3FN>
//   CHECK-NOT: norm.quantize
func.func @fold_nvfp4() -> (tensor<4x16xf4E2M1FN>, tensor<4x1xf8E4M3FN>) {
  %y = arith.constant dense<[[6.0, 0.25, 0.75, 2.5, 5.0, -0.25, -1.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [7.0, 3.0, -1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 0x7FC00000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<4x16xf32>
  %g = arith.constant dense<1.0> : tensor<f32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<4x16xf32>, tensor<f32>) -> (tensor<4x16xf4E2M1FN>, tensor<4x1xf8E4M3FN>)
  return %q, %s : tensor<4x16xf4E2M1FN>, tensor<4x1xf8E4M3FN>
}

// -----

// NVFP4, swizzled, g = 1024: g * amax / 6 above 448 saturates sf to 448
// (0x7E), out = 1024 / 448; amax 0.4 gives sf = e4m3(68.27) = 72 (0x69).
// CHECK-LABEL: func @fold_nvfp4_swizzled
//   CHECK-DAG: arith.constant dense<{{\[}}[6.000000e+00, -2.000000e+00{{((, 0\.000000e\+00){14})}}, 6.000000e+00{{((, 0\.000000e\+00){15})}}], [-6.000000e+00, 6.000000e+00{{((, 0\.000000e\+00){18})}}, 6.000000e+00{{((, 0\.000000e\+00){11})}}]]> : tensor<2x32xf4E2M1FN>
//   CHECK-DAG: arith.constant dense<"0x7E69{{(0{28})}}7E7E{{(0{254})}}{{(0{254})}}{{(0{254})}}{{(0{226})}}"> : tensor<512xf8E4M3FN>
//   CHECK-NOT: norm.quantize
func.func @fold_nvfp4_swizzled() -> (tensor<2x32xf4E2M1FN>, tensor<512xf8E4M3FN>) {
  %y = arith.constant dense<[[3.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-12.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x32xf32>
  %g = arith.constant dense<1024.0> : tensor<f32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<2x32xf32>, tensor<f32>) -> (tensor<2x32xf4E2M1FN>, tensor<512xf8E4M3FN>)
  return %q, %s : tensor<2x32xf4E2M1FN>, tensor<512xf8E4M3FN>
}

// -----

// NVFP4 needs a constant global_scale: with a function argument nothing folds.
// CHECK-LABEL: func @no_fold_nvfp4_global_scale
//       CHECK: norm.quantize %{{.*}} global_scale(%{{.*}})
func.func @no_fold_nvfp4_global_scale(%g: tensor<f32>) -> (tensor<1x16xf4E2M1FN>, tensor<1x1xf8E4M3FN>) {
  %y = arith.constant dense<[[6.0, 0.25, 0.75, 2.5, 5.0, -0.25, -1.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<1x16xf32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<1x16xf32>, tensor<f32>) -> (tensor<1x16xf4E2M1FN>, tensor<1x1xf8E4M3FN>)
  return %q, %s : tensor<1x16xf4E2M1FN>, tensor<1x1xf8E4M3FN>
}
