// RUN: norm-opt %s -norm-forall-to-loops -verify-diagnostics

// Loops on tensors are rejected: the pass runs after bufferization.
func.func @tensors(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{norm-forall-to-loops expects bufferized loops}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
    scf.forall.in_parallel {
    }
  }
  return %r : tensor<4xf32>
}
