// RUN: norm-opt %s --norm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="lowering=linalg" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// Two dynamic leading dims (batch x sequence x hidden): the direct lowering
// reshapes the rows back with tensor.reshape (see
// test/Regression/norm-lower-cpu-dynamic-dims.mlir); the values must be
// those of the static shape. Rows: rms([3, 4]) = sqrt(12.5), rms([0, 2]) =
// sqrt(2), rms([1, 1]) = 1, rms([-6, 8]) = sqrt(50).

// CHECK: rank = 3 offset = 0 sizes = [2, 2, 2]
// CHECK-NEXT: {{\[\[\[}}0.848528, 1.13137],
// CHECK-NEXT: [0, 1.41421]],
// CHECK-NEXT: {{\[\[}}1, 1],
// CHECK-NEXT: [-0.848528, 1.13137]]]

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %c = arith.constant dense<[[[3.0, 4.0], [0.0, 2.0]], [[1.0, 1.0], [-6.0, 8.0]]]> : tensor<2x2x2xf32>
  %x = tensor.cast %c : tensor<2x2x2xf32> to tensor<?x?x2xf32>
  %y = norm.rms_norm %x {epsilon = 0.0 : f32} : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
  %u = tensor.cast %y : tensor<?x?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
