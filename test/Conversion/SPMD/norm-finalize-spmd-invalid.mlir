// RUN: norm-opt %s -verify-diagnostics --norm-finalize-spmd

shard.grid @grid(shape = 2)
func.func @left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.broadcast' op was not lowered to MPI (convert-shard-to-mpi left it)}}
  %b = shard.broadcast %x on @grid grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
