/*===- norm-capi.c - Tests of the norm C API ----------------------*- C -*-===*\
|*                                                                            *|
|* Uses libNormMLIR-C.so the way a C host does: registers the dialect        *|
|* through its handle, checks the enum attributes and the op isa functions,  *|
|* builds ops with the C builders, runs norm-cpu-pipeline and calls the      *|
|* JIT-compiled result.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: norm-capi-test 2>&1 | FileCheck %s

#include "norm-c/Dialects.h"
#include "norm-c/Passes.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Dialect/Arith.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/Dialect/Tensor.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/ExecutionEngine.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__norm__(), registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  return ctx;
}

static MlirStringRef str(const char *s) {
  return mlirStringRefCreateFromCString(s);
}

// CHECK-LABEL: testEnumAttributes
static void testEnumAttributes(MlirContext ctx) {
  printf("testEnumAttributes\n");
  MlirAttribute clamp =
      mlirNormEpsilonModeAttrGet(ctx, MlirNormEpsilonModeClamp);
  mlirAttributePrint(clamp, printToStdout, NULL);
  printf(" isa=%d value=%d cast=%d\n",
         mlirAttributeIsANormEpsilonModeAttr(clamp),
         (int)mlirNormEpsilonModeAttrGetValue(clamp),
         mlirAttributeIsANormCastModeAttr(clamp));
  // CHECK: #norm<epsilon_mode clamp> isa=1 value=2 cast=0
  MlirAttribute before =
      mlirNormCastModeAttrGet(ctx, MlirNormCastModeBeforeWeight);
  mlirAttributePrint(before, printToStdout, NULL);
  printf(" isa=%d value=%d\n", mlirAttributeIsANormCastModeAttr(before),
         (int)mlirNormCastModeAttrGetValue(before));
  // CHECK: #norm<cast_mode before_weight> isa=1 value=1
  MlirAttribute parsed =
      mlirAttributeParseGet(ctx, str("#norm<epsilon_mode outside_sqrt>"));
  printf("parsed value=%d\n", (int)mlirNormEpsilonModeAttrGetValue(parsed));
  // CHECK: parsed value=1
  MlirAttribute up = mlirNormScaleRoundingAttrGet(ctx, MlirNormScaleRoundingUp);
  mlirAttributePrint(up, printToStdout, NULL);
  printf(" isa=%d value=%d layout=%d\n",
         mlirAttributeIsANormScaleRoundingAttr(up),
         (int)mlirNormScaleRoundingAttrGetValue(up),
         mlirAttributeIsANormScaleLayoutAttr(up));
  // CHECK: #norm<scale_rounding up> isa=1 value=1 layout=0
  MlirAttribute swizzled =
      mlirNormScaleLayoutAttrGet(ctx, MlirNormScaleLayoutSwizzled128x4);
  mlirAttributePrint(swizzled, printToStdout, NULL);
  printf(" isa=%d value=%d\n", mlirAttributeIsANormScaleLayoutAttr(swizzled),
         (int)mlirNormScaleLayoutAttrGetValue(swizzled));
  // CHECK: #norm<scale_layout swizzled_128x4> isa=1 value=1
}

// CHECK-LABEL: testIsA
static void testIsA(MlirContext ctx) {
  printf("testIsA\n");
  const char *source =
      "func.func @f(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %a: tensor<f32>)"
      "    -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {\n"
      "  %0 = norm.layer_norm %x weight(%w) : (tensor<2x8xf32>, "
      "tensor<8xf32>) -> tensor<2x8xf32>\n"
      "  %1 = norm.rms_norm %x : (tensor<2x8xf32>) -> tensor<2x8xf32>\n"
      "  %2 = norm.dyt %x alpha(%a) : (tensor<2x8xf32>, tensor<f32>) -> "
      "tensor<2x8xf32>\n"
      "  return %0, %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>, "
      "tensor<2x8xf32>\n"
      "}\n";
  MlirModule module = mlirModuleCreateParse(ctx, str(source));
  if (mlirModuleIsNull(module)) {
    printf("parse failed\n");
    return;
  }
  MlirOperation func = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
    printf("%.*s: layer_norm=%d rms_norm=%d dyt=%d norm=%d\n", (int)name.length,
           name.data, mlirOperationIsANormLayerNormOp(op),
           mlirOperationIsANormRMSNormOp(op), mlirOperationIsANormDyTOp(op),
           mlirOperationIsANormOp(op));
  }
  // CHECK: norm.layer_norm: layer_norm=1 rms_norm=0 dyt=0 norm=1
  // CHECK: norm.rms_norm: layer_norm=0 rms_norm=1 dyt=0 norm=1
  // CHECK: norm.dyt: layer_norm=0 rms_norm=0 dyt=1 norm=1
  // CHECK: func.return: layer_norm=0 rms_norm=0 dyt=0 norm=0
  mlirModuleDestroy(module);
}

/* Creates `func.func @name(argTypes) -> resultTypes` with an entry block in
 * `module` and returns the block. */
