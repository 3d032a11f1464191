// RUN: norm-opt %s -split-input-file -norm-lower-cpu | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// Found by norm-fuzz: the residual may have dynamic dims where x has static
// ones (or the other way round). norm-lower-cpu reshaped it with x's static
// sizes, an invalid tensor.expand_shape; it is now cast to x's type first.

// CHECK-LABEL: func @dynamic_residual
//       CHECK:   tensor.cast %{{.*}} : tensor<?x?xbf16> to tensor<2x31xbf16>
//   CHECK-NOT:   norm.rms_norm
// LLVM-LABEL: llvm.func @dynamic_residual
func.func @dynamic_residual(%x: tensor<2x31xbf16>, %w: tensor<f32>, %r: tensor<?x?xbf16>) -> (tensor<2x31xbf16>, tensor<2x31xbf16>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) {axis = -2 : i64} : (tensor<2x31xbf16>, tensor<f32>, tensor<?x?xbf16>) -> (tensor<2x31xbf16>, tensor<2x31xbf16>)
  return %y, %s : tensor<2x31xbf16>, tensor<2x31xbf16>
}

// -----

// CHECK-LABEL: func @static_residual
//       CHECK:   tensor.cast %{{.*}} : tensor<100xf16> to tensor<?xf16>
//   CHECK-NOT:   norm.layer_norm
// LLVM-LABEL: llvm.func @static_residual
func.func @static_residual(%x: tensor<?xf16>, %w: tensor<?xf16>, %r: tensor<100xf16>) -> (tensor<?xf16>, tensor<?xf16>) {
  %y, %s = norm.layer_norm %x weight(%w) residual(%r) {epsilon = 1.0 : f64, axis = 0 : i64} : (tensor<?xf16>, tensor<?xf16>, tensor<100xf16>) -> (tensor<?xf16>, tensor<?xf16>)
  return %y, %s : tensor<?xf16>, tensor<?xf16>
}
