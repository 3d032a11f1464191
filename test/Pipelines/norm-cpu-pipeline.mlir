// RUN: norm-opt %s --norm-cpu-pipeline | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline="lowering=linalg" | FileCheck %s
// RUN: norm-opt %s --pass-pipeline="builtin.module(norm-cpu-pipeline{threads=2 vector-width=256})" | FileCheck %s --check-prefix=OMP
// RUN: not norm-opt %s --norm-cpu-pipeline="threads=0" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not norm-opt %s --norm-cpu-pipeline="vector-width=96" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not norm-opt %s --norm-cpu-pipeline="lowering=vector" 2>&1 | FileCheck %s --check-prefix=LOWERING
// RUN: not norm-opt %s --pass-pipeline="builtin.module(func.func(norm-cpu-pipeline))" 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not norm-opt %s --norm-cpu-pipeline="threads=-2" 2>&1 | FileCheck %s --check-prefix=NEG-THREADS
// RUN: not norm-opt %s --pass-pipeline="builtin.module(norm-cpu-pipeline{vector-width=-256})" 2>&1 | FileCheck %s --check-prefix=NEG-WIDTH
// RUN: not norm-opt %s --norm-cpu-pipeline="vector-width=4096" 2>&1 | FileCheck %s --check-prefix=LARGE-WIDTH
// RUN: not norm-opt %s --norm-cpu-pipeline="lowering=" 2>&1 | FileCheck %s --check-prefix=EMPTY-LOWERING
// RUN: not norm-opt %s --norm-cpu-pipeline="tile-rows=8" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not norm-opt %s --norm-cpu-pipeline="vectorize-matmul=maybe" 2>&1 | FileCheck %s --check-prefix=BAD-BOOL

// The whole module reaches the LLVM dialect: no norm, tensor, linalg,
// vector, scf or memref ops remain.
// CHECK-LABEL: llvm.func @rms_norm
//   CHECK-NOT: norm.
//   CHECK-NOT: tensor.
//   CHECK-NOT: linalg.
//   CHECK-NOT: {{ vector\.}}
//   CHECK-NOT: scf.
//   CHECK-NOT: memref.
//       CHECK: llvm.func @_mlir_ciface_rms_norm
// With threads, rows are spread with OpenMP.
// OMP-LABEL: llvm.func @rms_norm
//       OMP: omp.parallel
//       OMP: omp.wsloop

// THREADS: error: norm-cpu-pipeline: option 'threads' must be >= 1, got 0
// WIDTH: error: norm-cpu-pipeline: option 'vector-width' must be 0 or a power of two in [64, 2048], got 96
// LOWERING: for the --lowering option: Cannot find option named 'vector'!
// ANCHOR: error: norm-cpu-pipeline runs on builtin.module, not on 'func.func'
// NEG-THREADS: for the --threads option: '-2' value invalid for uint argument!
// NEG-WIDTH: for the --vector-width option: '-256' value invalid for uint argument!
// LARGE-WIDTH: error: norm-cpu-pipeline: option 'vector-width' must be 0 or a power of two in [64, 2048], got 4096
// EMPTY-LOWERING: for the --lowering option: Cannot find option named ''!
// UNKNOWN: <Pass-Options-Parser>: no such option tile-rows
// BAD-BOOL: for the --vectorize-matmul option: 'maybe' is invalid value for boolean argument

func.func @rms_norm(%x: tensor<?x64xf32>, %w: tensor<64xf32>, %a: tensor<?x64xf32>) -> tensor<?x64xf32> attributes {llvm.emit_c_interface} {
  %s = arith.addf %x, %a : tensor<?x64xf32>
  %y = norm.rms_norm %s weight(%w) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
