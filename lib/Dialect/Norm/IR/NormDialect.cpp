//===- NormDialect.cpp - Norm dialect ---------------------------*- C++ -*-===//
//
// Registers the ops and attributes of the norm dialect.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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
Operation *NormDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (!arith::ConstantOp::isBuildableWith(value, type))
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type,
                                   llvm::cast<TypedAttr>(value));
}

/// The dialect's discardable attributes are markers on `scf.forall` (see
/// `discardableAttrs` in NormDialect.td): units, and an i64 >= 2 for
/// `norm.parallel_min_trips` and `norm.nontemporal_min_trips`; any other
/// `norm.` attribute on an op of another dialect is unknown.
LogicalResult NormDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  if (name == KernelAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attribute.getValue()))
      return op->emitError("attribute '")
             << name << "' must be a unit attribute, got "
             << attribute.getValue();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError("attribute '")
             << name << "' is only valid on functions, got '" << op->getName()
             << "'";
    return success();
  }
  if (name != SequentialAttrHelper::getNameStr() &&
      name != NontemporalStoresAttrHelper::getNameStr() &&
      name != PrefetchNextRowAttrHelper::getNameStr() &&
      name != ParallelMinTripsAttrHelper::getNameStr() &&
      name != NontemporalMinTripsAttrHelper::getNameStr())
    return op->emitError("unknown norm dialect attribute '") << name << "'";
  if (name == ParallelMinTripsAttrHelper::getNameStr() ||
      name == NontemporalMinTripsAttrHelper::getNameStr()) {
    auto trips = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!trips || !trips.getType().isInteger(64) || trips.getInt() < 2)
      return op->emitError("attribute '")
             << name << "' must be an i64 integer >= 2, got "
             << attribute.getValue();
  } else if (!isa<UnitAttr>(attribute.getValue()))
    return op->emitError("attribute '")
           << name << "' must be a unit attribute, got "
           << attribute.getValue();
  if (!isa<scf::ForallOp>(op))
    return op->emitError("attribute '")
           << name << "' is only valid on 'scf.forall', got '" << op->getName()
           << "'";
  return success();
}
