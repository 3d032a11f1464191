// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's shard-partition crashes (segmentation fault) on a linalg
// reduction split over the grid whose body uses a value defined outside
// it. norm-shard-partition clones constants into the body and rejects any
// other captured value with a diagnostic (shard-partition-invalid.mlir).
//
// When the first RUN line starts failing, the LLVM in use partitions this
// module: delete the check and the guard in ShardPartition.cpp.

// RUN: not --crash mlir-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition))'
// RUN: norm-opt %s --norm-shard-partition | FileCheck %s

shard.grid @grid(shape = 2)
// CHECK-LABEL: func.func @captured_constant
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.constant 2.000000e+00 : f32
// CHECK: shard.all_reduce
func.func @captured_constant(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%xs : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %two : f32
    %t = arith.addf %m, %b : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
