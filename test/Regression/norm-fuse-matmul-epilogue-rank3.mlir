// RUN: norm-opt %s -split-input-file -norm-fuse-matmul="tile-rows=4" -canonicalize -norm-lower-cpu | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-fuse-matmul="tile-rows=4" -canonicalize --norm-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// norm-fuse-matmul's epilogue of a LayerNorm over the last two dims
// (axis = -2) of a batch_matmul: the tile is one batch, of type ?x16x64 once
// canonicalization has folded the single-iteration tile loop, its size a
// tensor.cast of a static tile. norm-lower-cpu reshaped the rows back with
// a tensor.expand_shape whose collapsed dim was static and the expanded one
// dynamic ("expected dimension 0 of collapsed type to be dynamic"); the
// known dim is now made static before the lowering.

// CHECK-LABEL: func @batch_epilogue_normalized_dims
//   CHECK-NOT:   norm.layer_norm
//       CHECK:   return
// LLVM-LABEL: llvm.func @batch_epilogue_normalized_dims
func.func @batch_epilogue_normalized_dims(%a: tensor<2x16x32xf32>, %m: tensor<2x32x64xf32>, %z: tensor<2x16x64xf32>, %w: tensor<16x64xf32>, %b: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  %p = linalg.batch_matmul ins(%a, %m : tensor<2x16x32xf32>, tensor<2x32x64xf32>) outs(%z : tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %y = norm.layer_norm %p weight(%w) bias(%b) {axis = -2 : i64} : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  return %y : tensor<2x16x64xf32>
}

// -----

// The same with rms_norm over the last dim, three batches (a partial tile).
// CHECK-LABEL: func @batch_epilogue_rows
//   CHECK-NOT:   norm.rms_norm
//       CHECK:   return
// LLVM-LABEL: llvm.func @batch_epilogue_rows
func.func @batch_epilogue_rows(%a: tensor<3x6x32xf32>, %m: tensor<3x32x64xf32>, %z: tensor<3x6x64xf32>, %w: tensor<64xf32>) -> tensor<3x6x64xf32> {
  %p = linalg.batch_matmul ins(%a, %m : tensor<3x6x32xf32>, tensor<3x32x64xf32>) outs(%z : tensor<3x6x64xf32>) -> tensor<3x6x64xf32>
  %y = norm.rms_norm %p weight(%w) : (tensor<3x6x64xf32>, tensor<64xf32>) -> tensor<3x6x64xf32>
  return %y : tensor<3x6x64xf32>
}
