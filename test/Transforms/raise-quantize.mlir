// norm-raise on decomposed static quantization (DESIGN section 2a): the
// conversion to f8E4M3FN or i8 of a scaled, clamped (and for i8 rounded)
// tensor becomes norm.quantize; the chains that differ from the op stay,
// each with one remark.
// RUN: norm-opt %s -split-input-file -norm-raise | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-raise=remarks=true -verify-diagnostics -o /dev/null

// FP8 in tensor-level arith: extf of bf16, a divide by a splat of the
// scalar extracted from a tensor<f32>, maximumf/minimumf, truncf.
// CHECK-LABEL: func @fp8_arith_divide
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xbf16>, %[[S:.*]]: tensor<f32>)
//       CHECK: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[S]]) : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
//  CHECK-NEXT: return %[[Q]]
func.func @fp8_arith_divide(%y: tensor<4x8xbf16>, %s: tensor<f32>) -> tensor<4x8xf8E4M3FN> {
  %sv = tensor.extract %s[] : tensor<f32>
  %sb = tensor.splat %sv : tensor<4x8xf32>
  %e = arith.extf %y : tensor<4x8xbf16> to tensor<4x8xf32>
  %v = arith.divf %e, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  %q = arith.truncf %b : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// A scale extracted from a tensor of unknown size: the scalar itself becomes
// the tensor<f32> scale.
// CHECK-LABEL: func @fp8_scale_from_dynamic
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xbf16>, %[[S:.*]]: tensor<?xf32>)
//       CHECK: %[[V:.*]] = tensor.extract %[[S]][%{{.*}}] : tensor<?xf32>
//       CHECK: %[[T:.*]] = tensor.from_elements %[[V]] : tensor<f32>
//       CHECK: norm.quantize %[[Y]] scale(%[[T]]) : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
func.func @fp8_scale_from_dynamic(%y: tensor<4x8xbf16>, %s: tensor<?xf32>) -> tensor<4x8xf8E4M3FN> {
  %c0 = arith.constant 0 : index
  %sv = tensor.extract %s[%c0] : tensor<?xf32>
  %sb = tensor.splat %sv : tensor<4x8xf32>
  %e = arith.extf %y : tensor<4x8xbf16> to tensor<4x8xf32>
  %v = arith.divf %e, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  %q = arith.truncf %b : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// FP8 in tensor-level arith: a multiply by the reciprocal of a broadcast
// tensor<1x1xf32> scale (collapsed to tensor<f32>), maxnumf/minnumf with
// the upper bound first (fastmath<nnan>: without it a NaN would take a bound,
// see raise-quantize-nan.mlir).
// CHECK-LABEL: func @fp8_arith_reciprocal_maxnum
//  CHECK-SAME: (%[[Y:.*]]: tensor<2x3x8xf32>, %[[S:.*]]: tensor<1x1xf32>)
//       CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] [] : tensor<1x1xf32> into tensor<f32>
//       CHECK: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[C]]) : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf8E4M3FN>
//  CHECK-NEXT: return %[[Q]]
func.func @fp8_arith_reciprocal_maxnum(%y: tensor<2x3x8xf32>, %s: tensor<1x1xf32>) -> tensor<2x3x8xf8E4M3FN> {
  %full = tensor.empty() : tensor<2x3x8xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<1x1xf32>) outs(%full : tensor<2x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x8xf32>
  %one = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %r = arith.divf %one, %sb : tensor<2x3x8xf32>
  %v = arith.mulf %r, %y : tensor<2x3x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<2x3x8xf32>
  %hi = arith.constant dense<448.0> : tensor<2x3x8xf32>
  %a = arith.minnumf %v, %hi fastmath<nnan> : tensor<2x3x8xf32>
  %b = arith.maxnumf %a, %lo fastmath<nnan> : tensor<2x3x8xf32>
  %q = arith.truncf %b : tensor<2x3x8xf32> to tensor<2x3x8xf8E4M3FN>
  return %q : tensor<2x3x8xf8E4M3FN>
}

// -----

// int8 in one linalg.generic: the reciprocal of a tensor<1xf32> scale,
// roundeven, then a maxnumf/minnumf clamp (fastmath<nnan>), fptosi; dynamic
// leading dim.
// CHECK-LABEL: func @i8_generic_reciprocal
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x8xf32>, %[[S:.*]]: tensor<1xf32>)
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[S]]) : (tensor<?x8xf32>, tensor<1xf32>) -> tensor<?x8xi8>
//  CHECK-NEXT: return %[[Q]]
func.func @i8_generic_reciprocal(%y: tensor<?x8xf32>, %s: tensor<1xf32>) -> tensor<?x8xi8> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %y, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%d) : tensor<?x8xi8>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s : tensor<?x8xf32>, tensor<1xf32>) outs(%init : tensor<?x8xi8>) {
  ^bb0(%in: f32, %sc: f32, %out: i8):
    %one = arith.constant 1.0 : f32
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %r = arith.divf %one, %sc : f32
    %v = arith.mulf %in, %r : f32
    %a = math.roundeven %v : f32
    %b = arith.maxnumf %a, %lo fastmath<nnan> : f32
    %c = arith.minnumf %b, %hi fastmath<nnan> : f32
    %i = arith.fptosi %c : f32 to i8
    linalg.yield %i : i8
  } -> tensor<?x8xi8>
  return %q : tensor<?x8xi8>
}

