// RUN: norm-opt %s -split-input-file --norm-lower-gpu=split-min-elements=1024 --canonicalize --cse | FileCheck %s
// RUN: norm-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(norm-lower-gpu{memory=device warp-max-elements=4096 split-min-elements=1024}),canonicalize,cse)" | FileCheck %s --check-prefix=DEVICE
// RUN: norm-opt %s -split-input-file --norm-lower-gpu --canonicalize --cse | FileCheck %s --check-prefix=DEFAULT
// RUN: norm-opt %s -split-input-file --norm-lower-gpu=split-min-elements=0 --canonicalize --cse | FileCheck %s --check-prefix=NOSPLIT

// The split kernels (below) run with split-min-elements=1024 in the first two
// RUN lines. By default (32768), decode rows of 8192 and rows of 4096 get a
// block each; rows of 2^20 are cut in 8 parts of 131072. With 0, no row is
// cut. (Copy mode: x and y have bf16 device buffers, the partials f32.)
// DEFAULT-LABEL: func.func @split_default_decode
//   DEFAULT-NOT:   gpu.alloc {{.*}} : memref<?xf32>
//       DEFAULT:   gpu.launch
//   DEFAULT-NOT:   gpu.launch
//       DEFAULT:   return
// DEFAULT-LABEL: func.func @split_default_long_rows
//   DEFAULT-DAG:   %[[C8:.*]] = arith.constant 8 : index
//       DEFAULT:   %[[P:.*]] = gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?xf32>
//       DEFAULT:   gpu.launch {{.*}} in (%{{.*}} = %[[C8]],
//       DEFAULT:   gpu.launch {{.*}} in (%{{.*}} = %[[C8]],
//       DEFAULT:   gpu.dealloc %[[P]]
// NOSPLIT-LABEL: func.func @split_default_long_rows
//   NOSPLIT-NOT:   gpu.alloc {{.*}} : memref<?xf32>
//       NOSPLIT:   gpu.launch
//   NOSPLIT-NOT:   gpu.launch
//       NOSPLIT:   return
func.func @split_default_decode(%x: tensor<32x8192xbf16>) -> tensor<32x8192xbf16> {
  %y = norm.rms_norm %x : (tensor<32x8192xbf16>) -> tensor<32x8192xbf16>
  return %y : tensor<32x8192xbf16>
}
func.func @split_default_long_rows(%x: tensor<1x1048576xbf16>) -> tensor<1x1048576xbf16> {
  %y = norm.rms_norm %x : (tensor<1x1048576xbf16>) -> tensor<1x1048576xbf16>
  return %y : tensor<1x1048576xbf16>
}

// -----


// Short rows: one warp per row, four rows (warps) per block, the row in
// registers as six vector<4xf32> per lane, a butterfly shuffle reduction and
// no barrier. Copy mode: the kernel takes the host buffers (flat views of
// the operands' buffers and of a memref.alloc per result), which
// norm-gpu-host-copies places on the device after bufferization.

// CHECK-LABEL: func.func @rms_norm_warp_per_row
//  CHECK-SAME:   %[[X:.*]]: tensor<?x768xf32>, %[[W:.*]]: tensor<768xf32>
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   CHECK-NOT:   gpu.alloc
//   CHECK-NOT:   gpu.memcpy
//       CHECK:   %[[XH:.*]] = bufferization.to_buffer %[[X]] read_only
//       CHECK:   %[[XD:.*]] = memref.collapse_shape %[[XH]] {{\[\[}}0, 1]] : memref<?x768xf32> into memref<?xf32>
//       CHECK:   %[[YH:.*]] = memref.alloc(%{{.*}}) : memref<?x768xf32>
//       CHECK:   %[[YD:.*]] = memref.collapse_shape %[[YH]] {{\[\[}}0, 1]] : memref<?x768xf32> into memref<?xf32>
//       CHECK:   gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C32]], %{{.*}} = %[[C4]], %{{.*}} = %[[C1]]) module(@rms_norm_warp_per_row_norm_kernel) function(@rms_norm_warp_per_row_norm_kernel) {
// CHECK-COUNT-6:     vector.load %[[XD]][%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
//       CHECK:       vector.reduction <add>
//       CHECK:       gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4:     gpu.shuffle xor
//   CHECK-NOT:       gpu.barrier
//       CHECK:       math.rsqrt
//       CHECK:       vector.store %{{.*}}, %[[YD]][%{{.*}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
//       CHECK:       gpu.terminator
//   CHECK-NOT:   gpu.memcpy
//   CHECK-NOT:   gpu.dealloc
//       CHECK:   %[[Y:.*]] = bufferization.to_tensor %[[YH]] restrict writable
//       CHECK:   return %[[Y]]
func.func @rms_norm_warp_per_row(%x: tensor<?x768xf32>, %w: tensor<768xf32>) -> tensor<?x768xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  return %y : tensor<?x768xf32>
}

