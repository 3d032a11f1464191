//===- FoldMatmulWeights.cpp - Fold norm weights into matmuls ---*- C++ -*-===//
//
// norm-fold-matmul-weights: FlashNorm-style folding of a norm op's weight
// (and weight_offset) into the rows of the constant RHS of its matmul
// consumers, of its bias into a row vector added after them, and, with
// defer-scale, of rms_norm's per-row scale into an epilogue.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFOLDMATMULWEIGHTSPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

namespace {

/// A matmul consuming the norm result, with its constant RHS.
struct MatmulUse {
  linalg::LinalgOp matmul;
  /// The LHS value of the matmul (the norm result or its collapse).
  Value lhs;
  /// The constant the RHS is made of, in its own layout.
  DenseFPElementsAttr constant;
  /// The transpose turning `constant` ([N, K]) into the RHS, or null.
  linalg::TransposeOp transpose;
  /// True when `constant` is laid out [N, K] (transpose op or transposed
  /// indexing maps), false for [K, N] (or [B, K, N]).
  bool nMajor = false;
};

/// Outcome of the analysis: the uses, or why the candidate is declined.
struct Analysis {
  SmallVector<MatmulUse> uses;
  std::string reason;
};

/// True for linalg.matmul with the maps of a matmul with transposed B.
static bool hasTransposedBMaps(linalg::MatmulOp matmul) {
  if (!matmul.hasUserDefinedMaps())
    return false;
  MLIRContext *ctx = matmul.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> expected = {AffineMap::get(3, 0, {m, k}, ctx),
                                     AffineMap::get(3, 0, {n, k}, ctx),
                                     AffineMap::get(3, 0, {m, n}, ctx)};
  return matmul.getIndexingMapsArray() == expected;
}

/// Fills `use` from a matmul consuming `lhs` as its first input.
static LogicalResult analyzeMatmul(Operation *user, Value lhs, int64_t limit,
                                   MatmulUse &use, std::string &reason) {
  use.lhs = lhs;
  Value rhs;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(user)) {
    if (matmul.hasUserDefinedMaps() && !hasTransposedBMaps(matmul)) {
      reason = "matmul with unsupported indexing maps";
      return failure();
    }
    use.nMajor = hasTransposedBMaps(matmul);
    rhs = matmul.getDpsInputs()[1];
  } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(user)) {
    if (batch.hasUserDefinedMaps()) {
      reason = "batch_matmul with user-defined indexing maps";
      return failure();
    }
    rhs = batch.getDpsInputs()[1];
  } else {
    reason = "a user is not a matmul";
    return failure();
  }
  use.matmul = cast<linalg::LinalgOp>(user);
  if (use.matmul.getDpsInputs()[0] != lhs ||
      use.matmul.getDpsInputs()[1] == lhs) {
    reason = "the normalized value is not only the matmul's left operand";
    return failure();
  }
  if (auto transpose = rhs.getDefiningOp<linalg::TransposeOp>()) {
    if (!isa<linalg::MatmulOp>(user) || use.nMajor ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0}) {
      reason = "unsupported transpose feeding the matmul";
      return failure();
    }
    use.transpose = transpose;
    use.nMajor = true;
    rhs = transpose.getInput();
  }
  if (!matchPattern(rhs, m_Constant(&use.constant))) {
    reason = "the matmul's right-hand side is not a constant";
    return failure();
  }
  if (use.constant.getNumElements() > limit) {
    reason = "the constant right-hand side exceeds max-rhs-elements";
    return failure();
  }
  return success();
}

/// Finds the matmul uses of `op`'s result, or why there are none usable.
static Analysis analyze(NormOpInterface op, int64_t limit) {
  Analysis analysis;
  Value y = op.getY();
  RankedTensorType type = op.getInputType();
  if (op.getNumNormalizedDims() != 1 || type.getRank() < 2 ||
      type.getRank() > 3) {
    analysis.reason = "only rank-2/3 inputs normalized over the last dim";
    return analysis;
  }
  if (y.use_empty()) {
    analysis.reason = "the result has no users";
    return analysis;
  }
  for (Operation *user : y.getUsers()) {
    // batch_matmul on 3-D results, matmul on 2-D results or on a collapse of
    // a 3-D result to rows.
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user)) {
      if (collapse.getResultType().getRank() != 2 ||
          collapse.getReassociationIndices().back().size() != 1) {
        analysis.reason = "unsupported collapse of the result";
        return analysis;
      }
      for (Operation *collapseUser : collapse->getUsers()) {
        MatmulUse use;
        if (!isa<linalg::MatmulOp>(collapseUser) ||
            failed(analyzeMatmul(collapseUser, collapse, limit, use,
                                 analysis.reason))) {
          if (analysis.reason.empty())
            analysis.reason = "a user of the collapsed result is not a matmul";
          analysis.uses.clear();
          return analysis;
        }
        analysis.uses.push_back(use);
      }
      continue;
    }
    MatmulUse use;
    if (failed(analyzeMatmul(user, y, limit, use, analysis.reason))) {
      analysis.uses.clear();
      return analysis;
    }
    if (isa<linalg::BatchMatmulOp>(user) != (type.getRank() == 3)) {
      analysis.reason = "matmul rank does not match the normalized value";
      analysis.uses.clear();
      return analysis;
    }
    analysis.uses.push_back(use);
  }
  return analysis;
}

