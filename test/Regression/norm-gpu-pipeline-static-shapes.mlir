// REQUIRES: cuda-toolkit
// RUN: norm-opt %S/norm-lower-static-shapes.mlir -split-input-file --norm-gpu-pipeline=format=isa -o %t.mlir
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.mlir %ptxas sm_90 | FileCheck %s
// RUN: mlir-translate %t.mlir -split-input-file --mlir-to-llvmir -o %t.ll

// Compile-only: norm-gpu-pipeline on the cases of norm-lower-static-shapes.mlir
// (every op with dims that are dynamic in its type but fold to constants,
// and statically empty inputs): ptxas accepts every kernel and the host
// code translates to LLVM IR.

// CHECK: ptxas ok: layer_norm_one_row_norm_kernel
// CHECK: ptxas ok: rms_norm_stats_norm_kernel
// CHECK: ptxas ok: layer_norm_stats_norm_kernel
// CHECK: ptxas ok: dyt_residual_norm_kernel
// CHECK: ptxas ok: layer_norm_rank3_norm_kernel
// CHECK: ptxas ok: quantize_one_row_norm_kernel
// CHECK: ptxas ok: fused_quantize_norm_kernel
// CHECK: ptxas ok: grads_norm_kernel
// CHECK: ptxas ok: empty_rows_norm_kernel
// CHECK: ptxas ok: empty_rows_folded_norm_kernel
// CHECK: ptxas ok: grads_empty_rows_norm_kernel
