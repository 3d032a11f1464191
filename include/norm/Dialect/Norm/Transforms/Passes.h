//===- Passes.h - Norm dialect transformation passes ------------*- C++ -*-===//
//
// Declarations of the norm dialect's transformation passes (generated from
// Passes.td, options included) and of their pattern sets.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_TRANSFORMS_PASSES_H
#define NORM_DIALECT_NORM_TRANSFORMS_PASSES_H

#include "norm/Dialect/Norm/IR/NormDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace norm {

#define GEN_PASS_DECL
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"

/// Adds the pattern that replaces a decomposed LayerNorm, RMSNorm or DyT
/// chain ending at the matched op by one norm op (`norm-raise`). The pattern
/// matches any op; it only rewrites the outermost op of a chain and erases
/// the chain's intermediate ops itself. Each match analyzes the chain at its
/// op afresh (to a bounded depth); the pass shares that analysis between all
/// the ops of a function, which keeps it linear in the function's size.
void populateNormRaisePatterns(RewritePatternSet &patterns);

/// Adds the pattern that folds an add feeding a norm op into the op's
/// `residual` operand (`norm-fuse-residual`).
void populateNormFuseResidualPatterns(RewritePatternSet &patterns);

/// Adds the pattern folding norm weights/biases into the constant RHS of
/// their matmul consumers (`norm-fold-matmul-weights`), with the pass's
/// options (`remarks` is the pass's own and is ignored here).
void populateNormFoldMatmulWeightsPatterns(
    RewritePatternSet &patterns,
    const NormFoldMatmulWeightsPassOptions &options = {});

#define GEN_PASS_REGISTRATION
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"

} // namespace norm
} // namespace mlir

#endif // NORM_DIALECT_NORM_TRANSFORMS_PASSES_H
