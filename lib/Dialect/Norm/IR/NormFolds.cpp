//===- NormFolds.cpp - Norm op folders and canonicalizers -------*- C++ -*-===//
//
// Canonicalization patterns (dropping identity weights and biases, folding a
// constant weight offset, dropping a default compute type) and constant
// folding of norm ops on small constant inputs; norm.quantize's folding is
// in QuantizeFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/ConstantValues.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

using namespace mlir;
using namespace mlir::norm;

/// Largest weight or bias constant the canonicalization patterns read.
static constexpr int64_t kMaxParameterElements = 1 << 20;

/// Rounds `value` to the float format `semantics` (round to nearest even).
static double roundTo(double value, const llvm::fltSemantics &semantics) {
  APFloat result(value);
  bool losesInfo = false;
  result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return result.convertToDouble();
}

static const llvm::fltSemantics &getSemantics(Type type) {
  return cast<FloatType>(type).getFloatSemantics();
}

/// Effective weight `w + weight_offset` computed in the compute type
/// (`float` or `double`), as the op semantics define it.
template <typename ComputeT>
static ComputeT effectiveWeight(double weight, double offset) {
  return static_cast<ComputeT>(weight) + static_cast<ComputeT>(offset);
}

//===----------------------------------------------------------------------===//
// Canonicalization patterns
//===----------------------------------------------------------------------===//

namespace {

/// Returns true when every element of `weight` plus `offset`, computed in
/// `computeType`, is exactly 1.
static bool isIdentityWeight(const FloatConstant &weight, double offset,
                             Type computeType) {
  for (double w : weight.getValuesAsDoubles()) {
    double effective = computeType.isF64() ? effectiveWeight<double>(w, offset)
                                           : effectiveWeight<float>(w, offset);
    if (effective != 1.0)
      return false;
  }
  return true;
}

/// Returns true when removing a weight or bias would not change the type
/// `cast_mode = before_weight` does its arithmetic in.
template <typename OpTy>
static bool keepsBeforeWeightType(OpTy op, Type typeAfter) {
  NormOpInterface iface = cast<NormOpInterface>(op.getOperation());
  if (iface.getCastMode() != CastMode::before_weight)
    return true;
  return getBeforeWeightArithmeticType(iface) == typeAfter;
}

/// Drops a constant weight that is all ones once `weight_offset` is added:
/// multiplying by exactly 1 is the identity, also for inf and nan.
template <typename OpTy>
struct DropIdentityWeight : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    NormOpInterface iface = cast<NormOpInterface>(op.getOperation());
    std::optional<FloatConstant> weight =
        readFloatConstant(iface.getWeight(), kMaxParameterElements);
    if (!weight)
      return rewriter.notifyMatchFailure(op, "weight is not a constant");
    double offset = iface.getWeightOffset().convertToDouble();
    if (!isIdentityWeight(*weight, offset, iface.getComputeElementType()))
      return rewriter.notifyMatchFailure(op, "weight is not all ones");
    Type typeAfter = getInputElementType(iface);
    if (Value bias = iface.getBias()) {
      Type biasType = getElementTypeOrSelf(bias.getType());
      if (biasType.getIntOrFloatBitWidth() > typeAfter.getIntOrFloatBitWidth())
        typeAfter = biasType;
    }
    if (!keepsBeforeWeightType(op, typeAfter))
      return rewriter.notifyMatchFailure(
          op, "dropping the weight changes the before_weight arithmetic type");
    rewriter.modifyOpInPlace(op, [&] {
      op.getWeightMutable().clear();
      if constexpr (std::is_same_v<OpTy, RMSNormOp>)
        op.setWeightOffsetAttr(rewriter.getF32FloatAttr(0.0f));
    });
    return success();
  }
};

/// Drops a constant bias that is all zeros (+0 or -0): adding zero is the
/// identity up to the sign of a zero result, also for inf and nan.
template <typename OpTy>
struct DropZeroBias : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    NormOpInterface iface = cast<NormOpInterface>(op.getOperation());
    std::optional<FloatConstant> bias =
        readFloatConstant(iface.getBias(), kMaxParameterElements);
    if (!bias)
      return rewriter.notifyMatchFailure(op, "bias is not a constant");
    if (!llvm::all_of(bias->values,
                      [](const APFloat &value) { return value.isZero(); }))
      return rewriter.notifyMatchFailure(op, "bias is not all zeros");
    Type typeAfter = getInputElementType(iface);
    if (Value weight = iface.getWeight()) {
      Type weightType = getElementTypeOrSelf(weight.getType());
      if (weightType.getIntOrFloatBitWidth() >
          typeAfter.getIntOrFloatBitWidth())
        typeAfter = weightType;
    }
    if (!keepsBeforeWeightType(op, typeAfter))
      return rewriter.notifyMatchFailure(
          op, "dropping the bias changes the before_weight arithmetic type");
    rewriter.modifyOpInPlace(op, [&] { op.getBiasMutable().clear(); });
    return success();
  }
};

