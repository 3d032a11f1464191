// RUN: norm-opt %s -norm-fuse-matmul="remarks=true tile-rows=4" -split-input-file -verify-diagnostics | FileCheck %s

// Declined candidates stay unchanged and are explained by remarks (they are
// also counted in the pass statistic `declined`, which norm-opt
// --norm-pass-statistics reports).

// Not fused: the norm op feeding the matmul normalizes all of its dims, so
// a tile of rows of the matmul does not hold whole rows of the norm.
// CHECK-LABEL: func @prologue_several_dims
//   CHECK-NOT: scf.for
//       CHECK: norm.rms_norm %{{.*}} {axis = 0 : i64}
//       CHECK: linalg.matmul
func.func @prologue_several_dims(%x: tensor<4x8xf32>, %m: tensor<8x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-remark @+1 {{not fused with a matmul: the norm op normalizes several dims}}
  %y = norm.rms_norm %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %o : tensor<4x16xf32>
}

// -----

// Not fused: the same with linalg.batch_matmul (the norm op normalizes the
// sequence and feature dims together).
// CHECK-LABEL: func @prologue_several_dims_batch
//   CHECK-NOT: scf.for
//       CHECK: norm.layer_norm %{{.*}} {axis = 1 : i64}
//       CHECK: linalg.batch_matmul
func.func @prologue_several_dims_batch(%x: tensor<2x4x8xf32>, %m: tensor<2x8x16xf32>, %z: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  // expected-remark @+1 {{not fused with a matmul: the norm op normalizes several dims}}
  %y = norm.layer_norm %x {axis = 1 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%y, %m : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %o : tensor<2x4x16xf32>
}

// -----

// Not fused: the norm op consuming the matmul normalizes all of its dims,
// so it has no row dims to tile.
// CHECK-LABEL: func @epilogue_no_row_dims
//   CHECK-NOT: scf.for
//       CHECK: linalg.matmul
//       CHECK: norm.layer_norm %{{.*}} {axis = 0 : i64}
func.func @epilogue_no_row_dims(%a: tensor<4x8xf32>, %m: tensor<8x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %p = linalg.matmul ins(%a, %m : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{not fused with a matmul: the norm op has no row dims to tile}}
  %y = norm.layer_norm %p {axis = 0 : i64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Not fused: the same for a dyt on a batch_matmul result (axis 0: its
// weight would cover the whole tensor, so it has no row dims either).
// CHECK-LABEL: func @epilogue_no_row_dims_batch
//   CHECK-NOT: scf.for
//       CHECK: linalg.batch_matmul
//       CHECK: norm.dyt %{{.*}} alpha(%{{.*}}) {axis = 0 : i64}
func.func @epilogue_no_row_dims_batch(%a: tensor<2x4x8xf32>, %m: tensor<2x8x16xf32>, %z: tensor<2x4x16xf32>, %alpha: tensor<f32>) -> tensor<2x4x16xf32> {
  %p = linalg.batch_matmul ins(%a, %m : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  // expected-remark @+1 {{not fused with a matmul: the norm op has no row dims to tile}}
  %y = norm.dyt %p alpha(%alpha) {axis = 0 : i64} : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

// Not fused: a matmul that reads the normalized operand transposed (its
// rows are the norm op's columns) is left unchanged.
// CHECK-LABEL: func @prologue_transposed_lhs
//   CHECK-NOT: scf.for
//       CHECK: norm.rms_norm
//       CHECK: linalg.matmul
func.func @prologue_transposed_lhs(%x: tensor<64x16xf32>, %w: tensor<64x32xf32>, %z: tensor<16x32xf32>) -> tensor<16x32xf32> {
  // expected-remark @+1 {{not fused with a matmul: the matmul reads the normalized operand transposed (a row tile needs a column block of the norm op)}}
  %y = norm.rms_norm %x : (tensor<64x16xf32>) -> tensor<64x16xf32>
  %o = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%y, %w : tensor<64x16xf32>, tensor<64x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %o : tensor<16x32xf32>
}

// -----

// Not fused: a training forward whose statistics are used; its tiles in the
// matmul loop would not replace it.
// CHECK-LABEL: func @prologue_used_stats
//   CHECK-NOT: scf.for
//       CHECK: norm.rms_norm %{{.*}} {return_stats}
//       CHECK: linalg.matmul
func.func @prologue_used_stats(%x: tensor<16x8xf32>, %m: tensor<8x16xf32>, %z: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  // expected-remark @+1 {{not fused with a matmul: the norm op's statistics are used (the op would be computed both whole and in the matmul's tiles)}}
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16xf32>)
  %o = linalg.matmul ins(%y, %m : tensor<16x8xf32>, tensor<8x16xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %o, %r : tensor<16x16xf32>, tensor<16xf32>
}

// -----

// Not a candidate (wrong operand role): the normalized value is the
// matmul's right operand; nothing is tiled.
// CHECK-LABEL: func @normalized_rhs
//   CHECK-NOT: scf.for
//       CHECK: %[[Y:.*]] = norm.rms_norm
//       CHECK: linalg.matmul ins(%{{.*}}, %[[Y]] : tensor<4x8xf32>, tensor<8x8xf32>)
func.func @normalized_rhs(%a: tensor<4x8xf32>, %x: tensor<8x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = norm.rms_norm %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = linalg.matmul ins(%a, %y : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Not a candidate (init): the normalized value is only the matmul's init.
// CHECK-LABEL: func @normalized_init
//   CHECK-NOT: scf.for
//       CHECK: %[[Y:.*]] = norm.rms_norm
//       CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>) outs(%[[Y]] : tensor<8x8xf32>)
func.func @normalized_init(%a: tensor<8x8xf32>, %m: tensor<8x8xf32>, %x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = norm.rms_norm %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = linalg.matmul ins(%a, %m : tensor<8x8xf32>, tensor<8x8xf32>) outs(%y : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

// Not a candidate (wrong operand role): the matmul's product is the norm
// op's residual, not its input.
// CHECK-LABEL: func @epilogue_residual
//   CHECK-NOT: scf.for
//       CHECK: %[[P:.*]] = linalg.matmul
//       CHECK: norm.rms_norm %{{.*}} residual(%[[P]])
func.func @epilogue_residual(%a: tensor<8x8xf32>, %m: tensor<8x8xf32>, %z: tensor<8x8xf32>, %x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = linalg.matmul ins(%a, %m : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y, %s = norm.rms_norm %x residual(%p) : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  return %y, %s : tensor<8x8xf32>, tensor<8x8xf32>
}
