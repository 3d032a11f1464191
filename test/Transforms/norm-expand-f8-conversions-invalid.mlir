// RUN: norm-opt %s -norm-expand-f8-conversions -verify-diagnostics -o /dev/null
// RUN: not norm-opt %s -norm-expand-f8-conversions -o /dev/null 2>&1 | FileCheck %s --check-prefix=MSG

// The whole message, once.
// MSG: conversion from 'f32' to 'f8E5M2' has no CPU lowering (f8E4M3FN, f8E8M0FNU and f4E2M1FN to or from f16, bf16 or f32 and to f64, on scalars and vectors, rounding to nearest even, are expanded)

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
  // expected-error @below {{conversion from 'f64' to 'f4E2M1FN' has no CPU lowering}}
  %e = arith.truncf %w : f64 to f4E2M1FN
  // expected-error @below {{conversion from 'f32' to 'f8E8M0FNU' has no CPU lowering}}
  %f = arith.truncf %v downward : f32 to f8E8M0FNU
  return
}