/// Folds a non-zero `weight_offset` into a constant weight when every sum,
/// computed in the compute type as the op does, is exactly representable in
/// the weight's element type.
struct FoldWeightOffsetIntoWeight : public OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RMSNormOp op,
                                PatternRewriter &rewriter) const override {
    APFloat offsetValue = op.getWeightOffset();
    if (offsetValue.isZero())
      return rewriter.notifyMatchFailure(op, "no weight offset");
    std::optional<FloatConstant> weight =
        readFloatConstant(op.getWeight(), kMaxParameterElements);
    if (!weight)
      return rewriter.notifyMatchFailure(op, "weight is not a constant");
    double offset = offsetValue.convertToDouble();
    bool computeInF64 = cast<NormOpInterface>(op.getOperation())
                            .getComputeElementType()
                            .isF64();
    Type weightElementType = weight->type.getElementType();
    const llvm::fltSemantics &semantics = getSemantics(weightElementType);
    SmallVector<APFloat> folded;
    folded.reserve(weight->values.size());
    for (double w : weight->getValuesAsDoubles()) {
      double sum = computeInF64 ? effectiveWeight<double>(w, offset)
                                : effectiveWeight<float>(w, offset);
      if (roundTo(sum, semantics) != sum)
        return rewriter.notifyMatchFailure(
            op, "weight + weight_offset is not exact in the weight type");
      APFloat element(sum);
      bool losesInfo = false;
      element.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      folded.push_back(element);
    }
    auto newWeight = DenseFPElementsAttr::get(weight->type, folded);
    Value constant = arith::ConstantOp::create(rewriter, op.getLoc(),
                                               weight->type, newWeight);
    rewriter.modifyOpInPlace(op, [&] {
      op.getWeightMutable().assign(constant);
      op.setWeightOffsetAttr(rewriter.getF32FloatAttr(0.0f));
    });
    return success();
  }
};

/// Removes a `compute_type` equal to the default one, so that equal ops print
/// and compare equal.
template <typename OpTy>
struct DropDefaultComputeType : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    TypeAttr computeType = op.getComputeTypeAttr();
    if (!computeType)
      return rewriter.notifyMatchFailure(op, "no explicit compute type");
    Type elementType = cast<ShapedType>(op.getX().getType()).getElementType();
    Type defaultType =
        elementType.isF64() ? elementType : Float32Type::get(op.getContext());
    if (computeType.getValue() != defaultType)
      return rewriter.notifyMatchFailure(op, "compute type is not the default");
    rewriter.modifyOpInPlace(op, [&] { op.removeComputeTypeAttr(); });
    return success();
  }
};

/// Drops `return_stats` when no statistic is used: the op without them.
template <typename OpTy>
struct DropUnusedStats : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto norm = cast<NormOpInterface>(op.getOperation());
    if (!op.getReturnStats() || norm.hasUsedStats())
      return rewriter.notifyMatchFailure(op, "no unused statistics");
    unsigned numOutputs = op.getNumOutputs();
    typename OpTy::Properties properties = op.getProperties();
    properties.return_stats = nullptr;
    auto newOp = OpTy::create(
        rewriter, op.getLoc(),
        TypeRange(op->getResults().take_front(numOutputs).getTypes()),
        op->getOperands(), properties,
        llvm::to_vector(op->getDiscardableAttrs()));
    SmallVector<Value> replacements(newOp->getResults());
    replacements.append(op->getNumResults() - numOutputs, Value());
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

} // namespace

void LayerNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results
      .add<DropIdentityWeight<LayerNormOp>, DropZeroBias<LayerNormOp>,
           DropDefaultComputeType<LayerNormOp>, DropUnusedStats<LayerNormOp>>(
          context);
}

void RMSNormOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<DropIdentityWeight<RMSNormOp>, FoldWeightOffsetIntoWeight,
              DropDefaultComputeType<RMSNormOp>, DropUnusedStats<RMSNormOp>>(
      context);
}

void DyTOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<DropIdentityWeight<DyTOp>, DropZeroBias<DyTOp>,
              DropDefaultComputeType<DyTOp>>(context);
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

namespace {

/// Evaluates a norm op on constant inputs with the op's own roundings: the
/// residual sum in the input type, statistics and normalization in the
/// compute type `ComputeT`, and the `before_weight` or final cast.
template <typename ComputeT>
struct ConstantEvaluator {
  NormOpInterface op;
  SmallVector<double> x, weight, bias;
  double alpha = 0;
  int64_t rows = 0, rowSize = 0;
  /// The statistics of each row, as `return_stats` returns them.
  SmallVector<double> means, rstds;

  ComputeT normalizedValue(ArrayRef<double> row, int64_t j, double mean,
                           ComputeT scale) {
    if (!op.hasReduction())
      return std::tanh(static_cast<ComputeT>(alpha) *
                       static_cast<ComputeT>(row[j]));
    return static_cast<ComputeT>(row[j] - mean) * scale;
  }

  /// Computes the row statistics: the mean (0 for rms_norm, in f64) and the
  /// factor the centered value is multiplied by (in the compute type).
  std::pair<double, ComputeT> statistics(ArrayRef<double> row) {
    if (!op.hasReduction())
      return {0, 1};
    // Row statistics in f64, as the lowerings carry row sums
    // (RowView::getRowSumType): a centered second pass after the mean, so
    // that rows with a large common offset fold as accurately as they run.
    double n = static_cast<double>(rowSize);
    ComputeT eps = static_cast<ComputeT>(op.getEpsilon().convertToDouble());
    if (op.subtractsMean()) {
      double sum = 0;
      for (double v : row)
        sum += v;
      double mean = sum / n;
      double squares = 0;
      for (double v : row)
        squares += (v - mean) * (v - mean);
      ComputeT variance = static_cast<ComputeT>(squares / n);
      ComputeT rstd = ComputeT(1) / std::sqrt(variance + eps);
      // A row with a NaN or an infinity has a NaN variance, and its mean is
      // NaN too, as the lowerings give it (docs/Numerics.md#edge-cases):
      // sum(x) / N would be an infinity for a row with one.
      if (std::isnan(rstd))
        mean = rstd;
      return {mean, rstd};
    }
    double squares = 0;
    for (double v : row)
      squares += v * v;
    ComputeT ms = static_cast<ComputeT>(squares / n);
    switch (op.getEpsilonMode()) {
    case EpsilonMode::inside_sqrt:
      return {0, ComputeT(1) / std::sqrt(ms + eps)};
    case EpsilonMode::outside_sqrt:
      return {0, ComputeT(1) / (std::sqrt(ms) + eps)};
    case EpsilonMode::clamp: {
      // max propagating NaN, as arith.maximumf in the lowerings (std::fmax
      // would return eps for a NaN row).
      ComputeT root = std::sqrt(ms);
      return {0, ComputeT(1) / (std::isnan(root) ? root : std::max(root, eps))};
    }
    }
    llvm_unreachable("unknown epsilon mode");
  }

  SmallVector<APFloat> run() {
    const llvm::fltSemantics &inputSemantics =
        getSemantics(getInputElementType(op));
    const llvm::fltSemantics &wideSemantics =
        getSemantics(getBeforeWeightArithmeticType(op));
    bool castBeforeWeight = op.getCastMode() == CastMode::before_weight;
    double offset = op.getWeightOffset().convertToDouble();
    SmallVector<APFloat> result;
    result.reserve(x.size());
    for (int64_t i = 0; i < rows; ++i) {
      ArrayRef<double> row(x.data() + i * rowSize, rowSize);
      auto [mean, scale] = statistics(row);
      means.push_back(mean);
      rstds.push_back(scale);
      for (int64_t j = 0; j < rowSize; ++j) {
        ComputeT n = normalizedValue(row, j, mean, scale);
        ComputeT w = 1, b = 0;
        if (!weight.empty())
          w = effectiveWeight<ComputeT>(weight[weight.size() == 1 ? 0 : j],
                                        offset);
        if (!bias.empty())
          b = static_cast<ComputeT>(bias[j]);
        double y;
        if (castBeforeWeight) {
          double rounded = roundTo(n, inputSemantics);
          double product = roundTo(rounded * w, wideSemantics);
          y = roundTo(product + b, wideSemantics);
        } else {
          y = n * w + b;
        }
        APFloat element(y);
        bool losesInfo = false;
        element.convert(inputSemantics, APFloat::rmNearestTiesToEven,
                        &losesInfo);
        result.push_back(element);
      }
    }
    return result;
  }
};

} // namespace

