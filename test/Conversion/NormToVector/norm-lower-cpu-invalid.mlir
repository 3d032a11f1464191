// RUN: not norm-opt %s -norm-lower-cpu="vector-width=100" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not norm-opt %s -norm-lower-cpu="threads=0" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not norm-opt %s -norm-lower-cpu="vector-width=-8" 2>&1 | FileCheck %s --check-prefix=NEG

// WIDTH: error: norm-lower-cpu: option 'vector-width' must be 0 or a power of two in [64, 2048], got 100
// THREADS: error: norm-lower-cpu: option 'threads' must be >= 1, got 0
// NEG: for the --vector-width option: '-8' value invalid for uint argument!

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = norm.rms_norm %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
