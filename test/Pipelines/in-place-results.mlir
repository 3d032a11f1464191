// RUN: norm-opt %s --norm-cpu-pipeline="vector-width=256" | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="vector-width=256 threads=2" | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="vector-width=512 threads=2" | FileCheck %s

// Every entry point writes its results in place: the signatures norm-aot,
// the C API and the Python JIT compile (memref arguments, results
// materialized into the caller's buffers), static or dynamic, sequential or
// parallel, get no temporary buffer and no copy; a function that returns a
// tensor allocates its result once and copies nothing.

// CHECK-LABEL: llvm.func @dynamic_rows(
//   CHECK-NOT:   @malloc
//   CHECK-NOT:   memcpy
//       CHECK:   llvm.return
func.func @dynamic_rows(%x_m: memref<?x4096xf32>, %y_m: memref<?x4096xf32>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %x_m restrict : memref<?x4096xf32> to tensor<?x4096xf32>
  %y = norm.rms_norm %x : (tensor<?x4096xf32>) -> tensor<?x4096xf32>
  bufferization.materialize_in_destination %y in restrict writable %y_m : (tensor<?x4096xf32>, memref<?x4096xf32>) -> ()
  return
}

// CHECK-LABEL: llvm.func @one_row(
//   CHECK-NOT:   @malloc
//   CHECK-NOT:   memcpy
//       CHECK:   llvm.return
func.func @one_row(%x_m: memref<1x4096xf32>, %y_m: memref<1x4096xf32>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %x_m restrict : memref<1x4096xf32> to tensor<1x4096xf32>
  %y = norm.rms_norm %x : (tensor<1x4096xf32>) -> tensor<1x4096xf32>
  bufferization.materialize_in_destination %y in restrict writable %y_m : (tensor<1x4096xf32>, memref<1x4096xf32>) -> ()
  return
}

// CHECK-LABEL: llvm.func @dynamic_residual_bf16(
//   CHECK-NOT:   @malloc
//   CHECK-NOT:   memcpy
//       CHECK:   llvm.return
func.func @dynamic_residual_bf16(%x_m: memref<?x4096xbf16>, %w_m: memref<4096xf32>, %r_m: memref<?x4096xbf16>, %y_m: memref<?x4096xbf16>, %s_m: memref<?x4096xbf16>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %x_m restrict : memref<?x4096xbf16> to tensor<?x4096xbf16>
  %w = bufferization.to_tensor %w_m restrict : memref<4096xf32> to tensor<4096xf32>
  %r = bufferization.to_tensor %r_m restrict : memref<?x4096xbf16> to tensor<?x4096xbf16>
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) : (tensor<?x4096xbf16>, tensor<4096xf32>, tensor<?x4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>)
  bufferization.materialize_in_destination %y in restrict writable %y_m : (tensor<?x4096xbf16>, memref<?x4096xbf16>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %s_m : (tensor<?x4096xbf16>, memref<?x4096xbf16>) -> ()
  return
}

// CHECK-LABEL: llvm.func @dynamic_row_length(
//   CHECK-NOT:   @malloc
//   CHECK-NOT:   memcpy
//       CHECK:   llvm.return
func.func @dynamic_row_length(%x_m: memref<?x?xf32>, %y_m: memref<?x?xf32>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %x_m restrict : memref<?x?xf32> to tensor<?x?xf32>
  %y = norm.rms_norm %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  bufferization.materialize_in_destination %y in restrict writable %y_m : (tensor<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// CHECK-LABEL: llvm.func @static_layer_norm_3d(
//   CHECK-NOT:   @malloc
//   CHECK-NOT:   memcpy
//       CHECK:   llvm.return
func.func @static_layer_norm_3d(%x_m: memref<4x64x768xf32>, %w_m: memref<768xf32>, %b_m: memref<768xf32>, %y_m: memref<4x64x768xf32>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %x_m restrict : memref<4x64x768xf32> to tensor<4x64x768xf32>
  %w = bufferization.to_tensor %w_m restrict : memref<768xf32> to tensor<768xf32>
  %b = bufferization.to_tensor %b_m restrict : memref<768xf32> to tensor<768xf32>
  %y = norm.layer_norm %x weight(%w) bias(%b) : (tensor<4x64x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<4x64x768xf32>
  bufferization.materialize_in_destination %y in restrict writable %y_m : (tensor<4x64x768xf32>, memref<4x64x768xf32>) -> ()
  return
}

// CHECK-LABEL: llvm.func @returns_tensor(
//       CHECK:   llvm.call @malloc
//   CHECK-NOT:   @malloc
//   CHECK-NOT:   memcpy
//       CHECK:   llvm.return
func.func @returns_tensor(%x: tensor<?x768xf32>) -> tensor<?x768xf32> {
  %y = norm.layer_norm %x : (tensor<?x768xf32>) -> tensor<?x768xf32>
  return %y : tensor<?x768xf32>
}
