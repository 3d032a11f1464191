// RUN: norm-opt %s "-norm-outline-kernels=min-count=0" -verify-diagnostics

// min-count 0 would outline nothing different from 1: rejected, at the
// module the pass runs on, and the pass fails.
// expected-error @below {{norm-outline-kernels: option 'min-count' must be >= 1, got 0}}
module {
  func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}
