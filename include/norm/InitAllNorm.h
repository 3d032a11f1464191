//===- InitAllNorm.h - Register the norm dialect and passes -----*- C++ -*-===//
//
// The registration entry points of norm-mlir, for tools and embedding
// compilers (target NormMLIR::MLIRNormRegistration). An embedder that runs
// the norm pipelines needs two calls:
//
//   mlir::DialectRegistry registry;
//   mlir::norm::registerNormPipelineDialects(registry);  // what they need
//   mlir::MLIRContext context(registry);
//   mlir::norm::registerAllNormPasses();  // only to name passes in text
//
// buildNormCPUPipeline / buildNormGPUPipeline / buildNormSPMDPipeline
// (norm/Pipelines/Pipelines.h) create their passes directly and need no
// pass registration; textual pipelines ("norm-cpu-pipeline{threads=4}")
// need registerAllNormPasses(), and mlir::registerAllPasses() for the names
// of upstream passes.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_INITALLNORM_H
#define NORM_INITALLNORM_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace norm {

/// Adds the norm dialect and the external interface models of its ops
/// (AggregatedOpInterface, TilingInterface, ShardingInterface:
/// registerNormOpExternalModels) to `registry`. It changes no upstream op.
/// Enough to parse, print and transform norm ops; not enough for the
/// pipelines (see registerNormPipelineDialects).
void registerAllNormDialects(DialectRegistry &registry);

/// Adds to `registry` everything norm-cpu-pipeline, norm-gpu-pipeline and
/// norm-spmd-pipeline need of a context: registerAllNormDialects, the
/// models norm-mlir patches onto upstream ops (memory effects of
/// gpu.launch_func and the mpi ops: registerNormUpstreamOpModels in
/// norm/ExternalModels/ExternalModels.h, which an embedder filling its own
/// registry calls to opt in), every upstream dialect of their inputs and
/// outputs with its extensions and external models (bufferization, buffer
/// deallocation, convert-to-llvm, sharding, NVVM target, ...:
/// mlir::registerAllDialects and mlir::registerAllExtensions) and the
/// translations of the LLVM, OpenMP, GPU and NVVM dialects to LLVM IR (for
/// gpu-module-to-binary, the JIT and mlir::translateModuleToLLVMIR). norm-opt's
/// registry is this one. A pipeline run in a context without these models fails
/// at its start with a diagnostic that names this function.
void registerNormPipelineDialects(DialectRegistry &registry);

/// Registers every norm pass and pipeline (norm-raise, ...,
/// norm-cpu-pipeline) with the global pass registry, so that textual
/// pipelines (parsePassPipeline, mlir::PassManager options, norm-opt flags)
/// can name them. Upstream passes are not registered.
void registerAllNormPasses();

} // namespace norm
} // namespace mlir

#endif // NORM_INITALLNORM_H
