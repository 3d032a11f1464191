// RUN: norm-opt %s --norm-lower-gpu -split-input-file | FileCheck %s
// RUN: norm-opt %s --norm-lower-gpu=fp8-cvt=true -split-input-file | FileCheck %s --check-prefix=CVT
// RUN: norm-opt %s --norm-lower-gpu=memory=device -split-input-file | FileCheck %s --check-prefix=DEVICE

// A norm.quantize that no norm kernel takes in gets its own kernel: 256
// threads, segments (groups, or rows) of the quantized dim taken by aligned
// lanes of a warp. Groups of 128 f32 elements alone: 32 vectors of 4, one
// segment per warp (8 per block, 4 blocks for 4 x 256 / 128 groups); max |y|
// by a sweep and shuffles (offsets 16 to 1), the first lane of the segment
// writes its scale, a second sweep writes q.
// CHECK-LABEL: func @alone_group_i8
//   CHECK-NOT: norm.quantize
//   CHECK-NOT: gpu.alloc
//   CHECK-NOT: gpu.memcpy
//       CHECK: %[[QH:.*]] = memref.alloc() : memref<4x256xi8>
//       CHECK: %[[Q:.*]] = memref.cast %{{.*}} : memref<1024xi8> to memref<?xi8>
//       CHECK: %[[SH:.*]] = memref.alloc() : memref<4x2xf32>
//       CHECK: %[[S:.*]] = memref.cast %{{.*}} : memref<8xf32> to memref<?xf32>
//       CHECK: scf.if
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}})
//       CHECK:     arith.cmpi ult, %{{.*}}, %c8
//       CHECK:     scf.for
//       CHECK:       vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
//       CHECK:       vector.reduction <maximumf>
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
//       CHECK:     gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//       CHECK:     arith.divf
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<?xf32>
//       CHECK:     scf.for
//       CHECK:       math.roundeven
//       CHECK:       arith.fptosi %{{.*}} : vector<4xf32> to vector<4xi8>
//       CHECK:       vector.store %{{.*}}, %[[Q]][%{{.*}}] {alignment = 4 : i64} : memref<?xi8>, vector<4xi8>
//   CHECK-NOT: gpu.memcpy
//       CHECK: bufferization.to_tensor %[[QH]]
//       CHECK: bufferization.to_tensor %[[SH]]
//       CHECK: return
// DEVICE-LABEL: func @alone_group_i8
//   DEVICE-NOT: gpu.memcpy
//       DEVICE: gpu.launch
//   DEVICE-NOT: gpu.memcpy
//       DEVICE: return
func.func @alone_group_i8(%y: tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>) {
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x2xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x2xf32>
}

// -----

// A norm's y with another user: the norm kernel writes y, the quantization
// kernel reads it. Static scale: its reciprocal once per thread, one sweep.
// CHECK-LABEL: func @two_users
//       CHECK: gpu.launch
//       CHECK:   vector.store %{{.*}} : memref<?xf32>, vector<4xf32>
//       CHECK: gpu.launch
//       CHECK:   memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
//       CHECK:   arith.divf
//   CHECK-NOT:   gpu.shuffle
//       CHECK:   scf.for
//       CHECK:     vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
//       CHECK:     vector.store %{{.*}} : memref<?xi8>, vector<4xi8>
//       CHECK: return
func.func @two_users(%x: tensor<4x256xf32>, %s: tensor<f32>) -> (tensor<4x256xi8>, tensor<4x256xf32>) {
  %y = norm.rms_norm %x : (tensor<4x256xf32>) -> tensor<4x256xf32>
  %q = norm.quantize %y scale(%s) : (tensor<4x256xf32>, tensor<f32>) -> tensor<4x256xi8>
  return %q, %y : tensor<4x256xi8>, tensor<4x256xf32>
}

// -----

// Groups too small for the norm kernel's lanes (4 bf16 elements, half a
// vector): y is written, then quantized by the standalone kernel, 1 lane per
// group of one 4-element vector, 32 groups per warp (no shuffle).
// CHECK-LABEL: func @group_smaller_than_vector
//       CHECK: gpu.launch
//       CHECK:   vector.store %{{.*}} : memref<?xbf16>, vector<8xbf16>
//       CHECK: gpu.launch
//   CHECK-NOT:   gpu.shuffle
//       CHECK:   vector.load %{{.*}} : memref<?xbf16>, vector<4xbf16>
//       CHECK:   arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E4M3FN>
// CVT-LABEL: func @group_smaller_than_vector
//       CVT: gpu.launch
//       CVT: gpu.launch
//       CVT:   nvvm.convert.f32x2.to.f8x2
//       CVT:   nvvm.convert.f32x2.to.f8x2
//       CVT:   vector.store %{{.*}} : memref<?xf8E4M3FN>, vector<4xf8E4M3FN>
func.func @group_smaller_than_vector(%x: tensor<4x256xbf16>) -> (tensor<4x256xf8E4M3FN>, tensor<4x64xf32>) {
  %y = norm.rms_norm %x : (tensor<4x256xbf16>) -> tensor<4x256xbf16>
  %q, %sc = norm.quantize %y {group_size = 4 : i64} : (tensor<4x256xbf16>) -> (tensor<4x256xf8E4M3FN>, tensor<4x64xf32>)
  return %q, %sc : tensor<4x256xf8E4M3FN>, tensor<4x64xf32>
}

