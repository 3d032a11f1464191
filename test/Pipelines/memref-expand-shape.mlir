// RUN: not norm-opt %s --norm-cpu-pipeline 2>&1 | FileCheck %s
// RUN: not norm-opt %s --norm-cpu-pipeline="lowering=linalg threads=2" 2>&1 | FileCheck %s

// A memref-level expand_shape with two dynamic dims in one group, which
// LLVM 22's expand-strided-metadata would crash on: one located diagnostic
// and a non-zero exit.

// CHECK: memref-expand-shape.mlir:[[# @LINE + 3]]:8: error: 'memref.expand_shape' op has several dynamic dims in one reassociation group
// CHECK-NOT: error:
func.func @memref_input(%m: memref<?x64xf32>, %b: index, %s: index) -> memref<?x?x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}
