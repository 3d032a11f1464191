// RUN: norm-opt %s --norm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="lowering=linalg threads=2" | FileCheck %s --check-prefix=LLVM

// A module written with upstream ops alone whose tensor.expand_shape has two
// dynamic dims in one group (LLVM 22's expand-strided-metadata crashes on
// it, see test/Upstream/expand-strided-metadata-dynamic-group.mlir):
// norm-cpu-pipeline lowers it through norm-legalize-reshapes and the values
// are those of the static reshape [6, 2] -> [2, 3, 2], normalized.

// CHECK: rank = 3 offset = 0 sizes = [2, 3, 2]
// CHECK-NEXT: {{\[\[\[}}0.848528, 1.13137],
// CHECK-NEXT: [0, 1.41421],
// CHECK-NEXT: [1, 1]],
// CHECK-NEXT: {{\[\[}}-0.848528, 1.13137],
// CHECK-NEXT: [1.41421, 0],
// CHECK-NEXT: [-1, -1]]]
// LLVM-LABEL: llvm.func @main

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %c = arith.constant dense<[[3.0, 4.0], [0.0, 2.0], [1.0, 1.0], [-6.0, 8.0], [2.0, 0.0], [-5.0, -5.0]]> : tensor<6x2xf32>
  %m = tensor.cast %c : tensor<6x2xf32> to tensor<?x2xf32>
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = call @opaque(%c2) : (index) -> index
  %s = call @opaque(%c3) : (index) -> index
  %e = tensor.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 2] : tensor<?x2xf32> into tensor<?x?x2xf32>
  %y = norm.rms_norm %e {epsilon = 0.0 : f32, epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
  %u = tensor.cast %y : tensor<?x?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func private @opaque(%i: index) -> index {
  return %i : index
}
