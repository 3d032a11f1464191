//===- ReshapeUtils.h - Reshapes LLVM 22 can lower --------------*- C++ -*-===//
//
// The reshape predicate shared by norm-legalize-reshapes and the CPU
// lowering (norm-lower-cpu), which builds only reshapes LLVM 22's
// expand-strided-metadata can lower.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_SUPPORT_RESHAPEUTILS_H
#define NORM_SUPPORT_RESHAPEUTILS_H

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"

namespace mlir {
namespace norm {

/// Whether one of `groups` (reassociation indices into `expandedType`'s
/// dims) holds more than one dynamic dim: an expand_shape of that kind
/// crashes LLVM 22's expand-strided-metadata (see norm-legalize-reshapes).
bool hasGroupWithSeveralDynamicDims(ShapedType expandedType,
                                    ArrayRef<ReassociationIndices> groups);

} // namespace norm
} // namespace mlir

#endif // NORM_SUPPORT_RESHAPEUTILS_H
