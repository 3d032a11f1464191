// RUN: norm-opt %s -split-input-file -norm-fuse-residual | FileCheck %s
// RUN: norm-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(norm-fuse-residual))" | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-fuse-residual=remarks=true -verify-diagnostics -o /dev/null
//
// Two pre-norm blocks and a final norm from torch-mlir (linalg and TOSA):
// norm-raise finds the five RMSNorms, norm-fuse-residual the four residual
// adds, with no candidate left over.
// RUN: norm-opt %S/Inputs/torch-block-linalg.mlir -norm-raise -norm-fuse-residual | FileCheck %s --check-prefix=BLOCK
// RUN: norm-opt %S/Inputs/torch-block-tosa.mlir -norm-raise -norm-fuse-residual | FileCheck %s --check-prefix=BLOCK
// RUN: norm-opt %S/Inputs/torch-block-linalg.mlir -norm-raise=remarks=true -norm-fuse-residual=remarks=true -o /dev/null 2>&1 | count 0
// RUN: norm-opt %S/Inputs/torch-block-tosa.mlir -norm-raise=remarks=true -norm-fuse-residual=remarks=true -o /dev/null 2>&1 | count 0

// A chain of pre-norm blocks fuses at every step; the last sum, used by the
// return, is the last op's residual_out.
// CHECK-LABEL: func @chain
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[A:.*]]: tensor<4x8xf32>, %[[M:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>)
//   CHECK-NOT: arith.addf
//       CHECK: %[[Y:.*]], %[[H:.*]] = norm.rms_norm %[[X]] weight(%[[W]]) residual(%[[A]]) {epsilon = 9.99999974E-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
//       CHECK: %[[Y2:.*]], %[[H2:.*]] = norm.rms_norm %[[H]] weight(%[[W]]) residual(%[[M]]) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
//   CHECK-NOT: arith.addf
//       CHECK: return %[[Y]], %[[Y2]], %[[H2]]
func.func @chain(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %m: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = arith.addf %x, %a : tensor<4x8xf32>
  %y = norm.rms_norm %h weight(%w) {epsilon = 9.99999974E-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %h2 = arith.addf %h, %m : tensor<4x8xf32>
  %y2 = norm.rms_norm %h2 weight(%w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y, %y2, %h2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// linalg.add feeding a LayerNorm over two dims; all attributes are kept.
// CHECK-LABEL: func @linalg_add_layer_norm
//  CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xbf16>, %[[R:.*]]: tensor<2x4x8xbf16>, %[[W:.*]]: tensor<4x8xf32>)
//       CHECK: %[[Y:.*]], %[[S:.*]] = norm.layer_norm %[[X]] weight(%[[W]]) residual(%[[R]]) {axis = -2 : i64, cast_mode = #norm<cast_mode before_weight>, compute_type = f64, epsilon = 1.000000e-03 : f32} : (tensor<2x4x8xbf16>, tensor<4x8xf32>, tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>)
//  CHECK-NEXT: return %[[Y]]
func.func @linalg_add_layer_norm(%x: tensor<2x4x8xbf16>, %r: tensor<2x4x8xbf16>, %w: tensor<4x8xf32>) -> tensor<2x4x8xbf16> {
  %e = tensor.empty() : tensor<2x4x8xbf16>
  %s = linalg.add ins(%x, %r : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) outs(%e : tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  %y = norm.layer_norm %s weight(%w) {axis = -2 : i64, epsilon = 1.0e-3 : f32, compute_type = f64, cast_mode = #norm<cast_mode before_weight>} : (tensor<2x4x8xbf16>, tensor<4x8xf32>) -> tensor<2x4x8xbf16>
  return %y : tensor<2x4x8xbf16>
}

// -----

// An elementwise generic adding in f32 and rounding once to bf16 computes
// the same sum as the op; the sum's other use takes residual_out.
// CHECK-LABEL: func @generic_widened_add_dyt
//  CHECK-SAME: (%[[X:.*]]: tensor<?x8xbf16>, %[[R:.*]]: tensor<?x8xbf16>, %[[A:.*]]: tensor<bf16>)
//       CHECK: %[[Y:.*]], %[[S:.*]] = norm.dyt %[[X]] alpha(%[[A]]) residual(%[[R]]) : (tensor<?x8xbf16>, tensor<bf16>, tensor<?x8xbf16>) -> (tensor<?x8xbf16>, tensor<?x8xbf16>)
//  CHECK-NEXT: return %[[Y]], %[[S]]
func.func @generic_widened_add_dyt(%x: tensor<?x8xbf16>, %r: tensor<?x8xbf16>, %a: tensor<bf16>) -> (tensor<?x8xbf16>, tensor<?x8xbf16>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xbf16>
  %e = tensor.empty(%d) : tensor<?x8xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<?x8xbf16>, tensor<?x8xbf16>) outs(%e : tensor<?x8xbf16>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: bf16):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.addf %1, %0 : f32
    %3 = arith.truncf %2 : f32 to bf16
    linalg.yield %3 : bf16
  } -> tensor<?x8xbf16>
  %y = norm.dyt %s alpha(%a) : (tensor<?x8xbf16>, tensor<bf16>) -> tensor<?x8xbf16>
  return %y, %s : tensor<?x8xbf16>, tensor<?x8xbf16>
}

// -----

// tosa.add without broadcasting feeding an RMSNorm with Gemma's offset.
// CHECK-LABEL: func @tosa_add_rms_norm
//  CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[R:.*]]: tensor<2x8xf32>, %[[W:.*]]: tensor<8xf32>)
//       CHECK: %[[Y:.*]], %{{.*}} = norm.rms_norm %[[X]] weight(%[[W]]) residual(%[[R]]) {weight_offset = 1.000000e+00 : f32}
//  CHECK-NEXT: return %[[Y]]
func.func @tosa_add_rms_norm(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %s = tosa.add %x, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = norm.rms_norm %s weight(%w) {weight_offset = 1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The sum is used before the norm: the fused op goes right after the add.
// CHECK-LABEL: func @sum_used_before_norm
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<4x8xf32>)
//       CHECK: %[[Y:.*]], %[[S:.*]] = norm.layer_norm %[[X]] residual(%[[R]])
//       CHECK: %[[E:.*]] = math.exp %[[S]]
//       CHECK: return %[[Y]], %[[E]]
func.func @sum_used_before_norm(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = arith.addf %x, %r : tensor<4x8xf32>
  %e = math.exp %s : tensor<4x8xf32>
  %y = norm.layer_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %e : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Negative: a broadcasting add is not the op's residual.
// CHECK-LABEL: func @neg_broadcasting_add
//       CHECK: tosa.add
//       CHECK: norm.layer_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @neg_broadcasting_add(%x: tensor<4x8xf32>, %r: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %s = tosa.add %x, %r : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // expected-remark @below {{residual add not fused: the add broadcasts an operand or adds another type}}
  %y = norm.layer_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Negative: a generic reading one operand transposed.
// CHECK-LABEL: func @neg_transposed_add
//       CHECK: linalg.generic
//       CHECK: norm.rms_norm %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @neg_transposed_add(%x: tensor<8x8xf32>, %r: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<8x8xf32>
  // expected-remark @below {{residual add not fused: the add broadcasts or transposes an operand}}
  %y = norm.rms_norm %s : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Negative: the norm op already has a residual.
// CHECK-LABEL: func @neg_already_fused
//       CHECK: arith.addf
//       CHECK: norm.rms_norm %{{.*}} residual(%{{.*}})
func.func @neg_already_fused(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.addf %x, %a : tensor<4x8xf32>
  // expected-remark @below {{residual add not fused: the norm op already has a residual}}
  %y, %t = norm.rms_norm %s residual(%r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// Not a candidate: the input is a product.
// CHECK-LABEL: func @not_an_add
//       CHECK: arith.mulf
//       CHECK: norm.rms_norm %{{.*}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @not_an_add(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.mulf %x, %a : tensor<4x8xf32>
  %y = norm.rms_norm %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// torch-mlir pre-norm model (Inputs/torch-block-*.mlir)
//===----------------------------------------------------------------------===//

// BLOCK-LABEL: func.func @forward(
//   BLOCK-SAME: %[[X:.*]]: tensor<2x4x32xf32>
//        BLOCK: %[[N1:.*]] = norm.rms_norm %[[X]] weight(%{{.*}}) : (tensor<2x4x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
//        BLOCK: {{linalg.matmul|tosa.matmul}}
//        BLOCK: %[[N2:.*]], %[[H1:.*]] = norm.rms_norm %[[X]] weight(%{{.*}}) residual(%{{.*}})
//        BLOCK: {{linalg.matmul|tosa.matmul}}
//        BLOCK: {{linalg.matmul|tosa.matmul}}
//        BLOCK: %[[N3:.*]], %[[H2:.*]] = norm.rms_norm %[[H1]] weight(%{{.*}}) residual(%{{.*}})
//        BLOCK: {{linalg.matmul|tosa.matmul}}
//        BLOCK: %[[N4:.*]], %[[H3:.*]] = norm.rms_norm %[[H2]] weight(%{{.*}}) residual(%{{.*}})
//        BLOCK: {{linalg.matmul|tosa.matmul}}
//        BLOCK: {{linalg.matmul|tosa.matmul}}
//        BLOCK: %[[N5:.*]], %{{.*}} = norm.rms_norm %[[H3]] weight(%{{.*}}) residual(%{{.*}})
//    BLOCK-NOT: {{arith.addf|tosa.add|linalg.add}}
//        BLOCK: return %[[N5]]

// -----

// The statistics of a training forward follow the fused op (after
// residual_out).
// CHECK-LABEL: func @fuse_keeps_stats
//  CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[H:.*]]: tensor<4x64xf32>, %[[W:.*]]: tensor<64xf32>)
//       CHECK: %[[Y:.*]], %[[S:.*]], %[[M:.*]], %[[R:.*]] = norm.layer_norm %[[X]] weight(%[[W]]) residual(%[[H]]) {epsilon = 1.000000e-03 : f32, return_stats} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>)
//       CHECK: return %[[Y]], %[[M]], %[[R]], %[[S]]
func.func @fuse_keeps_stats(%x: tensor<4x64xf32>, %h: tensor<4x64xf32>, %w: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %s = linalg.add ins(%x, %h : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %y, %m, %r = norm.layer_norm %s weight(%w) {epsilon = 1.0e-3 : f32, return_stats} : (tensor<4x64xf32>, tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %m, %r, %s : tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>
}
