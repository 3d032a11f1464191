// Tiling norm ops over rows with upstream tile_using_forall computes exactly
// what the untiled ops compute.
// RUN: norm-opt %s --norm-cpu-pipeline=lowering=linalg | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | sed -e 's/base@ = 0x[0-9a-f]*//' > %t.untiled
// RUN: norm-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/tile-norm-rows.mlir --transform-interpreter | FileCheck %s --check-prefix=TILED
// RUN: norm-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/tile-norm-rows.mlir --transform-interpreter --norm-cpu-pipeline=lowering=linalg | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | sed -e 's/base@ = 0x[0-9a-f]*//' > %t.tiled
// RUN: diff %t.untiled %t.tiled
// RUN: FileCheck %s --input-file=%t.tiled

// TILED-COUNT-3: scf.forall (
// TILED-NOT: scf.forall (

// Rows of 5 in tiles of 3: the second tile is partial.
// CHECK: sizes = [5, 6]
// CHECK: sizes = [5, 6]
// CHECK: sizes = [5, 6]
// CHECK: sizes = [5, 6]

func.func @main() {
  %x = arith.constant dense<[
    [0.5, 1.5, -2.0, 3.25, 0.0, 1.0],
    [10.0, 10.5, 9.5, 10.25, 9.75, 10.0],
    [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0e3, -1.0e3, 2.0, -2.0, 0.5, 0.25]]> : tensor<5x6xf32>
  %r = arith.constant dense<0.125> : tensor<5x6xf32>
  %w = arith.constant dense<[1.0, 0.5, 2.0, -1.0, 1.5, 0.75]> : tensor<6xf32>
  %b = arith.constant dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]> : tensor<6xf32>
  %a = arith.constant dense<0.7> : tensor<f32>
  %xd = tensor.cast %x : tensor<5x6xf32> to tensor<?x6xf32>
  %rd = tensor.cast %r : tensor<5x6xf32> to tensor<?x6xf32>
  %0 = norm.layer_norm %xd weight(%w) bias(%b) : (tensor<?x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  %1, %2 = norm.rms_norm %xd weight(%w) residual(%rd) : (tensor<?x6xf32>, tensor<6xf32>, tensor<?x6xf32>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  %3 = norm.dyt %xd alpha(%a) weight(%w) bias(%b) : (tensor<?x6xf32>, tensor<f32>, tensor<6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  %u0 = tensor.cast %0 : tensor<?x6xf32> to tensor<*xf32>
  %u1 = tensor.cast %1 : tensor<?x6xf32> to tensor<*xf32>
  %u2 = tensor.cast %2 : tensor<?x6xf32> to tensor<*xf32>
  %u3 = tensor.cast %3 : tensor<?x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}
