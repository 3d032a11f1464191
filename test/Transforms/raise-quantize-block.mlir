// norm-raise on decomposed block-scaled quantizations (DESIGN section 2d),
// as test/tools/blockscale_chains.py writes them (y reshaped to
// [M, N/G, G], amax = max |y| per group, the exponent or the NVFP4 scale,
// the conversion): the exact forms become one norm.quantize on y [M, N]
// whose q is split back to the chain's [M, K, G]; the chains' own scale
// codes are replaced by the op's. Near misses stay, each with one remark.
// python/tests/test_blockscale_raise.py runs the raised forms against the
// chains' op-by-op evaluation.
// RUN: norm-opt %s -split-input-file -norm-raise | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-raise=remarks=true -verify-diagnostics -o /dev/null

// MXFP8, floor rounding: bf16 y, static rows, X =
// clamp(floor(log2(f64(amax))) - 8, -127, 127), y / 2^X through the [M, K, 1]
// keepdim scales; the e8m0 scales returned are the op's.
// CHECK-LABEL: func @mxfp8_floor_bf16(
//  CHECK-SAME: %[[Y:[^:]*]]: tensor
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {group_size = 32 : i64} : (tensor<4x64xbf16>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
//       CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]]
//   CHECK-NOT: linalg.generic
//       CHECK: arith.bitcast %[[S]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp8_floor_bf16(%y: tensor<4x64xbf16>) -> (tensor<4x64xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xbf16> into tensor<4x2x32xbf16>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x32xbf16>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %x = arith.extf %in : bf16 to f32
    %a = math.absf %x : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 8.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x32xbf16>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: bf16, %f: f32, %out: f8E4M3FN):
    %x = arith.extf %in : bf16 to f32
    %v = arith.divf %x, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into tensor<4x64xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x2xi8>
}

// -----

// MXFP4, up rounding, dynamic rows: X = clamp(ceil(log2(f64(amax) / 6)),
// -127, 127), y * 2^-X.
// CHECK-LABEL: func @mxfp4_up_dynamic(
//  CHECK-SAME: %[[Y:[^:]*]]: tensor
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<?x64xf32>) -> (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>)
//       CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]]
//   CHECK-NOT: linalg.generic
//       CHECK: arith.bitcast %[[S]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp4_up_dynamic(%y: tensor<?x64xf32>) -> (tensor<?x64xi8>, tensor<?x2xi8>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %y, %c0 : tensor<?x64xf32>
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [%m, 2, 32] : tensor<?x64xf32> into tensor<?x2x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty(%m) : tensor<?x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x2xf32>) -> tensor<?x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<?x2x32xf32>) outs(%init : tensor<?x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %xs_e = tensor.empty(%m) : tensor<?x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<?x2xf32>) outs(%xs_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %qm = arith.constant 6.0 : f64
    %dq = arith.divf %d, %qm : f64
    %l = math.log2 %dq : f64
    %xe = math.ceil %l : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<?x2xf32>
  %pow_e = tensor.empty(%m) : tensor<?x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<?x2xf32>) outs(%pow_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<?x2xf32>
  %mult_e = tensor.empty(%m) : tensor<?x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<?x2xf32>) outs(%mult_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %p = math.exp2 %n : f32
    linalg.yield %p : f32
  } -> tensor<?x2xf32>
  %s_e = tensor.empty(%m) : tensor<?x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<?x2xf32>) outs(%s_e : tensor<?x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<?x2xf8E8M0FNU>
  %q0 = tensor.empty(%m) : tensor<?x2x32xf4E2M1FN>
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<?x2x32xf32>, tensor<?x2xf32>) outs(%q0 : tensor<?x2x32xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.mulf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<?x2x32xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<?x2x32xf4E2M1FN> into tensor<?x64xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<?x64xf4E2M1FN> to tensor<?x64xi4>
  %qc = arith.extui %q4 : tensor<?x64xi4> to tensor<?x64xi8>
  %sc = arith.bitcast %s : tensor<?x2xf8E8M0FNU> to tensor<?x2xi8>
  return %qc, %sc : tensor<?x64xi8>, tensor<?x2xi8>
}

// -----

