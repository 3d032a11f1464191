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
  // expected-error @+1 {{result #0 must be 'q': ranked tensor of f8E4M3FN, f4E2M1FN or i8, but got 'tensor<4x64xf8E5M2>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf8E5M2>
  return %q : tensor<4x64xf8E5M2>
}

// -----

func.func @result_unsigned(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<4x64xui8> {
  // expected-error @+1 {{result #0 must be 'q': ranked tensor of f8E4M3FN, f4E2M1FN or i8, but got 'tensor<4x64xui8>'}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xui8>
  return %q : tensor<4x64xui8>
}

// -----

func.func @result_unranked(%y: tensor<4x64xf32>, %s: tensor<f32>) -> tensor<*xi8> {
  // expected-error @+1 {{result #0 must be 'q': ranked tensor of f8E4M3FN, f4E2M1FN or i8, but got 'tensor<*xi8>'}}
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
  // expected-error @+1 {{result #1 must be 'scales': ranked tensor of f32, f8E8M0FNU or f8E4M3FN, but got 'tensor<4x1xbf16>'}}
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

// -----

func.func @static_fp4(%y: tensor<4x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op result 'q' of f4E2M1FN needs the block-scaled dynamic form (no 'scale' operand)}}
  %q = norm.quantize %y scale(%s) : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf4E2M1FN>
  return
}

// -----

func.func @scale_and_global_scale(%y: tensor<4x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op takes 'scale' or 'global_scale', not both}}
  %q = norm.quantize %y scale(%s) global_scale(%s) : (tensor<4x64xf32>, tensor<f32>, tensor<f32>) -> tensor<4x64xi8>
  return
}

// -----

func.func @static_scale_layout(%y: tensor<4x64xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op attribute 'scale_layout' needs block scales (f8E8M0FNU or f8E4M3FN)}}
  %q = norm.quantize %y scale(%s) {scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xi8>
  return
}

// -----

func.func @fp4_f32_scales(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op result 'q' of f4E2M1FN needs block scales (f8E8M0FNU or f8E4M3FN), got 'tensor<4x2xf32>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf32>)
  return
}

// -----

func.func @f32_scales_global_scale(%y: tensor<4x64xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op operand 'global_scale' needs the NVFP4 form (f4E2M1FN with f8E4M3FN scales)}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x4xf32>)
  return
}

// -----

func.func @f32_scales_rounding(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op attribute 'scale_rounding' needs f8E8M0FNU scales}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf32>)
  return
}

// -----

func.func @e8m0_scales_i8(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op scales of f8E8M0FNU need 'q' of f8E4M3FN or f4E2M1FN, got 'tensor<4x64xi8>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @e4m3_scales_fp8(%y: tensor<4x64xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op scales of f8E4M3FN (NVFP4) need 'q' of f4E2M1FN, got 'tensor<4x64xf8E4M3FN>'}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
  return
}

// -----

func.func @block_scale_ub(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op attribute 'scale_ub' does not apply to block scales}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64, scale_ub = 1.0 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @block_min_scale(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op attribute 'min_scale' does not apply to block scales}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64, min_scale = 1.0 : f32} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @mx_global_scale(%y: tensor<4x64xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op operand 'global_scale' needs the NVFP4 form (f4E2M1FN with f8E4M3FN scales)}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 32 : i64} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @nvfp4_no_global_scale(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op the NVFP4 form (f4E2M1FN with f8E4M3FN scales) needs a 'global_scale' operand}}
  %q, %sc = norm.quantize %y {group_size = 16 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x4xf8E4M3FN>)
  return
}

// -----

func.func @nvfp4_rounding(%y: tensor<4x64xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op attribute 'scale_rounding' needs f8E8M0FNU scales}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x4xf8E4M3FN>)
  return
}

// -----

func.func @nvfp4_group(%y: tensor<4x64xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op the NVFP4 form needs 'group_size' = 16, got 32}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 32 : i64} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E4M3FN>)
  return
}

// -----

