// RUN: norm-opt %s -norm-lower-cpu="threads=4 vector-width=128" | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="threads=4" | FileCheck %s --check-prefix=LLVM

// Found by norm-fuzz: with threads > 1 and a shape that is only known at run
// time, norm-lower-cpu chose between the parallel and the sequential row
// loop with an scf.if. Its result was typed tensor<?xN> even when the leading
// dims are static (2 rows here) and both loops yield tensor<2x?>: invalid IR.
// (The choice is now made after bufferization; the row loop keeps the static
// row count in its type.)

// CHECK-LABEL: func @static_rows_dynamic_row_size
//       CHECK:   scf.forall {{.*}} -> (tensor<2x?xf32>)
//   CHECK-NOT:   norm.layer_norm
// LLVM-LABEL: llvm.func @static_rows_dynamic_row_size
func.func @static_rows_dynamic_row_size(%x: tensor<2x?x16xf32>, %w: tensor<?x16xf32>, %b: tensor<?x16xf32>) -> tensor<2x?x16xf32> {
  %y = norm.layer_norm %x weight(%w) bias(%b) {axis = -2 : i64, compute_type = f64} : (tensor<2x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<2x?x16xf32>
  return %y : tensor<2x?x16xf32>
}
