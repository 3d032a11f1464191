// RUN: norm-opt %s --norm-lower-gpu -split-input-file | FileCheck %s
// RUN: norm-opt %s --norm-lower-gpu=fp8-cvt=true -split-input-file | FileCheck %s --check-prefix=CVT

// A norm whose y only feeds norm.quantize becomes kernels that write q (and
// the scales, residual_out) and never y. Static scale: read once per thread
// from the scale buffer; FP8 by integer ops, or with fp8-cvt by
// nvvm.convert.f32x2.to.f8x2 (cvt.rn.satfinite.e4m3x2.f32).
// CHECK-LABEL: func @static_fp8
//   CHECK-NOT: norm.rms_norm
//   CHECK-NOT: norm.quantize
//       CHECK: gpu.launch
//       CHECK:   memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
//       CHECK:   arith.divf
//       CHECK:   arith.minui
//       CHECK:   arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
//       CHECK:   %[[Q:.*]] = arith.bitcast %{{.*}} : vector<8xi8> to vector<8xf8E4M3FN>
//       CHECK:   vector.store %[[Q]], %{{.*}}[%{{.*}}] {{.*}}: memref<?xf8E4M3FN>, vector<8xf8E4M3FN>
//   CHECK-NOT:   vector.store {{.*}} vector<8xbf16>
//       CHECK: return
// CVT-LABEL: func @static_fp8
//       CVT: gpu.launch
//       CVT:   nvvm.convert.f32x2.to.f8x2 {{.*}}rn{{.*}}satfinite{{.*}} : vector<2xi8>(f8E4M3FN)
//       CVT:   vector.insert_strided_slice
//       CVT:   vector.store %{{.*}}, %{{.*}}[%{{.*}}] {{.*}}: memref<?xf8E4M3FN>, vector<8xf8E4M3FN>
func.func @static_fp8(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %s: tensor<f32>) -> tensor<?x4096xf8E4M3FN> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  %q = norm.quantize %y scale(%s) : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
  return %q : tensor<?x4096xf8E4M3FN>
}

// -----

// Per token with a residual: max |y| over the row (lanes, then warps
// through workgroup memory), lane 0 writes the row's scale; residual_out
// is still written; int8 by roundeven, clamp and fptosi.
// CHECK-LABEL: func @token_i8
//       CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>, %[[MAXS:.*]] : memref<4xf32, #gpu.address_space<workgroup>>)
//       CHECK:   vector.store %{{.*}} : memref<?xbf16>, vector<8xbf16>
//       CHECK:   vector.reduction <maximumf>
//       CHECK:   gpu.shuffle  xor
//       CHECK:   arith.maximumf
//       CHECK:   memref.store %{{.*}}, %[[MAXS]]
//       CHECK:   gpu.barrier
//       CHECK:   scf.if
//       CHECK:     memref.store %{{.*}} : memref<?xf32>
//       CHECK:   math.roundeven
//       CHECK:   arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi8>
//       CHECK:   vector.store %{{.*}} : memref<?xi8>, vector<8xi8>
func.func @token_i8(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>) -> (tensor<?x4096xi8>, tensor<?x1xf32>, tensor<?x4096xbf16>) {
  %y, %s = norm.rms_norm %x residual(%r) : (tensor<?x4096xbf16>, tensor<?x4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>)
  %q, %sc = norm.quantize %y : (tensor<?x4096xbf16>) -> (tensor<?x4096xi8>, tensor<?x1xf32>)
  return %q, %sc, %s : tensor<?x4096xi8>, tensor<?x1xf32>, tensor<?x4096xbf16>
}

// -----

// Groups of 128 bf16 elements: 16 lanes of 8 elements each reduce their
// group's max |y| by shuffles (offsets 8 to 1), and the first of them
// writes the group's scale.
// CHECK-LABEL: func @group_fp8
//       CHECK: gpu.launch
//       CHECK:   vector.reduction <maximumf>
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c8_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c4_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c2_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32
//       CHECK:   arith.remui %{{.*}}, %c16
//       CHECK:   scf.if
//       CHECK:     arith.divui %{{.*}}, %c128
//       CHECK:     memref.store %{{.*}} : memref<?xf32>
//       CHECK:   vector.store %{{.*}} : memref<?xf8E4M3FN>, vector<8xf8E4M3FN>
func.func @group_fp8(%x: tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>) {
  %y = norm.layer_norm %x : (tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>)
  return %q, %sc : tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>
}

// -----

// A dynamic row length: every variant (warp and block per row, size
// classes, looping) quantizes; the dynamic form keeps whole rows per block.
// CHECK-LABEL: func @token_dynamic_row
//       CHECK: gpu.launch
//       CHECK: vector.store %{{.*}} : memref<?xf8E4M3FN>
//       CHECK: return
func.func @token_dynamic_row(%x: tensor<?x?xf32>, %a: tensor<f32>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>) {
  %y = norm.dyt %x alpha(%a) : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %q, %sc = norm.quantize %y : (tensor<?x?xf32>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>)
  return %q, %sc : tensor<?x?xf8E4M3FN>, tensor<?x1xf32>
}

// -----

// The static scale is computed after the norm: the kernel is built at the
// quantization, where the scale exists.
// CHECK-LABEL: func @late_scale
//  CHECK-SAME: (%{{.*}}: tensor<8x64xf32>, %[[F:.*]]: f32)
//       CHECK: %[[S:.*]] = tensor.from_elements %[[F]] : tensor<f32>
//       CHECK: bufferization.to_buffer %[[S]]
//       CHECK: gpu.launch
//       CHECK:   vector.store %{{.*}} : memref<?xf8E4M3FN>
func.func @late_scale(%x: tensor<8x64xf32>, %f: f32) -> tensor<8x64xf8E4M3FN> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %s = tensor.from_elements %f : tensor<f32>
  %q = norm.quantize %y scale(%s) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf8E4M3FN>
  return %q : tensor<8x64xf8E4M3FN>
}
