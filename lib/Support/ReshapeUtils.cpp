//===- ReshapeUtils.cpp - Reshapes LLVM 22 can lower ----------------------===//
//
// The reshape predicate shared by norm-legalize-reshapes and the CPU
// lowering.
//
//===----------------------------------------------------------------------===//

#include "norm/Support/ReshapeUtils.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

bool mlir::norm::hasGroupWithSeveralDynamicDims(
    ShapedType expandedType, ArrayRef<ReassociationIndices> groups) {
  return llvm::any_of(groups, [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t d) {
             return expandedType.isDynamicDim(d);
           }) > 1;
  });
}
