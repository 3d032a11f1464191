// RUN: norm-opt %s -norm-drop-kernel-results -split-input-file | FileCheck %s

// A norm.kernel function returning its destination argument (directly and
// through a cast) loses those results; the calls use the arguments. The
// result that is a new buffer stays.
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:      %[[X:.*]]: memref<8x64xf32>, %[[D:.*]]: memref<8x64xf32>, %[[E:.*]]: memref<8x64xf32>)
// CHECK:         %[[N:.*]] = call @norm_kernel_a(%[[X]], %[[D]], %[[E]]) : (memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>) -> memref<8x64xf32>
// CHECK:         %[[C:.*]] = memref.cast %[[E]] : memref<8x64xf32> to memref<?x64xf32>
// CHECK:         return %[[D]], %[[N]], %[[C]]
// CHECK-LABEL: func.func private @norm_kernel_a(
// CHECK-SAME:      -> memref<8x64xf32> attributes {norm.kernel}
// CHECK:         %[[NEW:.*]] = memref.alloc
// CHECK:         return %[[NEW]] : memref<8x64xf32>
func.func @caller(%x: memref<8x64xf32>, %d: memref<8x64xf32>, %e: memref<8x64xf32>) -> (memref<8x64xf32>, memref<8x64xf32>, memref<?x64xf32>) {
  %r:3 = call @norm_kernel_a(%x, %d, %e) : (memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>) -> (memref<8x64xf32>, memref<8x64xf32>, memref<?x64xf32>)
  return %r#0, %r#1, %r#2 : memref<8x64xf32>, memref<8x64xf32>, memref<?x64xf32>
}
func.func private @norm_kernel_a(%x: memref<8x64xf32>, %d: memref<8x64xf32>, %e: memref<8x64xf32>) -> (memref<8x64xf32>, memref<8x64xf32>, memref<?x64xf32>) attributes {norm.kernel} {
  memref.copy %x, %d : memref<8x64xf32> to memref<8x64xf32>
  %n = memref.alloc() : memref<8x64xf32>
  memref.copy %x, %n : memref<8x64xf32> to memref<8x64xf32>
  %c = memref.cast %e : memref<8x64xf32> to memref<?x64xf32>
  return %d, %n, %c : memref<8x64xf32>, memref<8x64xf32>, memref<?x64xf32>
}

// -----

// Near miss: the same function without the norm.kernel attribute (a
// user's function, or a public one) keeps its signature.
// CHECK-LABEL: func.func @other_caller(
// CHECK:         %[[R:.*]] = call @not_a_kernel(%{{.*}}) : (memref<8x64xf32>) -> memref<8x64xf32>
// CHECK:         return %[[R]]
// CHECK-LABEL: func.func private @not_a_kernel(
// CHECK-SAME:      -> memref<8x64xf32>
// CHECK:         return %{{.*}} : memref<8x64xf32>
func.func @other_caller(%d: memref<8x64xf32>) -> memref<8x64xf32> {
  %r = call @not_a_kernel(%d) : (memref<8x64xf32>) -> memref<8x64xf32>
  return %r : memref<8x64xf32>
}
func.func private @not_a_kernel(%d: memref<8x64xf32>) -> memref<8x64xf32> {
  return %d : memref<8x64xf32>
}
