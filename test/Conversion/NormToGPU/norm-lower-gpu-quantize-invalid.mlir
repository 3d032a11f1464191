// RUN: norm-opt %s --norm-lower-gpu -split-input-file -verify-diagnostics

// norm.quantize is lowered to the GPU only fused into the kernel of the norm
// producing its input: one clear error at each other one, and nothing is
// lowered.

func.func @alone(%y: tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>) {
  // expected-error @+1 {{norm-lower-gpu: norm.quantize has no GPU kernel here: only a norm.quantize that is the only user of a norm op's y (normalizing the last dim) is lowered, fused into the norm's kernel}}
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x2xf32>
}

// -----

func.func @two_users(%x: tensor<4x256xf32>, %s: tensor<f32>) -> (tensor<4x256xi8>, tensor<4x256xf32>) {
  %y = norm.rms_norm %x : (tensor<4x256xf32>) -> tensor<4x256xf32>
  // expected-error @+1 {{norm-lower-gpu: norm.quantize has no GPU kernel here: only a norm.quantize}}
  %q = norm.quantize %y scale(%s) : (tensor<4x256xf32>, tensor<f32>) -> tensor<4x256xi8>
  return %q, %y : tensor<4x256xi8>, tensor<4x256xf32>
}

// -----

func.func @group_smaller_than_vector(%x: tensor<4x256xbf16>) -> (tensor<4x256xi8>, tensor<4x64xf32>) {
  %y = norm.rms_norm %x : (tensor<4x256xbf16>) -> tensor<4x256xbf16>
  // expected-error @+1 {{norm-lower-gpu: norm.quantize has no GPU kernel here: group_size 4 does not map to the lanes of one register pass over rows of 256 elements}}
  %q, %sc = norm.quantize %y {group_size = 4 : i64} : (tensor<4x256xbf16>) -> (tensor<4x256xi8>, tensor<4x64xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x64xf32>
}

// -----

func.func @group_of_a_looping_row(%x: tensor<4x65536xbf16>) -> (tensor<4x65536xi8>, tensor<4x512xf32>) {
  %y = norm.rms_norm %x : (tensor<4x65536xbf16>) -> tensor<4x65536xbf16>
  // expected-error @+1 {{group_size 128 does not map to the lanes of one register pass over rows of 65536 elements}}
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<4x65536xbf16>) -> (tensor<4x65536xi8>, tensor<4x512xf32>)
  return %q, %sc : tensor<4x65536xi8>, tensor<4x512xf32>
}
