// RUN: norm-opt %s -norm-lower-cpu="vector-width=256 threads=2" -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-lower-cpu="vector-width=256 threads=1" -split-input-file | FileCheck %s --check-prefix=SEQ

// layer_norm_grad: blocks of 64 rows in parallel; per row one sweep sums
// g * xh and g, a second writes dx and adds dy * xh and dy into the block's
// [1, N] partial rows; then each parameter gradient is the f64 sum of the
// partials over the blocks in order, rounded to its type.
// CHECK-LABEL: func @layer_norm_grad
//       CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c64 : index
//       CHECK: %[[DW:.*]] = tensor.empty(%[[BLOCKS]]) : tensor<?x1x64xf32>
//       CHECK: %[[DB:.*]] = tensor.empty(%[[BLOCKS]]) : tensor<?x1x64xf32>
//       CHECK: %[[LOOP:.*]]:3 = scf.forall (%[[B:.*]]) in (%[[BLOCKS]]) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %[[DW]], %{{.*}} = %[[DB]])
//       CHECK:   scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args
//       CHECK:     scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>)
//       CHECK:     vector.reduction <add>
//       CHECK:     vector.reduction <add>
//       CHECK:     scf.for {{.*}} -> (tensor<?x64xbf16>, tensor<64xf32>, tensor<64xf32>)
//       CHECK:   scf.forall.in_parallel
//       CHECK: } {norm.nontemporal_min_trips = 1024 : i64, norm.nontemporal_stores, norm.prefetch_next_row}
//       CHECK: scf.for {{.*}} -> (tensor<64xbf16>)
//       CHECK:   scf.for %{{.*}} = %c0 to %[[BLOCKS]] step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf64>)
//   CHECK-NOT: linalg.generic
// SEQ-LABEL: func @layer_norm_grad
//       SEQ: scf.forall
//       SEQ: norm.sequential
func.func @layer_norm_grad(%dy: tensor<?x64xbf16>, %x: tensor<?x64xbf16>, %m: tensor<?xf32>, %r: tensor<?xf32>, %w: tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) {
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>)
  return %dx, %dw, %db : tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>
}

// -----

// rms_norm_grad over a 3-D input: the leading dims are collapsed into rows
// and dx expanded back; one sum per row (no mean), no bias.
// CHECK-LABEL: func @rms_norm_grad_3d
//       CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x40xf32> into tensor<16x40xf32>
//       CHECK: scf.forall (%{{.*}}) in (1) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<16x40xf32>, tensor<1x1x40xf32>)
//       CHECK:   vector.reduction <add>
//   CHECK-NOT:   vector.reduction
//       CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 40] : tensor<16x40xf32> into tensor<2x8x40xf32>
func.func @rms_norm_grad_3d(%dy: tensor<2x8x40xf32>, %x: tensor<2x8x40xf32>, %r: tensor<2x8xf32>, %w: tensor<40xf32>) -> (tensor<2x8x40xf32>, tensor<40xf32>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) {weight_offset = 1.0 : f32} : (tensor<2x8x40xf32>, tensor<2x8x40xf32>, tensor<2x8xf32>, tensor<40xf32>) -> (tensor<2x8x40xf32>, tensor<40xf32>)
  return %dx, %dw : tensor<2x8x40xf32>, tensor<40xf32>
}

// -----

// dyt_grad: no row sums; dx, the partial rows of dweight and dbias, and
// dalpha's partial lanes per block ([blocks, 16]), summed in f64 over the
// blocks and then the lanes.
// CHECK-LABEL: func @dyt_grad
//       CHECK: scf.forall {{.*}} -> (tensor<?x96xf32>, tensor<?x1x96xf32>, tensor<?x1x96xf32>, tensor<?x16xf32>)
//   CHECK-NOT:   vector.reduction
//       CHECK:   scf.forall.in_parallel
//       CHECK: scf.for {{.*}} -> (vector<16xf64>)
//       CHECK: vector.reduction <add>, %{{.*}} : vector<16xf64> into f64
//       CHECK: tensor.from_elements %{{.*}} : tensor<f32>
//   CHECK-NOT: linalg.generic
func.func @dyt_grad(%dy: tensor<?x96xf32>, %x: tensor<?x96xf32>, %a: tensor<f32>, %w: tensor<96xf32>) -> (tensor<?x96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<f32>) {
  %dx, %dw, %db, %da = norm.dyt_grad %dy, %x alpha(%a) weight(%w) {has_bias} : (tensor<?x96xf32>, tensor<?x96xf32>, tensor<f32>, tensor<96xf32>) -> (tensor<?x96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<f32>)
  return %dx, %dw, %db, %da : tensor<?x96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<f32>
}

// -----

// Forms the row loops do not cover take the linalg decomposition: a scalar
// weight, several normalized dims.
// CHECK-LABEL: func @fallbacks
//   CHECK-NOT: scf.forall
//       CHECK: linalg.generic
func.func @fallbacks(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<f32>, %r: tensor<4xf32>, %s: tensor<1xf32>, %r0: tensor<f32>) -> (tensor<4x8xf32>, tensor<f32>, tensor<4x8xf32>, tensor<1xf32>, tensor<4x8xf32>) {
  %dx, %da = norm.dyt_grad %dy, %x alpha(%a) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<f32>)
  %dx2, %ds = norm.rms_norm_grad %dy, %x rstd(%r) weight(%s) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<1xf32>) -> (tensor<4x8xf32>, tensor<1xf32>)
  %dx3 = norm.rms_norm_grad %dy, %x rstd(%r0) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %dx, %da, %dx2, %ds, %dx3 : tensor<4x8xf32>, tensor<f32>, tensor<4x8xf32>, tensor<1xf32>, tensor<4x8xf32>
}
