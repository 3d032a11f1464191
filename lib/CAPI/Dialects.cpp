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
