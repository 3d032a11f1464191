// Near misses of the gradient raise: backward graphs that differ from a norm
// gradient in how a leaf is read (the statistics through the row map, the
// weight through the parameter map, x and dy as they are), in what is done
// to x or the statistics (|x|, max(x, 0), min(x, 2), min(rstd, 4): equal to
// the gradient on positive values only), or in the element count N (a
// tensor.dim of a tensor whose dims are not counted, a count or constant
// through a cast that changes it), or in what else they read (alpha of
// several elements, a scalar beside the roles) stay decomposed, the IR
// unchanged; the same graphs read correctly are raised.
// RUN: norm-opt %s -split-input-file -norm-raise | FileCheck %s

// The RMSNorm backward, rstd read per row: raised.
// CHECK-LABEL: func.func @rms_rows(
//       CHECK: norm.rms_norm_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @rms_rows(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// rstd of row 0 read for every row.
// CHECK-LABEL: func.func @neg_rms_rstd_row0(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_rstd_row0(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// The LayerNorm backward: raised.
// CHECK-LABEL: func.func @ln_rows(
//       CHECK: norm.layer_norm_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @ln_rows(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %mean, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc, %acc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    %a = arith.addf %g, %sg : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %mean, %rstd, %w, %sums#0, %sums#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %mg = arith.divf %sg, %n : f32
    %d0 = arith.subf %g, %mg : f32
    %d1 = arith.subf %d0, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// LayerNorm, rstd of row 0 read for every row.
// CHECK-LABEL: func.func @neg_ln_rstd_row0(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_ln_rstd_row0(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %mean, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc, %acc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    %a = arith.addf %g, %sg : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %mean, %rstd, %w, %sums#0, %sums#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %mg = arith.divf %sg, %n : f32
    %d0 = arith.subf %g, %mg : f32
    %d1 = arith.subf %d0, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// LayerNorm, the mean of row 0 read for every row.
// CHECK-LABEL: func.func @neg_ln_mean_row0(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_ln_mean_row0(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %mean, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc, %acc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    %a = arith.addf %g, %sg : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %mean, %rstd, %w, %sums#0, %sums#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %mg = arith.divf %sg, %n : f32
    %d0 = arith.subf %g, %mg : f32
    %d1 = arith.subf %d0, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// Normalized over [4, 4], the weight [4, 4] read as is: raised.
// CHECK-LABEL: func.func @rms_square(
//       CHECK: norm.rms_norm_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @rms_square(%dy: tensor<2x4x4xf32>, %x: tensor<2x4x4xf32>, %rstd: tensor<2xf32>, %w: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16.0 : f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2xf32>, tensor<4x4xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2xf32>, tensor<4x4xf32>, tensor<2xf32>) outs(%full : tensor<2x4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x4x4xf32>
  return %dx : tensor<2x4x4xf32>
}

// -----

// The weight read transposed.
// CHECK-LABEL: func.func @neg_rms_weight_transposed(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_weight_transposed(%dy: tensor<2x4x4xf32>, %x: tensor<2x4x4xf32>, %rstd: tensor<2xf32>, %w: tensor<4x4xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16.0 : f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2xf32>, tensor<4x4xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2xf32>, tensor<4x4xf32>, tensor<2xf32>) outs(%full : tensor<2x4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x4x4xf32>
  return %dx : tensor<2x4x4xf32>
}

// -----

// Rows [4, 4], rstd [4, 4] read per row: raised.
// CHECK-LABEL: func.func @rms_rows_2d(
//       CHECK: norm.rms_norm_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @rms_rows_2d(%dy: tensor<4x4x8xf32>, %x: tensor<4x4x8xf32>, %rstd: tensor<4x4xf32>, %w: tensor<8xf32>) -> tensor<4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4x4xf32>
  %full = tensor.empty() : tensor<4x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4x4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<4x4xf32>) outs(%full : tensor<4x4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x4x8xf32>
  return %dx : tensor<4x4x8xf32>
}

// -----

// rstd read with its row dims swapped.
// CHECK-LABEL: func.func @neg_rms_rstd_permuted(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_rstd_permuted(%dy: tensor<4x4x8xf32>, %x: tensor<4x4x8xf32>, %rstd: tensor<4x4xf32>, %w: tensor<8xf32>) -> tensor<4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4x4xf32>
  %full = tensor.empty() : tensor<4x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4x4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<4x4xf32>) outs(%full : tensor<4x4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x4x8xf32>
  return %dx : tensor<4x4x8xf32>
}

