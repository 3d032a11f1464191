//===- FoldMatmulWeights.cpp - Fold norm weights into matmuls ---*- C++ -*-===//
//
// norm-fold-matmul-weights: FlashNorm-style folding of a norm op's weight
// (and weight_offset) into the rows of the constant RHS of its matmul
// consumers, of its bias into a row vector added after them, and, with
// defer-scale, of rms_norm's per-row scale into an epilogue.
//
//===----------------------------------------------------------------------===//

#include "FoldMatmulWeights.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "norm/Dialect/Norm/IR/ConstantValues.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Support/PassStatistics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <limits>
#include <vector>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFOLDMATMULWEIGHTSPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

using namespace mlir::norm::fold_matmul_weights;

using Options = NormFoldMatmulWeightsPassOptions;

namespace {

//===----------------------------------------------------------------------===//
// Builders of the folded IR
//===----------------------------------------------------------------------===//

/// Builds `result + broadcast(rowVector)` where rowVector varies along the
/// last dim (and the batch dim for rank 3).
static Value addRowVector(OpBuilder &b, Location loc, Value result,
                          Value rowVector) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> vectorDims;
  if (rank == 3)
    vectorDims.push_back(getAffineDimExpr(0, ctx));
  vectorDims.push_back(getAffineDimExpr(rank - 1, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap vectorMap = AffineMap::get(rank, 0, vectorDims, ctx);
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, result), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{result, rowVector}, init,
             ArrayRef<AffineMap>{id, vectorMap, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddFOp::create(nb, nl, args[0], args[1]).getResult());
             })
      .getResult(0);
}

/// Builds the per-row scale r of rms_norm `op` on its input (rows = all
/// leading dims), in the compute type.
static Value buildRowScale(OpBuilder &b, Location loc, NormOpInterface op) {
  Value x = op.getX();
  RankedTensorType type = op.getInputType();
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  Type computeType = op.getComputeElementType();
  Type f64 = b.getF64Type();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  ArrayRef<OpFoldResult> rowSizes = ArrayRef(sizes).drop_back();
  SmallVector<AffineExpr> rowDims;
  for (int64_t d = 0; d < rank - 1; ++d)
    rowDims.push_back(getAffineDimExpr(d, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowMap = AffineMap::get(rank, 0, rowDims, ctx);
  SmallVector<utils::IteratorType> iterators(rank - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value zero = buildFloatConstant(b, loc, f64, 0.0);
  Value empty = tensor::EmptyOp::create(b, loc, rowSizes, f64);
  Value acc = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  Value squares =
      linalg::GenericOp::create(
          b, loc, acc.getType(), x, acc, ArrayRef<AffineMap>{id, rowMap},
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value v = castFloat(nb, nl, args[0], computeType);
            Value sq =
                castFloat(nb, nl, arith::MulFOp::create(nb, nl, v, v), f64);
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, args[1], sq).getResult());
          })
          .getResult(0);
  Value count = buildIndexToFloat(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, sizes.back()), f64);
  Value init = tensor::EmptyOp::create(b, loc, rowSizes, computeType);
  AffineMap rowId = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), squares, init,
             ArrayRef<AffineMap>{rowId, rowId},
             SmallVector<utils::IteratorType>(rank - 1,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value ms = castFloat(
                   nb, nl, arith::DivFOp::create(nb, nl, args[0], count),
                   computeType);
               linalg::YieldOp::create(nb, nl,
                                       buildInverseScale(nb, nl, op, ms));
             })
      .getResult(0);
}

/// Multiplies every row of the matmul result `result` by `scale` (indexed by
/// the result's leading dims).
static Value scaleRows(OpBuilder &b, Location loc, Value result, Value scale) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> rowDims;
  for (int64_t d = 0; d < rank - 1; ++d)
    rowDims.push_back(getAffineDimExpr(d, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowMap = AffineMap::get(rank, 0, rowDims, ctx);
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, result), type.getElementType());
  Type scaleType = cast<RankedTensorType>(scale.getType()).getElementType();
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{result, scale}, init,
             ArrayRef<AffineMap>{id, rowMap, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = castFloat(nb, nl, args[0], scaleType);
               Value scaled = arith::MulFOp::create(nb, nl, v, args[1]);
               linalg::YieldOp::create(
                   nb, nl, castFloat(nb, nl, scaled, type.getElementType()));
             })
      .getResult(0);
}