// -----

// int8 in linalg.generic: f16 input, a divide by a scalar captured from
// outside the body (becomes tensor.from_elements), the clamp before the
// roundeven, maximumf/minimumf.
// CHECK-LABEL: func @i8_generic_divide_captured_scalar
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xf16>, %[[S:.*]]: f32)
//       CHECK: %[[T:.*]] = tensor.from_elements %[[S]] : tensor<f32>
//       CHECK: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[T]]) : (tensor<4x8xf16>, tensor<f32>) -> tensor<4x8xi8>
//  CHECK-NEXT: return %[[Q]]
func.func @i8_generic_divide_captured_scalar(%y: tensor<4x8xf16>, %s: f32) -> tensor<4x8xi8> {
  %init = tensor.empty() : tensor<4x8xi8>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf16>) outs(%init : tensor<4x8xi8>) {
  ^bb0(%in: f16, %out: i8):
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %e = arith.extf %in : f16 to f32
    %v = arith.divf %e, %s : f32
    %b = arith.maximumf %v, %lo : f32
    %c = arith.minimumf %b, %hi : f32
    %a = math.roundeven %c : f32
    %i = arith.fptosi %a : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// int8 in tensor-level arith: a multiply by the constant 4 is the scale
// 0.25 (1 / 0.25 gives 4 back exactly).
// CHECK-LABEL: func @i8_arith_constant_factor
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xbf16>)
//       CHECK: %[[S:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
//       CHECK: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[S]]) : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xi8>
//  CHECK-NEXT: return %[[Q]]
func.func @i8_arith_constant_factor(%y: tensor<4x8xbf16>) -> tensor<4x8xi8> {
  %e = arith.extf %y : tensor<4x8xbf16> to tensor<4x8xf32>
  %k = arith.constant dense<4.0> : tensor<4x8xf32>
  %v = arith.mulf %e, %k : tensor<4x8xf32>
  %r = math.roundeven %v : tensor<4x8xf32>
  %lo = arith.constant dense<-128.0> : tensor<4x8xf32>
  %hi = arith.constant dense<127.0> : tensor<4x8xf32>
  %a = arith.maximumf %r, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  %q = arith.fptosi %b : tensor<4x8xf32> to tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// The output of an existing norm op, quantized to FP8; the norm's result
// stays used by the return.
// CHECK-LABEL: func @fp8_after_norm_op
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<8xbf16>, %[[S:.*]]: tensor<f32>)
//       CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] weight(%[[W]])
//       CHECK: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[S]]) : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
//  CHECK-NEXT: return %[[Q]], %[[Y]]
func.func @fp8_after_norm_op(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>, %s: tensor<f32>) -> (tensor<4x8xf8E4M3FN>, tensor<4x8xbf16>) {
  %y = norm.rms_norm %x weight(%w) : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s : tensor<4x8xbf16>, tensor<f32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %sc: f32, %out: f8E4M3FN):
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %e = arith.extf %in : bf16 to f32
    %v = arith.divf %e, %sc : f32
    %a = arith.minimumf %v, %hi : f32
    %b = arith.maximumf %a, %lo : f32
    %t = arith.truncf %b : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q, %y : tensor<4x8xf8E4M3FN>, tensor<4x8xbf16>
}

// -----