func.func @mxfp4_group(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op the MXFP4 form (f4E2M1FN with f8E8M0FNU scales) needs 'group_size' = 32, got 16}}
  %q, %sc = norm.quantize %y {group_size = 16 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x4xf8E8M0FNU>)
  return
}

// -----

func.func @mxfp8_group(%y: tensor<4x128xf32>) {
  // expected-error @+1 {{'norm.quantize' op f8E4M3FN with f8E8M0FNU scales needs 'group_size' = 32 (MXFP8) or 128 (1x128), got 64}}
  %q, %sc = norm.quantize %y {group_size = 64 : i64} : (tensor<4x128xf32>) -> (tensor<4x128xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @mxfp8_per_token(%y: tensor<4x128xf32>) {
  // expected-error @+1 {{'norm.quantize' op f8E4M3FN with f8E8M0FNU scales needs 'group_size' = 32 (MXFP8) or 128 (1x128), got 0}}
  %q, %sc = norm.quantize %y : (tensor<4x128xf32>) -> (tensor<4x128xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
  return
}

// -----

func.func @block_dynamic_row(%y: tensor<4x?xf32>) {
  // expected-error @+1 {{'norm.quantize' op block scales need a static last dim of 'input', got 'tensor<4x?xf32>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x?xf32>) -> (tensor<4x?xf8E4M3FN>, tensor<4x?xf8E8M0FNU>)
  return
}

// -----

func.func @block_not_divisible(%y: tensor<4x48xf32>) {
  // expected-error @+1 {{'norm.quantize' op attribute 'group_size' = 32 must divide the last dim 48 of 'input'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x48xf32>) -> (tensor<4x48xf8E4M3FN>, tensor<4x1xf8E8M0FNU>)
  return
}

// -----

func.func @block_scales_shape(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op result 'scales' must be a tensor of f8E8M0FNU of shape [4, 2], got 'tensor<4x1xf8E8M0FNU>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x1xf8E8M0FNU>)
  return
}

// -----

func.func @swizzled_shape(%y: tensor<4x64xf32>, %g: tensor<f32>) {
  // expected-error @+1 {{'norm.quantize' op result 'scales' in the swizzled_128x4 layout must be a tensor of f8E4M3FN of shape [512] (roundup(rows, 128) * roundup(groups, 4)), got 'tensor<16xf8E4M3FN>'}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<4x64xf32>, tensor<f32>) -> (tensor<4x64xf4E2M1FN>, tensor<16xf8E4M3FN>)
  return
}

// -----

func.func @swizzled_dynamic_static(%y: tensor<?x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op result 'scales' in the swizzled_128x4 layout must be a tensor of f8E8M0FNU of shape [?] (roundup(rows, 128) * roundup(groups, 4)), got 'tensor<512xf8E8M0FNU>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x64xf32>) -> (tensor<?x64xf8E4M3FN>, tensor<512xf8E8M0FNU>)
  return
}

// -----

func.func @global_scale_shape(%y: tensor<4x64xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{'norm.quantize' op operand #1 must be 'global_scale': tensor<f32> or tensor<1xf32>, but got 'tensor<2xf32>'}}
  %q, %sc = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<4x64xf32>, tensor<2xf32>) -> (tensor<4x64xf4E2M1FN>, tensor<4x4xf8E4M3FN>)
  return
}

// -----

func.func @scales_type(%y: tensor<4x64xf32>) {
  // expected-error @+1 {{'norm.quantize' op result #1 must be 'scales': ranked tensor of f32, f8E8M0FNU or f8E4M3FN, but got 'tensor<4x2xf16>'}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf16>)
  return
}

// -----

func.func @bad_rounding(%y: tensor<4x64xf32>) {
  // expected-error @+2 {{expected ::mlir::norm::ScaleRounding to be one of: floor, up}}
  // expected-error @+1 {{failed to parse Norm_ScaleRoundingAttr parameter 'value' which is to be a `::mlir::norm::ScaleRounding`}}
  %q, %sc = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding nearest>} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return
}