// FP8 with 1x128 groups (the MXFP8 rule with G = 128), floor rounding.
// CHECK-LABEL: func @fp8_1x128_floor(
//  CHECK-SAME: %[[Y:[^:]*]]: tensor
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {group_size = 128 : i64} : (tensor<2x256xf32>) -> (tensor<2x256xf8E4M3FN>, tensor<2x2xf8E8M0FNU>)
//       CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]]
//   CHECK-NOT: linalg.generic
//       CHECK: arith.bitcast %[[S]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @fp8_1x128_floor(%y: tensor<2x256xf32>) -> (tensor<2x256xi8>, tensor<2x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [2, 2, 128] : tensor<2x256xf32> into tensor<2x2x128xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<2x2x128xf32>) outs(%init : tensor<2x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  %xs_e = tensor.empty() : tensor<2x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<2x2xf32>) outs(%xs_e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 8.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<2x2xf32>
  %pow_e = tensor.empty() : tensor<2x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<2x2xf32>) outs(%pow_e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<2x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [2, 2, 1] : tensor<2x2xf32> into tensor<2x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<2x2x1xf32> into tensor<2x2xf32>
  %s_e = tensor.empty() : tensor<2x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<2x2xf32>) outs(%s_e : tensor<2x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<2x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<2x2x128xf8E4M3FN>
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<2x2x128xf32>, tensor<2x2xf32>) outs(%q0 : tensor<2x2x128xf8E4M3FN>) {
  ^bb0(%in: f32, %f: f32, %out: f8E4M3FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<2x2x128xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<2x2x128xf8E4M3FN> into tensor<2x256xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<2x256xf8E4M3FN> to tensor<2x256xi8>
  %sc = arith.bitcast %s : tensor<2x2xf8E8M0FNU> to tensor<2x2xi8>
  return %qc, %sc : tensor<2x256xi8>, tensor<2x2xi8>
}

// -----

// FP8 1x128, up rounding, bf16 y, dynamic rows.
// CHECK-LABEL: func @fp8_1x128_up_dynamic_bf16(
//  CHECK-SAME: %[[Y:[^:]*]]: tensor
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] {group_size = 128 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
//       CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]]
//   CHECK-NOT: linalg.generic
//       CHECK: arith.bitcast %[[S]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @fp8_1x128_up_dynamic_bf16(%y: tensor<?x256xbf16>) -> (tensor<?x256xi8>, tensor<?x2xi8>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %y, %c0 : tensor<?x256xbf16>
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [%m, 2, 128] : tensor<?x256xbf16> into tensor<?x2x128xbf16>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty(%m) : tensor<?x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x2xf32>) -> tensor<?x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<?x2x128xbf16>) outs(%init : tensor<?x2xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %x = arith.extf %in : bf16 to f32
    %a = math.absf %x : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %xs_e = tensor.empty(%m) : tensor<?x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<?x2xf32>) outs(%xs_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %qm = arith.constant 448.0 : f64
    %dq = arith.divf %d, %qm : f64
    %l = math.log2 %dq : f64
    %xe = math.ceil %l : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<?x2xf32>
  %pow_e = tensor.empty(%m) : tensor<?x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<?x2xf32>) outs(%pow_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<?x2xf32>
  %mult_e = tensor.empty(%m) : tensor<?x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<?x2xf32>) outs(%mult_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %p = math.exp2 %n : f32
    linalg.yield %p : f32
  } -> tensor<?x2xf32>
  %s_e = tensor.empty(%m) : tensor<?x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<?x2xf32>) outs(%s_e : tensor<?x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<?x2xf8E8M0FNU>
  %q0 = tensor.empty(%m) : tensor<?x2x128xf8E4M3FN>
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<?x2x128xbf16>, tensor<?x2xf32>) outs(%q0 : tensor<?x2x128xf8E4M3FN>) {
  ^bb0(%in: bf16, %f: f32, %out: f8E4M3FN):
    %x = arith.extf %in : bf16 to f32
    %v = arith.mulf %x, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<?x2x128xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<?x2x128xf8E4M3FN> into tensor<?x256xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<?x256xf8E4M3FN> to tensor<?x256xi8>
  %sc = arith.bitcast %s : tensor<?x2xf8E8M0FNU> to tensor<?x2xi8>
  return %qc, %sc : tensor<?x256xi8>, tensor<?x2xi8>
}

