/*===- norm-c/Passes.h - C API of the norm passes -----------------*- C -*-===*\
|*                                                                            *|
|* Registration of the norm passes and pipelines with MLIR's global pass      *|
|* registry, and constructors of the individual passes.                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NORM_C_PASSES_H
#define NORM_C_PASSES_H

#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every norm pass and pipeline (`norm-cpu-pipeline`, ...) so that
/// `mlirParsePassPipeline` and `mlirOpPassManagerAddPipeline` find them by
/// name. Upstream passes are registered by `mlirRegisterAllPasses`
/// (mlir-c/RegisterEverything.h).
MLIR_CAPI_EXPORTED void mlirRegisterNormPasses(void);

#ifdef __cplusplus
}
#endif

// mlirCreateNormConversion<Pass>() and mlirRegisterNormConversion<Pass>() for
// norm-to-linalg, norm-lower-cpu and norm-forall-to-loops.
#include "norm/Conversion/Passes.capi.h.inc"
#include "norm/Transforms/Passes.capi.h.inc"

#endif // NORM_C_PASSES_H
