// RUN: norm-opt %s --norm-spmd-pipeline -split-input-file | FileCheck %s
// RUN: norm-opt %s --norm-shard-partition -split-input-file | FileCheck %s --check-prefix=PART

// A tensor argument that is only returned (not annotated, not otherwise
// used) is replicated: it keeps its global type and is returned as it is
// (norm-shard-partition used to crash in the upstream partition on it).
// CHECK-LABEL: func.func @passthrough
//  CHECK-SAME: (%{{.*}}: tensor<4x4xf32>, %[[P:.*]]: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>)
//       CHECK: return %{{.*}}, %[[P]] : tensor<4x4xf32>, tensor<4x8xf32>
// PART-LABEL: func.func @passthrough
//  PART-SAME: (%{{.*}}: tensor<4x4xf32>, %[[P:.*]]: tensor<4x8xf32>)
//       PART: shard.all_reduce
//       PART: return %{{.*}}, %[[P]] : tensor<4x4xf32>, tensor<4x8xf32>
shard.grid @grid(shape = 2)
func.func @passthrough(%x: tensor<4x8xf32>, %p: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y = norm.rms_norm %xs : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys, %p : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The same for an argument returned twice, next to an unused one and one
// read by the norm op without an annotation of its own (propagation
// annotates that one: it is split like the other input).
// CHECK-LABEL: func.func @passthrough_twice
//  CHECK-SAME: (%{{.*}}: tensor<4x4xf32>, %[[P:.*]]: tensor<4x8xf32>, %{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<4x4xf32>)
//       CHECK: return %{{.*}}, %[[P]], %[[P]] : tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// PART-LABEL: func.func @passthrough_twice
//       PART: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
shard.grid @grid(shape = 2)
func.func @passthrough_twice(%x: tensor<4x8xf32>, %p: tensor<4x8xf32>, %u: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %y, %h = norm.rms_norm %xs residual(%r) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys, %p, %p : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An unused residual_out takes the sharding of y (same op, same type).
// CHECK-LABEL: func.func @unused_residual_out
//  CHECK-SAME: (%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32>
// PART-LABEL: func.func @unused_residual_out
//  PART-SAME: (%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x4xf32>) -> tensor<4x4xf32>
shard.grid @grid(shape = 2)
func.func @unused_residual_out(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %rs = shard.shard %r to %s : tensor<4x8xf32>
  %y, %h = norm.rms_norm %xs residual(%rs) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %ys = shard.shard %y to %s : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}
