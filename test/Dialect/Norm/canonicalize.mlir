// RUN: norm-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @drop_ones_weight_zero_bias
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
//       CHECK: %[[Y:.*]] = norm.layer_norm %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
//       CHECK: return %[[Y]]
func.func @drop_ones_weight_zero_bias(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<1.0> : tensor<8xf32>
  %b = arith.constant dense<0.0> : tensor<8xf32>
  %y = norm.layer_norm %x weight(%w) bias(%b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A non-splat all-ones weight and a bias of negative zeros are identities too.
// CHECK-LABEL: func @drop_nonsplat_ones_and_negative_zero_bias
//       CHECK: norm.dyt %{{.*}} alpha(%{{.*}}) : (tensor<?x4xbf16>, tensor<bf16>) -> tensor<?x4xbf16>
func.func @drop_nonsplat_ones_and_negative_zero_bias(%x: tensor<?x4xbf16>, %a: tensor<bf16>) -> tensor<?x4xbf16> {
  %w = arith.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xbf16>
  %b = arith.constant dense<[-0.0, 0.0, -0.0, 0.0]> : tensor<4xbf16>
  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b) : (tensor<?x4xbf16>, tensor<bf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<?x4xbf16>
  return %y : tensor<?x4xbf16>
}

// -----

// An all-zeros weight with weight_offset = 1 (Gemma's initialization) is an
// identity weight: both go.
// CHECK-LABEL: func @drop_zero_weight_with_unit_offset
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @drop_zero_weight_with_unit_offset(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<0.0> : tensor<8xf32>
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A scalar all-ones weight is dropped as well.
// CHECK-LABEL: func @drop_scalar_one_weight
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf16>) -> tensor<4x8xf16>
func.func @drop_scalar_one_weight(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %w = arith.constant dense<1.0> : tensor<f16>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// Not an identity: one element differs.
// CHECK-LABEL: func @keep_non_identity_weight_and_bias
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}})
func.func @keep_non_identity_weight_and_bias(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = arith.constant dense<[1.0, 1.0, 2.0, 1.0]> : tensor<4xf32>
  %b = arith.constant dense<[0.0, 0.0, 0.0, 1.0e-30]> : tensor<4xf32>
  %y = norm.layer_norm %x weight(%w) bias(%b) : (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Ones weight with a non-zero offset: w + 1 = 2 is not the identity.
// CHECK-LABEL: func @keep_ones_weight_with_offset
//       CHECK: %[[W:.*]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
//       CHECK: norm.rms_norm %{{.*}} weight(%[[W]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @keep_ones_weight_with_offset(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<1.0> : tensor<8xf32>
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Non-constant weight and bias stay.
// CHECK-LABEL: func @keep_dynamic_weight
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}})
func.func @keep_dynamic_weight(%x: tensor<4x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %y = norm.layer_norm %x weight(%w) bias(%b) : (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// Gemma: bf16 weight + 1 is exact in bf16 for these values, so it folds.
// CHECK-LABEL: func @fold_exact_weight_offset_bf16
//       CHECK: %[[W:.*]] = arith.constant dense<[1.500000e+00, 7.500000e-01, 3.000000e+00, 1.000000e+00]> : tensor<4xbf16>
//       CHECK: norm.rms_norm %{{.*}} weight(%[[W]]) : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
func.func @fold_exact_weight_offset_bf16(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %w = arith.constant dense<[0.5, -0.25, 2.0, 0.0]> : tensor<4xbf16>
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// 1 + 0.00390625 (2^-8) is not representable in bf16 (8 significant bits):
// folding would round Gemma's weight, so the offset stays.
// CHECK-LABEL: func @keep_inexact_weight_offset_bf16
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}}) {weight_offset = 1.000000e+00 : f32}
func.func @keep_inexact_weight_offset_bf16(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %w = arith.constant dense<[0.00390625, 0.5, 0.5, 0.5]> : tensor<4xbf16>
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  return %y : tensor<2x4xbf16>
}

// -----

// An f32 weight absorbs the offset as the f32 compute type would round it.
// CHECK-LABEL: func @fold_weight_offset_f32
//       CHECK: %[[W:.*]] = arith.constant dense<[1.00390625, 1.500000e+00]> : tensor<2xf32>
//       CHECK: norm.rms_norm %{{.*}} weight(%[[W]]) : (tensor<?x2xbf16>, tensor<2xf32>) -> tensor<?x2xbf16>
func.func @fold_weight_offset_f32(%x: tensor<?x2xbf16>) -> tensor<?x2xbf16> {
  %w = arith.constant dense<[0.00390625, 0.5]> : tensor<2xf32>
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<?x2xbf16>, tensor<2xf32>) -> tensor<?x2xbf16>
  return %y : tensor<?x2xbf16>
}

