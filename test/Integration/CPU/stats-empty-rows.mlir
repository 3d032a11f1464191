// RUN: norm-opt %s --norm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="lowering=linalg" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// The statistics of rows with no element (N = 0), statically and at run
// time, are NaN (0 / 0) on both paths, and nothing outside x is read.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @static_stats(%x: tensor<3x0xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<3x0xf32>) -> (tensor<3x0xf32>, tensor<3xf32>, tensor<3xf32>)
  return %m, %r : tensor<3xf32>, tensor<3xf32>
}

func.func @dynamic_stats(%x: tensor<3x?xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<3x?xf32>) -> (tensor<3x?xf32>, tensor<3xf32>, tensor<3xf32>)
  return %m, %r : tensor<3xf32>, tensor<3xf32>
}

func.func @print(%t: tensor<3xf32>) {
  %u = tensor.cast %t : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// CHECK-COUNT-4: [{{-?}}nan, {{-?}}nan, {{-?}}nan]
func.func @main() {
  %x = tensor.empty() : tensor<3x0xf32>
  %m, %r = call @static_stats(%x) : (tensor<3x0xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  call @print(%m) : (tensor<3xf32>) -> ()
  call @print(%r) : (tensor<3xf32>) -> ()
  %xd = tensor.cast %x : tensor<3x0xf32> to tensor<3x?xf32>
  %md, %rd = call @dynamic_stats(%xd) : (tensor<3x?xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  call @print(%md) : (tensor<3xf32>) -> ()
  call @print(%rd) : (tensor<3xf32>) -> ()
  return
}
