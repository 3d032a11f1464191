// RUN: norm-opt %s -norm-lower-cpu="vector-width=256" -split-input-file | FileCheck %s
// RUN: norm-opt %s --pass-pipeline="builtin.module(func.func(norm-lower-cpu{vector-width=512 threads=2}))" -split-input-file | FileCheck %s --check-prefix=MT

// RMSNorm over rows of 4096 f32 with 256-bit vectors: 4 registers of 8 lanes
// per step (vector<32xf32>), blocks of 64 steps summed in f32 and added in
// f64, one reduction per row, then the output sweep; no tail since 4096 is a
// multiple of 32. With dynamic rows the output may be large: non-temporal
// stores from ceil(8 MiB / 16 KiB) = 512 rows on (decided at run time by
// norm-forall-to-loops), and the row, swept twice, asks for the next row to
// be prefetched.
// CHECK-LABEL: func @rms_norm_rows
//  CHECK-SAME: (%[[X:.*]]: tensor<?x4096xf32>, %[[W:.*]]: tensor<4096xf32>)
//       CHECK: %[[ROWS:.*]] = tensor.dim %[[X]], %c0
//       CHECK: %[[INIT:.*]] = tensor.empty(%[[ROWS]]) : tensor<?x4096xf32>
//       CHECK: %[[RES:.*]] = scf.forall (%[[I:.*]]) in (%[[ROWS]]) shared_outs(%[[OUT:.*]] = %[[INIT]])
//       CHECK:   %[[ROW:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [1, 4096] [1, 1] : tensor<?x4096xf32> to tensor<4096xf32>
//       CHECK:   scf.for %{{.*}} = %c0 to %c4096 step %c2048 iter_args(%{{.*}} = %{{.*}}) -> (vector<32xf64>)
//       CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c32 iter_args(%{{.*}} = %{{.*}}) -> (vector<32xf32>)
//       CHECK:       vector.transfer_read %[[X]][%[[I]], %[[J]]], %{{.*}} {in_bounds = [true]} : tensor<?x4096xf32>, vector<32xf32>
//       CHECK:     arith.extf %{{.*}} : vector<32xf32> to vector<32xf64>
//   CHECK-NOT:   vector.create_mask
//       CHECK:   vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<32xf64> into f64
//       CHECK:   math.rsqrt %{{.*}} : f32
//       CHECK:   scf.for %[[K:.*]] = %c0 to %c4096 step %c32 iter_args(%[[ACC:.*]] = %[[ROW]]) -> (tensor<4096xf32>)
//       CHECK:     vector.transfer_read %[[W]][%[[K]]]
//       CHECK:     vector.transfer_write %{{.*}}, %[[ACC]][%[[K]]] {in_bounds = [true]} : vector<32xf32>, tensor<4096xf32>
//       CHECK:   scf.forall.in_parallel
//       CHECK:     tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[I]], 0] [1, 4096] [1, 1]
//       CHECK: } {norm.nontemporal_min_trips = 512 : i64, norm.nontemporal_stores, norm.prefetch_next_row, norm.sequential}
//       CHECK: return %[[RES]]
// MT-LABEL: func @rms_norm_rows
// With threads = 2 and dynamic rows, one loop writes the results; it runs
// in parallel from ceil(131072 / 4096) = 32 rows on, which
// norm-forall-to-loops decides at run time after bufferization.
//   MT-NOT: scf.if
//       MT: scf.forall
//       MT:   vector.transfer_read {{.*}} vector<64xf32>
//       MT: } {norm.nontemporal_min_trips = 512 : i64, norm.nontemporal_stores, norm.parallel_min_trips = 32 : i64, norm.prefetch_next_row}
//  MT-NEXT: return
func.func @rms_norm_rows(%x: tensor<?x4096xf32>, %w: tensor<4096xf32>) -> tensor<?x4096xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x4096xf32>, tensor<4096xf32>) -> tensor<?x4096xf32>
  return %y : tensor<?x4096xf32>
}

// -----