// -----

// A compute type equal to the default is dropped; a non-default one stays.
// CHECK-LABEL: func @drop_default_compute_type
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
//       CHECK: norm.layer_norm %{{.*}} : (tensor<4x8xf64>) -> tensor<4x8xf64>
//       CHECK: norm.rms_norm %{{.*}} {compute_type = f64} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
func.func @drop_default_compute_type(%x: tensor<4x8xbf16>, %d: tensor<4x8xf64>) -> (tensor<4x8xbf16>, tensor<4x8xf64>, tensor<4x8xbf16>) {
  %0 = norm.rms_norm %x {compute_type = f32} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %1 = norm.layer_norm %d {compute_type = f64} : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %2 = norm.rms_norm %x {compute_type = f64} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %0, %1, %2 : tensor<4x8xbf16>, tensor<4x8xf64>, tensor<4x8xbf16>
}

// -----

// before_weight with an f32 weight and a bf16 bias: the products are formed
// in f32; without the weight they would be formed in bf16, so it stays.
// CHECK-LABEL: func @keep_ones_weight_changing_before_weight_type
//       CHECK: norm.rms_norm
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}}) {cast_mode = #norm<cast_mode before_weight>}
func.func @keep_ones_weight_changing_before_weight_type(%x: tensor<4x8xbf16>, %b: tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %w = arith.constant dense<1.0> : tensor<8xf32>
  // Without a bias the f32 weight of ones is still an identity.
  %0 = norm.rms_norm %x weight(%w) {cast_mode = #norm<cast_mode before_weight>} : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  %1 = norm.layer_norm %x weight(%w) bias(%b) {cast_mode = #norm<cast_mode before_weight>} : (tensor<4x8xbf16>, tensor<8xf32>, tensor<8xbf16>) -> tensor<4x8xbf16>
  return %0, %1 : tensor<4x8xbf16>, tensor<4x8xbf16>
}

// -----

// Small constant inputs fold to a constant: rows [3, 4] and [0, 0].
// rms([3, 4]) = sqrt(12.5); 3 / sqrt(12.5) = 0.848528, 4 / sqrt(12.5) = 1.131371.
// CHECK-LABEL: func @constant_fold_rms_norm
//   CHECK-NOT: norm.rms_norm
//       CHECK: %[[C:.*]] = arith.constant dense<{{\[\[}}0.848528{{[0-9]*}}, 1.13137{{[0-9]*}}], [0.000000e+00, 0.000000e+00]]> : tensor<2x2xf32>
//       CHECK: return %[[C]]
func.func @constant_fold_rms_norm() -> tensor<2x2xf32> {
  %x = arith.constant dense<[[3.0, 4.0], [0.0, 0.0]]> : tensor<2x2xf32>
  %y = norm.rms_norm %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// LayerNorm of s = [1, 3] with weight [2, 2.5] and bias [1, 0.5]: about
// [-1, 3] (epsilon shrinks it slightly), and the
// residual sum [0.5+0.5, 2.5+0.5] is returned too.
// CHECK-LABEL: func @constant_fold_layer_norm_residual
//   CHECK-NOT: norm.layer_norm
//   CHECK-DAG: arith.constant dense<[{{\[}}-0.99998{{[0-9]*}}, 2.99998{{[0-9]*}}]]> : tensor<1x2xf32>
//   CHECK-DAG: arith.constant dense<[{{\[}}1.000000e+00, 3.000000e+00]]> : tensor<1x2xf32>
func.func @constant_fold_layer_norm_residual() -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %x = arith.constant dense<[[0.5, 2.5]]> : tensor<1x2xf32>
  %r = arith.constant dense<0.5> : tensor<1x2xf32>
  %w = arith.constant dense<[2.0, 2.5]> : tensor<2xf32>
  %b = arith.constant dense<[1.0, 0.5]> : tensor<2xf32>
  %y, %s = norm.layer_norm %x weight(%w) bias(%b) residual(%r) : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>)
  return %y, %s : tensor<1x2xf32>, tensor<1x2xf32>
}

// -----

// NaN and inf inputs propagate through the fold.
// CHECK-LABEL: func @constant_fold_dyt_nan_inf
//       CHECK: arith.constant dense<[0x7FC00000, 1.000000e+00, -1.000000e+00, 0.000000e+00]> : tensor<4xf32>
func.func @constant_fold_dyt_nan_inf() -> tensor<4xf32> {
  %x = arith.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, 0.0]> : tensor<4xf32>
  %a = arith.constant dense<0.5> : tensor<f32>
  %y = norm.dyt %x alpha(%a) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Inputs above the folding limit stay ops.
// CHECK-LABEL: func @no_fold_large_constant
//       CHECK: norm.rms_norm
func.func @no_fold_large_constant() -> tensor<64x128xf32> {
  %x = arith.constant dense<1.0> : tensor<64x128xf32>
  %y = norm.rms_norm %x : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// Weights and biases stored as dense_resource blobs (torch-mlir's exported
// parameters) are read like dense constants: an all-ones weight and an
// all-zeros bias are dropped.
// CHECK-LABEL: func @resource_identity_weight_zero_bias
//  CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
//       CHECK: %[[Y:.*]] = norm.layer_norm %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
//       CHECK: return %[[Y]]
func.func @resource_identity_weight_zero_bias(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = arith.constant dense_resource<ones4> : tensor<4xf32>
  %b = arith.constant dense_resource<zeros4> : tensor<4xf32>
  %y = norm.layer_norm %x weight(%w) bias(%b) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      ones4: "0x040000000000803F0000803F0000803F0000803F",
      zeros4: "0x0400000000000000000000000000000000000000"
    }
  }
#-}

// -----

// A resource blob under a dynamically shaped type (which the verifier
// accepts) has no known element count: it is not read, the weight and bias
// stay.
// CHECK-LABEL: func @resource_dynamic_type
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}})
func.func @resource_dynamic_type(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = arith.constant dense_resource<ones4d> : tensor<?xf32>
  %b = arith.constant dense_resource<zeros4d> : tensor<?xf32>
  %y = norm.layer_norm %x weight(%w) bias(%b) : (tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      ones4d: "0x040000000000803F0000803F0000803F0000803F",
      zeros4d: "0x0400000000000000000000000000000000000000"
    }
  }
