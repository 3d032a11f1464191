// RUN: norm-opt %s -split-input-file -norm-lower-cpu | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline="threads=4" | FileCheck %s --check-prefix=LLVM
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline="lowering=linalg" | FileCheck %s --check-prefix=LLVM
// The GPU pipeline on the same cases: norm-gpu-pipeline-static-shapes.mlir.

// Every op in two kinds of shapes the lowerings treat specially:
// - dims that are dynamic in the op's type but fold to constants (x is a
//   tensor.cast of a static tensor). norm-lower-cpu built its row reshapes
//   from the folded sizes with the dynamic types, and emitted invalid IR
//   ("expected type to be 'tensor<1x6xf32>' ... size mismatch"); it now
//   makes the known dims static first (a tensor.cast) and casts the results
//   back;
// - statically empty inputs (a 0 dim): empty results, NaN statistics, and
//   the dynamic scales of norm.quantize min_scale (amax 0; they were left
//   uninitialized), and the gradient row loops decline rows of N = 0 (they
//   emitted an out-of-bounds vector access) for the linalg decomposition.
// Execution of the same shapes against the f64 reference:
// test/Integration/CPU/shapes.test.

// CHECK-LABEL: func @layer_norm_one_row
//       CHECK:   %[[X:.*]] = tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<1x6xf32>
//   CHECK-NOT:   norm.layer_norm
//       CHECK:   tensor.cast %{{.*}} : tensor<1x6xf32> to tensor<?x?xf32>
// LLVM-LABEL: llvm.func @layer_norm_one_row
func.func @layer_norm_one_row(%s: tensor<1x6xf32>, %w: tensor<6xf32>) -> tensor<?x?xf32> {
  %x = tensor.cast %s : tensor<1x6xf32> to tensor<?x?xf32>
  %wd = tensor.cast %w : tensor<6xf32> to tensor<?xf32>
  %y = norm.layer_norm %x weight(%wd) bias(%wd) : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @rms_norm_stats
//   CHECK-NOT:   norm.rms_norm
//       CHECK:   return
// LLVM-LABEL: llvm.func @rms_norm_stats
func.func @rms_norm_stats(%s: tensor<4x6xbf16>, %r: tensor<?x?xbf16>) -> (tensor<4x?xbf16>, tensor<4x?xbf16>, tensor<4xf32>) {
  %x = tensor.cast %s : tensor<4x6xbf16> to tensor<4x?xbf16>
  %rd = tensor.cast %r : tensor<?x?xbf16> to tensor<4x?xbf16>
  %y, %o, %rstd = norm.rms_norm %x residual(%rd) {return_stats} : (tensor<4x?xbf16>, tensor<4x?xbf16>) -> (tensor<4x?xbf16>, tensor<4x?xbf16>, tensor<4xf32>)
  return %y, %o, %rstd : tensor<4x?xbf16>, tensor<4x?xbf16>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @layer_norm_stats
//   CHECK-NOT:   norm.layer_norm
//       CHECK:   return
// LLVM-LABEL: llvm.func @layer_norm_stats
func.func @layer_norm_stats(%s: tensor<2x6xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %x = tensor.cast %s : tensor<2x6xf32> to tensor<?x?xf32>
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %y, %m, %r : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func @dyt_residual
//   CHECK-NOT:   norm.dyt
//       CHECK:   return
// LLVM-LABEL: llvm.func @dyt_residual
func.func @dyt_residual(%s: tensor<3x8xf16>, %a: tensor<f16>) -> (tensor<?x?xf16>, tensor<?x?xf16>) {
  %x = tensor.cast %s : tensor<3x8xf16> to tensor<?x?xf16>
  %y, %o = norm.dyt %x alpha(%a) residual(%x) : (tensor<?x?xf16>, tensor<f16>, tensor<?x?xf16>) -> (tensor<?x?xf16>, tensor<?x?xf16>)
  return %y, %o : tensor<?x?xf16>, tensor<?x?xf16>
}

// -----

// A rank-3 input normalized over its last two dims, the dynamic one known.
// CHECK-LABEL: func @layer_norm_rank3
//       CHECK:   tensor.cast %{{.*}} : tensor<2x?x16xf32> to tensor<2x3x16xf32>
//   CHECK-NOT:   norm.layer_norm
//       CHECK:   return
// LLVM-LABEL: llvm.func @layer_norm_rank3
func.func @layer_norm_rank3(%s: tensor<2x3x16xf32>) -> (tensor<2x?x16xf32>, tensor<2xf32>) {
  %x = tensor.cast %s : tensor<2x3x16xf32> to tensor<2x?x16xf32>
  %y, %m, %r = norm.layer_norm %x {axis = -2 : i64, return_stats} : (tensor<2x?x16xf32>) -> (tensor<2x?x16xf32>, tensor<2xf32>, tensor<2xf32>)
  return %y, %m : tensor<2x?x16xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func @quantize_one_row
//   CHECK-NOT:   norm.quantize
//       CHECK:   return
// LLVM-LABEL: llvm.func @quantize_one_row
func.func @quantize_one_row(%s: tensor<1x6xf32>, %t: tensor<4x6xbf16>, %sc: tensor<f32>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>, tensor<4x?xi8>) {
  %x = tensor.cast %s : tensor<1x6xf32> to tensor<?x?xf32>
  %q, %scales = norm.quantize %x : (tensor<?x?xf32>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>)
  %x2 = tensor.cast %t : tensor<4x6xbf16> to tensor<4x?xbf16>
  %q2 = norm.quantize %x2 scale(%sc) : (tensor<4x?xbf16>, tensor<f32>) -> tensor<4x?xi8>
  return %q, %scales, %q2 : tensor<?x?xf8E4M3FN>, tensor<?x1xf32>, tensor<4x?xi8>
}

// -----

// CHECK-LABEL: func @fused_quantize
//   CHECK-NOT:   norm.rms_norm
//   CHECK-NOT:   norm.quantize
//       CHECK:   return
// LLVM-LABEL: llvm.func @fused_quantize
func.func @fused_quantize(%s: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<?x8xi8>, tensor<?x2xf32>) {
  %x = tensor.cast %s : tensor<4x8xf32> to tensor<?x8xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %q, %scales = norm.quantize %y {group_size = 4 : i64} : (tensor<?x8xf32>) -> (tensor<?x8xi8>, tensor<?x2xf32>)
  return %q, %scales : tensor<?x8xi8>, tensor<?x2xf32>
}

// -----

// CHECK-LABEL: func @grads
//   CHECK-NOT:   norm.layer_norm_grad
//   CHECK-NOT:   norm.rms_norm_grad
//   CHECK-NOT:   norm.dyt_grad
//       CHECK:   return
// LLVM-LABEL: llvm.func @grads
func.func @grads(%dys: tensor<4x6xf32>, %xs: tensor<4x6xf32>, %m: tensor<4xf32>, %r: tensor<4xf32>, %w: tensor<6xf32>, %a: tensor<f32>) -> (tensor<?x?xf32>, tensor<6xf32>, tensor<6xf32>, tensor<4x?xf32>, tensor<6xf32>, tensor<?x?xf32>, tensor<f32>) {
  %dy = tensor.cast %dys : tensor<4x6xf32> to tensor<?x?xf32>
  %x = tensor.cast %xs : tensor<4x6xf32> to tensor<?x?xf32>
  %md = tensor.cast %m : tensor<4xf32> to tensor<?xf32>
  %rd = tensor.cast %r : tensor<4xf32> to tensor<?xf32>
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%md) rstd(%rd) weight(%w) {has_bias} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<6xf32>) -> (tensor<?x?xf32>, tensor<6xf32>, tensor<6xf32>)
  %dy2 = tensor.cast %dys : tensor<4x6xf32> to tensor<4x?xf32>
  %x2 = tensor.cast %xs : tensor<4x6xf32> to tensor<4x?xf32>
  %dx2, %dw2 = norm.rms_norm_grad %dy2, %x2 rstd(%r) weight(%w) : (tensor<4x?xf32>, tensor<4x?xf32>, tensor<4xf32>, tensor<6xf32>) -> (tensor<4x?xf32>, tensor<6xf32>)
  %dx3, %da = norm.dyt_grad %dy, %x alpha(%a) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>) -> (tensor<?x?xf32>, tensor<f32>)
  return %dx, %dw, %db, %dx2, %dw2, %dx3, %da : tensor<?x?xf32>, tensor<6xf32>, tensor<6xf32>, tensor<4x?xf32>, tensor<6xf32>, tensor<?x?xf32>, tensor<f32>
}

// -----

// Rows of N = 0 elements: the dynamic scales are min_scale, 1 / (448 * 512)
// for f8E4M3FN, the attribute for i8; the statistics NaN.
// CHECK-LABEL: func @empty_rows
//   CHECK-DAG:   %[[NAN:.*]] = arith.constant dense<0x7FC00000> : tensor<4xf32>
//   CHECK-DAG:   %[[S2:.*]] = arith.constant 2.500000e-01 : f32
//   CHECK-DAG:   %[[S:.*]] = arith.constant dense<4.35965421E-6> : tensor<4x1xf32>
//   CHECK-DAG:   %[[SPLAT:.*]] = tensor.splat %[[S2]][%{{.*}}] : tensor<?x1xf32>
//   CHECK-NOT:   norm.
//       CHECK:   return %{{.*}}, %[[S]], %{{.*}}, %[[SPLAT]], %[[NAN]]
// LLVM-LABEL: llvm.func @empty_rows
func.func @empty_rows(%x: tensor<4x0xf32>, %d: tensor<?x?xbf16>, %w: tensor<0xf32>) -> (tensor<4x0xf8E4M3FN>, tensor<4x1xf32>, tensor<?x0xi8>, tensor<?x1xf32>, tensor<4xf32>) {
  %q, %s = norm.quantize %x : (tensor<4x0xf32>) -> (tensor<4x0xf8E4M3FN>, tensor<4x1xf32>)
  %xd = tensor.cast %d : tensor<?x?xbf16> to tensor<?x0xbf16>
  %y = norm.rms_norm %xd : (tensor<?x0xbf16>) -> tensor<?x0xbf16>
  %q2, %s2 = norm.quantize %y {min_scale = 2.5e-1 : f32} : (tensor<?x0xbf16>) -> (tensor<?x0xi8>, tensor<?x1xf32>)
  %y3, %m, %r = norm.layer_norm %x weight(%w) {return_stats} : (tensor<4x0xf32>, tensor<0xf32>) -> (tensor<4x0xf32>, tensor<4xf32>, tensor<4xf32>)
  return %q, %s, %q2, %s2, %r : tensor<4x0xf8E4M3FN>, tensor<4x1xf32>, tensor<?x0xi8>, tensor<?x1xf32>, tensor<4xf32>
}

// -----

// The same, statically empty only through a tensor.cast.
// CHECK-LABEL: func @empty_rows_folded
//       CHECK:   arith.constant dense<4.35965421E-6> : tensor<4x1xf32>
//   CHECK-NOT:   norm.
//       CHECK:   return
// LLVM-LABEL: llvm.func @empty_rows_folded
func.func @empty_rows_folded(%s: tensor<4x0xf32>) -> (tensor<?x?xf32>, tensor<?x?xf8E4M3FN>, tensor<?x1xf32>, tensor<?xf32>) {
  %x = tensor.cast %s : tensor<4x0xf32> to tensor<?x?xf32>
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>)
  %q, %scales = norm.quantize %x : (tensor<?x?xf32>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>)
  return %y, %q, %scales, %m : tensor<?x?xf32>, tensor<?x?xf8E4M3FN>, tensor<?x1xf32>, tensor<?xf32>
}

