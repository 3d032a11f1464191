/*===- consumer.c - An external C user of libNormMLIR-C.so -------*- C -*-===*\
|*                                                                            *|
|* Registers the norm dialect and passes through the C API, lowers a dyt     *|
|* with norm-cpu-pipeline and calls it through MLIR's execution engine.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "norm-c/Dialects.h"
#include "norm-c/Passes.h"

#include "mlir-c/ExecutionEngine.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} Memref1D;

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__norm__(), registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  mlirRegisterAllPasses();
  mlirRegisterNormPasses();

  MlirModule module = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(
               "func.func @dyt(%xm: memref<8xf32>, %ym: memref<8xf32>)\n"
               "    attributes {llvm.emit_c_interface} {\n"
               "  %x = bufferization.to_tensor %xm restrict : memref<8xf32> "
               "to tensor<8xf32>\n"
               "  %a = arith.constant dense<0.5> : tensor<f32>\n"
               "  %y = norm.dyt %x alpha(%a) : (tensor<8xf32>, tensor<f32>) "
               "-> tensor<8xf32>\n"
               "  bufferization.materialize_in_destination %y in restrict "
               "writable %ym : (tensor<8xf32>, memref<8xf32>) -> ()\n"
               "  return\n"
               "}\n"));
  if (mlirModuleIsNull(module))
    return 1;
  MlirOperation func = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  int dyts = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    dyts += mlirOperationIsANormDyTOp(op);
  printf("parsed: %d norm.dyt\n", dyts);

  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirOpPassManagerAddPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("norm-cpu-pipeline"), print, NULL);
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    return 1;
  mlirPassManagerDestroy(pm);

  MlirExecutionEngine jit =
      mlirExecutionEngineCreate(module, 2, 0, NULL, false, false);
  if (mlirExecutionEngineIsNull(jit))
    return 1;
  void (*kernel)(Memref1D *, Memref1D *) =
      (void (*)(Memref1D *, Memref1D *))mlirExecutionEngineLookup(
          jit, mlirStringRefCreateFromCString("_mlir_ciface_dyt"));
  float xs[8] = {-4, -2, -1, -0.5f, 0, 0.5f, 1, 3}, ys[8];
  Memref1D x = {xs, xs, 0, {8}, {1}}, y = {ys, ys, 0, {8}, {1}};
  kernel(&x, &y);
  double maxError = 0;
  for (int i = 0; i < 8; ++i)
    maxError = fmax(maxError, fabs(ys[i] - tanh(0.5 * xs[i])));
  printf("dyt: max error below 1e-6: %d\n", maxError < 1e-6);
  mlirExecutionEngineDestroy(jit);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
