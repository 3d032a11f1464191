// RUN: norm-opt %s | norm-opt | FileCheck %s
// RUN: norm-opt %s -mlir-print-op-generic | norm-opt | FileCheck %s
// RUN: norm-opt %s | norm-opt -mlir-print-op-generic | norm-opt -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func @layer_norm_design_example
//  CHECK-SAME: (%[[X:.*]]: tensor<8x4096xbf16>, %[[G:.*]]: tensor<4096xbf16>, %[[B:.*]]: tensor<4096xbf16>)
//       CHECK: norm.layer_norm %[[X]] weight(%[[G]]) bias(%[[B]]) : (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<8x4096xbf16>
// GENERIC-LABEL: sym_name = "layer_norm_design_example"
//       GENERIC: "norm.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{{{.*}}operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
func.func @layer_norm_design_example(%x: tensor<8x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> tensor<8x4096xbf16> {
  %y = norm.layer_norm %x weight(%g) bias(%b) {epsilon = 1.0e-05 : f32}
       : (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<8x4096xbf16>
  return %y : tensor<8x4096xbf16>
}

// CHECK-LABEL: func @rms_norm_design_example
//  CHECK-SAME: (%[[X:.*]]: tensor<?x4096xf32>, %[[W:.*]]: tensor<4096xf32>, %[[R:.*]]: tensor<?x4096xf32>)
//       CHECK: %{{.*}}, %{{.*}} = norm.rms_norm %[[X]] weight(%[[W]]) residual(%[[R]]) : (tensor<?x4096xf32>, tensor<4096xf32>, tensor<?x4096xf32>) -> (tensor<?x4096xf32>, tensor<?x4096xf32>)
func.func @rms_norm_design_example(%x: tensor<?x4096xf32>, %w: tensor<4096xf32>, %r: tensor<?x4096xf32>) -> (tensor<?x4096xf32>, tensor<?x4096xf32>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) {epsilon = 1.0e-06 : f32}
       : (tensor<?x4096xf32>, tensor<4096xf32>, tensor<?x4096xf32>) -> (tensor<?x4096xf32>, tensor<?x4096xf32>)
  return %y, %s : tensor<?x4096xf32>, tensor<?x4096xf32>
}

// CHECK-LABEL: func @rms_norm_bare
//       CHECK: norm.rms_norm %{{.*}} : (tensor<2x3x64xf16>) -> tensor<2x3x64xf16>
func.func @rms_norm_bare(%x: tensor<2x3x64xf16>) -> tensor<2x3x64xf16> {
  %y = norm.rms_norm %x : (tensor<2x3x64xf16>) -> tensor<2x3x64xf16>
  return %y : tensor<2x3x64xf16>
}

// CHECK-LABEL: func @dyt_design_example
//  CHECK-SAME: (%[[X:.*]]: tensor<8x768xf32>, %[[A:.*]]: tensor<f32>, %[[W:.*]]: tensor<768xf32>, %[[B:.*]]: tensor<768xf32>)
//       CHECK: norm.dyt %[[X]] alpha(%[[A]]) weight(%[[W]]) bias(%[[B]]) : (tensor<8x768xf32>, tensor<f32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
// GENERIC-LABEL: sym_name = "dyt_design_example"
//       GENERIC: "norm.dyt"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{{{.*}}operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
func.func @dyt_design_example(%x: tensor<8x768xf32>, %a: tensor<f32>, %w: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<8x768xf32> {
  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b)
       : (tensor<8x768xf32>, tensor<f32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// Every attribute with a non-default value is printed back.
// CHECK-LABEL: func @rms_norm_all_attributes
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}}) {axis = -2 : i64, cast_mode = #norm<cast_mode before_weight>, compute_type = f64, epsilon = 1.000000e-05 : f64, epsilon_mode = #norm<epsilon_mode clamp>, weight_offset = 1.000000e+00 : f32}
// GENERIC-LABEL: sym_name = "rms_norm_all_attributes"
//       GENERIC: "norm.rms_norm"(%{{.*}}, %{{.*}}) <{axis = -2 : i64, cast_mode = #norm<cast_mode before_weight>, compute_type = f64, epsilon = 1.000000e-05 : f64, epsilon_mode = #norm<epsilon_mode clamp>, operandSegmentSizes = array<i32: 1, 1, 0>, weight_offset = 1.000000e+00 : f32}>
func.func @rms_norm_all_attributes(%x: tensor<2x3x64xf16>, %w: tensor<3x64xf32>) -> tensor<2x3x64xf16> {
  %y = norm.rms_norm %x weight(%w) {epsilon = 1.0e-05 : f64, epsilon_mode = #norm<epsilon_mode clamp>, weight_offset = 1.0 : f32, axis = -2, compute_type = f64, cast_mode = #norm<cast_mode before_weight>}
       : (tensor<2x3x64xf16>, tensor<3x64xf32>) -> tensor<2x3x64xf16>
  return %y : tensor<2x3x64xf16>
}

// CHECK-LABEL: func @rms_norm_outside_sqrt
//       CHECK: norm.rms_norm %{{.*}} {epsilon_mode = #norm<epsilon_mode outside_sqrt>}
func.func @rms_norm_outside_sqrt(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = norm.rms_norm %x {epsilon_mode = #norm<epsilon_mode outside_sqrt>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Attributes equal to their defaults are accepted and elided.
// CHECK-LABEL: func @defaults_elided
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
//       CHECK: norm.layer_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
//       CHECK: norm.dyt %{{.*}} alpha(%{{.*}}) : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
func.func @defaults_elided(%x: tensor<4x8xf32>, %a: tensor<1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = norm.rms_norm %x {epsilon = 1.0e-06 : f32, epsilon_mode = #norm<epsilon_mode inside_sqrt>, weight_offset = 0.0 : f32, axis = -1, cast_mode = #norm<cast_mode final>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = norm.layer_norm %x {epsilon = 1.0e-05 : f32, axis = -1 : i64, cast_mode = #norm<cast_mode final>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = norm.dyt %x alpha(%a) {axis = -1, cast_mode = #norm<cast_mode final>} : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Several normalized dims, a positive axis, f64, dynamic dims everywhere.
// CHECK-LABEL: func @layer_norm_multi_axis_f64
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}}) {axis = 1 : i64} : (tensor<?x?x16xf64>, tensor<?x16xf64>, tensor<?x16xf64>) -> tensor<?x?x16xf64>
func.func @layer_norm_multi_axis_f64(%x: tensor<?x?x16xf64>, %w: tensor<?x16xf64>, %b: tensor<?x16xf64>) -> tensor<?x?x16xf64> {
  %y = norm.layer_norm %x weight(%w) bias(%b) {axis = 1} : (tensor<?x?x16xf64>, tensor<?x16xf64>, tensor<?x16xf64>) -> tensor<?x?x16xf64>
  return %y : tensor<?x?x16xf64>
}

// Weight and bias may be f32 on narrow inputs; residual on every op.
// CHECK-LABEL: func @layer_norm_f16_f32_params_residual
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}}) residual(%{{.*}}) {cast_mode = #norm<cast_mode before_weight>} : (tensor<3x32xf16>, tensor<32xf32>, tensor<32xf32>, tensor<3x32xf16>) -> (tensor<3x32xf16>, tensor<3x32xf16>)
func.func @layer_norm_f16_f32_params_residual(%x: tensor<3x32xf16>, %w: tensor<32xf32>, %b: tensor<32xf32>, %r: tensor<3x32xf16>) -> tensor<3x32xf16> {
  %y, %s = norm.layer_norm %x weight(%w) bias(%b) residual(%r) {cast_mode = #norm<cast_mode before_weight>} : (tensor<3x32xf16>, tensor<32xf32>, tensor<32xf32>, tensor<3x32xf16>) -> (tensor<3x32xf16>, tensor<3x32xf16>)
  return %y : tensor<3x32xf16>
}

// CHECK-LABEL: func @dyt_bf16_residual
//       CHECK: norm.dyt %{{.*}} alpha(%{{.*}}) weight(%{{.*}}) residual(%{{.*}}) {compute_type = f64} : (tensor<?x64xbf16>, tensor<1xbf16>, tensor<64xbf16>, tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
func.func @dyt_bf16_residual(%x: tensor<?x64xbf16>, %a: tensor<1xbf16>, %w: tensor<64xbf16>, %r: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  %y, %s = norm.dyt %x alpha(%a) weight(%w) residual(%r) {compute_type = f64} : (tensor<?x64xbf16>, tensor<1xbf16>, tensor<64xbf16>, tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
  return %s : tensor<?x64xbf16>
}

// A scalar weight on rms_norm is ScaleNorm's gain.
// CHECK-LABEL: func @rms_norm_scalar_weight
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}}) {epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}}) : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
func.func @rms_norm_scalar_weight(%x: tensor<4x8xf32>, %g: tensor<f32>, %g1: tensor<1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = norm.rms_norm %x weight(%g) {epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = norm.rms_norm %x weight(%g1) : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// bf16 input computed in bf16 itself, and the f16 compute type on f16.
// CHECK-LABEL: func @narrow_compute_types
//       CHECK: norm.rms_norm %{{.*}} {compute_type = bf16}
//       CHECK: norm.layer_norm %{{.*}} {compute_type = f16}
func.func @narrow_compute_types(%x: tensor<4x8xbf16>, %h: tensor<4x8xf16>) -> (tensor<4x8xbf16>, tensor<4x8xf16>) {
  %0 = norm.rms_norm %x {compute_type = bf16} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %1 = norm.layer_norm %h {compute_type = f16} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0, %1 : tensor<4x8xbf16>, tensor<4x8xf16>
}

// A 1-D input (N == whole tensor), a zero-sized leading dim, epsilon 0 and
// -0 (which is >= 0).
// CHECK-LABEL: func @edge_shapes
//       CHECK: norm.layer_norm %{{.*}} {epsilon = 0.000000e+00 : f32} : (tensor<1xf32>) -> tensor<1xf32>
//       CHECK: norm.rms_norm %{{.*}} : (tensor<0x16xf32>) -> tensor<0x16xf32>
//       CHECK: norm.rms_norm %{{.*}} {epsilon = -0.000000e+00 : f32}
func.func @edge_shapes(%x: tensor<1xf32>, %e: tensor<0x16xf32>) -> (tensor<1xf32>, tensor<0x16xf32>, tensor<0x16xf32>) {
  %0 = norm.layer_norm %x {epsilon = 0.0 : f32} : (tensor<1xf32>) -> tensor<1xf32>
  %1 = norm.rms_norm %e : (tensor<0x16xf32>) -> tensor<0x16xf32>
  %2 = norm.rms_norm %e {epsilon = -0.0 : f32} : (tensor<0x16xf32>) -> tensor<0x16xf32>
  return %0, %1, %2 : tensor<1xf32>, tensor<0x16xf32>, tensor<0x16xf32>
}

// CHECK-LABEL: func @layer_norm_return_stats
//       CHECK: %{{.*}}, %{{.*}}, %{{.*}} = norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%{{.*}}) {return_stats} : (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> (tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>)
// GENERIC-LABEL: sym_name = "layer_norm_return_stats"
//       GENERIC: "norm.layer_norm"({{.*}}) <{{{.*}}return_stats}> : {{.*}} -> (tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>)
func.func @layer_norm_return_stats(%x: tensor<8x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> (tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>) {
  %y, %mean, %rstd = norm.layer_norm %x weight(%g) bias(%b) {return_stats}
       : (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> (tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>)
  return %y, %mean, %rstd : tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>
}

// Statistics come after residual_out, shaped by the leading dims before
// `axis`, in the compute type.
// CHECK-LABEL: func @rms_norm_return_stats_residual
//       CHECK: %{{.*}}, %{{.*}}, %{{.*}} = norm.rms_norm %{{.*}} residual(%{{.*}}) {axis = 1 : i64, compute_type = f64, return_stats} : (tensor<2x?x64xf16>, tensor<2x?x64xf16>) -> (tensor<2x?x64xf16>, tensor<2x?x64xf16>, tensor<2xf64>)
func.func @rms_norm_return_stats_residual(%x: tensor<2x?x64xf16>, %r: tensor<2x?x64xf16>) -> tensor<2xf64> {
  %y, %s, %rstd = norm.rms_norm %x residual(%r) {axis = 1 : i64, compute_type = f64, return_stats}
       : (tensor<2x?x64xf16>, tensor<2x?x64xf16>) -> (tensor<2x?x64xf16>, tensor<2x?x64xf16>, tensor<2xf64>)
  return %rstd : tensor<2xf64>
}

// All dims normalized: rank-0 statistics.
// CHECK-LABEL: func @layer_norm_return_stats_axis0
//       CHECK: norm.layer_norm %{{.*}} {axis = 0 : i64, return_stats} : (tensor<4x8xf64>) -> (tensor<4x8xf64>, tensor<f64>, tensor<f64>)
func.func @layer_norm_return_stats_axis0(%x: tensor<4x8xf64>) -> (tensor<f64>, tensor<f64>) {
  %y, %m, %r = norm.layer_norm %x {axis = 0 : i64, return_stats} : (tensor<4x8xf64>) -> (tensor<4x8xf64>, tensor<f64>, tensor<f64>)
  return %m, %r : tensor<f64>, tensor<f64>
}
