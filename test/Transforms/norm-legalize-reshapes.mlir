// RUN: norm-opt %s -split-input-file -verify-diagnostics -norm-legalize-reshapes | FileCheck %s
// RUN: norm-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(norm-legalize-reshapes))" | FileCheck %s

// Two dynamic dims in one group: a tensor.reshape to the same sizes.
// CHECK-LABEL: func @two_dynamic_dims_in_one_group
//  CHECK-SAME:   (%[[M:.*]]: tensor<?x64xf32>, %[[B:.*]]: index, %[[S:.*]]: index)
//       CHECK:   %[[C64:.*]] = arith.constant 64 : index
//       CHECK:   %[[SHAPE:.*]] = tensor.from_elements %[[B]], %[[S]], %[[C64]] : tensor<3xindex>
//       CHECK:   %[[R:.*]] = tensor.reshape %[[M]](%[[SHAPE]]) : (tensor<?x64xf32>, tensor<3xindex>) -> tensor<?x?x64xf32>
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   return %[[R]]
func.func @two_dynamic_dims_in_one_group(%m: tensor<?x64xf32>, %b: index, %s: index) -> tensor<?x?x64xf32> {
  %e = tensor.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}

// -----

// Every dim in one group, two of them dynamic, with static ones between.
// CHECK-LABEL: func @one_group_mixed
//       CHECK:   %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xindex>
//       CHECK:   tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?xbf16>, tensor<4xindex>) -> tensor<2x?x3x?xbf16>
func.func @one_group_mixed(%m: tensor<?xbf16>, %a: index, %b: index) -> tensor<2x?x3x?xbf16> {
  %e = tensor.expand_shape %m [[0, 1, 2, 3]] output_shape [2, %a, 3, %b] : tensor<?xbf16> into tensor<2x?x3x?xbf16>
  return %e : tensor<2x?x3x?xbf16>
}

// -----

// One dynamic dim per group is left alone.
// CHECK-LABEL: func @one_dynamic_dim_per_group
//       CHECK:   tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [%{{.*}}, 8, 4, %{{.*}}]
//   CHECK-NOT:   tensor.reshape
func.func @one_dynamic_dim_per_group(%m: tensor<?x?xf32>, %a: index, %b: index) -> tensor<?x8x4x?xf32> {
  %e = tensor.expand_shape %m [[0, 1], [2, 3]] output_shape [%a, 8, 4, %b] : tensor<?x?xf32> into tensor<?x8x4x?xf32>
  return %e : tensor<?x8x4x?xf32>
}

// -----

// A memref cannot take a reshape without an identity layout: rejected, and
// the module is left as it was.
func.func @memref_two_dynamic_dims(%m: memref<?x64xf32>, %b: index, %s: index) -> memref<?x?x64xf32> {
  // expected-error @+1 {{'memref.expand_shape' op has several dynamic dims in one reassociation group, which LLVM 22's expand-strided-metadata cannot lower}}
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}

// -----

// A memref with one dynamic dim per group is fine.
// CHECK-LABEL: func @memref_one_dynamic_dim_per_group
//       CHECK:   memref.expand_shape
func.func @memref_one_dynamic_dim_per_group(%m: memref<?x64xf32>, %b: index) -> memref<?x4x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, 4, 64] : memref<?x64xf32> into memref<?x4x64xf32>
  return %e : memref<?x4x64xf32>
}
