// RUN: norm-opt %s -split-input-file -norm-vectorize-matmul="vector-width=512" | FileCheck %s
// RUN: norm-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(norm-vectorize-matmul{vector-width=256 threads=2}))" | FileCheck %s --check-prefix=AVX2
// RUN: norm-opt %s -split-input-file -norm-vectorize-matmul="vector-width=512 tile-m=2 tile-n=16 block-n=64 block-k=32" | FileCheck %s --check-prefix=TILES
// RUN: not norm-opt %s -norm-vectorize-matmul="tile-m=-1" 2>&1 | FileCheck %s --check-prefix=ERR-TILE-M
// RUN: not norm-opt %s -norm-vectorize-matmul="tile-n=300" 2>&1 | FileCheck %s --check-prefix=ERR-TILE-N
// RUN: not norm-opt %s -norm-vectorize-matmul="block-n=0" 2>&1 | FileCheck %s --check-prefix=ERR-BLOCK-N
// RUN: not norm-opt %s -norm-vectorize-matmul="block-k=-4" 2>&1 | FileCheck %s --check-prefix=ERR-BLOCK-K
// RUN: not norm-opt %s -norm-vectorize-matmul="vector-width=96" 2>&1 | FileCheck %s --check-prefix=ERR-WIDTH
// RUN: not norm-opt %s -norm-vectorize-matmul="threads=0" 2>&1 | FileCheck %s --check-prefix=ERR-THREADS

// ERR-TILE-M: error: norm-vectorize-matmul: option 'tile-m' must be in [0, 64], got -1
// ERR-TILE-N: error: norm-vectorize-matmul: option 'tile-n' must be in [0, 256], got 300
// ERR-BLOCK-N: error: norm-vectorize-matmul: option 'block-n' must be >= 1, got 0
// ERR-BLOCK-K: error: norm-vectorize-matmul: option 'block-k' must be >= 1, got -4
// ERR-WIDTH: error: norm-vectorize-matmul: option 'vector-width' must be 0 or a power of two in [64, 2048], got 96
// ERR-THREADS: error: norm-vectorize-matmul: option 'threads' must be >= 1, got 0

// A matmul of whole tiles: N blocks (scf.forall, sequential with one
// thread), K blocks, 8x32 register tiles (4x16 with 256-bit vectors), K
// steps of 4 with the accumulator tile carried in registers, and 4 x 8 FMAs
// of 32 lanes per step.
// CHECK-LABEL: func @whole_tiles
//       CHECK:   scf.forall (%{{.*}}) = (0) to (512) step (256)
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C256:.*]] iter_args
//       CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C8:.*]] iter_args
//       CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32:.*]] iter_args
//       CHECK:           %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
//       CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4:.*]] iter_args({{.*}}, %{{.*}} = %[[ACC]]) -> ({{.*}}, vector<8x32xf32>)
//       CHECK:             vector.transfer_read {{.*}} : tensor<8x4xf32>, vector<8x4xf32>
//       CHECK:             vector.transfer_read {{.*}} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK-COUNT-32:          vector.fma {{.*}} : vector<32xf32>
//   CHECK-NOT:             vector.fma
//       CHECK:             scf.yield
//       CHECK:           vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
//       CHECK:   } {norm.sequential}
//   CHECK-NOT:   linalg.matmul
// AVX2-LABEL: func @whole_tiles
//       AVX2:   scf.forall
//       AVX2:           scf.for %{{.*}} iter_args({{.*}}) -> ({{.*}}, vector<4x16xf32>)
// AVX2-COUNT-16:          vector.fma {{.*}} : vector<16xf32>
//   AVX2-NOT:   norm.sequential
// TILES-LABEL: func @whole_tiles
//       TILES:   scf.forall (%{{.*}}) = (0) to (512) step (64)
//       TILES:           scf.for %{{.*}} iter_args({{.*}}) -> ({{.*}}, vector<2x16xf32>)
func.func @whole_tiles(%a: tensor<64x512xf32>, %b: tensor<512x512xf32>, %c: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x512xf32>) outs(%c : tensor<64x512xf32>) -> tensor<64x512xf32>
  return %r : tensor<64x512xf32>
}

// -----

// A small matmul stays on one thread whatever `threads` says; M = 1 (decode)
// gives 1-row register tiles.
// CHECK-LABEL: func @decode_row
//       CHECK:   scf.for %{{.*}} iter_args({{.*}}) -> ({{.*}}, vector<1x32xf32>)
//       CHECK:   } {norm.sequential}
// AVX2-LABEL: func @decode_row
//       AVX2:   } {norm.sequential}
func.func @decode_row(%a: tensor<1x64xf32>, %b: tensor<64x64xf32>, %c: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1x64xf32>, tensor<64x64xf32>) outs(%c : tensor<1x64xf32>) -> tensor<1x64xf32>
  return %r : tensor<1x64xf32>
}