static MlirBlock createFunc(MlirContext ctx, MlirModule module,
                            const char *name, intptr_t numArgs,
                            const MlirType *argTypes, intptr_t numResults,
                            const MlirType *resultTypes) {
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirLocation *locs = malloc(sizeof(MlirLocation) * (size_t)numArgs);
  for (intptr_t i = 0; i < numArgs; ++i)
    locs[i] = loc;
  MlirBlock entry = mlirBlockCreate(numArgs, argTypes, locs);
  free(locs);
  MlirRegion region = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(region, entry);
  MlirType type =
      mlirFunctionTypeGet(ctx, numArgs, argTypes, numResults, resultTypes);
  MlirNamedAttribute attrs[2] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("sym_name")),
                            mlirStringAttrGet(ctx, str(name))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, str("function_type")),
                            mlirTypeAttrGet(type))};
  MlirOperationState state = mlirOperationStateGet(str("func.func"), loc);
  mlirOperationStateAddAttributes(&state, 2, attrs);
  mlirOperationStateAddOwnedRegions(&state, 1, &region);
  MlirOperation func = mlirOperationCreate(&state);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(module), func);
  return entry;
}

static void createReturn(MlirContext ctx, MlirBlock block, intptr_t n,
                         const MlirValue *values) {
  MlirOperationState state =
      mlirOperationStateGet(str("func.return"), mlirLocationUnknownGet(ctx));
  mlirOperationStateAddOperands(&state, n, values);
  mlirBlockAppendOwnedOperation(block, mlirOperationCreate(&state));
}

