// RUN: norm-opt %s | norm-opt | FileCheck %s
// RUN: norm-opt %s -mlir-print-op-generic | norm-opt | FileCheck %s

// CHECK-LABEL: func.func @layer_norm_grad
// CHECK: norm.layer_norm_grad %{{.*}}, %{{.*}} mean(%{{.*}}) rstd(%{{.*}}) weight(%{{.*}}) {has_bias} : (tensor<8x4096xbf16>, tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<4096xbf16>) -> (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
func.func @layer_norm_grad(%dy: tensor<8x4096xbf16>, %x: tensor<8x4096xbf16>, %m: tensor<8xf32>, %r: tensor<8xf32>, %w: tensor<4096xbf16>) -> (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) {
  %dx, %dw, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) weight(%w) {has_bias} : (tensor<8x4096xbf16>, tensor<8x4096xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<4096xbf16>) -> (tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>)
  return %dx, %dw, %db : tensor<8x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
}

// No weight, a bias: dx and dbias; two normalized dims, f64 compute type.
// CHECK-LABEL: func.func @layer_norm_grad_bias_only
// CHECK: norm.layer_norm_grad %{{.*}}, %{{.*}} mean(%{{.*}}) rstd(%{{.*}}) {axis = 1 : i64, compute_type = f64, has_bias} : (tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2x3x64xf32>, tensor<3x64xf32>)
func.func @layer_norm_grad_bias_only(%dy: tensor<2x3x64xf32>, %x: tensor<2x3x64xf32>, %m: tensor<2xf64>, %r: tensor<2xf64>) -> (tensor<2x3x64xf32>, tensor<3x64xf32>) {
  %dx, %db = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) {axis = 1 : i64, compute_type = f64, has_bias} : (tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2x3x64xf32>, tensor<3x64xf32>)
  return %dx, %db : tensor<2x3x64xf32>, tensor<3x64xf32>
}

// CHECK-LABEL: func.func @rms_norm_grad
// CHECK: norm.rms_norm_grad %{{.*}}, %{{.*}} rstd(%{{.*}}) weight(%{{.*}}) {weight_offset = 1.000000e+00 : f32} : (tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?xf32>, tensor<4096xf32>) -> (tensor<?x4096xf16>, tensor<4096xf32>)
// CHECK: norm.rms_norm_grad %{{.*}}, %{{.*}} rstd(%{{.*}}) : (tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?xf32>) -> tensor<?x4096xf16>
func.func @rms_norm_grad(%dy: tensor<?x4096xf16>, %x: tensor<?x4096xf16>, %r: tensor<?xf32>, %w: tensor<4096xf32>) -> (tensor<?x4096xf16>, tensor<4096xf32>, tensor<?x4096xf16>) {
  %dx, %dw = norm.rms_norm_grad %dy, %x rstd(%r) weight(%w) {weight_offset = 1.0 : f32} : (tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?xf32>, tensor<4096xf32>) -> (tensor<?x4096xf16>, tensor<4096xf32>)
  %dx2 = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?xf32>) -> tensor<?x4096xf16>
  return %dx, %dw, %dx2 : tensor<?x4096xf16>, tensor<4096xf32>, tensor<?x4096xf16>
}

// CHECK-LABEL: func.func @dyt_grad
// CHECK: norm.dyt_grad %{{.*}}, %{{.*}} alpha(%{{.*}}) weight(%{{.*}}) {has_bias} : (tensor<8x768xf32>, tensor<8x768xf32>, tensor<1xf32>, tensor<768xf32>) -> (tensor<8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<1xf32>)
func.func @dyt_grad(%dy: tensor<8x768xf32>, %x: tensor<8x768xf32>, %a: tensor<1xf32>, %w: tensor<768xf32>) -> (tensor<8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<1xf32>) {
  %dx, %dw, %db, %da = norm.dyt_grad %dy, %x alpha(%a) weight(%w) {has_bias} : (tensor<8x768xf32>, tensor<8x768xf32>, tensor<1xf32>, tensor<768xf32>) -> (tensor<8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<1xf32>)
  return %dx, %dw, %db, %da : tensor<8x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<1xf32>
}
