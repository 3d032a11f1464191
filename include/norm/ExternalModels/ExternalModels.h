//===- ExternalModels.h - Interface models norm-mlir attaches ---*- C++ -*-===//
//
// Every external interface model of norm-mlir, in two groups an embedder
// registers separately:
//
// - models of the norm ops (TilingInterface, AggregatedOpInterface,
//   ShardingInterface): registerNormOpExternalModels, which
//   registerAllNormDialects calls, so they come with the dialect;
// - models norm-mlir patches onto upstream ops whose own declarations the
//   pipelines need but LLVM 22 lacks (the memory effects of
//   gpu.launch_func and of the mpi ops): registerNormUpstreamOpModels,
//   which only registerNormPipelineDialects calls. Registering the norm
//   dialect never changes upstream ops; an embedder that builds its own
//   registry for the pipelines opts in by calling it (the pipelines'
//   registration check names these models when they are missing).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_EXTERNALMODELS_EXTERNALMODELS_H
#define NORM_EXTERNALMODELS_EXTERNALMODELS_H

namespace mlir {
class DialectRegistry;

namespace norm {

//===----------------------------------------------------------------------===//
// Models of the norm ops
//===----------------------------------------------------------------------===//

/// Registers every model of the norm ops below.
void registerNormOpExternalModels(DialectRegistry &registry);

/// Registers TilingInterface on norm.layer_norm, norm.rms_norm, norm.dyt and
/// norm.quantize. The iteration domain is the leading (non-normalized) dims
/// only: a tile always holds complete rows, so the row statistics stay
/// exact.
void registerTilingInterfaceExternalModels(DialectRegistry &registry);

/// Attaches `linalg::AggregatedOpInterface` (the decomposition of
/// norm/Conversion/NormToLinalg/NormToLinalg.h) to the norm ops, so
/// `transform.structured.decompose_interface` applies to them.
void registerAggregatedOpInterfaceExternalModels(DialectRegistry &registry);

/// Registers shard::ShardingInterface on norm.layer_norm, norm.rms_norm,
/// norm.dyt and norm.quantize: leading dims parallel, normalized dims
/// reduction (sum; per-token quantize: max), weight/bias following the
/// normalized dims, scalar parameters replicated. Partition splitting the
/// normalized dims emits the op's linalg decomposition with its row sums
/// all-reduced (`shard.all_reduce`) over the grid axes of those dims.
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

//===----------------------------------------------------------------------===//
// Models patched onto upstream ops
//===----------------------------------------------------------------------===//

/// Registers every model of upstream ops below. Opt-in: it changes what
/// upstream ops declare in every context created from `registry`.
void registerNormUpstreamOpModels(DialectRegistry &registry);

/// Declares the memory effects of gpu.launch_func, which upstream leaves
/// undeclared: without them buffer deallocation frees (or hoists) buffers a
/// kernel of norm-gpu-pipeline still reads or writes.
void registerGPULaunchFuncMemoryEffectsModel(DialectRegistry &registry);

/// Declares the memory effects of mpi.init, mpi.finalize, mpi.allreduce,
/// mpi.send and mpi.recv, which LLVM 22 leaves undeclared (buffer
/// deallocation, which norm-cpu-pipeline runs, rejects them).
void registerMPIMemoryEffectsModels(DialectRegistry &registry);

} // namespace norm
} // namespace mlir

#endif // NORM_EXTERNALMODELS_EXTERNALMODELS_H
