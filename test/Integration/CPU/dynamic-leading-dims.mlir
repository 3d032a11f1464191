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

// Every dim normalized (axis = -3) behind a cast from the static constant,
// with one and with two dynamic dims: the direct lowering adds a unit dim
// and collapses into the row, and expands the row back through a unit dim
// (one dynamic dim) or a tensor.reshape (two); MLIR 22's canonicalizer
// crashed on the collapse_shape into expand_shape it built before, once
// the sizes folded to the constant's. The inputs are the first one times 2
// and 4 (one constant per case: the linalg path cannot bufferize the casts
// of a shared one in place); rms of the first one's eight values =
// sqrt(131 / 8).
// CHECK-COUNT-2: rank = 3 offset = 0 sizes = [2, 2, 2]
// CHECK-NEXT: {{\[\[\[}}0.741362, 0.988483],
// CHECK-NEXT: [0, 0.494242]],
// CHECK-NEXT: {{\[\[}}0.247121, 0.247121],
// CHECK-NEXT: [-1.48272, 1.97697]]]

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %c = arith.constant dense<[[[3.0, 4.0], [0.0, 2.0]], [[1.0, 1.0], [-6.0, 8.0]]]> : tensor<2x2x2xf32>
  %x = tensor.cast %c : tensor<2x2x2xf32> to tensor<?x?x2xf32>
  %y = norm.rms_norm %x {epsilon = 0.0 : f32} : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
  %u = tensor.cast %y : tensor<?x?x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %c1 = arith.constant dense<[[[6.0, 8.0], [0.0, 4.0]], [[2.0, 2.0], [-12.0, 16.0]]]> : tensor<2x2x2xf32>
  %x1 = tensor.cast %c1 : tensor<2x2x2xf32> to tensor<2x2x?xf32>
  %y1 = norm.rms_norm %x1 {epsilon = 0.0 : f32, axis = -3 : i64} : (tensor<2x2x?xf32>) -> tensor<2x2x?xf32>
  %u1 = tensor.cast %y1 : tensor<2x2x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %c2 = arith.constant dense<[[[12.0, 16.0], [0.0, 8.0]], [[4.0, 4.0], [-24.0, 32.0]]]> : tensor<2x2x2xf32>
  %x2 = tensor.cast %c2 : tensor<2x2x2xf32> to tensor<?x2x?xf32>
  %y2 = norm.rms_norm %x2 {epsilon = 0.0 : f32, axis = -3 : i64} : (tensor<?x2x?xf32>) -> tensor<?x2x?xf32>
  %u2 = tensor.cast %y2 : tensor<?x2x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  return
}