// -----

// NVFP4, dynamic rows: sf = e4m3(clamp(g * (amax / 6), -448, 448)), y * ((sf
// == 0) ? 0 : g / sf), the global scale a tensor<f32> argument; the e4m3
// scales returned are the op's.
// CHECK-LABEL: func @nvfp4_dynamic(
//  CHECK-SAME: %[[Y:[^:]*]]: tensor
//  CHECK-SAME: %[[G:[^:]*]]: tensor<f32>
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] global_scale(%[[G]]) {group_size = 16 : i64} : (tensor<?x32xf32>, tensor<f32>) -> (tensor<?x32xf4E2M1FN>, tensor<?x2xf8E4M3FN>)
//       CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]]
//   CHECK-NOT: linalg.generic
//       CHECK: arith.bitcast %[[S]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @nvfp4_dynamic(%y: tensor<?x32xf32>, %g: tensor<f32>) -> (tensor<?x32xi8>, tensor<?x2xi8>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %y, %c0 : tensor<?x32xf32>
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [%m, 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty(%m) : tensor<?x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x2xf32>) -> tensor<?x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<?x2x16xf32>) outs(%init : tensor<?x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %gb_e = tensor.empty(%m) : tensor<?x2xf32>
  %gb = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<f32>) outs(%gb_e : tensor<?x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x2xf32>
  %sf_e = tensor.empty(%m) : tensor<?x2xf8E4M3FN>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax, %gb : tensor<?x2xf32>, tensor<?x2xf32>) outs(%sf_e : tensor<?x2xf8E4M3FN>) {
  ^bb0(%in: f32, %gv: f32, %out: f8E4M3FN):
    %six = arith.constant 6.0 : f32
    %d = arith.divf %in, %six : f32
    %p = arith.mulf %gv, %d : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %p1 = arith.maximumf %p, %lo : f32
    %p2 = arith.minimumf %p1, %hi : f32
    %t = arith.truncf %p2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<?x2xf8E4M3FN>
  %mult_e = tensor.empty(%m) : tensor<?x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s, %gb : tensor<?x2xf8E4M3FN>, tensor<?x2xf32>) outs(%mult_e : tensor<?x2xf32>) {
  ^bb0(%in: f8E4M3FN, %gv: f32, %out: f32):
    %sf = arith.extf %in : f8E4M3FN to f32
    %z = arith.constant 0.0 : f32
    %o = arith.divf %gv, %sf : f32
    %isz = arith.cmpf oeq, %sf, %z : f32
    %r = arith.select %isz, %z, %o : f32
    linalg.yield %r : f32
  } -> tensor<?x2xf32>
  %q0 = tensor.empty(%m) : tensor<?x2x16xf4E2M1FN>
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<?x2x16xf32>, tensor<?x2xf32>) outs(%q0 : tensor<?x2x16xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.mulf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<?x2x16xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<?x2x16xf4E2M1FN> into tensor<?x32xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<?x32xf4E2M1FN> to tensor<?x32xi4>
  %qc = arith.extui %q4 : tensor<?x32xi4> to tensor<?x32xi8>
  %sc = arith.bitcast %s : tensor<?x2xf8E4M3FN> to tensor<?x2xi8>
  return %qc, %sc : tensor<?x32xi8>, tensor<?x2xi8>
}

// -----