// CHECK-LABEL: testBuilders
static void testBuilders(MlirContext ctx) {
  printf("testBuilders\n");
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirType f32 = mlirF32TypeGet(ctx);
  int64_t matrixShape[] = {mlirShapedTypeGetDynamicSize(), 8};
  int64_t vectorShape[] = {8};
  MlirAttribute noEncoding = mlirAttributeGetNull();
  MlirType matrix = mlirRankedTensorTypeGet(2, matrixShape, f32, noEncoding);
  MlirType vector = mlirRankedTensorTypeGet(1, vectorShape, f32, noEncoding);
  MlirType scalar = mlirRankedTensorTypeGet(0, NULL, f32, noEncoding);

  MlirModule module = mlirModuleCreateEmpty(loc);
  MlirType args[] = {matrix, vector, matrix, scalar};
  MlirType results[] = {matrix, matrix, matrix};
  MlirBlock block = createFunc(ctx, module, "built", 4, args, 3, results);
  MlirValue x = mlirBlockGetArgument(block, 0);
  MlirValue w = mlirBlockGetArgument(block, 1);
  MlirValue r = mlirBlockGetArgument(block, 2);
  MlirValue a = mlirBlockGetArgument(block, 3);

  MlirOperation rms = mlirNormRMSNormOpCreate(loc, x, w, r);
  mlirOperationSetAttributeByName(
      rms, str("epsilon_mode"),
      mlirNormEpsilonModeAttrGet(ctx, MlirNormEpsilonModeClamp));
  mlirOperationSetAttributeByName(rms, str("epsilon"),
                                  mlirFloatAttrDoubleGet(ctx, f32, 0.5));
  mlirBlockAppendOwnedOperation(block, rms);
  MlirValue null = {NULL};
  MlirOperation dyt = mlirNormDyTOpCreate(loc, mlirOperationGetResult(rms, 0),
                                          a, w, null, null);
  mlirBlockAppendOwnedOperation(block, dyt);
  MlirValue returned[] = {mlirOperationGetResult(dyt, 0),
                          mlirOperationGetResult(rms, 0),
                          mlirOperationGetResult(rms, 1)};
  createReturn(ctx, block, 3, returned);
  printf("results=%d verified=%d\n", (int)mlirOperationGetNumResults(rms),
         mlirOperationVerify(mlirModuleGetOperation(module)));
  // CHECK: results=2 verified=1
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  // CHECK: func.func @built(%[[X:arg[0-9]+]]: tensor<?x8xf32>,
  // CHECK-SAME: %[[W:arg[0-9]+]]: tensor<8xf32>,
  // CHECK-SAME: %[[R:arg[0-9]+]]: tensor<?x8xf32>,
  // CHECK-SAME: %[[A:arg[0-9]+]]: tensor<f32>)
  // CHECK: %[[Y:[a-z0-9_]+]], %{{.*}} = norm.rms_norm %[[X]]
  // CHECK-SAME: weight(%[[W]]) residual(%[[R]])
  // CHECK-SAME: {epsilon = 5.000000e-01 : f32,
  // CHECK-SAME: epsilon_mode = #norm<epsilon_mode clamp>}
  // CHECK: norm.dyt %[[Y]] alpha(%[[A]]) weight(%[[W]]) :

  /* A malformed op: the verifier reports it through the diagnostic
   * handler. */
  MlirModule bad = mlirModuleCreateEmpty(loc);
  MlirType badArgs[] = {matrix, matrix};
  MlirBlock badBlock = createFunc(ctx, bad, "bad", 2, badArgs, 1, &matrix);
  MlirOperation layer =
      mlirNormLayerNormOpCreate(loc, mlirBlockGetArgument(badBlock, 0),
                                mlirBlockGetArgument(badBlock, 1), null, null);
  mlirBlockAppendOwnedOperation(badBlock, layer);
  MlirValue badResult = mlirOperationGetResult(layer, 0);
  createReturn(ctx, badBlock, 1, &badResult);
  printf("verified=%d\n", mlirOperationVerify(mlirModuleGetOperation(bad)));
  // CHECK: diagnostic: 'norm.layer_norm' op operand 'weight'
  // CHECK-SAME: shape [?, 8] must be the normalized shape [8] of 'x'
  // CHECK: verified=0
  mlirModuleDestroy(bad);
  mlirModuleDestroy(module);
}

// CHECK-LABEL: testQuantizeBuilder
static void testQuantizeBuilder(MlirContext ctx) {
  printf("testQuantizeBuilder\n");
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirAttribute noEncoding = mlirAttributeGetNull();
  int64_t shape[] = {mlirShapedTypeGetDynamicSize(), 256};
  MlirType input =
      mlirRankedTensorTypeGet(2, shape, mlirBF16TypeGet(ctx), noEncoding);
  MlirType scalar =
      mlirRankedTensorTypeGet(0, NULL, mlirF32TypeGet(ctx), noEncoding);
  MlirType fp8 = mlirFloat8E4M3FNTypeGet(ctx);
  MlirType i8 = mlirIntegerTypeGet(ctx, 8);

  MlirModule module = mlirModuleCreateEmpty(loc);
  MlirType args[] = {input, scalar};
  int64_t scalesShape[] = {mlirShapedTypeGetDynamicSize(), 2};
  MlirType results[] = {
      mlirRankedTensorTypeGet(2, shape, fp8, noEncoding),
      mlirRankedTensorTypeGet(2, scalesShape, mlirF32TypeGet(ctx), noEncoding),
      mlirRankedTensorTypeGet(2, shape, i8, noEncoding)};
  MlirBlock block = createFunc(ctx, module, "quantized", 2, args, 3, results);
  MlirValue y = mlirBlockGetArgument(block, 0);
  MlirValue s = mlirBlockGetArgument(block, 1);
  MlirValue null = {NULL};
  MlirOperation dynamic = mlirNormQuantizeOpCreate(loc, y, null, fp8, 128);
  mlirOperationSetAttributeByName(
      dynamic, str("scale_ub"),
      mlirFloatAttrDoubleGet(ctx, mlirF32TypeGet(ctx), 1200.0));
  mlirBlockAppendOwnedOperation(block, dynamic);
  MlirOperation fixed = mlirNormQuantizeOpCreate(loc, y, s, i8, 0);
  mlirBlockAppendOwnedOperation(block, fixed);
  MlirValue returned[] = {mlirOperationGetResult(dynamic, 0),
                          mlirOperationGetResult(dynamic, 1),
                          mlirOperationGetResult(fixed, 0)};
  createReturn(ctx, block, 3, returned);
  printf("isa=%d results=%d,%d verified=%d\n",
         mlirOperationIsANormQuantizeOp(dynamic),
         (int)mlirOperationGetNumResults(dynamic),
         (int)mlirOperationGetNumResults(fixed),
         mlirOperationVerify(mlirModuleGetOperation(module)));
  // CHECK: isa=1 results=2,1 verified=1
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  // CHECK: norm.quantize %{{.*}} {group_size = 128 : i64, scale_ub
  // = 1.200000e+03 : f32} : (tensor<?x256xbf16>) -> (tensor<?x256xf8E4M3FN>,
  // tensor<?x2xf32>) CHECK: norm.quantize %{{.*}} scale(%{{.*}}) :
  // (tensor<?x256xbf16>, tensor<f32>) -> tensor<?x256xi8>

  /* A group size that does not divide N: the verifier says so. */
  MlirOperation bad = mlirNormQuantizeOpCreate(loc, y, null, i8, 96);
  mlirBlockInsertOwnedOperationBefore(block, mlirBlockGetFirstOperation(block),
                                      bad);
  printf("verified=%d\n", mlirOperationVerify(mlirModuleGetOperation(module)));
  // CHECK: diagnostic: 'norm.quantize' op attribute 'group_size' = 96 must
  // CHECK-SAME: divide the last dim 256 of 'input'
  // CHECK: verified=0
  mlirModuleDestroy(module);
}

