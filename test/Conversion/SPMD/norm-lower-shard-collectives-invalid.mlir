// RUN: norm-opt %s -split-input-file -verify-diagnostics --norm-lower-shard-collectives

shard.grid @grid(shape = 2)
func.func @broadcast(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.broadcast' op has no MPI lowering in norm-spmd-pipeline}}
  %b = shard.broadcast %x on @grid grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @all_to_all_same_axis(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.all_to_all' op has no MPI lowering in norm-spmd-pipeline}}
  %a = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 0 concat_axis = 0 : tensor<4xf32> -> tensor<4xf32>
  return %a : tensor<4xf32>
}
