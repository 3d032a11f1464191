// RUN: norm-opt %s -split-input-file -verify-diagnostics --norm-shard-partition

shard.grid @grid(shape = 2)
func.func @captured_argument(%x: tensor<4x8xf32>, %c: f32) -> tensor<4xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'linalg.generic' op uses a value defined outside its body, which sharding partition cannot handle in a reduction; pass it as an input operand}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%xs : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %c : f32
    %t = arith.addf %m, %b : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @uneven(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op splits dim 0 of 'tensor<6x8xf32>' unevenly: 6 over 4 processes}}
  %xs = shard.shard %x to %s : tensor<6x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<6x8xf32>, tensor<6x8xf32>) outs(%xs : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op splits dynamic dim 0 of 'tensor<?x8xf32>' over 2 processes; split dims must be static}}
  %xs = shard.shard %x to %s : tensor<?x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<?x8xf32>, tensor<?x8xf32>) outs(%xs : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @offsets(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 6] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op has explicit sharded_dims_offsets; only even splits are supported}}
  %xs = shard.shard %x to %s : tensor<6x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<6x8xf32>, tensor<6x8xf32>) outs(%xs : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}

// -----

shard.grid @grid(shape = ?)
func.func @dynamic_grid(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{'shard.shard' op splits over axis 0 of grid @grid, which has a dynamic size}}
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = linalg.add ins(%xs, %xs : tensor<4x8xf32>, tensor<4x8xf32>) outs(%xs : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @stats_split_hidden(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  // expected-error @+1 {{'norm.rms_norm' op with 'return_stats' cannot be partitioned over split normalized dims yet (split the rows instead)}}
  %y, %r = norm.rms_norm %xs {return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys, %r : tensor<4x8xf32>, tensor<4xf32>
}