// CHECK-LABEL: testBlockScaledQuantizeBuilder
static void testBlockScaledQuantizeBuilder(MlirContext ctx) {
  printf("testBlockScaledQuantizeBuilder\n");
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirAttribute noEncoding = mlirAttributeGetNull();
  int64_t dynamicShape[] = {mlirShapedTypeGetDynamicSize(), 256};
  int64_t staticShape[] = {8, 256};
  MlirType bf16 = mlirBF16TypeGet(ctx);
  MlirType dynamicInput =
      mlirRankedTensorTypeGet(2, dynamicShape, bf16, noEncoding);
  MlirType staticInput =
      mlirRankedTensorTypeGet(2, staticShape, bf16, noEncoding);
  MlirType scalar =
      mlirRankedTensorTypeGet(0, NULL, mlirF32TypeGet(ctx), noEncoding);
  MlirType fp8 = mlirFloat8E4M3FNTypeGet(ctx);
  MlirType fp4 = mlirFloat4E2M1FNTypeGet(ctx);
  MlirType e8m0 = mlirFloat8E8M0FNUTypeGet(ctx);

  MlirModule module = mlirModuleCreateEmpty(loc);
  MlirType args[] = {dynamicInput, staticInput, scalar};
  int64_t mxScalesShape[] = {mlirShapedTypeGetDynamicSize(), 8};
  int64_t fp8ScalesShape[] = {8, 2};
  /* roundup(8, 128) * roundup(256 / 16, 4) */
  int64_t swizzledShape[] = {2048};
  MlirType results[] = {
      mlirRankedTensorTypeGet(2, dynamicShape, fp4, noEncoding),
      mlirRankedTensorTypeGet(2, mxScalesShape, e8m0, noEncoding),
      mlirRankedTensorTypeGet(2, staticShape, fp8, noEncoding),
      mlirRankedTensorTypeGet(2, fp8ScalesShape, e8m0, noEncoding),
      mlirRankedTensorTypeGet(2, staticShape, fp4, noEncoding),
      mlirRankedTensorTypeGet(1, swizzledShape, fp8, noEncoding)};
  MlirBlock block =
      createFunc(ctx, module, "block_scaled", 3, args, 6, results);
  MlirValue y = mlirBlockGetArgument(block, 0);
  MlirValue ys = mlirBlockGetArgument(block, 1);
  MlirValue g = mlirBlockGetArgument(block, 2);
  MlirValue null = {NULL};
  MlirOperation mxfp4 = mlirNormQuantizeOpCreateBlockScaled(
      loc, y, null, fp4, e8m0, 32, MlirNormScaleRoundingUp,
      MlirNormScaleLayoutRowMajor);
  mlirBlockAppendOwnedOperation(block, mxfp4);
  MlirOperation fp8x128 = mlirNormQuantizeOpCreateBlockScaled(
      loc, ys, null, fp8, e8m0, 128, MlirNormScaleRoundingFloor,
      MlirNormScaleLayoutRowMajor);
  mlirBlockAppendOwnedOperation(block, fp8x128);
  MlirOperation nvfp4 = mlirNormQuantizeOpCreateBlockScaled(
      loc, ys, g, fp4, fp8, 16, MlirNormScaleRoundingFloor,
      MlirNormScaleLayoutSwizzled128x4);
  mlirBlockAppendOwnedOperation(block, nvfp4);
  MlirValue returned[] = {
      mlirOperationGetResult(mxfp4, 0),   mlirOperationGetResult(mxfp4, 1),
      mlirOperationGetResult(fp8x128, 0), mlirOperationGetResult(fp8x128, 1),
      mlirOperationGetResult(nvfp4, 0),   mlirOperationGetResult(nvfp4, 1)};
  createReturn(ctx, block, 6, returned);
  printf("isa=%d verified=%d\n", mlirOperationIsANormQuantizeOp(nvfp4),
         mlirOperationVerify(mlirModuleGetOperation(module)));
  // CHECK: isa=1 verified=1
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  // CHECK: norm.quantize %{{.*}} {group_size = 32 : i64,
  // CHECK-SAME: scale_rounding = #norm<scale_rounding up>}
  // CHECK-SAME: -> (tensor<?x256xf4E2M1FN>, tensor<?x8xf8E8M0FNU>)
  // CHECK: norm.quantize %{{.*}} {group_size = 128 : i64} :
  // CHECK-SAME: -> (tensor<8x256xf8E4M3FN>, tensor<8x2xf8E8M0FNU>)
  // CHECK: norm.quantize %{{.*}} global_scale(%{{.*}}) {group_size = 16
  // CHECK-SAME: scale_layout = #norm<scale_layout swizzled_128x4>}
  // CHECK-SAME: -> (tensor<8x256xf4E2M1FN>, tensor<2048xf8E4M3FN>)

  /* Invalid combinations: a diagnostic at `loc` and a null operation. */
  MlirOperation badGroup = mlirNormQuantizeOpCreateBlockScaled(
      loc, y, null, fp4, e8m0, 16, MlirNormScaleRoundingFloor,
      MlirNormScaleLayoutRowMajor);
  printf("null=%d\n", mlirOperationIsNull(badGroup));
  // CHECK: diagnostic: 'norm.quantize' op the MXFP4 form (f4E2M1FN with
  // CHECK-SAME: f8E8M0FNU scales) needs 'group_size' = 32, got 16
  // CHECK-NEXT: null=1
  MlirOperation noGlobalScale = mlirNormQuantizeOpCreateBlockScaled(
      loc, ys, null, fp4, fp8, 16, MlirNormScaleRoundingFloor,
      MlirNormScaleLayoutRowMajor);
  printf("null=%d\n", mlirOperationIsNull(noGlobalScale));
  // CHECK: diagnostic: 'norm.quantize' op the NVFP4 form (f4E2M1FN with
  // CHECK-SAME: f8E4M3FN scales) needs a 'global_scale' operand
  // CHECK-NEXT: null=1
  MlirOperation roundedNVFP4 = mlirNormQuantizeOpCreateBlockScaled(
      loc, ys, g, fp4, fp8, 16, MlirNormScaleRoundingUp,
      MlirNormScaleLayoutRowMajor);
  printf("null=%d\n", mlirOperationIsNull(roundedNVFP4));
  // CHECK: diagnostic: 'norm.quantize' op attribute 'scale_rounding' needs
  // CHECK-SAME: f8E8M0FNU scales
  // CHECK-NEXT: null=1
  MlirOperation i8Scales = mlirNormQuantizeOpCreateBlockScaled(
      loc, ys, null, mlirIntegerTypeGet(ctx, 8), e8m0, 32,
      MlirNormScaleRoundingFloor, MlirNormScaleLayoutRowMajor);
  printf("null=%d\n", mlirOperationIsNull(i8Scales));
  // CHECK: diagnostic: 'norm.quantize' op scales of f8E8M0FNU need 'q' of
  // CHECK-SAME: f8E4M3FN or f4E2M1FN, got 'tensor<8x256xi8>'
  // CHECK-NEXT: null=1
  MlirOperation f32Scales = mlirNormQuantizeOpCreateBlockScaled(
      loc, ys, null, fp8, mlirF32TypeGet(ctx), 32, MlirNormScaleRoundingFloor,
      MlirNormScaleLayoutRowMajor);
  printf("null=%d\n", mlirOperationIsNull(f32Scales));
  // CHECK: diagnostic: block scales are f8E8M0FNU or f8E4M3FN, got 'f32'
  // CHECK-SAME: (f32 scales: mlirNormQuantizeOpCreate)
  // CHECK-NEXT: null=1
  MlirOperation scalar0 = mlirNormQuantizeOpCreateBlockScaled(
      loc, g, null, fp8, e8m0, 32, MlirNormScaleRoundingFloor,
      MlirNormScaleLayoutRowMajor);
  printf("null=%d\n", mlirOperationIsNull(scalar0));
  // CHECK: diagnostic: norm.quantize needs a ranked tensor input of rank >=
  // CHECK-SAME: 1, got 'tensor<f32>'
  // CHECK-NEXT: null=1
  mlirModuleDestroy(module);
}

