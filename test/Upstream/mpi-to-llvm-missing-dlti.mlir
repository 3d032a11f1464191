// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's MPI-to-LLVM conversion queries the module's DLTI for
// "MPI:Implementation" with errors on: without the entry it prints an
// error (and a dump of the module) yet exits with success and uses MPICH's
// ABI. mlir-runner, for its part, cannot parse a module with a `dlti`
// attribute. norm-cpu-pipeline attaches the MPICH entry before
// convert-to-llvm and strips it after (norm-mpi-implementation).
//
// When this check starts failing, the LLVM in use defaults quietly.

// RUN: mlir-opt %s --convert-to-llvm 2>&1 | FileCheck %s

// CHECK: error: target op of failed DLTI query
// CHECK: llvm.call @MPI_Allreduce
func.func @sum(%b: memref<4xf32>) {
  %world = mpi.comm_world : !mpi.comm
  mpi.allreduce(%b, %b, MPI_SUM, %world) : memref<4xf32>, memref<4xf32>
  return
}
