//===- NormOps.cpp - Norm dialect ops ---------------------------*- C++ -*-===//
//
// Verifier, shape reification and builders helpers of the norm ops.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::norm;
using mlir::norm::detail::formatShape;

#include "norm/Dialect/Norm/IR/NormEnums.cpp.inc"
#include "norm/Dialect/Norm/IR/NormInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "norm/Dialect/Norm/IR/NormOps.cpp.inc"

SmallVector<Type, 2> mlir::norm::inferNormResultTypes(Value x, Value residual) {
  SmallVector<Type, 2> types{x.getType()};
  if (residual)
    types.push_back(x.getType());
  return types;
}

SmallVector<Type, 2> mlir::norm::inferQuantizeResultTypes(Value input,
                                                          Value scale,
                                                          Type quantizedType,
                                                          int64_t groupSize) {
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<Type, 2> types{inputType.clone(quantizedType)};
  if (scale)
    return types;
  SmallVector<int64_t> shape(inputType.getShape());
  if (!shape.empty()) {
    int64_t last = shape.back();
    shape.back() = groupSize == 0 ? 1
                   : (groupSize > 0 && !ShapedType::isDynamic(last) &&
                      last % groupSize == 0)
                       ? last / groupSize
                       : ShapedType::kDynamic;
  }
  types.push_back(inputType.clone(shape, Float32Type::get(input.getContext())));
  return types;
}

/// Names the results `y`, `residual_out`, `mean` and `rstd`.
static void getNormResultNames(NormOpInterface op,
                               OpAsmSetValueNameFn setNameFn) {
  setNameFn(op.getY(), "y");
  for (auto [value, name] :
       {std::pair<Value, StringRef>{op.getResidualOut(), "residual_out"},
        {op.getMean(), "mean"},
        {op.getRstd(), "rstd"}})
    if (value)
      setNameFn(value, name);
}

void LayerNormOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  getNormResultNames(*this, setNameFn);
}
void RMSNormOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  getNormResultNames(*this, setNameFn);
}
void DyTOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  getNormResultNames(*this, setNameFn);
}

ArrayRef<StringRef> mlir::norm::getNormAttributeNames() {
  static const StringRef names[] = {
      "epsilon",      "epsilon_mode", "weight_offset", "axis",
      "compute_type", "cast_mode",    "return_stats"};
  return names;
}

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

std::string mlir::norm::detail::formatShape(ArrayRef<int64_t> shape) {
  std::string result = "[";
  llvm::raw_string_ostream os(result);
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (ShapedType::isDynamic(dim))
      os << "?";
    else
      os << dim;
  });
  os << "]";
  return result;
}

/// True when two shapes have the same rank and no pair of static dims
/// differs.
static bool areShapesCompatible(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs))
    if (!ShapedType::isDynamic(l) && !ShapedType::isDynamic(r) && l != r)
      return false;
  return true;
}

/// Takes the static dims of `shape` (compatible with `known`) into `known`.
static void refineShape(MutableArrayRef<int64_t> known,
                        ArrayRef<int64_t> shape) {
  for (auto [k, dim] : llvm::zip_equal(known, shape))
    if (ShapedType::isDynamic(k))
      k = dim;
}

/// True for `tensor<T>` and `tensor<1xT>`.
bool mlir::norm::isScalarParameterShape(ArrayRef<int64_t> shape) {
  return shape.empty() || (shape.size() == 1 && shape[0] == 1);
}

/// Checks a `weight`, `bias` or `alpha` parameter against `x`: its element
/// type is that of `x` or f32 and, unless `scalarOnly` (alpha, whose shape
/// ODS checks), its shape is `x.shape[axis:]` (or a scalar when
/// `allowScalar`).
static LogicalResult verifyParameter(Operation *op, StringRef name,
                                     RankedTensorType type,
                                     RankedTensorType xType,
                                     ArrayRef<int64_t> normalizedShape,
                                     bool allowScalar, bool scalarOnly) {
  Type elementType = type.getElementType();
  Type xElementType = xType.getElementType();
  if (elementType != xElementType && !elementType.isF32())
    return op->emitOpError("operand '")
           << name << "' element type must be " << xElementType
           << " (the element type of 'x') or f32, got " << elementType;
  if (scalarOnly || (allowScalar && isScalarParameterShape(type.getShape())))
    return success();
  if (!areShapesCompatible(type.getShape(), normalizedShape))
    return op->emitOpError("operand '")
           << name << "' shape " << formatShape(type.getShape())
           << " must be the normalized shape " << formatShape(normalizedShape)
           << " of 'x' (x.shape[axis:])" << (allowScalar ? " or a scalar" : "");
  return success();
}

