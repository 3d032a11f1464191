// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's shard-partition crashes (segmentation fault) on a function with
// an unused tensor argument: it looks up the argument's sharding through
// its uses. norm-shard-partition (and norm-spmd-pipeline) annotate such an
// argument as replicated first.
//
// When the first RUN line starts failing, the LLVM in use partitions this
// module: delete the check and the guard in ShardPartition.cpp.

// RUN: not --crash mlir-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))'
// RUN: norm-opt %s --norm-shard-partition | FileCheck %s

shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @unused
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %{{.*}}: tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: linalg.add ins(%[[X]], %[[X]] : tensor<2x8xf32>, tensor<2x8xf32>)
func.func @unused(%x: tensor<4x8xf32>, %u: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<4x8xf32>, tensor<4x8xf32>) outs(%xs : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
