// RUN: norm-opt %s --norm-lower-gpu -split-input-file | FileCheck %s
// RUN: norm-opt %s --norm-lower-gpu=fp8-cvt=true -split-input-file | FileCheck %s --check-prefix=CVT
// RUN: norm-opt %s --norm-lower-gpu=fp4-cvt=true -split-input-file | FileCheck %s --check-prefix=FP4

// The block-scaled forms of norm.quantize alone (docs/Numerics.md
// "Block-scaled formats"): one kernel of 256 threads, the lanes of a group
// (G elements in 16-byte vectors) combine max |y| with xor shuffles, each
// computes the group's scale code and multiplier, the group's first lane
// writes the scale, every lane converts and stores its vectors.

// MXFP8: 32 f32 elements per group, 8 vectors, 8 lanes (shuffles 4, 2, 1);
// the E8M0 code from the exponent bits, the multiplier 2^-X; e4m3 by
// integer ops, or by cvt.rn.satfinite.e4m3x2.f32 with fp8-cvt.
// CHECK-LABEL: func @mxfp8
//   CHECK-NOT: norm.quantize
//       CHECK: %[[Q:.*]] = memref.cast %{{.*}} : memref<1024xf8E4M3FN> to memref<?xf8E4M3FN>
//       CHECK: %[[S:.*]] = memref.cast %{{.*}} : memref<32xf8E8M0FNU> to memref<?xf8E8M0FNU>
//       CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}})
//       CHECK:   scf.for
//       CHECK:     vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
//       CHECK:     vector.reduction <maximumf>
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//   CHECK-NOT:   gpu.shuffle
//       CHECK:   arith.shrui %{{.*}}, %c23_i32 : i32
//       CHECK:   %[[CODE:.*]] = arith.trunci %{{.*}} : i32 to i8
//       CHECK:   %[[SCALE:.*]] = arith.bitcast %[[CODE]] : i8 to f8E8M0FNU
//       CHECK:   scf.if
//       CHECK:     memref.store %[[SCALE]], %[[S]][%{{.*}}] : memref<?xf8E8M0FNU>
//       CHECK:   scf.for
//       CHECK:     arith.mulf %{{.*}} : vector<4xf32>
//       CHECK:     vector.store %{{.*}}, %[[Q]][%{{.*}}] {alignment = 4 : i64} : memref<?xf8E4M3FN>, vector<4xf8E4M3FN>
//       CHECK: return
// CVT-LABEL: func @mxfp8
//       CVT:   scf.for
//       CVT:     nvvm.convert.f32x2.to.f8x2 {{.*}}(f8E4M3FN)
//       CVT:     vector.store
func.func @mxfp8(%y: tensor<4x256xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x8xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x8xf8E8M0FNU>)
  return %q, %s : tensor<4x256xf8E4M3FN>, tensor<4x8xf8E8M0FNU>
}

// -----

