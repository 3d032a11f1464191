//===- RaiseGrad.h - Raise decomposed norm gradients ------------*- C++ -*-===//
//
// The backward half of norm-raise: finds the gradient of a LayerNorm,
// RMSNorm or DyT written out as elementwise and reduction ops (as PyTorch's
// autograd and decompositions emit it) and replaces it by
// norm.layer_norm_grad, norm.rms_norm_grad or norm.dyt_grad.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISEGRAD_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISEGRAD_H

namespace mlir {
class Operation;
namespace norm {

/// Raises the decomposed gradients under `root`, producers first; returns
/// how many gradient ops were created.
unsigned raiseGradients(Operation *root);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISEGRAD_H