// -----

// Partial tiles (dynamic rows, N and K not multiples of the tile) are
// peeled off and vectorized with masks: no linalg op is left.
// CHECK-LABEL: func @partial_tiles
//       CHECK:   scf.forall
//       CHECK:   vector.create_mask
//       CHECK:   vector.transfer_read {{.*}}, %{{.*}}, %{{.*}} {in_bounds = [true, true]} : tensor<?x?xf32>, vector<8x4xf32>
//   CHECK-NOT:   linalg.matmul
func.func @partial_tiles(%a: tensor<?x37xf32>, %b: tensor<37x70xf32>, %c: tensor<?x70xf32>) -> tensor<?x70xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x37xf32>, tensor<37x70xf32>) outs(%c : tensor<?x70xf32>) -> tensor<?x70xf32>
  return %r : tensor<?x70xf32>
}

// -----

// batch_matmul: the batch dim is tiled by 1 in the parallel loop.
// CHECK-LABEL: func @batch
//       CHECK:   scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (3, 64) step (1, 64)
//       CHECK:     vector<1x8x32xf32>
//   CHECK-NOT:   linalg.batch_matmul
func.func @batch(%a: tensor<3x16x8xf32>, %b: tensor<3x8x64xf32>, %c: tensor<3x16x64xf32>) -> tensor<3x16x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x16x8xf32>, tensor<3x8x64xf32>) outs(%c : tensor<3x16x64xf32>) -> tensor<3x16x64xf32>
  return %r : tensor<3x16x64xf32>
}

// -----

// f64: 8 lanes per 512-bit vector, register tiles of 8x16.
// CHECK-LABEL: func @f64
//       CHECK:   scf.for %{{.*}} iter_args({{.*}}) -> ({{.*}}, vector<8x16xf64>)
//       CHECK:     vector.fma {{.*}} : vector<16xf64>
func.func @f64(%a: tensor<8x12xf64>, %b: tensor<12x16xf64>, %c: tensor<8x16xf64>) -> tensor<8x16xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<8x12xf64>, tensor<12x16xf64>) outs(%c : tensor<8x16xf64>) -> tensor<8x16xf64>
  return %r : tensor<8x16xf64>
}

// -----

// Left alone: bf16 (accumulating in bf16), mixed element types, buffers,
// and elementwise ops.
// CHECK-LABEL: func @not_handled
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xbf16>, tensor<4x4xbf16>)
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf16>, tensor<4x4xf16>) outs(%{{.*}} : tensor<4x4xf32>)
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x4xf32>, memref<4x4xf32>)
//       CHECK:   linalg.add
//   CHECK-NOT:   scf.forall
func.func @not_handled(%a: tensor<4x4xbf16>, %h: tensor<4x4xf16>, %f: tensor<4x4xf32>, %m: memref<4x4xf32>) -> (tensor<4x4xbf16>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %r = linalg.matmul ins(%a, %a : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%a : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  %s = linalg.matmul ins(%h, %h : tensor<4x4xf16>, tensor<4x4xf16>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  linalg.matmul ins(%m, %m : memref<4x4xf32>, memref<4x4xf32>) outs(%m : memref<4x4xf32>)
  %t = linalg.add ins(%f, %f : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r, %s, %t : tensor<4x4xbf16>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Left alone (no crash): a constant operand of a dynamically shaped type,
// which has no sizes to tile by.
// CHECK-LABEL: func @dynamic_constant
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<2x?xf32>)
//   CHECK-NOT:   scf.forall
func.func @dynamic_constant(%x: tensor<4x2xf32>, %z: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %m = arith.constant dense_resource<dynamic_rhs> : tensor<2x?xf32>
  %o = linalg.matmul ins(%x, %m : tensor<4x2xf32>, tensor<2x?xf32>) outs(%z : tensor<4x?xf32>) -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}

{-#
  dialect_resources: {
    builtin: {
      dynamic_rhs: "0x040000000000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// The same through a tensor.cast (canonicalization refines the constant's
// type at its use): left alone too.
// CHECK-LABEL: func @dynamic_constant_cast
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x2xf32>, tensor<2x?xf32>)
//   CHECK-NOT:   scf.forall
func.func @dynamic_constant_cast(%x: tensor<4x2xf32>, %z: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %m = arith.constant dense_resource<dynamic_rhs_cast> : tensor<?x?xf32>
  %c = tensor.cast %m : tensor<?x?xf32> to tensor<2x?xf32>
  %o = linalg.matmul ins(%x, %c : tensor<4x2xf32>, tensor<2x?xf32>) outs(%z : tensor<4x?xf32>) -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}

{-#
  dialect_resources: {
    builtin: {
      dynamic_rhs_cast: "0x040000000000803F0000803F0000803F0000803F"
    }
  }
#-}
