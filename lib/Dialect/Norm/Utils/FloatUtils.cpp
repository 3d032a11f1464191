//===- FloatUtils.cpp - The float formats of the norm ops -----------------===//
//
// Precision and rounding of the supported float types.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/FloatUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;

bool mlir::norm::isSupportedFloat(Type type) {
  return type &&
         (type.isF16() || type.isBF16() || type.isF32() || type.isF64());
}

unsigned mlir::norm::getPrecision(Type type) {
  return llvm::APFloat::semanticsPrecision(
      cast<FloatType>(type).getFloatSemantics());
}

double mlir::norm::roundToType(double value, Type type) {
  llvm::APFloat result(value);
  bool losesInfo = false;
  result.convert(cast<FloatType>(type).getFloatSemantics(),
                 llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return result.convertToDouble();
}
