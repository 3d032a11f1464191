// RUN: norm-opt %s -split-input-file -norm-lower-gpu | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-lower-gpu=memory=device | FileCheck %s

// Found by norm-fuzz: buffers with a static 0 and a dynamic dim (x, the
// residual, a weight of type 5x16x?x?) were flattened with a memref.collapse_shape
// whose inferred size was a static 0 for a group holding dynamic dims, which
// does not verify; the pass "succeeded" with invalid IR. The flattened size
// is now dynamic exactly when a dim is.

// CHECK-LABEL: func @zero_dim_weight
//       CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : memref<?x16x2x0xf16> into memref<?xf16>
//   CHECK-NOT: norm.rms_norm
//       CHECK: return
func.func @zero_dim_weight(%x: tensor<?x16x2x0xf16>, %w: tensor<5x16x?x?xf16>, %r: tensor<?x?x2x0xf16>) -> (tensor<?x16x2x0xf16>, tensor<?x16x2x0xf16>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) {axis = 0 : i64, compute_type = f64, epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<?x16x2x0xf16>, tensor<5x16x?x?xf16>, tensor<?x?x2x0xf16>) -> (tensor<?x16x2x0xf16>, tensor<?x16x2x0xf16>)
  return %y, %s : tensor<?x16x2x0xf16>, tensor<?x16x2x0xf16>
}