// MXFP4 of bf16, scale_rounding up: 4 vectors of 8 per group, 4 lanes; each
// lane stores 8 f4E2M1FN values (whole bytes once packed), never with the
// FP8 conversion.
// CHECK-LABEL: func @mxfp4_up
//       CHECK: gpu.launch
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//   CHECK-NOT:   gpu.shuffle
//       CHECK:   arith.cmpi ugt, %{{.*}}, %c4194304_i32 : i32
//       CHECK:   memref.store %{{.*}} : memref<?xf8E8M0FNU>
//       CHECK:   scf.for
//       CHECK:     arith.trunci %{{.*}} : vector<8xi8> to vector<8xi4>
//       CHECK:     vector.store %{{.*}} {alignment = 4 : i64} : memref<?xf4E2M1FN>, vector<8xf4E2M1FN>
// CVT-LABEL: func @mxfp4_up
//   CVT-NOT:   nvvm.convert
//       CVT: return
// With fp4-cvt, two values per nvvm.convert.f32x2.to.f4x2 (the odd element
// first: it lands in the high nibble), the group's codes 0x0 when its
// multiplier is NaN.
// FP4-LABEL: func @mxfp4_up
//       FP4:   scf.for
//       FP4:     %[[V:.*]] = arith.mulf %{{.*}} : vector<8xf32>
//       FP4:     %[[E:.*]] = vector.extract %[[V]][0]
//       FP4:     %[[O:.*]] = vector.extract %[[V]][1]
//       FP4:     nvvm.convert.f32x2.to.f4x2 %[[O]], %[[E]] : i8(f4E2M1FN)
//   FP4-COUNT-3:     nvvm.convert.f32x2.to.f4x2
//       FP4:     arith.cmpf uno
//       FP4:     %[[BYTES:.*]] = arith.select %{{.*}} : vector<4xi8>
//       FP4:     %[[CODES:.*]] = vector.bitcast %[[BYTES]] : vector<4xi8> to vector<8xi4>
//       FP4:     %[[Q:.*]] = arith.bitcast %[[CODES]] : vector<8xi4> to vector<8xf4E2M1FN>
//       FP4:     vector.store %[[Q]]
// FP4-LABEL: func @fp8_1x128
//   FP4-NOT:   nvvm.convert.f32x2.to.f4x2
//       FP4: return
func.func @mxfp4_up(%y: tensor<2x128xbf16>) -> (tensor<2x128xf4E2M1FN>, tensor<2x4xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<2x128xbf16>) -> (tensor<2x128xf4E2M1FN>, tensor<2x4xf8E8M0FNU>)
  return %q, %s : tensor<2x128xf4E2M1FN>, tensor<2x4xf8E8M0FNU>
}

// -----

// FP8 1x128 of bf16: 16 vectors of 8 per group, 16 lanes.
// CHECK-LABEL: func @fp8_1x128
//       CHECK: gpu.launch
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//       CHECK:   memref.store %{{.*}} : memref<?xf8E8M0FNU>
//       CHECK:   vector.store %{{.*}} : memref<?xf8E4M3FN>, vector<8xf8E4M3FN>
func.func @fp8_1x128(%y: tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 128 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<?x512xbf16>) -> (tensor<?x512xf8E4M3FN>, tensor<?x4xf8E8M0FNU>)
  return %q, %s : tensor<?x512xf8E4M3FN>, tensor<?x4xf8E8M0FNU>
}

// -----

// NVFP4 with swizzled_128x4 scales, rows known at run time: the global
// scale read once per thread, the kernel's segments are the entries of the
// padded scale matrix (roundup(M, 128) x roundup(256 / 16, 4)); those past
// the data read nothing and store a 0 scale at their swizzled offset.
// CHECK-LABEL: func @nvfp4_swizzled
//  CHECK-SAME: (%[[Y:.*]]: tensor<?x256xf32>, %[[G:.*]]: tensor<f32>)
//       CHECK: %[[M:.*]] = tensor.dim %[[Y]], %c0
//       CHECK: %[[MB:.*]] = arith.ceildivui %[[M]], %c128
//       CHECK: %[[MP:.*]] = arith.muli %[[MB]], %c128
//       CHECK: %[[ENTRIES:.*]] = arith.muli %[[MP]], %c16
//       CHECK: bufferization.to_buffer %[[G]]
//       CHECK: %[[S:.*]] = memref.alloc(%[[ENTRIES]]) : memref<?xf8E4M3FN>
//       CHECK: gpu.launch
//       CHECK:   %[[ROW:.*]] = arith.divui %{{.*}}, %c16
//       CHECK:   %[[COL:.*]] = arith.remui %{{.*}}, %c16
//       CHECK:   arith.cmpi ult, %[[COL]], %c16
//       CHECK:   arith.cmpi ult, %[[ROW]], %[[M]]
//       CHECK:   arith.andi
//       CHECK:   %[[DATA:.*]] = arith.andi
//       CHECK:   arith.divui %[[ROW]], %c128
//       CHECK:   arith.muli %{{.*}}, %c512
//       CHECK:   scf.for
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//       CHECK:   %[[GS:.*]] = memref.load %{{.*}}[%c0{{.*}}] : memref<?xf32>
//       CHECK:   arith.mulf %[[GS]], %{{.*}} : f32
//       CHECK:   arith.divf %[[GS]], %{{.*}} : f32
//       CHECK:   %[[ZERO:.*]] = arith.bitcast %c0_i8 : i8 to f8E4M3FN
//       CHECK:   %[[SC:.*]] = arith.select %[[DATA]], %{{.*}}, %[[ZERO]] : f8E4M3FN
//       CHECK:   scf.if
//       CHECK:     memref.store %[[SC]], %[[S]][%{{.*}}] : memref<?xf8E4M3FN>
//       CHECK:   scf.for
//       CHECK:     vector.store %{{.*}} {alignment = 2 : i64} : memref<?xf4E2M1FN>, vector<4xf4E2M1FN>
func.func @nvfp4_swizzled(%y: tensor<?x256xf32>, %g: tensor<f32>) -> (tensor<?x256xf4E2M1FN>, tensor<?xf8E4M3FN>) {
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x256xf32>, tensor<f32>) -> (tensor<?x256xf4E2M1FN>, tensor<?xf8E4M3FN>)
  return %q, %s : tensor<?x256xf4E2M1FN>, tensor<?xf8E4M3FN>
}