// -----

// Gradients of rows of N = 0 elements: the row loops decline them, the
// linalg decomposition gives the empty results and DyT's dalpha 0.
// CHECK-LABEL: func @grads_empty_rows
//   CHECK-NOT:   norm.
//       CHECK:   return
// LLVM-LABEL: llvm.func @grads_empty_rows
func.func @grads_empty_rows(%dy: tensor<4x0xf32>, %x: tensor<4x0xf32>, %m: tensor<4xf32>, %r: tensor<4xf32>, %w: tensor<0xf32>, %a: tensor<f32>, %dys: tensor<4x0xbf16>) -> (tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<?x?xbf16>, tensor<4x0xf32>, tensor<f32>) {
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<4x0xf32>, tensor<4x0xf32>, tensor<4xf32>, tensor<4xf32>, tensor<0xf32>) -> (tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32>)
  %d = tensor.cast %dys : tensor<4x0xbf16> to tensor<?x?xbf16>
  %dx2 = norm.rms_norm_grad %d, %d rstd(%r) : (tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<4xf32>) -> tensor<?x?xbf16>
  %dx3, %da = norm.dyt_grad %dy, %x alpha(%a) : (tensor<4x0xf32>, tensor<4x0xf32>, tensor<f32>) -> (tensor<4x0xf32>, tensor<f32>)
  return %dx, %dw, %db, %dx2, %dx3, %da : tensor<4x0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<?x?xbf16>, tensor<4x0xf32>, tensor<f32>
}