// CHECK-LABEL: testTrainingBuilders
static void testTrainingBuilders(MlirContext ctx) {
  printf("testTrainingBuilders\n");
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirAttribute noEncoding = mlirAttributeGetNull();
  int64_t shape[] = {mlirShapedTypeGetDynamicSize(), 64};
  int64_t rowShape[] = {64};
  int64_t statsShape[] = {mlirShapedTypeGetDynamicSize()};
  MlirType f32 = mlirF32TypeGet(ctx);
  MlirType x =
      mlirRankedTensorTypeGet(2, shape, mlirBF16TypeGet(ctx), noEncoding);
  MlirType w =
      mlirRankedTensorTypeGet(1, rowShape, mlirBF16TypeGet(ctx), noEncoding);
  MlirType stats = mlirRankedTensorTypeGet(1, statsShape, f32, noEncoding);
  MlirType scalar = mlirRankedTensorTypeGet(0, NULL, f32, noEncoding);

  MlirModule module = mlirModuleCreateEmpty(loc);
  MlirType args[] = {x, x, w, scalar};
  MlirType results[] = {x, stats, stats, x, w, w, x, x, w, scalar};
  MlirBlock block = createFunc(ctx, module, "training", 4, args, 10, results);
  MlirValue dy = mlirBlockGetArgument(block, 0);
  MlirValue in = mlirBlockGetArgument(block, 1);
  MlirValue weight = mlirBlockGetArgument(block, 2);
  MlirValue alpha = mlirBlockGetArgument(block, 3);
  MlirValue null = {NULL};

  /* Forward with statistics, then each gradient op. */
  MlirOperation forward =
      mlirNormLayerNormOpCreateWithStats(loc, in, weight, weight, null);
  mlirBlockAppendOwnedOperation(block, forward);
  MlirValue mean = mlirOperationGetResult(forward, 1);
  MlirValue rstd = mlirOperationGetResult(forward, 2);
  MlirOperation lnGrad =
      mlirNormLayerNormGradOpCreate(loc, dy, in, mean, rstd, weight, true);
  mlirBlockAppendOwnedOperation(block, lnGrad);
  MlirOperation rmsForward =
      mlirNormRMSNormOpCreateWithStats(loc, in, null, null);
  mlirBlockAppendOwnedOperation(block, rmsForward);
  MlirOperation rmsGrad = mlirNormRMSNormGradOpCreate(
      loc, dy, in, mlirOperationGetResult(rmsForward, 1), null);
  mlirBlockAppendOwnedOperation(block, rmsGrad);
  MlirOperation dytGrad =
      mlirNormDyTGradOpCreate(loc, dy, in, alpha, weight, false);
  mlirBlockAppendOwnedOperation(block, dytGrad);
  MlirValue returned[] = {mlirOperationGetResult(forward, 0),
                          mean,
                          rstd,
                          mlirOperationGetResult(lnGrad, 0),
                          mlirOperationGetResult(lnGrad, 1),
                          mlirOperationGetResult(lnGrad, 2),
                          mlirOperationGetResult(rmsGrad, 0),
                          mlirOperationGetResult(dytGrad, 0),
                          mlirOperationGetResult(dytGrad, 1),
                          mlirOperationGetResult(dytGrad, 2)};
  createReturn(ctx, block, 10, returned);
  printf(
      "grad=%d,%d,%d,%d results=%d,%d,%d,%d verified=%d\n",
      mlirOperationIsANormGradOp(lnGrad), mlirOperationIsANormGradOp(rmsGrad),
      mlirOperationIsANormGradOp(dytGrad), mlirOperationIsANormGradOp(forward),
      (int)mlirOperationGetNumResults(forward),
      (int)mlirOperationGetNumResults(lnGrad),
      (int)mlirOperationGetNumResults(rmsForward),
      (int)mlirOperationGetNumResults(dytGrad),
      mlirOperationVerify(mlirModuleGetOperation(module)));
  // CHECK: grad=1,1,1,0 results=3,3,2,3 verified=1
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  // CHECK: %[[Y:.*]], %[[M:.*]], %[[R:.*]] = norm.layer_norm %{{.*}}
  // weight(%{{.*}}) bias(%{{.*}}) {return_stats} : (tensor<?x64xbf16>,
  // tensor<64xbf16>, tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<?xf32>,
  // tensor<?xf32>) CHECK: norm.layer_norm_grad %{{.*}}, %{{.*}} mean(%[[M]])
  // rstd(%[[R]]) weight(%{{.*}}) {has_bias} : {{.*}} -> (tensor<?x64xbf16>,
  // tensor<64xbf16>, tensor<64xbf16>) CHECK: norm.rms_norm %{{.*}}
  // {return_stats} : (tensor<?x64xbf16>) -> (tensor<?x64xbf16>, tensor<?xf32>)
  // CHECK: norm.rms_norm_grad
  // CHECK: norm.dyt_grad %{{.*}}, %{{.*}} alpha(%{{.*}}) weight(%{{.*}}) :
  // {{.*}} -> (tensor<?x64xbf16>, tensor<64xbf16>, tensor<f32>)
  mlirModuleDestroy(module);
}

