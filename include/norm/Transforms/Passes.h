//===- Passes.h - Passes on upstream IR -------------------------*- C++ -*-===//
//
// Declarations of the passes of the CPU pipeline that work on upstream ops
// (generated from Passes.td) and the entry points they expose.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TRANSFORMS_PASSES_H
#define NORM_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace norm {

#define GEN_PASS_DECL
#include "norm/Transforms/Passes.h.inc"

/// Collects the pattern of norm-collapse-destinations: a
/// materialize_in_destination of a tensor.expand_shape into a memref
/// materializes the expand's source into the collapsed memref.
void populateCollapseDestinationsPatterns(RewritePatternSet &patterns);

/// Collects the pattern of norm-legalize-reshapes: tensor.expand_shape ops
/// with several dynamic dims in one reassociation group become
/// tensor.reshape.
void populateLegalizeReshapesPatterns(RewritePatternSet &patterns);

/// Tiles an f32/f64 contraction with one M, N and K dim (and any batch
/// dims) into cache blocks and register tiles, vectorizes the register tile
/// and lowers it to FMAs on rows of the tile (see norm-vectorize-matmul,
/// whose options these are). Returns the value replacing the op's result.
/// It runs greedy rewrites of its own on the loops it creates, so call it
/// with an IRRewriter, not from inside a pattern.
FailureOr<Value> vectorizeMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const NormVectorizeMatmulPassOptions &options);

/// Whether `module`'s MPI calls follow MPICH's ABI: its `dlti.map` names
/// MPICH as "MPI:Implementation", or names none (LLVM 22's default).
bool usesMPICHABI(ModuleOp module);

#define GEN_PASS_REGISTRATION
#include "norm/Transforms/Passes.h.inc"

} // namespace norm
} // namespace mlir

#endif // NORM_TRANSFORMS_PASSES_H
