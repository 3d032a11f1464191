//===- RaiseGrad.h - Raise decomposed norm gradients ------------*- C++ -*-===//
//
// The backward half of norm-raise: finds the gradient of a LayerNorm,
// RMSNorm or DyT written out as elementwise and reduction ops (as PyTorch's
// autograd and decompositions emit it) and replaces it by
// norm.layer_norm_grad, norm.rms_norm_grad or norm.dyt_grad.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEGRAD_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEGRAD_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class Operation;
namespace norm {

/// A value that reads like the dx of a norm gradient but stayed decomposed,
/// and why.
struct DeclinedGradient {
  Operation *op;
  std::string reason;
};

/// Raises the decomposed gradients under `root`, producers first; returns
/// how many gradient ops were created. With `declined`, and when nothing
/// was raised, it is set to the candidates left (one per gradient, in
/// program order); it is cleared when something was raised.
unsigned raiseGradients(Operation *root,
                        SmallVectorImpl<DeclinedGradient> *declined = nullptr);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_RAISEGRAD_H
