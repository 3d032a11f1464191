// RUN: norm-opt %s -split-input-file -norm-lower-cpu | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline="threads=4" | FileCheck %s --check-prefix=LLVM

// Found by norm-fuzz: a static zero dim folds the row count (or the row
// size) to a constant 0 while the collapsed input keeps a dynamic dim, and
// norm-lower-cpu reshaped the rows back with an invalid tensor.expand_shape;
// with N == 0 a vector access was out of bounds. A statically empty input now
// has empty results.

// CHECK-LABEL: func @zero_rows
//   CHECK-NOT:   norm.dyt
//       CHECK:   %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<0x?x?xf16>
//       CHECK:   return %[[E]]
// LLVM-LABEL: llvm.func @zero_rows
func.func @zero_rows(%x: tensor<0x?x?xf16>, %a: tensor<f32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<0x?x?xf16> {
  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b) : (tensor<0x?x?xf16>, tensor<f32>, tensor<?xf32>, tensor<?xf32>) -> tensor<0x?x?xf16>
  return %y : tensor<0x?x?xf16>
}

// -----

// CHECK-LABEL: func @empty_rows
//   CHECK-NOT:   norm.rms_norm
//       CHECK:   %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<15x16x?x0xf16>
//       CHECK:   return %[[E]]
// LLVM-LABEL: llvm.func @empty_rows
func.func @empty_rows(%x: tensor<15x16x?x0xf16>, %r: tensor<15x16x?x0xf16>) -> (tensor<15x16x?x0xf16>, tensor<15x16x?x0xf16>) {
  %c = arith.constant dense<-3.25> : tensor<0xf16>
  %y, %s = norm.rms_norm %x weight(%c) residual(%r) {weight_offset = 3.0e+38 : f32, compute_type = f64, cast_mode = #norm<cast_mode before_weight>} : (tensor<15x16x?x0xf16>, tensor<0xf16>, tensor<15x16x?x0xf16>) -> (tensor<15x16x?x0xf16>, tensor<15x16x?x0xf16>)
  return %y, %s : tensor<15x16x?x0xf16>, tensor<15x16x?x0xf16>
}

// -----

// Found by norm-fuzz: x's dims are dynamic but the weight's static 0 says
// the rows are empty; the row reshapes of the weight then bufferized into a
// memref.collapse_shape that did not verify. Empty results here too.
// CHECK-LABEL: func @zero_in_weight
//   CHECK-NOT:   norm.layer_norm
//       CHECK:   %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<100x?x31xbf16>
//       CHECK:   return %[[E]]
// LLVM-LABEL: llvm.func @zero_in_weight
func.func @zero_in_weight(%x: tensor<100x?x31xbf16>, %w: tensor<100x0x31xf32>, %b: tensor<100x0x?xbf16>) -> tensor<100x?x31xbf16> {
  %y = norm.layer_norm %x weight(%w) bias(%b) {axis = 0 : i64} : (tensor<100x?x31xbf16>, tensor<100x0x31xf32>, tensor<100x0x?xbf16>) -> tensor<100x?x31xbf16>
  return %y : tensor<100x?x31xbf16>
}

// -----

// The same with a static 0 only in the residual.
// CHECK-LABEL: func @zero_in_residual
//   CHECK-NOT:   norm.rms_norm
//       CHECK:   %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x31x7xf16>
//       CHECK:   return %[[E]], %[[E]]
// LLVM-LABEL: llvm.func @zero_in_residual
func.func @zero_in_residual(%x: tensor<?x?x31x7xf16>, %w: tensor<31x?xf16>, %r: tensor<0x?x31x7xf16>) -> (tensor<?x?x31x7xf16>, tensor<?x?x31x7xf16>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) {axis = -2 : i64} : (tensor<?x?x31x7xf16>, tensor<31x?xf16>, tensor<0x?x31x7xf16>) -> (tensor<?x?x31x7xf16>, tensor<?x?x31x7xf16>)
  return %y, %s : tensor<?x?x31x7xf16>, tensor<?x?x31x7xf16>
}
