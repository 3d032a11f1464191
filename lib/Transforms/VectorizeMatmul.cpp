//===- VectorizeMatmul.cpp - Register-tiled vector matmuls ------*- C++ -*-===//
//
// norm-vectorize-matmul: the CPU code for the matmuls next to norms. Each
// f32/f64 linalg contraction with one M, one N and one K dim (matmul, its
// transposed forms, batch_matmul, a generic of that form) is tiled with
// upstream TilingInterface tiling into
//
//   scf.forall over N blocks          (threads; cache block of B's columns)
//     scf.for over K blocks           (a K x N block of B stays in L2)
//       scf.for over M register tiles
//         scf.for over N register tiles
//           scf.for over K            (accumulator tile kept in registers)
//
// and the innermost tile is vectorized (linalg::vectorize, masked where the
// tile is partial) into a vector.contract that is lowered to outer
// products, i.e. one broadcast of A and one FMA per vector of B. The
// accumulator's transfers are hoisted out of the K loop.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Support/HostCPU.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMVECTORIZEMATMULPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

/// Multiply-adds below which the N-block loop runs on one thread: an
/// OpenMP region costs 5-15 us here.
static constexpr int64_t kParallelMinMACs = int64_t(1) << 22;

/// K steps per register tile (unrolled into that many outer products).
static constexpr int64_t kTileK = 4;

/// The tiling of one contraction, per loop dim of its iteration space.
struct ContractionTiling {
  unsigned mDim, nDim, kDim;
  SmallVector<unsigned, 2> batchDims;
};

/// Recognizes the contractions this pass handles: f32 or f64 throughout,
/// exactly one M, N and K dim (any batch dims), tensor semantics.
static FailureOr<ContractionTiling> matchContraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  Type elementType = getElementTypeOrSelf(op->getResult(0).getType());
  if (!elementType.isF32() && !elementType.isF64())
    return failure();
  for (Value operand : op->getOperands()) {
    if (getElementTypeOrSelf(operand.getType()) != elementType)
      return failure();
    // A constant of a dynamically shaped type, read as is or through
    // tensor.casts, has no sizes to tile by (upstream's value bounds fail
    // on it).
    Value source = operand;
    while (auto cast = source.getDefiningOp<tensor::CastOp>())
      source = cast.getSource();
    Operation *def = source.getDefiningOp();
    auto shaped = dyn_cast<ShapedType>(source.getType());
    if (def && def->hasTrait<OpTrait::ConstantLike>() && shaped &&
        !shaped.hasStaticShape())
      return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return failure();
  return ContractionTiling{dims->m[0], dims->n[0], dims->k[0], dims->batch};
}

/// Tile sizes for `numLoops` loops: `sizes` at the named dims, `fill`
/// elsewhere.
static SmallVector<OpFoldResult>
tileSizes(Builder &b, unsigned numLoops,
          ArrayRef<std::pair<unsigned, int64_t>> sizes, int64_t fill) {
  SmallVector<OpFoldResult> result(numLoops, b.getIndexAttr(fill));
  for (auto [dim, size] : sizes)
    result[dim] = b.getIndexAttr(size);
  return result;
}

/// The number of multiply-adds of `op`, or -1 when a dim is dynamic.
static int64_t staticMACs(linalg::LinalgOp op) {
  int64_t macs = 1;
  for (int64_t size : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return -1;
    macs *= size;
  }
  return macs;
}

/// Tiles `op` with `tileSizes` (ForOp or ForallOp loops) and replaces it
/// with the tiled loops' results.
static FailureOr<scf::SCFTilingResult>
tileAndReplace(RewriterBase &rewriter, linalg::LinalgOp op,
               ArrayRef<OpFoldResult> tileSizes,
               scf::SCFTilingOptions::LoopType loopType) {
  scf::SCFTilingOptions options;
  options.setLoopType(loopType);
  options.setTileSizes(tileSizes);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

/// Vectorizes one register tile into a vector.contract of `vectorSizes`
/// and replaces it. A full tile (its dynamic sizes are the vector sizes, as
/// in peeled loops) needs no masks; a partial one is masked.
static LogicalResult vectorizeTile(RewriterBase &rewriter,
                                   linalg::LinalgOp tile,
                                   ArrayRef<int64_t> vectorSizes,
                                   bool fullTile) {
  // One scalable flag per size: linalg::vectorize reads them by index.
  SmallVector<bool> scalableDims(vectorSizes.size(), false);
  rewriter.setInsertionPoint(tile);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, tile, vectorSizes, scalableDims,
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/fullTile,
      /*createNamedContraction=*/true);
  if (failed(vectorized))
    return failure();
  if (vectorized->replacements.empty())
    rewriter.eraseOp(tile);
  else
    rewriter.replaceOp(tile, vectorized->replacements);
  return success();
}

