// RUN: norm-opt %s -norm-lower-cpu="vector-width=256 threads=2" -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-lower-cpu="vector-width=256 threads=1" -split-input-file | FileCheck %s --check-prefix=SEQ

// layer_norm_grad: blocks of 64 rows in parallel, the rows of a block one
// by one (blockRows % 4 of them) and then in groups of 4; per row one sweep
// sums g * xh and g (the lanes added as a tree: reassoc); a second sweep
// over the group writes each row's dx and adds the group's dy * xh and dy
// into the block's [2, N] tile of the partials ([blocks, 2, N]); the products
// and sums may contract. Then each parameter gradient is the f64 sum of its
// partials over the blocks in order, rounded to its type. The bf16 weight
// is widened to f32 once, before the loop over the blocks.
// CHECK-LABEL: func @layer_norm_grad
//  CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<64xbf16>)
//       CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c64 : index
//       CHECK: %[[P:.*]] = tensor.empty(%[[BLOCKS]]) : tensor<?x2x64xf32>
//       CHECK: %[[WF:.*]] = scf.for {{.*}} -> (tensor<64xf32>)
//       CHECK:   vector.transfer_read %[[W]]
//       CHECK:   arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
//   CHECK-NOT: vector.transfer_read %[[W]]
//       CHECK: %[[LOOP:.*]]:2 = scf.forall (%[[B:.*]]) in (%[[BLOCKS]]) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %[[P]])
//       CHECK:   scf.for {{.*}} -> (tensor<2x64xf32>)
//       CHECK:     vector.transfer_write %{{.*}}[%c0, %{{.*}}]
//       CHECK:     vector.transfer_write %{{.*}}[%c1, %{{.*}}]
//       CHECK:   %[[SINGLES:.*]] = arith.remui %{{.*}}, %c4 : index
//       CHECK:   scf.for %{{.*}} = %c0 to %[[SINGLES]] step %c1 iter_args
//       CHECK:     scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>)
//       CHECK:       arith.mulf {{.*}} fastmath<contract>
//       CHECK:     vector.reduction <add>, %{{.*}} fastmath<reassoc>
//       CHECK:     vector.reduction <add>, %{{.*}} fastmath<reassoc>
//       CHECK:     scf.for {{.*}} -> (tensor<?x64xbf16>, tensor<2x64xf32>)
//       CHECK:   scf.for %{{.*}} = %[[SINGLES]] to %{{.*}} step %c4 iter_args
// CHECK-COUNT-4:     vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
//       CHECK:     scf.for {{.*}} -> (tensor<?x64xbf16>, tensor<2x64xf32>)
// CHECK-COUNT-4:       vector.transfer_write %{{.*}} : vector<16xbf16>, tensor<?x64xbf16>
//       CHECK:       vector.transfer_read %{{.*}}[%c0, %{{.*}}], %{{.*}} : tensor<2x64xf32>, vector<16xf32>
//       CHECK:       vector.transfer_write %{{.*}}[%c0, %{{.*}}] {{.*}} : vector<16xf32>, tensor<2x64xf32>
//       CHECK:       vector.transfer_read %{{.*}}[%c1, %{{.*}}], %{{.*}} : tensor<2x64xf32>, vector<16xf32>
//       CHECK:       vector.transfer_write %{{.*}}[%c1, %{{.*}}] {{.*}} : vector<16xf32>, tensor<2x64xf32>
//       CHECK:       scf.yield
//       CHECK:   scf.forall.in_parallel
//       CHECK: } {norm.nontemporal_min_trips = 1024 : i64, norm.nontemporal_stores, norm.prefetch_next_row}
//       CHECK: scf.for {{.*}} -> (tensor<64xbf16>)
//       CHECK:   scf.for %{{.*}} = %c0 to %[[BLOCKS]] step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf64>)
//       CHECK:     vector.transfer_read %[[LOOP]]#1[%{{.*}}, %c0, %{{.*}}]
//       CHECK: scf.for {{.*}} -> (tensor<64xbf16>)
//       CHECK:   scf.for %{{.*}} = %c0 to %[[BLOCKS]] step %c1 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf64>)
//       CHECK:     vector.transfer_read %[[LOOP]]#1[%{{.*}}, %c1, %{{.*}}]
//   CHECK-NOT: linalg.generic
// SEQ-LABEL: func @layer_norm_grad
//       SEQ: scf.forall
//       SEQ: norm.sequential
func.func @layer_norm_grad(%dy: tensor<?x64xbf16>, %x: tensor<?x64xbf16>, %m: tensor<?xf32>, %r: tensor<?xf32>, %w: tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) {
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>)
  return %dx, %dw, %db : tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>
}

// -----