/// Checks an explicit `compute_type` (null: the default) against x's element
/// type: f32, f64 or that type, and not narrower than it.
static LogicalResult verifyComputeType(Operation *op, Type computeType,
                                       Type xElementType) {
  if (!computeType)
    return success();
  if (computeType != xElementType && !computeType.isF32() &&
      !computeType.isF64())
    return op->emitOpError("attribute 'compute_type' must be f32, f64 or "
                           "the element type of 'x' (")
           << xElementType << "), got " << computeType;
  if (computeType.getIntOrFloatBitWidth() <
      xElementType.getIntOrFloatBitWidth())
    return op->emitOpError("attribute 'compute_type' ")
           << computeType << " is narrower than the element type of 'x' ("
           << xElementType << ")";
  return success();
}

/// Checks what the generated verifier leaves open in the generic form: every
/// operand segment holds at most one value and the required ones (`x`, and
/// `alpha` on dyt) exactly one, and every attribute with a default holds a
/// value of the right kind (a wrongly-kinded value given next to explicit
/// properties is dropped to null by the property conversion).
static LogicalResult verifyStructure(Operation *op, unsigned numRequired) {
  auto segments = dyn_cast_or_null<DenseI32ArrayAttr>(
      op->getInherentAttr("operandSegmentSizes").value_or(Attribute()));
  if (!segments)
    return op->emitOpError("requires the 'operandSegmentSizes' property");
  for (auto [index, size] : llvm::enumerate(segments.asArrayRef())) {
    bool required = index < numRequired;
    if (size < 0 || size > 1 || (required && size != 1))
      return op->emitOpError("operand segment #")
             << index << " must hold " << (required ? "exactly" : "at most")
             << " one value, got " << size;
  }
  for (StringAttr name : op->getRegisteredInfo()->getAttributeNames()) {
    if (name == "operandSegmentSizes" || name == "compute_type" ||
        name == "return_stats")
      continue;
    std::optional<Attribute> value = op->getInherentAttr(name);
    if (!value || !*value)
      return op->emitOpError("attribute '")
             << name.strref() << "' is missing or of the wrong kind";
  }
  return success();
}

/// Checks `axis` against the rank of `x`.
static LogicalResult verifyAxis(Operation *op, int64_t axis,
                                RankedTensorType xType) {
  int64_t rank = xType.getRank();
  if (axis < -rank || axis >= rank)
    return op->emitOpError("attribute 'axis' = ")
           << axis << " is out of range for 'x' of rank " << rank
           << " (expected " << -rank << " to " << rank - 1 << ")";
  return success();
}

/// Checks the results of a norm op: their number (from `residual` and
/// `return_stats`), `y` and `residual_out` of x's type, and the statistics
/// of the leading dims of x in the compute type.
static LogicalResult verifyNormResults(NormOpInterface op) {
  RankedTensorType xType = op.getInputType();
  if (op.getY().getType() != xType)
    return op->emitOpError("result 'y' type ")
           << op.getY().getType() << " must equal the type of 'x' " << xType;
  bool hasResidual = static_cast<bool>(op.getResidual());
  unsigned numResults = op->getNumResults();
  unsigned numStats = op.getNumStatsResults();
  unsigned expected = op.getNumOutputs() + numStats;
  if (numResults != expected) {
    if (hasResidual && numResults == 1 + numStats)
      return op->emitOpError("expects a second result 'residual_out' when "
                             "'residual' is given");
    if (!hasResidual && numStats == 0 && numResults == 2)
      return op->emitOpError(
          "has a second result 'residual_out' but no 'residual' operand");
    InFlightDiagnostic diag = op->emitOpError("expects ")
                              << expected << " results (y"
                              << (hasResidual ? ", residual_out" : "");
    if (numStats)
      diag << (op.subtractsMean() ? ", mean, rstd" : ", rstd");
    return diag << "), got " << numResults;
  }
  TypedValue<RankedTensorType> residualOut = op.getResidualOut();
  if (residualOut && residualOut.getType() != xType)
    return op->emitOpError("result 'residual_out' type ")
           << residualOut.getType() << " must equal the type of 'x' " << xType;
  return success();
}

