// norm-raise on decomposed dynamic per-token quantization (DESIGN section
// 2a): s = max(min(max |y|, scale_ub) / QMAX, floor) per row, then the
// static form's scaling, clamp and conversion, becomes the two-result
// norm.quantize; the chain's scales are replaced by the op's. Chains that
// differ from the op stay, each with one remark.
// RUN: norm-opt %s -split-input-file -norm-raise | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-raise=remarks=true -verify-diagnostics -o /dev/null

// FP8 in tensor-level arith: linalg.reduce of |extf(y)| from 0, expanded to
// [4, 1], capped by scale_ub, divided by 448, floored; y divided by the
// broadcast scale; the scales are returned.
// CHECK-LABEL: func @fp8_per_token_divide_ub
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xbf16>)
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {min_scale = 4.35965421E-6 : f32, scale_ub = 1.200000e+03 : f32} : (tensor<4x8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>)
//  CHECK-NEXT: return %[[Q]], %[[S]]
func.func @fp8_per_token_divide_ub(%y: tensor<4x8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>) {
  %e = arith.extf %y : tensor<4x8xbf16> to tensor<4x8xf32>
  %a = math.absf %e : tensor<4x8xf32>
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %amax = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%zero : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %amax1 = tensor.expand_shape %amax [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %ub = arith.constant dense<1200.0> : tensor<4x1xf32>
  %capped = arith.minimumf %amax1, %ub : tensor<4x1xf32>
  %qmax = arith.constant dense<448.0> : tensor<4x1xf32>
  %s0 = arith.divf %capped, %qmax : tensor<4x1xf32>
  %floor = arith.constant dense<4.359654212748865e-06> : tensor<4x1xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x1xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x1xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %v = arith.divf %e, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q, %s : tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
}

// -----

// int8 in linalg.generic ops, dynamic rows: a max-reduction with a maxnumf
// combiner from -inf (fastmath<nnan>: without it a NaN would be dropped, see
// raise-quantize-nan.mlir), the scale computed on [M] without a cap, then
// y * (1 / s), roundeven, clamp, fptosi in one op; the [M] scales the
// function returns are the op's, collapsed.
// CHECK-LABEL: func @i8_per_token_generic_reciprocal
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x8xf32>)
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {min_scale = 1.1920929E-7 : f32} : (tensor<?x8xf32>) -> (tensor<?x8xi8>, tensor<?x1xf32>)
//  CHECK-NEXT: %[[F:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
//   CHECK-NOT: linalg.generic
//       CHECK: return %[[Q]], %[[F]]
func.func @i8_per_token_generic_reciprocal(%y: tensor<?x8xf32>) -> (tensor<?x8xi8>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %y, %c0 : tensor<?x8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %empty = tensor.empty(%d) : tensor<?xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%empty : tensor<?xf32>) -> tensor<?xf32>
  %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<?x8xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maxnumf %acc, %a fastmath<nnan> : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%amax : tensor<?xf32>) outs(%empty : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %qmax = arith.constant 127.0 : f32
    %floor = arith.constant 1.1920929e-07 : f32
    %s0 = arith.divf %in, %qmax : f32
    %s1 = arith.maximumf %s0, %floor : f32
    linalg.yield %s1 : f32
  } -> tensor<?xf32>
  %qinit = tensor.empty(%d) : tensor<?x8xi8>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s : tensor<?x8xf32>, tensor<?xf32>) outs(%qinit : tensor<?x8xi8>) {
  ^bb0(%in: f32, %sc: f32, %out: i8):
    %one = arith.constant 1.0 : f32
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %r = arith.divf %one, %sc : f32
    %v = arith.mulf %in, %r : f32
    %rd = math.roundeven %v : f32
    %b = arith.maximumf %rd, %lo : f32
    %c = arith.minimumf %b, %hi : f32
    %i = arith.fptosi %c : f32 to i8
    linalg.yield %i : i8
  } -> tensor<?x8xi8>
  return %q, %s : tensor<?x8xi8>, tensor<?xf32>
}

