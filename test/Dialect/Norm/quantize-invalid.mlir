// RUN: norm-opt %s -split-input-file -verify-diagnostics

func.func @input_f64(%y: tensor<4x64xf64>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{operand #0 must be 'input': ranked tensor of rank >= 1 of f16, bf16 or f32, but got 'tensor<4x64xf64>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf64>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @input_unranked(%y: tensor<*xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{operand #0 must be 'input': ranked tensor of rank >= 1 of f16, bf16 or f32, but got 'tensor<*xf32>'}}
  %q = norm.quantize %y scale(%s) : (tensor<*xf32>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @input_rank0(%y: tensor<f32>, %s: tensor<f32>) -> tensor<i8> {
  // expected-error @+1 {{operand #0 must be 'input': ranked tensor of rank >= 1 of f16, bf16 or f32, but got 'tensor<f32>'}}
  %q = norm.quantize %y scale(%s) : (tensor<f32>, tensor<f32>) -> tensor<i8>
  return %q : tensor<i8>
}

// -----

func.func @result_type(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xf8E5M2> {
  // expected-error @+1 {{result #0 must be 'q': ranked tensor of f8E4M3FN or i8, but got 'tensor<4x64xf8E5M2>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf8E5M2>
  return %q : tensor<4x64xf8E5M2>
}

// -----

func.func @result_unsigned(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xui8> {
  // expected-error @+1 {{result #0 must be 'q': ranked tensor of f8E4M3FN or i8, but got 'tensor<4x64xui8>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xui8>
  return %q : tensor<4x64xui8>
}

// -----

func.func @result_unranked(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<*xi8> {
  // expected-error @+1 {{result #0 must be 'q': ranked tensor of f8E4M3FN or i8, but got 'tensor<*xi8>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<*xi8>
  return %q : tensor<*xi8>
}

// -----

func.func @result_shape(%y: tensor<?x64xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{result 'q' shape [4, 64] must equal the shape [?, 64] of 'input'}}
  %q = norm.quantize %y scale(%s) : (tensor<?x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @scale_not_scalar(%y: tensor<4x64xf32>, %s: tensor<4xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{operand #1 must be 'scale': tensor<f32> or tensor<1xf32>, but got 'tensor<4xf32>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<4xf32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @scale_f16(%y: tensor<4x64xf32>, %s: tensor<f16>) -> tensor<4x64xi8> {
  // expected-error @+1 {{operand #1 must be 'scale': tensor<f32> or tensor<1xf32>, but got 'tensor<f16>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f16>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @static_two_results(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{with a 'scale' operand has one result, got 2}}
  %q, %sc = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @static_group_size(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'group_size' needs the dynamic form (no 'scale' operand)}}
  %q = norm.quantize %y scale(%s) {group_size = 32 : i64} : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @static_scale_ub(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'scale_ub' needs the dynamic form (no 'scale' operand)}}
  %q = norm.quantize %y scale(%s) {scale_ub = 10.0 : f32} : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @static_min_scale(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'min_scale' needs the dynamic form (no 'scale' operand)}}
  %q = norm.quantize %y scale(%s) {min_scale = 1.0e-3 : f32} : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @dynamic_one_result(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{without a 'scale' operand expects a second result 'scales'}}
  %q = norm.quantize %y : (tensor<4x64xf32>) -> tensor<4x64xi8>
  return %q : tensor<4x64xi8>
}

// -----

func.func @group_not_dividing(%y: tensor<4x96xf32>) -> tensor<4x96xi8> {
  // expected-error @+1 {{attribute 'group_size' = 64 must divide the last dim 96 of 'input'}}
  %q, %sc = norm.quantize %y {group_size = 64 : i64} : (tensor<4x96xf32>) -> (tensor<4x96xi8>, tensor<4x1xf32>)
  return %q : tensor<4x96xi8>
}

// -----

func.func @group_dynamic_row(%y: tensor<4x?xf32>) -> tensor<4x?xi8> {
  // expected-error @+1 {{attribute 'group_size' needs a static last dim of 'input', got 'tensor<4x?xf32>'}}
  %q, %sc = norm.quantize %y {group_size = 64 : i64} : (tensor<4x?xf32>) -> (tensor<4x?xi8>, tensor<4x?xf32>)
  return %q : tensor<4x?xi8>
}

// -----

func.func @group_negative(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'group_size' must be >= 0, got -2}}
  %q, %sc = norm.quantize %y {group_size = -2 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @scales_shape(%y: tensor<?x64xf32>) -> tensor<?x64xi8> {
  // expected-error @+1 {{result 'scales' must be a tensor of f32 of shape [?, 2], got 'tensor<?x1xf32>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<?x64xf32>) -> (tensor<?x64xi8>, tensor<?x1xf32>)
  return %q : tensor<?x64xi8>
}

// -----

func.func @scales_type(%y: tensor<4x64xbf16>) -> tensor<4x64xi8> {
  // expected-error @+1 {{result #1 must be 'scales': ranked tensor of f32, but got 'tensor<4x1xbf16>'}}
  %q, %sc = norm.quantize %y : (tensor<4x64xbf16>) -> (tensor<4x64xi8>, tensor<4x1xbf16>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @scale_ub_negative(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'scale_ub' must be > 0, got -1.000000e+00}}
  %q, %sc = norm.quantize %y {scale_ub = -1.0 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @scale_ub_nan(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'scale_ub' must be > 0, got nan}}
  %q, %sc = norm.quantize %y {scale_ub = 0x7FC00000 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @min_scale_zero(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'min_scale' must be finite and > 0, got 0.000000e+00}}
  %q, %sc = norm.quantize %y {min_scale = 0.0 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @min_scale_inf(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'min_scale' must be finite and > 0, got INF}}
  %q, %sc = norm.quantize %y {min_scale = 0x7F800000 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}

// -----

func.func @group_size_kind(%y: tensor<4x64xf32>) -> tensor<4x64xi8> {
  // expected-error @+1 {{attribute 'group_size' failed to satisfy constraint: 64-bit signless integer attribute}}
  %q, %sc = norm.quantize %y {group_size = 2.0 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x1xf32>)
  return %q : tensor<4x64xi8>
}
