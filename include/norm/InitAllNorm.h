//===- InitAllNorm.h - Register the norm dialect and passes -----*- C++ -*-===//
//
// One call each to register everything norm-mlir provides, for tools and
// embedding compilers.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_INITALLNORM_H
#define NORM_INITALLNORM_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace norm {

/// Adds the norm dialect and the external interface models of its ops
/// (AggregatedOpInterface, TilingInterface) to `registry`.
void registerAllNormDialects(DialectRegistry &registry);

/// Registers every norm pass and pipeline with the global pass registry.
void registerAllNormPasses();

} // namespace norm
} // namespace mlir

#endif // NORM_INITALLNORM_H