/// Checks the statistics results (the leading dims of x in the compute
/// type); needs a valid axis and compute type.
static LogicalResult verifyNormStats(NormOpInterface op) {
  if (!op.getNumStatsResults())
    return success();
  RankedTensorType statsType = op.getStatsType();
  for (auto [name, stat] : {std::pair<StringRef, TypedValue<RankedTensorType>>{
                                "mean", op.getMean()},
                            {"rstd", op.getRstd()}})
    if (stat && stat.getType() != statsType)
      return op->emitOpError("result '")
             << name << "' type " << stat.getType() << " must be " << statsType
             << " (the leading dims of 'x' in the compute type)";
  return success();
}

/// Checks `residual`, `alpha`, `weight` and `bias` against `x` and each
/// other: element types, and shapes (x's, the normalized shape or a scalar).
static LogicalResult verifyNormOperands(NormOpInterface op,
                                        bool allowScalarWeight) {
  Operation *operation = op.getOperation();
  RankedTensorType xType = op.getInputType();
  Type xElementType = xType.getElementType();
  // What x's shape is known to be once the residual's static dims are
  // taken in; the weight and bias are checked against it and refine it in
  // turn, so that operands that disagree with each other are rejected.
  SmallVector<int64_t> knownShape(xType.getShape());
  if (TypedValue<RankedTensorType> residual = op.getResidual()) {
    RankedTensorType residualType = residual.getType();
    if (residualType.getElementType() != xElementType)
      return op->emitOpError("operand 'residual' element type must be ")
             << xElementType << " (the element type of 'x'), got "
             << residualType.getElementType();
    if (!areShapesCompatible(residualType.getShape(), xType.getShape()))
      return op->emitOpError("operand 'residual' shape ")
             << formatShape(residualType.getShape())
             << " must match the shape of 'x' "
             << formatShape(xType.getShape());
    refineShape(knownShape, residualType.getShape());
  }

  int64_t normalizedDim = op.getNormalizedDim();
  ArrayRef<int64_t> normalizedShape =
      xType.getShape().drop_front(normalizedDim);
  MutableArrayRef<int64_t> knownNormalizedShape =
      MutableArrayRef<int64_t>(knownShape).drop_front(normalizedDim);
  // Checks a weight or bias against the normalized shape the other operands
  // imply, and takes its static dims in.
  auto checkAgainstOthers = [&](StringRef name, RankedTensorType type,
                                bool allowScalar) -> LogicalResult {
    ArrayRef<int64_t> shape = type.getShape();
    if (allowScalar && isScalarParameterShape(shape))
      return success();
    if (!areShapesCompatible(shape, knownNormalizedShape))
      return op->emitOpError("operand '")
             << name << "' shape " << formatShape(shape)
             << " conflicts with the normalized shape "
             << formatShape(knownNormalizedShape)
             << " that the other operands imply";
    refineShape(knownNormalizedShape, shape);
    return success();
  };
  if (TypedValue<RankedTensorType> alpha = op.getAlpha())
    if (failed(verifyParameter(operation, "alpha", alpha.getType(), xType,
                               normalizedShape, /*allowScalar=*/true,
                               /*scalarOnly=*/true)))
      return failure();
  if (TypedValue<RankedTensorType> weight = op.getWeight())
    if (failed(verifyParameter(operation, "weight", weight.getType(), xType,
                               normalizedShape, allowScalarWeight,
                               /*scalarOnly=*/false)) ||
        failed(
            checkAgainstOthers("weight", weight.getType(), allowScalarWeight)))
      return failure();
  if (TypedValue<RankedTensorType> bias = op.getBias())
    if (failed(verifyParameter(operation, "bias", bias.getType(), xType,
                               normalizedShape, /*allowScalar=*/false,
                               /*scalarOnly=*/false)) ||
        failed(checkAgainstOthers("bias", bias.getType(),
                                  /*allowScalar=*/false)))
      return failure();
  return success();
}

