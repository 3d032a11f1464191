// UPSTREAM BUG, recorded here; not a bug of norm-mlir.
//
// LLVM 22's expand-strided-metadata crashes (null OpFoldResult) on a
// memref.expand_shape with more than one dynamic dim in a reassociation group:
// llvm/llvm-project#186830, fixed after LLVM 22 by llvm/llvm-project#187844.
// norm-lower-cpu does not emit such reshapes (it uses tensor.reshape, see
// test/Regression/norm-lower-cpu-dynamic-dims.mlir), and norm-cpu-pipeline
// and norm-gpu-pipeline run norm-legalize-reshapes, which turns a module's
// own tensor.expand_shape of this kind into tensor.reshape (and rejects
// memref.expand_shape of this kind with a diagnostic), so the pipeline
// lowers this module (execution test:
// test/Integration/CPU/expand-shape-dynamic-group.mlir).
//
// When the first RUN line starts failing, the LLVM in use has the fix:
// delete this file and norm-legalize-reshapes, and
// RowLoopBuilder::expandToInput in NormToVector.cpp may go back to
// tensor.expand_shape.

// RUN: not --crash mlir-opt %s --one-shot-bufferize=bufferize-function-boundaries --expand-strided-metadata
// RUN: norm-opt %s --norm-cpu-pipeline | FileCheck %s

// CHECK-LABEL: llvm.func @two_dynamic_dims_in_one_group

func.func @two_dynamic_dims_in_one_group(%m: tensor<?x64xf32>, %b: index, %s: index) -> tensor<?x?x64xf32> {
  %e = tensor.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}
