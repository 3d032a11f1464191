// RUN: norm-opt %s -norm-pack-fp4 -split-input-file -verify-diagnostics

// An odd last dim does not fill whole bytes.
// expected-error @+1 {{'func.func' op cannot store 'memref<3x5xf4E2M1FN>' two elements per byte: the last dim, the offset and the outer strides must be even and the last stride 1}}
func.func @odd(%m: memref<3x5xf4E2M1FN>) {
  return
}

// -----

// A view that steps over the last dim.
func.func @strided(%m: memref<8x64xf4E2M1FN>) {
  // expected-error @+1 {{'memref.subview' op cannot store 'memref<8x32xf4E2M1FN, strided<[64, 2]>>' two elements per byte}}
  %sv = memref.subview %m[0, 0] [8, 32] [1, 2] : memref<8x64xf4E2M1FN> to memref<8x32xf4E2M1FN, strided<[64, 2]>>
  return
}

// -----

// A vector of an odd length.
func.func @odd_vector(%m: memref<8x64xf4E2M1FN>, %i: index) -> vector<3xf4E2M1FN> {
  // expected-error @+1 {{failed to legalize operation 'vector.load' that was explicitly marked illegal}}
  %v = vector.load %m[%i, %i] : memref<8x64xf4E2M1FN>, vector<3xf4E2M1FN>
  return %v : vector<3xf4E2M1FN>
}