/// Checks the rules of the op semantics shared by the three ops that relate
/// operands, results and attributes to `x`; the per-operand types are ODS
/// constraints. Emits one diagnostic naming the offending operand or
/// attribute.
static LogicalResult verifyNormOp(NormOpInterface op, bool allowScalarWeight) {
  Operation *operation = op.getOperation();
  if (failed(verifyStructure(operation, isa<DyTOp>(operation) ? 2 : 1)))
    return failure();

  // Attributes of this dialect that the op does not take.
  for (NamedAttribute attr : operation->getDiscardableAttrs())
    if (llvm::is_contained(getNormAttributeNames(), attr.getName().strref()))
      return op->emitOpError("does not take attribute '")
             << attr.getName().strref() << "'";

  RankedTensorType xType = op.getInputType();
  if (failed(verifyNormResults(op)) ||
      failed(verifyAxis(operation, op.getAxis(), xType)) ||
      failed(verifyComputeType(operation, op.getExplicitComputeType(),
                               xType.getElementType())) ||
      failed(verifyNormStats(op)))
    return failure();

  APFloat epsilon = op.getEpsilon();
  if (!epsilon.isFinite() || (epsilon.isNegative() && !epsilon.isZero()))
    return op->emitOpError("attribute 'epsilon' must be finite and >= 0, got ")
           << epsilon.convertToDouble();

  APFloat weightOffset = op.getWeightOffset();
  if (!weightOffset.isFinite())
    return op->emitOpError("attribute 'weight_offset' must be finite");
  if (!weightOffset.isZero() && !op.getWeight())
    return op->emitOpError(
        "attribute 'weight_offset' requires a 'weight' operand");

  return verifyNormOperands(op, allowScalarWeight);
}

LogicalResult LayerNormOp::verify() {
  return verifyNormOp(*this, /*allowScalarWeight=*/false);
}

LogicalResult RMSNormOp::verify() {
  return verifyNormOp(*this, /*allowScalarWeight=*/true);
}

