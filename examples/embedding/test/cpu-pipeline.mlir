// norm-cpu-pipeline lowers a module with norm ops to the LLVM dialect.
// RUN: norm-opt %s --norm-cpu-pipeline | FileCheck %s
// RUN: norm-opt %s --pass-pipeline='builtin.module(norm-cpu-pipeline{lowering=linalg})' | FileCheck %s

// CHECK-LABEL: llvm.func @layer_norm(
//   CHECK-NOT: norm.
//       CHECK: llvm.return
func.func @layer_norm(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = norm.layer_norm %x weight(%w) bias(%b)
       : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