#-}

// -----

// An elided resource blob is not a known constant: the weight stays.
// CHECK-LABEL: func @resource_elided
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @resource_elided(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = arith.constant dense_resource<__elided__> : tensor<4xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// The statistics fold with y, in the compute type: var([1, 2, 3, 4]) = 1.25,
// mean square 7.5.
// CHECK-LABEL: func @fold_return_stats
//   CHECK-DAG: %[[M:.*]] = arith.constant dense<[2.500000e+00, 3.000000e+00]> : tensor<2xf32>
//   CHECK-DAG: %[[R:.*]] = arith.constant dense<[0.894423663, 0.577349305]> : tensor<2xf32>
//   CHECK-DAG: %[[R2:.*]] = arith.constant dense<[0.365148365, 0.288675129]> : tensor<2xf32>
//   CHECK-NOT: norm.
//       CHECK: return %{{.*}}, %[[M]], %[[R]], %[[R2]]
func.func @fold_return_stats() -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0]]> : tensor<2x4xf32>
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %y2, %r2 = norm.rms_norm %x {return_stats} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>)
  return %y, %m, %r, %r2 : tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Unused statistics are dropped; used ones kept.
// CHECK-LABEL: func @drop_unused_stats
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[R:.*]]: tensor<?x64xf32>)
//       CHECK: %[[Y:.*]], %[[S:.*]] = norm.rms_norm %[[X]] residual(%[[R]]) {epsilon = 1.000000e-03 : f32} : (tensor<?x64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
//       CHECK: %{{.*}}, %[[M:.*]], %{{.*}} = norm.layer_norm %[[X]] {return_stats}
//       CHECK: return %[[Y]], %[[S]], %[[M]]
func.func @drop_unused_stats(%x: tensor<?x64xf32>, %r: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>) {
  %y, %s, %rstd = norm.rms_norm %x residual(%r) {epsilon = 1.0e-3 : f32, return_stats} : (tensor<?x64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>)
  %y2, %m, %r2 = norm.layer_norm %x {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>)
  return %y, %s, %m : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>
}

// -----