// -----

// FP8 with TOSA: |y| and its maximum (tosa.reduce_max, keepdim) in bf16,
// extended to f32, no cap, the reciprocal of the scale broadcast by
// tosa.mul; the scales are not used.
// CHECK-LABEL: func @fp8_per_token_tosa_bf16_amax
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xbf16>)
//   CHECK-NOT: tosa.
//       CHECK: %[[Q:.*]], %{{.*}} = norm.quantize %[[Y]] {min_scale = 4.35965421E-6 : f32} : (tensor<4x8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>)
//  CHECK-NEXT: return %[[Q]]
func.func @fp8_per_token_tosa_bf16_amax(%y: tensor<4x8xbf16>) -> tensor<4x8xf8E4M3FN> {
  %a = tosa.abs %y : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xbf16>) -> tensor<4x1xbf16>
  %amax32 = tosa.cast %amax : (tensor<4x1xbf16>) -> tensor<4x1xf32>
  %qmax = arith.constant dense<448.0> : tensor<4x1xf32>
  %s0 = arith.divf %amax32, %qmax : tensor<4x1xf32>
  %floor = arith.constant dense<4.359654212748865e-06> : tensor<4x1xf32>
  %s = arith.maximumf %floor, %s0 : tensor<4x1xf32>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %e = tosa.cast %y : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %v = tosa.mul %e, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.minimumf %v, %hi : tensor<4x8xf32>
  %c2 = arith.maximumf %c1, %lo : tensor<4x8xf32>
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// After an existing norm op: max |y| in a linalg.generic reduction with a
// compare-and-select combiner (fastmath<nnan>: `select(a > acc, a, acc)`
// drops a NaN a), the cap and floor as ordered compare-and-select clamps
// (they keep a NaN), the [M] scales expanded to [M, 1] and returned; the norm's
// result is the op's input.
// CHECK-LABEL: func @fp8_per_token_after_norm_select
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<8xbf16>)
//       CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] weight(%[[W]])
//  CHECK-NEXT: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {min_scale = 9.99999974E-6 : f32, scale_ub = 6.400000e+01 : f32} : (tensor<4x8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>)
//  CHECK-NEXT: return %[[Q]], %[[S]]
func.func @fp8_per_token_after_norm_select(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>) {
  %y = norm.rms_norm %x weight(%w) : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x8xbf16>) outs(%zero : tensor<4xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %a = math.absf %e : f32
    %gt = arith.cmpf ogt, %a, %acc fastmath<nnan> : f32
    %m = arith.select %gt, %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %empty = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%amax : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ub = arith.constant 64.0 : f32
    %qmax = arith.constant 448.0 : f32
    %floor = arith.constant 1.0e-05 : f32
    %big = arith.cmpf ogt, %in, %ub : f32
    %c = arith.select %big, %ub, %in : f32
    %s0 = arith.divf %c, %qmax : f32
    %small = arith.cmpf olt, %s0, %floor : f32
    %s1 = arith.select %small, %floor, %s0 : f32
    linalg.yield %s1 : f32
  } -> tensor<4xf32>
  %s2 = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s2 : tensor<4x8xbf16>, tensor<4x1xf32>) outs(%init : tensor<4x8xf8E4M3FN>) {
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
  return %q, %s2 : tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
}

// -----