// NVFP4, bf16 y, static rows.
// CHECK-LABEL: func @nvfp4_bf16(
//  CHECK-SAME: %[[Y:[^:]*]]: tensor
//  CHECK-SAME: %[[G:[^:]*]]: tensor<f32>
//   CHECK-NOT: linalg.generic
//       CHECK: %[[Q:.*]], %[[S:.*]] = norm.quantize %[[Y]] global_scale(%[[G]]) {group_size = 16 : i64} : (tensor<4x32xbf16>, tensor<f32>) -> (tensor<4x32xf4E2M1FN>, tensor<4x2xf8E4M3FN>)
//       CHECK: tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2]]
//   CHECK-NOT: linalg.generic
//       CHECK: arith.bitcast %[[S]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @nvfp4_bf16(%y: tensor<4x32xbf16>, %g: tensor<f32>) -> (tensor<4x32xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xbf16> into tensor<4x2x16xbf16>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x16xbf16>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %x = arith.extf %in : bf16 to f32
    %a = math.absf %x : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %gb_e = tensor.empty() : tensor<4x2xf32>
  %gb = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<f32>) outs(%gb_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x2xf32>
  %sf_e = tensor.empty() : tensor<4x2xf8E4M3FN>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax, %gb : tensor<4x2xf32>, tensor<4x2xf32>) outs(%sf_e : tensor<4x2xf8E4M3FN>) {
  ^bb0(%in: f32, %gv: f32, %out: f8E4M3FN):
    %six = arith.constant 6.0 : f32
    %d = arith.divf %in, %six : f32
    %p = arith.mulf %gv, %d : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %p1 = arith.maximumf %p, %lo : f32
    %p2 = arith.minimumf %p1, %hi : f32
    %t = arith.truncf %p2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2xf8E4M3FN>
  %mult_e = tensor.empty() : tensor<4x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s, %gb : tensor<4x2xf8E4M3FN>, tensor<4x2xf32>) outs(%mult_e : tensor<4x2xf32>) {
  ^bb0(%in: f8E4M3FN, %gv: f32, %out: f32):
    %sf = arith.extf %in : f8E4M3FN to f32
    %z = arith.constant 0.0 : f32
    %o = arith.divf %gv, %sf : f32
    %isz = arith.cmpf oeq, %sf, %z : f32
    %r = arith.select %isz, %z, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %q0 = tensor.empty() : tensor<4x2x16xf4E2M1FN>
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x16xbf16>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x16xf4E2M1FN>) {
  ^bb0(%in: bf16, %f: f32, %out: f4E2M1FN):
    %x = arith.extf %in : bf16 to f32
    %v = arith.mulf %x, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<4x2x16xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x16xf4E2M1FN> into tensor<4x32xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<4x32xf4E2M1FN> to tensor<4x32xi4>
  %qc = arith.extui %q4 : tensor<4x32xi4> to tensor<4x32xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E4M3FN> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x32xi8>, tensor<4x2xi8>
}

// -----

// Near miss: log2 in f32 (its floor is off by one just below a power of two).
// CHECK-LABEL: func @mxfp8_log2_f32(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp8_log2_f32(%y: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xf32> into tensor<4x2x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x32xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %l = math.log2 %in : f32
    %fl = math.floor %l : f32
    %em = arith.constant 8.0 : f32
    %xe = arith.subf %fl, %em : f32
    %xlo = arith.constant -127.0 : f32
    %xhi = arith.constant 127.0 : f32
    %x1 = arith.maximumf %xe, %xlo : f32
    %x2 = arith.minimumf %x1, %xhi : f32
    linalg.yield %x2 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @+1 {{log2 is computed in f32: rounded, it gives 2^k for values just below 2^k}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x32xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %f: f32, %out: f8E4M3FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into tensor<4x64xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x2xi8>
}

// -----

// Near miss: floor(log2(amax)) - 1 for e2m1 (emax is 2).
// CHECK-LABEL: func @mxfp4_emax(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp4_emax(%y: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xf32> into tensor<4x2x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x32xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 1.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x32xf4E2M1FN>
  // expected-remark @+1 {{the scale exponent subtracts 1 from floor(log2(max |y|)), not emax = 2 of f4E2M1FN}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x32xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x32xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<4x2x32xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x32xf4E2M1FN> into tensor<4x64xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<4x64xf4E2M1FN> to tensor<4x64xi4>
  %qc = arith.extui %q4 : tensor<4x64xi4> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x2xi8>
}

// -----

// Near miss: the elements clamped to [-224, 448].
// CHECK-LABEL: func @mxfp8_clamp_q(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp8_clamp_q(%y: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xf32> into tensor<4x2x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x32xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 8.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @+1 {{the value converted to f8E4M3FN is clamped to [-224, 448], not to [-448, 448]}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x32xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %f: f32, %out: f8E4M3FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -224.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into tensor<4x64xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x2xi8>
}

// -----

