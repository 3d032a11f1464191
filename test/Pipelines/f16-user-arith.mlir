// RUN: norm-opt %s --norm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline | FileCheck %s --check-prefix=IR

// f16 arithmetic written by the user is emulated in f32; the lowered module
// parses in mlir-runner (no arith attributes left on LLVM casts).
// IR-NOT: #arith.fastmath
// CHECK: [1.5, 4, 7.5, 12]
func.func @main() {
  %a = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf16>
  %b = arith.constant dense<[1.5, 2.0, 2.5, 3.0]> : tensor<4xf16>
  %p = arith.mulf %a, %b : tensor<4xf16>
  %e = arith.extf %p : tensor<4xf16> to tensor<4xf32>
  %u = tensor.cast %e : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}
