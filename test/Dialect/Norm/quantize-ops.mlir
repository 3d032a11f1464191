// RUN: norm-opt %s | norm-opt | FileCheck %s
// RUN: norm-opt %s -mlir-print-op-generic | norm-opt | FileCheck %s
// RUN: norm-opt %s | norm-opt -mlir-print-op-generic | norm-opt -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The three forms of the design: static, per token, per group.

// CHECK-LABEL: func @quantize_static_fp8
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x4096xbf16>, %[[S:.*]]: tensor<f32>)
//       CHECK: norm.quantize %[[Y]] scale(%[[S]]) : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
// GENERIC-LABEL: sym_name = "quantize_static_fp8"
//       GENERIC: "norm.quantize"(%{{.*}}, %{{.*}}) <{group_size = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0>, scale_layout = #norm<scale_layout row_major>, scale_rounding = #norm<scale_rounding floor>, scale_ub = 0x7F800000 : f32}> : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
func.func @quantize_static_fp8(%y: tensor<?x4096xbf16>, %s: tensor<f32>) -> tensor<?x4096xf8E4M3FN> {
  %q = norm.quantize %y scale(%s) : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
  return %q : tensor<?x4096xf8E4M3FN>
}

// CHECK-LABEL: func @quantize_per_token_int8
//       CHECK: %{{.*}}, %{{.*}} = norm.quantize %{{.*}} : (tensor<?x4096xf32>) -> (tensor<?x4096xi8>, tensor<?x1xf32>)
// GENERIC-LABEL: sym_name = "quantize_per_token_int8"
//       GENERIC: "norm.quantize"(%{{.*}}) <{group_size = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>, scale_layout = #norm<scale_layout row_major>, scale_rounding = #norm<scale_rounding floor>, scale_ub = 0x7F800000 : f32}> : (tensor<?x4096xf32>) -> (tensor<?x4096xi8>, tensor<?x1xf32>)
func.func @quantize_per_token_int8(%y: tensor<?x4096xf32>) -> (tensor<?x4096xi8>, tensor<?x1xf32>) {
  %q, %sc = norm.quantize %y : (tensor<?x4096xf32>) -> (tensor<?x4096xi8>, tensor<?x1xf32>)
  return %q, %sc : tensor<?x4096xi8>, tensor<?x1xf32>
}

// CHECK-LABEL: func @quantize_group_scale_ub
//       CHECK: norm.quantize %{{.*}} {group_size = 128 : i64, scale_ub = 1.200000e+03 : f32} : (tensor<8x4096xbf16>) -> (tensor<8x4096xf8E4M3FN>, tensor<8x32xf32>)
// GENERIC-LABEL: sym_name = "quantize_group_scale_ub"
//       GENERIC: "norm.quantize"(%{{.*}}) <{group_size = 128 : i64, operandSegmentSizes = array<i32: 1, 0, 0>, scale_layout = #norm<scale_layout row_major>, scale_rounding = #norm<scale_rounding floor>, scale_ub = 1.200000e+03 : f32}>
func.func @quantize_group_scale_ub(%y: tensor<8x4096xbf16>) -> (tensor<8x4096xf8E4M3FN>, tensor<8x32xf32>) {
  %q, %sc = norm.quantize %y {group_size = 128 : i64, scale_ub = 1.2e+03 : f32}
       : (tensor<8x4096xbf16>) -> (tensor<8x4096xf8E4M3FN>, tensor<8x32xf32>)
  return %q, %sc : tensor<8x4096xf8E4M3FN>, tensor<8x32xf32>
}

// Attributes equal to their defaults are accepted and not printed;
// min_scale (vLLM's int8 floor) is kept.
// CHECK-LABEL: func @quantize_defaults_and_min_scale
//       CHECK: norm.quantize %{{.*}} : (tensor<2x3x64xf16>) -> (tensor<2x3x64xi8>, tensor<2x3x1xf32>)
//       CHECK: norm.quantize %{{.*}} {min_scale = 1.1920929E-7 : f32} : (tensor<2x3x64xf16>) -> (tensor<2x3x64xi8>, tensor<2x3x1xf32>)
func.func @quantize_defaults_and_min_scale(%y: tensor<2x3x64xf16>) -> (tensor<2x3x64xi8>, tensor<2x3x64xi8>) {
  %q, %sc = norm.quantize %y {group_size = 0 : i64, scale_ub = 0x7F800000 : f32} : (tensor<2x3x64xf16>) -> (tensor<2x3x64xi8>, tensor<2x3x1xf32>)
  %q2, %sc2 = norm.quantize %y {min_scale = 1.1920929E-7 : f32} : (tensor<2x3x64xf16>) -> (tensor<2x3x64xi8>, tensor<2x3x1xf32>)
  return %q, %q2 : tensor<2x3x64xi8>, tensor<2x3x64xi8>
}

// A rank-1 input and a tensor<1xf32> scale.
// CHECK-LABEL: func @quantize_rank1
//       CHECK: norm.quantize %{{.*}} scale(%{{.*}}) : (tensor<64xf32>, tensor<1xf32>) -> tensor<64xi8>
func.func @quantize_rank1(%y: tensor<64xf32>, %s: tensor<1xf32>) -> tensor<64xi8> {
  %q = norm.quantize %y scale(%s) : (tensor<64xf32>, tensor<1xf32>) -> tensor<64xi8>
  return %q : tensor<64xi8>
}