/// Constant-folds `op` when `x` and every other operand are small dense
/// float constants.
static LogicalResult foldNormOp(NormOpInterface op,
                                SmallVectorImpl<OpFoldResult> &results) {
  std::optional<FloatConstant> x =
      readFloatConstant(op.getX(), kMaxFoldedElements);
  if (!x)
    return failure();
  auto constantOrAbsent = [](Value value,
                             std::optional<FloatConstant> &constant) {
    if (!value)
      return true;
    constant = readFloatConstant(value, kMaxFoldedElements);
    return constant.has_value();
  };
  std::optional<FloatConstant> weight, bias, alpha, residual;
  if (!constantOrAbsent(op.getWeight(), weight) ||
      !constantOrAbsent(op.getBias(), bias) ||
      !constantOrAbsent(op.getAlpha(), alpha) ||
      !constantOrAbsent(op.getResidual(), residual))
    return failure();

  RankedTensorType xType = x->type;
  const llvm::fltSemantics &inputSemantics =
      getSemantics(xType.getElementType());

  // s = x + residual, rounded to the input type.
  SmallVector<APFloat> sum(x->values);
  if (residual) {
    for (auto [s, r] : llvm::zip_equal(sum, residual->values)) {
      APFloat addend = r;
      bool losesInfo = false;
      addend.convert(inputSemantics, APFloat::rmNearestTiesToEven, &losesInfo);
      s.add(addend, APFloat::rmNearestTiesToEven);
    }
  }
  SmallVector<double> inputs;
  inputs.reserve(sum.size());
  for (const APFloat &value : sum)
    inputs.push_back(getAsDouble(value));

  // Rows of N = 0 elements still have statistics (NaN, 0 / 0).
  int64_t rowSize = 1, rows = 1;
  for (auto [d, dim] : llvm::enumerate(xType.getShape()))
    (int64_t(d) < op.getNormalizedDim() ? rows : rowSize) *= dim;

  SmallVector<double> means, rstds;
  auto evaluate = [&](auto evaluator) {
    evaluator.op = op;
    evaluator.x = inputs;
    if (weight)
      evaluator.weight = weight->getValuesAsDoubles();
    if (bias)
      evaluator.bias = bias->getValuesAsDoubles();
    if (alpha)
      evaluator.alpha = alpha->getValuesAsDoubles().front();
    evaluator.rows = rows;
    evaluator.rowSize = rowSize;
    SmallVector<APFloat> y = evaluator.run();
    means = std::move(evaluator.means);
    rstds = std::move(evaluator.rstds);
    return y;
  };
  SmallVector<APFloat> y = op.getComputeElementType().isF64()
                               ? evaluate(ConstantEvaluator<double>())
                               : evaluate(ConstantEvaluator<float>());
  results.push_back(DenseFPElementsAttr::get(xType, y));
  if (residual)
    results.push_back(DenseFPElementsAttr::get(xType, sum));
  // The statistics, rounded to the compute type.
  RankedTensorType statsType = op.getStatsType();
  auto statsAttr = [&](ArrayRef<double> values) {
    SmallVector<APFloat> elements;
    for (double value : values) {
      APFloat element(value);
      bool losesInfo = false;
      element.convert(getSemantics(statsType.getElementType()),
                      APFloat::rmNearestTiesToEven, &losesInfo);
      elements.push_back(element);
    }
    return DenseFPElementsAttr::get(statsType, elements);
  };
  if (op.getMean())
    results.push_back(statsAttr(means));
  if (op.getRstd())
    results.push_back(statsAttr(rstds));
  return success();
}

LogicalResult LayerNormOp::fold(FoldAdaptor adaptor,
                                SmallVectorImpl<OpFoldResult> &results) {
  return foldNormOp(*this, results);
}

LogicalResult RMSNormOp::fold(FoldAdaptor adaptor,
                              SmallVectorImpl<OpFoldResult> &results) {
  return foldNormOp(*this, results);
}

LogicalResult DyTOp::fold(FoldAdaptor adaptor,
                          SmallVectorImpl<OpFoldResult> &results) {
  return foldNormOp(*this, results);
}
