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