// -----

// The mean read with its row dims swapped.
// CHECK-LABEL: func.func @neg_ln_mean_permuted(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_ln_mean_permuted(%dy: tensor<4x4x8xf32>, %x: tensor<4x4x8xf32>, %mean: tensor<4x4xf32>, %rstd: tensor<4x4xf32>, %w: tensor<8xf32>) -> tensor<4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4x4xf32>
  %full = tensor.empty() : tensor<4x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sums:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dy, %x, %mean, %rstd, %w : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<8xf32>) outs(%acc, %acc : tensor<4x4xf32>, tensor<4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    %a = arith.addf %g, %sg : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4x4xf32>, tensor<4x4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %mean, %rstd, %w, %sums#0, %sums#1 : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%full : tensor<4x4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %mg = arith.divf %sg, %n : f32
    %d0 = arith.subf %g, %mg : f32
    %d1 = arith.subf %d0, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x4x8xf32>
  return %dx : tensor<4x4x8xf32>
}

// -----

// x read at (d0, d0, d2) in dx.
// CHECK-LABEL: func.func @neg_rms_x_diagonal(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_x_diagonal(%dy: tensor<4x4x8xf32>, %x: tensor<4x4x8xf32>, %rstd: tensor<4x4xf32>, %w: tensor<8xf32>) -> tensor<4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4x4xf32>
  %full = tensor.empty() : tensor<4x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4x4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<4x4xf32>) outs(%full : tensor<4x4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x4x8xf32>
  return %dx : tensor<4x4x8xf32>
}

// -----

// dy read at (d0, d0, d2) in dx.
// CHECK-LABEL: func.func @neg_rms_dy_diagonal(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_dy_diagonal(%dy: tensor<4x4x8xf32>, %x: tensor<4x4x8xf32>, %rstd: tensor<4x4xf32>, %w: tensor<8xf32>) -> tensor<4x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4x4xf32>
  %full = tensor.empty() : tensor<4x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>) outs(%acc : tensor<4x4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4x4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4xf32>, tensor<8xf32>, tensor<4x4xf32>) outs(%full : tensor<4x4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x4x8xf32>
  return %dx : tensor<4x4x8xf32>
}

// -----

// |x| in place of x.
// CHECK-LABEL: func.func @neg_rms_abs_x(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_abs_x(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %vt = math.absf %v : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %vt = math.absf %v : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// max(x, 0) in place of x.
// CHECK-LABEL: func.func @neg_rms_relu_x(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_relu_x(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %vt = arith.maximumf %v, %zero : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %vt = arith.maximumf %v, %zero : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// min(x, 2) in place of x.
// CHECK-LABEL: func.func @neg_rms_min_x(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_min_x(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %two = arith.constant 2.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %vt = arith.minimumf %v, %two : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %vt = arith.minimumf %v, %two : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// LayerNorm, |x| in place of x.
// CHECK-LABEL: func.func @neg_ln_abs_x(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_ln_abs_x(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %mean, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc, %acc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32):
    %vt = math.absf %v : f32
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %vt, %m : f32
    %xh = arith.mulf %c, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    %a = arith.addf %g, %sg : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %mean, %rstd, %w, %sums#0, %sums#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32, %out: f32):
    %vt = math.absf %v : f32
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %vt, %m : f32
    %xh = arith.mulf %c, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %mg = arith.divf %sg, %n : f32
    %d0 = arith.subf %g, %mg : f32
    %d1 = arith.subf %d0, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// min(rstd, 4) in place of rstd.
// CHECK-LABEL: func.func @neg_rms_min_rstd(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_min_rstd(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %four = arith.constant 4.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %rt = arith.minimumf %r, %four : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %rt : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %rt = arith.minimumf %r, %four : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %rt : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %rt, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// max(rstd, 1) in place of rstd.
// CHECK-LABEL: func.func @neg_rms_max_rstd(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_max_rstd(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %one = arith.constant 1.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %rt = arith.maximumf %r, %one : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %rt : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %rt = arith.maximumf %r, %one : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %rt : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %rt, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// N from tensor.dim of x: raised.
// CHECK-LABEL: func.func @rms_count_dim_x(
//       CHECK: norm.rms_norm_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @rms_count_dim_x(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %dn = tensor.dim %x, %c1 : tensor<4x8xf32>
  %ni = arith.index_cast %dn : index to i64
  %n = arith.sitofp %ni : i64 to f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// N from tensor.dim of another tensor.
