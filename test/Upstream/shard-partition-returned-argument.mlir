// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's shard-partition crashes (segmentation fault) on a tensor
// argument that is only returned (no annotation, no other use: propagation
// leaves it without a sharding; partition reads the sharding of a return
// operand from its definition). norm-shard-partition (and
// norm-spmd-pipeline) give such an argument a replicated annotation after
// propagation, which its uses read.
//
// When the first RUN line starts failing, the LLVM in use partitions this
// module: delete the check and annotateUnshardedArguments in
// ShardPartition.cpp.

// RUN: not --crash mlir-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))'
// RUN: norm-opt %s --norm-shard-partition | FileCheck %s

shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @returned_argument
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[P:.*]]: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<4x8xf32>)
// CHECK: return %{{.*}}, %[[P]]
func.func @returned_argument(%x: tensor<4x8xf32>, %p: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys, %p : tensor<4x8xf32>, tensor<4x8xf32>
}