// Near miss: the exponent not clamped from above.
// CHECK-LABEL: func @mxfp8_clamp_x_below(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp8_clamp_x_below(%y: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xf32> into tensor<4x2x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x32xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 8.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x32 = arith.truncf %x1 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @+1 {{the scale exponent is clamped only from below, not to [-127, 127]}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x32xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %f: f32, %out: f8E4M3FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into tensor<4x64xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x2xi8>
}

// -----

// Near miss: the exponent clamped by maxnumf, which turns a NaN amax into
// -127.
// CHECK-LABEL: func @mxfp8_maxnum_x(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp8_maxnum_x(%y: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 32] : tensor<4x64xf32> into tensor<4x2x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x32xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 8.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maxnumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x32xf8E4M3FN>
  // expected-remark @+1 {{a NaN would take the other operand's value here ('arith.maxnumf')}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x32xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x32xf8E4M3FN>) {
  ^bb0(%in: f32, %f: f32, %out: f8E4M3FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x32xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x32xf8E4M3FN> into tensor<4x64xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<4x64xf8E4M3FN> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x2xi8>
}

// -----

// Near miss: the NVFP4 scale as (g * amax) / 6 (rounds differently).
// CHECK-LABEL: func @nvfp4_nv_order(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @nvfp4_nv_order(%y: tensor<4x32xf32>, %g: tensor<f32>) -> (tensor<4x32xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x16xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %gb_e = tensor.empty() : tensor<4x2xf32>
  %gb = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<f32>) outs(%gb_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x2xf32>
  %sf_e = tensor.empty() : tensor<4x2xf8E4M3FN>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax, %gb : tensor<4x2xf32>, tensor<4x2xf32>) outs(%sf_e : tensor<4x2xf8E4M3FN>) {
  ^bb0(%in: f32, %gv: f32, %out: f8E4M3FN):
    %six = arith.constant 6.0 : f32
    %ga = arith.mulf %gv, %in : f32
    %p = arith.divf %ga, %six : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %p1 = arith.maximumf %p, %lo : f32
    %p2 = arith.minimumf %p1, %hi : f32
    %t = arith.truncf %p2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2xf8E4M3FN>
  %mult_e = tensor.empty() : tensor<4x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s, %gb : tensor<4x2xf8E4M3FN>, tensor<4x2xf32>) outs(%mult_e : tensor<4x2xf32>) {
  ^bb0(%in: f8E4M3FN, %gv: f32, %out: f32):
    %sf = arith.extf %in : f8E4M3FN to f32
    %z = arith.constant 0.0 : f32
    %o = arith.divf %gv, %sf : f32
    %isz = arith.cmpf oeq, %sf, %z : f32
    %r = arith.select %isz, %z, %o : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %q0 = tensor.empty() : tensor<4x2x16xf4E2M1FN>
  // expected-remark @+1 {{the NVFP4 scale is not g * (amax / 6) with the g of g / sf}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x16xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x16xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.mulf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<4x2x16xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x16xf4E2M1FN> into tensor<4x32xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<4x32xf4E2M1FN> to tensor<4x32xi4>
  %qc = arith.extui %q4 : tensor<4x32xi4> to tensor<4x32xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E4M3FN> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x32xi8>, tensor<4x2xi8>
}

// -----