// -----

// Long rows: one 128-thread block per row, four vector<8xbf16> (128-bit) per
// thread kept in registers, two block-wide reductions (shifted mean, then
// variance) through workgroup memory, computed in f32.

// CHECK-LABEL: func.func @layer_norm_block_per_row
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C64:.*]] = arith.constant 64 : index
//   CHECK-DAG:   %[[C128:.*]] = arith.constant 128 : index
//       CHECK:   gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C64]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) module(@layer_norm_block_per_row_norm_kernel) function(@layer_norm_block_per_row_norm_kernel) workgroup(%[[MEAN:.*]] : memref<4xf32, #gpu.address_space<workgroup>>, %[[VAR:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-4:     vector.load %{{.*}} {alignment = 16 : i64} : memref<262144xbf16>, vector<8xbf16>
//       CHECK:       arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-COUNT-5:     gpu.shuffle xor
//       CHECK:       memref.store %{{.*}}, %[[MEAN]]
//       CHECK:       gpu.barrier
// CHECK-COUNT-4:     memref.load %[[MEAN]]
// CHECK-COUNT-5:     gpu.shuffle xor
//       CHECK:       memref.store %{{.*}}, %[[VAR]]
//       CHECK:       gpu.barrier
//       CHECK:       math.rsqrt
//       CHECK:       arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
//       CHECK:       vector.store %{{.*}} {alignment = 16 : i64} : memref<262144xbf16>, vector<8xbf16>
func.func @layer_norm_block_per_row(%x: tensor<64x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> tensor<64x4096xbf16> {
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<64x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<64x4096xbf16>
  return %y : tensor<64x4096xbf16>
}

// -----

// A dynamic row length: the warp or block layout and 128-bit or scalar
// accesses are chosen at run time; empty inputs launch nothing.

// CHECK-LABEL: func.func @rms_norm_dynamic_rows
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C1024:.*]] = arith.constant 1024 : index
//       CHECK:   %[[N:.*]] = tensor.dim %{{.*}}, %[[C1]] : tensor<?x?xf16>
//       CHECK:   %[[NONEMPTY:.*]] = arith.cmpi ugt, %{{.*}}, %[[C0]]
//       CHECK:   scf.if %[[NONEMPTY]] {
//       CHECK:     %[[SHORT:.*]] = arith.cmpi ule, %[[N]], %[[C1024]]
//       CHECK:     %[[REM:.*]] = arith.remui %[[N]], %[[C8]]
//       CHECK:     %[[ALIGNED:.*]] = arith.cmpi eq, %[[REM]], %[[C0]]
//       CHECK:     scf.if %[[SHORT]] {
//       CHECK:       scf.if %[[ALIGNED]] {
//       CHECK:         gpu.launch
//       CHECK:           vector.load {{.*}} : memref<?xf16>, vector<8xf16>
//   CHECK-NOT:           gpu.barrier
//       CHECK:       } else {
//       CHECK:         gpu.launch
//       CHECK:           vector.load {{.*}} : memref<?xf16>, vector<1xf16>
//       CHECK:     } else {
//       CHECK:       scf.if %[[ALIGNED]] {
//       CHECK:         gpu.launch
//       CHECK:           vector.load {{.*}} : memref<?xf16>, vector<8xf16>
//       CHECK:           gpu.barrier
//       CHECK:           scf.for
//       CHECK:       } else {
//       CHECK:         gpu.launch
//       CHECK:           vector.load {{.*}} : memref<?xf16>, vector<1xf16>
func.func @rms_norm_dynamic_rows(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %y = norm.rms_norm %x : (tensor<?x?xf16>) -> tensor<?x?xf16>
  return %y : tensor<?x?xf16>
}