// A decomposed RMSNorm (LLaMA's, bf16) whose output is quantized to FP8:
// both raise in the same run.
// CHECK-LABEL: func @fp8_after_rms_norm_chain
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<8xbf16>, %[[S:.*]]: tensor<f32>)
//   CHECK-NOT: linalg.
//       CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] weight(%[[W]]) {cast_mode = #norm<cast_mode before_weight>, compute_type = f32} : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
//  CHECK-NEXT: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[S]]) : (tensor<4x8xbf16>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
//  CHECK-NEXT: return %[[Q]]
func.func @fp8_after_rms_norm_chain(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>, %s: tensor<f32>) -> tensor<4x8xf8E4M3FN> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 1.250000e-01 : f32
  %eps = arith.constant dense<9.99999997E-7> : tensor<4x1xf32>
  %xf = arith.extf %x : tensor<4x8xbf16> to tensor<4x8xf32>
  %sq = arith.mulf %xf, %xf : tensor<4x8xf32>
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %init, %in : f32
      linalg.yield %a : f32
    }
  %ms = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%row : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %inv_n, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %ms2 = tensor.expand_shape %ms [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %ve = arith.addf %ms2, %eps : tensor<4x1xf32>
  %r = math.rsqrt %ve : tensor<4x1xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r, %xf : tensor<4x1xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %nh = arith.truncf %n : tensor<4x8xf32> to tensor<4x8xbf16>
  %fullh = tensor.empty() : tensor<4x8xbf16>
  %w_b = linalg.broadcast ins(%w : tensor<8xbf16>) outs(%fullh : tensor<4x8xbf16>) dimensions = [0]
  %y = arith.mulf %w_b, %nh : tensor<4x8xbf16>
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s : tensor<4x8xbf16>, tensor<f32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %sc: f32, %out: f8E4M3FN):
    %one = arith.constant 1.0 : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %e = arith.extf %in : bf16 to f32
    %inv = arith.divf %one, %sc : f32
    %v = arith.mulf %e, %inv : f32
    %a = arith.maximumf %v, %lo : f32
    %b = arith.minimumf %a, %hi : f32
    %t = arith.truncf %b : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// The same RMSNorm in f32 with its weight, quantized to int8 through
// y * (1/s) in tensor-level arith: the quantization takes the f32 norm
// output as it is.
// CHECK-LABEL: func @i8_after_rms_norm_chain_f32
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<f32>)
//   CHECK-NOT: linalg.
//       CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] weight(%[[W]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
//  CHECK-NEXT: %[[Q:.*]] = norm.quantize %[[Y]] scale(%[[S]]) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi8>
//  CHECK-NEXT: return %[[Q]]
func.func @i8_after_rms_norm_chain_f32(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xi8> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 1.250000e-01 : f32
  %eps = arith.constant dense<9.99999997E-7> : tensor<4x1xf32>
  %sq = arith.mulf %x, %x : tensor<4x8xf32>
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %init, %in : f32
      linalg.yield %a : f32
    }
  %ms = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%row : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %inv_n, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %ms2 = tensor.expand_shape %ms [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %ve = arith.addf %ms2, %eps : tensor<4x1xf32>
  %r = math.rsqrt %ve : tensor<4x1xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r, %x : tensor<4x1xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %w_b = linalg.broadcast ins(%w : tensor<8xf32>) outs(%full : tensor<4x8xf32>) dimensions = [0]
  %y = arith.mulf %n, %w_b : tensor<4x8xf32>
  %s_b = linalg.broadcast ins(%s : tensor<f32>) outs(%full : tensor<4x8xf32>) dimensions = [0, 1]
  %one = arith.constant dense<1.0> : tensor<4x8xf32>
  %inv = arith.divf %one, %s_b : tensor<4x8xf32>
  %v = arith.mulf %y, %inv : tensor<4x8xf32>
  %re = math.roundeven %v : tensor<4x8xf32>
  %lo = arith.constant dense<-128.0> : tensor<4x8xf32>
  %hi = arith.constant dense<127.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %re, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  %q = arith.fptosi %c2 : tensor<4x8xf32> to tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// Negative: clamp bounds other than +-448.
// CHECK-LABEL: func @fp8_wrong_bounds_stays
//       CHECK: arith.truncf
//   CHECK-NOT: norm.quantize
func.func @fp8_wrong_bounds_stays(%y: tensor<4x8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %v = arith.divf %y, %s : tensor<4x8xf32>
  %lo = arith.constant dense<-400.0> : tensor<4x8xf32>
  %hi = arith.constant dense<400.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the value is clamped to [-400, 400], not to [-448, 448]}}
  %q = arith.truncf %b : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Negative: no clamp (no saturation).
