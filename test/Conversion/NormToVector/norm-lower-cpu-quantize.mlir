// RUN: norm-opt %s -norm-lower-cpu="vector-width=256" -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-lower-cpu="vector-width=256 native-bf16=true" -split-input-file | FileCheck %s --check-prefix=NATIVE
// RUN: norm-opt %s -norm-lower-cpu="vector-width=512" -split-input-file | FileCheck %s --check-prefix=W512

// A norm whose y only feeds norm.quantize becomes one row loop that writes
// q (and residual_out) and never y. Static scale: its reciprocal is taken
// once, before the loop.
// CHECK-LABEL: func @rms_norm_static_fp8
//  CHECK-SAME: (%[[X:.*]]: tensor<?x256xbf16>, %[[W:.*]]: tensor<256xbf16>, %[[S:.*]]: tensor<f32>)
//       CHECK: %[[SV:.*]] = tensor.extract %[[S]][]
//       CHECK: %[[INV:.*]] = arith.divf %{{.*}}, %[[SV]] : f32
//       CHECK: %[[INVV:.*]] = vector.broadcast %[[INV]] : f32 to vector<32xf32>
//       CHECK: %[[Q:.*]] = scf.forall (%[[ROW:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x256xf8E4M3FN>)
//       CHECK:   vector.reduction <add>
//       CHECK:   math.rsqrt
//       CHECK:   scf.for {{.*}} -> (tensor<256xf8E4M3FN>)
// y is rounded to bf16 precision in f32 (no packing to 16 bits and back).
//   CHECK-NOT:     arith.truncf
//       CHECK:     %[[YF:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xf32>
//       CHECK:     arith.mulf %[[YF]], %[[INVV]] : vector<32xf32>
//       CHECK:     %[[BITS:.*]] = arith.trunci %{{.*}} : vector<32xi32> to vector<32xi8>
//       CHECK:     %[[F8:.*]] = arith.bitcast %[[BITS]] : vector<32xi8> to vector<32xf8E4M3FN>
//       CHECK:     vector.transfer_write %[[F8]]
//   CHECK-NOT: vector.transfer_write {{.*}} : vector<32xbf16>
//   CHECK-NOT: norm.rms_norm
//   CHECK-NOT: norm.quantize
//       CHECK: return %[[Q]]
// With native-bf16, y is rounded by arith.truncf (vcvtneps2bf16 where the
// target has it) and widened again.
// NATIVE-LABEL: func @rms_norm_static_fp8
//       NATIVE:   scf.for {{.*}} -> (tensor<256xf8E4M3FN>)
//       NATIVE:     %[[Y:.*]] = arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
//       NATIVE:     %[[YF:.*]] = arith.extf %[[Y]] : vector<32xbf16> to vector<32xf32>
//       NATIVE:     arith.mulf %[[YF]], %{{.*}} : vector<32xf32>
//       NATIVE:     arith.bitcast %{{.*}} : vector<32xi8> to vector<32xf8E4M3FN>
func.func @rms_norm_static_fp8(%x: tensor<?x256xbf16>, %w: tensor<256xbf16>, %s: tensor<f32>) -> tensor<?x256xf8E4M3FN> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x256xbf16>, tensor<256xbf16>) -> tensor<?x256xbf16>
  %q = norm.quantize %y scale(%s) : (tensor<?x256xbf16>, tensor<f32>) -> tensor<?x256xf8E4M3FN>
  return %q : tensor<?x256xf8E4M3FN>
}

// -----

