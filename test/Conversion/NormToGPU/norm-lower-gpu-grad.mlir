// RUN: norm-opt %s -split-input-file --norm-lower-gpu | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-gpu-pipeline=format=isa -o /dev/null
// RUN: norm-opt %s -split-input-file --norm-gpu-pipeline="format=isa memory=device" -o /dev/null
// RUN: norm-opt %s -split-input-file --norm-lower-gpu=memory=device | FileCheck %s --check-prefix=DEVICE

// Two kernels, no atomics: the row kernel (blocks of 16 rows, 256 threads;
// the row sums of g and g * xh by xor shuffles within each warp, then the 8
// warps' sums in order through shared memory between two barriers; dx
// written, the block's partial rows of dweight and dbias accumulated by the
// column's owner), then the column kernel (each column's partials summed
// over the blocks in order, in f64, rounded once).
// CHECK-LABEL: func @layer_norm_grad
//   CHECK-NOT: atomic
//       CHECK: %[[PW:[a-z_0-9]+]] = gpu.alloc (%c4096) {{.*}} : memref<?xf32>
//       CHECK: %[[PB:[a-z_0-9]+]] = gpu.alloc (%c4096) {{.*}} : memref<?xf32>
//       CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4{{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}}) workgroup(%[[S0:.*]] : memref<8xf32, #gpu.address_space<workgroup>>, %[[S1:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
//       CHECK: scf.for
//       CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32
//       CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32
//       CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32
//       CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32
//       CHECK: scf.if
//       CHECK:   memref.store %{{.*}}, %[[S0]]
//       CHECK:   memref.store %{{.*}}, %[[S1]]
//       CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[S0]]
// CHECK-COUNT-8: memref.load %[[S1]]
//       CHECK: gpu.barrier
//   CHECK-NOT: gpu.barrier
//       CHECK: memref.store %{{.*}}, %[[PW]]
//       CHECK: memref.store %{{.*}}, %[[PB]]
//       CHECK: gpu.launch
//       CHECK: scf.for {{.*}} -> (f64)
//       CHECK: memref.load %[[PW]]
//   CHECK-NOT: atomic
//       CHECK: return
func.func @layer_norm_grad(%dy: tensor<64x1024xbf16>, %x: tensor<64x1024xbf16>, %m: tensor<64xf32>, %r: tensor<64xf32>, %w: tensor<1024xbf16>) -> (tensor<64x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>) {
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<64x1024xbf16>, tensor<64x1024xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<1024xbf16>) -> (tensor<64x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>)
  return %dx, %dw, %db : tensor<64x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>
}

// -----

// Dynamic rows and weight_offset.
// CHECK-LABEL: func @rms_norm_grad_dynamic
//       CHECK: arith.ceildivui
//       CHECK: gpu.launch
//       CHECK: arith.addf %{{.*}}, %cst
//       CHECK: gpu.launch
//       CHECK: return
func.func @rms_norm_grad_dynamic(%dy: tensor<?x512xf32>, %x: tensor<?x512xf32>, %r: tensor<?xf32>, %w: tensor<512xf32>) -> (tensor<?x512xf32>, tensor<512xf32>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) {weight_offset = 1.0 : f32} : (tensor<?x512xf32>, tensor<?x512xf32>, tensor<?xf32>, tensor<512xf32>) -> (tensor<?x512xf32>, tensor<512xf32>)
  return %dx, %dw : tensor<?x512xf32>, tensor<512xf32>
}

// -----

// DyT: tanh and its slope from exp(-2|alpha x|) (an expm1 polynomial, the
// sign copied back), dalpha's per-block sums (shuffles, then the warps' sums in
// shared memory) summed by the column kernel's first thread.
// CHECK-LABEL: func @dyt_grad
//       CHECK: gpu.alloc (%c100{{[_0-9]*}}) {{.*}} : memref<?xf32>
//       CHECK: gpu.alloc (%c100{{[_0-9]*}}) {{.*}} : memref<?xf32>
//       CHECK: %[[PA:[a-z_0-9]+]] = gpu.alloc (%c1{{[_0-9]*}}) {{.*}} : memref<?xf32>
//       CHECK: gpu.launch {{.*}} workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
//       CHECK: math.fma
//       CHECK: math.copysign
//       CHECK: memref.store %{{.*}}, %[[PA]]
//       CHECK: gpu.launch
//       CHECK: memref.load %[[PA]]
func.func @dyt_grad(%dy: tensor<8x100xf16>, %x: tensor<8x100xf16>, %a: tensor<f16>, %w: tensor<100xf16>) -> (tensor<8x100xf16>, tensor<100xf16>, tensor<100xf16>, tensor<f16>) {
  %dx, %dw, %db, %da = norm.dyt_grad %dy, %x alpha(%a) weight(%w) {has_bias} : (tensor<8x100xf16>, tensor<8x100xf16>, tensor<f16>, tensor<100xf16>) -> (tensor<8x100xf16>, tensor<100xf16>, tensor<100xf16>, tensor<f16>)
  return %dx, %dw, %db, %da : tensor<8x100xf16>, tensor<100xf16>, tensor<100xf16>, tensor<f16>
}