// Per group: the frontend views [2, 16] as groups of 4 ([2, 4, 4]) and
// quantizes the view per token; raised on the view (group_size 0), which is
// per-group quantization of the [2, 16] tensor. The [2, 4] scales are read
// before the quantization too: that user keeps the chain's scale.
// CHECK-LABEL: func @i8_per_group_view
//  CHECK-SAME: (%[[Y:.*]]: tensor<2x16xf32>)
//       CHECK: %[[V:.*]] = tensor.expand_shape %[[Y]]
//       CHECK: %[[EARLY:.*]] = linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[V]] {min_scale = 1.5378937E-5 : f32} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xi8>, tensor<2x4x1xf32>)
//  CHECK-NEXT: %[[F:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<2x4x1xf32> into tensor<2x4xf32>
//  CHECK-NEXT: %[[QF:.*]] = tensor.collapse_shape %[[Q]]
//  CHECK-NEXT: return %[[QF]], %[[F]], %[[EARLY]]
func.func @i8_per_group_view(%y: tensor<2x16xf32>) -> (tensor<2x16xi8>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %v3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [2, 4, 4] : tensor<2x16xf32> into tensor<2x4x4xf32>
  %a = math.absf %v3 : tensor<2x4x4xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<2x4xf32>
  %amax = linalg.reduce ins(%a : tensor<2x4x4xf32>) outs(%ninf : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %qmax = arith.constant dense<127.0> : tensor<2x4xf32>
  %s0 = arith.divf %amax, %qmax : tensor<2x4xf32>
  %floor = arith.constant dense<1.537893695058301e-05> : tensor<2x4xf32>
  %s = arith.maximumf %s0, %floor : tensor<2x4xf32>
  %early = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<2x4xf32>) outs(%s0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %full = tensor.empty() : tensor<2x4x4xf32>
  %sb = linalg.broadcast ins(%s : tensor<2x4xf32>) outs(%full : tensor<2x4x4xf32>) dimensions = [2]
  %v = arith.divf %v3, %sb : tensor<2x4x4xf32>
  %r = math.roundeven %v : tensor<2x4x4xf32>
  %lo = arith.constant dense<-128.0> : tensor<2x4x4xf32>
  %hi = arith.constant dense<127.0> : tensor<2x4x4xf32>
  %c1 = arith.maximumf %r, %lo : tensor<2x4x4xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<2x4x4xf32>
  %q3 = arith.fptosi %c2 : tensor<2x4x4xf32> to tensor<2x4x4xi8>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<2x4x4xi8> into tensor<2x16xi8>
  return %q, %s, %early : tensor<2x16xi8>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// No floor: an all-zero row divides by 0, norm.quantize floors the scale.
// CHECK-LABEL: func @fp8_no_floor_stays
//       CHECK: arith.truncf
//   CHECK-NOT: norm.quantize
func.func @fp8_no_floor_stays(%y: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %y : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %qmax = arith.constant dense<448.0> : tensor<4x1xf32>
  %s = arith.divf %amax, %qmax : tensor<4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the dynamic scale has no floor max(s, min_scale) (norm.quantize always applies one; without it a row of zeros divides by 0)}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// max |y| multiplied by the inexact f32 constant 1/448 instead of divided
// by 448.
// CHECK-LABEL: func @fp8_times_inverse_qmax_stays
//   CHECK-NOT: norm.quantize
func.func @fp8_times_inverse_qmax_stays(%y: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %y : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %inv = arith.constant dense<0.0022321429569274187> : tensor<4x1xf32>
  %s0 = arith.mulf %amax, %inv : tensor<4x1xf32>
  %floor = arith.constant dense<4.359654212748865e-06> : tensor<4x1xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the dynamic scale multiplies max |y| by 0.0022321429569274187 instead of dividing it by 448 (1 / 448 is not exact in f32)}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// fp8 scale divided by the int8 QMAX.
// CHECK-LABEL: func @fp8_wrong_qmax_stays
//   CHECK-NOT: norm.quantize
func.func @fp8_wrong_qmax_stays(%y: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %y : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %qmax = arith.constant dense<127.0> : tensor<4x1xf32>
  %s0 = arith.divf %amax, %qmax : tensor<4x1xf32>
  %floor = arith.constant dense<4.359654212748865e-06> : tensor<4x1xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the dynamic scale divides by 127, not by 448}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// A floor of 0 is no floor (norm.quantize's min_scale is > 0).
// CHECK-LABEL: func @fp8_zero_floor_stays
//   CHECK-NOT: norm.quantize
func.func @fp8_zero_floor_stays(%y: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %y : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %qmax = arith.constant dense<448.0> : tensor<4x1xf32>
  %s0 = arith.divf %amax, %qmax : tensor<4x1xf32>
  %floor = arith.constant dense<0.0> : tensor<4x1xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the floor 0 of the dynamic scale is not finite and > 0}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// max |y| over the rows (dim 0), one scale per column.
// CHECK-LABEL: func @i8_column_amax_stays
//   CHECK-NOT: norm.quantize
func.func @i8_column_amax_stays(%y: tensor<4x8xf32>) -> tensor<4x8xi8> {
  %a = math.absf %y : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 0 : i32} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %qmax = arith.constant dense<127.0> : tensor<1x8xf32>
  %s0 = arith.divf %amax, %qmax : tensor<1x8xf32>
  %floor = arith.constant dense<1.537893695058301e-05> : tensor<1x8xf32>
  %s = arith.maximumf %s0, %floor : tensor<1x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %rd = math.roundeven %v : tensor<4x8xf32>
  %lo = arith.constant dense<-128.0> : tensor<4x8xf32>
  %hi = arith.constant dense<127.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %rd, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: max |y| is reduced over another dim than the last one}}
  %q = arith.fptosi %c2 : tensor<4x8xf32> to tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// max |y| over the whole tensor: one scale shared across rows (dynamic