// Groups of 128 with a residual: per group, one sweep computes y into an
// f32 scratch row and takes max |y|, one quantizes from the scratch;
// residual_out is written by the statistics sweep; the scales (capped by
// scale_ub) go into their own row.
// CHECK-LABEL: func @add_rms_norm_group_int8
//       CHECK: %[[RES:.*]]:3 = scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<?x256xi8>, tensor<?x2xf32>, tensor<?x256xbf16>)
//       CHECK:   vector.transfer_write %{{.*}} : vector<32xbf16>, tensor<256xbf16>
//       CHECK:   %[[SCRATCH:.*]] = tensor.empty() : tensor<256xf32>
//       CHECK:   scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[SC:.*]] = %{{.*}}, %[[SCR:.*]] = %[[SCRATCH]]) -> (tensor<256xi8>, tensor<2xf32>, tensor<256xf32>)
//       CHECK:     %[[BEGIN:.*]] = arith.muli %[[G]], %{{.*}} : index
// max |y| as an unsigned max of the encodings (NaN propagates).
//       CHECK:     %[[FIRST:.*]]:2 = scf.for {{.*}} = %[[BEGIN]] to {{.*}} iter_args({{.*}}, %{{.*}} = %[[SCR]]) -> (vector<32xi32>, tensor<256xf32>)
//       CHECK:       %[[ABS:.*]] = math.absf
//       CHECK:       %[[BITS:.*]] = arith.bitcast %[[ABS]] : vector<32xf32> to vector<32xi32>
//       CHECK:       arith.maxui %{{.*}}, %[[BITS]] : vector<32xi32>
//       CHECK:       vector.transfer_write %{{.*}} : vector<32xf32>, tensor<256xf32>
//       CHECK:     %[[MAXBITS:.*]] = vector.reduction <maxui>, %[[FIRST]]#0 : vector<32xi32> into i32
//       CHECK:     %[[AMAX:.*]] = arith.bitcast %[[MAXBITS]] : i32 to f32
//       CHECK:     %[[CAP:.*]] = arith.minimumf %[[AMAX]]
//       CHECK:     %[[DIV:.*]] = arith.divf %[[CAP]], %{{.*}} : f32
//       CHECK:     %[[SCALE:.*]] = arith.maximumf %[[DIV]]
//       CHECK:     tensor.insert %[[SCALE]] into %[[SC]][%[[G]]]
//       CHECK:     scf.for {{.*}} = %[[BEGIN]] to {{.*}} -> (tensor<256xi8>)
//       CHECK:       vector.transfer_read %[[FIRST]]#1
//       CHECK:       math.roundeven
//       CHECK:       arith.fptosi %{{.*}} : vector<32xf32> to vector<32xi8>
//       CHECK:       vector.transfer_write %{{.*}} : vector<32xi8>, tensor<256xi8>
//   CHECK-NOT: vector.transfer_write {{.*}} : vector<32xbf16>
//       CHECK: return %[[RES]]#0, %[[RES]]#1, %[[RES]]#2
func.func @add_rms_norm_group_int8(%x: tensor<?x256xbf16>, %r: tensor<?x256xbf16>) -> (tensor<?x256xi8>, tensor<?x2xf32>, tensor<?x256xbf16>) {
  %y, %s = norm.rms_norm %x residual(%r) : (tensor<?x256xbf16>, tensor<?x256xbf16>) -> (tensor<?x256xbf16>, tensor<?x256xbf16>)
  %q, %sc = norm.quantize %y {group_size = 128 : i64, scale_ub = 1000.0 : f32} : (tensor<?x256xbf16>) -> (tensor<?x256xi8>, tensor<?x2xf32>)
  return %q, %sc, %s : tensor<?x256xi8>, tensor<?x2xf32>, tensor<?x256xbf16>
}

// -----

// DyT with a residual and per-token FP8 scales: residual_out is written by
// the sweep that computes y (and fills the scratch), q by the second one.
// CHECK-LABEL: func @dyt_per_token_fp8
//       CHECK: scf.forall {{.*}} -> (tensor<4x96xf8E4M3FN>, tensor<4x1xf32>, tensor<4x96xf32>)
//       CHECK:   scf.for {{.*}} -> (vector<32xi32>, tensor<96xf32>, tensor<96xf32>)
//       CHECK:   vector.reduction <maxui>
//       CHECK:   scf.for {{.*}} -> (tensor<96xf8E4M3FN>)
//       CHECK:     vector.transfer_write %{{.*}} : vector<32xf8E4M3FN>, tensor<96xf8E4M3FN>
func.func @dyt_per_token_fp8(%x: tensor<4x96xf32>, %a: tensor<f32>, %r: tensor<4x96xf32>) -> (tensor<4x96xf8E4M3FN>, tensor<4x1xf32>, tensor<4x96xf32>) {
  %y, %s = norm.dyt %x alpha(%a) residual(%r) : (tensor<4x96xf32>, tensor<f32>, tensor<4x96xf32>) -> (tensor<4x96xf32>, tensor<4x96xf32>)
  %q, %sc = norm.quantize %y : (tensor<4x96xf32>) -> (tensor<4x96xf8E4M3FN>, tensor<4x1xf32>)
  return %q, %sc, %s : tensor<4x96xf8E4M3FN>, tensor<4x1xf32>, tensor<4x96xf32>
}

// -----

// y has another user: the norm and the quantization are lowered apart.
// CHECK-LABEL: func @not_fused_two_users
//       CHECK: %[[Y:.*]] = scf.forall {{.*}} -> (tensor<8x64xf32>)
//       CHECK: %[[Q:.*]] = scf.forall {{.*}} -> (tensor<8x64xi8>)
//       CHECK:   vector.transfer_read %[[Y]]
//       CHECK: return %[[Q]], %[[Y]]
func.func @not_fused_two_users(%x: tensor<8x64xf32>, %s: tensor<1xf32>) -> (tensor<8x64xi8>, tensor<8x64xf32>) {
  %y = norm.layer_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %q = norm.quantize %y scale(%s) : (tensor<8x64xf32>, tensor<1xf32>) -> tensor<8x64xi8>
  return %q, %y : tensor<8x64xi8>, tensor<8x64xf32>
}

// -----

