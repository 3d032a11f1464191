// RUN: split-file %s %t
// RUN: norm-opt %t/small.mlir --norm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: norm-opt %t/small.mlir --norm-cpu-pipeline="vectorize-matmul=false lowering=linalg" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: norm-opt %t/tiled.mlir --norm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=TILED
// RUN: norm-opt %t/tiled.mlir --norm-cpu-pipeline="vector-width=256" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=TILED

// A norm feeding two projections that share one zero-filled init, each
// result written to its own buffer (how a kernel with output parameters
// looks). Without norm-split-shared-inits the second result was computed on
// top of the first and overwrote it (an upstream bug, see
// test/Upstream/eliminate-empty-tensors-shared-init.mlir).
// rms([3, 4]) = sqrt(12.5): y = [0.848528, 1.13137]; rms([0, 2]) = sqrt(2):
// y = [0, 1.41421]. First projection: [[1, 0], [0, 1]]; second [[0, 1], [1, 1]].

// CHECK: {{\[\[}}0.848528,   1.13137],
// CHECK-NEXT: [0,   1.41421]]
// CHECK: {{\[\[}}1.13137,   1.9799],
// CHECK-NEXT: [1.41421,   1.41421]]

//--- small.mlir
func.func @kernel(%xm: memref<2x2xf32>, %om1: memref<2x2xf32>, %om2: memref<2x2xf32>) {
  %x = bufferization.to_tensor %xm restrict : memref<2x2xf32> to tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %w1 = arith.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %w2 = arith.constant dense<[[0.0, 1.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %y = norm.rms_norm %x {epsilon = 0.0 : f32} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %p1 = linalg.matmul ins(%y, %w1 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  bufferization.materialize_in_destination %p1 in restrict writable %om1 : (tensor<2x2xf32>, memref<2x2xf32>) -> ()
  %p2 = linalg.matmul ins(%y, %w2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
  bufferization.materialize_in_destination %p2 in restrict writable %om2 : (tensor<2x2xf32>, memref<2x2xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %xc = arith.constant dense<[[3.0, 4.0], [0.0, 2.0]]> : tensor<2x2xf32>
  %x = bufferization.to_buffer %xc : tensor<2x2xf32> to memref<2x2xf32>
  %o1 = memref.alloc() : memref<2x2xf32>
  %o2 = memref.alloc() : memref<2x2xf32>
  call @kernel(%x, %o1, %o2) : (memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>) -> ()
  %u1 = memref.cast %o1 : memref<2x2xf32> to memref<*xf32>
  %u2 = memref.cast %o2 : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  return
}

//--- tiled.mlir

// The same at 16x8, where the vectorized matmuls stay loops whose
// loop-carried init is the shared fill. Rows are constant, so each
// normalized row is all +1 or all -1: the first projection (identity) gives
// +-1, the second (2 * identity) +-2.
// TILED-LABEL: rank = 2 offset = 0 sizes = [16, 8]
// TILED-NEXT: {{\[\[}}-1,   -1,   -1,   -1,   -1,   -1,   -1,   -1],
// TILED: [1,   1,   1,   1,   1,   1,   1,   1]]
// TILED-LABEL: rank = 2 offset = 0 sizes = [16, 8]
// TILED-NEXT: {{\[\[}}-2,   -2,   -2,   -2,   -2,   -2,   -2,   -2],
// TILED: [2,   2,   2,   2,   2,   2,   2,   2]]

func.func @kernel(%xm: memref<16x8xf32>, %om1: memref<16x8xf32>, %om2: memref<16x8xf32>) {
  %x = bufferization.to_tensor %xm restrict : memref<16x8xf32> to tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %w1 = arith.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]> : tensor<8x8xf32>
  %w2 = arith.constant dense<[[2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0]]> : tensor<8x8xf32>
  %y = norm.rms_norm %x {epsilon = 0.0 : f32} : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %p1 = linalg.matmul ins(%y, %w1 : tensor<16x8xf32>, tensor<8x8xf32>) outs(%z : tensor<16x8xf32>) -> tensor<16x8xf32>
  bufferization.materialize_in_destination %p1 in restrict writable %om1 : (tensor<16x8xf32>, memref<16x8xf32>) -> ()
  %p2 = linalg.matmul ins(%y, %w2 : tensor<16x8xf32>, tensor<8x8xf32>) outs(%z : tensor<16x8xf32>) -> tensor<16x8xf32>
  bufferization.materialize_in_destination %p2 in restrict writable %om2 : (tensor<16x8xf32>, memref<16x8xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %xc = arith.constant dense<[[-7.5, -7.5, -7.5, -7.5, -7.5, -7.5, -7.5, -7.5], [-6.5, -6.5, -6.5, -6.5, -6.5, -6.5, -6.5, -6.5], [-5.5, -5.5, -5.5, -5.5, -5.5, -5.5, -5.5, -5.5], [-4.5, -4.5, -4.5, -4.5, -4.5, -4.5, -4.5, -4.5], [-3.5, -3.5, -3.5, -3.5, -3.5, -3.5, -3.5, -3.5], [-2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5], [-1.5, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5, -1.5], [-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5], [2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5], [3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5], [4.5, 4.5, 4.5, 4.5, 4.5, 4.5, 4.5, 4.5], [5.5, 5.5, 5.5, 5.5, 5.5, 5.5, 5.5, 5.5], [6.5, 6.5, 6.5, 6.5, 6.5, 6.5, 6.5, 6.5], [7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5]]> : tensor<16x8xf32>
  %x = bufferization.to_buffer %xc : tensor<16x8xf32> to memref<16x8xf32>
  %o1 = memref.alloc() : memref<16x8xf32>
  %o2 = memref.alloc() : memref<16x8xf32>
  call @kernel(%x, %o1, %o2) : (memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>) -> ()
  %u1 = memref.cast %o1 : memref<16x8xf32> to memref<*xf32>
  %u2 = memref.cast %o2 : memref<16x8xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  return
}