// -----

// Rows too long for the registers (64 of them, too many to split): 1024
// threads keep four vectors each and
// loops sweep the rest, accumulating in f64; residual_out is written in the
// first sweep and read back by the later ones.

// CHECK-LABEL: func.func @layer_norm_residual_long_rows
//   CHECK-DAG:   %[[C1024:.*]] = arith.constant 1024 : index
//   CHECK-DAG:   %[[C16384:.*]] = arith.constant 16384 : index
//       CHECK:   %[[XD:.*]] = memref.collapse_shape
//       CHECK:   %[[RD:.*]] = memref.collapse_shape
//       CHECK:   %[[YD:.*]] = memref.collapse_shape
//       CHECK:   %[[SD:.*]] = memref.collapse_shape
//       CHECK:   gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %[[C1024]], {{.*}} workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-4:     vector.store %{{.*}}, %[[SD]]
//       CHECK:       scf.for %{{.*}} = %{{.*}} to %[[C16384]] step %[[C1024]] iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf64>)
//       CHECK:         vector.load %[[XD]]
//       CHECK:         vector.load %[[RD]]
//       CHECK:         vector.store %{{.*}}, %[[SD]]
//       CHECK:       scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4xf64>)
//       CHECK:         vector.load %[[SD]]
//       CHECK:       scf.for
//       CHECK:         vector.load %[[SD]]
//       CHECK:         vector.store %{{.*}}, %[[YD]]
func.func @layer_norm_residual_long_rows(%x: tensor<64x65536xf32>, %r: tensor<64x65536xf32>) -> (tensor<64x65536xf32>, tensor<64x65536xf32>) {
  %y, %s = norm.layer_norm %x residual(%r) : (tensor<64x65536xf32>, tensor<64x65536xf32>) -> (tensor<64x65536xf32>, tensor<64x65536xf32>)
  return %y, %s : tensor<64x65536xf32>, tensor<64x65536xf32>
}

// -----

// Few long rows (2 x 4096 f32, below 64 rows): each row is cut in 4 parts of
// 1024 (256 vectors: 64 threads x 4), 8 blocks. The first kernel reduces a
// part and lane 0 stores its mean and squared deviations (about the row's
// first element, x[row * 4096]); the second loads the 4 partials of its row
// and normalizes its part, with the weight at the part's offset.
// DEFAULT-LABEL: func.func @layer_norm_split_rows
//       DEFAULT:   gpu.launch
//   DEFAULT-NOT:   gpu.launch
//       DEFAULT:   return
// CHECK-LABEL: func.func @layer_norm_split_rows
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C64:.*]] = arith.constant 64 : index
//       CHECK:   %[[P:.*]] = gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?xf32>
//       CHECK:   gpu.launch {{.*}} in (%{{.*}} = %[[C8]], {{.*}} threads({{.*}}) in (%{{.*}} = %[[C64]],
//       CHECK:     gpu.shuffle xor
//       CHECK:     gpu.barrier
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.*}}, %[[P]]
//   CHECK-NOT:     vector.store
//       CHECK:     gpu.terminator
//       CHECK:   gpu.launch {{.*}} in (%{{.*}} = %[[C8]], {{.*}} threads({{.*}}) in (%{{.*}} = %[[C64]],
// CHECK-COUNT-8:     memref.load %[[P]]
//   CHECK-NOT:     gpu.shuffle
//       CHECK:     vector.store
//       CHECK:     gpu.terminator
//       CHECK:   gpu.dealloc %[[P]]
func.func @layer_norm_split_rows(%x: tensor<2x4096xf32>, %w: tensor<4096xf32>) -> tensor<2x4096xf32> {
  %y = norm.layer_norm %x weight(%w) : (tensor<2x4096xf32>, tensor<4096xf32>) -> tensor<2x4096xf32>
  return %y : tensor<2x4096xf32>
}