// CHECK-LABEL: func.func @neg_rms_count_dim_other(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_dim_other(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>, %other: tensor<4x?xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %dn = tensor.dim %other, %c1 : tensor<4x?xf32>
  %ni = arith.index_cast %dn : index to i64
  %n = arith.sitofp %ni : i64 to f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// N from the size of a row dim (2 statically here, any size at run time in %o).
// CHECK-LABEL: func.func @neg_rms_count_dim_row(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_dim_row(%dy: tensor<2x2xf32>, %x: tensor<2x2xf32>, %rstd: tensor<2xf32>, %w: tensor<2xf32>, %other: tensor<?x2xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %dn = tensor.dim %other, %c0 : tensor<?x2xf32>
  %ni = arith.index_cast %dn : index to i64
  %n = arith.sitofp %ni : i64 to f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) outs(%full : tensor<2x2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x2xf32>
  return %dx : tensor<2x2xf32>
}

// -----

// N = 300 through index_cast to i64: raised.
// CHECK-LABEL: func.func @rms_count_i64(
//       CHECK: norm.rms_norm_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @rms_count_i64(%dy: tensor<2x300xf32>, %x: tensor<2x300xf32>, %rstd: tensor<2xf32>, %w: tensor<300xf32>) -> tensor<2x300xf32> {
  %zero = arith.constant 0.0 : f32
  %ci = arith.constant 300 : index
  %ni = arith.index_cast %ci : index to i64
  %n = arith.sitofp %ni : i64 to f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2xf32>, tensor<300xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2xf32>, tensor<300xf32>, tensor<2xf32>) outs(%full : tensor<2x300xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x300xf32>
  return %dx : tensor<2x300xf32>
}

// -----

// N = 300 through index_cast to i8 (44).
// CHECK-LABEL: func.func @neg_rms_count_i8(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_i8(%dy: tensor<2x300xf32>, %x: tensor<2x300xf32>, %rstd: tensor<2xf32>, %w: tensor<300xf32>) -> tensor<2x300xf32> {
  %zero = arith.constant 0.0 : f32
  %ci = arith.constant 300 : index
  %ni = arith.index_cast %ci : index to i8
  %n = arith.sitofp %ni : i8 to f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2xf32>, tensor<300xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2xf32>, tensor<300xf32>, tensor<2xf32>) outs(%full : tensor<2x300xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x300xf32>
  return %dx : tensor<2x300xf32>
}

// -----

// tensor.dim of x (300) through index_cast to i8 (44).
// CHECK-LABEL: func.func @neg_rms_count_dim_i8(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_dim_i8(%dy: tensor<2x300xf32>, %x: tensor<2x300xf32>, %rstd: tensor<2xf32>, %w: tensor<300xf32>) -> tensor<2x300xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %dn = tensor.dim %x, %c1 : tensor<2x300xf32>
  %ni = arith.index_cast %dn : index to i8
  %n = arith.sitofp %ni : i8 to f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2xf32>, tensor<300xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2xf32>, tensor<300xf32>, tensor<2xf32>) outs(%full : tensor<2x300xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x300xf32>
  return %dx : tensor<2x300xf32>
}

// -----

// uitofp of -8 sign-extended to i32 (4294967288), not 248.
// CHECK-LABEL: func.func @neg_rms_count_uitofp(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_uitofp(%dy: tensor<2x248xf32>, %x: tensor<2x248xf32>, %rstd: tensor<2xf32>, %w: tensor<248xf32>) -> tensor<2x248xf32> {
  %zero = arith.constant 0.0 : f32
  %ci = arith.constant -8 : i8
  %ne = arith.extsi %ci : i8 to i32
  %n = arith.uitofp %ne : i32 to f32
  %row = tensor.empty() : tensor<2xf32>
  %full = tensor.empty() : tensor<2x248xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<2xf32>) -> tensor<2xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x248xf32>, tensor<2x248xf32>, tensor<2xf32>, tensor<248xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<2xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x248xf32>, tensor<2x248xf32>, tensor<2xf32>, tensor<248xf32>, tensor<2xf32>) outs(%full : tensor<2x248xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %v, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<2x248xf32>
  return %dx : tensor<2x248xf32>
}

