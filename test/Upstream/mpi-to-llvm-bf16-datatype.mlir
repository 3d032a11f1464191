// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's MPI-to-LLVM conversion passes MPI datatype 0 (no datatype) for
// a bf16 buffer; MPICH aborts at run time ("Invalid datatype"). MPI has no
// bf16 (nor f16) type: norm-lower-shard-collectives all-reduces 16-bit
// floats in f32 and rounds once, and gathers them as 16-bit integers.
//
// When these checks start failing, the LLVM in use handles bf16 buffers.

// RUN: mlir-opt %s --convert-to-llvm | FileCheck %s

// CHECK-LABEL: llvm.func @bf16
// CHECK: %[[NONE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[SUM:.*]] = llvm.mlir.constant(1476395011 : i32) : i32
// CHECK: llvm.call @MPI_Allreduce(%{{.*}}, %{{.*}}, %{{.*}}, %[[NONE]], %[[SUM]], %{{.*}})
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  func.func @bf16(%b: memref<4xbf16>) {
    %world = mpi.comm_world : !mpi.comm
    mpi.allreduce(%b, %b, MPI_SUM, %world) : memref<4xbf16>, memref<4xbf16>
    return
  }
}
