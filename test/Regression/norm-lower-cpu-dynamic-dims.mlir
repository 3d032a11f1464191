// RUN: norm-opt %s -split-input-file -norm-lower-cpu | FileCheck %s
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: norm-opt %s -split-input-file --norm-cpu-pipeline="threads=2" | FileCheck %s --check-prefix=LLVM

// Found by norm-fuzz: norm-cpu-pipeline crashed (in upstream
// expand-strided-metadata, llvm/llvm-project#186830, fixed after LLVM 22) on
// inputs with two dynamic leading dims, [?, ?, N] as in batch x sequence x
// hidden, or with several dynamic normalized dims: norm-lower-cpu reshaped
// the rows back with a tensor.expand_shape holding several dynamic dims in
// one group. It now uses tensor.reshape there.

// CHECK-LABEL: func @dynamic_batch_and_sequence
//       CHECK:   tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
//       CHECK:   %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xindex>
//       CHECK:   tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?x64xf32>, tensor<3xindex>) -> tensor<?x?x64xf32>
// LLVM-LABEL: llvm.func @dynamic_batch_and_sequence
func.func @dynamic_batch_and_sequence(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %y = norm.rms_norm %x : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// All dims normalized (axis = 0), two of them dynamic.
// CHECK-LABEL: func @all_dims_normalized
//       CHECK:   tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?xf32>, tensor<4xindex>) -> tensor<31x?x64x?xf32>
// LLVM-LABEL: llvm.func @all_dims_normalized
func.func @all_dims_normalized(%x: tensor<31x?x64x?xf32>) -> tensor<31x?x64x?xf32> {
  %y = norm.rms_norm %x {epsilon_mode = #norm<epsilon_mode outside_sqrt>, axis = -4 : i64, compute_type = f64} : (tensor<31x?x64x?xf32>) -> tensor<31x?x64x?xf32>
  return %y : tensor<31x?x64x?xf32>
}

// -----

// One dynamic dim per group keeps tensor.expand_shape.
// CHECK-LABEL: func @one_dynamic_dim_per_group
//       CHECK:   tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [%{{.*}}, 8, 64] : tensor<?x64xf32> into tensor<?x8x64xf32>
// LLVM-LABEL: llvm.func @one_dynamic_dim_per_group
func.func @one_dynamic_dim_per_group(%x: tensor<?x8x64xf32>) -> tensor<?x8x64xf32> {
  %y = norm.rms_norm %x : (tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  return %y : tensor<?x8x64xf32>
}

// -----

// Found by mutating the lit inputs: every dim normalized, the sizes static
// behind a cast. norm-lower-cpu collapsed x into [N] and expanded that into
// the [1, N] row; once canonicalization folded the sizes to constants,
// MLIR 22's canonicalizer crashed on that collapse_shape into expand_shape.
// x now gets a leading unit dim and is collapsed into the row; the sizes
// behind the cast are made static first (norm-lower-static-shapes.mlir).
// CHECK-LABEL: func @all_dims_static_behind_cast
//       CHECK:   %[[X:.*]] = tensor.cast %{{.*}} : tensor<?x4x?xf32> to tensor<2x4x16xf32>
//       CHECK:   %[[UNIT:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 2, 4, 16] : tensor<2x4x16xf32> into tensor<1x2x4x16xf32>
//       CHECK:   tensor.collapse_shape %[[UNIT]] {{\[\[}}0], [1, 2, 3]] : tensor<1x2x4x16xf32> into tensor<1x128xf32>
// LLVM-LABEL: llvm.func @all_dims_static_behind_cast
func.func @all_dims_static_behind_cast(%a: tensor<2x4x16xf32>, %alpha: tensor<f32>) -> tensor<?x4x?xf32> {
  %x = tensor.cast %a : tensor<2x4x16xf32> to tensor<?x4x?xf32>
  %y = norm.dyt %x alpha(%alpha) {axis = 0 : i64} : (tensor<?x4x?xf32>, tensor<f32>) -> tensor<?x4x?xf32>
  return %y : tensor<?x4x?xf32>
}
