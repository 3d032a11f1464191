// RUN: norm-opt %s -norm-drop-kernel-results -split-input-file | FileCheck %s

// Tensor level: the materialization of a result already computed in the
// destination argument (through a loop init and a reshape) is its source.
// CHECK-LABEL: func.func private @norm_kernel_rooted(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4xf32>, %[[D:.*]]: tensor<8xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[L:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[D]])
// CHECK-NOT:     materialize_in_destination
// CHECK:         return %[[L]]
func.func private @norm_kernel_rooted(%x: tensor<2x4xf32>, %d: tensor<8xf32>) -> tensor<8xf32> attributes {norm.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %xc = tensor.collapse_shape %x [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %l = scf.for %i = %c0 to %c8 step %c1 iter_args(%t = %d) -> (tensor<8xf32>) {
    %v = tensor.extract %xc[%i] : tensor<8xf32>
    %u = tensor.insert %v into %t[%i] : tensor<8xf32>
    scf.yield %u : tensor<8xf32>
  }
  %r = bufferization.materialize_in_destination %l in %d : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Near misses: a source computed in another tensor, and the same rooted
// materialization in a function without norm.kernel, keep theirs.
// CHECK-LABEL: func.func private @norm_kernel_elsewhere(
// CHECK:         bufferization.materialize_in_destination
// CHECK-LABEL: func.func private @not_a_kernel(
// CHECK:         bufferization.materialize_in_destination
func.func private @norm_kernel_elsewhere(%x: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> attributes {norm.kernel} {
  %e = tensor.empty() : tensor<8xf32>
  %c = linalg.copy ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = bufferization.materialize_in_destination %c in %d : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func private @not_a_kernel(%x: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> {
  %c = linalg.copy ins(%x : tensor<8xf32>) outs(%d : tensor<8xf32>) -> tensor<8xf32>
  %r = bufferization.materialize_in_destination %c in %d : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
