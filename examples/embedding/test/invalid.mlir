// The installed dialect's verifier, checked with -verify-diagnostics.
// RUN: norm-opt %s -split-input-file -verify-diagnostics

func.func @dyt_epsilon(%x: tensor<8x768xf32>, %a: tensor<f32>) -> tensor<8x768xf32> {
  // expected-error @+1 {{does not take attribute 'epsilon'}}
  %y = norm.dyt %x alpha(%a) {epsilon = 1.0e-05 : f32} : (tensor<8x768xf32>, tensor<f32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}