/// The folded RHS of `use` as a `dense_resource` blob of the RHS's type,
/// named after the original blob (the builtin dialect's blob manager makes
/// the name unique): little-endian, row-major, as the builtin dialect stores
/// them.
static ElementsAttr getFoldedResource(const MatmulUse &use,
                                      DenseResourceElementsAttr original) {
  auto type = cast<RankedTensorType>(use.constant.getType());
  const FoldedRhs &folded = use.folded;
  std::string name = (original.getRawHandle().getKey() + "_folded").str();
  if (!folded.f32.empty())
    return cast<ElementsAttr>(DenseF32ResourceElementsAttr::get(
        type, name,
        HeapAsmResourceBlob::allocateAndCopyInferAlign(
            ArrayRef<float>(folded.f32))));
  if (!folded.f64.empty())
    return cast<ElementsAttr>(DenseF64ResourceElementsAttr::get(
        type, name,
        HeapAsmResourceBlob::allocateAndCopyInferAlign(
            ArrayRef<double>(folded.f64))));
  unsigned bytes = cast<FloatType>(type.getElementType()).getWidth() / 8;
  SmallVector<char> data(folded.other.size() * bytes);
  for (auto [i, value] : llvm::enumerate(folded.other)) {
    uint64_t word = value.bitcastToAPInt().getZExtValue();
    for (unsigned byte = 0; byte < bytes; ++byte)
      data[i * bytes + byte] = char((word >> (8 * byte)) & 0xff);
  }
  return DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyWithAlign(data, bytes));
}

/// The folded RHS of `use` as a constant attribute of the RHS's type: a
/// `dense_resource` blob when the RHS was one (a model's weights stay out of
/// line), a dense attribute otherwise.
static ElementsAttr getFoldedAttr(const MatmulUse &use) {
  auto type = cast<RankedTensorType>(use.constant.getType());
  const FoldedRhs &folded = use.folded;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(use.constant);
      resource && cast<FloatType>(type.getElementType()).getWidth() % 8 == 0)
    return getFoldedResource(use, resource);
  if (!folded.f32.empty())
    return DenseElementsAttr::get(type, ArrayRef<float>(folded.f32));
  if (!folded.f64.empty())
    return DenseElementsAttr::get(type, ArrayRef<double>(folded.f64));
  return DenseFPElementsAttr::get(type, folded.other);
}

/// Creates the folded RHS constant of `use`: a `tosa.const` where the
/// original was one (a TOSA module stays TOSA), an `arith.constant`
/// otherwise.
static Value buildFoldedConstant(OpBuilder &b, Location loc,
                                 const MatmulUse &use) {
  ElementsAttr folded = getFoldedAttr(use);
  auto type = cast<RankedTensorType>(folded.getType());
  if (isa<tosa::ConstOp>(use.constantOp))
    return tosa::ConstOp::create(b, loc, type, folded);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(folded));
}

/// `scale` (one entry per row of the norm's input) reshaped to the leading
/// dims `rowShape` of a matmul result: the same rows in row-major order,
/// through a collapse to one dim and, for a `[B, M]` result, an expand.
static Value reshapeRows(OpBuilder &b, Location loc, Value scale,
                         ArrayRef<int64_t> rowShape) {
  auto type = cast<RankedTensorType>(scale.getType());
  if (type.getShape() == rowShape)
    return scale;
  if (type.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    scale = tensor::CollapseShapeOp::create(
        b, loc, scale, ArrayRef<ReassociationIndices>{all});
  }
  if (rowShape.size() == 1)
    return scale;
  ReassociationIndices all = llvm::to_vector(
      llvm::seq<int64_t>(0, static_cast<int64_t>(rowShape.size())));
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(rowShape, type.getElementType()), scale,
      ArrayRef<ReassociationIndices>{all});
}

/// The constant row vector `bias @ W` for a matmul result of `resultType`
/// with `n` columns, rounded to the result's element type.
static Value buildBiasRow(OpBuilder &b, Location loc,
                          ArrayRef<double> rowVector, int64_t n,
                          RankedTensorType resultType) {
  SmallVector<int64_t> vectorShape;
  if (resultType.getRank() == 3)
    vectorShape.push_back(rowVector.size() / n);
  vectorShape.push_back(n);
  auto vectorType =
      RankedTensorType::get(vectorShape, resultType.getElementType());
  const llvm::fltSemantics &semantics =
      cast<FloatType>(resultType.getElementType()).getFloatSemantics();
  SmallVector<APFloat> values;
  for (double v : rowVector)
    values.push_back(roundTo(v, semantics));
  return arith::ConstantOp::create(
      b, loc, vectorType, DenseFPElementsAttr::get(vectorType, values));
}

//===----------------------------------------------------------------------===//
// Rewrite steps
//===----------------------------------------------------------------------===//