// -----

// 257 converted to bf16 (256).
// CHECK-LABEL: func.func @neg_rms_count_bf16(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_bf16(%dy: tensor<2x257xbf16>, %x: tensor<2x257xbf16>, %rstd: tensor<2xbf16>, %w: tensor<257xbf16>) -> tensor<2x257xbf16> {
  %zero = arith.constant 0.0 : bf16
  %ci = arith.constant 257 : i64
  %n = arith.sitofp %ci : i64 to bf16
  %row = tensor.empty() : tensor<2xbf16>
  %full = tensor.empty() : tensor<2x257xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%row : tensor<2xbf16>) -> tensor<2xbf16>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x257xbf16>, tensor<2x257xbf16>, tensor<2xbf16>, tensor<257xbf16>) outs(%acc : tensor<2xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %r: bf16, %wv: bf16, %sgx: bf16):
    %g = arith.mulf %d, %wv : bf16
    %xh = arith.mulf %v, %r : bf16
    %gx = arith.mulf %g, %xh : bf16
    %b = arith.addf %gx, %sgx : bf16
    linalg.yield %b : bf16
  } -> (tensor<2xbf16>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x257xbf16>, tensor<2x257xbf16>, tensor<2xbf16>, tensor<257xbf16>, tensor<2xbf16>) outs(%full : tensor<2x257xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %r: bf16, %wv: bf16, %sgx: bf16, %out: bf16):
    %g = arith.mulf %d, %wv : bf16
    %xh = arith.mulf %v, %r : bf16
    %mgx = arith.divf %sgx, %n : bf16
    %t = arith.mulf %xh, %mgx : bf16
    %d1 = arith.subf %g, %t : bf16
    %o = arith.mulf %r, %d1 : bf16
    linalg.yield %o : bf16
  } -> tensor<2x257xbf16>
  return %dx : tensor<2x257xbf16>
}

// -----

// tensor.dim of x (257) converted to bf16 (256).
// CHECK-LABEL: func.func @neg_rms_count_dim_bf16(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_count_dim_bf16(%dy: tensor<2x257xbf16>, %x: tensor<2x257xbf16>, %rstd: tensor<2xbf16>, %w: tensor<257xbf16>) -> tensor<2x257xbf16> {
  %zero = arith.constant 0.0 : bf16
  %c1 = arith.constant 1 : index
  %dn = tensor.dim %x, %c1 : tensor<2x257xbf16>
  %ni = arith.index_cast %dn : index to i64
  %n = arith.sitofp %ni : i64 to bf16
  %row = tensor.empty() : tensor<2xbf16>
  %full = tensor.empty() : tensor<2x257xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%row : tensor<2xbf16>) -> tensor<2xbf16>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<2x257xbf16>, tensor<2x257xbf16>, tensor<2xbf16>, tensor<257xbf16>) outs(%acc : tensor<2xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %r: bf16, %wv: bf16, %sgx: bf16):
    %g = arith.mulf %d, %wv : bf16
    %xh = arith.mulf %v, %r : bf16
    %gx = arith.mulf %g, %xh : bf16
    %b = arith.addf %gx, %sgx : bf16
    linalg.yield %b : bf16
  } -> (tensor<2xbf16>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<2x257xbf16>, tensor<2x257xbf16>, tensor<2xbf16>, tensor<257xbf16>, tensor<2xbf16>) outs(%full : tensor<2x257xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %r: bf16, %wv: bf16, %sgx: bf16, %out: bf16):
    %g = arith.mulf %d, %wv : bf16
    %xh = arith.mulf %v, %r : bf16
    %mgx = arith.divf %sgx, %n : bf16
    %t = arith.mulf %xh, %mgx : bf16
    %d1 = arith.subf %g, %t : bf16
    %o = arith.mulf %r, %d1 : bf16
    linalg.yield %o : bf16
  } -> tensor<2x257xbf16>
  return %dx : tensor<2x257xbf16>
}

// -----

// The DyT backward, alpha a one-element tensor: raised.
// CHECK-LABEL: func.func @dyt_backward(
//       CHECK: norm.dyt_grad
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @dyt_backward(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %alpha: tensor<1xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %one = arith.constant 1.0 : f32
  %full = tensor.empty() : tensor<4x8xf32>
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %alpha, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %a: f32, %wv: f32, %out: f32):
    %av = arith.mulf %a, %v : f32
    %t = math.tanh %av : f32
    %tt = arith.mulf %t, %t : f32
    %s = arith.subf %one, %tt : f32
    %g = arith.mulf %d, %wv : f32
    %ga = arith.mulf %g, %a : f32
    %o = arith.mulf %ga, %s : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// alpha the first element of a tensor of four.