// LayerNorm on bf16 rows of 100: loads stay bf16 and widen in registers; the
// row is shifted by the mean of its first vector; one sweep sums d and d^2
// (and writes the residual sum), and only rows where E[d]^2 > E[d^2] / 2
// take a second, centered sweep; the tail is one masked step; a small
// static output keeps regular stores.
// CHECK-LABEL: func @layer_norm_bf16_tail_residual
//       CHECK: scf.forall
//       CHECK:   %[[FIRSTMASK:.*]] = vector.create_mask %c32 : vector<32xi1>
//       CHECK:   vector.transfer_read %{{.*}}, %[[FIRSTMASK]] {in_bounds = [true]} : tensor<4x100xbf16>, vector<32xbf16>
//       CHECK:   %[[FIRSTSUM:.*]] = vector.reduction <add>, %{{.*}} : vector<32xf32> into f32
//       CHECK:   %[[FIRSTSUM64:.*]] = arith.extf %[[FIRSTSUM]] : f32 to f64
//       CHECK:   arith.divf %[[FIRSTSUM64]], %{{.*}} : f64
//       CHECK:   scf.for {{.*}} -> (vector<32xf64>, vector<32xf64>, tensor<100xbf16>)
//       CHECK:     scf.for {{.*}} -> (vector<32xf32>, vector<32xf32>, tensor<100xbf16>)
//       CHECK:       arith.extf %{{.*}} : vector<32xbf16> to vector<32xf32>
//       CHECK:       %[[D:.*]] = arith.subf
//       CHECK:       %[[D2:.*]] = arith.mulf %[[D]], %[[D]]
//   CHECK-DAG:       arith.addf %{{.*}}, %[[D]] : vector<32xf32>
//   CHECK-DAG:       arith.addf %{{.*}}, %[[D2]] : vector<32xf32>
//       CHECK:       vector.transfer_write %{{.*}} : vector<32xbf16>, tensor<100xbf16>
//       CHECK:   %[[MASK:.*]] = vector.create_mask %c4 : vector<32xi1>
//       CHECK:   arith.select %[[MASK]]
//       CHECK:   arith.select %[[MASK]]
//       CHECK:   %[[S1:.*]] = vector.reduction <add>, %{{.*}} : vector<32xf64> into f64
//       CHECK:   %[[S2:.*]] = vector.reduction <add>, %{{.*}} : vector<32xf64> into f64
//       CHECK:   %[[MEAN:.*]] = arith.divf %[[S1]]
//       CHECK:   %[[MEANSQ:.*]] = arith.divf %[[S2]]
//       CHECK:   %[[M2:.*]] = arith.mulf %[[MEAN]], %[[MEAN]] : f64
//       CHECK:   %[[VAR:.*]] = arith.subf %[[MEANSQ]], %[[M2]] : f64
//       CHECK:   %[[TWICE:.*]] = arith.mulf %[[VAR]], %{{.*}} : f64
//       CHECK:   %[[OK:.*]] = arith.cmpf oge, %[[TWICE]], %[[MEANSQ]] : f64
//       CHECK:   %[[FINITE:.*]] = arith.cmpf olt, %[[MEANSQ]], %{{.*}} : f64
//       CHECK:   %[[ACCURATE:.*]] = arith.andi %[[OK]], %[[FINITE]] : i1
//       CHECK:   scf.if %[[ACCURATE]] -> (f64) {
//       CHECK:     scf.yield %[[VAR]] : f64
//       CHECK:   } else {
//       CHECK:     scf.for
//       CHECK:       arith.subf
//       CHECK:       %[[C:.*]] = arith.subf
//       CHECK:       arith.mulf %[[C]], %[[C]] : vector<32xf32>
//       CHECK:     %[[SQUARES:.*]] = vector.reduction <add>
// The squares overflowed f32 (their sum is +inf): again, scaled by 2^-95.
//       CHECK:     %[[OVER:.*]] = arith.cmpf oeq, %[[SQUARES]], %{{.*}} : f64
//       CHECK:     scf.if %[[OVER]] -> (f64) {
//       CHECK:       scf.for
//       CHECK:         arith.subf
//       CHECK:         %[[C2:.*]] = arith.subf
//       CHECK:         %[[SCALED:.*]] = arith.mulf %[[C2]], %{{.*}} : vector<32xf32>
//       CHECK:         arith.mulf %[[SCALED]], %[[SCALED]] : vector<32xf32>
//       CHECK:       vector.reduction <add>
//       CHECK:     } else {
//       CHECK:   }
//       CHECK:   math.rsqrt
//       CHECK:   arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
//   CHECK-NOT: norm.nontemporal_stores
//       CHECK: } {norm.sequential}
func.func @layer_norm_bf16_tail_residual(%x: tensor<4x100xbf16>, %w: tensor<100xbf16>, %b: tensor<100xbf16>, %r: tensor<4x100xbf16>) -> (tensor<4x100xbf16>, tensor<4x100xbf16>) {
  %y, %s = norm.layer_norm %x weight(%w) bias(%b) residual(%r) : (tensor<4x100xbf16>, tensor<100xbf16>, tensor<100xbf16>, tensor<4x100xbf16>) -> (tensor<4x100xbf16>, tensor<4x100xbf16>)
  return %y, %s : tensor<4x100xbf16>, tensor<4x100xbf16>
}

