// RUN: norm-opt %s -split-input-file --norm-to-linalg | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-lower-cpu | FileCheck %s --check-prefix=CPU

// rms_norm_grad: the f64 row sums of g * xh, dx elementwise (rounded once
// to bf16), the f64 column sums of dy * xh rounded once to the weight type.
// norm-lower-cpu decomposes the gradient ops the same way.
// CHECK-LABEL: func.func @rms_norm_grad
// CHECK-SAME: (%[[DY:.*]]: tensor<4x8xbf16>, %[[X:.*]]: tensor<4x8xbf16>, %[[R:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<8xbf16>)
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[DY]], %[[X]], %[[R]], %[[W]] : {{.*}}) outs(%{{.*}} : tensor<4xf64>)
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[DY]], %[[X]], %[[R]], %[[W]], %[[ROWS]] : {{.*}}) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[COLS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<8xf64>)
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[COLS]] : tensor<8xf64>) outs(%{{.*}} : tensor<8xbf16>)
// CHECK: arith.truncf %{{.*}} : f64 to bf16
// CHECK: return %[[DX]], %[[DW]]
// CPU-LABEL: func.func @rms_norm_grad
// CPU-NOT: norm.rms_norm_grad
// CPU: scf.forall
func.func @rms_norm_grad(%dy: tensor<4x8xbf16>, %x: tensor<4x8xbf16>, %r: tensor<4xf32>, %w: tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<8xbf16>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) {weight_offset = 1.0 : f32} : (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<8xbf16>)
  return %dx, %dw : tensor<4x8xbf16>, tensor<8xbf16>
}

// -----

// layer_norm_grad: two row sums (g, g * xh), dx, and dbias as the column
// sums of dy; dynamic rows.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-SAME: (%[[DY:.*]]: tensor<?x16xf32>, %[[X:.*]]: tensor<?x16xf32>, %[[M:.*]]: tensor<?xf32>, %[[R:.*]]: tensor<?xf32>)
// CHECK: %[[GXH:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<?xf64>)
// CHECK: %[[G:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<?xf64>)
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[X]], %[[M]], %[[R]], %[[GXH]], %[[G]] : {{.*}}) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[COLS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[DY]] : tensor<?x16xf32>) outs(%{{.*}} : tensor<16xf64>)
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} ins(%[[COLS]] : tensor<16xf64>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: return %[[DX]], %[[DB]]
func.func @layer_norm_grad(%dy: tensor<?x16xf32>, %x: tensor<?x16xf32>, %m: tensor<?xf32>, %r: tensor<?xf32>) -> (tensor<?x16xf32>, tensor<16xf32>) {
  %dx, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) {has_bias} : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<?x16xf32>, tensor<16xf32>)
  return %dx, %db : tensor<?x16xf32>, tensor<16xf32>
}

// -----

// dyt_grad: t and 1 - t^2 from exp(-2|alpha x|) (the expm1 polynomial, the
// sign copied back; no math.tanh in f32); dalpha is the sum over every
// element (a rank-0 f64 accumulator), reshaped to alpha's tensor<1xT>.
// CHECK-LABEL: func.func @dyt_grad
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: math.copysign
// CHECK-NOT: math.tanh
// CHECK: %[[ALL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} {{.*}} outs(%{{.*}} : tensor<f64>)
// CHECK: %[[ONE:.*]] = tensor.expand_shape %[[ALL]] [] output_shape [1] : tensor<f64> into tensor<1xf64>
// CHECK: linalg.generic {{.*}} ins(%[[ONE]] : tensor<1xf64>) outs(%{{.*}} : tensor<1xf16>)
func.func @dyt_grad(%dy: tensor<4x8xf16>, %x: tensor<4x8xf16>, %a: tensor<1xf16>) -> (tensor<4x8xf16>, tensor<1xf16>) {
  %dx, %da = norm.dyt_grad %dy, %x alpha(%a) : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<1xf16>) -> (tensor<4x8xf16>, tensor<1xf16>)
  return %dx, %da : tensor<4x8xf16>, tensor<1xf16>
}
