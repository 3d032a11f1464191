// RUN: norm-opt %s -split-input-file -verify-diagnostics --norm-lower-gpu=memory=device
// RUN: norm-opt %s -split-input-file --norm-lower-gpu=memory=copy | FileCheck %s --check-prefix=COPY

// With memory=device a result is written or copied in device memory, which
// needs a contiguous destination: a strided one is one clear error (the
// memcpy lowering would copy it as contiguous). With memory=copy the
// result is on the host and bufferization copies it.

// COPY-LABEL: func.func @strided_destination
//       COPY:   gpu.launch
//       COPY:   bufferization.materialize_in_destination
func.func @strided_destination(%x: tensor<4x2048xf32>, %out: memref<4x4096xf32>) {
  %y = norm.rms_norm %x : (tensor<4x2048xf32>) -> tensor<4x2048xf32>
  %dest = memref.subview %out[0, 0] [4, 2048] [1, 2] : memref<4x4096xf32> to memref<4x2048xf32, strided<[4096, 2]>>
  // expected-error @+1 {{norm-lower-gpu: with memory=device, a result of 'norm.rms_norm' can be materialized only into a memref with the identity layout (contiguous), got 'memref<4x2048xf32, strided<[4096, 2]>>'}}
  bufferization.materialize_in_destination %y in restrict writable %dest : (tensor<4x2048xf32>, memref<4x2048xf32, strided<[4096, 2]>>) -> ()
  return
}

// -----

// COPY-LABEL: func.func @strided_gradient_destination
func.func @strided_gradient_destination(%dy: tensor<8x512xf32>, %x: tensor<8x512xf32>, %r: tensor<8xf32>, %out: memref<8x1024xf32>) {
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<8x512xf32>, tensor<8x512xf32>, tensor<8xf32>) -> tensor<8x512xf32>
  %dest = memref.subview %out[0, 0] [8, 512] [1, 1] : memref<8x1024xf32> to memref<8x512xf32, strided<[1024, 1]>>
  // expected-error @+1 {{norm-lower-gpu: with memory=device, a result of 'norm.rms_norm_grad' can be materialized only into a memref with the identity layout (contiguous), got 'memref<8x512xf32, strided<[1024, 1]>>'}}
  bufferization.materialize_in_destination %dx in restrict writable %dest : (tensor<8x512xf32>, memref<8x512xf32, strided<[1024, 1]>>) -> ()
  return
}
