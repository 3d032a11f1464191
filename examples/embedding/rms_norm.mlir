// The input of the embedding example: an RMSNorm over rows of 8 (the C
// program calls it through `_mlir_ciface_rms_norm`).
//
// The commands of README.md#embedding check norm-embed's output with
// FileCheck: the default prefix for the pipeline built by the C++ API, the
// prefix LLVM for a textual pipeline written out as LLVM IR.

// CHECK-LABEL: llvm.func @rms_norm(
//   CHECK-NOT: norm.
// CHECK-LABEL: llvm.func @_mlir_ciface_rms_norm(

// LLVM-LABEL: define {{.*}} @rms_norm(
//       LLVM: call {{.*}} @llvm.sqrt.f32
// LLVM-LABEL: define void @_mlir_ciface_rms_norm(

func.func @rms_norm(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32>
    attributes {llvm.emit_c_interface} {
  %y = norm.rms_norm %x weight(%w) {epsilon = 1.0e-05 : f32}
       : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
