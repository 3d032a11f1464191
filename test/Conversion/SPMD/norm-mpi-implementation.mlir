// RUN: norm-opt %s -split-input-file --norm-mpi-implementation | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-mpi-implementation=strip=true | FileCheck %s --check-prefix=STRIP

// A module with mpi ops and no implementation gets MPICH's.
// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// STRIP-LABEL: module {
// STRIP-NOT: dlti
func.func @uses_mpi() {
  mpi.init
  mpi.finalize
  return
}

// -----

// A module without mpi ops is left alone; a named implementation stays
// (unless stripped), other entries always stay.
// CHECK-LABEL: module {
// CHECK-NOT: dlti
func.func @no_mpi() {
  return
}

// -----

// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI", "other" = 1 : i32>}
// STRIP-LABEL: module attributes {dlti.map = #dlti.map<"other" = 1 : i32>}
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI", "other" = 1 : i32>} {
  func.func @named() {
    mpi.init
    return
  }
}
