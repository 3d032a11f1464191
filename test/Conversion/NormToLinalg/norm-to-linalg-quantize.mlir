// RUN: norm-opt %s -norm-to-linalg -split-input-file | FileCheck %s

// Static: the reciprocal of the scale once, then one elementwise op that
// converts with integer ops and bitcasts the i8 bits to f8E4M3FN.
// CHECK-LABEL: func @static_fp8
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x64xbf16>, %[[S:.*]]: tensor<1xf32>)
//       CHECK: %[[SV:.*]] = tensor.extract %[[S]][%{{.*}}] : tensor<1xf32>
//       CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[SV]] : f32
//       CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<?x64xbf16>) outs(%{{.*}} : tensor<?x64xf8E4M3FN>)
//       CHECK:   %[[V:.*]] = arith.mulf %{{.*}}, %[[INV]] : f32
//       CHECK:   arith.bitcast %[[V]] : f32 to i32
//       CHECK:   arith.minui
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : f32
//       CHECK:   %[[BITS:.*]] = arith.trunci %{{.*}} : i32 to i8
//       CHECK:   %[[F8:.*]] = arith.bitcast %[[BITS]] : i8 to f8E4M3FN
//       CHECK:   linalg.yield %[[F8]] : f8E4M3FN
//       CHECK: return %[[Q]]
func.func @static_fp8(%y: tensor<?x64xbf16>, %s: tensor<1xf32>) -> tensor<?x64xf8E4M3FN> {
  %q = norm.quantize %y scale(%s) : (tensor<?x64xbf16>, tensor<1xf32>) -> tensor<?x64xf8E4M3FN>
  return %q : tensor<?x64xf8E4M3FN>
}

// -----

// Groups: the input is viewed as [rows, N / G, G]; max |y| per group, the
// scales, their reciprocals, the conversion; q is collapsed back.
// CHECK-LABEL: func @group_int8
//       CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 2, 128] : tensor<?x256xf16> into tensor<?x2x128xf16>
//       CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<?x2x128xf16>) outs(%{{.*}} : tensor<?x2xf32>)
//       CHECK:   math.absf
//       CHECK:   arith.maximumf
//       CHECK: %[[SC:.*]] = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<?x2xf32>)
//       CHECK:   arith.divf %{{.*}}, %{{.*}} : f32
//       CHECK:   arith.maximumf
//       CHECK: %[[INV:.*]] = linalg.generic {{.*}} ins(%[[SC]] : tensor<?x2xf32>)
//       CHECK: %[[QG:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[INV]] : tensor<?x2x128xf16>, tensor<?x2xf32>) outs(%{{.*}} : tensor<?x2x128xi8>)
//       CHECK:   math.roundeven
//       CHECK:   arith.cmpf uno
//       CHECK:   arith.fptosi %{{.*}} : f32 to i8
//       CHECK: %[[Q:.*]] = tensor.collapse_shape %[[QG]] {{\[}}[0], [1, 2]] : tensor<?x2x128xi8> into tensor<?x256xi8>
//       CHECK: return %[[Q]], %[[SC]]
func.func @group_int8(%y: tensor<?x256xf16>) -> (tensor<?x256xi8>, tensor<?x2xf32>) {
  %q, %sc = norm.quantize %y {group_size = 128 : i64, min_scale = 1.0e-3 : f32} : (tensor<?x256xf16>) -> (tensor<?x256xi8>, tensor<?x2xf32>)
  return %q, %sc : tensor<?x256xi8>, tensor<?x2xf32>
}

// -----

// Per token over a dynamic row length: one group of the whole row.
// CHECK-LABEL: func @per_token_dynamic_row
//       CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, %{{.*}}, 1, %{{.*}}] : tensor<2x?x?xf32> into tensor<2x?x1x?xf32>
//       CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]]
func.func @per_token_dynamic_row(%y: tensor<2x?x?xf32>) -> (tensor<2x?x?xf8E4M3FN>, tensor<2x?x1xf32>) {
  %q, %sc = norm.quantize %y : (tensor<2x?x?xf32>) -> (tensor<2x?x?xf8E4M3FN>, tensor<2x?x1xf32>)
  return %q, %sc : tensor<2x?x?xf8E4M3FN>, tensor<2x?x1xf32>
}

// -----

// MXFP4: max |y| per group of 32, then one op computing the E8M0 code
// (the f32 exponent minus emax = 2, plus one when `up` and the significand
// is above 1.5, clamped to [0, 254], 255 for NaN) and the multiplier 2^-X;
// the elements are scaled and encoded to e2m1 (4-bit codes).
// CHECK-LABEL: func @mxfp4_up
//       CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 2, 32] : tensor<?x64xbf16> into tensor<?x2x32xbf16>
//       CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<?x2x32xbf16>) outs(%{{.*}} : tensor<?x2xf32>)
//       CHECK: %[[SC:.*]]:2 = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<?x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<?x2xf8E8M0FNU>, tensor<?x2xf32>)
//       CHECK:   arith.shrui %{{.*}}, %{{.*}} : i32
//       CHECK:   arith.subi
//       CHECK:   arith.cmpi ugt
//       CHECK:   arith.maxsi
//       CHECK:   arith.minsi
//       CHECK:   arith.shli
//       CHECK:   arith.trunci %{{.*}} : i32 to i8
//       CHECK:   %[[S8:.*]] = arith.bitcast %{{.*}} : i8 to f8E8M0FNU
//       CHECK:   linalg.yield %[[S8]], %{{.*}} : f8E8M0FNU, f32
//       CHECK: %[[QG:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[SC]]#1 : tensor<?x2x32xbf16>, tensor<?x2xf32>) outs(%{{.*}} : tensor<?x2x32xf4E2M1FN>)
//       CHECK:   arith.mulf
//       CHECK:   arith.minui
//       CHECK:   arith.addf
//       CHECK:   arith.trunci %{{.*}} : i8 to i4
//       CHECK:   %[[F4:.*]] = arith.bitcast %{{.*}} : i4 to f4E2M1FN
//       CHECK:   linalg.yield %[[F4]] : f4E2M1FN
//       CHECK: %[[Q:.*]] = tensor.collapse_shape %[[QG]] {{\[}}[0], [1, 2]] : tensor<?x2x32xf4E2M1FN> into tensor<?x64xf4E2M1FN>
//       CHECK: return %[[Q]], %[[SC]]#0
func.func @mxfp4_up(%y: tensor<?x64xbf16>) -> (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<?x64xbf16>) -> (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>)
  return %q, %s : tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>
}