// -----

// DyT has no reduction: no shuffle, no barrier; alpha is a scalar.

// CHECK-LABEL: func.func @dyt_no_reduction
//       CHECK:   gpu.launch
//       CHECK:     memref.load
//       CHECK:     math.tanh %{{.*}} : vector<4xf32>
//   CHECK-NOT:     gpu.shuffle
//   CHECK-NOT:     gpu.barrier
//       CHECK:     gpu.terminator
func.func @dyt_no_reduction(%x: tensor<4x2x64xf32>, %a: tensor<f32>) -> tensor<4x2x64xf32> {
  %y = norm.dyt %x alpha(%a) {axis = -2 : i64} : (tensor<4x2x64xf32>, tensor<f32>) -> tensor<4x2x64xf32>
  return %y : tensor<4x2x64xf32>
}

// -----

// memory=device: no copies; results materialized into memrefs are written
// in place, and warp-max-elements moves the warp/block threshold. The 32
// decode rows of 8192 are split in 8 parts (256 blocks of 64 threads):
// residual_out is written by the first kernel, y by the second.

// DEVICE-LABEL: func.func @fused_add_rms_norm_in_place
//  DEVICE-SAME:   %[[X:.*]]: memref<32x8192xbf16>, %[[R:.*]]: memref<32x8192xbf16>, %[[W:.*]]: memref<8192xbf16>, %[[Y:.*]]: memref<32x8192xbf16>, %[[S:.*]]: memref<32x8192xbf16>
//   DEVICE-NOT:   gpu.memcpy
//   DEVICE-DAG:   %[[C64:.*]] = arith.constant 64 : index
//   DEVICE-DAG:   %[[C256:.*]] = arith.constant 256 : index
//   DEVICE-DAG:   %[[YF:.*]] = memref.collapse_shape %[[Y]]
//   DEVICE-DAG:   %[[SF:.*]] = memref.collapse_shape %[[S]]
//       DEVICE:   %[[P:.*]] = gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?xf32>
//       DEVICE:   gpu.launch {{.*}} in (%{{.*}} = %[[C256]], {{.*}} threads({{.*}}) in (%{{.*}} = %[[C64]],
//       DEVICE:     vector.store %{{.*}}, %[[SF]]
//       DEVICE:     gpu.barrier
//       DEVICE:     memref.store %{{.*}}, %[[P]]
//   DEVICE-NOT:     vector.store %{{.*}}, %[[YF]]
//       DEVICE:   gpu.launch {{.*}} in (%{{.*}} = %[[C256]], {{.*}} threads({{.*}}) in (%{{.*}} = %[[C64]],
//   DEVICE-NOT:     vector.store %{{.*}}, %[[SF]]
//       DEVICE:     memref.load %[[P]]
//       DEVICE:     vector.store %{{.*}}, %[[YF]]
//       DEVICE:   gpu.dealloc %[[P]]
//   DEVICE-NOT:   gpu.memcpy
//   DEVICE-NOT:   materialize_in_destination
//       DEVICE:   return
func.func @fused_add_rms_norm_in_place(%x: memref<32x8192xbf16>, %r: memref<32x8192xbf16>, %w: memref<8192xbf16>, %y: memref<32x8192xbf16>, %s: memref<32x8192xbf16>) {
  %xt = bufferization.to_tensor %x restrict : memref<32x8192xbf16> to tensor<32x8192xbf16>
  %rt = bufferization.to_tensor %r restrict : memref<32x8192xbf16> to tensor<32x8192xbf16>
  %wt = bufferization.to_tensor %w restrict : memref<8192xbf16> to tensor<8192xbf16>
  %yt, %st = norm.rms_norm %xt weight(%wt) residual(%rt) : (tensor<32x8192xbf16>, tensor<8192xbf16>, tensor<32x8192xbf16>) -> (tensor<32x8192xbf16>, tensor<32x8192xbf16>)
  bufferization.materialize_in_destination %yt in restrict writable %y : (tensor<32x8192xbf16>, memref<32x8192xbf16>) -> ()
  bufferization.materialize_in_destination %st in restrict writable %s : (tensor<32x8192xbf16>, memref<32x8192xbf16>) -> ()
  return
}

