//===- TilingInterfaceImpl.h - TilingInterface of the norm ops --*- C++ -*-===//
//
// Attaches TilingInterface to the norm ops as an external model.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_TILINGINTERFACEIMPL_H
#define NORM_DIALECT_NORM_IR_TILINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace norm {

/// Registers TilingInterface on norm.layer_norm, norm.rms_norm and norm.dyt.
/// The iteration domain is the leading (non-normalized) dims only: a tile
/// always holds complete rows, so the row statistics stay exact.
void registerTilingInterfaceExternalModels(DialectRegistry &registry);

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_IR_TILINGINTERFACEIMPL_H