// CHECK-LABEL: func @fp8_no_clamp_stays
//       CHECK: arith.truncf
//   CHECK-NOT: norm.quantize
func.func @fp8_no_clamp_stays(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf8E4M3FN> {
  %sb = tensor.splat %s : tensor<4x8xf32>
  %v = arith.divf %y, %sb : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the value converted to f8E4M3FN is not clamped to [-448, 448] (no saturation)}}
  %q = arith.truncf %v : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Negative: a clamp from below only.
// CHECK-LABEL: func @fp8_half_clamp_stays
//       CHECK: arith.truncf
//   CHECK-NOT: norm.quantize
func.func @fp8_half_clamp_stays(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf8E4M3FN> {
  %sb = tensor.splat %s : tensor<4x8xf32>
  %v = arith.divf %y, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the value converted to f8E4M3FN is clamped only from below, not to [-448, 448]}}
  %q = arith.truncf %a : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Negative: a per-channel scale (one per element of the last dim).
// CHECK-LABEL: func @fp8_per_channel_scale_stays
//       CHECK: linalg.generic
//   CHECK-NOT: norm.quantize
func.func @fp8_per_channel_scale_stays(%y: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf8E4M3FN> {
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  // expected-remark @below {{quantization not raised: the scale varies along the quantized tensor; norm.quantize takes one per-tensor scale}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s : tensor<4x8xf32>, tensor<8xf32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%in: f32, %sc: f32, %out: f8E4M3FN):
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v = arith.divf %in, %sc : f32
    %a = arith.maximumf %v, %lo : f32
    %b = arith.minimumf %a, %hi : f32
    %t = arith.truncf %b : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Negative: an f8E5M2 result, which norm.quantize does not produce.
// CHECK-LABEL: func @f8e5m2_stays
//       CHECK: arith.truncf
//   CHECK-NOT: norm.quantize
func.func @f8e5m2_stays(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf8E5M2> {
  %sb = tensor.splat %s : tensor<4x8xf32>
  %v = arith.divf %y, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-57344.0> : tensor<4x8xf32>
  %hi = arith.constant dense<57344.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the result element type is f8E5M2; norm.quantize produces f8E4M3FN or i8}}
  %q = arith.truncf %b : tensor<4x8xf32> to tensor<4x8xf8E5M2>
  return %q : tensor<4x8xf8E5M2>
}

// -----

// Negative: int8 without roundeven (fptosi rounds toward zero).
// CHECK-LABEL: func @i8_no_roundeven_stays
//       CHECK: arith.fptosi
//   CHECK-NOT: norm.quantize
func.func @i8_no_roundeven_stays(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xi8> {
  %sb = tensor.splat %s : tensor<4x8xf32>
  %v = arith.divf %y, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-128.0> : tensor<4x8xf32>
  %hi = arith.constant dense<127.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: no math.roundeven before arith.fptosi, which rounds toward zero}}
  %q = arith.fptosi %b : tensor<4x8xf32> to tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// Negative: a multiply by a runtime factor m: norm.quantize would multiply
// by 1 / (1 / m), which may differ from m.
// CHECK-LABEL: func @i8_runtime_factor_stays
//       CHECK: arith.fptosi
//   CHECK-NOT: norm.quantize
func.func @i8_runtime_factor_stays(%y: tensor<4x8xf32>, %m: f32) -> tensor<4x8xi8> {
  %mb = tensor.splat %m : tensor<4x8xf32>
  %v = arith.mulf %y, %mb : tensor<4x8xf32>
  %r = math.roundeven %v : tensor<4x8xf32>
  %lo = arith.constant dense<-128.0> : tensor<4x8xf32>
  %hi = arith.constant dense<127.0> : tensor<4x8xf32>
  %a = arith.maximumf %r, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the value is multiplied by a factor that is neither a constant nor the reciprocal 1 / s of a scale (norm.quantize computes y * (1 / s))}}
  %q = arith.fptosi %b : tensor<4x8xf32> to tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// Negative: the quantized value is computed in the quantizing op itself.
// CHECK-LABEL: func @fp8_fused_input_stays
//       CHECK: linalg.generic
//   CHECK-NOT: norm.quantize
func.func @fp8_fused_input_stays(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf8E4M3FN> {
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  // expected-remark @below {{quantization not raised: the quantized value is not a tensor of its own (it is computed in the op that quantizes it)}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%x: f32, %z: f32, %sc: f32, %out: f8E4M3FN):
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %sum = arith.addf %x, %z : f32
    %v = arith.divf %sum, %sc : f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}