// Rows of N = 0 elements: y is empty, and their statistics, 0 / 0, are NaN
// (in every epsilon mode), as the lowerings compute them. Found crashing:
// the folder produced no statistics for rows of no element.
// CHECK-LABEL: func @fold_stats_empty_rows
//   CHECK-DAG: %[[NAN:.*]] = arith.constant dense<{{0x[7F]FC00000}}> : tensor<3xf32>
//   CHECK-NOT: norm.
//       CHECK: return %{{.*}}, %[[NAN]], %[[NAN]], %[[NAN]]
func.func @fold_stats_empty_rows() -> (tensor<3x0xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %x = arith.constant dense<> : tensor<3x0xf32>
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<3x0xf32>) -> (tensor<3x0xf32>, tensor<3xf32>, tensor<3xf32>)
  %y2, %r2 = norm.rms_norm %x {return_stats, epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<3x0xf32>) -> (tensor<3x0xf32>, tensor<3xf32>)
  return %y, %m, %r, %r2 : tensor<3x0xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// The dynamic scales of rows of N = 0 elements are those of amax = 0:
// min_scale (here 1 / (448 * 512) and the attribute). Found crashing: the
// folder made no scale for groups of no element.
// CHECK-LABEL: func @fold_quantize_empty_rows
//   CHECK-DAG: %[[S:.*]] = arith.constant dense<4.35965421E-6> : tensor<4x1xf32>
//   CHECK-DAG: %[[S2:.*]] = arith.constant dense<2.500000e-01> : tensor<2x3x1xf32>
//   CHECK-NOT: norm.
//       CHECK: return %{{.*}}, %[[S]], %{{.*}}, %[[S2]]
func.func @fold_quantize_empty_rows() -> (tensor<4x0xf8E4M3FN>, tensor<4x1xf32>, tensor<2x3x0xi8>, tensor<2x3x1xf32>) {
  %x = arith.constant dense<> : tensor<4x0xf32>
  %q, %s = norm.quantize %x : (tensor<4x0xf32>) -> (tensor<4x0xf8E4M3FN>, tensor<4x1xf32>)
  %x2 = arith.constant dense<> : tensor<2x3x0xbf16>
  %q2, %s2 = norm.quantize %x2 {min_scale = 2.5e-1 : f32} : (tensor<2x3x0xbf16>) -> (tensor<2x3x0xi8>, tensor<2x3x1xf32>)
  return %q, %s, %q2, %s2 : tensor<4x0xf8E4M3FN>, tensor<4x1xf32>, tensor<2x3x0xi8>, tensor<2x3x1xf32>
}

// -----

// A NaN in a row under epsilon_mode = clamp: max(sqrt(ms), eps) propagates
// the NaN (arith.maximumf in the lowerings), so the whole row and its rstd
// are NaN. Found folding the row as if its factor were 1 / eps.
// CHECK-LABEL: func @fold_clamp_nan_row
//   CHECK-DAG: %[[Y:.*]] = arith.constant dense<{{\[}}[{{0x[7F]FC00000}}, {{0x[7F]FC00000}}], [0.848528147, 1.1313709]]> : tensor<2x2xf32>
//   CHECK-DAG: %[[R:.*]] = arith.constant dense<[{{0x[7F]FC00000}}, 0.282842726]> : tensor<2xf32>
//   CHECK-NOT: norm.
//       CHECK: return %[[Y]], %[[R]]
func.func @fold_clamp_nan_row() -> (tensor<2x2xf32>, tensor<2xf32>) {
  %x = arith.constant dense<[[0x7FC00000, 1.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y, %r = norm.rms_norm %x {epsilon = 1.0 : f32, epsilon_mode = #norm<epsilon_mode clamp>, return_stats} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>)
  return %y, %r : tensor<2x2xf32>, tensor<2xf32>
}

// -----

// A row holding an infinity: its variance, rstd and y are NaN, and so is
// its mean, as the lowerings give it (sum / N would be inf here; the
// kernels' shifted sums make it inf or NaN depending on where the inf is).
// The second row is ordinary. Found folding the mean to inf.
// CHECK-LABEL: func @fold_mean_inf_row
//   CHECK-DAG: %[[M:.*]] = arith.constant dense<[{{0x[7F]FC00000}}, 2.500000e+00]> : tensor<2xf32>
//   CHECK-DAG: %[[R:.*]] = arith.constant dense<[{{0x[7F]FC00000}}, 0.894423663]> : tensor<2xf32>
//   CHECK-NOT: norm.
//       CHECK: return %{{.*}}, %[[M]], %[[R]]
func.func @fold_mean_inf_row() -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x = arith.constant dense<[[0x7F800000, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]]> : tensor<2x4xf32>
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  return %y, %m, %r : tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>
}
