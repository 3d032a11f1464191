// RUN: norm-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))' \
// RUN:   | FileCheck %s

// Rows split: the op runs locally on its rows, no communication.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @layer_norm_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[Y:.*]] = norm.layer_norm %[[X]] weight(%[[W]]) bias(%[[B]]) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_rows(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = norm.layer_norm %xs weight(%w) bias(%b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// Hidden dim split: local f64 sum of squares, all-reduced, global N = 8, the
// local weight shard.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @rms_norm_hidden
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>, %[[W:.*]]: tensor<4xf32>) -> tensor<4x4xf32>
// CHECK-DAG: %[[N:.*]] = arith.constant 8 : index
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4xf64>)
// CHECK: arith.mulf
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[SQ]] on @grid grid_axes = [0] : tensor<4xf64> -> tensor<4xf64>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf64>)
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %[[W]] : tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: norm.rms_norm
// CHECK: return %[[Y]]
func.func @rms_norm_hidden(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = norm.rms_norm %xs weight(%w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// LayerNorm with the hidden dim split: the sum, then the centered squares
// about the global mean, both in f64 and all-reduced.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @layer_norm_hidden
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>, %[[W:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4xf64>)
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[S]] on @grid grid_axes = [0] : tensor<4xf64> -> tensor<4xf64>
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MEAN]] : tensor<4x4xf32>, tensor<4xf64>) outs(%{{.*}} : tensor<4xf64>)
// CHECK: arith.subf %{{.*}}, %{{.*}} : f64
// CHECK: %[[SQSUM:.*]] = shard.all_reduce %[[SQ]] on @grid grid_axes = [0] : tensor<4xf64> -> tensor<4xf64>
// CHECK: linalg.generic {{.*}} ins(%[[SQSUM]] : tensor<4xf64>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MEAN]], %{{.*}}, %[[W]], %[[B]] :
// CHECK: return %[[Y]]
func.func @layer_norm_hidden(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = norm.layer_norm %xs weight(%w) bias(%b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// DyT needs no communication, whatever is split.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @dyt_hidden
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xbf16>, %[[A:.*]]: tensor<f32>, %[[W:.*]]: tensor<4xbf16>)
// CHECK-NEXT: %[[Y:.*]] = norm.dyt %[[X]] alpha(%[[A]]) weight(%[[W]]) : (tensor<4x4xbf16>, tensor<f32>, tensor<4xbf16>) -> tensor<4x4xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @dyt_hidden(%x: tensor<4x8xbf16>, %a: tensor<f32>, %w: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xbf16>
  %y = norm.dyt %xs alpha(%a) weight(%w) : (tensor<4x8xbf16>, tensor<f32>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %ys = shard.shard %y to %s : tensor<4x8xbf16>
  return %ys : tensor<4x8xbf16>
}

// -----

// Residual and a 2x2 grid with both axes on the hidden dim and a dynamic
// leading dim: residual_out stays local, the sums reduce over both axes.
shard.grid @grid(shape = 2x2)
// CHECK-LABEL: func.func @rms_norm_residual_2x2
// CHECK-SAME: (%[[X:.*]]: tensor<?x2xbf16>, %[[R:.*]]: tensor<?x2xbf16>) -> (tensor<?x2xbf16>, tensor<?x2xbf16>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[R]] : tensor<?x2xbf16>, tensor<?x2xbf16>)
// CHECK: arith.constant 8 : index
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x2xbf16>) outs(%{{.*}} : tensor<?xf64>)
// CHECK: shard.all_reduce %[[SQ]] on @grid grid_axes = [0, 1] : tensor<?xf64> -> tensor<?xf64>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %{{.*}} : tensor<?x2xbf16>, tensor<?xf32>)
// CHECK: return %[[Y]], %[[SUM]]
func.func @rms_norm_residual_2x2(%x: tensor<?x8xbf16>, %r: tensor<?x8xbf16>) -> (tensor<?x8xbf16>, tensor<?x8xbf16>) {
  %s = shard.sharding @grid split_axes = [[], [0, 1]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<?x8xbf16>
  %y, %ro = norm.rms_norm %xs residual(%r) : (tensor<?x8xbf16>, tensor<?x8xbf16>) -> (tensor<?x8xbf16>, tensor<?x8xbf16>)
  return %y, %ro : tensor<?x8xbf16>, tensor<?x8xbf16>
}

// -----

// Rows on one grid axis, hidden on the other; a scalar weight stays whole.
shard.grid @grid(shape = 2x2)
// CHECK-LABEL: func.func @rms_norm_scalar_weight_2d
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: tensor<1xf32>) -> tensor<2x4xf32>
// CHECK: shard.all_reduce %{{.*}} on @grid grid_axes = [1] : tensor<2xf64> -> tensor<2xf64>
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %[[W]] : tensor<2x4xf32>, tensor<2xf32>, tensor<1xf32>)
func.func @rms_norm_scalar_weight_2d(%x: tensor<4x8xf32>, %w: tensor<1xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = norm.rms_norm %xs weight(%w) : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

// Per-group quantization with the last dim split on group boundaries: local.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @quantize_groups_hidden
// CHECK-SAME: (%[[X:.*]]: tensor<4x128xf32>) -> (tensor<4x128xf8E4M3FN>, tensor<4x1xf32>)
// CHECK-NEXT: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[X]] {group_size = 128 : i64} : (tensor<4x128xf32>) -> (tensor<4x128xf8E4M3FN>, tensor<4x1xf32>)
// CHECK-NEXT: return %[[Q]], %[[S]]
func.func @quantize_groups_hidden(%x: tensor<4x256xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x256xf32>
  %q, %sc = norm.quantize %xs {group_size = 128 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf32>)
  return %q, %sc : tensor<4x256xf8E4M3FN>, tensor<4x2xf32>
}

// -----

// Per-token and static quantization with rows split: local.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @quantize_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x64xbf16>, %[[SC:.*]]: tensor<f32>)
// CHECK: norm.quantize %[[X]] : (tensor<2x64xbf16>) -> (tensor<2x64xi8>, tensor<2x1xf32>)
// CHECK: norm.quantize %[[X]] scale(%[[SC]]) : (tensor<2x64xbf16>, tensor<f32>) -> tensor<2x64xf8E4M3FN>
func.func @quantize_rows(%x: tensor<4x64xbf16>, %sc: tensor<f32>) -> (tensor<4x64xi8>, tensor<4x1xf32>, tensor<4x64xf8E4M3FN>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x64xbf16>
  %q, %scales = norm.quantize %xs : (tensor<4x64xbf16>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  %q2 = norm.quantize %xs scale(%sc) : (tensor<4x64xbf16>, tensor<f32>) -> tensor<4x64xf8E4M3FN>
  return %q, %scales, %q2 : tensor<4x64xi8>, tensor<4x1xf32>, tensor<4x64xf8E4M3FN>
}

// -----

// Block-scaled forms with row_major scales, rows split: local, the scales
// split with their rows.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @quantize_mxfp8_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x64xbf16>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>)
// CHECK-NEXT: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[X]] {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<2x64xbf16>) -> (tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU>)
// CHECK-NEXT: return %[[Q]], %[[S]]
func.func @quantize_mxfp8_rows(%x: tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x64xbf16>
  %q, %sc = norm.quantize %xs {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %q, %sc : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>
}

// -----

// NVFP4, rows split: global_scale is replicated.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @quantize_nvfp4_rows
// CHECK-SAME: (%[[X:.*]]: tensor<2x64xf32>, %[[G:.*]]: tensor<f32>)
// CHECK-NEXT: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[X]] global_scale(%[[G]]) {group_size = 16 : i64} : (tensor<2x64xf32>, tensor<f32>) -> (tensor<2x64xf4E2M1FN>, tensor<2x4xf8E4M3FN>)
// CHECK-NEXT: return %[[Q]], %[[S]]
func.func @quantize_nvfp4_rows(%x: tensor<4x64xf32>, %g: tensor<f32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x4xf8E4M3FN>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x64xf32>
  %q, %sc = norm.quantize %xs global_scale(%g) {group_size = 16 : i64} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x4xf8E4M3FN>)
  return %q, %sc : tensor<4x64xf4E2M1FN>, tensor<4x4xf8E4M3FN>
}

// -----

// MXFP4 with the last dim split on group boundaries: local.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @quantize_mxfp4_hidden
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>)
// CHECK-NEXT: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[X]] {group_size = 32 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
// CHECK-NEXT: return %[[Q]], %[[S]]
func.func @quantize_mxfp4_hidden(%x: tensor<4x128xf32>) -> (tensor<4x128xf4E2M1FN>, tensor<4x4xf8E8M0FNU>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x128xf32>
  %q, %sc = norm.quantize %xs {group_size = 32 : i64} : (tensor<4x128xf32>) -> (tensor<4x128xf4E2M1FN>, tensor<4x4xf8E8M0FNU>)
  return %q, %sc : tensor<4x128xf4E2M1FN>, tensor<4x4xf8E8M0FNU>
}

// -----

// Swizzled scales on a replicated input: the whole op on every process
// (after the all-gather of the norm's rows).
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @quantize_swizzled_replicated
// CHECK-SAME: (%[[X:.*]]: tensor<128x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>)
// CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] : (tensor<128x64xbf16>) -> tensor<128x64xbf16>
// CHECK: %[[ALL:.*]] = shard.all_gather %[[Y]] on @grid grid_axes = [0] gather_axis = 0 : tensor<128x64xbf16> -> tensor<256x64xbf16>
// CHECK: norm.quantize %{{.*}} {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>)
func.func @quantize_swizzled_replicated(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<256x64xbf16>
  %y = norm.rms_norm %xs : (tensor<256x64xbf16>) -> tensor<256x64xbf16>
  %ys = shard.shard %y to %s : tensor<256x64xbf16>
  %yr = shard.shard %ys to %r annotate_for_users : tensor<256x64xbf16>
  %q, %sc = norm.quantize %yr {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>)
  return %q, %sc : tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>
}

// -----

// A local row of 64 elements: its sum of squares goes through 16
// independent f64 partial sums (the row viewed as [4, 16]), then their sum.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @rms_norm_hidden_lanes
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>)
// CHECK: %[[LANES:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [8, 4, 16] : tensor<8x64xf32> into tensor<8x4x16xf32>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[LANES]] : tensor<8x4x16xf32>) outs(%{{.*}} : tensor<8x16xf64>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<8x16xf64>) outs(%{{.*}} : tensor<8xf64>)
// CHECK: shard.all_reduce %[[SUM]] on @grid grid_axes = [0] : tensor<8xf64> -> tensor<8xf64>
func.func @rms_norm_hidden_lanes(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x128xf32>
  %y = norm.rms_norm %xs : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %ys = shard.shard %y to %s : tensor<8x128xf32>
  return %ys : tensor<8x128xf32>
}