LogicalResult DyTOp::verify() {
  return verifyNormOp(*this, /*allowScalarWeight=*/false);
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

/// Checks what relates a gradient op's operands and results to `x` (the
/// per-operand types are ODS constraints): `dy`, `axis`, `compute_type`,
/// the statistics (leading dims of x, compute type), `alpha`, `weight`, and
/// the results `dx`, `dweight`, `dbias`, `dalpha`.
template <typename OpTy>
static LogicalResult verifyGradOp(
    OpTy op,
    ArrayRef<std::pair<StringRef, TypedValue<RankedTensorType>>> statistics,
    bool allowScalarWeight) {
  Operation *operation = op.getOperation();
  for (NamedAttribute attr : operation->getDiscardableAttrs())
    if (llvm::is_contained(getNormAttributeNames(), attr.getName().strref()))
      return op->emitOpError("does not take attribute '")
             << attr.getName().strref() << "'";

  RankedTensorType xType = op.getX().getType();
  Type xElementType = xType.getElementType();
  if (op.getDy().getType() != xType)
    return op->emitOpError("operand 'dy' type ")
           << op.getDy().getType() << " must equal the type of 'x' " << xType;
  if (failed(verifyAxis(operation, op.getAxis(), xType)))
    return failure();
  std::optional<Type> explicitCompute = op.getComputeType();
  if (failed(verifyComputeType(operation,
                               explicitCompute ? *explicitCompute : Type(),
                               xElementType)))
    return failure();
  Type computeType = op.getComputeElementType();
  int64_t normalizedDim = op.getNormalizedDim();
  ArrayRef<int64_t> leadingShape = xType.getShape().take_front(normalizedDim);
  ArrayRef<int64_t> normalizedShape =
      xType.getShape().drop_front(normalizedDim);

  for (auto [name, value] : statistics) {
    RankedTensorType type = value.getType();
    if (type.getElementType() != computeType ||
        !areShapesCompatible(type.getShape(), leadingShape))
      return op->emitOpError("operand '")
             << name << "' must be a tensor of the leading dims "
             << formatShape(leadingShape) << " of 'x' with the compute type "
             << computeType << ", got " << value.getType();
  }
  TypedValue<RankedTensorType> alpha;
  if constexpr (OpTy::kHasAlpha) {
    alpha = op.getAlpha();
    if (failed(verifyParameter(operation, "alpha", alpha.getType(), xType,
                               normalizedShape, /*allowScalar=*/true,
                               /*scalarOnly=*/true)))
      return failure();
  }
  TypedValue<RankedTensorType> weight = op.getWeight();
  if (weight &&
      failed(verifyParameter(operation, "weight", weight.getType(), xType,
                             normalizedShape, allowScalarWeight,
                             /*scalarOnly=*/false)))
    return failure();

  unsigned expected = op.getExpectedNumResults();
  if (op->getNumResults() != expected)
    return op->emitOpError("expects ")
           << expected << " results (dx" << (weight ? ", dweight" : "")
           << (op.getHasBiasFlag() ? ", dbias" : "")
           << (OpTy::kHasAlpha ? ", dalpha" : "") << "), got "
           << op->getNumResults();
  if (op.getDx().getType() != xType)
    return op->emitOpError("result 'dx' type ")
           << op.getDx().getType() << " must equal the type of 'x' " << xType;
  if (weight && op.getDweight().getType() != weight.getType())
    return op->emitOpError("result 'dweight' type ")
           << op.getDweight().getType() << " must equal the type of 'weight' "
           << weight.getType();
  if (TypedValue<RankedTensorType> dbias = op.getDbias())
    if (failed(verifyParameter(operation, "dbias", dbias.getType(), xType,
                               normalizedShape, /*allowScalar=*/false,
                               /*scalarOnly=*/false)))
      return failure();
  if (alpha && op->getResults().back().getType() != alpha.getType())
    return op->emitOpError("result 'dalpha' type ")
           << op->getResults().back().getType()
           << " must equal the type of 'alpha' " << alpha.getType();
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  return verifyGradOp(*this, {{"mean", getMean()}, {"rstd", getRstd()}},
                      /*allowScalarWeight=*/false);
}

LogicalResult RMSNormGradOp::verify() {
  APFloat offset = getWeightOffsetAttr().getValue();
  if (!offset.isFinite())
    return emitOpError("attribute 'weight_offset' must be finite");
  if (!offset.isZero() && !getWeight())
    return emitOpError("attribute 'weight_offset' requires a 'weight' operand");
  return verifyGradOp(*this, {{"rstd", getRstd()}},
                      /*allowScalarWeight=*/true);
}

LogicalResult DyTGradOp::verify() {
  return verifyGradOp(*this, {}, /*allowScalarWeight=*/false);
}

//===----------------------------------------------------------------------===//
// ReifyRankedShapedTypeOpInterface
//===----------------------------------------------------------------------===//

/// `y` and `residual_out` have the shape of `x`, the statistics its
/// leading dims.
static LogicalResult
reifyNormResultShapes(NormOpInterface op, OpBuilder &builder,
                      ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, op.getLoc(), op.getX());
  for (unsigned i = 0, e = op.getNumOutputs(); i < e; ++i)
    reifiedReturnShapes.push_back(sizes);
  for (unsigned i = 0, e = op.getNumStatsResults(); i < e; ++i)
    reifiedReturnShapes.push_back(SmallVector<OpFoldResult>(
        ArrayRef(sizes).take_front(op.getNormalizedDim())));
  return success();
}

LogicalResult LayerNormOp::reifyResultShapes(
    OpBuilder &builder, ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  return reifyNormResultShapes(*this, builder, reifiedReturnShapes);
}

LogicalResult
RMSNormOp::reifyResultShapes(OpBuilder &builder,
                             ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  return reifyNormResultShapes(*this, builder, reifiedReturnShapes);
}

LogicalResult
DyTOp::reifyResultShapes(OpBuilder &builder,
                         ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  return reifyNormResultShapes(*this, builder, reifiedReturnShapes);
}

//===----------------------------------------------------------------------===//
// Semantic helpers
//===----------------------------------------------------------------------===//

Type mlir::norm::getInputElementType(NormOpInterface op) {
  return op.getInputType().getElementType();
}

/// Returns the wider of two float types (the first one on a tie).
static Type widerFloatType(Type lhs, Type rhs) {
  return rhs.getIntOrFloatBitWidth() > lhs.getIntOrFloatBitWidth() ? rhs : lhs;
}

Type mlir::norm::getBeforeWeightArithmeticType(NormOpInterface op) {
  Type type = getInputElementType(op);
  if (Value weight = op.getWeight())
    type = widerFloatType(type, getElementTypeOrSelf(weight.getType()));
  if (Value bias = op.getBias())
    type = widerFloatType(type, getElementTypeOrSelf(bias.getType()));
  return type;
}
