// RUN: norm-opt %s --transform-interpreter -split-input-file | FileCheck %s

// TilingInterface of norm.quantize: the loops are every dim but the last;
// the input is sliced by whole rows, the scale is used whole, q and the
// scales are inserted back.
// CHECK-LABEL: func @tile_quantize_rows
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x256xbf16>)
//       CHECK: %[[RES:.*]]:2 = scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(%[[O0:.*]] = %{{.*}}, %[[O1:.*]] = %{{.*}})
//       CHECK:   %[[YS:.*]] = tensor.extract_slice %[[Y]][%[[OFF:.*]], 0] [%[[SZ:.*]], 256] [1, 1]
//       CHECK:   %[[Q:.*]], %[[S:.*]] = norm.quantize %[[YS]] {group_size = 64 : i64} : (tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x4xf32>)
//       CHECK:   tensor.parallel_insert_slice %[[Q]] into %[[O0]][%[[OFF]], 0] [%[[SZ]], 256] [1, 1]
//       CHECK:   tensor.parallel_insert_slice %[[S]] into %[[O1]][%[[OFF]], 0] [%[[SZ]], 4] [1, 1]
//       CHECK: return %[[RES]]#0, %[[RES]]#1
func.func @tile_quantize_rows(%y: tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x4xf32>) {
  %q, %s = norm.quantize %y {group_size = 64 : i64} : (tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x4xf32>)
  return %q, %s : tensor<?x256xf8E4M3FN>, tensor<?x4xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.quantize"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %op tile_sizes [8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// Tile-and-fuse: the norm producing y is fused into the loop of its
// quantization (whole rows), so the row loop holds both ops.
// CHECK-LABEL: func @fuse_norm_into_quantize_tiles
//       CHECK: scf.for
//       CHECK:   %[[XS:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0] [16, 128] [1, 1]
//       CHECK:   %[[YS:.*]] = norm.rms_norm %[[XS]]
//       CHECK:   norm.quantize %[[YS]] scale(%{{.*}})
func.func @fuse_norm_into_quantize_tiles(%x: tensor<64x128xf32>, %s: tensor<f32>) -> tensor<64x128xi8> {
  %y = norm.rms_norm %x : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %q = norm.quantize %y scale(%s) : (tensor<64x128xf32>, tensor<f32>) -> tensor<64x128xi8>
  return %q : tensor<64x128xi8>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.quantize"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.fuse %op tile_sizes [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// AggregatedOpInterface: decompose_interface gives norm-to-linalg's
// decomposition.
// CHECK-LABEL: func @decompose_quantize
//   CHECK-NOT: norm.quantize
//       CHECK: linalg.generic
//       CHECK:   math.roundeven
func.func @decompose_quantize(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %op = transform.structured.match ops{["norm.quantize"]} in %root : (!transform.any_op) -> !transform.any_op
    %d = transform.structured.decompose_interface %op : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
