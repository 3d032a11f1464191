// RUN: norm-opt %s --norm-spmd-pipeline -verify-diagnostics

// An unused result whose sharding cannot be taken from a result of the
// same type (statistics next to y) is reported, not left to crash the
// upstream partition.
shard.grid @grid(shape = 2)
func.func @unused_stats(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  // expected-error @+1 {{'norm.rms_norm' op result #1 is unused and has no sharding; sharding partition needs one (use or annotate it)}}
  %y, %r = norm.rms_norm %xs {return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}
