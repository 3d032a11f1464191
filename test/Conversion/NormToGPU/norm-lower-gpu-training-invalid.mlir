// RUN: norm-opt %s -verify-diagnostics --norm-lower-gpu

func.func @grad(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{norm-lower-gpu: 'norm.rms_norm_grad' has no GPU kernel yet (norm-to-linalg decomposes it for the host)}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

func.func @forward_stats_all_dims(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>) {
  // expected-error @+1 {{norm-lower-gpu: 'return_stats' over every dim of x (rank-0 statistics) has no GPU kernel (norm-to-linalg decomposes the op with its statistics for the host)}}
  %y, %r = norm.rms_norm %x {axis = 0 : i64, return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>)
  return %y, %r : tensor<4x8xf32>, tensor<f32>
}
