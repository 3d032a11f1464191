// RUN: norm-opt %s -norm-forall-to-loops -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-forall-to-loops=threads=4 -split-input-file | FileCheck %s --check-prefix=MT
// RUN: norm-opt %s --pass-pipeline="builtin.module(func.func(norm-forall-to-loops{prefetch=false}))" -split-input-file | FileCheck %s --check-prefix=NOPF
// RUN: norm-opt %s -norm-forall-to-loops=native-bf16=true -split-input-file | FileCheck %s --check-prefix=NATIVE

// One thread: every forall becomes scf.for. A loop marked for non-temporal
// stores is versioned on the alignment of the rows it writes: the aligned
// version uses aligned non-temporal vector.stores for full, unmasked writes
// (and keeps masked ones), the other one the original writes.
// CHECK-LABEL: func @nontemporal
//  CHECK-SAME: (%[[M:.*]]: memref<?x64xf32>
//       CHECK: memref.extract_strided_metadata %[[M]]
//       CHECK: memref.extract_aligned_pointer_as_index %[[M]]
//       CHECK: arith.remui %{{.*}}, %c64
//       CHECK: %[[OK:.*]] = arith.andi
//       CHECK: scf.if %[[OK]] {
//       CHECK:   scf.for
//       CHECK:     vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64, nontemporal = true} : memref<64xf32, strided<[1], offset: ?>>, vector<16xf32>
//       CHECK:     vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}], %{{.*}} {in_bounds = [true]}
//       CHECK: } else {
//       CHECK:   scf.for
//   CHECK-NOT:     vector.store
//       CHECK:     vector.transfer_write
// MT-LABEL: func @nontemporal
//       MT: scf.if
//       MT:   scf.parallel
//       MT: } else {
//       MT:   scf.parallel
func.func @nontemporal(%m: memref<?x64xf32>, %v: vector<16xf32>, %mask: vector<16xi1>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0], %mask {in_bounds = [true]} : vector<16xf32>, memref<64xf32, strided<[1], offset: ?>>
  } {norm.nontemporal_stores}
  return
}

// -----

// norm.nontemporal_min_trips: the aligned, non-temporal version also needs
// that many rows (a decode-sized call keeps its output in cache).
// CHECK-LABEL: func @nontemporal_min_trips
//  CHECK-SAME: (%[[M:.*]]: memref<?x64xf32>
//       CHECK: %[[N:.*]] = memref.dim %[[M]]
//       CHECK: %[[ALIGNED:.*]] = arith.andi
//       CHECK: %[[ENOUGH:.*]] = arith.cmpi uge, %[[N]], %c512
//       CHECK: %[[OK:.*]] = arith.andi %[[ALIGNED]], %[[ENOUGH]]
//       CHECK: scf.if %[[OK]] {
//       CHECK:   scf.for
//       CHECK:     vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true}
//       CHECK: } else {
//       CHECK:   scf.for
//   CHECK-NOT:     vector.store
//   CHECK-NOT: norm.nontemporal
func.func @nontemporal_min_trips(%m: memref<?x64xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32, strided<[1], offset: ?>>
  } {norm.nontemporal_stores, norm.nontemporal_min_trips = 512 : i64}
  return
}

// -----

// Loops marked sequential stay scf.for even with threads; plain writes stay.
// MT-LABEL: func @sequential
//       MT: scf.for
//   MT-NOT: scf.parallel
//       MT: vector.transfer_write
func.func @sequential(%m: memref<?x64xf32>, %v: vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    vector.transfer_write %v, %m[%i, %c0] {in_bounds = [true]} : vector<8xf32>, memref<?x64xf32>
  } {norm.sequential}
  return
}

// -----