// Near miss: g / sf without the zero test (a zero scale gives inf, not 0).
// CHECK-LABEL: func @nvfp4_nv_no_select(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @nvfp4_nv_no_select(%y: tensor<4x32xf32>, %g: tensor<f32>) -> (tensor<4x32xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x16xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %gb_e = tensor.empty() : tensor<4x2xf32>
  %gb = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<f32>) outs(%gb_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x2xf32>
  %sf_e = tensor.empty() : tensor<4x2xf8E4M3FN>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax, %gb : tensor<4x2xf32>, tensor<4x2xf32>) outs(%sf_e : tensor<4x2xf8E4M3FN>) {
  ^bb0(%in: f32, %gv: f32, %out: f8E4M3FN):
    %six = arith.constant 6.0 : f32
    %d = arith.divf %in, %six : f32
    %p = arith.mulf %gv, %d : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %p1 = arith.maximumf %p, %lo : f32
    %p2 = arith.minimumf %p1, %hi : f32
    %t = arith.truncf %p2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2xf8E4M3FN>
  %mult_e = tensor.empty() : tensor<4x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s, %gb : tensor<4x2xf8E4M3FN>, tensor<4x2xf32>) outs(%mult_e : tensor<4x2xf32>) {
  ^bb0(%in: f8E4M3FN, %gv: f32, %out: f32):
    %sf = arith.extf %in : f8E4M3FN to f32
    %z = arith.constant 0.0 : f32
    %o = arith.divf %gv, %sf : f32
    linalg.yield %o : f32
  } -> tensor<4x2xf32>
  %q0 = tensor.empty() : tensor<4x2x16xf4E2M1FN>
  // expected-remark @+1 {{groups of 16 f4E2M1FN elements without the NVFP4 multiplier}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x16xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x16xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.mulf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<4x2x16xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x16xf4E2M1FN> into tensor<4x32xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<4x32xf4E2M1FN> to tensor<4x32xi4>
  %qc = arith.extui %q4 : tensor<4x32xi4> to tensor<4x32xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E4M3FN> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x32xi8>, tensor<4x2xi8>
}

// -----

// Near miss: the zero test with cmpf one, which picks 0 for a NaN scale.
// CHECK-LABEL: func @nvfp4_nv_select_one(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @nvfp4_nv_select_one(%y: tensor<4x32xf32>, %g: tensor<f32>) -> (tensor<4x32xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x16xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %gb_e = tensor.empty() : tensor<4x2xf32>
  %gb = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<f32>) outs(%gb_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x2xf32>
  %sf_e = tensor.empty() : tensor<4x2xf8E4M3FN>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax, %gb : tensor<4x2xf32>, tensor<4x2xf32>) outs(%sf_e : tensor<4x2xf8E4M3FN>) {
  ^bb0(%in: f32, %gv: f32, %out: f8E4M3FN):
    %six = arith.constant 6.0 : f32
    %d = arith.divf %in, %six : f32
    %p = arith.mulf %gv, %d : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %p1 = arith.maximumf %p, %lo : f32
    %p2 = arith.minimumf %p1, %hi : f32
    %t = arith.truncf %p2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2xf8E4M3FN>
  %mult_e = tensor.empty() : tensor<4x2xf32>
  %mult = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s, %gb : tensor<4x2xf8E4M3FN>, tensor<4x2xf32>) outs(%mult_e : tensor<4x2xf32>) {
  ^bb0(%in: f8E4M3FN, %gv: f32, %out: f32):
    %sf = arith.extf %in : f8E4M3FN to f32
    %z = arith.constant 0.0 : f32
    %o = arith.divf %gv, %sf : f32
    %nz = arith.cmpf one, %sf, %z : f32
    %r = arith.select %nz, %o, %z : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %q0 = tensor.empty() : tensor<4x2x16xf4E2M1FN>
  // expected-remark @+1 {{groups of 16 f4E2M1FN elements without the NVFP4 multiplier}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x16xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x16xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.mulf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<4x2x16xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x16xf4E2M1FN> into tensor<4x32xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<4x32xf4E2M1FN> to tensor<4x32xi4>
  %qc = arith.extui %q4 : tensor<4x32xi4> to tensor<4x32xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E4M3FN> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x32xi8>, tensor<4x2xi8>
}

// -----