// -----

// DEVICE-LABEL: func.func @warp_threshold_option
//       DEVICE:   gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %[[C4:.*]], %{{.*}} = %{{.*}})
//   DEVICE-NOT:   gpu.barrier
//       DEVICE:   %[[Y:.*]] = bufferization.to_tensor %{{.*}} restrict writable
//       DEVICE:   return %[[Y]]
func.func @warp_threshold_option(%x: tensor<16x2048xf32>) -> tensor<16x2048xf32> {
  %y = norm.rms_norm %x : (tensor<16x2048xf32>) -> tensor<16x2048xf32>
  return %y : tensor<16x2048xf32>
}

// -----

// memory=device: the buffer of a result that only feeds another norm op is
// freed after that op's kernel, the buffer of an unused result right after
// its own kernel; a returned result's buffer belongs to the caller.
// DEVICE-LABEL: func.func @device_intermediate_freed
//       DEVICE:   %[[Y1:.*]] = gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?x1024xf32>
//       DEVICE:   %[[S:.*]] = gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?x1024xf32>
//       DEVICE:   gpu.launch {{.*}} module(@device_intermediate_freed_norm_kernel) function(@device_intermediate_freed_norm_kernel)
//       DEVICE:   gpu.dealloc %[[S]] {bufferization.manual_deallocation}
//       DEVICE:   %[[Y2:.*]] = gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?x1024xf32>
//       DEVICE:   gpu.launch
//       DEVICE:   %[[Y:.*]] = bufferization.to_tensor %[[Y2]] restrict writable
//       DEVICE:   gpu.dealloc %[[Y1]] {bufferization.manual_deallocation}
//   DEVICE-NOT:   gpu.dealloc
//       DEVICE:   return %[[Y]]
func.func @device_intermediate_freed(%x: tensor<?x1024xf32>, %r: tensor<?x1024xf32>, %a: tensor<f32>) -> tensor<?x1024xf32> {
  %y1, %s = norm.rms_norm %x residual(%r) : (tensor<?x1024xf32>, tensor<?x1024xf32>) -> (tensor<?x1024xf32>, tensor<?x1024xf32>)
  %y2 = norm.dyt %y1 alpha(%a) : (tensor<?x1024xf32>, tensor<f32>) -> tensor<?x1024xf32>
  return %y2 : tensor<?x1024xf32>
}

// -----

// A result that is also returned is not freed.
// DEVICE-LABEL: func.func @device_returned_not_freed
//   DEVICE-NOT:   gpu.dealloc
//       DEVICE:   return
func.func @device_returned_not_freed(%x: tensor<?x1024xf32>, %a: tensor<f32>) -> (tensor<?x1024xf32>, tensor<?x1024xf32>) {
  %y1 = norm.rms_norm %x : (tensor<?x1024xf32>) -> tensor<?x1024xf32>
  %y2 = norm.dyt %y1 alpha(%a) : (tensor<?x1024xf32>, tensor<f32>) -> tensor<?x1024xf32>
  return %y1, %y2 : tensor<?x1024xf32>, tensor<?x1024xf32>
}

// -----