// A loop marked norm.prefetch_next_row: the full-vector reads of row %i in
// its last sweep prefetch the same columns of row min(%i + 1, rows - 1), one
// prefetch (into L2: locality<2>) per 64-byte line (vector<32xf32> = 128 bytes: two); the first
// sweep, the masked read and the weight read get none.
// CHECK-LABEL: func @prefetch_next_row
//  CHECK-SAME: (%[[X:.*]]: memref<?x4096xf32>, %[[W:.*]]: memref<4096xf32>
//       CHECK: scf.for %[[I:.*]] =
//       CHECK:   %[[DIM:.*]] = memref.dim %[[X]], %c0
//       CHECK:   %[[LAST:.*]] = arith.subi %[[DIM]], %c1
//       CHECK:   %[[PLUS:.*]] = arith.addi %[[I]], %c1
//       CHECK:   %[[NEXT:.*]] = arith.minsi %[[PLUS]], %[[LAST]]
//       CHECK:   scf.for
//   CHECK-NOT:     memref.prefetch
//       CHECK:     vector.transfer_read %[[X]]
//       CHECK:   scf.for %[[J:.*]] =
//       CHECK:     memref.prefetch %[[X]][%[[NEXT]], %[[J]]], read, locality<2>, data : memref<?x4096xf32>
//       CHECK:     %[[J16:.*]] = arith.addi %[[J]], %c16
//       CHECK:     memref.prefetch %[[X]][%[[NEXT]], %[[J16]]], read, locality<2>, data : memref<?x4096xf32>
//  CHECK-NEXT:     vector.transfer_read %[[X]][%[[I]], %[[J]]]
//   CHECK-NOT:     memref.prefetch
//       CHECK:     vector.transfer_read %[[W]]
//   CHECK-NOT:     memref.prefetch
//       CHECK:     vector.transfer_read %[[X]][%[[I]], %[[J]]], %{{.*}}, %{{.*}} {in_bounds = [true]}
//   CHECK-NOT: memref.prefetch
//       CHECK: return
// With prefetch=false the attribute is dropped and nothing is prefetched.
// NOPF-LABEL: func @prefetch_next_row
//   NOPF-NOT: memref.prefetch
//   NOPF-NOT: norm.prefetch_next_row
//       NOPF: return
func.func @prefetch_next_row(%x: memref<?x4096xf32>, %w: memref<4096xf32>, %y: memref<?x4096xf32>, %mask: vector<32xi1>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x4096xf32>
  scf.forall (%i) in (%n) {
    scf.for %j = %c0 to %c4096 step %c32 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<32xf32>
      vector.transfer_write %v, %y[%i, %j] {in_bounds = [true]} : vector<32xf32>, memref<?x4096xf32>
    }
    scf.for %j = %c0 to %c4096 step %c32 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<32xf32>
      %g = vector.transfer_read %w[%j], %pad {in_bounds = [true]} : memref<4096xf32>, vector<32xf32>
      %m = vector.transfer_read %x[%i, %j], %pad, %mask {in_bounds = [true]} : memref<?x4096xf32>, vector<32xf32>
      %p = arith.mulf %v, %g : vector<32xf32>
      %q = arith.addf %p, %m : vector<32xf32>
      vector.transfer_write %q, %y[%i, %j] {in_bounds = [true]} : vector<32xf32>, memref<?x4096xf32>
    }
  } {norm.prefetch_next_row}
  return
}

// -----