// -----

// Several normalized dims, no weight: dx only, one kernel.
// CHECK-LABEL: func @layer_norm_grad_2d
//       CHECK: gpu.launch
//   CHECK-NOT: gpu.launch
//       CHECK: return
func.func @layer_norm_grad_2d(%dy: tensor<2x3x40xf64>, %x: tensor<2x3x40xf64>, %m: tensor<2xf64>, %r: tensor<2xf64>) -> tensor<2x3x40xf64> {
  %dx = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) {axis = 1 : i64} : (tensor<2x3x40xf64>, tensor<2x3x40xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<2x3x40xf64>
  return %dx : tensor<2x3x40xf64>
}

// -----

// memory=device: dx and dweight are written straight into the memrefs they
// are materialized into (no gpu.alloc for them, the materializations gone);
// dbias's memref is made after the op, so it gets a gpu.alloc buffer, copied
// into the memref with gpu.memcpy where it was materialized, then freed.
// DEVICE-LABEL: func @layer_norm_grad_in_place
//  DEVICE-SAME:   %[[DXM:[a-z0-9]+]]: memref<8x512xf32>, %[[DWM:[a-z0-9]+]]: memref<512xf32>, %[[DBM:[a-z0-9]+]]: memref<1x512xf32>
//   DEVICE-NOT:   gpu.memcpy
//       DEVICE:   %[[DX:.*]] = memref.collapse_shape %[[DXM]]
//       DEVICE:   %[[DXF:.*]] = memref.cast %[[DX]]
//       DEVICE:   %[[DWF:.*]] = memref.cast %[[DWM]]
//       DEVICE:   %[[DB:.*]] = gpu.alloc () {bufferization.manual_deallocation} : memref<512xf32>
//   DEVICE-NOT:   gpu.alloc ()
//       DEVICE:   gpu.launch
//       DEVICE:     memref.store %{{.*}}, %[[DXF]]
//       DEVICE:   gpu.launch
//       DEVICE:     memref.store %{{.*}}, %[[DWF]]
//       DEVICE:   gpu.dealloc
//       DEVICE:   gpu.dealloc
//   DEVICE-NOT:   gpu.dealloc
//   DEVICE-NOT:   materialize_in_destination
//       DEVICE:   %[[DBF:.*]] = memref.collapse_shape %[[DBM]]
//       DEVICE:   gpu.memcpy %[[DBF]], %[[DB]]
//       DEVICE:   gpu.dealloc %[[DB]]
//   DEVICE-NOT:   materialize_in_destination
//       DEVICE:   return
func.func @layer_norm_grad_in_place(%dxm: memref<8x512xf32>, %dwm: memref<512xf32>, %dbm: memref<1x512xf32>, %dy: tensor<8x512xf32>, %x: tensor<8x512xf32>, %m: tensor<8xf32>, %r: tensor<8xf32>, %w: tensor<512xf32>) {
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<8x512xf32>, tensor<8x512xf32>, tensor<8xf32>, tensor<8xf32>, tensor<512xf32>) -> (tensor<8x512xf32>, tensor<512xf32>, tensor<512xf32>)
  bufferization.materialize_in_destination %dx in restrict writable %dxm : (tensor<8x512xf32>, memref<8x512xf32>) -> ()
  bufferization.materialize_in_destination %dw in restrict writable %dwm : (tensor<512xf32>, memref<512xf32>) -> ()
  %dbf = memref.collapse_shape %dbm [[0, 1]] : memref<1x512xf32> into memref<512xf32>
  bufferization.materialize_in_destination %db in restrict writable %dbf : (tensor<512xf32>, memref<512xf32>) -> ()
  return
}
