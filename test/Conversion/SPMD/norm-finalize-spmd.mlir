// RUN: norm-opt %s -split-input-file --norm-finalize-spmd | FileCheck %s

// A split with a constant color (a reduction over the whole grid) uses the
// world communicator itself; a split over some axes is freed after its
// last use; grids and the MPICH DLTI entry go.
// CHECK-LABEL: module {
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @splits
// CHECK-SAME: (%[[B:.*]]: memref<4xf32>, %[[COLOR:.*]]: i32, %[[KEY:.*]]: i32)
// CHECK: %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NOT: mpi.comm_split(%[[WORLD]], %c0
// CHECK: mpi.allreduce(%[[B]], %[[B]], MPI_SUM, %[[WORLD]])
// CHECK: %[[SUB:.*]] = mpi.comm_split(%[[WORLD]], %[[COLOR]], %[[KEY]]) : !mpi.comm
// CHECK: mpi.allreduce(%[[B]], %[[B]], MPI_SUM, %[[SUB]])
// CHECK: mpi.allreduce(%[[B]], %[[B]], MPI_MAX, %[[SUB]])
// CHECK-NEXT: %[[H64:.*]] = builtin.unrealized_conversion_cast %[[SUB]] : !mpi.comm to i64
// CHECK-NEXT: %[[H:.*]] = arith.trunci %[[H64]] : i64 to i32
// CHECK-NEXT: %[[SLOT:.*]] = memref.alloca() : memref<i32>
// CHECK-NEXT: memref.store %[[H]], %[[SLOT]][] : memref<i32>
// CHECK: %[[P:.*]] = llvm.inttoptr
// CHECK-NEXT: call @MPI_Comm_free(%[[P]]) : (!llvm.ptr) -> i32
// CHECK-NEXT: return
// CHECK: func.func private @MPI_Comm_free(!llvm.ptr) -> i32
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @grid(shape = 2x2)
  func.func @splits(%b: memref<4xf32>, %color: i32, %key: i32) {
    %world = mpi.comm_world : !mpi.comm
    %c0 = arith.constant 0 : i32
    %whole = mpi.comm_split(%world, %c0, %key) : !mpi.comm
    mpi.allreduce(%b, %b, MPI_SUM, %whole) : memref<4xf32>, memref<4xf32>
    %sub = mpi.comm_split(%world, %color, %key) : !mpi.comm
    mpi.allreduce(%b, %b, MPI_SUM, %sub) : memref<4xf32>, memref<4xf32>
    mpi.allreduce(%b, %b, MPI_MAX, %sub) : memref<4xf32>, memref<4xf32>
    return
  }
}

// -----

// Other DLTI entries stay; another MPI implementation stays and gets no
// MPI_Comm_free (its handles are pointers).
// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-NOT: MPI_Comm_free
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @openmpi(%b: memref<4xf32>, %color: i32, %key: i32) {
    %world = mpi.comm_world : !mpi.comm
    %sub = mpi.comm_split(%world, %color, %key) : !mpi.comm
    mpi.allreduce(%b, %b, MPI_SUM, %sub) : memref<4xf32>, memref<4xf32>
    return
  }
}

// -----

// CHECK-LABEL: module attributes {dlti.map = #dlti.map<"other" = 1 : i32>}
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH", "other" = 1 : i32>} {
  func.func @other_entries() {
    return
  }
}