// -----

// DyT has a single sweep; tanh becomes the rational function of
// TanhApproximation.h, chosen for the result type: [7/8] on x clamped to
// [-8, 8] for f32 (3 + 4 multiply-adds, one division; NaN passes the
// unordered clamp), no math.tanh and no call.
// CHECK-LABEL: func @dyt_rational_tanh_f32
//   CHECK-DAG: %[[HI:.*]] = arith.constant dense<8.000000e+00> : vector<32xf32>
//   CHECK-DAG: %[[LO:.*]] = arith.constant dense<-8.000000e+00> : vector<32xf32>
//       CHECK: tensor.extract %{{.*}}[] : tensor<f32>
//       CHECK: scf.forall
//   CHECK-NOT:   vector.reduction
//       CHECK:   %[[X:.*]] = arith.mulf
//       CHECK:   %[[BELOW:.*]] = arith.cmpf ult, %[[X]], %[[HI]]
//       CHECK:   %[[C1:.*]] = arith.select %[[BELOW]], %[[X]], %[[HI]]
//       CHECK:   %[[ABOVE:.*]] = arith.cmpf ugt, %[[C1]], %[[LO]]
//       CHECK:   %[[C:.*]] = arith.select %[[ABOVE]], %[[C1]], %[[LO]]
//       CHECK:   %[[T:.*]] = arith.mulf %[[C]], %[[C]]
// CHECK-COUNT-3:   math.fma %{{.*}}, %[[T]], %{{.*}} : vector<32xf32>
//       CHECK:   %[[NUM:.*]] = arith.mulf %[[C]], %{{.*}}
// CHECK-COUNT-4:   math.fma %{{.*}}, %[[T]], %{{.*}} : vector<32xf32>
//  CHECK-NEXT:   arith.divf %[[NUM]], %{{.*}} : vector<32xf32>
//   CHECK-NOT:   math.tanh
//   CHECK-NOT:   math.fma
//       CHECK:   vector.transfer_write
func.func @dyt_rational_tanh_f32(%x: tensor<8x64xf32>, %a: tensor<f32>) -> tensor<8x64xf32> {
  %y = norm.dyt %x alpha(%a) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// bf16 results take the [5/4] rational on [-5.1, 5.1]: 2 + 2 multiply-adds.
// CHECK-LABEL: func @dyt_rational_tanh_bf16
//   CHECK-DAG: arith.constant dense<5.100000e+00> : vector<32xf32>
//       CHECK: scf.forall
//       CHECK:   %[[T:.*]] = arith.mulf %[[C:.*]], %[[C]] : vector<32xf32>
// CHECK-COUNT-2:   math.fma %{{.*}}, %[[T]], %{{.*}} : vector<32xf32>
//       CHECK:   arith.mulf %[[C]], %{{.*}}
// CHECK-COUNT-2:   math.fma %{{.*}}, %[[T]], %{{.*}} : vector<32xf32>
//  CHECK-NEXT:   arith.divf
//   CHECK-NOT:   math.fma
//       CHECK:   arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
func.func @dyt_rational_tanh_bf16(%x: tensor<8x64xbf16>, %a: tensor<f32>) -> tensor<8x64xbf16> {
  %y = norm.dyt %x alpha(%a) : (tensor<8x64xbf16>, tensor<f32>) -> tensor<8x64xbf16>
  return %y : tensor<8x64xbf16>
}

// -----

// An f64 compute type keeps math.tanh (expanded later by the pipeline), and
// the pass leaves other tanh ops of the function alone.
// CHECK-LABEL: func @dyt_f64_compute_keeps_tanh
//       CHECK: math.tanh %{{.*}} : f32
//       CHECK: scf.forall
//       CHECK:   math.tanh %{{.*}} : vector<16xf64>
func.func @dyt_f64_compute_keeps_tanh(%x: tensor<8x64xf32>, %a: tensor<f32>, %u: f32) -> (tensor<8x64xf32>, f32) {
  %t = math.tanh %u : f32
  %y = norm.dyt %x alpha(%a) {compute_type = f64} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %y, %t : tensor<8x64xf32>, f32
}

// -----

// A 3-D input normalized over its last two dims is collapsed to rows of 48
// and expanded back.
// CHECK-LABEL: func @rms_norm_3d_axis
//       CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<2x3x16xf16> into tensor<2x48xf16>
//       CHECK: scf.forall
//       CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 3, 16] : tensor<2x48xf16> into tensor<2x3x16xf16>
func.func @rms_norm_3d_axis(%x: tensor<2x3x16xf16>) -> tensor<2x3x16xf16> {
  %y = norm.rms_norm %x {axis = -2} : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  return %y : tensor<2x3x16xf16>
}

// -----

// bf16 statistics sweeps widen without lane-crossing shuffles: a sum of
// squares does not depend on the lane order, so the even elements (shifted
// up) are followed by the odd ones (masked). The output sweep widens in
// order.
// CHECK-LABEL: func @rms_norm_bf16_unordered_sum
//   CHECK-DAG: %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
//   CHECK-DAG: %[[HIGH:.*]] = arith.constant dense<-65536> : vector<16xi32>
//       CHECK: scf.forall
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       %[[V:.*]] = vector.transfer_read {{.*}} : tensor<8x256xbf16>, vector<32xbf16>
//       CHECK:       %[[PAIRS:.*]] = vector.bitcast %[[V]] : vector<32xbf16> to vector<16xi32>
//       CHECK:       %[[EVENBITS:.*]] = arith.shli %[[PAIRS]], %[[SIXTEEN]]
//       CHECK:       %[[EVEN:.*]] = arith.bitcast %[[EVENBITS]] : vector<16xi32> to vector<16xf32>
//       CHECK:       %[[ODDBITS:.*]] = arith.andi %[[PAIRS]], %[[HIGH]]
//       CHECK:       %[[ODD:.*]] = arith.bitcast %[[ODDBITS]] : vector<16xi32> to vector<16xf32>
//       CHECK:       %[[ALL:.*]] = vector.shuffle %[[EVEN]], %[[ODD]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]
//       CHECK:       arith.mulf %[[ALL]], %[[ALL]] : vector<32xf32>
//       CHECK:   vector.reduction <add>
//       CHECK:   scf.for
//       CHECK:     arith.extf %{{.*}} : vector<32xbf16> to vector<32xf32>
//       CHECK:     arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
func.func @rms_norm_bf16_unordered_sum(%x: tensor<8x256xbf16>, %w: tensor<256xbf16>) -> tensor<8x256xbf16> {
  %y = norm.rms_norm %x weight(%w) : (tensor<8x256xbf16>, tensor<256xbf16>) -> tensor<8x256xbf16>
  return %y : tensor<8x256xbf16>
}

// -----

// Non-temporal stores from 8 MiB of results (the default threshold), all
// results counted: one 4 MiB output keeps regular stores, y and
// residual_out of 4 MiB each bypass the caches.
// CHECK-LABEL: func @nontemporal_counts_all_results
//       CHECK: scf.forall
//       CHECK: } {norm.sequential}
//       CHECK: scf.forall
//       CHECK: } {norm.nontemporal_stores, norm.prefetch_next_row, norm.sequential}
func.func @nontemporal_counts_all_results(%x: tensor<1024x1024xf32>, %r: tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %y = norm.rms_norm %x : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %z, %s = norm.rms_norm %x residual(%r) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>)
  return %y, %z, %s : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
}

