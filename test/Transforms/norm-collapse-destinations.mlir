// RUN: norm-opt %s -split-input-file -norm-collapse-destinations | FileCheck %s

// The source of the expand_shape is materialized into the collapsed memref.
// CHECK-LABEL: func @collapse
//  CHECK-SAME: (%[[M:.*]]: tensor<256x768xf32>, %[[D:.*]]: memref<4x64x768xf32>)
//       CHECK: %[[C:.*]] = memref.collapse_shape %[[D]] {{\[}}[0, 1], [2]] : memref<4x64x768xf32> into memref<256x768xf32>
//       CHECK: bufferization.materialize_in_destination %[[M]] in restrict writable %[[C]] : (tensor<256x768xf32>, memref<256x768xf32>) -> ()
//   CHECK-NOT: tensor.expand_shape
func.func @collapse(%m: tensor<256x768xf32>, %d: memref<4x64x768xf32>) {
  %y = tensor.expand_shape %m [[0, 1], [2]] output_shape [4, 64, 768] : tensor<256x768xf32> into tensor<4x64x768xf32>
  bufferization.materialize_in_destination %y in restrict writable %d : (tensor<4x64x768xf32>, memref<4x64x768xf32>) -> ()
  return
}

// -----

// Dynamic dims collapse too.
// CHECK-LABEL: func @collapse_dynamic
//       CHECK: %[[C:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : memref<?x?x128xbf16> into memref<?x128xbf16>
//       CHECK: bufferization.materialize_in_destination %{{.*}} in writable %[[C]]
func.func @collapse_dynamic(%m: tensor<?x128xbf16>, %d: memref<?x?x128xbf16>, %a: index, %b: index) {
  %y = tensor.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 128] : tensor<?x128xbf16> into tensor<?x?x128xbf16>
  bufferization.materialize_in_destination %y in writable %d : (tensor<?x?x128xbf16>, memref<?x?x128xbf16>) -> ()
  return
}

// -----

// A destination whose layout does not collapse is left alone.
// CHECK-LABEL: func @strided_destination
//       CHECK: tensor.expand_shape
//   CHECK-NOT: memref.collapse_shape
//       CHECK: bufferization.materialize_in_destination
func.func @strided_destination(%m: tensor<8x16xf32>, %d: memref<2x4x16xf32, strided<[256, 32, 1]>>) {
  %y = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  bufferization.materialize_in_destination %y in restrict writable %d : (tensor<2x4x16xf32>, memref<2x4x16xf32, strided<[256, 32, 1]>>) -> ()
  return
}

// -----

// A tensor destination, and a source that is not an expand_shape, are left
// alone.
// CHECK-LABEL: func @not_applicable
//       CHECK: tensor.expand_shape
//       CHECK: bufferization.materialize_in_destination %{{.*}} in %{{.*}} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>)
//       CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %{{.*}} : (tensor<2x4x16xf32>, memref<2x4x16xf32>)
func.func @not_applicable(%m: tensor<8x16xf32>, %t: tensor<2x4x16xf32>, %d: memref<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %y = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  %r = bufferization.materialize_in_destination %y in %t : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  bufferization.materialize_in_destination %t in restrict writable %d : (tensor<2x4x16xf32>, memref<2x4x16xf32>) -> ()
  return %r : tensor<2x4x16xf32>
}