// A loop over blocks of rows (its last scf.for runs over the rows of the
// block): the reads of the row index computed in that loop's body, in its
// last sweep, prefetch row min(%r + 1, rows - 1).
// CHECK-LABEL: func @prefetch_next_row_in_blocks
//  CHECK-SAME: (%[[X:[^:]*]]: memref<?x4096xf32>
//       CHECK: scf.for %[[B:.*]] =
//       CHECK:   scf.for %[[L:.*]] =
//       CHECK:     %[[R:.*]] = arith.addi %{{.*}}, %[[L]] : index
//       CHECK:     %[[DIM:.*]] = memref.dim %[[X]], %c0{{.*}}
//       CHECK:     %[[LAST:.*]] = arith.subi %[[DIM]], %c1
//       CHECK:     %[[PLUS:.*]] = arith.addi %[[R]], %c1
//       CHECK:     %[[NEXT:.*]] = arith.minsi %[[PLUS]], %[[LAST]]
//       CHECK:     scf.for
//   CHECK-NOT:       memref.prefetch
//       CHECK:     scf.for %[[J:.*]] =
//       CHECK:       memref.prefetch %[[X]][%[[NEXT]], %[[J]]], read, locality<2>, data : memref<?x4096xf32>
func.func @prefetch_next_row_in_blocks(%x: memref<?x4096xf32>, %y: memref<?x4096xf32>, %blocks: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  scf.forall (%b) in (%blocks) {
    %first = arith.muli %b, %c64 : index
    scf.for %l = %c0 to %c64 step %c1 {
      %r = arith.addi %first, %l : index
      scf.for %j = %c0 to %c4096 step %c16 {
        %v = vector.transfer_read %x[%r, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<16xf32>
        vector.transfer_write %v, %y[%r, %j] {in_bounds = [true]} : vector<16xf32>, memref<?x4096xf32>
      }
      scf.for %j = %c0 to %c4096 step %c16 {
        %v = vector.transfer_read %x[%r, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<16xf32>
        vector.transfer_write %v, %y[%r, %j] {in_bounds = [true]} : vector<16xf32>, memref<?x4096xf32>
      }
    }
  } {norm.prefetch_next_row}
  return
}

// -----

// A row loop over groups of rows (step 2): the reads of every row index its
// body computes prefetch that row + the step, the same row of the next
// group.
// CHECK-LABEL: func @prefetch_next_row_in_groups
//  CHECK-SAME: (%[[X:[^:]*]]: memref<?x4096xf32>
//       CHECK: scf.for %[[B:.*]] =
//       CHECK:   scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %[[STEP:[^ ]*]]
//       CHECK:     %[[R0:.*]] = arith.addi %{{.*}}, %[[L]] : index
//       CHECK:     %[[PLUS0:.*]] = arith.addi %[[R0]], %[[STEP]]
//       CHECK:     %[[NEXT0:.*]] = arith.minsi %[[PLUS0]]
//       CHECK:     %[[R1:.*]] = arith.addi %[[R0]], %c1
//       CHECK:     %[[PLUS1:.*]] = arith.addi %[[R1]], %[[STEP]]
//       CHECK:     %[[NEXT1:.*]] = arith.minsi %[[PLUS1]]
//       CHECK:     scf.for %[[J:.*]] =
//       CHECK:       memref.prefetch %[[X]][%[[NEXT0]], %[[J]]]
//       CHECK:       memref.prefetch %[[X]][%[[NEXT1]], %[[J]]]
func.func @prefetch_next_row_in_groups(%x: memref<?x4096xf32>, %y: memref<?x4096xf32>, %blocks: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  scf.forall (%b) in (%blocks) {
    %first = arith.muli %b, %c64 : index
    scf.for %l = %c0 to %c64 step %c2 {
      %r0 = arith.addi %first, %l : index
      %r1 = arith.addi %r0, %c1 : index
      scf.for %j = %c0 to %c4096 step %c16 {
        %v0 = vector.transfer_read %x[%r0, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<16xf32>
        %v1 = vector.transfer_read %x[%r1, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<16xf32>
        %s = arith.addf %v0, %v1 : vector<16xf32>
        vector.transfer_write %s, %y[%r0, %j] {in_bounds = [true]} : vector<16xf32>, memref<?x4096xf32>
      }
    }
  } {norm.prefetch_next_row}
  return
}

// -----

// A non-temporal store of a bf16 vector truncated from f32 rounds it with
// integer ops (round to nearest even, NaN kept): x86 has no non-temporal
// store of bf16 vectors. The regular version keeps arith.truncf.
// CHECK-LABEL: func @nontemporal_bf16
// With native-bf16 the truncation stays (vcvtneps2bf16 on hosts with
// AVX-512 BF16) and its encodings are xor-ed with a zero that LLVM cannot
// fold (an empty inline asm, once before the loop), which keeps LLVM from
// turning the non-temporal store into a regular one.
// NATIVE-LABEL: func @nontemporal_bf16
//       NATIVE: scf.if
//       NATIVE:   %[[Z:.*]] = llvm.inline_asm "", "=r,0" %{{.*}} : (i16) -> i16
//       NATIVE:   scf.for
//       NATIVE:     %[[T:.*]] = arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
//       NATIVE:     %[[I:.*]] = arith.bitcast %[[T]] : vector<32xbf16> to vector<32xi16>
//       NATIVE:     %[[ZV:.*]] = vector.broadcast %[[Z]] : i16 to vector<32xi16>
//       NATIVE:     %[[X:.*]] = arith.xori %[[I]], %[[ZV]] : vector<32xi16>
//       NATIVE:     %[[B:.*]] = arith.bitcast %[[X]] : vector<32xi16> to vector<32xbf16>
//       NATIVE:     vector.store %[[B]], %{{.*}} {alignment = 64 : i64, nontemporal = true}
//   NATIVE-NOT:     arith.shrui
//       NATIVE: } else {
//       NATIVE:   arith.truncf %{{.*}} : vector<32xf32> to vector<32xbf16>
//   NATIVE-NOT:   llvm.inline_asm
//       NATIVE:   vector.transfer_write
func.func @nontemporal_bf16(%m: memref<?x64xbf16>, %v: vector<32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xbf16>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xbf16> to memref<64xbf16, strided<[1], offset: ?>>
    %t = arith.truncf %v : vector<32xf32> to vector<32xbf16>
    vector.transfer_write %t, %row[%c0] {in_bounds = [true]} : vector<32xbf16>, memref<64xbf16, strided<[1], offset: ?>>
  } {norm.nontemporal_stores}
  return
}

// -----

// An f16 truncation before a non-temporal store stays (vcvtps2ph), its
// encodings xor-ed with an opaque zero, with or without native-bf16: LLVM
// would turn the store of a vector computed by vcvtps2phx (AVX-512 FP16)
// into a regular one.
// CHECK-LABEL: func @nontemporal_f16
//       CHECK: scf.if
//       CHECK:   %[[Z:.*]] = llvm.inline_asm "", "=r,0" %{{.*}} : (i16) -> i16
//       CHECK:   scf.for
//       CHECK:     %[[T:.*]] = arith.truncf %{{.*}} : vector<32xf32> to vector<32xf16>
//       CHECK:     %[[I:.*]] = arith.bitcast %[[T]] : vector<32xf16> to vector<32xi16>
//       CHECK:     %[[ZV:.*]] = vector.broadcast %[[Z]] : i16 to vector<32xi16>
//       CHECK:     %[[X:.*]] = arith.xori %[[I]], %[[ZV]] : vector<32xi16>
//       CHECK:     %[[B:.*]] = arith.bitcast %[[X]] : vector<32xi16> to vector<32xf16>
//       CHECK:     vector.store %[[B]], %{{.*}} {alignment = 64 : i64, nontemporal = true}
//       CHECK: } else {
//   CHECK-NOT:   llvm.inline_asm
//       CHECK:   vector.transfer_write
// A store of f32 values needs no opaque zero.
// CHECK-LABEL: func @nontemporal_f32
//       CHECK: scf.if
//   CHECK-NOT:   llvm.inline_asm
//       CHECK:   vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true}
func.func @nontemporal_f16(%m: memref<?x64xf16>, %v: vector<32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf16>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xf16> to memref<64xf16, strided<[1], offset: ?>>
    %t = arith.truncf %v : vector<32xf32> to vector<32xf16>
    vector.transfer_write %t, %row[%c0] {in_bounds = [true]} : vector<32xf16>, memref<64xf16, strided<[1], offset: ?>>
  } {norm.nontemporal_stores}
  return
}
func.func @nontemporal_f32(%m: memref<?x64xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32, strided<[1], offset: ?>>
  } {norm.nontemporal_stores}
  return
}

// -----

// f4E2M1FN rows (packed two per byte later, by norm-pack-fp4) keep regular
// stores: with no other candidate, the loop is not versioned.
// CHECK-LABEL: func @nontemporal_f4
//   CHECK-NOT: memref.extract_aligned_pointer_as_index
//   CHECK-NOT: scf.if
//       CHECK: scf.for
//       CHECK:   vector.transfer_write %{{.*}} : vector<128xf4E2M1FN>
//   CHECK-NOT: vector.store
func.func @nontemporal_f4(%m: memref<?x256xf4E2M1FN>, %v: vector<128xf4E2M1FN>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x256xf4E2M1FN>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 256] [1, 1] : memref<?x256xf4E2M1FN> to memref<256xf4E2M1FN, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<128xf4E2M1FN>, memref<256xf4E2M1FN, strided<[1], offset: ?>>
  } {norm.nontemporal_stores}
  return
}

