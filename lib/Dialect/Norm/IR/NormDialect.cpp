//===- NormDialect.cpp - Norm dialect ---------------------------*- C++ -*-===//
//
// Registers the ops and attributes of the norm dialect.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::norm;

#include "norm/Dialect/Norm/IR/NormOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "norm/Dialect/Norm/IR/NormAttrs.cpp.inc"

void NormDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "norm/Dialect/Norm/IR/NormOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "norm/Dialect/Norm/IR/NormAttrs.cpp.inc"
      >();
}

/// Folded norm results are dense float tensors: materialize them with
/// `arith.constant`.
Operation *NormDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  if (!arith::ConstantOp::isBuildableWith(value, type))
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type,
                                   llvm::cast<TypedAttr>(value));
}
