//===- InitAllNorm.h - Register the norm dialect and passes -----*- C++ -*-===//
//
// One call each to register everything norm-mlir provides, for tools and
// embedding compilers.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_INITALLNORM_H
#define NORM_INITALLNORM_H

#include "mlir/IR/DialectRegistry.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"

namespace mlir {
namespace norm {

/// Adds the norm dialect (and its interface models) to `registry`.
inline void registerAllNormDialects(DialectRegistry &registry) {
  registry.insert<NormDialect>();
}

/// Registers every norm pass and pipeline with the global pass registry.
inline void registerAllNormPasses() {}

} // namespace norm
} // namespace mlir

#endif // NORM_INITALLNORM_H