// -----

// MXFP8 with swizzled scales of a static shape: 3 rows, 2 groups per row,
// padded to 128 x 4 = 512 scale entries (16 blocks of 32 segments of 8
// lanes).
// CHECK-LABEL: func @mxfp8_swizzled
//       CHECK: memref.alloc() : memref<512xf8E8M0FNU>
//       CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c16{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}})
//       CHECK:   arith.cmpi ult, %{{.*}}, %c3
//       CHECK:   arith.select %{{.*}} : f8E8M0FNU
//       CHECK:   memref.store %{{.*}} : memref<?xf8E8M0FNU>
func.func @mxfp8_swizzled(%y: tensor<3x64xf32>) -> (tensor<3x64xf8E4M3FN>, tensor<512xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<3x64xf32>) -> (tensor<3x64xf8E4M3FN>, tensor<512xf8E8M0FNU>)
  return %q, %s : tensor<3x64xf8E4M3FN>, tensor<512xf8E8M0FNU>
}

// -----

// Fused: the norm kernel writes the NVFP4 q and row_major scales of its y
// (2 lanes per group of 16 bf16): the global scale read once, per group
// one shuffle, the e4m3 scale stored by the group's first lane, q stored
// as 8 f4E2M1FN values; no second kernel.
// CHECK-LABEL: func @fused_nvfp4
//       CHECK: gpu.launch
//       CHECK:   memref.load %{{.*}}[%c0{{.*}}] : memref<?xf32>
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32
//       CHECK:   memref.store %{{.*}} : memref<?xf8E4M3FN>
//       CHECK:   vector.store %{{.*}} : memref<?xf4E2M1FN>, vector<8xf4E2M1FN>
//   CHECK-NOT: gpu.launch
//       CHECK: return
func.func @fused_nvfp4(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %g: tensor<f32>) -> (tensor<?x4096xf4E2M1FN>, tensor<?x256xf8E4M3FN>) {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<?x4096xbf16>, tensor<f32>) -> (tensor<?x4096xf4E2M1FN>, tensor<?x256xf8E4M3FN>)
  return %q, %s : tensor<?x4096xf4E2M1FN>, tensor<?x256xf8E4M3FN>
}

// -----