// The norm normalizes two dims: its rows are not the quantization rows.
// CHECK-LABEL: func @not_fused_axis
//       CHECK: scf.forall {{.*}} -> (tensor<2x192xf32>)
//       CHECK: scf.forall {{.*}} -> (tensor<6x64xi8>, tensor<6x1xf32>)
func.func @not_fused_axis(%x: tensor<2x3x64xf32>) -> (tensor<2x3x64xi8>, tensor<2x3x1xf32>) {
  %y = norm.rms_norm %x {axis = -2 : i64} : (tensor<2x3x64xf32>) -> tensor<2x3x64xf32>
  %q, %sc = norm.quantize %y : (tensor<2x3x64xf32>) -> (tensor<2x3x64xi8>, tensor<2x3x1xf32>)
  return %q, %sc : tensor<2x3x64xi8>, tensor<2x3x1xf32>
}

// -----

// The static scale is computed after the norm: the fused loop is built at
// the quantization.
// CHECK-LABEL: func @fused_late_scale
//  CHECK-SAME: (%{{.*}}: tensor<8x64xf32>, %[[F:.*]]: f32)
//       CHECK: arith.divf %{{.*}}, %[[F]] : f32
//       CHECK: scf.forall {{.*}} -> (tensor<8x64xf8E4M3FN>)
//   CHECK-NOT: scf.forall (
//       CHECK: return
func.func @fused_late_scale(%x: tensor<8x64xf32>, %f: f32) -> tensor<8x64xf8E4M3FN> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %s = tensor.from_elements %f : tensor<f32>
  %q = norm.quantize %y scale(%s) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf8E4M3FN>
  return %q : tensor<8x64xf8E4M3FN>
}

// -----

// A late scale, and residual_out is used before the quantization: not
// fused.
// CHECK-LABEL: func @not_fused_late_scale_residual_use
//       CHECK: scf.forall {{.*}} -> (tensor<8x64xf32>, tensor<8x64xf32>)
//       CHECK: arith.addf %{{.*}} : tensor<8x64xf32>
//       CHECK: scf.forall {{.*}} -> (tensor<8x64xi8>)
func.func @not_fused_late_scale_residual_use(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>, %f: f32) -> (tensor<8x64xi8>, tensor<8x64xf32>) {
  %y, %sum = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  %twice = arith.addf %sum, %sum : tensor<8x64xf32>
  %s = tensor.from_elements %f : tensor<f32>
  %q = norm.quantize %y scale(%s) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xi8>
  return %q, %twice : tensor<8x64xi8>, tensor<8x64xf32>
}

// A quantization alone, per token over a dynamic row length: the groups
// loop runs once over the row with a masked tail.
// CHECK-LABEL: func @quantize_alone_dynamic_row
//       CHECK: scf.forall {{.*}} -> (tensor<4x?xf8E4M3FN>, tensor<4x1xf32>)
//       CHECK:   vector.create_mask
//       CHECK:   vector.reduction <maxui>
//       CHECK:   vector.transfer_write {{.*}} : vector<32xf8E4M3FN>, tensor<?xf8E4M3FN>
func.func @quantize_alone_dynamic_row(%x: tensor<4x?xf16>) -> (tensor<4x?xf8E4M3FN>, tensor<4x1xf32>) {
  %q, %sc = norm.quantize %x : (tensor<4x?xf16>) -> (tensor<4x?xf8E4M3FN>, tensor<4x1xf32>)
  return %q, %sc : tensor<4x?xf8E4M3FN>, tensor<4x1xf32>
}

// -----

// A statically empty input gives empty results.
// CHECK-LABEL: func @quantize_empty
//   CHECK-DAG: %[[Q:.*]] = tensor.empty() : tensor<0x64xi8>
//   CHECK-DAG: %[[S:.*]] = tensor.empty() : tensor<0x1xf32>
//       CHECK: return %[[Q]], %[[S]]
func.func @quantize_empty(%x: tensor<0x64xf32>) -> (tensor<0x64xi8>, tensor<0x1xf32>) {
  %q, %sc = norm.quantize %x : (tensor<0x64xf32>) -> (tensor<0x64xi8>, tensor<0x1xf32>)
  return %q, %sc : tensor<0x64xi8>, tensor<0x1xf32>
}

// -----