/* A ranked memref descriptor as the C interface passes it. */
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Memref2D;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} Memref1D;

// CHECK-LABEL: testPipelineAndJIT
static void testPipelineAndJIT(MlirContext ctx) {
  printf("testPipelineAndJIT\n");
  mlirRegisterAllPasses();
  mlirRegisterNormPasses();
  const char *source =
      "func.func @kernel(%xm: memref<?x16xf32>, %wm: memref<16xf32>,\n"
      "                  %ym: memref<?x16xf32>)\n"
      "    attributes {llvm.emit_c_interface} {\n"
      "  %x = bufferization.to_tensor %xm restrict : memref<?x16xf32> to "
      "tensor<?x16xf32>\n"
      "  %w = bufferization.to_tensor %wm restrict : memref<16xf32> to "
      "tensor<16xf32>\n"
      "  %y = norm.rms_norm %x weight(%w) {epsilon = 1.0e-06 : f32} :\n"
      "      (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>\n"
      "  bufferization.materialize_in_destination %y in restrict writable "
      "%ym : (tensor<?x16xf32>, memref<?x16xf32>) -> ()\n"
      "  return\n"
      "}\n";
  MlirModule module = mlirModuleCreateParse(ctx, str(source));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult added = mlirOpPassManagerAddPipeline(
      opm, str("norm-cpu-pipeline"), printToStdout, NULL);
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  printf("pipeline added=%d ran=%d\n", mlirLogicalResultIsSuccess(added),
         mlirLogicalResultIsSuccess(ran));
  // CHECK: pipeline added=1 ran=1
  mlirPassManagerDestroy(pm);

  MlirExecutionEngine jit =
      mlirExecutionEngineCreate(module, 3, 0, NULL, false, false);
  if (mlirExecutionEngineIsNull(jit)) {
    printf("JIT failed\n");
    return;
  }
  void (*kernel)(Memref2D *, Memref1D *, Memref2D *) =
      (void (*)(Memref2D *, Memref1D *, Memref2D *))mlirExecutionEngineLookup(
          jit, str("_mlir_ciface_kernel"));
  enum { Rows = 3, Cols = 16 };
  float xs[Rows * Cols], ws[Cols], ys[Rows * Cols];
  for (int i = 0; i < Rows * Cols; ++i)
    xs[i] = (float)((i * 37) % 11) - 4.5f;
  for (int j = 0; j < Cols; ++j)
    ws[j] = 0.5f + 0.125f * (float)j;
  Memref2D x = {xs, xs, 0, {Rows, Cols}, {Cols, 1}};
  Memref1D w = {ws, ws, 0, {Cols}, {1}};
  Memref2D y = {ys, ys, 0, {Rows, Cols}, {Cols, 1}};
  kernel(&x, &w, &y);
  double maxError = 0;
  for (int i = 0; i < Rows; ++i) {
    double ms = 0;
    for (int j = 0; j < Cols; ++j)
      ms += (double)xs[i * Cols + j] * xs[i * Cols + j];
    double r = 1.0 / sqrt(ms / Cols + 1e-6);
    for (int j = 0; j < Cols; ++j) {
      double ref = xs[i * Cols + j] * r * ws[j];
      double err = fabs(ys[i * Cols + j] - ref) / (fabs(ref) + 1.0);
      if (err > maxError)
        maxError = err;
    }
  }
  printf("kernel=%d max error below 1e-5: %d\n", kernel != NULL,
         maxError < 1e-5);
  // CHECK: kernel=1 max error below 1e-5: 1
  mlirExecutionEngineDestroy(jit);
  mlirModuleDestroy(module);
}

