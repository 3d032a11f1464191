//===- ShardingInterfaceImpl.h - ShardingInterface of the norm ops -*- C++ -*-//
//
// Attaches upstream's shard::ShardingInterface to the norm ops and
// norm.quantize as external models.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_NORMTOLINALG_SHARDINGINTERFACEIMPL_H
#define NORM_CONVERSION_NORMTOLINALG_SHARDINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace norm {

/// Registers shard::ShardingInterface on norm.layer_norm, norm.rms_norm,
/// norm.dyt and norm.quantize: leading dims parallel, normalized dims
/// reduction (sum; per-token quantize: max), weight/bias following the
/// normalized dims, scalar parameters replicated. Partition splitting the
/// normalized dims emits the op's linalg decomposition with its row sums
/// all-reduced (`shard.all_reduce`) over the grid axes of those dims.
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOLINALG_SHARDINGINTERFACEIMPL_H