// Block scales (NVFP4, swizzled_128x4) fused with rms_norm: one row loop
// from x to q and the scales. The row is taken in chunks of one vector (32
// lanes: two groups of 16) whose y stays in registers: each group's max |y|
// is reduced, the scales of the chunk's groups computed as one vector, and
// q converted with integer ops and stored as whole vectors. The swizzled
// scales are the zero-filled [T, K4, 32, 4, 4] view of the flat result
// (padding 0), of which each row writes its [K4, 4] slice.
// CHECK-LABEL: func @rms_norm_nvfp4_swizzled
//  CHECK-SAME: (%{{.*}}: tensor<?x80xbf16>, %{{.*}}: tensor<80xbf16>, %[[G:.*]]: tensor<f32>)
//       CHECK: %[[GS:.*]] = tensor.extract %[[G]][]
//       CHECK: %[[TILES:.*]] = arith.divui %{{.*}}, %c128
//       CHECK: %[[EMPTY:.*]] = tensor.empty(%[[TILES]]) : tensor<?x2x32x4x4xf8E4M3FN>
//       CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f8E4M3FN) outs(%[[EMPTY]] : tensor<?x2x32x4x4xf8E4M3FN>)
//       CHECK: %[[RES:.*]]:2 = scf.forall (%[[ROW:.*]]) in (%{{.*}}) shared_outs(%[[QS:.*]] = %{{.*}}, %[[SS:.*]] = %[[FILL]]) -> (tensor<?x80xf4E2M1FN>, tensor<?x2x32x4x4xf8E4M3FN>)
// Row m's slice: [m / 128, :, m % 32, (m % 128) / 32, :].
//   CHECK-DAG:   %[[IN:.*]] = arith.remui %[[ROW]], %c128
//   CHECK-DAG:   %[[TILE:.*]] = arith.divui %[[ROW]], %c128
//   CHECK-DAG:   %[[R32:.*]] = arith.remui %[[ROW]], %c32
//   CHECK-DAG:   %[[QUARTER:.*]] = arith.divui %[[IN]], %c32
//       CHECK:   %[[SROW:.*]] = tensor.extract_slice %[[SS]][%[[TILE]], 0, %[[R32]], %[[QUARTER]], 0] [1, 2, 1, 1, 4] [1, 1, 1, 1, 1] : tensor<?x2x32x4x4xf8E4M3FN> to tensor<2x4xf8E4M3FN>
//   CHECK-NOT:   vector.transfer_write
//       CHECK:   math.rsqrt
//   CHECK-NOT:   vector.transfer_write
//       CHECK:   %[[CH:.*]]:2 = scf.for %[[COL:.*]] = %c0 to %c64 step %c64 iter_args(%[[QR:.*]] = %{{.*}}, %[[SR:.*]] = %[[SROW]]) -> (tensor<80xf4E2M1FN>, tensor<2x4xf8E4M3FN>)
// A chunk of two steps of 32 lanes, two groups each.
//       CHECK:     %[[ABS0:.*]] = math.absf %{{.*}} : vector<32xf32>
//       CHECK:     %[[MAG0:.*]] = arith.bitcast %[[ABS0]] : vector<32xf32> to vector<32xi32>
//       CHECK:     %[[COL1:.*]] = arith.addi %[[COL]], %c32
//       CHECK:     %[[ABS1:.*]] = math.absf %{{.*}} : vector<32xf32>
//       CHECK:     %[[MAG1:.*]] = arith.bitcast %[[ABS1]] : vector<32xf32> to vector<32xi32>
// The four groups' max together: the max of the halves of every group of
// both steps, then of the halves of the groups of that, down to a lane per
// group.
//       CHECK:     %[[LO:.*]] = vector.shuffle %[[MAG0]], %[[MAG1]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 32, 33, 34, 35, 36, 37, 38, 39, 48, 49, 50, 51, 52, 53, 54, 55]
//       CHECK:     %[[HI:.*]] = vector.shuffle %[[MAG0]], %[[MAG1]] [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31, 40, 41, 42, 43, 44, 45, 46, 47, 56, 57, 58, 59, 60, 61, 62, 63]
//       CHECK:     %[[M8:.*]] = arith.maxui %[[LO]], %[[HI]] : vector<32xi32>
//       CHECK:     %[[LO4:.*]] = vector.shuffle %[[M8]], %[[M8]] [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27] : vector<32xi32>, vector<32xi32>
//       CHECK:     %[[HI4:.*]] = vector.shuffle %[[M8]], %[[M8]] [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31] : vector<32xi32>, vector<32xi32>
//       CHECK:     arith.maxui %[[LO4]], %[[HI4]] : vector<16xi32>
//       CHECK:     arith.maxui %{{.*}}, %{{.*}} : vector<8xi32>
//       CHECK:     %[[AMAXI:.*]] = arith.maxui %{{.*}}, %{{.*}} : vector<4xi32>
//       CHECK:     %[[AMAX:.*]] = arith.bitcast %[[AMAXI]] : vector<4xi32> to vector<4xf32>
// sf = e4m3(g * (amax / 6)) and the multiplier g / sf, a lane per group.
//       CHECK:     %[[GV:.*]] = vector.broadcast %[[GS]] : f32 to vector<4xf32>
//       CHECK:     %[[DIV6:.*]] = arith.divf %[[AMAX]], %{{.*}} : vector<4xf32>
//       CHECK:     arith.mulf %[[GV]], %[[DIV6]] : vector<4xf32>
//       CHECK:     %[[OUT:.*]] = arith.divf %[[GV]], %{{.*}} : vector<4xf32>
//       CHECK:     %[[MULT:.*]] = arith.select %{{.*}}, %{{.*}}, %[[OUT]] : vector<4xi1>, vector<4xf32>
//       CHECK:     %[[SCALES:.*]] = arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E4M3FN>
// Each step's two multipliers over their 16 lanes.
//       CHECK:     %[[LANES0:.*]] = vector.shuffle %[[MULT]], %[[MULT]] [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
//       CHECK:     arith.mulf %{{.*}}, %[[LANES0]] : vector<32xf32>
//       CHECK:     %[[CODES:.*]] = arith.trunci %{{.*}} : vector<32xi32> to vector<32xi4>
//       CHECK:     %[[Q:.*]] = arith.bitcast %[[CODES]] : vector<32xi4> to vector<32xf4E2M1FN>
//       CHECK:     %[[QN0:.*]] = vector.transfer_write %[[Q]], %[[QR]][%[[COL]]] {in_bounds = [true]} : vector<32xf4E2M1FN>, tensor<80xf4E2M1FN>
//       CHECK:     %[[LANES1:.*]] = vector.shuffle %[[MULT]], %[[MULT]] [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]
//       CHECK:     arith.mulf %{{.*}}, %[[LANES1]] : vector<32xf32>
//       CHECK:     %[[QN:.*]] = vector.transfer_write %{{.*}}, %[[QN0]][%[[COL1]]] {in_bounds = [true]} : vector<32xf4E2M1FN>, tensor<80xf4E2M1FN>
// Groups k to k + 3 at [k / 4, k % 4 + i] of the row's slice.
//       CHECK:     %[[K:.*]] = arith.divui %[[COL]], %c16
//       CHECK:     %[[KT:.*]] = arith.divui %[[K]], %c4
//       CHECK:     %[[KL:.*]] = arith.remui %[[K]], %c4
//       CHECK:     %[[SN:.*]] = vector.transfer_write %[[SCALES]], %[[SR]][%[[KT]], %[[KL]]] {in_bounds = [true]} : vector<4xf8E4M3FN>, tensor<2x4xf8E4M3FN>
//       CHECK:     scf.yield %[[QN]], %[[SN]]
// The last group (16 columns): a masked step, one scale, 16 codes stored.
//       CHECK:   vector.create_mask %c16 : vector<32xi1>
//       CHECK:   vector.reduction <maxui>, %{{.*}} : vector<16xi32> into i32
//       CHECK:   %[[TAIL:.*]] = vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [16], strides = [1]} : vector<32xf4E2M1FN> to vector<16xf4E2M1FN>
//       CHECK:   %[[QF:.*]] = vector.transfer_write %[[TAIL]], %[[CH]]#0[%c64] {in_bounds = [true]} : vector<16xf4E2M1FN>, tensor<80xf4E2M1FN>
//       CHECK:   %[[SF:.*]] = tensor.insert %{{.*}} into %[[CH]]#1[%c1, %c0] : tensor<2x4xf8E4M3FN>
//       CHECK:   scf.forall.in_parallel
//       CHECK:     tensor.parallel_insert_slice %[[QF]] into %[[QS]][%[[ROW]], 0] [1, 80] [1, 1]
//       CHECK:     tensor.parallel_insert_slice %[[SF]] into %[[SS]][%[[TILE]], 0, %[[R32]], %[[QUARTER]], 0] [1, 2, 1, 1, 4] [1, 1, 1, 1, 1]
//       CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[RES]]#1 {{\[}}[0, 1, 2, 3, 4]] : tensor<?x2x32x4x4xf8E4M3FN> into tensor<?xf8E4M3FN>
//       CHECK: return %[[RES]]#0, %[[FLAT]]
// 512-bit vectors: chunks of four steps (256 columns), none in a row of
// 80; one step of 64 lanes, four groups, whose maxima are reduced together.
// W512-LABEL: func @rms_norm_nvfp4_swizzled
//   W512-NOT:   step %c256
//       W512:   scf.for %[[COL:.*]] = %c0 to %c64 step %c64
//       W512:     arith.maxui %{{.*}}, %{{.*}} : vector<4xi32>
//       W512:     vector.transfer_write %{{.*}}[%[[COL]]] {in_bounds = [true]} : vector<64xf4E2M1FN>, tensor<80xf4E2M1FN>
//       W512:     vector.transfer_write %{{.*}} : vector<4xf8E4M3FN>, tensor<2x4xf8E4M3FN>
//       W512:   vector.transfer_write %{{.*}}[%c64] {in_bounds = [true]} : vector<16xf4E2M1FN>, tensor<80xf4E2M1FN>
func.func @rms_norm_nvfp4_swizzled(%x: tensor<?x80xbf16>, %w: tensor<80xbf16>, %g: tensor<f32>) -> (tensor<?x80xf4E2M1FN>, tensor<?xf8E4M3FN>) {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x80xbf16>, tensor<80xbf16>) -> tensor<?x80xbf16>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>}
      : (tensor<?x80xbf16>, tensor<f32>) -> (tensor<?x80xf4E2M1FN>, tensor<?xf8E4M3FN>)
  return %q, %s : tensor<?x80xf4E2M1FN>, tensor<?xf8E4M3FN>
}

