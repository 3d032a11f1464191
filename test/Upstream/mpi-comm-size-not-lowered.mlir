// UPSTREAM LIMITATION, recorded here; not a bug of norm-mlir.
//
// LLVM 22's MPI-to-LLVM conversion has no pattern for mpi.comm_size (nor
// mpi.barrier): convert-to-llvm leaves it, and mlir-runner then cannot
// parse the module. norm-lower-shard-collectives checks the number of ranks
// with a direct call of MPI_Comm_size (MPICH's ABI) instead.
//
// When this check starts failing, the LLVM in use lowers mpi.comm_size.

// RUN: mlir-opt %s --convert-to-llvm | FileCheck %s

// CHECK: mpi.comm_size
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @size() -> i32 {
    %world = mpi.comm_world : !mpi.comm
    %r, %s = mpi.comm_size(%world) : !mpi.retval, i32
    return %s : i32
  }
}
