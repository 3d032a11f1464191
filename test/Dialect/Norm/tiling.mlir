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

// -----

// The statistics of return_stats are tiled with the loops: a tile of rows
// gives the matching slice of mean and rstd.
// CHECK-LABEL: func @tile_layer_norm_stats
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>)
//       CHECK: %[[RES:.*]]:3 = scf.forall (%[[I:.*]]) in (%{{.*}}) shared_outs(%[[O0:.*]] = %{{.*}}, %[[O1:.*]] = %{{.*}}, %[[O2:.*]] = %{{.*}})
//       CHECK:   %[[XS:.*]] = tensor.extract_slice %[[X]][%[[OFF:.*]], 0] [%[[SZ:.*]], 64] [1, 1]
//       CHECK:   %[[Y:.*]], %[[M:.*]], %[[R:.*]] = norm.layer_norm %[[XS]] {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>)
//       CHECK:   tensor.parallel_insert_slice %[[Y]] into %[[O0]][%[[OFF]], 0] [%[[SZ]], 64] [1, 1]
//       CHECK:   tensor.parallel_insert_slice %[[M]] into %[[O1]][%[[OFF]]] [%[[SZ]]] [1]
//       CHECK:   tensor.parallel_insert_slice %[[R]] into %[[O2]][%[[OFF]]] [%[[SZ]]] [1]
//       CHECK: return %[[RES]]#0, %[[RES]]#1, %[[RES]]#2
func.func @tile_layer_norm_stats(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>) {
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>)
  return %y, %m, %r : tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.layer_norm"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Tile-and-fuse through a consumer of rstd: the producer's tile of rows is
// fused into the consumer's loop.
// CHECK-LABEL: func @fuse_into_stats_consumer
//       CHECK: scf.forall
//       CHECK:   %{{.*}}, %[[R:.*]] = norm.rms_norm %{{.*}} {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[R]] : tensor<?xf32>)
func.func @fuse_into_stats_consumer(%x: tensor<?x64xf32>) -> tensor<?xf32> {
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>)
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%d) : tensor<?xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%r : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %sq : tensor<?xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %norm = transform.structured.match ops{["norm.rms_norm"]} in %root : (!transform.any_op) -> !transform.any_op
    %fused, %new_loop = transform.structured.fuse_into_containing_op %norm into %loop : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
