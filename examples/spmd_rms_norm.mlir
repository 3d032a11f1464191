// RMSNorm with its hidden dim split over 2 MPI ranks (tensor parallelism).
//
// Run (from the repository root, after building; scripts/test.sh runs it as
// written where mpirun is installed):
//
//   build/bin/norm-opt examples/spmd_rms_norm.mlir --norm-spmd-pipeline \
//     | build/bin/norm-opt --norm-cpu-pipeline -o /tmp/spmd.llvm.mlir
//   mpirun -np 2 /usr/lib/llvm-22/bin/mlir-runner /tmp/spmd.llvm.mlir \
//     -e main -entry-point-result=void -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/x86_64-linux-gnu/libmpich.so
//
// @rms_norm_tp is written on global shapes with upstream shard annotations;
// norm-spmd-pipeline partitions it (each rank holds 4 of the 8 columns,
// computes its partial sums of squares, and one MPI_Allreduce combines
// them) and adapts the call in @main, which builds the same global input on
// every rank and prints the whole result on every rank.

shard.grid @grid(shape = 2)

func.func @rms_norm_tp(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %split = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %split : tensor<4x8xf32>
  %y = norm.rms_norm %xs weight(%w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %split : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  mpi.init
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0],
                             [0.5, 0.25, 0.125, 2.0, 4.0, 8.0, 16.0, 32.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0]]> : tensor<4x8xf32>
  %w = arith.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]> : tensor<8xf32>
  %y = func.call @rms_norm_tp(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %u = tensor.cast %y : tensor<4x8xf32> to tensor<*xf32>
  func.call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  mpi.finalize
  return
}
