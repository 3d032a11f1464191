// RUN: norm-opt %s --norm-shard-partition | FileCheck %s

// Only the function with annotations is partitioned; the driver around it
// (func.call, mpi ops, declarations), which upstream propagation rejects, is
// left as it is.
shard.grid @grid(shape = 2) {sym_visibility = "private"}

// CHECK-LABEL: func.func @sharded
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: shard.all_reduce
func.func @sharded(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = norm.rms_norm %xs : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// CHECK-LABEL: func.func private @print(tensor<4x8xf32>)
func.func private @print(tensor<4x8xf32>)

// Callers keep the global view: the call passes this process's shard and
// gathers the split result.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: mpi.init
// CHECK-NEXT: %[[X:.*]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: %[[XL:.*]] = shard.all_slice %[[X]] on @grid grid_axes = [0] slice_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[YL:.*]] = call @sharded(%[[XL]]) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[Y:.*]] = shard.all_gather %[[YL]] on @grid grid_axes = [0] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT: call @print(%[[Y]])
// CHECK-NEXT: mpi.finalize
func.func @main() {
  mpi.init
  %x = arith.constant dense<1.0> : tensor<4x8xf32>
  %y = func.call @sharded(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.call @print(%y) : (tensor<4x8xf32>) -> ()
  mpi.finalize
  return
}

// Split rows: the statistics of return_stats are split with them.
// CHECK-LABEL: func.func @rows_stats
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>)
// CHECK-NEXT: %{{.*}}, %{{.*}} = norm.rms_norm %[[X]] {return_stats} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>)
func.func @rows_stats(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y, %r = norm.rms_norm %xs {return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  %rs = shard.shard %r to %s : tensor<4xf32>
  return %ys, %rs : tensor<4x8xf32>, tensor<4xf32>
}
