// RUN: norm-opt %s --transform-interpreter -split-input-file | FileCheck %s

// TilingInterface: only the leading (row) dims are tiled; x and residual are
// sliced, weight is used whole, both results are inserted back.
// CHECK-LABEL: func @tile_rms_norm_rows
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[R:.*]]: tensor<?x64xf32>)
//       CHECK: %[[RES:.*]]:2 = scf.forall (%[[I:.*]]) in (%{{.*}}) shared_outs(%[[O0:.*]] = %{{.*}}, %[[O1:.*]] = %{{.*}})
//       CHECK:   %[[XS:.*]] = tensor.extract_slice %[[X]][%[[OFF:.*]], 0] [%[[SZ:.*]], 64] [1, 1]
//       CHECK:   %[[RS:.*]] = tensor.extract_slice %[[R]][%[[OFF]], 0] [%[[SZ]], 64] [1, 1]
//       CHECK:   %[[Y:.*]], %[[S:.*]] = norm.rms_norm %[[XS]] weight(%[[W]]) residual(%[[RS]])
//       CHECK:   tensor.parallel_insert_slice %[[Y]] into %[[O0]][%[[OFF]], 0] [%[[SZ]], 64] [1, 1]
//       CHECK:   tensor.parallel_insert_slice %[[S]] into %[[O1]][%[[OFF]], 0] [%[[SZ]], 64] [1, 1]
//       CHECK: return %[[RES]]#0, %[[RES]]#1
func.func @tile_rms_norm_rows(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %r: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) : (tensor<?x64xf32>, tensor<64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
  return %y, %s : tensor<?x64xf32>, tensor<?x64xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.rms_norm"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A 3-D layer_norm with axis = -2 has one loop (dim 0); dims 1 and 2 stay
// whole in every tile.
// CHECK-LABEL: func @tile_layer_norm_3d
//       CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
//       CHECK:   %[[XS:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0, 0] [2, 3, 16] [1, 1, 1] : tensor<8x3x16xbf16> to tensor<2x3x16xbf16>
//       CHECK:   norm.layer_norm %[[XS]] weight(%{{.*}}) {axis = -2 : i64} : (tensor<2x3x16xbf16>, tensor<3x16xbf16>) -> tensor<2x3x16xbf16>
//       CHECK:   tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0, 0] [2, 3, 16] [1, 1, 1]
func.func @tile_layer_norm_3d(%x: tensor<8x3x16xbf16>, %w: tensor<3x16xbf16>) -> tensor<8x3x16xbf16> {
  %y = norm.layer_norm %x weight(%w) {axis = -2} : (tensor<8x3x16xbf16>, tensor<3x16xbf16>) -> tensor<8x3x16xbf16>
  return %y : tensor<8x3x16xbf16>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.layer_norm"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_for %op tile_sizes [2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// AggregatedOpInterface: decompose_interface rewrites the op into its linalg
// decomposition (the same as norm-to-linalg).
// CHECK-LABEL: func @decompose_dyt
//   CHECK-NOT: norm.dyt
//       CHECK: linalg.generic
//       CHECK:   math.tanh
func.func @decompose_dyt(%x: tensor<4x16xf32>, %a: tensor<f32>) -> tensor<4x16xf32> {
  %y = norm.dyt %x alpha(%a) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.dyt"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