// -----

// NVFP4 with swizzled scales: the global scale read once; per group
// sf = e4m3(g * (amax / 6)) and out = g / sf (0 when sf is 0); the scales
// (as bytes) padded to [128, 4], viewed as [1, 4, 32, 1, 4], transposed to
// [m0, k0, m2, m1, k1] and flattened.
// CHECK-LABEL: func @nvfp4_swizzled
//  CHECK-SAME: (%[[Y:.*]]: tensor<5x32xf16>, %[[G:.*]]: tensor<1xf32>)
//       CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<5x2xf32>)
//       CHECK: %[[GV:.*]] = tensor.extract %[[G]][%{{.*}}] : tensor<1xf32>
//       CHECK: %[[SC:.*]]:2 = linalg.generic {{.*}} ins(%[[AMAX]] : tensor<5x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<5x2xf8E4M3FN>, tensor<5x2xf32>)
//       CHECK:   %[[D:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
//       CHECK:   arith.mulf %[[GV]], %[[D]] : f32
//       CHECK:   arith.cmpf oeq
//       CHECK:   arith.divf %[[GV]], %{{.*}} : f32
//       CHECK:   arith.bitcast %{{.*}} : i8 to f8E4M3FN
//       CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x2x16xf4E2M1FN>)
//       CHECK: %[[B:.*]] = arith.bitcast %[[SC]]#0 : tensor<5x2xf8E4M3FN> to tensor<5x2xi8>
//       CHECK: %[[P:.*]] = tensor.pad %[[B]] low[0, 0] high[123, 2]
//       CHECK: } : tensor<5x2xi8> to tensor<128x4xi8>
//       CHECK: %[[T:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1, 2], [3, 4]] output_shape [1, 4, 32, 1, 4] : tensor<128x4xi8> into tensor<1x4x32x1x4xi8>
//       CHECK: %[[TR:.*]] = linalg.transpose ins(%[[T]] : tensor<1x4x32x1x4xi8>) outs(%{{.*}} : tensor<1x1x32x4x4xi8>) permutation = [0, 3, 2, 1, 4]
//       CHECK: %[[F:.*]] = tensor.collapse_shape %[[TR]] {{\[}}[0, 1, 2, 3, 4]] : tensor<1x1x32x4x4xi8> into tensor<512xi8>
//       CHECK: %[[S:.*]] = arith.bitcast %[[F]] : tensor<512xi8> to tensor<512xf8E4M3FN>
//       CHECK: return %{{.*}}, %[[S]]
func.func @nvfp4_swizzled(%y: tensor<5x32xf16>, %g: tensor<1xf32>) -> (tensor<5x32xf4E2M1FN>, tensor<512xf8E4M3FN>) {
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<5x32xf16>, tensor<1xf32>) -> (tensor<5x32xf4E2M1FN>, tensor<512xf8E4M3FN>)
  return %q, %s : tensor<5x32xf4E2M1FN>, tensor<512xf8E4M3FN>
}

// -----

// Dynamic rows in the swizzled layout: the padding and the tile count come
// from the row count at run time; the scales have a dynamic size.
// CHECK-LABEL: func @mxfp8_swizzled_dynamic
//       CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x3x4xi8> into tensor<?x4xi8>
//       CHECK: %[[M:.*]] = tensor.dim %[[C]], %{{.*}} : tensor<?x4xi8>
//       CHECK: tensor.pad %[[C]] low[0, 0] high[%{{.*}}, 0]
//       CHECK: } : tensor<?x4xi8> to tensor<?x4xi8>
//       CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4]] output_shape [%{{.*}}, 4, 32, 1, 4] : tensor<?x4xi8> into tensor<?x4x32x1x4xi8>
//       CHECK: linalg.transpose
//       CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3, 4]] : tensor<?x1x32x4x4xi8> into tensor<?xi8>
//       CHECK: arith.bitcast %{{.*}} : tensor<?xi8> to tensor<?xf8E8M0FNU>
func.func @mxfp8_swizzled_dynamic(%y: tensor<?x3x128xf32>) -> (tensor<?x3x128xf8E4M3FN>, tensor<?xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x3x128xf32>) -> (tensor<?x3x128xf8E4M3FN>, tensor<?xf8E8M0FNU>)
  return %q, %s : tensor<?x3x128xf8E4M3FN>, tensor<?xf8E8M0FNU>
}
