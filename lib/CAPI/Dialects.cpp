//===- Dialects.cpp - C API of the norm dialect -----------------*- C++ -*-===//
//
// The dialect handle, op isa functions and builders, and enum attributes of
// the norm dialect for MLIR's C API.
//
//===----------------------------------------------------------------------===//

#include "norm-c/Dialects.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/InitAllNorm.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::norm;

//===----------------------------------------------------------------------===//
// Dialect handle
//===----------------------------------------------------------------------===//

// Written out instead of MLIR_DEFINE_CAPI_DIALECT_REGISTRATION so that
// inserting the dialect also registers its external interface models: a C
// API user gets the same dialect as norm-opt.

/// Adds the norm dialect and its interface models to `registry`.
static void mlirDialectRegistryInsertNormDialect(MlirDialectRegistry registry) {
  registerAllNormDialects(*unwrap(registry));
}

/// Loads the norm dialect into `context`.
static MlirDialect mlirContextLoadNormDialect(MlirContext context) {
  return wrap(unwrap(context)->getOrLoadDialect<NormDialect>());
}

/// The dialect namespace, "norm".
static MlirStringRef mlirNormDialectGetNamespace() {
  return wrap(NormDialect::getDialectNamespace());
}

MlirDialectHandle mlirGetDialectHandle__norm__() {
  static MlirDialectRegistrationHooks hooks = {
      mlirDialectRegistryInsertNormDialect, mlirContextLoadNormDialect,
      mlirNormDialectGetNamespace};
  return MlirDialectHandle{&hooks};
}

void mlirNormRegisterPipelineDialects(MlirDialectRegistry registry) {
  registerNormPipelineDialects(*unwrap(registry));
}

//===----------------------------------------------------------------------===//
// Enum attributes
//===----------------------------------------------------------------------===//

// The C enums mirror the ODS enums value by value.
static_assert(MlirNormEpsilonModeInsideSqrt ==
                      static_cast<int>(EpsilonMode::inside_sqrt) &&
                  MlirNormEpsilonModeOutsideSqrt ==
                      static_cast<int>(EpsilonMode::outside_sqrt) &&
                  MlirNormEpsilonModeClamp ==
                      static_cast<int>(EpsilonMode::clamp),
              "MlirNormEpsilonMode out of sync with EpsilonMode");
static_assert(MlirNormCastModeFinal == static_cast<int>(CastMode::final) &&
                  MlirNormCastModeBeforeWeight ==
                      static_cast<int>(CastMode::before_weight),
              "MlirNormCastMode out of sync with CastMode");
static_assert(MlirNormScaleRoundingFloor ==
                      static_cast<int>(ScaleRounding::floor) &&
                  MlirNormScaleRoundingUp ==
                      static_cast<int>(ScaleRounding::up),
              "MlirNormScaleRounding out of sync with ScaleRounding");
static_assert(MlirNormScaleLayoutRowMajor ==
                      static_cast<int>(ScaleLayout::row_major) &&
                  MlirNormScaleLayoutSwizzled128x4 ==
                      static_cast<int>(ScaleLayout::swizzled_128x4),
              "MlirNormScaleLayout out of sync with ScaleLayout");

bool mlirAttributeIsANormEpsilonModeAttr(MlirAttribute attr) {
  return llvm::isa<EpsilonModeAttr>(unwrap(attr));
}

MlirAttribute mlirNormEpsilonModeAttrGet(MlirContext ctx,
                                         MlirNormEpsilonMode value) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<NormDialect>();
  return wrap(EpsilonModeAttr::get(context, static_cast<EpsilonMode>(value)));
}

MlirNormEpsilonMode mlirNormEpsilonModeAttrGetValue(MlirAttribute attr) {
  return static_cast<MlirNormEpsilonMode>(
      llvm::cast<EpsilonModeAttr>(unwrap(attr)).getValue());
}

bool mlirAttributeIsANormCastModeAttr(MlirAttribute attr) {
  return llvm::isa<CastModeAttr>(unwrap(attr));
}

MlirAttribute mlirNormCastModeAttrGet(MlirContext ctx, MlirNormCastMode value) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<NormDialect>();
  return wrap(CastModeAttr::get(context, static_cast<CastMode>(value)));
}

MlirNormCastMode mlirNormCastModeAttrGetValue(MlirAttribute attr) {
  return static_cast<MlirNormCastMode>(
      llvm::cast<CastModeAttr>(unwrap(attr)).getValue());
}

