// RUN: norm-opt %s -norm-fuse-residual="remarks=true" -split-input-file -verify-diagnostics | FileCheck %s

// Near misses of norm-fuse-residual: an add in the wrong operand role, an
// add of the init, of one operand twice, of other element types, or an
// add rounded to another type than its summands. Each is left
// unchanged; only a recognized add that cannot be fused gets a remark.

// Not a candidate (wrong operand role): the sum is the norm op's residual,
// not its input.
// CHECK-LABEL: func @sum_as_residual
//       CHECK: %[[S:.*]] = arith.addf
//       CHECK: norm.rms_norm %{{.*}} residual(%[[S]])
func.func @sum_as_residual(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.addf %a, %b : tensor<4x8xf32>
  %y, %h = norm.rms_norm %x residual(%s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// Not a candidate (wrong operand role): the sum is the weight.
// CHECK-LABEL: func @sum_as_weight
//       CHECK: %[[S:.*]] = arith.addf
//       CHECK: norm.rms_norm %{{.*}} weight(%[[S]])
func.func @sum_as_weight(%x: tensor<4x8xf32>, %a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = arith.addf %a, %b : tensor<8xf32>
  %y = norm.rms_norm %x weight(%s) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not a candidate (init): the generic adds its init to an input, not its
// two inputs.
// CHECK-LABEL: func @generic_adds_init
//       CHECK: linalg.generic
//       CHECK: norm.layer_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @generic_adds_init(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %y = norm.layer_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not a candidate: the generic adds one input to itself.
// CHECK-LABEL: func @generic_adds_one_input_twice
//       CHECK: linalg.generic
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @generic_adds_one_input_twice(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x8xf32>
  %y = norm.rms_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not a candidate (element type): f16 summands added in f32 and rounded to
// bf16, another type than theirs.
// CHECK-LABEL: func @rounded_to_other_type
//       CHECK: linalg.generic
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
func.func @rounded_to_other_type(%x: tensor<4x8xf16>, %a: tensor<4x8xf16>) -> tensor<4x8xbf16> {
  %e = tensor.empty() : tensor<4x8xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %a : tensor<4x8xf16>, tensor<4x8xf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: bf16):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.truncf %2 : f32 to bf16
    linalg.yield %3 : bf16
  } -> tensor<4x8xbf16>
  %y = norm.rms_norm %s : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Not a candidate: a difference is not a residual add.
// CHECK-LABEL: func @subtraction
//       CHECK: arith.subf
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @subtraction(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.subf %x, %a : tensor<4x8xf32>
  %y = norm.rms_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Declined: an add of an f32 and a broadcast f32 tensor (another shape).
// CHECK-LABEL: func @tosa_add_other_shape
//       CHECK: tosa.add
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @tosa_add_other_shape(%x: tensor<4x8xf32>, %r: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %s = tosa.add %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{residual add not fused: the add broadcasts an operand or adds another type}}
  %y = norm.rms_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Declined: the add is in another block than the norm op.
// CHECK-LABEL: func @add_in_other_block
//       CHECK: arith.addf
//       CHECK: scf.execute_region
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @add_in_other_block(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.addf %x, %a : tensor<4x8xf32>
  %r = scf.execute_region -> tensor<4x8xf32> {
    // expected-remark @below {{residual add not fused: the add is in another block than the norm op}}
    %y = norm.rms_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %y : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
