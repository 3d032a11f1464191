// RUN: norm-opt %s -norm-fold-matmul-weights="defer-scale=true remarks=true" -split-input-file -verify-diagnostics | FileCheck %s

// defer-scale moves rms_norm's per-row scale r after the matmuls only where
// that is exact up to rounding. Otherwise the weight alone is folded (a
// remark says why the scale stays), or, with no weight, the candidate is
// declined with the IR unchanged.

// Not deferred: the matmul accumulates into C; r * (C + x @ W') is not
// C + r * (x @ W'). The weight is folded, the matmul still reads y.
// CHECK-LABEL: func @nonzero_init
//  CHECK-SAME: (%{{.*}}: tensor<4x2xf32>, %[[C:.*]]: tensor<4x2xf32>)
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
//       CHECK: %[[O:.*]] = linalg.matmul ins(%[[Y]], %{{.*}} : tensor<4x2xf32>, tensor<2x2xf32>) outs(%[[C]] : tensor<4x2xf32>)
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[O]]
func.func @nonzero_init(%x: tensor<4x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{folded without deferring the scale: a matmul accumulates into an init that is not zero}}
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// Declined: the same without a weight, nothing else to fold.
// CHECK-LABEL: func @nonzero_init_no_weight
//       CHECK: %[[M:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]>
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
//       CHECK: linalg.matmul ins(%[[Y]], %[[M]]
func.func @nonzero_init_no_weight(%x: tensor<4x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the scale cannot be deferred: a matmul accumulates into an init that is not zero}}
  %y = norm.rms_norm %x : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// Declined: a fill with 1.0 is not a zero init either.
// CHECK-LABEL: func @nonzero_fill
//       CHECK: %[[Y:.*]] = norm.rms_norm
//       CHECK: linalg.matmul ins(%[[Y]]
func.func @nonzero_fill(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %c = linalg.fill ins(%one : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the scale cannot be deferred: a matmul accumulates into an init that is not zero}}
  %y = norm.rms_norm %x : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// Declined: one of two matmuls has a nonzero init (the other alone would
// be deferrable).
// CHECK-LABEL: func @one_nonzero_init
//       CHECK: %[[Y:.*]] = norm.rms_norm
//       CHECK: linalg.matmul ins(%[[Y]]
//       CHECK: linalg.matmul ins(%[[Y]]
func.func @one_nonzero_init(%x: tensor<4x2xf32>, %c: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the scale cannot be deferred: a matmul accumulates into an init that is not zero}}
  %y = norm.rms_norm %x : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %0 = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Not deferred: an f16 matmul would accumulate the raw input, which may
// overflow f16 where the normalized rows do not. The weight is folded.
// CHECK-LABEL: func @f16_accumulator
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<4x2xf16>) -> tensor<4x2xf16>
//       CHECK: linalg.matmul ins(%[[Y]], %{{.*}} : tensor<4x2xf16>, tensor<2x2xf16>)
//   CHECK-NOT: linalg.generic
func.func @f16_accumulator(%x: tensor<4x2xf16>) -> tensor<4x2xf16> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf16>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf16>
  %z = arith.constant dense<0.0> : tensor<4x2xf16>
  // expected-remark @+1 {{folded without deferring the scale: a matmul accumulates in a type other than f32 or f64}}
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf16>, tensor<2xf16>) -> tensor<4x2xf16>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf16>, tensor<2x2xf16>) outs(%z : tensor<4x2xf16>) -> tensor<4x2xf16>
  return %o : tensor<4x2xf16>
}

// -----

// Declined: the same for bf16, without a weight.
// CHECK-LABEL: func @bf16_accumulator
//       CHECK: %[[Y:.*]] = norm.rms_norm
//       CHECK: linalg.matmul ins(%[[Y]]
func.func @bf16_accumulator(%x: tensor<4x2xbf16>) -> tensor<4x2xbf16> {
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xbf16>
  %z = arith.constant dense<0.0> : tensor<4x2xbf16>
  // expected-remark @+1 {{not folded into matmuls: the scale cannot be deferred: a matmul accumulates in a type other than f32 or f64}}
  %y = norm.rms_norm %x : (tensor<4x2xbf16>) -> tensor<4x2xbf16>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xbf16>, tensor<2x2xbf16>) outs(%z : tensor<4x2xbf16>) -> tensor<4x2xbf16>
  return %o : tensor<4x2xbf16>
}

// -----

// Declined: the statistics of the op are used, so it cannot go.
// CHECK-LABEL: func @used_stats
//       CHECK: %[[Y:.*]], %[[R:.*]] = norm.rms_norm %{{.*}} {return_stats}
//       CHECK: %[[O:.*]] = linalg.matmul ins(%[[Y]]
//       CHECK: return %[[O]], %[[R]]
func.func @used_stats(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4xf32>) {
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  // expected-remark @+1 {{not folded into matmuls: the scale cannot be deferred: the norm op's statistics are used}}
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4xf32>)
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o, %r : tensor<4x2xf32>, tensor<4xf32>
}

// -----

// Not deferred: the same with a weight, which is folded; the op stays for
// its statistics.
// CHECK-LABEL: func @used_stats_weight
//       CHECK: %[[Y:.*]], %[[R:.*]] = norm.rms_norm %{{.*}} {return_stats} : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4xf32>)
//       CHECK: %[[O:.*]] = linalg.matmul ins(%[[Y]]
//       CHECK: return %[[O]], %[[R]]
func.func @used_stats_weight(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4xf32>) {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  // expected-remark @+1 {{folded without deferring the scale: the norm op's statistics are used}}
  %y, %r = norm.rms_norm %x weight(%w) {return_stats} : (tensor<4x2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<4xf32>)
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o, %r : tensor<4x2xf32>, tensor<4xf32>
}

// -----

// Deferred (the positive control of the cases above): zero inits as a fill
// and as a constant, -0.0 included, and an f16 input read by a matmul that
// accumulates in f32.
// CHECK-LABEL: func @zero_inits
//   CHECK-NOT: norm.rms_norm
//       CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf16>, tensor<2x2xf16>) outs(%{{.*}} : tensor<4x2xf32>)
//       CHECK: linalg.generic
//       CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf16>, tensor<2x2xf16>) outs(%{{.*}} : tensor<4x2xf32>)
//       CHECK: linalg.generic
func.func @zero_inits(%x: tensor<4x2xf16>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %nz = arith.constant -0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%nz : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf16>
  %y = norm.rms_norm %x : (tensor<4x2xf16>) -> tensor<4x2xf16>
  %0 = linalg.matmul ins(%y, %m : tensor<4x2xf16>, tensor<2x2xf16>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = linalg.matmul ins(%y, %m : tensor<4x2xf16>, tensor<2x2xf16>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Not a candidate: LayerNorm without weight and bias is never deferred
// (no remark, IR unchanged).
// CHECK-LABEL: func @layer_norm_not_deferred
//       CHECK: %[[Y:.*]] = norm.layer_norm
//       CHECK: linalg.matmul ins(%[[Y]]
func.func @layer_norm_not_deferred(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %z = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = norm.layer_norm %x : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}
