// RUN: norm-opt %s -norm-to-linalg -split-input-file | FileCheck %s
// RUN: norm-opt %s --pass-pipeline="builtin.module(func.func(norm-to-linalg))" -split-input-file | FileCheck %s
// RUN: not norm-opt %s --pass-pipeline="builtin.module(norm-to-linalg{threads=2})" 2>&1 | FileCheck %s --check-prefix=OPTION

// The pass takes no options.
// OPTION: error: <Pass-Options-Parser>: no such option threads

// LayerNorm: residual sum, then statistics on data shifted by the row's first
// element, then one elementwise op; before_weight rounds n to bf16 first.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[FIRST:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[PARAM:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @layer_norm_residual_before_weight
//  CHECK-SAME: (%[[X:.*]]: tensor<?x64xbf16>, %[[W:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xbf16>, %[[R:.*]]: tensor<?x64xbf16>)
//       CHECK: %[[DIM:.*]] = tensor.dim %[[X]], %{{.*}}
//       CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[R]] : {{.*}})
//       CHECK:   arith.addf %{{.*}}, %{{.*}} : f32
//       CHECK:   arith.truncf %{{.*}} : f32 to bf16
//       CHECK: %[[N:.*]] = arith.uitofp %{{.*}} : i64 to f64
//       CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[FIRST]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[S]], %[[S]] : {{.*}})
//       CHECK:   arith.subf
//       CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<?xf64>) outs(%{{.*}} : tensor<?xf32>)
//       CHECK:   %[[M64:.*]] = arith.divf %{{.*}}, %[[N]] : f64
//       CHECK:   arith.truncf %[[M64]] : f64 to f32
//       CHECK: %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[FIRST]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[S]], %[[S]], %[[MEAN]] : {{.*}})
//       CHECK:   arith.subf
//       CHECK:   %[[DEV:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
//       CHECK:   %[[DEV64:.*]] = arith.extf %[[DEV]] : f32 to f64
//       CHECK:   arith.mulf %[[DEV64]], %[[DEV64]] : f64
//       CHECK: %[[RSTD:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<?xf64>)
//       CHECK:   math.rsqrt
//       CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[FIRST]], #[[ROW]], #[[ROW]], #[[PARAM]], #[[PARAM]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[S]], %[[S]], %[[MEAN]], %[[RSTD]], %[[W]], %[[B]] : {{.*}})
//       CHECK:   %[[NF:.*]] = arith.mulf
//       CHECK:   %[[NT:.*]] = arith.truncf %[[NF]] : f32 to bf16
//       CHECK:   %[[NW:.*]] = arith.extf %[[NT]] : bf16 to f32
//       CHECK:   arith.mulf %[[NW]], %{{.*}} : f32
//       CHECK:   arith.addf
//       CHECK:   arith.truncf %{{.*}} : f32 to bf16
//       CHECK: return %[[Y]], %[[S]]
func.func @layer_norm_residual_before_weight(%x: tensor<?x64xbf16>, %w: tensor<64xf32>, %b: tensor<64xbf16>, %r: tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  %y, %s = norm.layer_norm %x weight(%w) bias(%b) residual(%r) {cast_mode = #norm<cast_mode before_weight>} : (tensor<?x64xbf16>, tensor<64xf32>, tensor<64xbf16>, tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
  return %y, %s : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// -----

// RMSNorm inside_sqrt with Gemma's weight offset, in f32.
// CHECK-LABEL: func @rms_norm_inside_sqrt_offset
//       CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
//       CHECK:   %[[V:.*]] = arith.extf %{{.*}} : f32 to f64
//       CHECK:   %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f64
//       CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
//       CHECK:   arith.divf
//       CHECK:   %[[E:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
//       CHECK:   math.rsqrt %[[E]] : f32
//       CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
//       CHECK:   %[[N:.*]] = arith.mulf
//       CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
//       CHECK:   %[[WO:.*]] = arith.addf %{{.*}}, %[[ONE]] : f32
//       CHECK:   arith.mulf %[[N]], %[[WO]] : f32
//   CHECK-NOT:   arith.truncf
//       CHECK:   linalg.yield
func.func @rms_norm_inside_sqrt_offset(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  %y = norm.rms_norm %x weight(%w) {weight_offset = 1.0 : f32} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// outside_sqrt: 1 / (sqrt(ms) + eps).
// CHECK-LABEL: func @rms_norm_outside_sqrt
//       CHECK: %[[ROOT:.*]] = math.sqrt %{{.*}} : f64
//       CHECK: %[[D:.*]] = arith.addf %[[ROOT]], %{{.*}} : f64
//       CHECK: arith.divf %{{.*}}, %[[D]] : f64
func.func @rms_norm_outside_sqrt(%x: tensor<4x64xf64>) -> tensor<4x64xf64> {
  %y = norm.rms_norm %x {epsilon_mode = #norm<epsilon_mode outside_sqrt>} : (tensor<4x64xf64>) -> tensor<4x64xf64>
  return %y : tensor<4x64xf64>
}

// -----

// clamp: 1 / max(sqrt(ms), eps) with NaN-propagating maximumf, and a scalar
// weight broadcast to every element.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @rms_norm_clamp_scalar_weight
//       CHECK: %[[ROOT:.*]] = math.sqrt %{{.*}} : f32
//       CHECK: %[[M:.*]] = arith.maximumf %[[ROOT]], %{{.*}} : f32
//       CHECK: arith.divf %{{.*}}, %[[M]] : f32
//       CHECK: linalg.generic {indexing_maps = [{{.*}}, {{.*}}, #[[SCALAR]], {{.*}}]
func.func @rms_norm_clamp_scalar_weight(%x: tensor<4x64xf16>, %g: tensor<f32>) -> tensor<4x64xf16> {
  %y = norm.rms_norm %x weight(%g) {epsilon_mode = #norm<epsilon_mode clamp>} : (tensor<4x64xf16>, tensor<f32>) -> tensor<4x64xf16>
  return %y : tensor<4x64xf16>
}

// -----

// DyT: one elementwise op, alpha broadcast from tensor<1xT>, no reduction.
// CHECK-DAG: #[[ALPHA:.*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func @dyt
//   CHECK-NOT: "reduction"
//       CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[ALPHA]], {{.*}}, {{.*}}, {{.*}}], iterator_types = ["parallel", "parallel"]}
//       CHECK:   %[[A:.*]] = arith.mulf
//       CHECK:   math.tanh %[[A]] : f32
//   CHECK-NOT: "reduction"
func.func @dyt(%x: tensor<8x32xf32>, %a: tensor<1xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b) : (tensor<8x32xf32>, tensor<1xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// Several normalized dims (axis -2 of a 3-D input): both are reduced, and N
// is the product of their (dynamic) sizes; compute_type f64 on f32.
// CHECK-DAG: #[[ROW3:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[PARAM3:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @layer_norm_two_normalized_dims
//       CHECK: %[[D1:.*]] = tensor.dim %{{.*}}, %c1
//       CHECK: %[[N:.*]] = arith.muli %[[D1]], %c16
//       CHECK: arith.index_castui %[[N]]
//       CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]
//       CHECK:   arith.extf %{{.*}} : f32 to f64
//       CHECK: linalg.generic {indexing_maps = [{{.*}}, {{.*}}, #[[ROW3]], #[[ROW3]], #[[PARAM3]], #[[PARAM3]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
//       CHECK:   arith.truncf %{{.*}} : f64 to f32
func.func @layer_norm_two_normalized_dims(%x: tensor<2x?x16xf32>, %w: tensor<?x16xf32>, %b: tensor<?x16xf32>) -> tensor<2x?x16xf32> {
  %y = norm.layer_norm %x weight(%w) bias(%b) {axis = -2, compute_type = f64} : (tensor<2x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<2x?x16xf32>
  return %y : tensor<2x?x16xf32>
}

// -----

// A 1-D input: the statistics are rank-0 tensors; row sums accumulate in f64.
// CHECK-LABEL: func @rms_norm_rank1
//       CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<f64>)
//       CHECK:   arith.extf %{{.*}} : f32 to f64
//       CHECK: linalg.generic {{.*}} iterator_types = []} ins(%{{.*}} : tensor<f64>) outs(%{{.*}} : tensor<f32>)
//       CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<128xf32>)
func.func @rms_norm_rank1(%x: tensor<128xf32>) -> tensor<128xf32> {
  %y = norm.rms_norm %x : (tensor<128xf32>) -> tensor<128xf32>
  return %y : tensor<128xf32>
}

// -----

// Non-norm ops are left alone.
// CHECK-LABEL: func @no_norm
//  CHECK-NEXT: arith.addf
//  CHECK-NEXT: return
func.func @no_norm(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// return_stats: rstd is the row factor the normalization multiplies by; the
// mean is the mean of the row shifted by its first element (in f64), plus
// that element, added in f64 by a reduction at the first column only (an
// empty row reads nothing), then rounded once to f32; NaN where rstd is.
// CHECK-LABEL: func @layer_norm_return_stats
//       CHECK: %[[SHIFTED:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}} : tensor<4xf64>) outs(%{{.*}} : tensor<4xf64>)
//       CHECK:   arith.divf %{{.*}}, %{{.*}} : f64
//       CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[SHIFTED]] : tensor<4xf64>) outs(%{{.*}} : tensor<4xf32>)
//       CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}} : tensor<4xf64>) outs(%{{.*}} : tensor<4xf32>)
//       CHECK:   math.rsqrt
//       CHECK: %[[M64:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x64xf32>) outs(%[[SHIFTED]] : tensor<4xf64>)
//       CHECK:   %[[J:.*]] = linalg.index 1 : index
//       CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %{{.*}} : index
//       CHECK:   %[[S0:.*]] = arith.extf %{{.*}} : f32 to f64
//       CHECK:   %[[SUM:.*]] = arith.addf %[[S0]], %{{.*}} : f64
//       CHECK:   arith.select %[[FIRST]], %[[SUM]], %{{.*}} : f64
//       CHECK: %[[M:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[M64]], %[[R]] : tensor<4xf64>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
//       CHECK:   %[[M32:.*]] = arith.truncf %{{.*}} : f64 to f32
//       CHECK:   %[[NAN:.*]] = arith.cmpf uno, %[[RSTD:.*]], %[[RSTD]] : f32
//       CHECK:   arith.select %[[NAN]], %[[RSTD]], %[[M32]] : f32
//       CHECK: %[[Y:.*]] = linalg.generic
//       CHECK: return %[[Y]], %[[M]], %[[R]] : tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>
func.func @layer_norm_return_stats(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y, %m, %r : tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>
}
