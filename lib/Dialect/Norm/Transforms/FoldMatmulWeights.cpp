//===- FoldMatmulWeights.cpp - Fold norm weights into matmuls ---*- C++ -*-===//
//
// norm-fold-matmul-weights: FlashNorm-style folding of a norm op's weight
// (and weight_offset) into the rows of the constant RHS of its matmul
// consumers, of its bias into a row vector added after them, and, with
// defer-scale, of rms_norm's per-row scale into an epilogue.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/PatternDriver.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "norm/Dialect/Norm/IR/ConstantValues.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFOLDMATMULWEIGHTSPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

using Options = NormFoldMatmulWeightsPassOptions;

namespace {

/// A matmul consuming the norm result, with its constant RHS.
struct MatmulUse {
  linalg::LinalgOp matmul;
  /// The LHS value of the matmul (the norm result or its collapse).
  Value lhs;
  /// The constant the RHS is made of, in its own layout: a dense elements
  /// attribute or a dense_resource blob (torch-mlir's exported weights).
  ElementsAttr constant;
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
  if (!matchPattern(rhs, m_Constant(&use.constant)) ||
      !isa<DenseFPElementsAttr, DenseResourceElementsAttr>(use.constant) ||
      !isa<FloatType>(use.constant.getElementType())) {
    reason = "the matmul's right-hand side is not a constant";
    return failure();
  }
  // A dense_resource blob may be missing, or carry a dynamically shaped
  // type (the verifier accepts both).
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(use.constant);
      (resource && !resource.getRawHandle().getBlob()) ||
      !cast<ShapedType>(use.constant.getType()).hasStaticShape()) {
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
  std::optional<FloatConstant> constant = readFloatConstant(value);
  if (!constant)
    return failure();
  values = constant->getValuesAsDoubles();
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

//===----------------------------------------------------------------------===//
// Analysis: what one norm op folds into, read before the IR changes
//===----------------------------------------------------------------------===//

/// A norm op whose weight and bias fold into its matmul consumers.
struct FoldPlan {
  /// Also move rms_norm's per-row scale after the matmuls.
  bool defer = false;
  /// The weight and bias per element of the normalized dim (empty when
  /// absent; a scalar weight is repeated) and the weight offset.
  SmallVector<double> weight, bias;
  double offset = 0.0;
  /// Size of the normalized dim: the K of every matmul.
  int64_t k = 0;
  SmallVector<MatmulUse> uses;
};

/// True when the scale of `op` moves after the matmuls (defer-scale applies
/// to rms_norm without residual whose result is rounded once, at the end).
static bool canDeferScale(NormOpInterface op, const Options &options) {
  return options.deferScale && isa<RMSNormOp>(op) && !op.getResidual() &&
         op.getCastMode() == CastMode::final;
}

/// Reads the constant parameters of `op` and finds its matmul uses; fails
/// with the reason the candidate is declined.
static FailureOr<FoldPlan> planFold(NormOpInterface op, const Options &options,
                                    std::string &reason) {
  FoldPlan plan;
  plan.defer = canDeferScale(op, options);
  if (failed(readConstant(op.getWeight(), plan.weight)) ||
      failed(readConstant(op.getBias(), plan.bias))) {
    reason = "weight or bias is not a constant";
    return failure();
  }
  Analysis analysis = analyze(op, options.maxRhsElements);
  if (analysis.uses.empty()) {
    reason = analysis.reason;
    return failure();
  }
  plan.uses = std::move(analysis.uses);
  plan.k = op.getInputType().getShape().back();
  if (ShapedType::isDynamic(plan.k)) {
    reason = "the normalized dim is not static";
    return failure();
  }
  // A scalar weight (tensor<T> or tensor<1xT>, RowView's rule) scales every
  // row of the RHS alike.
  if (plan.weight.size() == 1 && op.getWeight() &&
      RowView::getParameterAccess(op.getWeight()) == ParameterAccess::Scalar)
    plan.weight.resize(plan.k, plan.weight[0]);
  if (!plan.weight.empty() && int64_t(plan.weight.size()) != plan.k) {
    reason = "the normalized dim is not static";
    return failure();
  }
  plan.offset = op.getWeightOffset().convertToDouble();
  return plan;
}

//===----------------------------------------------------------------------===//
// Rewrite steps
//===----------------------------------------------------------------------===//

/// `value` as a double, also when the host flushes subnormal inputs.
static double toDouble(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if ((bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0)
    return APFloat(value).convertToDouble();
  return value;
}

/// `value` rounded to nearest even in `semantics`.
static APFloat roundTo(double value, const llvm::fltSemantics &semantics) {
  APFloat result(value);
  bool losesInfo = false;
  result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

/// The RHS of `use` with the weight folded into its rows,
/// `W'[k, n] = (w[k] + offset) * W[k, n]`, rounded to its element type; adds
/// `bias @ W` to `rowVector` (one entry per column, per batch).
static DenseFPElementsAttr buildFoldedRhs(const MatmulUse &use,
                                          const FoldPlan &plan,
                                          SmallVectorImpl<double> &rowVector) {
  auto constType = cast<RankedTensorType>(use.constant.getType());
  ArrayRef<int64_t> shape = constType.getShape();
  int64_t k = plan.k;
  int64_t n = use.nMajor ? shape[0] : shape[shape.size() - 1];
  int64_t numElements = use.constant.getNumElements();
  rowVector.assign(plan.bias.empty() ? 0 : numElements / k, 0.0);
  // The folded value of element `index` of the constant, `w`, in double.
  auto fold = [&](int64_t index, double w) {
    int64_t inner = index % (n * k);
    int64_t kk = use.nMajor ? inner % k : inner / n;
    int64_t nn = use.nMajor ? inner / k : inner % n;
    int64_t batch = index / (n * k);
    if (!plan.bias.empty())
      rowVector[batch * n + nn] += plan.bias[kk] * w;
    double scale = plan.weight.empty() ? 1.0 : plan.weight[kk] + plan.offset;
    return w * scale;
  };

  // f32 and f64 weights (almost every model) are read and written as host
  // floats: APFloat per element made this pass the slowest of the three.
  // The host's double-to-float conversion rounds a normal, finite result to
  // nearest even, as APFloat does; the other results take APFloat's path,
  // so nothing depends on the host's flush-to-zero mode.
  Type elementType = constType.getElementType();
  // The RHS elements as host floats where the type allows it: a dense
  // attribute's raw data, or an f32/f64 dense_resource blob.
  std::optional<ArrayRef<float>> f32Values;
  std::optional<ArrayRef<double>> f64Values;
  SmallVector<float> f32Storage;
  SmallVector<double> f64Storage;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(use.constant)) {
    if (elementType.isF32()) {
      f32Storage.assign(dense.getValues<float>().begin(),
                        dense.getValues<float>().end());
      f32Values = ArrayRef<float>(f32Storage);
    } else if (elementType.isF64()) {
      f64Storage.assign(dense.getValues<double>().begin(),
                        dense.getValues<double>().end());
      f64Values = ArrayRef<double>(f64Storage);
    }
  } else if (auto f32 = dyn_cast<DenseF32ResourceElementsAttr>(use.constant)) {
    f32Values = f32.tryGetAsArrayRef();
  } else if (auto f64 = dyn_cast<DenseF64ResourceElementsAttr>(use.constant)) {
    f64Values = f64.tryGetAsArrayRef();
  }
  if (elementType.isF32() && f32Values &&
      int64_t(f32Values->size()) == numElements) {
    SmallVector<float> folded;
    folded.reserve(numElements);
    int64_t index = 0;
    for (float value : *f32Values) {
      double product = fold(index++, toDouble(value));
      double magnitude = std::fabs(product);
      if (magnitude >= std::numeric_limits<float>::min() &&
          magnitude <= std::numeric_limits<float>::max())
        folded.push_back(static_cast<float>(product));
      else
        folded.push_back(
            roundTo(product, APFloat::IEEEsingle()).convertToFloat());
    }
    return cast<DenseFPElementsAttr>(
        DenseElementsAttr::get(constType, ArrayRef<float>(folded)));
  }
  if (elementType.isF64() && f64Values &&
      int64_t(f64Values->size()) == numElements) {
    SmallVector<double> folded;
    folded.reserve(numElements);
    int64_t index = 0;
    for (double value : *f64Values)
      folded.push_back(fold(index++, value));
    return cast<DenseFPElementsAttr>(
        DenseElementsAttr::get(constType, ArrayRef<double>(folded)));
  }
  const llvm::fltSemantics &semantics =
      cast<FloatType>(elementType).getFloatSemantics();
  std::optional<FloatConstant> constant = readFloatConstant(use.constant);
  if (!constant)
    return {};
  SmallVector<APFloat> folded;
  folded.reserve(numElements);
  int64_t index = 0;
  for (const APFloat &value : constant->values)
    folded.push_back(roundTo(fold(index++, getAsDouble(value)), semantics));
  return DenseFPElementsAttr::get(constType, folded);
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

/// Rewrites one matmul consumer: the folded RHS, then the epilogues on its
/// product (the deferred row scale `rowScale`, if any, then the bias row),
/// and with a deferred scale the raw input `x` as its LHS.
static void rewriteMatmul(PatternRewriter &rewriter, NormOpInterface op,
                          const FoldPlan &plan, MatmulUse use, Value rowScale) {
  Location loc = op.getLoc();
  SmallVector<double> rowVector;
  DenseFPElementsAttr folded = buildFoldedRhs(use, plan, rowVector);
  rewriter.setInsertionPoint(use.transpose ? use.transpose.getOperation()
                                           : use.matmul.getOperation());
  Value newRhs =
      arith::ConstantOp::create(rewriter, loc, folded.getType(), folded);
  if (use.transpose)
    newRhs = linalg::TransposeOp::create(rewriter, loc, newRhs,
                                         use.transpose.getInit(),
                                         use.transpose.getPermutation())
                 .getResult()[0];
  rewriter.modifyOpInPlace(
      use.matmul, [&] { use.matmul.getDpsInputOperand(1)->set(newRhs); });

  rewriter.setInsertionPointAfter(use.matmul);
  Value result = use.matmul->getResult(0);
  // Only the uses that exist now move to the epilogue (not the epilogue's
  // own uses of the product).
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
  if (!plan.bias.empty()) {
    auto constType = cast<RankedTensorType>(use.constant.getType());
    int64_t n =
        use.nMajor ? constType.getShape()[0] : constType.getShape().back();
    Value row = buildBiasRow(rewriter, loc, rowVector, n,
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
    if (auto collapse = use.lhs.getDefiningOp<tensor::CollapseShapeOp>()) {
      rewriter.setInsertionPoint(use.matmul);
      rawLhs = tensor::CollapseShapeOp::create(
          rewriter, loc, op.getX(), collapse.getReassociationIndices());
    }
    rewriter.modifyOpInPlace(
        use.matmul, [&] { use.matmul.getDpsInputOperand(0)->set(rawLhs); });
  }
}

/// The norm op loses its weight and bias, or goes away when its scale was
/// deferred (the matmuls no longer read it).
static void replaceNormOp(PatternRewriter &rewriter, NormOpInterface op,
                          const FoldPlan &plan) {
  if (plan.defer) {
    for (const MatmulUse &use : plan.uses)
      if (auto collapse = use.lhs.getDefiningOp<tensor::CollapseShapeOp>())
        if (collapse->use_empty())
          rewriter.eraseOp(collapse);
    if (op.getY().use_empty())
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

    Value rowScale;
    if (plan->defer) {
      rewriter.setInsertionPoint(op);
      rowScale = buildRowScale(rewriter, op.getLoc(), op);
    }
    for (MatmulUse use : plan->uses)
      rewriteMatmul(rewriter, op, *plan, use, rowScale);
    replaceNormOp(rewriter, op, *plan);
    return success();
  }

  Options options;
};

/// Keeps the reason of the last declined candidate.
struct DeclineListener : public RewriterBase::Listener {
  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic diag(loc, DiagnosticSeverity::Remark);
    reasonCallback(diag);
    reason = diag.str();
  }
  std::optional<std::string> reason;
};

/// Folds every norm op once; the pattern's match failures are the declined
/// candidates, counted and explained with `remarks`.
struct NormFoldMatmulWeightsPass
    : public norm::impl::NormFoldMatmulWeightsPassBase<
          NormFoldMatmulWeightsPass> {
  using NormFoldMatmulWeightsPassBase::NormFoldMatmulWeightsPassBase;
  void runOnOperation() override;
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
  llvm::DenseSet<Operation *> deferrable;
  getOperation()->walk([&](NormOpInterface op) {
    ops.push_back(op);
    if (canDeferScale(op, options))
      deferrable.insert(op);
  });
  DeclineListener listener;
  applyPatternsOnce(
      ops, patterns, &listener, [&](Operation *op, bool rewritten) {
        if (rewritten) {
          ++numFolded;
          numDeferred += deferrable.contains(op);
        } else if (listener.reason) {
          ++numDeclined;
          if (remarks)
            op->emitRemark("not folded into matmuls: ") << *listener.reason;
        }
        listener.reason.reset();
      });
}