// Rows of a static length of 2048 or more: blocks of 256 rows (so the
// partials and their sum over the blocks stay small); 600 rows make 3 blocks.
// CHECK-LABEL: func @rms_norm_grad_long_rows
//       CHECK: scf.forall (%{{.*}}) in (3) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<600x2048xf32>, tensor<3x1x2048xf32>)
//       CHECK:   arith.muli %{{.*}}, %c256
func.func @rms_norm_grad_long_rows(%dy: tensor<600x2048xf32>, %x: tensor<600x2048xf32>, %r: tensor<600xf32>, %w: tensor<2048xf32>) -> (tensor<600x2048xf32>, tensor<2048xf32>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) : (tensor<600x2048xf32>, tensor<600x2048xf32>, tensor<600xf32>, tensor<2048xf32>) -> (tensor<600x2048xf32>, tensor<2048xf32>)
  return %dx, %dw : tensor<600x2048xf32>, tensor<2048xf32>
}

// -----

// Rows of a length known only at run time: the block size is chosen there
// by the same rule (256 rows from 2048 elements on, else 64), and dx is
// written with non-temporal stores whenever its rows are aligned (no row
// count threshold: the row length is unknown), as the forward's row loops.
// CHECK-LABEL: func @rms_norm_grad_dynamic_row
//  CHECK-SAME: %{{[a-z0-9]+}}: tensor<?x?xf32>, %[[X:[a-z0-9]+]]: tensor<?x?xf32>
//       CHECK: %[[N:.*]] = tensor.dim %[[X]], %c1
//       CHECK: %[[LONG:.*]] = arith.cmpi uge, %[[N]], %c2048 : index
//       CHECK: %[[ROWS:.*]] = arith.select %[[LONG]], %c256, %c64 : index
//       CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %[[ROWS]] : index
//       CHECK: scf.forall (%[[B:.*]]) in (%[[BLOCKS]])
//       CHECK:   arith.muli %[[B]], %[[ROWS]]
//       CHECK: } {norm.nontemporal_stores, norm.prefetch_next_row}
// SEQ-LABEL: func @rms_norm_grad_dynamic_row
//       SEQ: } {norm.nontemporal_stores, norm.prefetch_next_row, norm.sequential}
func.func @rms_norm_grad_dynamic_row(%dy: tensor<?x?xf32>, %x: tensor<?x?xf32>, %r: tensor<?xf32>, %w: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>)
  return %dx, %dw : tensor<?x?xf32>, tensor<?xf32>
}

// -----

// rms_norm_grad over a 3-D input: the leading dims are collapsed into rows
// and dx expanded back; one sum per row (no mean), no bias. The weight
// offset is added to the weight once, before the loop over the blocks.
// CHECK-LABEL: func @rms_norm_grad_3d
//       CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x40xf32> into tensor<16x40xf32>
//       CHECK: scf.for {{.*}} -> (tensor<40xf32>)
//       CHECK:   arith.addf %{{.*}}, %cst{{.*}} : vector<16xf32>
//       CHECK: scf.forall (%{{.*}}) in (1) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<16x40xf32>, tensor<1x1x40xf32>)
//       CHECK:   scf.for
//       CHECK:   vector.reduction <add>
//   CHECK-NOT:   vector.reduction
//       CHECK:   scf.for %{{.*}} step %c4
// CHECK-COUNT-4:   vector.reduction <add>
//   CHECK-NOT:   vector.reduction
//       CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 40] : tensor<16x40xf32> into tensor<2x8x40xf32>
func.func @rms_norm_grad_3d(%dy: tensor<2x8x40xf32>, %x: tensor<2x8x40xf32>, %r: tensor<2x8xf32>, %w: tensor<40xf32>) -> (tensor<2x8x40xf32>, tensor<40xf32>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) {weight_offset = 1.0 : f32} : (tensor<2x8x40xf32>, tensor<2x8x40xf32>, tensor<2x8xf32>, tensor<40xf32>) -> (tensor<2x8x40xf32>, tensor<40xf32>)
  return %dx, %dw : tensor<2x8x40xf32>, tensor<40xf32>
}

// -----

// dyt_grad: no row sums; dx, the partial rows of dweight and dbias
// ([blocks, 2, N]), and dalpha's partial lanes per block ([blocks, 16]),
// summed in f64 over the blocks and then the lanes.
// CHECK-LABEL: func @dyt_grad
//       CHECK: scf.forall {{.*}} -> (tensor<?x96xf32>, tensor<?x2x96xf32>, tensor<?x16xf32>)
//   CHECK-NOT:   vector.reduction
//       CHECK:   scf.forall.in_parallel
//       CHECK: } {norm.nontemporal_min_trips = 342 : i64, norm.nontemporal_stores, norm.prefetch_next_row}
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
