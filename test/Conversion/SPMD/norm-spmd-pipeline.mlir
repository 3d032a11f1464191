// RUN: norm-opt %s --norm-spmd-pipeline | FileCheck %s
// RUN: norm-opt %s --norm-spmd-pipeline | norm-opt --norm-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// The whole path: partition, the collectives lowered to MPI, no shard ops,
// grids or dlti left; norm-cpu-pipeline then reaches the LLVM dialect with
// MPICH's calls.
// CHECK-LABEL: module {
// CHECK-NOT: shard.
// CHECK-LABEL: func.func @sharded
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: mpi.comm_world
// CHECK-NOT: mpi.comm_split
// CHECK: mpi.allreduce({{.*}}, MPI_SUM, {{.*}}) : memref<4xf64>, memref<4xf64>
// CHECK-LABEL: func.func @main
// CHECK: mpi.init
// CHECK: call @sharded
// CHECK: mpi.allreduce({{.*}}, MPI_BOR, {{.*}}) : memref<32xi32>, memref<32xi32>
// CHECK: mpi.finalize
// CHECK-NOT: shard.
// CHECK-NOT: dlti
// LLVM-NOT: dlti
// LLVM-DAG: llvm.func @MPI_Allreduce
// LLVM-DAG: llvm.func @MPI_Init
// LLVM-DAG: llvm.func @MPI_Comm_size
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @grid(shape = 2)
  func.func @sharded(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
    %xs = shard.shard %x to %s : tensor<4x8xf32>
    %y = norm.rms_norm %xs : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %ys = shard.shard %y to %s : tensor<4x8xf32>
    return %ys : tensor<4x8xf32>
  }
  func.func private @consume(tensor<4x8xf32>)
  func.func @main() {
    mpi.init
    %x = arith.constant dense<1.0> : tensor<4x8xf32>
    %y = func.call @sharded(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    func.call @consume(%y) : (tensor<4x8xf32>) -> ()
    mpi.finalize
    return
  }
}
