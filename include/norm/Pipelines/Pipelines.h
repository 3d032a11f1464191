//===- Pipelines.h - norm-cpu-pipeline and norm-gpu-pipeline ----*- C++ -*-===//
//
// Whole-module pipelines from norm plus upstream tensor-level dialects down
// to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_PIPELINES_PIPELINES_H
#define NORM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace norm {

/// How norm ops reach loops in norm-cpu-pipeline.
enum class CPULowering {
  /// Row loops with vector ops (norm-lower-cpu).
  Direct,
  /// The portable decomposition (norm-to-linalg) and upstream codegen.
  Linalg,
};

/// Options of norm-cpu-pipeline.
struct NormCPUPipelineOptions
    : public PassPipelineOptions<NormCPUPipelineOptions> {
  PassOptions::Option<CPULowering> lowering{
      *this, "lowering",
      llvm::cl::desc("How norm ops are lowered: 'direct' (vector row loops) "
                     "or 'linalg' (portable decomposition)"),
      llvm::cl::init(CPULowering::Direct),
      llvm::cl::values(
          clEnumValN(CPULowering::Direct, "direct", "vector row loops"),
          clEnumValN(CPULowering::Linalg, "linalg",
                     "norm-to-linalg and upstream codegen"))};
  PassOptions::Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("Number of threads rows are spread over; 1 runs under "
                     "plain mlir-runner, more needs the OpenMP runtime"),
      llvm::cl::init(1)};
  PassOptions::Option<unsigned> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Vector width in bits for the direct lowering (0: from "
                     "the host)"),
      llvm::cl::init(0)};
};

/// Adds norm-cpu-pipeline to `pm` (anchored on builtin.module). Returns
/// failure, with a diagnostic on stderr, for invalid options.
LogicalResult buildNormCPUPipeline(OpPassManager &pm,
                                   const NormCPUPipelineOptions &options);

/// Registers norm-cpu-pipeline (and norm-gpu-pipeline when available).
void registerNormPipelines();

} // namespace norm
} // namespace mlir

#endif // NORM_PIPELINES_PIPELINES_H
