// RUN: norm-opt %s -norm-forall-to-loops -verify-diagnostics
// RUN: not norm-opt %s -norm-forall-to-loops="threads=0" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not norm-opt %s -norm-forall-to-loops="threads=-4" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not norm-opt %s --pass-pipeline="builtin.module(func.func(norm-forall-to-loops{threads=two}))" 2>&1 | FileCheck %s --check-prefix=TEXT

// THREADS: error: norm-forall-to-loops: option 'threads' must be >= 1, got 0
// NEG: for the --threads option: '-4' value invalid for uint argument!
// TEXT: for the --threads option: 'two' value invalid for uint argument!

// Loops on tensors are rejected: the pass runs after bufferization.
func.func @tensors(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{norm-forall-to-loops expects bufferized loops}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
    scf.forall.in_parallel {
    }
  }
  return %r : tensor<4xf32>
}
