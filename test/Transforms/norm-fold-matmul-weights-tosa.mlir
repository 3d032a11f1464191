// RUN: norm-opt %s -norm-fold-matmul-weights=remarks=true -split-input-file -verify-diagnostics | FileCheck %s
// RUN: norm-opt %s -norm-fold-matmul-weights=defer-scale=true -split-input-file | FileCheck %s --check-prefix=DEFER

// The TOSA form of a pre-norm block as torch-mlir's TOSA backend exports
// it (after norm-raise): the weight a collapse of a [1, 1, K] tosa.const,
// the normalized rows reshaped to [1, M, K] for a batched tosa.matmul with
// a constant [1, K, N] RHS. W'[k, n] = w[k] * W[k, n], written as a
// tosa.const; the original constants are erased.
// CHECK-LABEL: func @tosa_rms_norm_linear
//   CHECK-NOT: tosa.const"() <{values = dense<{{\[\[\[}}2.000000e+00, 5.000000e-01]]]>
//   CHECK-NOT: 1.000000e+00, 2.000000e+00, 3.000000e+00
//   CHECK-NOT: tensor.collapse_shape
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
//       CHECK: %[[R:.*]] = tosa.reshape %[[Y]]
//       CHECK: %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00], [2.000000e+00, 2.500000e+00, 3.000000e+00]]]> : tensor<1x2x3xf32>}>
//       CHECK: tosa.matmul %[[R]], %[[W]], %{{.*}}, %{{.*}} : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
// With defer-scale the matmul reads a reshape of raw x and its rows are
// scaled after it by the per-row factor reshaped to [1, 4].
// DEFER-LABEL: func @tosa_rms_norm_linear
//  DEFER-SAME: (%[[X:.*]]: tensor<2x2x2xf32>)
//       DEFER: math.rsqrt
//       DEFER: %[[R:.*]] = tosa.reshape %[[X]]
//       DEFER: %[[MM:.*]] = tosa.matmul %[[R]]
//       DEFER: %[[S:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
//       DEFER: %[[O:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[S]] : tensor<1x4x3xf32>, tensor<1x4xf32>)
//       DEFER: tosa.reshape %[[O]]
//   DEFER-NOT: norm.rms_norm
func.func @tosa_rms_norm_linear(%x: tensor<2x2x2xf32>) -> tensor<2x2x3xf32> {
  %w = "tosa.const"() <{values = dense<[[[2.0, 0.5]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %m = "tosa.const"() <{values = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s1 = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[2, 2, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %wc = tensor.collapse_shape %w [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %y = norm.rms_norm %x weight(%wc) : (tensor<2x2x2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  %r = tosa.reshape %y, %s1 : (tensor<2x2x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %mm = tosa.matmul %r, %m, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %o = tosa.reshape %mm, %s2 : (tensor<1x4x3xf32>, !tosa.shape<3>) -> tensor<2x2x3xf32>
  return %o : tensor<2x2x3xf32>
}

// -----

// nn.Linear's [N, K] weight under a tosa.transpose to [1, K, N], folded in
// the constant's own layout; the norm weight a tosa.reshape of a constant
// (its shape operand goes with it).
// CHECK-LABEL: func @tosa_transposed_weight
//   CHECK-NOT: tosa.const_shape {values = dense<2> : tensor<1xindex>}
//       CHECK: %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
//       CHECK: %[[R:.*]] = tosa.reshape %[[Y]]
//       CHECK: %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}2.000000e+00, 2.000000e+00], [4.000000e+00, 2.500000e+00], [6.000000e+00, 3.000000e+00]]]> : tensor<1x3x2xf32>}>
//       CHECK: %[[T:.*]] = tosa.transpose %[[W]] {perms = array<i32: 0, 2, 1>}
//       CHECK: tosa.matmul %[[R]], %[[T]]
//   CHECK-NOT: tosa.const"() <{values = dense<{{\[\[\[}}1.000000e+00, 4.000000e+00]
// DEFER-LABEL: func @tosa_transposed_weight
//  DEFER-SAME: (%[[X:.*]]: tensor<4x2xf32>)
//       DEFER: %[[T:.*]] = tosa.transpose
//       DEFER: %[[R:.*]] = tosa.reshape %[[X]]
//       DEFER: %[[MM:.*]] = tosa.matmul %[[R]], %[[T]]
//       DEFER: %[[S:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
//       DEFER: %[[O:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[S]] : tensor<1x4x3xf32>, tensor<1x4xf32>)
//       DEFER: return %[[O]]
//   DEFER-NOT: norm.rms_norm
// DEFER-LABEL: func @tosa_layer_norm_bias
func.func @tosa_transposed_weight(%x: tensor<4x2xf32>) -> tensor<1x4x3xf32> {
  %w = "tosa.const"() <{values = dense<[[[2.0, 0.5]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %m = "tosa.const"() <{values = dense<[[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]]> : tensor<1x3x2xf32>}> : () -> tensor<1x3x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %sw = tosa.const_shape {values = dense<2> : tensor<1xindex>} : () -> !tosa.shape<1>
  %s1 = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %wr = tosa.reshape %w, %sw : (tensor<1x1x2xf32>, !tosa.shape<1>) -> tensor<2xf32>
  %y = norm.rms_norm %x weight(%wr) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %r = tosa.reshape %y, %s1 : (tensor<4x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  %t = tosa.transpose %m {perms = array<i32: 0, 2, 1>} : (tensor<1x3x2xf32>) -> tensor<1x2x3xf32>
  %mm = tosa.matmul %r, %t, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %mm : tensor<1x4x3xf32>
}

// -----

// A rank-3 result read by tosa.matmul directly; the LayerNorm bias becomes
// bias @ W = [-3, -3, -3] added after the product (w = [1, 2], b = [1, -1]).
// CHECK-LABEL: func @tosa_layer_norm_bias
//       CHECK: %[[Y:.*]] = norm.layer_norm %{{.*}} : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
//       CHECK: %[[W:.*]] = "tosa.const"() <{values = dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [8.000000e+00, 1.000000e+01, 1.200000e+01]]]> : tensor<1x2x3xf32>}>
//       CHECK: %[[MM:.*]] = tosa.matmul %[[Y]], %[[W]]
//       CHECK: %[[C:.*]] = arith.constant dense<-3.000000e+00> : tensor<1x3xf32>
//       CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[C]] : tensor<1x4x3xf32>, tensor<1x3xf32>)
//       CHECK: return %[[O]]
func.func @tosa_layer_norm_bias(%x: tensor<1x4x2xf32>) -> tensor<1x4x3xf32> {
  %g = "tosa.const"() <{values = dense<[[[1.0, 2.0]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %b = "tosa.const"() <{values = dense<[[[1.0, -1.0]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %m = "tosa.const"() <{values = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %gc = tensor.collapse_shape %g [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %bc = tensor.collapse_shape %b [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %y = norm.layer_norm %x weight(%gc) bias(%bc) : (tensor<1x4x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x2xf32>
  %mm = tosa.matmul %y, %m, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %mm : tensor<1x4x3xf32>
}

// -----

// Not folded: the reshape does not keep the rows ([2, 2, 4] read as
// [1, 8, 2] mixes two halves of a row into a K of 2).
// CHECK-LABEL: func @tosa_wrong_reshape
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @tosa_wrong_reshape(%x: tensor<2x2x4xf32>) -> tensor<1x8x3xf32> {
  %w = "tosa.const"() <{values = dense<[[[2.0, 0.5, 1.0, 1.0]]]> : tensor<1x1x4xf32>}> : () -> tensor<1x1x4xf32>
  %m = "tosa.const"() <{values = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s1 = tosa.const_shape {values = dense<[1, 8, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %wc = tensor.collapse_shape %w [[0, 1, 2]] : tensor<1x1x4xf32> into tensor<4xf32>
  // expected-remark @+1 {{not folded into matmuls: unsupported reshape of the result}}
  %y = norm.rms_norm %x weight(%wc) : (tensor<2x2x4xf32>, tensor<4xf32>) -> tensor<2x2x4xf32>
  %r = tosa.reshape %y, %s1 : (tensor<2x2x4xf32>, !tosa.shape<3>) -> tensor<1x8x2xf32>
  %mm = tosa.matmul %r, %m, %zp, %zp : (tensor<1x8x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x3xf32>
  return %mm : tensor<1x8x3xf32>
}

// -----

// Not folded: the matmul's weight is not a constant.
// CHECK-LABEL: func @tosa_non_constant_rhs
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @tosa_non_constant_rhs(%x: tensor<1x4x2xf32>, %m: tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  %w = "tosa.const"() <{values = dense<[[[2.0, 0.5]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wc = tensor.collapse_shape %w [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  // expected-remark @+1 {{not folded into matmuls: the matmul's right-hand side is not a constant}}
  %y = norm.rms_norm %x weight(%wc) : (tensor<1x4x2xf32>, tensor<2xf32>) -> tensor<1x4x2xf32>
  %mm = tosa.matmul %y, %m, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %mm : tensor<1x4x3xf32>
}

// -----

// Not folded: the norm weight is a reshape of an argument, not a constant.
// CHECK-LABEL: func @tosa_non_constant_weight
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @tosa_non_constant_weight(%x: tensor<1x4x2xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x4x3xf32> {
  %m = "tosa.const"() <{values = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wc = tensor.collapse_shape %w [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  // expected-remark @+1 {{not folded into matmuls: weight or bias is not a constant}}
  %y = norm.rms_norm %x weight(%wc) : (tensor<1x4x2xf32>, tensor<2xf32>) -> tensor<1x4x2xf32>
  %mm = tosa.matmul %y, %m, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %mm : tensor<1x4x3xf32>
}

// -----

// Not folded: the normalized value is the matmul's right operand (the
// weight would scale its columns, not the rows of a constant).
// CHECK-LABEL: func @tosa_swapped_operands
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @tosa_swapped_operands(%x: tensor<1x2x2xf32>) -> tensor<1x3x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[2.0, 0.5]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %m = "tosa.const"() <{values = dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>}> : () -> tensor<1x3x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wc = tensor.collapse_shape %w [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  // expected-remark @+1 {{not folded into matmuls: the normalized value is not only the matmul's left operand}}
  %y = norm.rms_norm %x weight(%wc) : (tensor<1x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2xf32>
  %mm = tosa.matmul %m, %y, %zp, %zp : (tensor<1x3x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x2xf32>
  return %mm : tensor<1x3x2xf32>
}

// -----

// Not folded: the transpose of the weight is not [0, 2, 1] (it swaps the
// batch dim in).
// CHECK-LABEL: func @tosa_wrong_transpose
//       CHECK: norm.rms_norm %{{.*}} weight(%{{.*}})
func.func @tosa_wrong_transpose(%x: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %w = "tosa.const"() <{values = dense<[[[2.0, 0.5]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %m = "tosa.const"() <{values = dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>}> : () -> tensor<2x1x2xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wc = tensor.collapse_shape %w [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  // expected-remark @+1 {{not folded into matmuls: unsupported transpose feeding the matmul}}
  %y = norm.rms_norm %x weight(%wc) : (tensor<1x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2xf32>
  %t = tosa.transpose %m {perms = array<i32: 1, 2, 0>} : (tensor<2x1x2xf32>) -> tensor<1x2x2xf32>
  %mm = tosa.matmul %y, %t, %zp, %zp : (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  return %mm : tensor<1x2x2xf32>
}