bool mlirAttributeIsANormScaleRoundingAttr(MlirAttribute attr) {
  return llvm::isa<ScaleRoundingAttr>(unwrap(attr));
}

MlirAttribute mlirNormScaleRoundingAttrGet(MlirContext ctx,
                                           MlirNormScaleRounding value) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<NormDialect>();
  return wrap(
      ScaleRoundingAttr::get(context, static_cast<ScaleRounding>(value)));
}

MlirNormScaleRounding mlirNormScaleRoundingAttrGetValue(MlirAttribute attr) {
  return static_cast<MlirNormScaleRounding>(
      llvm::cast<ScaleRoundingAttr>(unwrap(attr)).getValue());
}

bool mlirAttributeIsANormScaleLayoutAttr(MlirAttribute attr) {
  return llvm::isa<ScaleLayoutAttr>(unwrap(attr));
}

MlirAttribute mlirNormScaleLayoutAttrGet(MlirContext ctx,
                                         MlirNormScaleLayout value) {
  MLIRContext *context = unwrap(ctx);
  context->getOrLoadDialect<NormDialect>();
  return wrap(ScaleLayoutAttr::get(context, static_cast<ScaleLayout>(value)));
}

MlirNormScaleLayout mlirNormScaleLayoutAttrGetValue(MlirAttribute attr) {
  return static_cast<MlirNormScaleLayout>(
      llvm::cast<ScaleLayoutAttr>(unwrap(attr)).getValue());
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

bool mlirOperationIsANormLayerNormOp(MlirOperation op) {
  return llvm::isa<LayerNormOp>(unwrap(op));
}

bool mlirOperationIsANormRMSNormOp(MlirOperation op) {
  return llvm::isa<RMSNormOp>(unwrap(op));
}

bool mlirOperationIsANormDyTOp(MlirOperation op) {
  return llvm::isa<DyTOp>(unwrap(op));
}

bool mlirOperationIsANormQuantizeOp(MlirOperation op) {
  return llvm::isa<QuantizeOp>(unwrap(op));
}

bool mlirOperationIsANormOp(MlirOperation op) {
  return llvm::isa<NormOpInterface>(unwrap(op));
}

/// A null C value is an absent optional operand.
static Value unwrapOptional(MlirValue value) {
  return mlirValueIsNull(value) ? Value() : unwrap(value);
}

/// Builds a detached `OpTy` at `loc` with the builder `args`; the norm
/// dialect is loaded first so that the op is registered.
template <typename OpTy, typename... Args>
static MlirOperation createDetached(MlirLocation loc, Args... args) {
  Location location = unwrap(loc);
  location.getContext()->getOrLoadDialect<NormDialect>();
  OpBuilder builder(location.getContext());
  return wrap(OpTy::create(builder, location, args...).getOperation());
}

MlirOperation mlirNormLayerNormOpCreate(MlirLocation loc, MlirValue x,
                                        MlirValue weight, MlirValue bias,
                                        MlirValue residual) {
  return createDetached<LayerNormOp>(loc, unwrap(x), unwrapOptional(weight),
                                     unwrapOptional(bias),
                                     unwrapOptional(residual));
}

MlirOperation mlirNormRMSNormOpCreate(MlirLocation loc, MlirValue x,
                                      MlirValue weight, MlirValue residual) {
  return createDetached<RMSNormOp>(loc, unwrap(x), unwrapOptional(weight),
                                   unwrapOptional(residual));
}

MlirOperation mlirNormDyTOpCreate(MlirLocation loc, MlirValue x,
                                  MlirValue alpha, MlirValue weight,
                                  MlirValue bias, MlirValue residual) {
  return createDetached<DyTOp>(loc, unwrap(x), unwrap(alpha),
                               unwrapOptional(weight), unwrapOptional(bias),
                               unwrapOptional(residual));
}

MlirOperation mlirNormQuantizeOpCreate(MlirLocation loc, MlirValue input,
                                       MlirValue scale,
                                       MlirType quantizedElementType,
                                       int64_t groupSize) {
  return createDetached<QuantizeOp>(loc, unwrap(input), unwrapOptional(scale),
                                    unwrap(quantizedElementType), groupSize);
}

/// The scales type of a block-scaled quantization of `inputType`: row-major
/// (the input shape with the last dim N / groupSize) or the flat
/// swizzled_128x4 tiles; a size that cannot be computed is dynamic (the
/// verifier then reports the cause).
static RankedTensorType getBlockScalesType(RankedTensorType inputType,
                                           Type scalesElementType,
                                           int64_t groupSize,
                                           ScaleLayout layout) {
  ArrayRef<int64_t> shape = inputType.getShape();
  int64_t rowSize = shape.back();
  int64_t numGroups = ShapedType::kDynamic;
  if (groupSize > 0 && !ShapedType::isDynamic(rowSize) &&
      rowSize % groupSize == 0)
    numGroups = rowSize / groupSize;
  if (layout == ScaleLayout::row_major) {
    SmallVector<int64_t> scalesShape(shape);
    scalesShape.back() = numGroups;
    return RankedTensorType::get(scalesShape, scalesElementType);
  }
  int64_t size = ShapedType::kDynamic;
  ArrayRef<int64_t> leading = shape.drop_back();
  if (!ShapedType::isDynamic(numGroups) &&
      llvm::none_of(leading, ShapedType::isDynamic)) {
    int64_t numRows = 1;
    for (int64_t dim : leading)
      numRows *= dim;
    size = getSwizzled128x4Size(numRows, numGroups);
  }
  return RankedTensorType::get({size}, scalesElementType);
}

MlirOperation mlirNormQuantizeOpCreateBlockScaled(
    MlirLocation loc, MlirValue input, MlirValue globalScale,
    MlirType quantizedElementType, MlirType scalesElementType,
    int64_t groupSize, MlirNormScaleRounding scaleRounding,
    MlirNormScaleLayout scaleLayout) {
  Location location = unwrap(loc);
  MLIRContext *context = location.getContext();
  context->getOrLoadDialect<NormDialect>();
  Value in = unwrap(input);
  auto inputType = dyn_cast<RankedTensorType>(in.getType());
  if (!inputType || inputType.getRank() == 0) {
    emitError(location) << "norm.quantize needs a ranked tensor input of rank "
                           ">= 1, got "
                        << in.getType();
    return MlirOperation{nullptr};
  }
  if (scaleRounding != MlirNormScaleRoundingFloor &&
      scaleRounding != MlirNormScaleRoundingUp) {
    emitError(location) << "unknown scale rounding "
                        << static_cast<int>(scaleRounding);
    return MlirOperation{nullptr};
  }
  if (scaleLayout != MlirNormScaleLayoutRowMajor &&
      scaleLayout != MlirNormScaleLayoutSwizzled128x4) {
    emitError(location) << "unknown scale layout "
                        << static_cast<int>(scaleLayout);
    return MlirOperation{nullptr};
  }
  Type scalesElement = unwrap(scalesElementType);
  if (!isa<Float8E8M0FNUType, Float8E4M3FNType>(scalesElement)) {
    emitError(location) << "block scales are f8E8M0FNU or f8E4M3FN, got "
                        << scalesElement
                        << " (f32 scales: mlirNormQuantizeOpCreate)";
    return MlirOperation{nullptr};
  }
  auto rounding = static_cast<ScaleRounding>(scaleRounding);
  auto layout = static_cast<ScaleLayout>(scaleLayout);
  Type scalesType =
      getBlockScalesType(inputType, scalesElement, groupSize, layout);
  Type qType = inputType.clone(unwrap(quantizedElementType));
  OpBuilder builder(context);
  // Default-valued attributes are left out, as the parser leaves them.
  auto op = QuantizeOp::create(
      builder, location, TypeRange{qType, scalesType}, in, /*scale=*/Value(),
      unwrapOptional(globalScale), builder.getI64IntegerAttr(groupSize),
      FloatAttr(), FloatAttr(),
      rounding == ScaleRounding::floor
          ? ScaleRoundingAttr()
          : ScaleRoundingAttr::get(context, rounding),
      layout == ScaleLayout::row_major ? ScaleLayoutAttr()
                                       : ScaleLayoutAttr::get(context, layout));
  // The element types, the form and the shapes: the op's own verifier,
  // which reports through the diagnostic handlers.
  if (failed(verify(op))) {
    op->erase();
    return MlirOperation{nullptr};
  }
  return wrap(op.getOperation());
}

/// The result types of a forward op with `return_stats`: those of the op
/// without statistics, then `numStats` statistics of x's leading dims (the
/// last dim normalized) in the default compute type.
static SmallVector<Type> getTypesWithStats(Value x, Value residual,
                                           unsigned numStats) {
  SmallVector<Type> types(inferNormResultTypes(x, residual));
  if (auto xType = dyn_cast<RankedTensorType>(x.getType());
      xType && xType.getRank() >= 1) {
    Type element = xType.getElementType();
    Type compute = element.isF64() ? element : Float32Type::get(x.getContext());
    types.append(numStats,
                 RankedTensorType::get(xType.getShape().drop_back(), compute));
  }
  return types;
}

MlirOperation mlirNormLayerNormOpCreateWithStats(MlirLocation loc, MlirValue x,
                                                 MlirValue weight,
                                                 MlirValue bias,
                                                 MlirValue residual) {
  Value r = unwrapOptional(residual);
  SmallVector<Type> types = getTypesWithStats(unwrap(x), r, 2);
  return createDetached<LayerNormOp>(
      loc, TypeRange(types), unwrap(x), unwrapOptional(weight),
      unwrapOptional(bias), r, FloatAttr(), IntegerAttr(), TypeAttr(),
      CastModeAttr(), UnitAttr::get(unwrap(loc)->getContext()));
}

MlirOperation mlirNormRMSNormOpCreateWithStats(MlirLocation loc, MlirValue x,
                                               MlirValue weight,
                                               MlirValue residual) {
  Value r = unwrapOptional(residual);
  SmallVector<Type> types = getTypesWithStats(unwrap(x), r, 1);
  return createDetached<RMSNormOp>(
      loc, TypeRange(types), unwrap(x), unwrapOptional(weight), r, FloatAttr(),
      EpsilonModeAttr(), FloatAttr(), IntegerAttr(), TypeAttr(), CastModeAttr(),
      UnitAttr::get(unwrap(loc)->getContext()));
}

bool mlirOperationIsANormGradOp(MlirOperation op) {
  return isGradientOp(unwrap(op));
}

/// The result types of a gradient op: dx, [dweight], [dbias], [dalpha].
static SmallVector<Type> getGradTypes(Value x, Value weight, bool hasBias,
                                      Value alpha) {
  SmallVector<Type> types{x.getType()};
  if (weight)
    types.push_back(weight.getType());
  if (hasBias) {
    if (weight)
      types.push_back(weight.getType());
    else if (auto xType = dyn_cast<RankedTensorType>(x.getType());
             xType && xType.getRank() >= 1)
      types.push_back(RankedTensorType::get(xType.getShape().take_back(),
                                            xType.getElementType()));
    else
      types.push_back(x.getType());
  }
  if (alpha)
    types.push_back(alpha.getType());
  return types;
}

MlirOperation mlirNormLayerNormGradOpCreate(MlirLocation loc, MlirValue dy,
                                            MlirValue x, MlirValue mean,
                                            MlirValue rstd, MlirValue weight,
                                            bool hasBias) {
  Value w = unwrapOptional(weight);
  MLIRContext *context = unwrap(loc)->getContext();
  return createDetached<LayerNormGradOp>(
      loc, TypeRange(getGradTypes(unwrap(x), w, hasBias, Value())), unwrap(dy),
      unwrap(x), unwrap(mean), unwrap(rstd), w, IntegerAttr(), TypeAttr(),
      hasBias ? UnitAttr::get(context) : UnitAttr());
}

MlirOperation mlirNormRMSNormGradOpCreate(MlirLocation loc, MlirValue dy,
                                          MlirValue x, MlirValue rstd,
                                          MlirValue weight) {
  Value w = unwrapOptional(weight);
  return createDetached<RMSNormGradOp>(
      loc, TypeRange(getGradTypes(unwrap(x), w, false, Value())), unwrap(dy),
      unwrap(x), unwrap(rstd), w, FloatAttr(), IntegerAttr(), TypeAttr());
}

MlirOperation mlirNormDyTGradOpCreate(MlirLocation loc, MlirValue dy,
                                      MlirValue x, MlirValue alpha,
                                      MlirValue weight, bool hasBias) {
  Value w = unwrapOptional(weight);
  MLIRContext *context = unwrap(loc)->getContext();
  return createDetached<DyTGradOp>(
      loc, TypeRange(getGradTypes(unwrap(x), w, hasBias, unwrap(alpha))),
      unwrap(dy), unwrap(x), unwrap(alpha), w, IntegerAttr(), TypeAttr(),
      hasBias ? UnitAttr::get(context) : UnitAttr());
}