// CHECK-LABEL: func.func @neg_dyt_backward_alpha_of_four(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_dyt_backward_alpha_of_four(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %alpha: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %one = arith.constant 1.0 : f32
  %full = tensor.empty() : tensor<4x8xf32>
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %alpha, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %a: f32, %wv: f32, %out: f32):
    %av = arith.mulf %a, %v : f32
    %t = math.tanh %av : f32
    %tt = arith.mulf %t, %t : f32
    %s = arith.subf %one, %tt : f32
    %g = arith.mulf %d, %wv : f32
    %ga = arith.mulf %g, %a : f32
    %o = arith.mulf %ga, %s : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// A scalar argument read in dx besides the roles.
// CHECK-LABEL: func.func @neg_dyt_backward_extra_scalar(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_dyt_backward_extra_scalar(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %alpha: tensor<1xf32>, %w: tensor<8xf32>, %k: f32) -> tensor<4x8xf32> {
  %full = tensor.empty() : tensor<4x8xf32>
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %alpha, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %a: f32, %wv: f32, %out: f32):
    %av = arith.mulf %a, %v : f32
    %t = math.tanh %av : f32
    %tt = arith.mulf %t, %t : f32
    %kk = arith.divf %k, %k : f32
    %s = arith.subf %kk, %tt : f32
    %g = arith.mulf %d, %wv : f32
    %ga = arith.mulf %g, %a : f32
    %o = arith.mulf %ga, %s : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// min(x, 1e4) in place of x: equal to x on the sampled magnitudes, but a
// clamp outside the roles.
// CHECK-LABEL: func.func @neg_rms_min_x_large(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_min_x_large(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %big = arith.constant 1.0e4 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %vt = arith.minimumf %v, %big : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %vt = arith.minimumf %v, %big : f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// max(rstd, 1e-6) in place of rstd.
// CHECK-LABEL: func.func @neg_ln_max_rstd_tiny(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_ln_max_rstd_tiny(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %tiny = arith.constant 1.0e-6 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %mean, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc, %acc : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32):
    %rt = arith.maximumf %r, %tiny : f32
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %rt : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    %a = arith.addf %g, %sg : f32
    linalg.yield %a, %b : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %mean, %rstd, %w, %sums#0, %sums#1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %wv: f32, %sg: f32, %sgx: f32, %out: f32):
    %rt = arith.maximumf %r, %tiny : f32
    %g = arith.mulf %d, %wv : f32
    %c = arith.subf %v, %m : f32
    %xh = arith.mulf %c, %rt : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %mg = arith.divf %sg, %n : f32
    %d0 = arith.subf %g, %mg : f32
    %d1 = arith.subf %d0, %t : f32
    %o = arith.mulf %rt, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// x rounded through bf16 in an f32 backward.
// CHECK-LABEL: func.func @neg_rms_x_through_bf16(
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: linalg.generic
//   CHECK-NOT: norm.
//       CHECK: return
func.func @neg_rms_x_through_bf16(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sums:1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%dy, %x, %rstd, %w : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32):
    %vt = arith.truncf %v : f32 to bf16
    %vt2 = arith.extf %vt : bf16 to f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt2, %r : f32
    %gx = arith.mulf %g, %xh : f32
    %b = arith.addf %gx, %sgx : f32
    linalg.yield %b : f32
  } -> (tensor<4xf32>)
  %dx = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy, %x, %rstd, %w, %sums#0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%d: f32, %v: f32, %r: f32, %wv: f32, %sgx: f32, %out: f32):
    %vt = arith.truncf %v : f32 to bf16
    %vt2 = arith.extf %vt : bf16 to f32
    %g = arith.mulf %d, %wv : f32
    %xh = arith.mulf %vt2, %r : f32
    %mgx = arith.divf %sgx, %n : f32
    %t = arith.mulf %xh, %mgx : f32
    %d1 = arith.subf %g, %t : f32
    %o = arith.mulf %r, %d1 : f32
    linalg.yield %o : f32
  } -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}