// memory=device: a result materialized into a memref made after the op (the
// kernel cannot write it there) is copied device to device where it was
// materialized, and its buffer freed; nothing is copied on the host.
// DEVICE-LABEL: func.func @device_materialize_after
//       DEVICE:   %[[Y:.*]] = gpu.alloc () {bufferization.manual_deallocation} : memref<4x2048xf32>
//       DEVICE:   gpu.launch
//       DEVICE:   %[[DEST:.*]] = memref.collapse_shape
//       DEVICE:   gpu.memcpy %[[DEST]], %[[Y]] : memref<4x2048xf32>, memref<4x2048xf32>
//       DEVICE:   gpu.dealloc %[[Y]]
//   DEVICE-NOT:   materialize_in_destination
//       DEVICE:   return
func.func @device_materialize_after(%x: tensor<4x2048xf32>, %out: memref<1x4x2048xf32>) {
  %y = norm.rms_norm %x : (tensor<4x2048xf32>) -> tensor<4x2048xf32>
  %dest = memref.collapse_shape %out [[0, 1], [2]] : memref<1x4x2048xf32> into memref<4x2048xf32>
  bufferization.materialize_in_destination %y in restrict writable %dest : (tensor<4x2048xf32>, memref<4x2048xf32>) -> ()
  return
}

// -----

// A materialization in a nested region (after the kernel): the copy stays
// there and the buffer is freed after the scf.if that holds it.
// DEVICE-LABEL: func.func @device_materialize_nested
//       DEVICE:   %[[Y:.*]] = gpu.alloc () {bufferization.manual_deallocation} : memref<4x2048xf32>
//       DEVICE:   gpu.launch
//   DEVICE-NOT:   gpu.dealloc
//       DEVICE:   scf.if
//       DEVICE:     gpu.memcpy %{{.*}}, %[[Y]] : memref<4x2048xf32>, memref<4x2048xf32>
//       DEVICE:   }
//       DEVICE:   gpu.dealloc %[[Y]]
//   DEVICE-NOT:   materialize_in_destination
//       DEVICE:   return
func.func @device_materialize_nested(%x: tensor<4x2048xf32>, %out: memref<4x2048xf32>, %c: i1) {
  %y = norm.rms_norm %x : (tensor<4x2048xf32>) -> tensor<4x2048xf32>
  scf.if %c {
    bufferization.materialize_in_destination %y in restrict writable %out : (tensor<4x2048xf32>, memref<4x2048xf32>) -> ()
  }
  return
}

// -----

// The destination is read between the op and its materialization: the
// kernel writes its own buffer, copied into the destination where the
// materialization was, after that read.
// DEVICE-LABEL: func.func @device_destination_read_before
//  DEVICE-SAME:   %{{.*}}: tensor<4x2048xf32>, %[[OUT:.*]]: memref<4x2048xf32>, %[[KEEP:.*]]: memref<4x2048xf32>
//       DEVICE:   %[[Y:.*]] = gpu.alloc () {bufferization.manual_deallocation} : memref<4x2048xf32>
//       DEVICE:   gpu.launch
//       DEVICE:   memref.copy %[[OUT]], %[[KEEP]]
//       DEVICE:   gpu.memcpy %[[OUT]], %[[Y]] : memref<4x2048xf32>, memref<4x2048xf32>
//       DEVICE:   gpu.dealloc %[[Y]]
//   DEVICE-NOT:   materialize_in_destination
//       DEVICE:   return
func.func @device_destination_read_before(%x: tensor<4x2048xf32>, %out: memref<4x2048xf32>, %keep: memref<4x2048xf32>) {
  %y = norm.rms_norm %x : (tensor<4x2048xf32>) -> tensor<4x2048xf32>
  memref.copy %out, %keep : memref<4x2048xf32> to memref<4x2048xf32>
  bufferization.materialize_in_destination %y in restrict writable %out : (tensor<4x2048xf32>, memref<4x2048xf32>) -> ()
  return
}
