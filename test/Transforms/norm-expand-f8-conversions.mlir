// RUN: norm-opt %s -split-input-file -norm-expand-f8-conversions | FileCheck %s

// Vectors: integer arithmetic on the f32 bits, NaN above 464, and a bitcast
// of the i8 codes.
// CHECK-LABEL: func @trunc_vector
//   CHECK-NOT: arith.truncf
//       CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
//       CHECK: arith.constant dense<1139277824> : vector<8xi32>
//       CHECK: arith.cmpi ugt
//       CHECK: %[[Q:.*]] = arith.bitcast %{{.*}} : vector<8xi8> to vector<8xf8E4M3FN>
//       CHECK: return %[[Q]]
func.func @trunc_vector(%v: vector<8xf32>) -> vector<8xf8E4M3FN> {
  %q = arith.truncf %v : vector<8xf32> to vector<8xf8E4M3FN>
  return %q : vector<8xf8E4M3FN>
}

// -----

// From bf16: widened first (exactly).
// CHECK-LABEL: func @trunc_bf16_scalar
//       CHECK: arith.extf %{{.*}} : bf16 to f32
//   CHECK-NOT: arith.truncf
//       CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
func.func @trunc_bf16_scalar(%v: bf16) -> f8E4M3FN {
  %q = arith.truncf %v : bf16 to f8E4M3FN
  return %q : f8E4M3FN
}

// -----

// CHECK-LABEL: func @ext_vector
//       CHECK: arith.bitcast %{{.*}} : vector<4xf8E4M3FN> to vector<4xi8>
//       CHECK: arith.extui
//       CHECK: arith.sitofp
//       CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
//       CHECK: %[[H:.*]] = arith.truncf %[[F]] : vector<4xf32> to vector<4xf16>
//       CHECK: return %[[H]]
func.func @ext_vector(%q: vector<4xf8E4M3FN>) -> vector<4xf16> {
  %v = arith.extf %q : vector<4xf8E4M3FN> to vector<4xf16>
  return %v : vector<4xf16>
}


// -----

// f4E2M1FN: the e2m1 code of norm.quantize (saturation at 6 = 0x40C00000,
// the rounding add), truncated to i4 and bitcast.
// CHECK-LABEL: func @trunc_f4_vector
//   CHECK-NOT: arith.truncf
//       CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
//       CHECK: arith.constant dense<1086324736> : vector<8xi32>
//       CHECK: arith.minui
//       CHECK: arith.addf
//       CHECK: %[[N:.*]] = arith.trunci %{{.*}} : vector<8xi8> to vector<8xi4>
//       CHECK: %[[Q:.*]] = arith.bitcast %[[N]] : vector<8xi4> to vector<8xf4E2M1FN>
//       CHECK: return %[[Q]]
func.func @trunc_f4_vector(%v: vector<8xf32>) -> vector<8xf4E2M1FN> {
  %q = arith.truncf %v : vector<8xf32> to vector<8xf4E2M1FN>
  return %q : vector<8xf4E2M1FN>
}

// -----

// From f16: widened first.
// CHECK-LABEL: func @trunc_f4_f16_scalar
//       CHECK: arith.extf %{{.*}} : f16 to f32
//   CHECK-NOT: arith.truncf
//       CHECK: arith.bitcast %{{.*}} : i4 to f4E2M1FN
func.func @trunc_f4_f16_scalar(%v: f16) -> f4E2M1FN {
  %q = arith.truncf %v : f16 to f4E2M1FN
  return %q : f4E2M1FN
}

// -----

// Codes 2..7 shifted up 22 bits after adding 252, 0.5 and 0 selected, the
// sign moved from bit 3 to bit 31.
// CHECK-LABEL: func @ext_f4_vector
//       CHECK: %[[N:.*]] = arith.bitcast %{{.*}} : vector<4xf4E2M1FN> to vector<4xi4>
//       CHECK: arith.extui %[[N]] : vector<4xi4> to vector<4xi32>
//       CHECK: arith.constant dense<252> : vector<4xi32>
//       CHECK: arith.constant dense<1056964608> : vector<4xi32>
//       CHECK: arith.constant dense<28> : vector<4xi32>
//       CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
//       CHECK: %[[D:.*]] = arith.extf %[[F]] : vector<4xf32> to vector<4xf64>
//       CHECK: return %[[D]]
func.func @ext_f4_vector(%q: vector<4xf4E2M1FN>) -> vector<4xf64> {
  %v = arith.extf %q : vector<4xf4E2M1FN> to vector<4xf64>
  return %v : vector<4xf64>
}

// -----

// f8E8M0FNU: the f32 exponent field, one more from a significand of 1.5 up
// (0x400000), the subnormal case (0x600000), NaN (255) for a sign, an
// exponent field of 255 or +0.
// CHECK-LABEL: func @trunc_e8m0_vector
//   CHECK-NOT: arith.truncf
//       CHECK: arith.shrui
//       CHECK: arith.constant dense<4194304> : vector<8xi32>
//       CHECK: arith.cmpi uge
//       CHECK: arith.constant dense<6291456> : vector<8xi32>
//       CHECK: arith.constant dense<255> : vector<8xi32>
//       CHECK: %[[B:.*]] = arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
//       CHECK: %[[S:.*]] = arith.bitcast %[[B]] : vector<8xi8> to vector<8xf8E8M0FNU>
//       CHECK: return %[[S]]
func.func @trunc_e8m0_vector(%v: vector<8xf32>) -> vector<8xf8E8M0FNU> {
  %s = arith.truncf %v : vector<8xf32> to vector<8xf8E8M0FNU>
  return %s : vector<8xf8E8M0FNU>
}

// -----

// 2^(code - 127): the code shifted to the f32 exponent field, code 0 the
// f32 subnormal 2^-127 (0x400000), 255 NaN.
// CHECK-LABEL: func @ext_e8m0_scalar
//       CHECK: %[[B:.*]] = arith.bitcast %{{.*}} : f8E8M0FNU to i8
//       CHECK: %[[C:.*]] = arith.extui %[[B]] : i8 to i32
//       CHECK: arith.shli %[[C]]
//       CHECK: arith.constant 4194304 : i32
//       CHECK: arith.constant 2143289344 : i32
//       CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : i32 to f32
//       CHECK: return %[[F]]
func.func @ext_e8m0_scalar(%s: f8E8M0FNU) -> f32 {
  %v = arith.extf %s : f8E8M0FNU to f32
  return %v : f32
}
