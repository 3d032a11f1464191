// RUN: norm-opt %s -norm-forall-to-loops -split-input-file | FileCheck %s
// RUN: norm-opt %s -norm-forall-to-loops=threads=4 -split-input-file | FileCheck %s --check-prefix=MT

// One thread: every forall becomes scf.for; loops marked for non-temporal
// stores get vector.store {nontemporal = true} for full, unmasked writes
// and keep masked ones.
// CHECK-LABEL: func @nontemporal
//       CHECK: scf.for
//       CHECK:   vector.store %{{.*}}, %{{.*}}[%{{.*}}] {nontemporal = true} : memref<?x64xf32>, vector<8xf32>
//       CHECK:   vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}], %{{.*}} {in_bounds = [true]}
// MT-LABEL: func @nontemporal
//       MT: scf.parallel
func.func @nontemporal(%m: memref<?x64xf32>, %v: vector<8xf32>, %mask: vector<8xi1>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  scf.forall (%i) in (%n) {
    vector.transfer_write %v, %m[%i, %c0] {in_bounds = [true]} : vector<8xf32>, memref<?x64xf32>
    vector.transfer_write %v, %m[%i, %c0], %mask {in_bounds = [true]} : vector<8xf32>, memref<?x64xf32>
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
