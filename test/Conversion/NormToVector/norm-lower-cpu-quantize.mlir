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

// MXFP4 alone, with a row of three groups: at 512 bits two groups per
// chunk and a last chunk of one group (32 codes stored).
// W512-LABEL: func @mxfp4_alone
//       W512: scf.forall {{.*}} -> (tensor<?x96xf4E2M1FN>, tensor<?x3xf8E8M0FNU>)
//       W512:   scf.for %[[COL:.*]] = %c0 to %c64 step %c64
//       W512:     vector.transfer_read %{{.*}} : tensor<?x96xbf16>, vector<64xbf16>
//       W512:     vector.reduction <maxui>, %{{.*}} : vector<32xi32> into i32
//       W512:     vector.reduction <maxui>, %{{.*}} : vector<32xi32> into i32
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
