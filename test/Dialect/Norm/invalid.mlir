// RUN: norm-opt %s -split-input-file -verify-diagnostics

// Attributes of the dialect on an op that does not take them.

func.func @dyt_epsilon(%x: tensor<8x768xf32>, %a: tensor<f32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{does not take attribute 'epsilon'}}
  %y = norm.dyt %x alpha(%a) {epsilon = 1.0e-05 : f32} : (tensor<8x768xf32>, tensor<f32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @dyt_weight_offset(%x: tensor<8x768xf32>, %a: tensor<f32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{does not take attribute 'weight_offset'}}
  %y = norm.dyt %x alpha(%a) weight(%w) {weight_offset = 1.0 : f32} : (tensor<8x768xf32>, tensor<f32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @dyt_epsilon_mode(%x: tensor<8x768xf32>, %a: tensor<f32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{does not take attribute 'epsilon_mode'}}
  %y = norm.dyt %x alpha(%a) {epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<8x768xf32>, tensor<f32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @layer_norm_epsilon_mode(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{does not take attribute 'epsilon_mode'}}
  %y = norm.layer_norm %x {epsilon_mode = #norm<epsilon_mode outside_sqrt>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @layer_norm_weight_offset(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{does not take attribute 'weight_offset'}}
  %y = norm.layer_norm %x weight(%g) {weight_offset = 1.0 : f32} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Input `x`.

func.func @x_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<*xf32>'}}
  %y = norm.rms_norm %x : (tensor<*xf32>) -> tensor<*xf32>
  return %y : tensor<*xf32>
}

// -----

func.func @x_memref(%x: memref<8x64xf32>) -> memref<8x64xf32> {
  // expected-error @+1 {{operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'memref<8x64xf32>'}}
  %y = norm.layer_norm %x : (memref<8x64xf32>) -> memref<8x64xf32>
  return %y : memref<8x64xf32>
}

// -----

func.func @x_rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<f32>'}}
  %y = norm.rms_norm %x : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @x_i32(%x: tensor<8x64xi32>) -> tensor<8x64xi32> {
  // expected-error @+1 {{operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<8x64xi32>'}}
  %y = norm.layer_norm %x : (tensor<8x64xi32>) -> tensor<8x64xi32>
  return %y : tensor<8x64xi32>
}

// -----

func.func @x_f8(%x: tensor<8x64xf8E4M3FN>) -> tensor<8x64xf8E4M3FN> {
  // expected-error @+1 {{operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<8x64xf8E4M3FN>'}}
  %y = norm.rms_norm %x : (tensor<8x64xf8E4M3FN>) -> tensor<8x64xf8E4M3FN>
  return %y : tensor<8x64xf8E4M3FN>
}

// -----

func.func @x_tf32(%x: tensor<8x768xtf32>, %a: tensor<f32>) -> tensor<8x768xtf32> {
  // expected-error @+1 {{operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<8x768xtf32>'}}
  %y = norm.dyt %x alpha(%a) : (tensor<8x768xtf32>, tensor<f32>) -> tensor<8x768xtf32>
  return %y : tensor<8x768xtf32>
}

// -----

// Results.

func.func @y_element_type(%x: tensor<8x4xf32>) -> tensor<8x4xf16> {
  // expected-error @+1 {{result 'y' type 'tensor<8x4xf16>' must equal the type of 'x' 'tensor<8x4xf32>'}}
  %y = norm.layer_norm %x : (tensor<8x4xf32>) -> tensor<8x4xf16>
  return %y : tensor<8x4xf16>
}

// -----

func.func @y_dynamic_for_static(%x: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{result 'y' type 'tensor<?x4xf32>' must equal the type of 'x' 'tensor<8x4xf32>'}}
  %y = norm.rms_norm %x : (tensor<8x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @y_static_for_dynamic(%x: tensor<?x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{result 'y' type 'tensor<8x4xf32>' must equal the type of 'x' 'tensor<?x4xf32>'}}
  %y = norm.rms_norm %x : (tensor<?x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @missing_residual_out(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{expects a second result 'residual_out' when 'residual' is given}}
  %y = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @residual_out_without_residual(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{has a second result 'residual_out' but no 'residual' operand}}
  %y, %s = norm.layer_norm %x : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

func.func @residual_out_without_residual_generic(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{has a second result 'residual_out' but no 'residual' operand}}
  %y:2 = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y#0 : tensor<8x64xf32>
}

// -----

func.func @residual_out_type(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{result 'residual_out' type 'tensor<?x64xf32>' must equal the type of 'x' 'tensor<8x64xf32>'}}
  %y, %s = norm.layer_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<?x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// Axis.

func.func @axis_too_large(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'axis' = 2 is out of range for 'x' of rank 2 (expected -2 to 1)}}
  %y = norm.layer_norm %x {axis = 2 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @axis_too_small(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'axis' = -3 is out of range for 'x' of rank 2 (expected -2 to 1)}}
  %y = norm.rms_norm %x {axis = -3 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @axis_int64_min(%x: tensor<8x768xf32>, %a: tensor<f32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{attribute 'axis' = -9223372036854775808 is out of range for 'x' of rank 2 (expected -2 to 1)}}
  %y = norm.dyt %x alpha(%a) {axis = -9223372036854775808 : i64} : (tensor<8x768xf32>, tensor<f32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Compute type.

func.func @compute_type_f16_for_bf16(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{attribute 'compute_type' must be f32, f64 or the element type of 'x' ('bf16'), got 'f16'}}
  %y = norm.rms_norm %x {compute_type = f16} : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  return %y : tensor<8x64xbf16>
}

// -----

func.func @compute_type_narrower(%x: tensor<8x64xf64>) -> tensor<8x64xf64> {
  // expected-error @+1 {{attribute 'compute_type' 'f32' is narrower than the element type of 'x' ('f64')}}
  %y = norm.layer_norm %x {compute_type = f32} : (tensor<8x64xf64>) -> tensor<8x64xf64>
  return %y : tensor<8x64xf64>
}

// -----

// Epsilon.

func.func @epsilon_negative(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'epsilon' must be finite and >= 0}}
  %y = norm.layer_norm %x {epsilon = -1.0e-05 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @epsilon_nan(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'epsilon' must be finite and >= 0}}
  %y = norm.rms_norm %x {epsilon = 0x7FC00000 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @epsilon_inf(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'epsilon' must be finite and >= 0}}
  %y = norm.layer_norm %x {epsilon = 0x7F800000 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @epsilon_negative_inf_f64(%x: tensor<8x64xf64>) -> tensor<8x64xf64> {
  // expected-error @+1 {{attribute 'epsilon' must be finite and >= 0}}
  %y = norm.rms_norm %x {epsilon = 0xFFF0000000000000 : f64} : (tensor<8x64xf64>) -> tensor<8x64xf64>
  return %y : tensor<8x64xf64>
}

// -----

// Weight offset.

func.func @weight_offset_nan(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'weight_offset' must be finite}}
  %y = norm.rms_norm %x weight(%w) {weight_offset = 0x7FC00000 : f32} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @weight_offset_inf(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'weight_offset' must be finite}}
  %y = norm.rms_norm %x weight(%w) {weight_offset = 0xFF800000 : f32} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @weight_offset_without_weight(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'weight_offset' requires a 'weight' operand}}
  %y = norm.rms_norm %x {weight_offset = 1.0 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Alpha.

func.func @alpha_not_scalar(%x: tensor<8x768xf32>, %a: tensor<768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand #1 must be 'alpha': scalar (tensor<T> or tensor<1xT>) of f16, bf16, f32 or f64, but got 'tensor<768xf32>'}}
  %y = norm.dyt %x alpha(%a) : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @alpha_rank2(%x: tensor<8x768xf32>, %a: tensor<1x1xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand #1 must be 'alpha': scalar (tensor<T> or tensor<1xT>) of f16, bf16, f32 or f64, but got 'tensor<1x1xf32>'}}
  %y = norm.dyt %x alpha(%a) : (tensor<8x768xf32>, tensor<1x1xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @alpha_element_type(%x: tensor<8x768xbf16>, %a: tensor<f16>) -> tensor<8x768xbf16> {
  // expected-error @+1 {{operand 'alpha' element type must be 'bf16' (the element type of 'x') or f32, got 'f16'}}
  %y = norm.dyt %x alpha(%a) : (tensor<8x768xbf16>, tensor<f16>) -> tensor<8x768xbf16>
  return %y : tensor<8x768xbf16>
}

// -----

func.func @alpha_unranked(%x: tensor<8x768xf32>, %a: tensor<*xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand #1 must be 'alpha': scalar (tensor<T> or tensor<1xT>) of f16, bf16, f32 or f64, but got 'tensor<*xf32>'}}
  %y = norm.dyt %x alpha(%a) : (tensor<8x768xf32>, tensor<*xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Weight and bias.

func.func @weight_rank(%x: tensor<8x4096xbf16>, %g: tensor<8x4096xbf16>) -> tensor<8x4096xbf16> {
  // expected-error @+1 {{operand 'weight' shape [8, 4096] must be the normalized shape [4096] of 'x' (x.shape[axis:])}}
  %y = norm.layer_norm %x weight(%g) : (tensor<8x4096xbf16>, tensor<8x4096xbf16>) -> tensor<8x4096xbf16>
  return %y : tensor<8x4096xbf16>
}

// -----

func.func @weight_dim(%x: tensor<8x4096xbf16>, %g: tensor<1024xbf16>) -> tensor<8x4096xbf16> {
  // expected-error @+1 {{operand 'weight' shape [1024] must be the normalized shape [4096] of 'x' (x.shape[axis:])}}
  %y = norm.layer_norm %x weight(%g) : (tensor<8x4096xbf16>, tensor<1024xbf16>) -> tensor<8x4096xbf16>
  return %y : tensor<8x4096xbf16>
}

// -----

func.func @weight_axis0(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand 'weight' shape [64] must be the normalized shape [8, 64] of 'x' (x.shape[axis:])}}
  %y = norm.layer_norm %x weight(%g) {axis = 0 : i64} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @rms_norm_weight_dim(%x: tensor<8x64xf32>, %w: tensor<32xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand 'weight' shape [32] must be the normalized shape [64] of 'x' (x.shape[axis:]) or a scalar}}
  %y = norm.rms_norm %x weight(%w) : (tensor<8x64xf32>, tensor<32xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @layer_norm_scalar_weight(%x: tensor<8x64xf32>, %g: tensor<f32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand 'weight' shape [] must be the normalized shape [64] of 'x' (x.shape[axis:])}}
  %y = norm.layer_norm %x weight(%g) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @weight_element_type(%x: tensor<8x4096xbf16>, %g: tensor<4096xf16>) -> tensor<8x4096xbf16> {
  // expected-error @+1 {{operand 'weight' element type must be 'bf16' (the element type of 'x') or f32, got 'f16'}}
  %y = norm.layer_norm %x weight(%g) : (tensor<8x4096xbf16>, tensor<4096xf16>) -> tensor<8x4096xbf16>
  return %y : tensor<8x4096xbf16>
}

// -----

func.func @weight_unranked(%x: tensor<8x64xf32>, %w: tensor<*xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand #1 must be 'weight': ranked tensor of f16, bf16, f32 or f64, but got 'tensor<*xf32>'}}
  %y = norm.rms_norm %x weight(%w) : (tensor<8x64xf32>, tensor<*xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @weight_memref(%x: tensor<8x64xf32>, %w: memref<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand #1 must be 'weight': ranked tensor of f16, bf16, f32 or f64, but got 'memref<64xf32>'}}
  %y = norm.layer_norm %x weight(%w) : (tensor<8x64xf32>, memref<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @bias_dim(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %b: tensor<63xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand 'bias' shape [63] must be the normalized shape [64] of 'x' (x.shape[axis:])}}
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<8x64xf32>, tensor<64xf32>, tensor<63xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @dyt_bias_scalar(%x: tensor<8x768xf32>, %a: tensor<f32>, %b: tensor<f32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand 'bias' shape [] must be the normalized shape [768] of 'x' (x.shape[axis:])}}
  %y = norm.dyt %x alpha(%a) bias(%b) : (tensor<8x768xf32>, tensor<f32>, tensor<f32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @bias_element_type(%x: tensor<8x64xf16>, %b: tensor<64xbf16>) -> tensor<8x64xf16> {
  // expected-error @+1 {{operand 'bias' element type must be 'f16' (the element type of 'x') or f32, got 'bf16'}}
  %y = norm.layer_norm %x bias(%b) : (tensor<8x64xf16>, tensor<64xbf16>) -> tensor<8x64xf16>
  return %y : tensor<8x64xf16>
}

// -----

// Residual.

func.func @residual_element_type(%x: tensor<8x64xbf16>, %r: tensor<8x64xf32>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{operand 'residual' element type must be 'bf16' (the element type of 'x'), got 'f32'}}
  %y, %s = norm.rms_norm %x residual(%r) : (tensor<8x64xbf16>, tensor<8x64xf32>) -> (tensor<8x64xbf16>, tensor<8x64xbf16>)
  return %y : tensor<8x64xbf16>
}

// -----

func.func @residual_shape(%x: tensor<8x64xf32>, %r: tensor<4x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand 'residual' shape [4, 64] must match the shape of 'x' [8, 64]}}
  %y, %s = norm.layer_norm %x residual(%r) : (tensor<8x64xf32>, tensor<4x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

func.func @residual_rank(%x: tensor<8x768xf32>, %a: tensor<f32>, %r: tensor<768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand 'residual' shape [768] must match the shape of 'x' [8, 768]}}
  %y, %s = norm.dyt %x alpha(%a) residual(%r) : (tensor<8x768xf32>, tensor<f32>, tensor<768xf32>) -> (tensor<8x768xf32>, tensor<8x768xf32>)
  return %y : tensor<8x768xf32>
}

// -----

// Operands that each fit x's dynamic dims but not each other (found by
// norm-fuzz: the linalg lowering built invalid linalg.generic ops from them).
func.func @weight_conflicts_with_residual(%x: tensor<15x5x4x?xf32>, %w: tensor<?x?x5xf32>, %r: tensor<15x5x4x4xf32>) -> tensor<15x5x4x?xf32> {
  // expected-error @+1 {{operand 'weight' shape [?, ?, 5] conflicts with the normalized shape [5, 4, 4] that the other operands imply}}
  %y, %s = norm.layer_norm %x weight(%w) residual(%r) {axis = -3 : i64} : (tensor<15x5x4x?xf32>, tensor<?x?x5xf32>, tensor<15x5x4x4xf32>) -> (tensor<15x5x4x?xf32>, tensor<15x5x4x?xf32>)
  return %y : tensor<15x5x4x?xf32>
}

// -----

func.func @bias_conflicts_with_weight(%x: tensor<8x?xf32>, %g: tensor<64xf32>, %b: tensor<32xf32>) -> tensor<8x?xf32> {
  // expected-error @+1 {{operand 'bias' shape [32] conflicts with the normalized shape [64] that the other operands imply}}
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<8x?xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<8x?xf32>
  return %y : tensor<8x?xf32>
}

// -----

func.func @dyt_weight_conflicts_with_residual(%x: tensor<0x?xf16>, %a: tensor<f32>, %w: tensor<0x1xf16>, %r: tensor<0x31xf16>) -> tensor<0x?xf16> {
  // expected-error @+1 {{operand 'weight' shape [0, 1] conflicts with the normalized shape [0, 31] that the other operands imply}}
  %y, %s = norm.dyt %x alpha(%a) weight(%w) residual(%r) {axis = 0 : i64} : (tensor<0x?xf16>, tensor<f32>, tensor<0x1xf16>, tensor<0x31xf16>) -> (tensor<0x?xf16>, tensor<0x?xf16>)
  return %y : tensor<0x?xf16>
}

// -----

func.func @residual_unranked(%x: tensor<8x64xf32>, %r: tensor<*xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{operand #1 must be 'residual': ranked tensor of f16, bf16, f32 or f64, but got 'tensor<*xf32>'}}
  %y, %s = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<*xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// Attribute kinds checked by the op definition.

func.func @epsilon_integer(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 32-bit or 64-bit float attribute}}
  %y = norm.layer_norm %x {epsilon = 1 : i32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @epsilon_f16(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 32-bit or 64-bit float attribute}}
  %y = norm.rms_norm %x {epsilon = 1.0e-03 : f16} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @axis_float(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %y = norm.rms_norm %x {axis = 1.0 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @axis_i32(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %y = norm.layer_norm %x {axis = 1 : i32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @cast_mode_epsilon_mode_value(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'cast_mode' failed to satisfy constraint: where the result is rounded to the input element type}}
  %y = norm.layer_norm %x {cast_mode = #norm<epsilon_mode clamp>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @epsilon_mode_cast_mode_value(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'epsilon_mode' failed to satisfy constraint: where epsilon enters the RMS denominator}}
  %y = norm.rms_norm %x {epsilon_mode = #norm<cast_mode final>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @compute_type_i32(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'compute_type' failed to satisfy constraint: type attribute of floating-point}}
  %y = norm.rms_norm %x {compute_type = i32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @weight_offset_f64(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{attribute 'weight_offset' failed to satisfy constraint: 32-bit float attribute}}
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f64} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// A wrongly-kinded value next to explicit properties must not reach the
// getters.
func.func @generic_epsilon_wrong_kind(%x: tensor<8x768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{attribute 'epsilon' is missing or of the wrong kind}}
  %y = "norm.layer_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>}> {epsilon = 1 : i32} : (tensor<8x768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @generic_axis_wrong_kind(%x: tensor<8x768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{attribute 'axis' is missing or of the wrong kind}}
  %y = "norm.layer_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>}> {axis = 1.0 : f32} : (tensor<8x768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @generic_epsilon_mode_wrong_kind(%x: tensor<8x768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{attribute 'epsilon_mode' is missing or of the wrong kind}}
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> {epsilon_mode = #norm<cast_mode final>} : (tensor<8x768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @generic_two_inputs_in_x_segment(%x: tensor<8x768xf32>, %a: tensor<1xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand segment #0 must hold exactly one value, got 2}}
  %y = "norm.dyt"(%x, %a) <{operandSegmentSizes = array<i32: 2, 0, 0, 0, 0>}> : (tensor<8x768xf32>, tensor<1xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @generic_weight_in_x_segment(%x: tensor<8x768xf32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand segment #0 must hold exactly one value, got 2}}
  %y = "norm.layer_norm"(%x, %w) <{operandSegmentSizes = array<i32: 2, 0, 0, 0>}> : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @generic_missing_x(%x: tensor<8x768xf32>) -> (tensor<8x768xf32>, tensor<8x768xf32>) {
  // expected-error @+1 {{operand segment #0 must hold exactly one value, got 0}}
  %y:2 = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 0, 0, 1>}> : (tensor<8x768xf32>) -> (tensor<8x768xf32>, tensor<8x768xf32>)
  return %y#0, %y#1 : tensor<8x768xf32>, tensor<8x768xf32>
}

// -----

func.func @generic_two_weights(%x: tensor<8x768xf32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{operand group starting at #1 requires 0 or 1 element, but found 2}}
  %y = "norm.rms_norm"(%x, %w, %w) <{operandSegmentSizes = array<i32: 1, 2, 0>}> : (tensor<8x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

func.func @stats_missing(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{expects 3 results (y, mean, rstd), got 2}}
  %y, %m = norm.layer_norm %x {return_stats} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>)
  return %y : tensor<8x64xf32>
}

// -----

func.func @stats_missing_residual_out(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{expects a second result 'residual_out' when 'residual' is given}}
  %y, %rstd = norm.rms_norm %x residual(%r) {return_stats} : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>)
  return %y : tensor<8x64xf32>
}

// -----

func.func @stats_without_attribute(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{expects 1 results (y), got 3}}
  %y, %m, %r = norm.layer_norm %x : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y : tensor<8x64xf32>
}

// -----

func.func @stats_too_many(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{expects 3 results (y, residual_out, rstd), got 4}}
  %y:4 = norm.rms_norm %x residual(%r) {return_stats} : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
  return %y#0 : tensor<8x64xf32>
}

// -----

func.func @stats_element_type(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{result 'rstd' type 'tensor<8xbf16>' must be 'tensor<8xf32>' (the leading dims of 'x' in the compute type)}}
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<8x64xbf16>) -> (tensor<8x64xbf16>, tensor<8xbf16>)
  return %y : tensor<8x64xbf16>
}

// -----

func.func @stats_shape(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  // expected-error @+1 {{result 'mean' type 'tensor<16xf32>' must be 'tensor<2x8xf32>' (the leading dims of 'x' in the compute type)}}
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<2x8x64xf32>) -> (tensor<2x8x64xf32>, tensor<16xf32>, tensor<2x8xf32>)
  return %y : tensor<2x8x64xf32>
}

// -----

func.func @stats_dynamic_row_count(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{result 'rstd' type 'tensor<8xf32>' must be 'tensor<?xf32>' (the leading dims of 'x' in the compute type)}}
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<8xf32>)
  return %y : tensor<?x64xf32>
}

// -----

func.func @stats_on_dyt(%x: tensor<8x64xf32>, %a: tensor<f32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{does not take attribute 'return_stats'}}
  %y = norm.dyt %x alpha(%a) {return_stats} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
