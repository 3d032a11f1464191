// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's eliminate-empty-tensors followed by one-shot-bufferize computes
// wrong results when one init (here a linalg.fill of one tensor.empty)
// feeds two matmuls whose results are materialized in different buffers:
// the init becomes the first destination (%o1), the second matmul then
// accumulates onto the first one's result and writes it back over %o1.
// norm-cpu-pipeline and norm-gpu-pipeline run norm-split-shared-inits
// first, which gives each matmul its own init (execution test:
// test/Integration/CPU/shared-init.mlir).
//
// When these checks start failing, the LLVM in use bufferizes this module
// correctly: delete this file, and norm-split-shared-inits may go.

// RUN: mlir-opt %s --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// CHECK-LABEL: func @shared_fill
//  CHECK-SAME:   %[[A:[^:]*]]: memref<2x2xf32, {{.*}}>, %[[B:[^:]*]]: memref<2x2xf32, {{.*}}>, %[[O1:[^:]*]]: memref<2x2xf32>, %[[O2:[^:]*]]: memref<2x2xf32>)
//       CHECK:   linalg.fill {{.*}} outs(%[[O1]] : memref<2x2xf32>)
//       CHECK:   linalg.matmul ins(%[[A]], %[[B]] : {{.*}})
//       CHECK:   memref.copy %{{.*}}, %[[O1]]
// The second matmul starts from (and writes into) the first one's result.
//       CHECK:   linalg.matmul ins(%[[B]], %[[A]] : {{.*}}) outs(%[[O1]] : memref<2x2xf32>)
//       CHECK:   memref.copy %[[O1]], %[[O2]]
func.func @shared_fill(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %o1: memref<2x2xf32>, %o2: memref<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  bufferization.materialize_in_destination %m1 in restrict writable %o1 : (tensor<2x2xf32>, memref<2x2xf32>) -> ()
  %m2 = linalg.matmul ins(%b, %a : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  bufferization.materialize_in_destination %m2 in restrict writable %o2 : (tensor<2x2xf32>, memref<2x2xf32>) -> ()
  return
}
