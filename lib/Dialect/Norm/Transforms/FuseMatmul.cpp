//===- FuseMatmul.cpp - Tile-and-fuse norm ops with matmuls -----*- C++ -*-===//
//
// norm-fuse-matmul: prologue fusion (a matmul tiled over rows pulls in the
// norm op producing its left operand) and epilogue fusion (a norm op tiled
// over rows pulls in the matmul producing its input), with upstream scf
// tile-and-fuse over the ops' TilingInterface.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Support/PassStatistics.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFUSEMATMULPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

/// True for the matmuls this pass fuses with.
static bool isMatmul(Operation *op) {
  return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
}

/// Whether `matmul` reads its left operand in row-major (M, K) order (batch:
/// (B, M, K)): a tile of its rows then needs whole rows of the operand.
static bool readsLhsByRows(linalg::LinalgOp matmul) {
  AffineMap map = matmul.getMatchingIndexingMap(matmul.getDpsInputOperand(0));
  MLIRContext *ctx = matmul.getContext();
  unsigned k = map.getNumDims() - 1;
  SmallVector<AffineExpr> expected;
  if (isa<linalg::BatchMatmulOp>(matmul))
    expected.push_back(getAffineDimExpr(0, ctx));
  expected.push_back(getAffineDimExpr(k - 2, ctx));
  expected.push_back(getAffineDimExpr(k, ctx));
  return map.getNumSymbols() == 0 && map.getResults() == ArrayRef(expected);
}

/// Tiles `consumer` with `tileSizes` and fuses the producers `shouldFuse`
/// accepts into the loop nest; replaces the consumer's results. Fails, and
/// leaves the IR as it was, when the tiling fails; returns the producers
/// that were fused.
static FailureOr<llvm::SetVector<Operation *>>
tileAndFuse(RewriterBase &rewriter, TilingInterface consumer,
            ArrayRef<OpFoldResult> tileSizes,
            function_ref<bool(Operation *)> shouldFuse) {
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(tileSizes);
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer, bool isDestinationOperand)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isDestinationOperand || !shouldFuse(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(consumer);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, consumer, options);
  if (failed(result))
    return failure();
  for (OpResult value : consumer->getResults())
    if (Value replacement = result->replacements.lookup(value))
      rewriter.replaceAllUsesWith(value, replacement);
  return result->fusedProducers;
}

namespace {

struct NormFuseMatmulPass
    : public norm::impl::NormFuseMatmulPassBase<NormFuseMatmulPass> {
  using NormFuseMatmulPassBase::NormFuseMatmulPassBase;
  NormFuseMatmulPass() = default;
  NormFuseMatmulPass(const NormFuseMatmulPass &other)
      : NormFuseMatmulPassBase(other) {}

  PassStatistic numPrologue{
      this, "fused-prologue",
      "Number of norm ops fused into their matmul consumer"};
  PassStatistic numEpilogue{this, "fused-epilogue",
                            "Number of matmul producers fused into a norm op"};
  PassStatistic numDeclined{this, "declined",
                            "Number of candidates left unchanged"};

  void decline(Operation *op, const Twine &reason) {
    ++numDeclined;
    if (remarks)
      op->emitRemark("not fused with a matmul: ") << reason;
  }

  void runOnOperation() override {
    if (tileRows < 1) {
      getOperation()->emitError(
          "norm-fuse-matmul: option 'tile-rows' must be positive, got ")
          << int64_t(tileRows);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());

    // Prologue: matmuls whose LHS comes from a norm op.
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isMatmul(op) && op.getDpsInputs()[0].getDefiningOp<NormOpInterface>())
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp matmul : matmuls) {
      auto norm = matmul.getDpsInputs()[0].getDefiningOp<NormOpInterface>();
      if (norm.getNumNormalizedDims() != 1) {
        decline(norm, "the norm op normalizes several dims");
        continue;
      }
      if (norm.hasUsedStats()) {
        decline(norm, "the norm op's statistics are used (the op would be "
                      "computed both whole and in the matmul's tiles)");
        continue;
      }
      if (!readsLhsByRows(matmul)) {
        decline(norm, "the matmul reads the normalized operand transposed "
                      "(a row tile needs a column block of the norm op)");
        continue;
      }
      // Tile the rows (M) of the matmul; the batch dim of batch_matmul one
      // at a time; N and K stay whole so a tile needs whole rows of the norm.
      SmallVector<OpFoldResult> sizes;
      if (isa<linalg::BatchMatmulOp>(matmul))
        sizes.push_back(rewriter.getIndexAttr(1));
      sizes.push_back(rewriter.getIndexAttr(tileRows));
      sizes.append({rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)});
      Operation *normOp = norm.getOperation();
      FailureOr<llvm::SetVector<Operation *>> fused =
          tileAndFuse(rewriter, cast<TilingInterface>(*matmul), sizes,
                      [&](Operation *op) { return op == normOp; });
      if (failed(fused)) {
        decline(matmul, "tile-and-fuse failed");
        continue;
      }
      if (!fused->contains(normOp)) {
        // The matmul is tiled, the norm op computed whole before the loop.
        decline(norm, "the matmul was tiled but the norm op could not be "
                      "fused into its row tiles");
        continue;
      }
      ++numPrologue;
      if (matmul->use_empty())
        rewriter.eraseOp(matmul);
      // Sizes of the tiles may still read the shape of the untiled result:
      // take it from x (the same shape), so that the op can go.
      // The slices tile-and-fuse replaced are left dead.
      for (Value result : normOp->getResults())
        for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
          Operation *user = use.getOwner();
          if (auto dim = dyn_cast<tensor::DimOp>(user))
            rewriter.modifyOpInPlace(
                dim, [&] { dim.getSourceMutable().assign(norm.getX()); });
          else if (isOpTriviallyDead(user))
            rewriter.eraseOp(user);
        }
      if (normOp->use_empty())
        rewriter.eraseOp(normOp);
    }

    // Epilogue: norm ops whose input comes from a matmul.
    SmallVector<NormOpInterface> norms;
    getOperation()->walk([&](NormOpInterface op) {
      if (isMatmul(op.getX().getDefiningOp()))
        norms.push_back(op);
    });
    for (NormOpInterface norm : norms) {
      Operation *producer = norm.getX().getDefiningOp();
      int64_t loops = norm.getNormalizedDim();
      if (loops == 0) {
        decline(norm, "the norm op has no row dims to tile");
        continue;
      }
      SmallVector<OpFoldResult> sizes(loops, rewriter.getIndexAttr(1));
      sizes.back() = rewriter.getIndexAttr(tileRows);
      FailureOr<llvm::SetVector<Operation *>> fused =
          tileAndFuse(rewriter, cast<TilingInterface>(*norm), sizes,
                      [&](Operation *op) { return op == producer; });
      if (failed(fused)) {
        decline(norm, "tile-and-fuse failed");
        continue;
      }
      if (!fused->contains(producer)) {
        decline(norm, "the norm op was tiled but the matmul could not be "
                      "fused into its row tiles");
        rewriter.eraseOp(norm);
        continue;
      }
      ++numEpilogue;
      rewriter.eraseOp(norm);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
    }
  }
};

} // namespace
