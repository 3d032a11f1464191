// RUN: norm-opt %s -split-input-file -norm-split-shared-inits | FileCheck %s

// A fill shared by two matmuls: the second gets its own fill of its own
// empty tensor.
// CHECK-LABEL: func @shared_fill
//   CHECK-DAG:   %[[E1:.*]] = tensor.empty() : tensor<4x4xf32>
//   CHECK-DAG:   %[[E2:.*]] = tensor.empty() : tensor<4x4xf32>
//   CHECK-DAG:   %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x4xf32>)
//   CHECK-DAG:   %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4x4xf32>)
//   CHECK-DAG:   linalg.matmul {{.*}} outs(%[[Z1]] : tensor<4x4xf32>)
//   CHECK-DAG:   linalg.matmul {{.*}} outs(%[[Z2]] : tensor<4x4xf32>)
func.func @shared_fill(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%m1, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A shared empty tensor (dynamic: the clone keeps its size operand).
// CHECK-LABEL: func @shared_empty
//  CHECK-SAME:   (%{{.*}}: tensor<?x4xf32>, %[[N:.*]]: index)
//   CHECK-DAG:   %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
//   CHECK-DAG:   %[[E2:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
//   CHECK-DAG:   linalg.exp {{.*}} outs(%[[E1]] : tensor<?x4xf32>)
//   CHECK-DAG:   linalg.negf {{.*}} outs(%[[E2]] : tensor<?x4xf32>)
func.func @shared_empty(%a: tensor<?x4xf32>, %n: index) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %x = linalg.exp ins(%a : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %y = linalg.negf ins(%a : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %x, %y : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Left alone: one destination use (the other use only reads), fills on
// buffers.
// CHECK-LABEL: func @unshared
//       CHECK:   tensor.empty
//   CHECK-NOT:   tensor.empty
//       CHECK:   linalg.fill
//       CHECK:   linalg.fill
//   CHECK-NOT:   linalg.fill
func.func @unshared(%a: tensor<4x4xf32>, %m: memref<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.add ins(%a, %z : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  linalg.fill ins(%zero : f32) outs(%m : memref<4x4xf32>)
  return %s, %z : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The initial value of a loop-carried tensor (a tiled op's destination) is
// a destination use too.
// CHECK-LABEL: func @loop_init
//   CHECK-DAG:   %[[Z1:.*]] = linalg.fill {{.*}} -> tensor<4x4xf32>
//   CHECK-DAG:   %[[Z2:.*]] = linalg.fill {{.*}} -> tensor<4x4xf32>
//   CHECK-DAG:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z1]])
//   CHECK-DAG:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z2]])
func.func @loop_init(%a: tensor<4x4xf32>, %n: index) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%t = %z) -> (tensor<4x4xf32>) {
    %m = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %m : tensor<4x4xf32>
  }
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%t = %z) -> (tensor<4x4xf32>) {
    %m = linalg.add ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %m : tensor<4x4xf32>
  }
  return %r1, %r2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The calls of a norm.kernel function write their empty-tensor and fill
// operands: each call gets its own; a call of another function does not.
// CHECK-LABEL: func.func @kernel_calls(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK:         call @norm_kernel_k(%{{.*}}, %[[E0]])
// CHECK:         call @norm_kernel_k(%{{.*}}, %[[E1]])
// CHECK:         call @other(%[[E1]])
// CHECK:         call @other(%[[E1]])
func.func @kernel_calls(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = call @norm_kernel_k(%x, %e) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %b = call @norm_kernel_k(%x, %e) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %c = call @other(%e) : (tensor<8xf32>) -> tensor<8xf32>
  %d = call @other(%e) : (tensor<8xf32>) -> tensor<8xf32>
  return %a, %b, %c, %d : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
func.func private @norm_kernel_k(%x: tensor<8xf32>, %d: tensor<8xf32>) -> tensor<8xf32> attributes {norm.kernel} {
  %r = bufferization.materialize_in_destination %x in %d : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func private @other(%d: tensor<8xf32>) -> tensor<8xf32> {
  return %d : tensor<8xf32>
}