FailureOr<Value>
mlir::norm::vectorizeMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                            const NormVectorizeMatmulPassOptions &options) {
  FailureOr<ContractionTiling> tiling = matchContraction(op);
  if (failed(tiling))
    return rewriter.notifyMatchFailure(op, "not an f32/f64 contraction with "
                                           "one M, N and K dim");
  unsigned numLoops = op.getNumLoops();
  unsigned width = resolveVectorWidth(options.vectorWidth);
  unsigned elementBits =
      getElementTypeOrSelf(op->getResult(0).getType()).getIntOrFloatBitWidth();
  int64_t lanes = std::max<int64_t>(1, width / elementBits);
  // 2 vectors of B per row of the register tile; as many rows as leave
  // registers for B and the broadcast A element (32 registers with
  // AVX-512, 16 below).
  int64_t tileN = options.tileN ? options.tileN : 2 * lanes;
  int64_t tileM = options.tileM ? options.tileM : (width >= 512 ? 8 : 4);
  // A static dim smaller than the tile gives the tile its size.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto clip = [&](int64_t size, unsigned dim) {
    return ShapedType::isDynamic(ranges[dim]) ? size
                                              : std::min(size, ranges[dim]);
  };
  tileM = std::max<int64_t>(1, clip(tileM, tiling->mDim));
  tileN = std::max<int64_t>(1, clip(tileN, tiling->nDim));
  int64_t tileK = std::max<int64_t>(1, clip(kTileK, tiling->kDim));
  int64_t macs = staticMACs(op);
  Location loc = op.getLoc();
  // One thread for small matmuls, and inside loops that are parallel
  // already.
  bool sequential = options.threads <= 1 ||
                    (macs >= 0 && macs < kParallelMinMACs) ||
                    op->getParentOfType<scf::ForallOp>() ||
                    op->getParentOfType<scf::ParallelOp>();

  // Level 1: N blocks (scf.forall, the parallel dim); batch dims one by one.
  SmallVector<std::pair<unsigned, int64_t>> level1{
      {tiling->nDim, clip(options.blockN, tiling->nDim)}};
  for (unsigned d : tiling->batchDims)
    level1.push_back({d, 1});
  using LoopType = scf::SCFTilingOptions::LoopType;
  FailureOr<scf::SCFTilingResult> blocks =
      tileAndReplace(rewriter, op, tileSizes(rewriter, numLoops, level1, 0),
                     LoopType::ForallOp);
  if (failed(blocks))
    return rewriter.notifyMatchFailure(loc, "cannot tile into N blocks");
  Value result = blocks->replacements.front();
  if (!blocks->loops.empty() && sequential)
    blocks->loops.front()->setAttr(
        NormDialect::SequentialAttrHelper::getNameStr(),
        rewriter.getUnitAttr());

  // Level 2: K blocks. Level 3: register tiles over M and N, and K steps.
  FailureOr<scf::SCFTilingResult> kBlocks = tileAndReplace(
      rewriter, cast<linalg::LinalgOp>(blocks->tiledOps.back()),
      tileSizes(rewriter, numLoops,
                {{tiling->kDim, clip(options.blockK, tiling->kDim)}}, 0),
      LoopType::ForOp);
  if (failed(kBlocks))
    return rewriter.notifyMatchFailure(loc, "cannot tile into K blocks");
  FailureOr<scf::SCFTilingResult> registers = tileAndReplace(
      rewriter, cast<linalg::LinalgOp>(kBlocks->tiledOps.back()),
      tileSizes(
          rewriter, numLoops,
          {{tiling->mDim, tileM}, {tiling->nDim, tileN}, {tiling->kDim, tileK}},
          1),
      LoopType::ForOp);
  if (failed(registers))
    return rewriter.notifyMatchFailure(loc, "cannot tile into register tiles");
  auto tile = cast<linalg::LinalgOp>(registers->tiledOps.back());

  // Every loop dim got a tile size, so loop d iterates over dim d. Peel the
  // last, partial tile off the M, N and K loops: the full tiles are
  // vectorized without masks, the partial ones below with masks.
  if (registers->loops.size() == numLoops) {
    for (unsigned dim : {tiling->mDim, tiling->nDim, tiling->kDim}) {
      auto loop = cast<scf::ForOp>(registers->loops[dim].getOperation());
      scf::ForOp partial;
      (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial);
    }
  }
  SmallVector<int64_t> vectorSizes(numLoops, 1);
  vectorSizes[tiling->mDim] = tileM;
  vectorSizes[tiling->nDim] = tileN;
  vectorSizes[tiling->kDim] = tileK;
  if (failed(vectorizeTile(rewriter, tile, vectorSizes, /*fullTile=*/true)))
    return rewriter.notifyMatchFailure(loc, "cannot vectorize the tile");

  if (blocks->loops.empty())
    return result;
  Region &region = blocks->loops.front()->getRegion(0);
  MLIRContext *context = op->getContext();

  // Canonicalize the tiles: the peeled loops' constant sizes become static
  // types and the all-true masks of full tiles disappear.
  RewritePatternSet canonicalization(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(canonicalization);
  for (RegisteredOperationName name : context->getRegisteredOperations())
    name.getCanonicalizationPatterns(canonicalization, context);
  (void)applyPatternsGreedily(region, std::move(canonicalization));

  // The partial tiles peeled off: vectorized with masks.
  SmallVector<linalg::LinalgOp> partialTiles;
  region.walk([&](linalg::LinalgOp partial) {
    if (succeeded(matchContraction(partial)))
      partialTiles.push_back(partial);
  });
  for (linalg::LinalgOp partial : partialTiles)
    (void)vectorizeTile(rewriter, partial, vectorSizes, /*fullTile=*/false);

  // Keep each accumulator tile in registers across its K loop: hoist its
  // slice, then its transfers, out of the loop.
  SmallVector<scf::ForOp> kLoops;
  region.walk([&](vector::ContractionOp contract) {
    if (auto loop = dyn_cast<scf::ForOp>(contract->getParentOp()))
      kLoops.push_back(loop);
  });
  for (scf::ForOp loop : kLoops) {
    moveLoopInvariantCode(loop);
    (void)hoistLoopInvariantSubsets(rewriter, loop);
  }

  // vector.contract -> outer products -> one broadcast of an element of A
  // and one FMA per vector of B.
  RewritePatternSet lowering(context);
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(lowering);
  vector::populateVectorContractLoweringPatterns(
      lowering, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorTransposeLoweringPatterns(
      lowering, vector::VectorTransposeLowering::EltWise);
  (void)applyPatternsGreedily(region, std::move(lowering));
  return result;
}

namespace {

struct NormVectorizeMatmulPass
    : public norm::impl::NormVectorizeMatmulPassBase<NormVectorizeMatmulPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void NormVectorizeMatmulPass::runOnOperation() {
  Operation *root = getOperation();
  auto bad = [&](StringRef option, int64_t value, StringRef expected) {
    root->emitError() << "norm-vectorize-matmul: option '" << option
                      << "' must be " << expected << ", got " << value;
    signalPassFailure();
  };
  if (!norm::isValidVectorWidthOption(vectorWidth))
    return bad("vector-width", vectorWidth, norm::kVectorWidthExpectation);
  if (tileM < 0 || tileM > 64)
    return bad("tile-m", tileM, "in [0, 64]");
  if (tileN < 0 || tileN > 256)
    return bad("tile-n", tileN, "in [0, 256]");
  if (blockN < 1)
    return bad("block-n", blockN, ">= 1");
  if (blockK < 1)
    return bad("block-k", blockK, ">= 1");
  if (threads < 1)
    return bad("threads", threads, ">= 1");

  norm::NormVectorizeMatmulPassOptions options;
  options.vectorWidth = vectorWidth;
  options.tileM = tileM;
  options.tileN = tileN;
  options.blockN = blockN;
  options.blockK = blockK;
  options.threads = threads;

  // Each contraction once, outermost first; the ops tiling creates are not
  // candidates again.
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (succeeded(matchContraction(op)))
      candidates.push_back(op);
  });
  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : candidates)
    (void)norm::vectorizeMatmul(rewriter, op, options);
}
