// norm-raise and NaN: norm.quantize propagates a NaN (NaN scale, f8 NaN,
// i8 0). A clamp, floor or max-reduction that turns a NaN into a number
// (torch-mlir's `select(cmpf ult/ugt)`, maxnumf/minnumf) computes something
// else on a row holding a NaN or an infinity: it is raised only with
// fastmath<nnan> on its cmpf/maxnumf or with assume-no-nans; ordered
// selects that keep the NaN are raised as they are.
// RUN: norm-opt %s -split-input-file -norm-raise | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-raise=remarks=true -verify-diagnostics -o /dev/null
// RUN: norm-opt %s -split-input-file -norm-raise=assume-no-nans=true | FileCheck %s --check-prefix=NONAN

// torch-mlir's int8 clamp: `select(v < -128 (ult), -128, v)` and
// `select(v > 127 (ugt), 127, v)` give a NaN v the bound -128 where the op
// gives 0: declined.
// CHECK-LABEL: func @i8_select_unordered
//   CHECK-NOT: norm.quantize
//       CHECK: arith.cmpf ult
//       CHECK: arith.fptosi
// NONAN-LABEL: func @i8_select_unordered
//       NONAN: norm.quantize %{{.*}} scale(%{{.*}}) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi8>
func.func @i8_select_unordered(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xi8> {
  %init = tensor.empty() : tensor<4x8xi8>
  // expected-remark @below {{quantization not raised: a NaN would take the clamp's bound or the other operand here ('arith.select' on 'arith.cmpf ult'); norm.quantize propagates it (assume-no-nans or fastmath<nnan> to raise)}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf32>) outs(%init : tensor<4x8xi8>) {
  ^bb0(%in: f32, %out: i8):
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %v = arith.divf %in, %s : f32
    %r = math.roundeven %v : f32
    %l = arith.cmpf ult, %r, %lo : f32
    %a = arith.select %l, %lo, %r : f32
    %g = arith.cmpf ugt, %a, %hi : f32
    %b = arith.select %g, %hi, %a : f32
    %i = arith.fptosi %b : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// The same clamp with fastmath<nnan> on its compares (NaN is poison): raised.
// CHECK-LABEL: func @i8_select_unordered_nnan
//       CHECK: norm.quantize %{{.*}} scale(%{{.*}}) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi8>
// NONAN-LABEL: func @i8_select_unordered_nnan
//       NONAN: norm.quantize
func.func @i8_select_unordered_nnan(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xi8> {
  %init = tensor.empty() : tensor<4x8xi8>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf32>) outs(%init : tensor<4x8xi8>) {
  ^bb0(%in: f32, %out: i8):
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %v = arith.divf %in, %s : f32
    %r = math.roundeven %v : f32
    %l = arith.cmpf ult, %r, %lo fastmath<nnan> : f32
    %a = arith.select %l, %lo, %r : f32
    %g = arith.cmpf ugt, %a, %hi fastmath<fast> : f32
    %b = arith.select %g, %hi, %a : f32
    %i = arith.fptosi %b : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x8xi8>
  return %q : tensor<4x8xi8>
}

// -----

// Ordered compares that select the bound only when true keep a NaN v (the
// false value): raised without the option.
// CHECK-LABEL: func @fp8_select_ordered
//       CHECK: norm.quantize %{{.*}} scale(%{{.*}}) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf8E4M3FN>
// NONAN-LABEL: func @fp8_select_ordered
//       NONAN: norm.quantize
func.func @fp8_select_ordered(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf8E4M3FN> {
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v = arith.divf %in, %s : f32
    %l = arith.cmpf olt, %v, %lo : f32
    %a = arith.select %l, %lo, %v : f32
    %g = arith.cmpf ogt, %a, %hi : f32
    %b = arith.select %g, %hi, %a : f32
    %t = arith.truncf %b : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Near miss: an ordered compare that selects v when true, `select(v >= lo,
// v, lo)`, gives a NaN v the bound: declined.
// CHECK-LABEL: func @fp8_select_ordered_bound_on_nan
//   CHECK-NOT: norm.quantize
// NONAN-LABEL: func @fp8_select_ordered_bound_on_nan
//       NONAN: norm.quantize
func.func @fp8_select_ordered_bound_on_nan(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf8E4M3FN> {
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  // expected-remark @below {{quantization not raised: a NaN would take the clamp's bound or the other operand here ('arith.select' on 'arith.cmpf oge'); norm.quantize propagates it (assume-no-nans or fastmath<nnan> to raise)}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x8xf32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v = arith.divf %in, %s : f32
    %l = arith.cmpf oge, %v, %lo : f32
    %a = arith.select %l, %v, %lo : f32
    %b = arith.minimumf %a, %hi : f32
    %t = arith.truncf %b : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Near miss: maxnumf/minnumf give a NaN the bound: declined.
// CHECK-LABEL: func @fp8_maxnum
//   CHECK-NOT: norm.quantize
// NONAN-LABEL: func @fp8_maxnum
//       NONAN: norm.quantize
func.func @fp8_maxnum(%y: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf8E4M3FN> {
  %sv = tensor.extract %s[] : tensor<f32>
  %sb = tensor.splat %sv : tensor<4x8xf32>
  %v = arith.divf %y, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minnumf %a, %hi : tensor<4x8xf32>
  // expected-remark @below {{quantization not raised: a NaN would take the other operand's value here ('arith.minnumf'); norm.quantize propagates it (assume-no-nans or fastmath<nnan> to raise)}}
  %q = arith.truncf %b : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// Near miss, the dynamic form as torch-mlir exports it: the scale floor
// `select(s < 1e-12 (ult), 1e-12, s)` gives a NaN scale (a row holding a
// NaN or an infinity) the floor, where the op's scale is NaN: declined.
// CHECK-LABEL: func @fp8_per_token_floor_unordered
//   CHECK-NOT: norm.quantize
// NONAN-LABEL: func @fp8_per_token_floor_unordered
//       NONAN: norm.quantize %{{.*}} {min_scale = 9.99999996E-13 : f32} : (tensor<4x8xf32>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>)
func.func @fp8_per_token_floor_unordered(%y: tensor<4x8xf32>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>) {
  %zero = arith.constant dense<0.0> : tensor<4x1xf32>
  %amax = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x8xf32>) outs(%zero : tensor<4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x1xf32>
  %empty = tensor.empty() : tensor<4x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x1xf32>) outs(%empty : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %qmax = arith.constant 448.0 : f32
    %floor64 = arith.constant 1.0e-12 : f64
    %floor = arith.truncf %floor64 : f64 to f32
    %s0 = arith.divf %in, %qmax : f32
    %small = arith.cmpf ult, %s0, %floor : f32
    %s1 = arith.select %small, %floor, %s0 : f32
    linalg.yield %s1 : f32
  } -> tensor<4x1xf32>
  %init = tensor.empty() : tensor<4x8xf8E4M3FN>
  // expected-remark @below {{quantization not raised: a NaN would take the clamp's bound or the other operand here ('arith.select' on 'arith.cmpf ult'); norm.quantize propagates it (assume-no-nans or fastmath<nnan> to raise)}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %s : tensor<4x8xf32>, tensor<4x1xf32>) outs(%init : tensor<4x8xf8E4M3FN>) {
  ^bb0(%in: f32, %sc: f32, %out: f8E4M3FN):
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v = arith.divf %in, %sc : f32
    %a = arith.maximumf %v, %lo : f32
    %b = arith.minimumf %a, %hi : f32
    %t = arith.truncf %b : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x8xf8E4M3FN>
  return %q, %s : tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
}