// -----

// FP8 1x128 with a residual: a group is four vector steps, whose magnitudes
// combine before one reduction; the scale is a scalar (here rounded up)
// broadcast to the four steps; residual_out is written by the statistics
// sweep.
// CHECK-LABEL: func @add_rms_norm_fp8_1x128
//       CHECK: scf.forall {{.*}} -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<4x256xf32>)
//       CHECK:   vector.transfer_write %{{.*}} : vector<32xf32>, tensor<256xf32>
//       CHECK:   scf.for %[[COL:.*]] = %c0 to %c256 step %c128 iter_args(%[[QR:.*]] = %{{.*}}, %[[SR:.*]] = %{{.*}}) -> (tensor<256xf8E4M3FN>, tensor<2xf8E8M0FNU>)
//       CHECK:     %[[A0:.*]] = math.absf %{{.*}} : vector<32xf32>
//       CHECK:     %[[B0:.*]] = arith.bitcast %[[A0]] : vector<32xf32> to vector<32xi32>
//       CHECK:     %[[C1:.*]] = arith.addi %[[COL]], %c32
//       CHECK:     vector.transfer_read %{{.*}}[%{{.*}}, %[[C1]]]
//       CHECK:     %[[B1:.*]] = arith.bitcast %{{.*}} : vector<32xf32> to vector<32xi32>
//       CHECK:     %[[C2:.*]] = arith.addi %[[COL]], %c64
//       CHECK:     %[[B2:.*]] = arith.bitcast %{{.*}} : vector<32xf32> to vector<32xi32>
//       CHECK:     %[[C3:.*]] = arith.addi %[[COL]], %c96
//       CHECK:     %[[B3:.*]] = arith.bitcast %{{.*}} : vector<32xf32> to vector<32xi32>
//       CHECK:     %[[M01:.*]] = arith.maxui %[[B0]], %[[B1]] : vector<32xi32>
//       CHECK:     %[[M012:.*]] = arith.maxui %[[M01]], %[[B2]] : vector<32xi32>
//       CHECK:     %[[MALL:.*]] = arith.maxui %[[M012]], %[[B3]] : vector<32xi32>
//       CHECK:     %[[AMAXI:.*]] = vector.reduction <maxui>, %[[MALL]] : vector<32xi32> into i32
//       CHECK:     %[[AMAX:.*]] = arith.bitcast %[[AMAXI]] : i32 to f32
// The exponent, plus one when amax / 448 is above the power of two.
//       CHECK:     arith.shrui %{{.*}}, %c23_i32 : i32
//       CHECK:     arith.cmpi ugt, %{{.*}}, %c6291456_i32 : i32
//       CHECK:     %[[SCALE:.*]] = arith.bitcast %{{.*}} : i8 to f8E8M0FNU
//       CHECK:     %[[MULT:.*]] = vector.broadcast %{{.*}} : f32 to vector<32xf32>
//       CHECK:     %[[Q0:.*]] = vector.transfer_write %{{.*}}, %[[QR]][%[[COL]]] {in_bounds = [true]} : vector<32xf8E4M3FN>, tensor<256xf8E4M3FN>
//       CHECK:     %[[Q1:.*]] = vector.transfer_write %{{.*}}, %[[Q0]][%[[C1]]] {in_bounds = [true]} : vector<32xf8E4M3FN>
//       CHECK:     %[[Q2:.*]] = vector.transfer_write %{{.*}}, %[[Q1]][%[[C2]]] {in_bounds = [true]} : vector<32xf8E4M3FN>
//       CHECK:     %[[Q3:.*]] = vector.transfer_write %{{.*}}, %[[Q2]][%[[C3]]] {in_bounds = [true]} : vector<32xf8E4M3FN>
//       CHECK:     %[[K:.*]] = arith.divui %[[COL]], %c128
//       CHECK:     %[[SN:.*]] = tensor.insert %[[SCALE]] into %[[SR]][%[[K]]] : tensor<2xf8E8M0FNU>
//       CHECK:     scf.yield %[[Q3]], %[[SN]]
func.func @add_rms_norm_fp8_1x128(%x: tensor<4x256xf32>, %r: tensor<4x256xf32>, %w: tensor<256xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<4x256xf32>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) : (tensor<4x256xf32>, tensor<256xf32>, tensor<4x256xf32>) -> (tensor<4x256xf32>, tensor<4x256xf32>)
  %q, %sc = norm.quantize %y {group_size = 128 : i64, scale_rounding = #norm<scale_rounding up>}
      : (tensor<4x256xf32>) -> (tensor<4x256xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %q, %sc, %s : tensor<4x256xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<4x256xf32>
}

// -----

// DyT with a residual and MXFP8 blocks: residual_out is written by the
// sweep that computes y, q and the scales by the same chunk.
// CHECK-LABEL: func @dyt_mxfp8_residual
//       CHECK: scf.forall {{.*}} -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf32>)
//       CHECK:   scf.for %[[COL:.*]] = %c0 to %c64 step %c32 iter_args({{.*}}) -> (tensor<64xf8E4M3FN>, tensor<2xf8E8M0FNU>, tensor<64xf32>)
//       CHECK:     %[[S:.*]] = vector.transfer_write %{{.*}}[%[[COL]]] {in_bounds = [true]} : vector<32xf32>, tensor<64xf32>
//       CHECK:     vector.reduction <maxui>, %{{.*}} : vector<32xi32> into i32
//       CHECK:     %[[Q:.*]] = vector.transfer_write %{{.*}}[%[[COL]]] {in_bounds = [true]} : vector<32xf8E4M3FN>, tensor<64xf8E4M3FN>
//       CHECK:     %[[SC:.*]] = tensor.insert %{{.*}} : tensor<2xf8E8M0FNU>
//       CHECK:     scf.yield %[[Q]], %[[SC]], %[[S]]
func.func @dyt_mxfp8_residual(%x: tensor<4x64xf32>, %a: tensor<f32>, %r: tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf32>) {
  %y, %s = norm.dyt %x alpha(%a) residual(%r) : (tensor<4x64xf32>, tensor<f32>, tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  %q, %sc = norm.quantize %y {group_size = 32 : i64} : (tensor<4x64xf32>) -> (tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>)
  return %q, %sc, %s : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU>, tensor<4x64xf32>
}

// -----

// MXFP4 alone, with a row of three groups: at 512 bits two groups per
// step, no whole chunk of four steps, and a last chunk of one group (32
// codes stored).
// W512-LABEL: func @mxfp4_alone
//       W512: scf.forall {{.*}} -> (tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>)
//   W512-NOT:   step %c256
//       W512:   scf.for %[[COL:.*]] = %c0 to %c64 step %c64
//       W512:     vector.transfer_read %{{.*}} : tensor<?x96xbf16>, vector<64xbf16>
//       W512:     %[[M:.*]] = arith.maxui %{{.*}}, %{{.*}} : vector<2xi32>
//       W512:     arith.bitcast %[[M]] : vector<2xi32> to vector<2xf32>
//       W512:     vector.transfer_write %{{.*}}[%[[COL]]] {in_bounds = [true]} : vector<64xf4E2M1FN>, tensor<96xf4E2M1FN>
//       W512:     vector.transfer_write %{{.*}} : vector<2xf8E8M0FNU>, tensor<3xf8E8M0FNU>
//       W512:   vector.create_mask %c32 : vector<64xi1>
//       W512:   vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [32], strides = [1]} : vector<64xf4E2M1FN> to vector<32xf4E2M1FN>
//       W512:   vector.transfer_write %{{.*}}[%c64] {in_bounds = [true]} : vector<32xf4E2M1FN>, tensor<96xf4E2M1FN>
//       W512:   tensor.insert %{{.*}}[%c2] : tensor<3xf8E8M0FNU>
// At 256 bits: one group per chunk, no last chunk.
// CHECK-LABEL: func @mxfp4_alone
//       CHECK:   scf.for %[[COL:.*]] = %c0 to %c96 step %c32
//       CHECK:     vector.transfer_write %{{.*}}[%[[COL]]] {in_bounds = [true]} : vector<32xf4E2M1FN>, tensor<96xf4E2M1FN>
//   CHECK-NOT:   vector.create_mask
//       CHECK: return
func.func @mxfp4_alone(%x: tensor<?x96xbf16>) -> (tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>) {
  %q, %s = norm.quantize %x {group_size = 32 : i64} : (tensor<?x96xbf16>) -> (tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>)
  return %q, %s : tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>
}

// -----

// A single row (no row loop) with swizzled scales: the row's slice of the
// zero-filled tiles, written and inserted back.
// CHECK-LABEL: func @single_row_swizzled
//       CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f8E8M0FNU) outs(%{{.*}} : tensor<1x1x32x4x4xf8E8M0FNU>)
//       CHECK: %[[SROW:.*]] = tensor.extract_slice %[[FILL]][%c0, 0, %c0, %c0, 0] [1, 1, 1, 1, 4] [1, 1, 1, 1, 1] : tensor<1x1x32x4x4xf8E8M0FNU> to tensor<1x4xf8E8M0FNU>
//   CHECK-NOT: scf.forall
//       CHECK: %[[ROW:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[SROW]]) -> (tensor<1x64xf4E2M1FN>, tensor<1x4xf8E8M0FNU>)
//       CHECK: %[[TILES:.*]] = tensor.insert_slice %[[ROW]]#1 into %[[FILL]][%c0, 0, %c0, %c0, 0] [1, 1, 1, 1, 4] [1, 1, 1, 1, 1]
//       CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[TILES]] {{\[}}[0, 1, 2, 3, 4]] : tensor<1x1x32x4x4xf8E8M0FNU> into tensor<512xf8E8M0FNU>
//       CHECK: return %{{.*}}, %[[FLAT]]
func.func @single_row_swizzled(%x: tensor<64xf16>) -> (tensor<64xf4E2M1FN>, tensor<512xf8E8M0FNU>) {
  %q, %s = norm.quantize %x {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<64xf16>) -> (tensor<64xf4E2M1FN>, tensor<512xf8E8M0FNU>)
  return %q, %s : tensor<64xf4E2M1FN>, tensor<512xf8E8M0FNU>
}

// -----

// The global scale is computed after the norm: the fused loop is built at
// the quantization.
// CHECK-LABEL: func @nvfp4_fused_late_global_scale
//  CHECK-SAME: (%{{.*}}: tensor<8x64xf32>, %[[F:.*]]: f32)
//       CHECK: scf.forall {{.*}} -> (tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>)
//       CHECK:   vector.broadcast %[[F]] : f32 to vector<4xf32>
//   CHECK-NOT: scf.forall (
//       CHECK: return
func.func @nvfp4_fused_late_global_scale(%x: tensor<8x64xf32>, %f: f32) -> (tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>) {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %g = tensor.from_elements %f : tensor<f32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<8x64xf32>, tensor<f32>) -> (tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>)
  return %q, %s : tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>
}

// -----

// A late global scale, and residual_out is used before the quantization:
// not fused.
// CHECK-LABEL: func @nvfp4_not_fused_late_global_scale_residual_use
//       CHECK: scf.forall {{.*}} -> (tensor<8x64xf32>, tensor<8x64xf32>)
//       CHECK: arith.addf %{{.*}} : tensor<8x64xf32>
//       CHECK: scf.forall {{.*}} -> (tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>)
func.func @nvfp4_not_fused_late_global_scale_residual_use(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>, %f: f32) -> (tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>, tensor<8x64xf32>) {
  %y, %sum = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  %twice = arith.addf %sum, %sum : tensor<8x64xf32>
  %g = tensor.from_elements %f : tensor<f32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<8x64xf32>, tensor<f32>) -> (tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>)
  return %q, %s, %twice : tensor<8x64xf4E2M1FN>, tensor<8x4xf8E4M3FN>, tensor<8x64xf32>
}

