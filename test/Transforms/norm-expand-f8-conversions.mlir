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