/// Rewrites one matmul consumer: the folded RHS, then the epilogues on its
/// product (the deferred row scale `rowScale`, if any, then the bias row),
/// and with a deferred scale the raw input `x` as its LHS.
static void rewriteMatmul(PatternRewriter &rewriter, NormOpInterface op,
                          const FoldPlan &plan, MatmulUse &use,
                          Value rowScale) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(use.transpose ? use.transpose : use.matmul);
  Value newRhs = buildFoldedConstant(rewriter, loc, use);
  if (use.transpose) {
    // The same transpose (linalg or TOSA) of the folded constant.
    IRMapping mapping;
    mapping.map(use.transpose->getOperand(0), newRhs);
    newRhs = rewriter.clone(*use.transpose, mapping)->getResult(0);
  }
  rewriter.modifyOpInPlace(use.matmul,
                           [&] { use.matmul->getOpOperand(1).set(newRhs); });

  rewriter.setInsertionPointAfter(use.matmul);
  Value result = use.matmul->getResult(0);
  // Only the uses that exist now move to the epilogue (not the epilogue's
  // own uses of the product).
  SmallVector<OpOperand *> resultUses = llvm::map_to_vector(
      result.getUses(), [](OpOperand &use) { return &use; });
  Value replacement = result;
  if (rowScale) {
    // The rows of a collapsed ([B*S, K]) or reshaped ([B', M, K]) LHS.
    ArrayRef<int64_t> rowShape =
        cast<RankedTensorType>(result.getType()).getShape().drop_back();
    Value scale = reshapeRows(rewriter, loc, rowScale, rowShape);
    replacement = scaleRows(rewriter, loc, replacement, scale);
  }
  if (!plan.bias.empty()) {
    ArrayRef<int64_t> constShape =
        cast<RankedTensorType>(use.constant.getType()).getShape();
    int64_t n = constShape[constShape.size() - (use.nMajor ? 2 : 1)];
    Value row = buildBiasRow(rewriter, loc, use.folded.biasRow, n,
                             cast<RankedTensorType>(result.getType()));
    replacement = addRowVector(rewriter, loc, replacement, row);
  }
  if (replacement != result)
    for (OpOperand *resultUse : resultUses)
      rewriter.modifyOpInPlace(resultUse->getOwner(),
                               [&] { resultUse->set(replacement); });
  if (rowScale) {
    // The matmul reads raw x (or its collapse).
    Value rawLhs = op.getX();
    if (use.lhs != op.getY()) {
      // The same collapse or tosa.reshape of raw x.
      Operation *reshape = use.lhs.getDefiningOp();
      rewriter.setInsertionPoint(use.matmul);
      IRMapping mapping;
      mapping.map(op.getY(), op.getX());
      rawLhs = rewriter.clone(*reshape, mapping)->getResult(0);
    }
    rewriter.modifyOpInPlace(use.matmul,
                             [&] { use.matmul->getOpOperand(0).set(rawLhs); });
  }
}

/// The norm op loses its weight and bias, or goes away when its scale was
/// deferred (the matmuls no longer read it).
static void replaceNormOp(PatternRewriter &rewriter, NormOpInterface op,
                          const FoldPlan &plan) {
  if (plan.defer) {
    // Several matmuls may read one collapse or reshape: each is erased once.
    llvm::SetVector<Operation *> collapses;
    for (const MatmulUse &use : plan.uses)
      if (use.lhs != op.getY())
        collapses.insert(use.lhs.getDefiningOp());
    for (Operation *collapse : collapses)
      if (collapse->use_empty())
        rewriter.eraseOp(collapse);
    if (op->use_empty())
      rewriter.eraseOp(op);
    return;
  }
  rewriter.modifyOpInPlace(op, [&] {
    if (auto ln = dyn_cast<LayerNormOp>(op.getOperation())) {
      ln.getWeightMutable().clear();
      ln.getBiasMutable().clear();
    } else if (auto rms = dyn_cast<RMSNormOp>(op.getOperation())) {
      rms.getWeightMutable().clear();
      rms.setWeightOffsetAttr(rewriter.getF32FloatAttr(0.0f));
    } else if (auto dyt = dyn_cast<DyTOp>(op.getOperation())) {
      dyt.getWeightMutable().clear();
      dyt.getBiasMutable().clear();
    }
  });
}

/// Erases what the fold left dead of the constants it read: the ops
/// defining `originals` (the norm op's old weight and bias, the matmuls' old
/// right-hand sides) when nothing uses them any more and they have no side
/// effects, then, the same way, the ops they read (the constant under a
/// transpose or reshape, its shape operand). An op with another user, or
/// that was dead before the fold, is left alone.
static void eraseDeadOriginals(PatternRewriter &rewriter,
                               ArrayRef<Value> originals) {
  SmallVector<Operation *> worklist;
  for (Value value : originals)
    if (Operation *def = value ? value.getDefiningOp() : nullptr)
      worklist.push_back(def);
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    SmallVector<Operation *> producers;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
    worklist.append(producers);
  }
}