// -----

// Block scales of the norm's residual_out, not of its y: not fused; the
// norm writes y and residual_out, the quantization reads residual_out.
// CHECK-LABEL: func @block_scaled_not_fused_residual_out
//       CHECK: %[[NORM:.*]]:2 = scf.forall {{.*}} -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
//       CHECK: %[[Q:.*]]:2 = scf.forall {{.*}} -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
//       CHECK:   vector.transfer_read %[[NORM]]#1
//       CHECK: return %[[Q]]#0, %[[Q]]#1, %[[NORM]]#0
func.func @block_scaled_not_fused_residual_out(%x: tensor<?x64xbf16>, %r: tensor<?x64xbf16>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>, tensor<?x64xbf16>) {
  %y, %sum = norm.rms_norm %x residual(%r) : (tensor<?x64xbf16>, tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>)
  %q, %s = norm.quantize %sum {group_size = 32 : i64} : (tensor<?x64xbf16>) -> (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>)
  return %q, %s, %y : tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>, tensor<?x64xbf16>
}

// -----

// y has another user: the norm and the block-scaled quantization are
// lowered apart.
// CHECK-LABEL: func @block_scaled_not_fused_two_users
//       CHECK: %[[Y:.*]] = scf.forall {{.*}} -> (tensor<8x64xf16>)
//       CHECK: %[[Q:.*]]:2 = scf.forall {{.*}} -> (tensor<8x64xf4E2M1FN>, tensor<1x1x32x4x4xf8E8M0FNU>)
//       CHECK:   vector.transfer_read %[[Y]]
//       CHECK: return %[[Q]]#0, %{{.*}}, %[[Y]]
func.func @block_scaled_not_fused_two_users(%x: tensor<8x64xf16>) -> (tensor<8x64xf4E2M1FN>, tensor<512xf8E8M0FNU>, tensor<8x64xf16>) {
  %y = norm.rms_norm %x : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<8x64xf16>) -> (tensor<8x64xf4E2M1FN>, tensor<512xf8E8M0FNU>)
  return %q, %s, %y : tensor<8x64xf4E2M1FN>, tensor<512xf8E8M0FNU>, tensor<8x64xf16>
}

// -----

// The norm normalizes two dims: its rows are not the quantization's.
// CHECK-LABEL: func @block_scaled_not_fused_axis
//       CHECK: scf.forall {{.*}} -> (tensor<2x192xf32>)
//       CHECK: scf.forall {{.*}} -> (tensor<6x64xf4E2M1FN>, tensor<6x4xf8E4M3FN>)
func.func @block_scaled_not_fused_axis(%x: tensor<2x3x64xf32>, %g: tensor<f32>) -> (tensor<2x3x64xf4E2M1FN>, tensor<2x3x4xf8E4M3FN>) {
  %y = norm.rms_norm %x {axis = -2 : i64} : (tensor<2x3x64xf32>) -> tensor<2x3x64xf32>
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64} : (tensor<2x3x64xf32>, tensor<f32>) -> (tensor<2x3x64xf4E2M1FN>, tensor<2x3x4xf8E4M3FN>)
  return %q, %s : tensor<2x3x64xf4E2M1FN>, tensor<2x3x4xf8E4M3FN>
}
