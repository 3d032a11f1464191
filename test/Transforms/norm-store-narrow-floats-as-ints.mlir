// RUN: norm-opt %s -split-input-file -norm-store-narrow-floats-as-ints | FileCheck %s

// A store of a 16-bit float vector that was bitcast from an integer vector
// stores the integer vector instead (LLVM scalarizes bf16 vector stores on
// x86 without native bf16).
// CHECK-LABEL: llvm.func @store_bitcast
//  CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[V:.*]]: vector<16xi16>)
//       CHECK: llvm.store %[[V]], %[[P]] : vector<16xi16>, !llvm.ptr
llvm.func @store_bitcast(%p: !llvm.ptr, %v: vector<16xi16>) {
  %b = llvm.bitcast %v : vector<16xi16> to vector<16xbf16>
  llvm.store %b, %p : vector<16xbf16>, !llvm.ptr
  llvm.return
}

// -----

// Masked stores too.
// CHECK-LABEL: llvm.func @masked_store_bitcast
//  CHECK-SAME: (%[[P:.*]]: !llvm.ptr, %[[V:.*]]: vector<8xi16>, %[[M:.*]]: vector<8xi1>)
//       CHECK: llvm.intr.masked.store %[[V]], %[[P]], %[[M]] {{.*}}: vector<8xi16>, vector<8xi1> into !llvm.ptr
llvm.func @masked_store_bitcast(%p: !llvm.ptr, %v: vector<8xi16>, %m: vector<8xi1>) {
  %b = llvm.bitcast %v : vector<8xi16> to vector<8xf16>
  llvm.intr.masked.store %b, %p, %m {alignment = 2 : i32} : vector<8xf16>, vector<8xi1> into !llvm.ptr
  llvm.return
}

// -----

// A store of a narrow float vector computed in floats is left alone, and
// so are wider float vectors.
// CHECK-LABEL: llvm.func @not_a_bitcast
//       CHECK: %[[T:.*]] = llvm.fptrunc
//       CHECK: llvm.store %[[T]], %{{.*}} : vector<16xbf16>, !llvm.ptr
//       CHECK: %[[W:.*]] = llvm.bitcast
//       CHECK: llvm.store %[[W]], %{{.*}} : vector<8xf32>, !llvm.ptr
llvm.func @not_a_bitcast(%p: !llvm.ptr, %f: vector<16xf32>, %i: vector<8xi32>) {
  %t = llvm.fptrunc %f : vector<16xf32> to vector<16xbf16>
  llvm.store %t, %p : vector<16xbf16>, !llvm.ptr
  %w = llvm.bitcast %i : vector<8xi32> to vector<8xf32>
  llvm.store %w, %p : vector<8xf32>, !llvm.ptr
  llvm.return
}

// -----

// The arith fastmath attribute arith-emulate-unsupported-floats leaves on
// float conversions is dropped (llvm.fpext/fptrunc take no fastmath flags).
// CHECK-LABEL: llvm.func @drop_arith_fastmath
//       CHECK: llvm.fpext %{{.*}} : vector<4xbf16> to vector<4xf32>
//   CHECK-NOT: fastmath
//       CHECK: llvm.return
llvm.func @drop_arith_fastmath(%v: vector<4xbf16>) -> vector<4xf32> {
  %e = llvm.fpext %v {fastmath = #arith.fastmath<contract>} : vector<4xbf16> to vector<4xf32>
  llvm.return %e : vector<4xf32>
}
