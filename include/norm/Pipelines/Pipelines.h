//===- Pipelines.h - norm-cpu-pipeline and norm-gpu-pipeline ----*- C++ -*-===//
//
// Whole-module pipelines from norm plus upstream tensor-level dialects down
// to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_PIPELINES_PIPELINES_H
#define NORM_PIPELINES_PIPELINES_H

#include "norm/Support/HostCPU.h"

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
      llvm::cl::desc("Vector width in bits for the direct lowering (0: the "
                     "target CPU's, i.e. the host's unless target-cpu is "
                     "given)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("Lower each distinct norm op and contraction once, in "
                     "a function its equivalent ops call "
                     "(norm-outline-kernels); false: each op in place"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeMatmul{
      *this, "vectorize-matmul",
      llvm::cl::desc("Tile f32/f64 matmuls into vector register tiles "
                     "(norm-vectorize-matmul); false: scalar loops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> nativeBF16{
      *this, "native-bf16",
      llvm::cl::desc("Leave f32 -> bf16 truncation to LLVM, which uses the "
                     "target's conversion instruction (vcvtneps2bf16); "
                     "false: expand it to integer operations, for targets "
                     "without one (default: whether the target CPU, the "
                     "host unless target-cpu is given, has AVX-512 BF16)"),
      llvm::cl::init(hostHasNativeBF16())};
  PassOptions::Option<std::string> targetCPU{
      *this, "target-cpu",
      llvm::cl::desc("The CPU to compile for, as LLVM names it (x86-64-v3, "
                     "skylake-avx512, sapphirerapids, znver4, neoverse-v1, "
                     "...): its vector width and bf16 conversion replace "
                     "the host's as the defaults of vector-width and "
                     "native-bf16, and the LLVM functions are marked for it "
                     "(norm-set-target-cpu); empty: the host"),
      llvm::cl::init("")};
};

/// Adds norm-cpu-pipeline to `pm` (anchored on builtin.module), creating
/// every pass directly (no pass registry needed). For invalid options or
/// anchor, adds only a pass that fails the run with the diagnostic, and
/// returns failure.
LogicalResult buildNormCPUPipeline(OpPassManager &pm,
                                   const NormCPUPipelineOptions &options);

/// Options of norm-gpu-pipeline.
struct NormGPUPipelineOptions
    : public PassPipelineOptions<NormGPUPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU architecture (sm_NN, e.g. sm_80, sm_90a)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX ISA version feature (+ptxNN)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Form of the kernels in the gpu.binary: 'isa' (PTX), "
                     "'bin' (cubin) or 'fatbin'"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit path, for ptxas and libdevice (default: "
                     "$CUDA_HOME, else /usr/local/cuda)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> memory{
      *this, "memory",
      llvm::cl::desc("Where tensors live at run time: 'copy' (host memory, "
                     "copied around each kernel) or 'device'"),
      llvm::cl::init("copy")};
  PassOptions::Option<int64_t> splitMinElements{
      *this, "split-min-elements",
      llvm::cl::desc("Fewer than 64 rows are each cut into parts of at "
                     "least this many elements, a block per part; 0: never "
                     "(norm-lower-gpu's option)"),
      llvm::cl::init(32768)};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the device code (0-3)"),
      llvm::cl::init(3)};
};

/// Adds norm-gpu-pipeline to `pm` (anchored on builtin.module), creating
/// every pass directly. For invalid options or anchor or a missing CUDA
/// toolkit, adds only a pass that fails the run with the diagnostic, and
/// returns failure.
LogicalResult buildNormGPUPipeline(OpPassManager &pm,
                                   const NormGPUPipelineOptions &options);

/// The CUDA toolkit path norm-gpu-pipeline uses when its option `toolkit` is
/// empty: $CUDA_HOME, else /usr/local/cuda.
std::string getDefaultCUDAToolkitPath();

/// Options of norm-spmd-pipeline.
struct NormSPMDPipelineOptions
    : public PassPipelineOptions<NormSPMDPipelineOptions> {
  PassOptions::Option<bool> checkRanks{
      *this, "check-ranks",
      llvm::cl::desc("Check at run time that the MPI run has as many ranks "
                     "as each grid has processes (MPICH ABI)"),
      llvm::cl::init(true)};
};

/// Adds norm-spmd-pipeline to `pm` (anchored on builtin.module): sharding
/// propagation and partition of the annotated functions, the collectives
/// LLVM 22 leaves, convert-shard-to-mpi and the clean-ups after it.
LogicalResult buildNormSPMDPipeline(OpPassManager &pm,
                                    const NormSPMDPipelineOptions &options);

/// Registers norm-cpu-pipeline, norm-gpu-pipeline and norm-spmd-pipeline.
void registerNormPipelines();

} // namespace norm
} // namespace mlir

#endif // NORM_PIPELINES_PIPELINES_H
