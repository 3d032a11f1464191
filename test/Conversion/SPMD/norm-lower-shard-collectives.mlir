// RUN: norm-opt %s -split-input-file --norm-lower-shard-collectives='check-ranks=false' | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-lower-shard-collectives | FileCheck %s --check-prefix=RANKS

// all_gather of bf16: bit-cast to i16, placed at this process's offset in
// zeros, assembled by a bitwise-or all-reduce, bit-cast back.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @all_gather_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xbf16>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i16
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : tensor<2x8xbf16> to tensor<2x8xi16>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%[[Z]] : i16) outs(%{{.*}} : tensor<4x8xi16>)
// CHECK: %[[IDX:.*]] = shard.process_multi_index on @grid axes = [0] : index
// CHECK: %[[OFF:.*]] = arith.muli %[[IDX]], %[[C2]] : index
// CHECK: %[[PLACED:.*]] = tensor.insert_slice %[[BITS]] into %[[ZEROS]][%[[OFF]], 0] [2, 8] [1, 1]
// CHECK: %[[ALL:.*]] = shard.all_reduce %[[PLACED]] on @grid grid_axes = [0] reduction = bitwise_or : tensor<4x8xi16> -> tensor<4x8xi16>
// CHECK: %[[Y:.*]] = arith.bitcast %[[ALL]] : tensor<4x8xi16> to tensor<4x8xbf16>
// CHECK: return %[[Y]]
// The rank check: MPI_Comm_size(MPI_COMM_WORLD) must equal the grid size.
// RANKS-LABEL: func.func @all_gather_bf16
// RANKS: %[[WORLD:.*]] = arith.constant 1140850688 : i32
// RANKS: call @MPI_Comm_size(%[[WORLD]], %{{.*}}) : (i32, !llvm.ptr) -> i32
// RANKS: %[[N:.*]] = memref.load
// RANKS: %[[OK:.*]] = arith.cmpi eq, %[[N]], %c2_i32 : i32
// RANKS: cf.assert %[[OK]], "norm-spmd: grid @grid needs exactly 2 MPI ranks (run with mpirun -np 2)"
// RANKS: func.func private @MPI_Comm_size(i32, !llvm.ptr) -> i32
func.func @all_gather_bf16(%x: tensor<2x8xbf16>) -> tensor<4x8xbf16> {
  %g = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0 : tensor<2x8xbf16> -> tensor<4x8xbf16>
  return %g : tensor<4x8xbf16>
}

// -----

// all_slice: this process's piece, no communication (upstream pattern).
shard.grid @grid(shape = 2x2)
// CHECK-LABEL: func.func @all_slice
// CHECK: shard.process_multi_index on @grid axes = [1]
// CHECK: tensor.extract_slice
// CHECK-NOT: shard.all_
func.func @all_slice(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %s = shard.all_slice %x on @grid grid_axes = [1] slice_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// reduce_scatter: a sum all-reduce, then this process's rows.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[SUM:.*]] = shard.all_reduce %[[X]] on @grid grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: tensor.extract_slice %[[SUM]]
// CHECK-NOT: shard.reduce_scatter
func.func @reduce_scatter(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %s = shard.reduce_scatter %x on @grid grid_axes = [0] scatter_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}

// -----

// all_to_all: gather along the concat axis, slice along the split axis.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @all_to_all
// CHECK: shard.all_reduce %{{.*}} on @grid grid_axes = [0] reduction = bitwise_or : tensor<4x8xi32> -> tensor<4x8xi32>
// CHECK: arith.bitcast %{{.*}} : tensor<4x8xi32> to tensor<4x8xf32>
// CHECK: tensor.extract_slice
// CHECK-NOT: shard.all_to_all
func.func @all_to_all(%x: tensor<2x8xf32>) -> tensor<4x4xf32> {
  %a = shard.all_to_all %x on @grid grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x8xf32> -> tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}

// -----

// A bf16 all-reduce reduces in f32 (MPI has no bf16) and rounds once.
shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @all_reduce_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>)
// CHECK: %[[W:.*]] = shard.all_reduce %[[X]] on @grid grid_axes = [0] reduction = max : tensor<4xbf16> -> tensor<4xf32>
// CHECK: %[[Y:.*]] = arith.truncf %[[W]] : tensor<4xf32> to tensor<4xbf16>
// CHECK: return %[[Y]]
func.func @all_reduce_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = shard.all_reduce %x on @grid grid_axes = [0] reduction = max : tensor<4xbf16> -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// Under mpi.init the check goes after it; a function without grids gets
// none.
shard.grid @grid(shape = 4)
// RANKS-LABEL: func.func @driver
// RANKS-NOT: MPI_Comm_size
// RANKS: mpi.init
// RANKS: call @MPI_Comm_size
// RANKS: cf.assert %{{.*}}, "norm-spmd: grid @grid needs exactly 4 MPI ranks (run with mpirun -np 4)"
// RANKS-LABEL: func.func @no_grid
// RANKS-NOT: MPI_Comm_size
// RANKS: return
func.func @driver(%x: tensor<8xf32>) -> tensor<2xf32> {
  mpi.init
  %s = shard.all_slice %x on @grid grid_axes = [0] slice_axis = 0 : tensor<8xf32> -> tensor<2xf32>
  mpi.finalize
  return %s : tensor<2xf32>
}
func.func @no_grid(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
