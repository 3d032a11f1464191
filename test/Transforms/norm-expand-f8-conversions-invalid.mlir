// RUN: norm-opt %s -norm-expand-f8-conversions -verify-diagnostics -o /dev/null

// Other conversions are not used in these pipelines' inputs: other 8-bit
// types, f64 sources, tensors (lowered to loops first), other rounding.
func.func @other_types(%v: f32, %w: f64, %t: tensor<4xf32>) {
  // expected-error @below {{conversion from 'f32' to 'f8E5M2' has no CPU lowering}}
  %a = arith.truncf %v : f32 to f8E5M2
  // expected-error @below {{conversion from 'f64' to 'f8E4M3FN' has no CPU lowering}}
  %b = arith.truncf %w : f64 to f8E4M3FN
  // expected-error @below {{conversion from 'f32' to 'f8E4M3FN' has no CPU lowering}}
  %c = arith.truncf %t : tensor<4xf32> to tensor<4xf8E4M3FN>
  // expected-error @below {{conversion from 'f32' to 'f8E4M3FN' has no CPU lowering}}
  %d = arith.truncf %v to_nearest_away : f32 to f8E4M3FN
  return
}
