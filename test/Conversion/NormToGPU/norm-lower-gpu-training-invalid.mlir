// RUN: norm-opt %s -split-input-file -verify-diagnostics --norm-lower-gpu

func.func @grad_scalar_weight(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>, %w: tensor<f32>) -> (tensor<4x8xf32>, tensor<f32>) {
  // expected-error @+1 {{norm-lower-gpu: 'norm.rms_norm_grad' has no GPU kernel here: a scalar weight has no GPU kernel (norm-to-linalg decomposes it for the host)}}
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<f32>)
  return %dx, %dw : tensor<4x8xf32>, tensor<f32>
}

// -----

func.func @grad_rank0_stats(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %m: tensor<f32>, %r: tensor<f32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{norm-lower-gpu: 'norm.layer_norm_grad' has no GPU kernel here: statistics over every dim of x (rank 0) have no GPU kernel (norm-to-linalg decomposes it for the host)}}
  %dx = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @forward_stats_all_dims(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>) {
  // expected-error @+1 {{norm-lower-gpu: 'return_stats' over every dim of x (rank-0 statistics) has no GPU kernel (norm-to-linalg decomposes the op with its statistics for the host)}}
  %y, %r = norm.rms_norm %x {axis = 0 : i64, return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<f32>)
  return %y, %r : tensor<4x8xf32>, tensor<f32>
}
