// RUN: not norm-opt %s -norm-lower-cpu="vector-width=100" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not norm-opt %s -norm-lower-cpu="threads=0" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not norm-opt %s -norm-lower-cpu="vector-width=-8" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not norm-opt %s -norm-lower-cpu="vector-width=32" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not norm-opt %s -norm-lower-cpu="vector-width=4096" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not norm-opt %s -norm-lower-cpu="vector-width=avx" 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: not norm-opt %s --pass-pipeline="builtin.module(func.func(norm-lower-cpu{threads=-2}))" 2>&1 | FileCheck %s --check-prefix=NEG-THREADS
// RUN: not norm-opt %s -norm-lower-cpu="parallel-threshold=-1" 2>&1 | FileCheck %s --check-prefix=PAR
// RUN: not norm-opt %s -norm-lower-cpu="nontemporal-threshold=-2" 2>&1 | FileCheck %s --check-prefix=NT
// RUN: not norm-opt %s -norm-lower-cpu="vector-widht=256" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: norm-opt %s -norm-lower-cpu="nontemporal-threshold=-1 parallel-threshold=0" | FileCheck %s --check-prefix=OK

// WIDTH: error: norm-lower-cpu: option 'vector-width' must be 0 or a power of two in [64, 2048], got 100
// THREADS: error: norm-lower-cpu: option 'threads' must be >= 1, got 0
// NEG: for the --vector-width option: '-8' value invalid for uint argument!
// SMALL: error: norm-lower-cpu: option 'vector-width' must be 0 or a power of two in [64, 2048], got 32
// LARGE: error: norm-lower-cpu: option 'vector-width' must be 0 or a power of two in [64, 2048], got 4096
// TEXT: for the --vector-width option: 'avx' value invalid for uint argument!
// NEG-THREADS: for the --threads option: '-2' value invalid for uint argument!
// PAR: error: norm-lower-cpu: option 'parallel-threshold' must be >= 0, got -1
// NT: error: norm-lower-cpu: option 'nontemporal-threshold' must be >= 0, or -1 for never, got -2
// UNKNOWN: error: <Pass-Options-Parser>: no such option vector-widht
// OK-LABEL: func @f
// OK-NOT: norm.rms_norm

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = norm.rms_norm %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
