// RUN: norm-opt %s --norm-lower-gpu -split-input-file -verify-diagnostics

// norm.quantize has no GPU kernels yet: one clear error at each quantize,
// and no norm op is lowered.

func.func @fused_static(%x: tensor<?x256xbf16>, %s: tensor<f32>) -> tensor<?x256xf8E4M3FN> {
  %y = norm.rms_norm %x : (tensor<?x256xbf16>) -> tensor<?x256xbf16>
  // expected-error @+1 {{norm-lower-gpu: norm.quantize has no GPU lowering yet (norm-lower-cpu and norm-to-linalg lower it)}}
  %q = norm.quantize %y scale(%s) : (tensor<?x256xbf16>, tensor<f32>) -> tensor<?x256xf8E4M3FN>
  return %q : tensor<?x256xf8E4M3FN>
}

// -----

func.func @alone_dynamic(%y: tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>) {
  // expected-error @+1 {{norm-lower-gpu: norm.quantize has no GPU lowering yet}}
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x2xf32>
}