// -----

// Without the attribute, or for reads of a row other than the loop's, no
// prefetch is added.
// CHECK-LABEL: func @no_prefetch
//   CHECK-NOT: memref.prefetch
//       CHECK: return
func.func @no_prefetch(%x: memref<?x4096xf32>, %y: memref<?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c4096 = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x4096xf32>
  scf.forall (%i) in (%n) {
    scf.for %j = %c0 to %c4096 step %c32 {
      %v = vector.transfer_read %x[%i, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<32xf32>
      vector.transfer_write %v, %y[%i, %j] {in_bounds = [true]} : vector<32xf32>, memref<?x4096xf32>
    }
  }
  scf.forall (%i) in (%n) {
    scf.for %j = %c0 to %c4096 step %c32 {
      %v = vector.transfer_read %x[%c0, %j], %pad {in_bounds = [true]} : memref<?x4096xf32>, vector<32xf32>
      vector.transfer_write %v, %y[%i, %j] {in_bounds = [true]} : vector<32xf32>, memref<?x4096xf32>
    }
  } {norm.prefetch_next_row}
  return
}

// -----

// norm.parallel_min_trips: with several threads the loop is versioned on its
// trip count, parallel from 32 iterations on and sequential below; with one
// thread it is a plain scf.for.
// CHECK-LABEL: func @min_trips
//   CHECK-NOT: scf.if
//       CHECK: scf.for
//   CHECK-NOT: scf.parallel
// MT-LABEL: func @min_trips
//  MT-SAME: (%[[M:.*]]: memref<?x64xf32>
//       MT: %[[N:.*]] = memref.dim %[[M]], %c0
//       MT: %[[BIG:.*]] = arith.cmpi uge, %[[N]], %c32
//       MT: scf.if %[[BIG]] {
//       MT:   scf.parallel
//       MT:     vector.transfer_write
//       MT: } else {
//       MT:   scf.for
//       MT:     vector.transfer_write
//       MT: }
//       MT: return
func.func @min_trips(%m: memref<?x64xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32, strided<[1], offset: ?>>
  } {norm.parallel_min_trips = 32 : i64}
  return
}

// -----

// A sequential mark wins over norm.parallel_min_trips.
// MT-LABEL: func @min_trips_sequential
//   MT-NOT: scf.parallel
//       MT: scf.for
//       MT: return
func.func @min_trips_sequential(%m: memref<?x64xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    %row = memref.subview %m[%i, 0] [1, 64] [1, 1] : memref<?x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    vector.transfer_write %v, %row[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32, strided<[1], offset: ?>>
  } {norm.parallel_min_trips = 32 : i64, norm.sequential}
  return
}