/// Reads the constant float elements of an optional operand (empty when
/// absent); fails when present but not a constant.
static LogicalResult readConstant(Value value, SmallVector<double> &values) {
  values.clear();
  if (!value)
    return success();
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return failure();
  for (const APFloat &v : attr.getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return success();
}

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

/// Rewrites one norm op and its matmul consumers.
struct FoldNormWeightsIntoMatmuls
    : public OpInterfaceRewritePattern<NormOpInterface> {
  FoldNormWeightsIntoMatmuls(
      MLIRContext *ctx, FoldMatmulWeightsOptions options,
      std::function<void(Operation *, StringRef)> decline,
      std::function<void(bool)> done)
      : OpInterfaceRewritePattern(ctx), options(options),
        decline(std::move(decline)), done(std::move(done)) {}

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    auto fail = [&](StringRef reason) {
      if (decline)
        decline(op, reason);
      return rewriter.notifyMatchFailure(op, reason);
    };
    bool defer = options.deferScale && isa<RMSNormOp>(op) &&
                 !op.getResidual() && op.getCastMode() == CastMode::final;
    if (!op.getWeight() && !op.getBias() && !defer)
      return failure(); // nothing to fold: not a candidate
    SmallVector<double> weight, bias;
    if (failed(readConstant(op.getWeight(), weight)) ||
        failed(readConstant(op.getBias(), bias)))
      return fail("weight or bias is not a constant");
    Analysis analysis = analyze(op, options.maxRhsElements);
    if (analysis.uses.empty())
      return fail(analysis.reason);
    int64_t k = op.getInputType().getShape().back();
    if (ShapedType::isDynamic(k))
      return fail("the normalized dim is not static");
    // A scalar weight (tensor<T>) scales every row of the RHS alike.
    if (weight.size() == 1 && op.getWeight() &&
        cast<ShapedType>(op.getWeight().getType()).getRank() == 0)
      weight.resize(k, weight[0]);
    if (!weight.empty() && int64_t(weight.size()) != k)
      return fail("the normalized dim is not static");
    double offset = op.getWeightOffset().convertToDouble();

    Location loc = op.getLoc();
    Value rowScale;
    if (defer) {
      rewriter.setInsertionPoint(op);
      rowScale = buildRowScale(rewriter, loc, op);
    }
    for (MatmulUse &use : analysis.uses) {
      // Fold w' into the RHS rows: W'[k, n] = w'[k] * W[k, n].
      auto constType = cast<RankedTensorType>(use.constant.getType());
      ArrayRef<int64_t> shape = constType.getShape();
      int64_t n = use.nMajor ? shape[0] : shape[shape.size() - 1];
      const llvm::fltSemantics &semantics =
          cast<FloatType>(constType.getElementType()).getFloatSemantics();
      SmallVector<APFloat> folded;
      folded.reserve(use.constant.getNumElements());
      SmallVector<double> rowVector(
          bias.empty() ? 0 : use.constant.getNumElements() / k, 0.0);
      int64_t index = 0;
      for (const APFloat &value : use.constant.getValues<APFloat>()) {
        int64_t inner = index % (n * k);
        int64_t kk = use.nMajor ? inner % k : inner / n;
        int64_t nn = use.nMajor ? inner / k : inner % n;
        int64_t batch = index / (n * k);
        double w = value.convertToDouble();
        if (!bias.empty())
          rowVector[batch * n + nn] += bias[kk] * w;
        double scale = weight.empty() ? 1.0 : weight[kk] + offset;
        APFloat result(w * scale);
        bool losesInfo = false;
        result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
        folded.push_back(result);
        ++index;
      }
      rewriter.setInsertionPoint(use.transpose ? use.transpose.getOperation()
                                               : use.matmul.getOperation());
      Value newConstant = arith::ConstantOp::create(
          rewriter, loc, constType,
          DenseFPElementsAttr::get(constType, folded));
      Value newRhs = newConstant;
      if (use.transpose) {
        newRhs = linalg::TransposeOp::create(rewriter, loc, newConstant,
                                             use.transpose.getInit(),
                                             use.transpose.getPermutation())
                     .getResult()[0];
      }
      rewriter.modifyOpInPlace(
          use.matmul, [&] { use.matmul.getDpsInputOperand(1)->set(newRhs); });

      // Epilogues after the product: the deferred row scale, then the bias.
      rewriter.setInsertionPointAfter(use.matmul);
      Value result = use.matmul->getResult(0);
      // Only the uses that exist now move to the epilogue (not the
      // epilogue's own uses of the product).
      SmallVector<OpOperand *> resultUses = llvm::map_to_vector(
          result.getUses(), [](OpOperand &use) { return &use; });
      Value replacement = result;
      if (rowScale) {
        Value scale = rowScale;
        if (use.lhs != op.getY()) // collapsed [B, S, K] -> [B*S, K]
          scale = tensor::CollapseShapeOp::create(
              rewriter, loc, scale, ArrayRef<ReassociationIndices>{{0, 1}});
        replacement = scaleRows(rewriter, loc, replacement, scale);
      }
      if (!bias.empty()) {
        auto resultType = cast<RankedTensorType>(result.getType());
        SmallVector<int64_t> vectorShape;
        if (resultType.getRank() == 3)
          vectorShape.push_back(rowVector.size() / n);
        vectorShape.push_back(n);
        auto vectorType =
            RankedTensorType::get(vectorShape, resultType.getElementType());
        SmallVector<APFloat> values;
        for (double v : rowVector) {
          APFloat value(v);
          bool losesInfo = false;
          value.convert(
              cast<FloatType>(resultType.getElementType()).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &losesInfo);
          values.push_back(value);
        }
        Value vector = arith::ConstantOp::create(
            rewriter, loc, vectorType,
            DenseFPElementsAttr::get(vectorType, values));
        replacement = addRowVector(rewriter, loc, replacement, vector);
      }
      if (replacement != result)
        for (OpOperand *resultUse : resultUses)
          rewriter.modifyOpInPlace(resultUse->getOwner(),
                                   [&] { resultUse->set(replacement); });
      if (rowScale) {
        // The matmul reads raw x (or its collapse).
        Value rawLhs = op.getX();
        if (auto collapse = use.lhs.getDefiningOp<tensor::CollapseShapeOp>()) {
          rewriter.setInsertionPoint(use.matmul);
          rawLhs = tensor::CollapseShapeOp::create(
              rewriter, loc, op.getX(), collapse.getReassociationIndices());
        }
        rewriter.modifyOpInPlace(
            use.matmul, [&] { use.matmul.getDpsInputOperand(0)->set(rawLhs); });
      }
    }

    // The norm op loses its weight and bias (or goes away when deferred).
    if (defer) {
      for (MatmulUse &use : analysis.uses)
        if (auto collapse = use.lhs.getDefiningOp<tensor::CollapseShapeOp>())
          if (collapse->use_empty())
            rewriter.eraseOp(collapse);
      if (op.getY().use_empty())
        rewriter.eraseOp(op);
    } else {
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
    if (done)
      done(defer);
    return success();
  }

  FoldMatmulWeightsOptions options;
  std::function<void(Operation *, StringRef)> decline;
  std::function<void(bool)> done;
};

struct NormFoldMatmulWeightsPass
    : public norm::impl::NormFoldMatmulWeightsPassBase<
          NormFoldMatmulWeightsPass> {
  using NormFoldMatmulWeightsPassBase::NormFoldMatmulWeightsPassBase;

  void runOnOperation() override {
    if (maxRhsElements < 1) {
      getOperation()->emitError("norm-fold-matmul-weights: option "
                                "'max-rhs-elements' must be positive, got ")
          << int64_t(maxRhsElements);
      return signalPassFailure();
    }
    FoldMatmulWeightsOptions options;
    options.maxRhsElements = maxRhsElements;
    options.deferScale = deferScale;
    // Each norm op is visited once: declined ones are not retried.
    SmallVector<NormOpInterface> ops;
    getOperation()->walk([&](NormOpInterface op) { ops.push_back(op); });
    FoldNormWeightsIntoMatmuls pattern(
        &getContext(), options,
        [&](Operation *op, StringRef reason) {
          ++numDeclined;
          if (remarks)
            op->emitRemark("not folded into matmuls: ") << reason;
        },
        [&](bool deferred) {
          ++numFolded;
          if (deferred)
            ++numDeferred;
        });
    PatternRewriter rewriter(&getContext());
    for (NormOpInterface op : ops)
      (void)pattern.matchAndRewrite(op, rewriter);
  }
};

} // namespace

void mlir::norm::populateNormFoldMatmulWeightsPatterns(
    RewritePatternSet &patterns, const FoldMatmulWeightsOptions &options) {
  patterns.add<FoldNormWeightsIntoMatmuls>(patterns.getContext(), options,
                                           nullptr, nullptr);
}
