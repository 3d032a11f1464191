// RUN: norm-opt %s -norm-forall-to-loops -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-forall-to-loops=threads=4 -split-input-file | FileCheck %s --check-prefix=MT

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
