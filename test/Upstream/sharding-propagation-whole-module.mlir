// UPSTREAM LIMITATION, recorded here; not a bug of norm-mlir.
//
// LLVM 22's sharding-propagation (nested on func.func) fails on a function
// declaration and on any op without ShardingInterface (func.call, mpi.init,
// memref.get_global), so it cannot run on a module that also holds the
// program's driver. norm-shard-partition runs propagation and partition
// only on the functions that hold shard.shard annotations.

// RUN: not mlir-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation))' 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// RUN: norm-opt %s --norm-shard-partition | FileCheck %s

// UPSTREAM: error: 'func.func' op only one block is supported!
// UPSTREAM: error: 'func.call' op sharding interface is not implemented.
// CHECK-LABEL: func.func @sharded
// CHECK-SAME: -> tensor<2x8xf32>
// CHECK-LABEL: func.func @driver
// CHECK: shard.all_slice
// CHECK: call @sharded
// CHECK: shard.all_gather
// CHECK: call @ext
shard.grid @grid(shape = 2)
func.func private @ext(tensor<4x8xf32>)
func.func @sharded(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<4x8xf32>, tensor<4x8xf32>) outs(%xs : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}
func.func @driver(%x: tensor<4x8xf32>) {
  %y = func.call @sharded(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.call @ext(%y) : (tensor<4x8xf32>) -> ()
  return
}
