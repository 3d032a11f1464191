// RUN: norm-opt %s -split-input-file -verify-diagnostics

func.func @dy_type(%dy: tensor<4x8xf16>, %x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.rms_norm_grad' op operand 'dy' type 'tensor<4x8xf16>' must equal the type of 'x' 'tensor<4x8xf32>'}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @x_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xi32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.rms_norm_grad' op operand #1 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<4x8xi32>'}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @stats_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %m: tensor<5xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.layer_norm_grad' op operand 'mean' must be a tensor of the leading dims [4] of 'x' with the compute type 'f32', got 'tensor<5xf32>'}}
  %dx = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<5xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @stats_type(%dy: tensor<4x8xbf16>, %x: tensor<4x8xbf16>, %r: tensor<4xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'norm.rms_norm_grad' op operand 'rstd' must be a tensor of the leading dims [4] of 'x' with the compute type 'f32', got 'tensor<4xbf16>'}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<4x8xbf16>
  return %dx : tensor<4x8xbf16>
}

// -----

func.func @axis(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.rms_norm_grad' op attribute 'axis' = 2 is out of range for 'x' of rank 2 (expected -2 to 1)}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @compute_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.rms_norm_grad' op attribute 'compute_type' must be f32, f64 or the element type of 'x' ('f32'), got 'f16'}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) {compute_type = f16} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf16>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @weight_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %m: tensor<4xf32>, %r: tensor<4xf32>, %w: tensor<7xf32>) -> (tensor<4x8xf32>, tensor<7xf32>) {
  // expected-error @+1 {{'norm.layer_norm_grad' op operand 'weight' shape [7] must be the normalized shape [8] of 'x' (x.shape[axis:])}}
  %dx, %dw = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<7xf32>) -> (tensor<4x8xf32>, tensor<7xf32>)
  return %dx, %dw : tensor<4x8xf32>, tensor<7xf32>
}

// -----

func.func @result_count(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %m: tensor<4xf32>, %r: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.layer_norm_grad' op expects 3 results (dx, dweight, dbias), got 1}}
  %dx = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @dx_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'norm.rms_norm_grad' op result 'dx' type 'tensor<4x8xf16>' must equal the type of 'x' 'tensor<4x8xf32>'}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf16>
  return %dx : tensor<4x8xf16>
}

// -----

func.func @dweight_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf16>) {
  // expected-error @+1 {{'norm.rms_norm_grad' op result 'dweight' type 'tensor<8xf16>' must equal the type of 'weight' 'tensor<8xf32>'}}
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf16>)
  return %dx, %dw : tensor<4x8xf32>, tensor<8xf16>
}

// -----

func.func @dbias_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<f32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<f32>) {
  // expected-error @+1 {{'norm.dyt_grad' op operand 'dbias' shape [4] must be the normalized shape [8] of 'x' (x.shape[axis:])}}
  %dx, %db, %da = norm.dyt_grad %dy, %x alpha(%a) {has_bias} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<f32>)
  return %dx, %db, %da : tensor<4x8xf32>, tensor<4xf32>, tensor<f32>
}

// -----

func.func @alpha_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'norm.dyt_grad' op operand #2 must be 'alpha': scalar (tensor<T> or tensor<1xT>) of f16, bf16, f32 or f64, but got 'tensor<8xf32>'}}
  %dx, %da = norm.dyt_grad %dy, %x alpha(%a) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return %dx, %da : tensor<4x8xf32>, tensor<8xf32>
}

// -----

func.func @dalpha_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<f32>) -> (tensor<4x8xf32>, tensor<1xf32>) {
  // expected-error @+1 {{'norm.dyt_grad' op result 'dalpha' type 'tensor<1xf32>' must equal the type of 'alpha' 'tensor<f32>'}}
  %dx, %da = norm.dyt_grad %dy, %x alpha(%a) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<1xf32>)
  return %dx, %da : tensor<4x8xf32>, tensor<1xf32>
}

// -----

func.func @weight_offset_without_weight(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.rms_norm_grad' op attribute 'weight_offset' requires a 'weight' operand}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) {weight_offset = 1.0 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @epsilon_not_taken(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'norm.rms_norm_grad' op does not take attribute 'epsilon'}}
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) {epsilon = 1.0e-05 : f32} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

func.func @x_rank0(%dy: tensor<f32>, %x: tensor<f32>, %a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  // expected-error @+1 {{'norm.dyt_grad' op operand #1 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<f32>'}}
  %dx, %da = norm.dyt_grad %dy, %x alpha(%a) : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %dx, %da : tensor<f32>, tensor<f32>
}