// per-tensor quantization).
// CHECK-LABEL: func @fp8_shared_scale_stays
//   CHECK-NOT: norm.quantize
func.func @fp8_shared_scale_stays(%y: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %y : tensor<4x8xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %amax = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%ninf : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %full = tensor.empty() : tensor<4x8xf32>
  %ab = linalg.broadcast ins(%amax : tensor<f32>) outs(%full : tensor<4x8xf32>) dimensions = [0, 1]
  %qmax = arith.constant dense<448.0> : tensor<4x8xf32>
  %s0 = arith.divf %ab, %qmax : tensor<4x8xf32>
  %floor = arith.constant dense<4.359654212748865e-06> : tensor<4x8xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x8xf32>
  %v = arith.divf %y, %s : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: max |y| is taken over more dims than the last one (a scale shared across rows); norm.quantize computes one scale per row or group of the last dim}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// The scale comes from max |x| of another tensor than the one quantized.
// CHECK-LABEL: func @fp8_other_amax_stays
//   CHECK-NOT: norm.quantize
func.func @fp8_other_amax_stays(%y: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %x : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %qmax = arith.constant dense<448.0> : tensor<4x1xf32>
  %s0 = arith.divf %amax, %qmax : tensor<4x1xf32>
  %floor = arith.constant dense<4.359654212748865e-06> : tensor<4x1xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the dynamic scale is not computed from max |y| of the quantized value y}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// The floor is a runtime value, not a constant attribute.
// CHECK-LABEL: func @fp8_runtime_floor_stays
//   CHECK-NOT: norm.quantize
func.func @fp8_runtime_floor_stays(%y: tensor<4x8xf32>, %floor: tensor<4x1xf32>) -> tensor<4x8xf8E4M3FN> {
  %a = math.absf %y : tensor<4x8xf32>
  %amax = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %qmax = arith.constant dense<448.0> : tensor<4x1xf32>
  %s0 = arith.divf %amax, %qmax : tensor<4x1xf32>
  %s = arith.maximumf %s0, %floor : tensor<4x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %v = tosa.mul %y, %r, %shift : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %c1 = arith.maximumf %v, %lo : tensor<4x8xf32>
  %c2 = arith.minimumf %c1, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: the floor of the dynamic scale is not a constant}}
  %q = arith.truncf %c2 : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}
