// RUN: norm-opt %s -norm-fuse-matmul="tile-rows=4" -split-input-file | FileCheck %s
// RUN: norm-opt %s --pass-pipeline="builtin.module(func.func(norm-fuse-matmul{tile-rows=8}))" -split-input-file | FileCheck %s --check-prefix=T8
// RUN: not norm-opt %s -norm-fuse-matmul="tile-rows=0" 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not norm-opt %s -norm-fuse-matmul="tile-rows=-3" 2>&1 | FileCheck %s --check-prefix=NEGOPT

// BADOPT: norm-fuse-matmul: option 'tile-rows' must be positive, got 0
// NEGOPT: norm-fuse-matmul: option 'tile-rows' must be positive, got -3

// Prologue: the matmul is tiled over rows and the norm op moves into the
// loop, on a slice of whole rows.
// CHECK-LABEL: func @prologue
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<64xf32>
//       CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4 iter_args(%[[ACC:.*]] = %{{.*}})
//       CHECK:   %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [%{{.*}}, 64] [1, 1]
//       CHECK:   %[[YS:.*]] = norm.rms_norm %[[XS]] weight(%[[W]])
//       CHECK:   linalg.matmul ins(%[[YS]], %{{.*}} : tensor<?x64xf32>, tensor<64x32xf32>)
//       CHECK:   tensor.insert_slice
//   CHECK-NOT: norm.rms_norm
// T8-LABEL: func @prologue
//       T8: scf.for {{.*}} step %c8
func.func @prologue(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %m: tensor<64x32xf32>, %z: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %o = linalg.matmul ins(%y, %m : tensor<?x64xf32>, tensor<64x32xf32>) outs(%z : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}

// -----

// Prologue with a dynamic normalized dim: the matmul's row tiles take
// `tensor.dim` of the norm's result as the row length, which the norm op
// accepts as whole rows; the untiled norm op and matmul are gone.
// CHECK-LABEL: func @prologue_dynamic_row_length
//  CHECK-SAME: (%[[X:.*]]: tensor<16x?xf32>
//   CHECK-NOT: norm.rms_norm
//       CHECK: scf.for %[[I:.*]] = %{{.*}} to %c16 step %c4
//       CHECK:   %[[XS:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [4, %{{.*}}] [1, 1]
//       CHECK:   %[[YS:.*]] = norm.rms_norm %[[XS]] : (tensor<4x?xf32>) -> tensor<4x?xf32>
//       CHECK:   linalg.matmul ins(%[[YS]], %{{.*}} : tensor<4x?xf32>, tensor<?x32xf32>)
//   CHECK-NOT: norm.rms_norm
//   CHECK-NOT: linalg.matmul
func.func @prologue_dynamic_row_length(%x: tensor<16x?xf32>, %m: tensor<?x32xf32>, %z: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %y = norm.rms_norm %x : (tensor<16x?xf32>) -> tensor<16x?xf32>
  %o = linalg.matmul ins(%y, %m : tensor<16x?xf32>, tensor<?x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %o : tensor<16x32xf32>
}

// -----

// Epilogue: the norm op is tiled over rows and the matmul producing its
// input moves into the loop; each tile computes whole rows of the product.
// CHECK-LABEL: func @epilogue
//       CHECK: scf.for %[[I:.*]] = %{{.*}} to %c16 step %c4 iter_args(%[[ACC:.*]] = %{{.*}})
//       CHECK:   %[[AS:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0] [4, 32] [1, 1]
//       CHECK:   %[[P:.*]] = linalg.matmul ins(%[[AS]], %{{.*}} : tensor<4x32xf32>, tensor<32x64xf32>)
//       CHECK:   %[[Y:.*]] = norm.layer_norm %[[P]] weight(%{{.*}}) bias(%{{.*}}) : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
//       CHECK:   tensor.insert_slice %[[Y]] into %[[ACC]][%[[I]], 0] [4, 64] [1, 1]
//   CHECK-NOT: linalg.matmul
func.func @epilogue(%a: tensor<16x32xf32>, %m: tensor<32x64xf32>, %z: tensor<16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %p = linalg.matmul ins(%a, %m : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = norm.layer_norm %p weight(%w) bias(%b) : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

// Not fused: no matmul next to the norm op.
// CHECK-LABEL: func @alone
//   CHECK-NOT: scf.for
//       CHECK: norm.dyt
func.func @alone(%x: tensor<8x16xf32>, %a: tensor<f32>) -> tensor<8x16xf32> {
  %y = norm.dyt %x alpha(%a) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// Prologue with linalg.batch_matmul: one batch at a time, row tiles of the
// dynamic sequence dim; the norm op moves into the inner loop on a
// [1, rows, 64] slice of whole rows.
// CHECK-LABEL: func @batch_prologue
//  CHECK-SAME: (%[[X:.*]]: tensor<2x?x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[M:.*]]: tensor<2x64x32xf32>
//       CHECK: scf.for %[[B:.*]] = %{{.*}} to %c2 step %c1
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4
//       CHECK:     %[[XS:.*]] = tensor.extract_slice %[[X]][%[[B]], %[[I]], 0] [1, %{{.*}}, 64] [1, 1, 1]
//       CHECK:     %[[YS:.*]] = norm.rms_norm %[[XS]] weight(%[[W]]) : (tensor<1x?x64xf32>, tensor<64xf32>) -> tensor<1x?x64xf32>
//       CHECK:     %[[MS:.*]] = tensor.extract_slice %[[M]][%[[B]], 0, 0] [1, 64, 32] [1, 1, 1]
//       CHECK:     linalg.batch_matmul ins(%[[YS]], %[[MS]] : tensor<1x?x64xf32>, tensor<1x64x32xf32>)
//       CHECK:     tensor.insert_slice
//   CHECK-NOT: norm.rms_norm
// T8-LABEL: func @batch_prologue
//       T8: scf.for {{.*}} step %c1
//       T8:   scf.for {{.*}} step %c8
func.func @batch_prologue(%x: tensor<2x?x64xf32>, %w: tensor<64xf32>, %m: tensor<2x64x32xf32>, %z: tensor<2x?x32xf32>) -> tensor<2x?x32xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<2x?x64xf32>, tensor<64xf32>) -> tensor<2x?x64xf32>
  %o = linalg.batch_matmul ins(%y, %m : tensor<2x?x64xf32>, tensor<2x64x32xf32>) outs(%z : tensor<2x?x32xf32>) -> tensor<2x?x32xf32>
  return %o : tensor<2x?x32xf32>
}

// -----

// Epilogue with linalg.batch_matmul: the norm op is tiled over its two row
// dims (one batch, tile-rows rows) and the batch_matmul computing those rows
// moves into the loop.
// CHECK-LABEL: func @batch_epilogue
//  CHECK-SAME: (%[[A:.*]]: tensor<2x16x32xf32>, %[[M:.*]]: tensor<2x32x64xf32>
//       CHECK: scf.for %[[B:.*]] = %{{.*}} to %c2 step %c1
//       CHECK:   scf.for %[[I:.*]] = %{{.*}} to %c16 step %c4 iter_args(%[[ACC:.*]] = %{{.*}})
//       CHECK:     %[[AS:.*]] = tensor.extract_slice %[[A]][%[[B]], %[[I]], 0] [1, 4, 32] [1, 1, 1]
//       CHECK:     %[[MS:.*]] = tensor.extract_slice %[[M]][%[[B]], 0, 0] [1, 32, 64] [1, 1, 1]
//       CHECK:     %[[P:.*]] = linalg.batch_matmul ins(%[[AS]], %[[MS]] : tensor<1x4x32xf32>, tensor<1x32x64xf32>)
//       CHECK:     %[[Y:.*]] = norm.layer_norm %[[P]] weight(%{{.*}}) bias(%{{.*}}) : (tensor<1x4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x4x64xf32>
//       CHECK:     tensor.insert_slice %[[Y]] into %[[ACC]][%[[B]], %[[I]], 0] [1, 4, 64] [1, 1, 1]
//   CHECK-NOT: linalg.batch_matmul
func.func @batch_epilogue(%a: tensor<2x16x32xf32>, %m: tensor<2x32x64xf32>, %z: tensor<2x16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %p = linalg.batch_matmul ins(%a, %m : tensor<2x16x32xf32>, tensor<2x32x64xf32>) outs(%z : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %y = norm.layer_norm %p weight(%w) bias(%b) : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// Epilogue of a training forward: the statistics are tiled with y.
// CHECK-LABEL: func @epilogue_stats
//       CHECK: scf.for %[[I:.*]] = %{{.*}} to %c16 step %c4 iter_args(%[[ACC:.*]] = %{{.*}}, %[[ACCR:.*]] = %{{.*}})
//       CHECK:   %[[P:.*]] = linalg.matmul
//       CHECK:   %[[Y:.*]], %[[R:.*]] = norm.rms_norm %[[P]] {return_stats} : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>)
//   CHECK-DAG:   tensor.insert_slice %[[Y]] into %[[ACC]][%[[I]], 0] [4, 64] [1, 1]
//   CHECK-DAG:   tensor.insert_slice %[[R]] into %[[ACCR]][%[[I]]] [4] [1]
//   CHECK-NOT: linalg.matmul
func.func @epilogue_stats(%a: tensor<16x32xf32>, %m: tensor<32x64xf32>, %z: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16xf32>) {
  %p = linalg.matmul ins(%a, %m : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y, %r = norm.rms_norm %p {return_stats} : (tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16xf32>)
  return %y, %r : tensor<16x64xf32>, tensor<16xf32>
}
