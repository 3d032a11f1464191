// RUN: not norm-opt %s --pass-pipeline='builtin.module(func.func(norm-spmd-pipeline))' 2>&1 | FileCheck %s
// RUN: not norm-opt %s --norm-spmd-pipeline 2>&1 | FileCheck %s --check-prefix=UNEVEN

// CHECK: error: norm-spmd-pipeline runs on builtin.module, not on 'func.func'
// UNEVEN: error: 'shard.shard' op splits dim 1 of 'tensor<4x6xf32>' unevenly: 6 over 4 processes
shard.grid @grid(shape = 4)
func.func @uneven(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x6xf32>
  %y = norm.rms_norm %xs : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