// Near miss: MXFP8 chain with groups of 64.
// CHECK-LABEL: func @mxfp8_group_64(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp8_group_64(%y: tensor<4x128xf32>) -> (tensor<4x128xi8>, tensor<4x2xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 2, 64] : tensor<4x128xf32> into tensor<4x2x64xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x2x64xf32>) outs(%init : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %xs_e = tensor.empty() : tensor<4x2xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x2xf32>) outs(%xs_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 8.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x2xf32>
  %pow_e = tensor.empty() : tensor<4x2xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x2xf32>) outs(%pow_e : tensor<4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x2xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 2, 1] : tensor<4x2xf32> into tensor<4x2x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x2x1xf32> into tensor<4x2xf32>
  %s_e = tensor.empty() : tensor<4x2xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x2xf32>) outs(%s_e : tensor<4x2xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x2xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x2x64xf8E4M3FN>
  // expected-remark @+1 {{MX groups of 64 elements; MXFP8 (or FP8 1x128) takes groups of 32 or 128}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x2x64xf32>, tensor<4x2xf32>) outs(%q0 : tensor<4x2x64xf8E4M3FN>) {
  ^bb0(%in: f32, %f: f32, %out: f8E4M3FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x64xf8E4M3FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x2x64xf8E4M3FN> into tensor<4x128xf8E4M3FN>
  %qc = arith.bitcast %q : tensor<4x128xf8E4M3FN> to tensor<4x128xi8>
  %sc = arith.bitcast %s : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
  return %qc, %sc : tensor<4x128xi8>, tensor<4x2xi8>
}

// -----

// Near miss: MXFP4 chain with groups of 16.
// CHECK-LABEL: func @mxfp4_group_16(
//   CHECK-NOT: norm.quantize
//       CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @mxfp4_group_16(%y: tensor<4x64xf32>) -> (tensor<4x64xi8>, tensor<4x4xi8>) {
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 4, 16] : tensor<4x64xf32> into tensor<4x4x16xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %amax = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y3 : tensor<4x4x16xf32>) outs(%init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = math.absf %in : f32
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %xs_e = tensor.empty() : tensor<4x4xf32>
  %xs = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%amax : tensor<4x4xf32>) outs(%xs_e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.extf %in : f32 to f64
    %l = math.log2 %d : f64
    %fl = math.floor %l : f64
    %em = arith.constant 2.0 : f64
    %xe = arith.subf %fl, %em : f64
    %xlo = arith.constant -127.0 : f64
    %xhi = arith.constant 127.0 : f64
    %x1 = arith.maximumf %xe, %xlo : f64
    %x2 = arith.minimumf %x1, %xhi : f64
    %x32 = arith.truncf %x2 : f64 to f32
    linalg.yield %x32 : f32
  } -> tensor<4x4xf32>
  %pow_e = tensor.empty() : tensor<4x4xf32>
  %pow = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : tensor<4x4xf32>) outs(%pow_e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.exp2 %in : f32
    linalg.yield %p : f32
  } -> tensor<4x4xf32>
  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] output_shape [4, 4, 1] : tensor<4x4xf32> into tensor<4x4x1xf32>
  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] : tensor<4x4x1xf32> into tensor<4x4xf32>
  %s_e = tensor.empty() : tensor<4x4xf8E8M0FNU>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pow : tensor<4x4xf32>) outs(%s_e : tensor<4x4xf8E8M0FNU>) {
  ^bb0(%in: f32, %out: f8E8M0FNU):
    %t = arith.truncf %in : f32 to f8E8M0FNU
    linalg.yield %t : f8E8M0FNU
  } -> tensor<4x4xf8E8M0FNU>
  %q0 = tensor.empty() : tensor<4x4x16xf4E2M1FN>
  // expected-remark @+1 {{groups of 16 f4E2M1FN elements without the NVFP4 multiplier}}
  %q3 = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y3, %mult : tensor<4x4x16xf32>, tensor<4x4xf32>) outs(%q0 : tensor<4x4x16xf4E2M1FN>) {
  ^bb0(%in: f32, %f: f32, %out: f4E2M1FN):
    %v = arith.divf %in, %f : f32
    %lo = arith.constant -6.0 : f32
    %hi = arith.constant 6.0 : f32
    %v1 = arith.maximumf %v, %lo : f32
    %v2 = arith.minimumf %v1, %hi : f32
    %t = arith.truncf %v2 : f32 to f4E2M1FN
    linalg.yield %t : f4E2M1FN
  } -> tensor<4x4x16xf4E2M1FN>
  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : tensor<4x4x16xf4E2M1FN> into tensor<4x64xf4E2M1FN>
  %q4 = arith.bitcast %q : tensor<4x64xf4E2M1FN> to tensor<4x64xi4>
  %qc = arith.extui %q4 : tensor<4x64xi4> to tensor<4x64xi8>
  %sc = arith.bitcast %s : tensor<4x4xf8E8M0FNU> to tensor<4x4xi8>
  return %qc, %sc : tensor<4x64xi8>, tensor<4x4xi8>
}