// Fused with swizzled_128x4 scales (8 rows, 128 groups per row): one
// kernel; its threads first write the 0 scales of the padding rows 8..127
// ((128 - 8) * 128 = 15360 entries, taken in turn by the grid's 8 x 128
// threads) at their swizzled offsets, then the rows' groups store their
// scales at (row / 128) * 128 * 128 + (group / 4) * 512 + (row % 32) * 16 +
// ((row % 128) / 32) * 4 + group % 4.
// CHECK-LABEL: func @swizzled_fused
//       CHECK: %[[S:.*]] = memref.alloc() : memref<16384xf8E8M0FNU>
//       CHECK: %[[SV:.*]] = memref.cast %[[S]] : memref<16384xf8E8M0FNU> to memref<?xf8E8M0FNU>
//       CHECK: gpu.launch
//       CHECK:   %[[ZERO:.*]] = arith.bitcast %c0_i8 : i8 to f8E8M0FNU
//       CHECK:   scf.for %[[E:.*]] = %{{.*}} to %c15360{{.*}} step %c1024 {
//       CHECK:     arith.divui %[[E]], %c128
//       CHECK:     arith.remui %[[E]], %c128
//       CHECK:     memref.store %[[ZERO]], %[[SV]][%{{.*}}] : memref<?xf8E8M0FNU>
//       CHECK:   }
//       CHECK:   gpu.shuffle
//       CHECK:   arith.divui %{{.*}}, %c32
//       CHECK:   %[[ROW:.*]] = arith.divui %{{.*}}, %c128
//       CHECK:   %[[COL:.*]] = arith.remui %{{.*}}, %c128
//   CHECK-DAG:   arith.divui %[[ROW]], %c128
//   CHECK-DAG:   arith.divui %[[COL]], %c4
//   CHECK-DAG:   arith.muli %{{.*}}, %c512
//       CHECK:   memref.store %{{.*}}, %[[SV]][%{{.*}}] : memref<?xf8E8M0FNU>
//       CHECK:   vector.store %{{.*}} : memref<?xf4E2M1FN>, vector<8xf4E2M1FN>
//   CHECK-NOT: gpu.launch
//       CHECK: return
func.func @swizzled_fused(%x: tensor<8x4096xbf16>) -> (tensor<8x4096xf4E2M1FN>, tensor<16384xf8E8M0FNU>) {
  %y = norm.rms_norm %x : (tensor<8x4096xbf16>) -> tensor<8x4096xbf16>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<8x4096xbf16>) -> (tensor<8x4096xf4E2M1FN>, tensor<16384xf8E8M0FNU>)
  return %q, %s : tensor<8x4096xf4E2M1FN>, tensor<16384xf8E8M0FNU>
}

// -----

// Fused NVFP4 with swizzled scales, rows known at run time, 250 groups per
// row padded to 252: the scales are roundup(M, 128) * 252 entries; the
// padding is the columns 250 and 251 of the M rows (M * 2 entries, A),
// then the rows M..roundup(M, 128) (B), each entry's row and column
// selected between the two.
// CHECK-LABEL: func @swizzled_fused_dynamic
//       CHECK: %[[M:.*]] = tensor.dim
//       CHECK: %[[T:.*]] = arith.ceildivui %[[M]], %c128
//       CHECK: %[[N:.*]] = arith.muli %[[T]], %c32256
//       CHECK: %[[S:.*]] = memref.alloc(%[[N]]) : memref<?xf8E4M3FN>
//       CHECK: gpu.launch
//       CHECK:   %[[A:.*]] = arith.muli %{{.*}}, %c2
//       CHECK:   scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
//       CHECK:     %[[REST:.*]] = arith.subi %[[E]], %[[A]]
//       CHECK:     arith.divui %[[REST]], %c252
//       CHECK:     %[[INA:.*]] = arith.cmpi ult, %[[E]], %[[A]]
//       CHECK:     arith.select %[[INA]]
//       CHECK:     arith.select %[[INA]]
//       CHECK:     memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<?xf8E4M3FN>
//       CHECK:   }
//       CHECK:   arith.remui %{{.*}}, %c250
//       CHECK:   memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<?xf8E4M3FN>
//   CHECK-NOT: gpu.launch
//       CHECK: return
func.func @swizzled_fused_dynamic(%x: tensor<?x4000xf32>, %g: tensor<f32>) -> (tensor<?x4000xf4E2M1FN>, tensor<?xf8E4M3FN>) {
  %y = norm.rms_norm %x : (tensor<?x4000xf32>) -> tensor<?x4000xf32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x4000xf32>, tensor<f32>) -> (tensor<?x4000xf4E2M1FN>, tensor<?xf8E4M3FN>)
  return %q, %s : tensor<?x4000xf4E2M1FN>, tensor<?xf8E4M3FN>
}