// With the norm and core dialects only, norm-cpu-pipeline stops at its start
// with one diagnostic naming the missing models and the registration
// function; mlirNormRegisterPipelineDialects alone is enough.
// CHECK-LABEL: testPipelineRegistration
// CHECK: diagnostic: norm-cpu-pipeline: the context lacks external models the pipeline needs (BufferizableOpInterface of 'arith.constant', {{.*}}); create the MLIRContext from a DialectRegistry filled by mlir::norm::registerNormPipelineDialects (norm/InitAllNorm.h; C API: mlirNormRegisterPipelineDialects)
// CHECK-NEXT: registry=norm+core parsed=1 ran=0
// CHECK-NOT: diagnostic
// CHECK: registry=pipeline parsed=1 ran=1
static void testPipelineRegistration(void) {
  printf("testPipelineRegistration\n");
  const char *source =
      "func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
      "  %a = arith.constant dense<0.5> : tensor<f32>\n"
      "  %y = norm.dyt %x alpha(%a) : (tensor<4x8xf32>, tensor<f32>) -> "
      "tensor<4x8xf32>\n"
      "  return %y : tensor<4x8xf32>\n"
      "}\n";
  for (int full = 0; full < 2; ++full) {
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    if (full) {
      mlirNormRegisterPipelineDialects(registry);
    } else {
      mlirDialectHandleInsertDialect(mlirGetDialectHandle__norm__(), registry);
      mlirDialectHandleInsertDialect(mlirGetDialectHandle__func__(), registry);
      mlirDialectHandleInsertDialect(mlirGetDialectHandle__arith__(), registry);
      mlirDialectHandleInsertDialect(mlirGetDialectHandle__tensor__(),
                                     registry);
    }
    MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
    mlirDialectRegistryDestroy(registry);
    mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
    MlirModule module = mlirModuleCreateParse(ctx, str(source));
    MlirPassManager pm =
        mlirPassManagerCreateOnOperation(ctx, str("builtin.module"));
    MlirLogicalResult parsed = mlirParsePassPipeline(
        mlirPassManagerGetAsOpPassManager(pm),
        str("builtin.module(norm-cpu-pipeline)"), printToStdout, NULL);
    MlirLogicalResult ran =
        mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
    printf("registry=%s parsed=%d ran=%d\n", full ? "pipeline" : "norm+core",
           mlirLogicalResultIsSuccess(parsed), mlirLogicalResultIsSuccess(ran));
    mlirPassManagerDestroy(pm);
    mlirModuleDestroy(module);
    mlirContextDestroy(ctx);
  }
}

int main(void) {
  MlirContext ctx = createContext();
  testEnumAttributes(ctx);
  testIsA(ctx);
  testBuilders(ctx);
  testQuantizeBuilder(ctx);
  testBlockScaledQuantizeBuilder(ctx);
  testTrainingBuilders(ctx);
  testPipelineAndJIT(ctx);
  mlirContextDestroy(ctx);
  testPipelineRegistration();
  return 0;
}