// The block-scaled forms (DESIGN 2d): MXFP8, MXFP4, FP8 1x128, NVFP4, each
// scale layout.

// CHECK-LABEL: func @quantize_mxfp8
//       CHECK: norm.quantize %{{.*}} {group_size = 32 : i64} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>)
// GENERIC-LABEL: sym_name = "quantize_mxfp8"
//       GENERIC: "norm.quantize"(%{{.*}}) <{group_size = 32 : i64, operandSegmentSizes = array<i32: 1, 0, 0>, scale_layout = #norm<scale_layout row_major>, scale_rounding = #norm<scale_rounding floor>, scale_ub = 0x7F800000 : f32}>
func.func @quantize_mxfp8(%y: tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64}
       : (tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>)
  return %q, %s : tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_mxfp4_up
//       CHECK: norm.quantize %{{.*}} {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<8x4096xbf16>) -> (tensor<8x4096xf4E2M1FN>, tensor<8x128xf8E8M0FNU>)
// GENERIC-LABEL: sym_name = "quantize_mxfp4_up"
//       GENERIC: scale_rounding = #norm<scale_rounding up>
func.func @quantize_mxfp4_up(%y: tensor<8x4096xbf16>) -> (tensor<8x4096xf4E2M1FN>, tensor<8x128xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>}
       : (tensor<8x4096xbf16>) -> (tensor<8x4096xf4E2M1FN>, tensor<8x128xf8E8M0FNU>)
  return %q, %s : tensor<8x4096xf4E2M1FN>, tensor<8x128xf8E8M0FNU>
}

// CHECK-LABEL: func @quantize_nvfp4_swizzled
//  CHECK-SAME: (%[[Y:.*]]: tensor<8x4096xbf16>, %[[G:.*]]: tensor<f32>)
//       CHECK: norm.quantize %[[Y]] global_scale(%[[G]]) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<8x4096xbf16>, tensor<f32>) -> (tensor<8x4096xf4E2M1FN>, tensor<32768xf8E4M3FN>)
// GENERIC-LABEL: sym_name = "quantize_nvfp4_swizzled"
//       GENERIC: "norm.quantize"(%{{.*}}, %{{.*}}) <{group_size = 16 : i64, operandSegmentSizes = array<i32: 1, 0, 1>, scale_layout = #norm<scale_layout swizzled_128x4>
func.func @quantize_nvfp4_swizzled(%y: tensor<8x4096xbf16>, %g: tensor<f32>) -> (tensor<8x4096xf4E2M1FN>, tensor<32768xf8E4M3FN>) {
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>}
       : (tensor<8x4096xbf16>, tensor<f32>) -> (tensor<8x4096xf4E2M1FN>, tensor<32768xf8E4M3FN>)
  return %q, %s : tensor<8x4096xf4E2M1FN>, tensor<32768xf8E4M3FN>
}

// The 1x128 form with a rank-3 input: 2 * 3 = 6 rows pad to 128, 4 groups
// per row to 4. Dynamic leading dims give a dynamic swizzled size. Defaults
// written out are accepted and not printed.
// CHECK-LABEL: func @quantize_fp8_1x128
//       CHECK: norm.quantize %{{.*}} {group_size = 128 : i64, scale_layout = #norm<scale_layout swizzled_128x4>, scale_rounding = #norm<scale_rounding up>} : (tensor<2x3x512xf16>) -> (tensor<2x3x512xf8E4M3FN>, tensor<512xf8E8M0FNU>)
//       CHECK: norm.quantize %{{.*}} {group_size = 128 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x3x512xf32>) -> (tensor<?x3x512xf8E4M3FN>, tensor<?xf8E8M0FNU>)
//       CHECK: norm.quantize %{{.*}} {group_size = 128 : i64} : (tensor<?x3x512xf32>) -> (tensor<?x3x512xf8E4M3FN>, tensor<?x3x4xf8E8M0FNU>)
func.func @quantize_fp8_1x128(%y: tensor<2x3x512xf16>, %d: tensor<?x3x512xf32>) -> (tensor<512xf8E8M0FNU>, tensor<?xf8E8M0FNU>, tensor<?x3x4xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 128 : i64, scale_rounding = #norm<scale_rounding up>, scale_layout = #norm<scale_layout swizzled_128x4>}
       : (tensor<2x3x512xf16>) -> (tensor<2x3x512xf8E4M3FN>, tensor<512xf8E8M0FNU>)
  %q2, %s2 = norm.quantize %d {group_size = 128 : i64, scale_layout = #norm<scale_layout swizzled_128x4>}
       : (tensor<?x3x512xf32>) -> (tensor<?x3x512xf8E4M3FN>, tensor<?xf8E8M0FNU>)
  %q3, %s3 = norm.quantize %d {group_size = 128 : i64, scale_rounding = #norm<scale_rounding floor>, scale_layout = #norm<scale_layout row_major>}
       : (tensor<?x3x512xf32>) -> (tensor<?x3x512xf8E4M3FN>, tensor<?x3x4xf8E8M0FNU>)
  return %s, %s2, %s3 : tensor<512xf8E8M0FNU>, tensor<?xf8E8M0FNU>, tensor<?x3x4xf8E8M0FNU>
}