// -----

// A statically single-row input (decode) gets no loop over rows: the row is
// written straight into [1, N] results, which bufferize in place.
// CHECK-LABEL: func @rms_norm_one_row
//   CHECK-NOT: scf.forall
//       CHECK: %[[Y:.*]] = tensor.empty() : tensor<1x4096xf32>
//       CHECK: scf.for %[[K:.*]] = %c0 to %c4096 step %c32 iter_args(%[[ACC:.*]] = %[[Y]]) -> (tensor<1x4096xf32>)
//       CHECK:   vector.transfer_write %{{.*}}, %[[ACC]][%c0, %[[K]]] {in_bounds = [true]} : vector<32xf32>, tensor<1x4096xf32>
// MT-LABEL: func @rms_norm_one_row
//   MT-NOT: scf.forall
func.func @rms_norm_one_row(%x: tensor<1x4096xf32>) -> tensor<1x4096xf32> {
  %y = norm.rms_norm %x : (tensor<1x4096xf32>) -> tensor<1x4096xf32>
  return %y : tensor<1x4096xf32>
}

// -----

// A dynamic row length: with threads = 2 the loop is always parallel (the
// threshold in rows is not known before run time).
// MT-LABEL: func @rms_norm_dynamic_row
//       MT: scf.forall
//   MT-NOT: norm.parallel_min_trips
//       MT: } {norm.nontemporal_stores, norm.prefetch_next_row}
//       MT: return
func.func @rms_norm_dynamic_row(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = norm.rms_norm %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// A run-time alpha (and a scalar weight) is read once, widened to the
// compute type and broadcast before the row loop: no bf16 vector is built
// or widened inside the loop.
// CHECK-LABEL: func @dyt_bf16_runtime_alpha
//  CHECK-SAME: (%[[X:.*]]: tensor<?x256xbf16>, %[[A:.*]]: tensor<bf16>)
//       CHECK: %[[AS:.*]] = tensor.extract %[[A]][] : tensor<bf16>
//       CHECK: %[[AW:.*]] = arith.extf %[[AS]] : bf16 to f32
//       CHECK: %[[AV:.*]] = vector.broadcast %[[AW]] : f32 to vector<32xf32>
//       CHECK: scf.forall
//   CHECK-NOT:   vector.broadcast
//       CHECK:   arith.mulf %[[AV]], %{{.*}} : vector<32xf32>
//       CHECK: } {norm.nontemporal_min_trips = 16384 : i64, norm.nontemporal_stores, norm.sequential}
func.func @dyt_bf16_runtime_alpha(%x: tensor<?x256xbf16>, %a: tensor<bf16>) -> tensor<?x256xbf16> {
  %y = norm.dyt %x alpha(%a) : (tensor<?x256xbf16>, tensor<bf16>) -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

// return_stats: the row loop writes rstd as one element per row of a
// [rows, 1] output, collapsed to the statistics' shape; y has no other use
// of it.
// CHECK-LABEL: func @rms_norm_return_stats
//       CHECK: %[[LOOP:.*]]:2 = scf.forall (%[[ROW:.*]]) in (%{{.*}}) shared_outs(%{{.*}} = %{{.*}}, %[[SO:.*]] = %{{.*}}) -> (tensor<?x64xf32>, tensor<?x1xf32>)
//       CHECK:   %[[SLOT:.*]] = tensor.extract_slice %[[SO]][%[[ROW]], 0] [1, 1] [1, 1] : tensor<?x1xf32> to tensor<1xf32>
//       CHECK:   %[[R:.*]] = math.rsqrt
//       CHECK:   %[[W:.*]] = tensor.insert %[[R]] into %[[SLOT]][%{{.*}}] : tensor<1xf32>
//       CHECK:   tensor.parallel_insert_slice %[[W]] into %[[SO]][%[[ROW]], 0] [1, 1] [1, 1]
//       CHECK: %[[STATS:.*]] = tensor.collapse_shape %[[LOOP]]#1 {{\[\[}}0, 1]] : tensor<?x1xf32> into tensor<?xf32>
//       CHECK: return %[[LOOP]]#0, %[[STATS]]
func.func @rms_norm_return_stats(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>) {
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?xf32>)
  return %y, %r : tensor<?x64xf32>, tensor<?xf32>
}

// -----

// return_stats over two leading dims: [2*3, 1] statistics expanded to [2, 3].
// CHECK-LABEL: func @layer_norm_return_stats_3d
//       CHECK: scf.forall {{.*}} -> (tensor<6x32xf32>, tensor<6x1xf32>, tensor<6x1xf32>)
//       CHECK: %[[M:.*]] = tensor.collapse_shape %{{.*}}#1 {{\[\[}}0, 1]] : tensor<6x1xf32> into tensor<6xf32>
//       CHECK: tensor.expand_shape %[[M]] {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
func.func @layer_norm_return_stats_3d(%x: tensor<2x3x32xf32>) -> (tensor<2x3x32xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<2x3x32xf32>) -> (tensor<2x3x32xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %y, %m, %r : tensor<2x3x32xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