// -----

// Per token, rows of a length known at run time: a block per row, two
// kernels, 8-element accesses when 8 divides the row length, else one
// element at a time.
// CHECK-LABEL: func @token_dynamic
//       CHECK: arith.remui %{{.*}}, %c8
//       CHECK: scf.if
//       CHECK:   gpu.launch {{.*}} workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
//       CHECK:     vector.load %{{.*}} : memref<?xf16>, vector<8xf16>
//       CHECK:     gpu.barrier
//       CHECK: } else {
//       CHECK:   gpu.launch {{.*}} workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
//       CHECK:     vector.load %{{.*}} : memref<?xf16>, vector<1xf16>
//       CHECK:     gpu.barrier
func.func @token_dynamic(%y: tensor<?x?xf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>) {
  %q, %sc = norm.quantize %y {scale_ub = 1200.0 : f32} : (tensor<?x?xf16>) -> (tensor<?x?xf8E4M3FN>, tensor<?x1xf32>)
  return %q, %sc : tensor<?x?xf8E4M3FN>, tensor<?x1xf32>
}

// -----

// The y of a norm lowered with memory=device and only quantized (by groups
// of 2, which the norm kernel cannot take in): its device buffer is freed
// after the quantization kernel.
// DEVICE-LABEL: func @device_free_y
//       DEVICE: %[[Y:.*]] = gpu.alloc {{.*}} : memref<4x256xf32>
//       DEVICE: gpu.launch
//       DEVICE: gpu.launch
//       DEVICE: gpu.dealloc %[[Y]]
//       DEVICE: return
func.func @device_free_y(%x: tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x128xf32>) {
  %y = norm.rms_norm %x : (tensor<4x256xf32>) -> tensor<4x256xf32>
  %q, %sc = norm.quantize %y {group_size = 2 : i64} : (tensor<4x256xf32>) -> (tensor<4x256xi8>, tensor<4x128xf32>)
  return %q, %sc : tensor<4x256xi8>, tensor<4x128xf32>
}

// -----

// Per token over long rows (8192 bf16 elements: 1024 vectors of 8): a block
// of 256 threads per row, each sweep 4 vectors per thread; max |y| by
// shuffles within each warp, then lane 0 of every warp publishes its max in
// workgroup memory and, after a barrier, every thread takes the max of the
// 8 in order; thread 0 writes the row's scale.
// CHECK-LABEL: func @token_long_rows
//       CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c32{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}}) workgroup(%[[W:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256
//       CHECK:     vector.load %{{.*}} : memref<?xbf16>, vector<8xbf16>
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
//       CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//       CHECK:   scf.if
//       CHECK:     memref.store %{{.*}}, %[[W]][%{{.*}}] : memref<8xf32, #gpu.address_space<workgroup>>
//       CHECK:   gpu.barrier
// CHECK-COUNT-8:   memref.load %[[W]]
//       CHECK:   arith.divf
//       CHECK:   scf.if
//       CHECK:     memref.store %{{.*}} : memref<?xf32>
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256
//       CHECK:     vector.store %{{.*}} : memref<?xf8E4M3FN>, vector<8xf8E4M3FN>
//       CHECK: return
func.func @token_long_rows(%y: tensor<32x8192xbf16>) -> (tensor<32x8192xf8E4M3FN>, tensor<32x1xf32>) {
  %q, %sc = norm.quantize %y : (tensor<32x8192xbf16>) -> (tensor<32x8192xf8E4M3FN>, tensor<32x1xf32>)
  return %q, %sc : tensor<32x8192xf8E4M3FN>, tensor<32x1xf32>
}

// -----

// A static scale over long rows: a block per row, one sweep, no reduction
// (no workgroup memory, no barrier).
// CHECK-LABEL: func @static_long_rows
//       CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c32{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}, {{.*}}) {
//   CHECK-NOT:   gpu.barrier
//       CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c256
//       CHECK:     vector.store %{{.*}} : memref<?xi8>, vector<8xi8>
//       CHECK: return
func.func @static_long_rows(%y: tensor<32x8192xbf16>, %s: tensor<f32>) -> tensor<32x8192xi8> {
  %q = norm.quantize %y scale(%s) : (tensor<32x8192xbf16>, tensor<f32>) -> tensor<32x8192xi8>
  return %q : tensor<32x8192xi8>
}
