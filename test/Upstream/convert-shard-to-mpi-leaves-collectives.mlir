// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's convert-shard-to-mpi lowers shard.all_reduce and the process
// index ops only. On shard.all_gather (and all_slice, all_to_all,
// reduce_scatter, broadcast, ...) it reports a legalization error but exits
// with success and leaves the op, so the failure surfaces later
// ("op was not bufferized"). norm-spmd-pipeline lowers these collectives
// itself first (norm-lower-shard-collectives) and fails with a diagnostic
// on any shard op left after the conversion (norm-finalize-spmd).
//
// When these checks start failing, the LLVM in use lowers all_gather:
// norm-lower-shard-collectives may leave it to upstream.

// RUN: mlir-opt %s --convert-shard-to-mpi 2>&1 | FileCheck %s

// CHECK: error: failed to legalize operation 'shard.all_gather' that was explicitly marked illegal
// CHECK: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0
shard.grid @grid(shape = 2)
func.func @gather(%x: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %g = shard.all_gather %x on @grid grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}
