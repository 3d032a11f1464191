/*===- norm-embed-c.c - A C host on the norm-mlir C API ------------*- C -*-===*\
|*                                                                            *|
|* Reads a module with `func.func @rms_norm(tensor<2x8xf32>, tensor<8xf32>)`  *|
|* (rms_norm.mlir), lowers it with norm-cpu-pipeline, JIT-compiles it and     *|
|* checks the result against a reference computed here:                       *|
|*                                                                            *|
|*   norm-embed-c rms_norm.mlir                                               *|
|*                                                                            *|
|* Links libNormMLIR-C.so only (never together with libMLIR.so).             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "norm-c/Dialects.h"
#include "norm-c/Passes.h"

#include "mlir-c/ExecutionEngine.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROWS = 2, COLS = 8 };

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Memref2D;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} Memref1D;

static void printToStderr(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stderr);
}

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (text && fread(text, 1, (size_t)size, file) != (size_t)size) {
    free(text);
    text = NULL;
  }
  if (text)
    text[size] = '\0';
  fclose(file);
  return text;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: norm-embed-c INPUT.mlir\n");
    return 2;
  }
  char *source = readFile(argv[1]);
  if (!source) {
    fprintf(stderr, "norm-embed-c: cannot read %s\n", argv[1]);
    return 1;
  }

  /* What the pipelines need of a context (dialects, their models, the LLVM
     IR translations the JIT uses), and the passes for textual pipelines. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirNormRegisterPipelineDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterNormPasses();

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(source));
  free(source);
  if (mlirModuleIsNull(module))
    return 1;

  MlirPassManager pm = mlirPassManagerCreateOnOperation(
      ctx, mlirStringRefCreateFromCString("builtin.module"));
  if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
          mlirPassManagerGetAsOpPassManager(pm),
          mlirStringRefCreateFromCString("builtin.module(norm-cpu-pipeline)"),
          printToStderr, NULL)))
    return 1;
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    return 1;
  mlirPassManagerDestroy(pm);

  MlirExecutionEngine jit =
      mlirExecutionEngineCreate(module, 3, 0, NULL, false, false);
  if (mlirExecutionEngineIsNull(jit)) {
    fprintf(stderr, "norm-embed-c: JIT compilation failed\n");
    return 1;
  }
  void (*rmsNorm)(Memref2D *, Memref2D *, Memref1D *) =
      (void (*)(Memref2D *, Memref2D *, Memref1D *))mlirExecutionEngineLookup(
          jit, mlirStringRefCreateFromCString("_mlir_ciface_rms_norm"));
  if (!rmsNorm) {
    fprintf(stderr, "norm-embed-c: no _mlir_ciface_rms_norm\n");
    return 1;
  }

  float xs[ROWS * COLS], ws[COLS];
  for (int i = 0; i < ROWS * COLS; ++i)
    xs[i] = (float)(i % 5) - 1.5f;
  for (int j = 0; j < COLS; ++j)
    ws[j] = 0.5f + 0.125f * (float)j;
  Memref2D x = {xs, xs, 0, {ROWS, COLS}, {COLS, 1}}, y;
  Memref1D w = {ws, ws, 0, {COLS}, {1}};
  rmsNorm(&y, &x, &w);

  /* y = x * rsqrt(mean(x^2) + 1e-5) * w */
  double maxError = 0;
  for (int r = 0; r < ROWS; ++r) {
    double ms = 0;
    for (int j = 0; j < COLS; ++j)
      ms += (double)xs[r * COLS + j] * xs[r * COLS + j];
    double scale = 1 / sqrt(ms / COLS + 1e-5);
    for (int j = 0; j < COLS; ++j) {
      double ref = xs[r * COLS + j] * scale * ws[j];
      maxError = fmax(maxError, fabs(y.aligned[r * COLS + j] - ref));
    }
  }
  int ok = maxError < 1e-5;
  printf("rms_norm %dx%d: max error %.1e: %s\n", ROWS, COLS, maxError,
         ok ? "ok" : "FAILED");
  /* The result buffer was allocated by the compiled code (malloc). */
  free(y.allocated);
  mlirExecutionEngineDestroy(jit);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return ok ? 0 : 1;
}
