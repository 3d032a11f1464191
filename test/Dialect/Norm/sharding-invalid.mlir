// RUN: norm-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))'

shard.grid @grid(shape = 2)
func.func @uneven_hidden(%x: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x7xf32>
  // expected-error @+1 {{'norm.rms_norm' op cannot be partitioned: dim 1 of size 7 does not split evenly over 2 processes}}
  %y = norm.rms_norm %xs : (tensor<4x7xf32>) -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @dynamic_split_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<?x8xf32>
  // expected-error @+1 {{'norm.layer_norm' op cannot be partitioned: dim 0 is dynamic and split over 2 processes}}
  %y = norm.layer_norm %xs : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

shard.grid @grid(shape = ?)
func.func @dynamic_grid(%x: tensor<4x8xf32>, %a: tensor<f32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  // expected-error @+1 {{'norm.dyt' op cannot be partitioned over grid @grid: axis 0 has a dynamic size}}
  %y = norm.dyt %xs alpha(%a) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @per_token_hidden(%x: tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x1xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x256xf32>
  // expected-error @+1 {{'norm.quantize' op cannot be partitioned with its last dim split: per-token scales need the whole row (use group_size, or split the leading dims)}}
  %q, %sc = norm.quantize %xs : (tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x1xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x1xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @group_straddles(%x: tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x256xf32>
  // expected-error @+1 {{'norm.quantize' op cannot be partitioned: the last dim splits into pieces of 64 elements, not a multiple of group_size 128}}
  %q, %sc = norm.quantize %xs {group_size = 128 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x2xf32>
}

// -----

// Swizzled scales interleave 128 rows: no split partitions them.
shard.grid @grid(shape = 2)
func.func @swizzled_rows(%x: tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<256x64xbf16>
  // expected-error @+1 {{'norm.quantize' op cannot be partitioned: swizzled_128x4 scales interleave the scales of 128 rows (use the row_major layout)}}
  %q, %sc = norm.quantize %xs {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<256x64xbf16>) -> (tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>)
  return %q, %sc : tensor<256x64xf8E4M3FN>, tensor<1024xf8E8M0FNU>
}

// -----

shard.grid @grid(shape = 2)
func.func @swizzled_hidden(%x: tensor<4x128xf32>, %g: tensor<f32>) -> (tensor<4x128xf4E2M1FN>, tensor<1024xf8E4M3FN>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x128xf32>
  // expected-error @+1 {{'norm.quantize' op cannot be partitioned: swizzled_128x4 scales interleave the scales of 128 rows (use the row_major layout)}}
  %q, %sc = norm.quantize %xs global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<4x128xf32>, tensor<f32>) -> (tensor<4x128xf4E2M1FN>, tensor<1024xf8E4M3FN>)
  return %q, %sc : tensor<4x128xf4E2M1FN>, tensor<1024xf8E4M3FN>
}

// -----

// An NVFP4 group of 16 would straddle two of four processes.
shard.grid @grid(shape = 4)
func.func @nvfp4_group_straddles(%x: tensor<4x32xf32>, %g: tensor<f32>) -> (tensor<4x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x32xf32>
  // expected-error @+1 {{'norm.quantize' op cannot be partitioned: the last dim splits into pieces of 8 elements, not a multiple of group_size 16}}
  %q, %sc = norm.quantize %xs global_scale(%g) {group_size = 16 : i64} : (tensor<4x32xf32>, tensor<f32>) -> (tensor<4x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>)
  return %q, %sc : tensor<4x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>
}
