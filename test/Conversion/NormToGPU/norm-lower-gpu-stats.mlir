// RUN: norm-opt %s -split-input-file --norm-lower-gpu | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-gpu-pipeline=format=isa -o /dev/null

// return_stats: one buffer per statistic (a value per row), written by the
// row's first lane after the reductions (copy mode: a host buffer, placed on
// the device with y by norm-gpu-host-copies).
// CHECK-LABEL: func @layer_norm_stats
//       CHECK: %[[MEANH:[a-z_0-9]+]] = memref.alloc() : memref<64xf32>
//       CHECK: %[[MEAN:[a-z_0-9]+]] = memref.cast %[[MEANH]] : memref<64xf32> to memref<?xf32>
//       CHECK: %[[RSTDH:[a-z_0-9]+]] = memref.alloc() : memref<64xf32>
//       CHECK: %[[RSTD:[a-z_0-9]+]] = memref.cast %[[RSTDH]] : memref<64xf32> to memref<?xf32>
//       CHECK: gpu.launch
//       CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
//       CHECK: scf.if %[[FIRST]] {
//  CHECK-NEXT: memref.store %{{.*}}, %[[MEAN]][%{{.*}}] : memref<?xf32>
//  CHECK-NEXT: memref.store %{{.*}}, %[[RSTD]][%{{.*}}] : memref<?xf32>
//   CHECK-NOT: gpu.memcpy
//       CHECK: bufferization.to_tensor %[[MEANH]]
//       CHECK: bufferization.to_tensor %[[RSTDH]]
//       CHECK: return {{.*}} : tensor<64x1024xbf16>, tensor<64xf32>, tensor<64xf32>
func.func @layer_norm_stats(%x: tensor<64x1024xbf16>, %w: tensor<1024xbf16>) -> (tensor<64x1024xbf16>, tensor<64xf32>, tensor<64xf32>) {
  %y, %m, %r = norm.layer_norm %x weight(%w) {return_stats} : (tensor<64x1024xbf16>, tensor<1024xbf16>) -> (tensor<64x1024xbf16>, tensor<64xf32>, tensor<64xf32>)
  return %y, %m, %r : tensor<64x1024xbf16>, tensor<64xf32>, tensor<64xf32>
}

// -----

// Split rows (few long rows, 8 parts of 32768): the finishing kernel's first
// part stores the
// row's statistic (row / parts); the partials kernel stores none.
// CHECK-LABEL: func @rms_norm_stats_split
//       CHECK: %[[RSTDH:[a-z_0-9]+]] = memref.alloc() : memref<8xf32>
//       CHECK: %[[RSTD:[a-z_0-9]+]] = memref.cast %[[RSTDH]]
//       CHECK: gpu.alloc (%{{.*}}) {bufferization.manual_deallocation} : memref<?xf32>
//       CHECK: gpu.launch
//   CHECK-NOT: %[[RSTD]]{{\[}}
//       CHECK: gpu.launch
//       CHECK: arith.divui %arg1, %c8
//       CHECK: memref.store %{{.*}}, %[[RSTD]][%{{.*}}] : memref<?xf32>
func.func @rms_norm_stats_split(%x: tensor<8x262144xf32>) -> (tensor<8x262144xf32>, tensor<8xf32>) {
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<8x262144xf32>) -> (tensor<8x262144xf32>, tensor<8xf32>)
  return %y, %r : tensor<8x262144xf32>, tensor<8xf32>
}

// -----

// Rows sharing warps, a residual, dynamic rows, f64.
// CHECK-LABEL: func @layer_norm_stats_short_rows
//       CHECK: gpu.launch
//       CHECK: memref.store %{{.*}} : memref<?xf32>
//       CHECK: memref.store %{{.*}} : memref<?xf32>
//       CHECK: return {{.*}} : tensor<2x33x64xf16>, tensor<2x33x64xf16>, tensor<2x33xf32>, tensor<2x33xf32>
func.func @layer_norm_stats_short_rows(%x: tensor<2x33x64xf16>, %res: tensor<2x33x64xf16>) -> (tensor<2x33x64xf16>, tensor<2x33x64xf16>, tensor<2x33xf32>, tensor<2x33xf32>) {
  %y, %ro, %m, %r = norm.layer_norm %x residual(%res) {return_stats} : (tensor<2x33x64xf16>, tensor<2x33x64xf16>) -> (tensor<2x33x64xf16>, tensor<2x33x64xf16>, tensor<2x33xf32>, tensor<2x33xf32>)
  return %y, %ro, %m, %r : tensor<2x33x64xf16>, tensor<2x33x64xf16>, tensor<2x33xf32>, tensor<2x33xf32>
}

// -----

// CHECK-LABEL: func @rms_norm_stats_dynamic_f64
//       CHECK: memref.alloc(%{{.*}}) : memref<?xf64>
//       CHECK: memref.store %{{.*}} : memref<?xf64>
func.func @rms_norm_stats_dynamic_f64(%x: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>)
  return %y, %r : tensor<?x?xf64>, tensor<?xf64>
}
