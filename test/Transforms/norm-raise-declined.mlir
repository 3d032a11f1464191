// Near misses of norm-raise: chains that differ from a norm op in one term,
// one access map, one count or one cast. Each is left unchanged (with one
// remark); the positive case next to it is raised.
// RUN: norm-opt %s -split-input-file -norm-raise | FileCheck %s
// RUN: norm-opt %s -split-input-file -norm-raise=remarks=true -verify-diagnostics -o /dev/null
// RUN: norm-opt %s -split-input-file -norm-raise=assume-no-nans=true | FileCheck %s --check-prefix=NONAN

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// RMSNorm with a weight: raised (the control of the next cases).
// CHECK-LABEL: func @rms_norm_weight
//  CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>)
//       CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] weight(%[[W]])
//  CHECK-NEXT: return %[[Y]]
func.func @rms_norm_weight(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %wv: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ow = arith.mulf %o, %wv : f32
    linalg.yield %ow : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// RMSNorm plus a bias tensor: norm.rms_norm has no bias.
// CHECK-LABEL: func @neg_rms_norm_bias
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_norm_bias(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  // expected-remark @below {{normalization not raised: norm.rms_norm has no bias}}
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w, %b : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %wv: f32, %bv: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ow = arith.mulf %o, %wv : f32
    %ob = arith.addf %ow, %bv : f32
    linalg.yield %ob : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// RMSNorm plus a constant (`+ 1.0`), without a weight.
// CHECK-LABEL: func @neg_rms_norm_constant_bias
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_norm_constant_bias(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  // expected-remark @below {{normalization not raised: norm.rms_norm has no bias}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ob = arith.addf %o, %one : f32
    linalg.yield %ob : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The bias added to a materialized RMSNorm: the RMSNorm is raised and the
// add stays.
// CHECK-LABEL: func @rms_norm_then_bias
//       CHECK: %[[N:.*]] = norm.rms_norm
//       CHECK: arith.addf %[[N]]
func.func @rms_norm_then_bias(%x: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %nrm = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  %y = arith.addf %nrm, %b : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#first = affine_map<(d0, d1) -> (0)>

// The weight read through a constant map (w[0] for every element) is not a
// per-channel weight.
// CHECK-LABEL: func @neg_rms_norm_weight_constant_map
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_norm_weight_constant_map(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  // expected-remark @below {{normalization not raised}}
  %y = linalg.generic {indexing_maps = [#id, #row, #first, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %wv: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ow = arith.mulf %o, %wv : f32
    linalg.yield %ow : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>

// The weight read transposed (w[j, i] for element (i, j)) over a square
// frame.
// CHECK-LABEL: func @neg_rms_norm_weight_transposed
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_norm_weight_transposed(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<8xf32>) -> tensor<8xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %full = tensor.empty() : tensor<8x8xf32>
  // expected-remark @below {{normalization not raised}}
  %y = linalg.generic {indexing_maps = [#id, #row, #tr, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w : tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>) outs(%full : tensor<8x8xf32>) {
  ^bb0(%v: f32, %s: f32, %wv: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ow = arith.mulf %o, %wv : f32
    linalg.yield %ow : f32
  } -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#row0 = affine_map<(d0, d1) -> (0)>

// The row statistic read through a constant map (row 0's mean square for
// every row).
// CHECK-LABEL: func @neg_rms_norm_statistic_constant_map
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_norm_statistic_constant_map(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  // expected-remark @below {{normalization not raised}}
  %y = linalg.generic {indexing_maps = [#id, #row0, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#r1 = affine_map<(d0) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// LayerNorm with a constant bias: raised with a splat bias.
// CHECK-LABEL: func @layer_norm_constant_bias
//       CHECK: %[[B:.*]] = arith.constant dense<5.000000e-01> : tensor<8xf32>
//       CHECK: norm.layer_norm %{{.*}} weight(%{{.*}}) bias(%[[B]])
func.func @layer_norm_constant_bias(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [#r1, #r1], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%row : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %n : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %vs = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %c = arith.subf %in, %m : f32
    %sq = arith.mulf %c, %c : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %vs, %w : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %wv: f32, %out: f32):
    %var = arith.divf %s, %n : f32
    %e = arith.addf %var, %eps : f32
    %r = math.rsqrt %e : f32
    %c = arith.subf %v, %m : f32
    %o = arith.mulf %c, %r : f32
    %ow = arith.mulf %o, %wv : f32
    %ob = arith.addf %ow, %half : f32
    linalg.yield %ob : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#r1 = affine_map<(d0) -> (d0)>

// LayerNorm over a dynamic row: both means divide by x's row length.
// CHECK-LABEL: func @layer_norm_dynamic_row
//       CHECK: norm.layer_norm
//   CHECK-NOT: linalg.generic
func.func @layer_norm_dynamic_row(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c1 = arith.constant 1 : index
  %dx = tensor.dim %x, %c1 : tensor<4x?xf32>
  %ix = arith.index_cast %dx : index to i64
  %nx = arith.sitofp %ix : i64 to f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [#r1, #r1], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%row : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %nx : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %vs = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : tensor<4x?xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %c = arith.subf %in, %m : f32
    %sq = arith.mulf %c, %c : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty(%dx) : tensor<4x?xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %vs : tensor<4x?xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x?xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %out: f32):
    %var = arith.divf %s, %nx : f32
    %e = arith.addf %var, %eps : f32
    %r = math.rsqrt %e : f32
    %c = arith.subf %v, %m : f32
    %o = arith.mulf %c, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#r1 = affine_map<(d0) -> (d0)>

// The mean the LayerNorm subtracts divides by another tensor's row length
// (the variance is centered on a mean over x's, and divides by x's).
// CHECK-LABEL: func @neg_layer_norm_mean_count_other_tensor
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_layer_norm_mean_count_other_tensor(%x: tensor<4x?xf32>, %z: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c1 = arith.constant 1 : index
  %dx = tensor.dim %x, %c1 : tensor<4x?xf32>
  %dz = tensor.dim %z, %c1 : tensor<4x?xf32>
  %ix = arith.index_cast %dx : index to i64
  %nx = arith.sitofp %ix : i64 to f32
  %iz = arith.index_cast %dz : index to i64
  %nz = arith.sitofp %iz : i64 to f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [#r1, #r1], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%row : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %nz : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %mean_x = linalg.generic {indexing_maps = [#r1, #r1], iterator_types = ["parallel"]} ins(%sum : tensor<4xf32>) outs(%row : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %nx : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %vs = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %mean_x : tensor<4x?xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %c = arith.subf %in, %m : f32
    %sq = arith.mulf %c, %c : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty(%dx) : tensor<4x?xf32>
  // expected-remark @below {{normalization not raised: the number of normalized elements is read from the sizes of another tensor than the input}}
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %vs : tensor<4x?xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x?xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %out: f32):
    %var = arith.divf %s, %nx : f32
    %e = arith.addf %var, %eps : f32
    %r = math.rsqrt %e : f32
    %c = arith.subf %v, %m : f32
    %o = arith.mulf %c, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The normalized value is x transposed; the count is read from x's dim 1,
// which is the transposed value's number of rows, not its row length.
// CHECK-LABEL: func @neg_count_of_transposed_input
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_count_of_transposed_input(%x: tensor<?x4xf32>) -> tensor<4x?xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x4xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x4xf32>
  %n = arith.index_cast %d1 : index to i64
  %te = tensor.empty(%d0) : tensor<4x?xf32>
  %t = linalg.transpose ins(%x : tensor<?x4xf32>) outs(%te : tensor<4x?xf32>) permutation = [1, 0]
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%t : tensor<4x?xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty(%d0) : tensor<4x?xf32>
  // expected-remark @below {{normalization not raised: the number of normalized elements is read from the sizes of another tensor than the input}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%t, %ss : tensor<4x?xf32>, tensor<4xf32>) outs(%full : tensor<4x?xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nf = arith.sitofp %n : i64 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A static count read through index_cast to i64: N = 264, raised.
// CHECK-LABEL: func @rms_norm_count_index_cast_i64
//       CHECK: norm.rms_norm
//   CHECK-NOT: linalg.generic
func.func @rms_norm_count_index_cast_i64(%x: tensor<4x264xf32>) -> tensor<4x264xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c = arith.constant 264 : index
  %ci = arith.index_cast %c : index to i64
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x264xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x264xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x264xf32>, tensor<4xf32>) outs(%full : tensor<4x264xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nf = arith.sitofp %ci : i64 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x264xf32>
  return %y : tensor<4x264xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The same count read through i8: 264 wraps to 8.
// CHECK-LABEL: func @neg_count_index_cast_i8
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_count_index_cast_i8(%x: tensor<4x264xf32>) -> tensor<4x264xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c = arith.constant 264 : index
  %ci = arith.index_cast %c : index to i8
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x264xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x264xf32>
  // expected-remark @below {{normalization not raised}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x264xf32>, tensor<4xf32>) outs(%full : tensor<4x264xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nf = arith.sitofp %ci : i8 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x264xf32>
  return %y : tensor<4x264xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A dynamic count read through index_cast to i8 wraps for rows of 128 or
// more elements.
// CHECK-LABEL: func @neg_dynamic_count_i8
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_dynamic_count_i8(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c1 = arith.constant 1 : index
  %dn = tensor.dim %x, %c1 : tensor<4x?xf32>
  %n = arith.index_cast %dn : index to i8
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty(%dn) : tensor<4x?xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x?xf32>, tensor<4xf32>) outs(%full : tensor<4x?xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nf = arith.sitofp %n : i8 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// uitofp(extui(-56 : i8)) is 200: the row length, raised.
// CHECK-LABEL: func @rms_norm_count_uitofp_extui
//       CHECK: norm.rms_norm
//   CHECK-NOT: linalg.generic
func.func @rms_norm_count_uitofp_extui(%x: tensor<4x200xf32>) -> tensor<4x200xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c = arith.constant -56 : i8
  %ce = arith.extui %c : i8 to i32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x200xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x200xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x200xf32>, tensor<4xf32>) outs(%full : tensor<4x200xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nf = arith.uitofp %ce : i32 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x200xf32>
  return %y : tensor<4x200xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// uitofp(extsi(-56 : i8)) is 4294967240, not 200.
// CHECK-LABEL: func @neg_count_uitofp_extsi
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_count_uitofp_extsi(%x: tensor<4x200xf32>) -> tensor<4x200xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c = arith.constant -56 : i8
  %ce = arith.extsi %c : i8 to i32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x200xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x200xf32>
  // expected-remark @below {{normalization not raised}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x200xf32>, tensor<4xf32>) outs(%full : tensor<4x200xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nf = arith.uitofp %ce : i32 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x200xf32>
  return %y : tensor<4x200xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A dynamic count converted to bf16 (257 rounds to 256) before the f32
// arithmetic.
// CHECK-LABEL: func @neg_dynamic_count_through_bf16
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_dynamic_count_through_bf16(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %c1 = arith.constant 1 : index
  %dn = tensor.dim %x, %c1 : tensor<4x?xf32>
  %n = arith.index_cast %dn : index to i64
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x?xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty(%dn) : tensor<4x?xf32>
  // expected-remark @below {{normalization not raised: the element count is rounded to bf16 before the arithmetic in f32}}
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x?xf32>, tensor<4xf32>) outs(%full : tensor<4x?xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %nb = arith.sitofp %n : i64 to bf16
    %nf = arith.extf %nb : bf16 to f32
    %ms = arith.divf %s, %nf : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    linalg.yield %o : f32
  } -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The sum of squares reads another result's running accumulator (a running
// maximum from -inf), not that result's initial value.
// CHECK-LABEL: func @neg_reduction_reads_other_accumulator
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_reduction_reads_other_accumulator(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %mx = linalg.fill ins(%ninf : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%mx, %acc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %m2 = arith.maximumf %m, %sq : f32
    %t = arith.maximumf %sq, %m : f32
    %s = arith.addf %t, %out : f32
    linalg.yield %m2, %s : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %full = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %r#1 : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %e : f32
    %o = arith.mulf %v, %rs : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A second sum along the row of the per-row sum of squares is N times it;
// divided by N it is the sum of squares, not their mean.
// CHECK-LABEL: func @neg_sum_of_row_value
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_sum_of_row_value(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %nss = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %t: f32, %out: f32):
    %s = arith.addf %t, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %nss : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %e : f32
    %o = arith.mulf %v, %rs : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Sums over one dim each (TOSA's per-axis reduce_sum) are one sum over both:
// raised with axis -2.
// CHECK-LABEL: func @rms_norm_partial_sums
//       CHECK: norm.rms_norm %{{.*}} {axis = -2 : i64
func.func @rms_norm_partial_sums(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %inv = "tosa.const"() <{values = dense<0.03125> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() <{values = dense<1.0e-5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %sq = tosa.mul %x, %x, %shift : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  %s2 = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %s1 = tosa.reduce_sum %s2 {axis = 1 : i32} : (tensor<2x4x1xf32>) -> tensor<2x1x1xf32>
  %ms = tosa.mul %s1, %inv, %shift : (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x1x1xf32>
  %e = tosa.add %ms, %eps : (tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
  %r = tosa.rsqrt %e : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %y = tosa.mul %x, %r, %shift : (tensor<2x4x8xf32>, tensor<2x1x1xf32>, tensor<1xi8>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Quantization by a scale filled from an f32 scalar: raised.
// CHECK-LABEL: func @quantize_fill_scale
//  CHECK-SAME: (%[[Y:.*]]: tensor<4x8xf32>, %[[S:.*]]: f32)
//       CHECK: %[[T:.*]] = tensor.from_elements %[[S]] : tensor<f32>
//       CHECK: norm.quantize %[[Y]] scale(%[[T]])
func.func @quantize_fill_scale(%y: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf8E4M3FN> {
  %empty = tensor.empty() : tensor<4x8xf32>
  %sb = linalg.fill ins(%s : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = arith.divf %y, %sb : tensor<4x8xf32>
  %lo = arith.constant dense<-448.0> : tensor<4x8xf32>
  %hi = arith.constant dense<448.0> : tensor<4x8xf32>
  %a = arith.maximumf %v, %lo : tensor<4x8xf32>
  %b = arith.minimumf %a, %hi : tensor<4x8xf32>
  %q = arith.truncf %b : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q : tensor<4x8xf8E4M3FN>
}

// -----

// RMSNorm with epsilon_mode clamp written as torch-mlir's clamp_min,
// `select(sqrt(ms) < eps (ult), eps, sqrt(ms))`: a NaN statistic (a row
// holding a NaN) takes eps, where the op's clamp propagates it: declined
// (raised with assume-no-nans).
// CHECK-LABEL: func @rms_norm_clamp_select_unordered
//   CHECK-NOT: norm.rms_norm
// NONAN-LABEL: func @rms_norm_clamp_select_unordered
//       NONAN: norm.rms_norm %{{.*}} {epsilon = 9.99999974E-6 : f32, epsilon_mode = #norm<epsilon_mode clamp>}
func.func @rms_norm_clamp_select_unordered(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%zero : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %sq, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  // expected-remark @below {{normalization not raised: a NaN would take the clamp's bound or the other operand here ('arith.select' on 'arith.cmpf ult'); the norm op propagates it (assume-no-nans or fastmath<nnan> to raise)}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %n = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %ms = arith.divf %s, %n : f32
    %r = math.sqrt %ms : f32
    %c = arith.cmpf ult, %r, %eps : f32
    %d = arith.select %c, %eps, %r : f32
    %o = arith.divf %in, %d : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The same clamp with an ordered compare (a NaN keeps sqrt(ms)), and with
// fastmath<nnan> on the unordered one: raised.
// CHECK-LABEL: func @rms_norm_clamp_select_ordered_or_nnan
//       CHECK: norm.rms_norm %{{.*}} {epsilon = 9.99999974E-6 : f32, epsilon_mode = #norm<epsilon_mode clamp>}
//       CHECK: norm.rms_norm %{{.*}} {epsilon = 9.99999974E-6 : f32, epsilon_mode = #norm<epsilon_mode clamp>}
func.func @rms_norm_clamp_select_ordered_or_nnan(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%zero : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %sq, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %n = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %ms = arith.divf %s, %n : f32
    %r = math.sqrt %ms : f32
    %c = arith.cmpf olt, %r, %eps : f32
    %d = arith.select %c, %eps, %r : f32
    %o = arith.divf %in, %d : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  %ss2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%zero : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %sq, %acc : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %y2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %ss2 : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %n = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %ms = arith.divf %s, %n : f32
    %r = math.sqrt %ms : f32
    %c = arith.cmpf ult, %r, %eps fastmath<nnan> : f32
    %d = arith.select %c, %eps, %r : f32
    %o = arith.divf %in, %d : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %y, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}