//===----------------------------------------------------------------------===//
// Pattern and pass
//===----------------------------------------------------------------------===//

/// Folds the weight and bias of a norm op into the constant RHS of its
/// matmul consumers. A norm op with nothing to fold is no candidate (plain
/// failure); a declined candidate says why through `notifyMatchFailure`.
struct FoldNormWeightsIntoMatmuls
    : public OpInterfaceRewritePattern<NormOpInterface> {
  FoldNormWeightsIntoMatmuls(MLIRContext *ctx, const Options &options)
      : OpInterfaceRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (!op.getWeight() && !op.getBias() && !canDeferScale(op, options))
      return failure();
    std::string reason;
    FailureOr<FoldPlan> plan = planFold(op, options, reason);
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, reason);
    // defer-scale was asked for but is unsound here: fold the weight and
    // bias alone, if any.
    if (!plan->notDeferred.empty()) {
      if (!op.getWeight() && !op.getBias())
        return rewriter.notifyMatchFailure(
            op, "the scale cannot be deferred: " + plan->notDeferred);
      if (options.remarks)
        op->emitRemark("folded without deferring the scale: ")
            << plan->notDeferred;
    }

    Value rowScale;
    if (plan->defer) {
      rewriter.setInsertionPoint(op);
      rowScale = buildRowScale(rewriter, op.getLoc(), op);
    }
    // What the fold replaces: erased below where nothing else reads it.
    SmallVector<Value> originals = {op.getWeight(), op.getBias()};
    for (MatmulUse &use : plan->uses)
      originals.push_back(use.matmul->getOperand(1));
    for (MatmulUse &use : plan->uses)
      rewriteMatmul(rewriter, op, *plan, use, rowScale);
    replaceNormOp(rewriter, op, *plan);
    eraseDeadOriginals(rewriter, originals);
    return success();
  }

  Options options;
};

/// Keeps the reason of the last declined candidate and the ops erased (a
/// norm op whose scale was deferred goes away).
struct DeclineListener : public RewriterBase::Listener {
  void notifyOperationErased(Operation *op) override { erased.insert(op); }
  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic diag(loc, DiagnosticSeverity::Remark);
    reasonCallback(diag);
    reason = diag.str();
  }
  std::optional<std::string> reason;
  llvm::DenseSet<Operation *> erased;
};

/// Folds every norm op once; the pattern's match failures are the declined
/// candidates, counted and explained with `remarks`.
struct NormFoldMatmulWeightsPass
    : public norm::impl::NormFoldMatmulWeightsPassBase<
          NormFoldMatmulWeightsPass> {
  using NormFoldMatmulWeightsPassBase::NormFoldMatmulWeightsPassBase;
  NormFoldMatmulWeightsPass() = default;
  NormFoldMatmulWeightsPass(const NormFoldMatmulWeightsPass &other)
      : NormFoldMatmulWeightsPassBase(other) {}
  void runOnOperation() override;

  PassStatistic numFolded{this, "folded",
                          "Number of norm ops whose weight/bias were folded"};
  PassStatistic numDeferred{this, "deferred-scale",
                            "Number of rms_norm scales moved after matmuls"};
  PassStatistic numDeclined{this, "declined",
                            "Number of candidates left unchanged"};
};

} // namespace

void mlir::norm::populateNormFoldMatmulWeightsPatterns(
    RewritePatternSet &patterns,
    const NormFoldMatmulWeightsPassOptions &options) {
  patterns.add<FoldNormWeightsIntoMatmuls>(patterns.getContext(), options);
}

void NormFoldMatmulWeightsPass::runOnOperation() {
  if (maxRhsElements < 1) {
    getOperation()->emitError("norm-fold-matmul-weights: option "
                              "'max-rhs-elements' must be positive, got ")
        << int64_t(maxRhsElements);
    return signalPassFailure();
  }
  Options options;
  options.maxRhsElements = maxRhsElements;
  options.deferScale = deferScale;
  options.remarks = remarks;
  RewritePatternSet set(&getContext());
  populateNormFoldMatmulWeightsPatterns(set, options);
  FrozenRewritePatternSet patterns(std::move(set));

  // Each norm op is visited once: declined ones are not retried.
  SmallVector<Operation *> ops;
  getOperation()->walk([&](NormOpInterface op) { ops.push_back(op); });
  DeclineListener listener;
  applyPatternsOnce(
      ops, patterns, &listener, [&](Operation *op, bool rewritten) {
        if (rewritten) {
          ++numFolded;
          numDeferred += listener.erased.contains(op);
        } else if (listener.reason) {
          ++numDeclined;
          if (remarks)
            op->emitRemark("not folded into matmuls: ") << *listener.reason;
        }
        listener.reason.reset();
        listener.erased.clear();
      });
}
