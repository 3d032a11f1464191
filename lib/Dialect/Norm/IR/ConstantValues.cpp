//===- ConstantValues.cpp - Elements of float tensor constants ------------===//
//
// Dense, splat and dense_resource float constants read as APFloat.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/ConstantValues.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;
using namespace mlir::norm;

/// The elements of a dense_resource blob of `type`: little-endian,
/// row-major, `bitwidth / 8` bytes each (as the builtin dialect stores
/// them).
static std::optional<SmallVector<APFloat>>
readResource(DenseResourceElementsAttr attr, RankedTensorType type) {
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  auto elementType = cast<FloatType>(type.getElementType());
  unsigned bits = elementType.getWidth();
  if (bits % 8 != 0 || bits > 64)
    return std::nullopt;
  size_t bytes = bits / 8;
  int64_t count = type.getNumElements();
  if (data.size() != static_cast<size_t>(count) * bytes)
    return std::nullopt;
  SmallVector<APFloat> values;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t word = 0;
    std::memcpy(&word, data.data() + i * bytes, bytes);
    values.emplace_back(elementType.getFloatSemantics(), APInt(bits, word));
  }
  return values;
}

std::optional<FloatConstant>
mlir::norm::readFloatConstant(Attribute attr, int64_t maxElements) {
  auto typed = dyn_cast_or_null<TypedAttr>(attr);
  if (!typed)
    return std::nullopt;
  // A dense_resource constant may carry a dynamically shaped type (the
  // verifier accepts it): its element count is unknown, so it is not read.
  auto type = dyn_cast<RankedTensorType>(typed.getType());
  if (!type || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()) ||
      type.getNumElements() > maxElements)
    return std::nullopt;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    FloatConstant constant{type, {}};
    constant.values.reserve(type.getNumElements());
    for (const APFloat &value : dense.getValues<APFloat>())
      constant.values.push_back(value);
    return constant;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    std::optional<SmallVector<APFloat>> values = readResource(resource, type);
    if (!values)
      return std::nullopt;
    return FloatConstant{type, std::move(*values)};
  }
  return std::nullopt;
}

std::optional<FloatConstant>
mlir::norm::readFloatConstant(Value value, int64_t maxElements) {
  Attribute attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  return readFloatConstant(attr, maxElements);
}

double mlir::norm::getAsDouble(const APFloat &value) {
  APFloat wide = value;
  bool losesInfo = false;
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return wide.convertToDouble();
}

SmallVector<double> FloatConstant::getValuesAsDoubles() const {
  SmallVector<double> doubles;
  doubles.reserve(values.size());
  for (const APFloat &value : values)
    doubles.push_back(getAsDouble(value));
  return doubles;
}
