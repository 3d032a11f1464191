//===- NormFolds.cpp - Norm op folders and canonicalizers -------*- C++ -*-===//
//
// Canonicalization patterns (dropping identity weights and biases, folding a
// constant weight offset, dropping a default compute type) and constant
// folding of norm ops on small constant inputs.
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

/// Largest number of input elements a norm op is constant-folded for.
static constexpr int64_t kMaxFoldedElements = 4096;

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

//===----------------------------------------------------------------------===//
// QuantizeOp folding
//===----------------------------------------------------------------------===//

/// Quantizes one f32 value that is already multiplied by the inverse scale,
/// as the op semantics define it.
static APFloat quantizeToFloat8(float value) {
  const llvm::fltSemantics &semantics = APFloat::Float8E4M3FN();
  if (std::isnan(value))
    return APFloat::getNaN(semantics, std::signbit(value));
  APFloat result(std::clamp(value, -448.0f, 448.0f));
  bool losesInfo = false;
  result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

static int8_t quantizeToInt8(float value) {
  if (std::isnan(value))
    return 0;
  // std::nearbyint rounds to nearest even in the default rounding mode.
  float rounded = std::nearbyint(value);
  return static_cast<int8_t>(std::clamp(rounded, -128.0f, 127.0f));
}

//===----------------------------------------------------------------------===//
// Block-scaled forms (DESIGN 2d), on f32 bits
//===----------------------------------------------------------------------===//

namespace {

/// A float format of at most 8 bits without infinities (f8E4M3FN,
/// f4E2M1FN): `mantissaBits` stored mantissa bits, `minExponent` the
/// exponent of its smallest normal, `maxBits` the f32 bits of its largest
/// value QMAX, `signBit` the sign bit of its codes.
struct SmallFloatFormat {
  unsigned mantissaBits;
  int minExponent;
  uint32_t maxBits;
  uint32_t signBit;
};

constexpr SmallFloatFormat kFloat8E4M3FN{3, -6, 0x43E00000u /*448*/, 0x80};
constexpr SmallFloatFormat kFloat4E2M1FN{1, 0, 0x40C00000u /*6*/, 0x8};

/// The E8M0 code of NaN, and the f8E4M3FN code of NaN.
constexpr uint32_t kFloat8E8M0NaN = 0xFF;
constexpr uint32_t kFloat8E4M3FNNaN = 0x7F;

} // namespace

static uint32_t getBits(float value) { return llvm::bit_cast<uint32_t>(value); }
static float fromBits(uint32_t bits) { return llvm::bit_cast<float>(bits); }

/// The code of the value of `format` nearest to the f32 `v` (not NaN): one
/// rounding of the exact value, ties to the even code, saturating to
/// +-QMAX (infinities too), the sign kept (also on zero).
static uint32_t roundToSmallFloat(float v, const SmallFloatFormat &format) {
  uint32_t bits = getBits(v);
  uint32_t magnitude = std::min(bits & 0x7FFFFFFFu, format.maxBits);
  uint32_t sign = (bits >> 31) ? format.signBit : 0;
  // |v| = mantissa * 2^exponent exactly, with e = floor(log2 |v|) for
  // normal f32 values (f32 subnormals are far below every quantum here).
  int biased = static_cast<int>(magnitude >> 23);
  uint32_t mantissa = magnitude & 0x7FFFFF;
  int exponent = -149, e = -127;
  if (biased != 0) {
    mantissa |= 0x800000;
    exponent = biased - 150;
    e = biased - 127;
  }
  // The quantum of the format at |v|: 2^(max(e, minExponent) - mantissaBits);
  // n = |v| / quantum rounded to nearest even. The code is n below the
  // smallest normal and ((e - minExponent) << mantissaBits) + n above it
  // (n in [2^M, 2^(M+1)], 2^(M+1) carrying into the next binade); n and the
  // code have the same parity, so ties to the even n are ties to the even
  // code.
  int m = static_cast<int>(format.mantissaBits);
  int quantumExponent = std::max(e, format.minExponent) - m;
  int shift = quantumExponent - exponent; // >= 23 - m > 0
  uint32_t n = 0;
  if (shift < 32) {
    n = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (n & 1)))
      ++n;
  }
  uint32_t code =
      e < format.minExponent
          ? n
          : (static_cast<uint32_t>(e - format.minExponent) << m) + n;
  return code | sign;
}

/// The f32 value of the f8E4M3FN code `code` (exact; NaN for 0x7F, 0xFF).
static float getFloat8E4M3FNValue(uint32_t code) {
  uint32_t magnitude = code & 0x7F;
  if (magnitude == kFloat8E4M3FNNaN)
    return std::numeric_limits<float>::quiet_NaN();
  int e = static_cast<int>(magnitude >> 3);
  int m = static_cast<int>(magnitude & 7);
  float value = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                       : std::ldexp(static_cast<float>(8 + m), e - 10);
  return (code & 0x80) ? -value : value;
}

/// The UE8M0 code `X + 127` of the MX scale `2^X` of a group with maximum
/// magnitude bits `amaxBits` (sign cleared), from the f32 exponent and
/// significand of amax alone: floor gives `X = E - 127 - emax`, up one
/// more when the significand of amax is above QMAX's (1.75 for e4m3, 1.5
/// for e2m1); X clamped to [-127, 127] (amax 0 and subnormal to -127, +inf
/// to 127); NaN gives 0xFF.
static uint32_t getPowerOfTwoScaleCode(uint32_t amaxBits, bool fp4,
                                       ScaleRounding rounding) {
  if (amaxBits > 0x7F800000u)
    return kFloat8E8M0NaN;
  if (amaxBits == 0x7F800000u)
    return 254;
  int code = static_cast<int>(amaxBits >> 23) - (fp4 ? 2 : 8);
  if (rounding == ScaleRounding::up &&
      (amaxBits & 0x7FFFFF) > (fp4 ? 0x400000u : 0x600000u))
    ++code;
  return static_cast<uint32_t>(std::clamp(code, 0, 254));
}

/// The f32 multiplier `2^-X` of the UE8M0 code `X + 127` (not NaN): exact,
/// `2^-127` being the subnormal 0x00400000.
static float getPowerOfTwoMultiplier(uint32_t code) {
  uint32_t biased = 254 - code;
  return fromBits(biased == 0 ? 0x00400000u : biased << 23);
}

/// Constant-folds a block-scaled quantization (MXFP8, FP8 1x128, MXFP4,
/// NVFP4; both scale layouts) of a small dense constant, with a constant
/// `global_scale` for NVFP4: the rules of DESIGN 2d on f32 bits.
static LogicalResult foldBlockScaled(QuantizeOp op,
                                     SmallVectorImpl<OpFoldResult> &results) {
  std::optional<FloatConstant> input =
      readFloatConstant(op.getInput(), kMaxFoldedElements);
  if (!input)
    return failure();
  float globalScale = 0.0f;
  if (Value g = op.getGlobalScale()) {
    std::optional<FloatConstant> constant = readFloatConstant(g, 1);
    if (!constant)
      return failure();
    globalScale = static_cast<float>(getAsDouble(constant->values.front()));
  }
  RankedTensorType qType = op.getQ().getType();
  RankedTensorType scalesType = op.getScales().getType();
  if (!qType.hasStaticShape() || !scalesType.hasStaticShape())
    return failure();
  bool fp4 = isa<Float4E2M1FNType>(qType.getElementType());
  bool powerOfTwo = op.isPowerOfTwoScaled();
  bool swizzled = op.getScaleLayout() == ScaleLayout::swizzled_128x4;
  const SmallFloatFormat &format = fp4 ? kFloat4E2M1FN : kFloat8E4M3FN;
  ScaleRounding rounding = op.getScaleRounding();

  ArrayRef<int64_t> shape = qType.getShape();
  int64_t rowSize = shape.back();
  int64_t groupSize = op.getGroupSize();
  int64_t numGroups = rowSize / groupSize;
  int64_t numRows = 1;
  for (int64_t size : shape.drop_back())
    numRows *= size;

  SmallVector<float> y;
  y.reserve(input->values.size());
  for (const APFloat &value : input->values)
    y.push_back(static_cast<float>(getAsDouble(value)));

  // Codes: q one per element, the scales one per group in their layout
  // (swizzled padding 0).
  SmallVector<uint32_t> qCodes(y.size(), 0);
  SmallVector<uint32_t> scaleCodes(
      swizzled ? getSwizzled128x4Size(numRows, numGroups) : numRows * numGroups,
      0);
  for (int64_t row = 0; row < numRows; ++row) {
    for (int64_t group = 0; group < numGroups; ++group) {
      int64_t begin = row * rowSize + group * groupSize;
      int64_t end = begin + groupSize;
      // amax = max |y| on the magnitude bits (their unsigned order is the
      // order of the values); NaN propagates.
      uint32_t amaxBits = 0;
      bool isNaN = false;
      for (int64_t i = begin; i < end; ++i) {
        uint32_t magnitude = getBits(y[i]) & 0x7FFFFFFFu;
        isNaN |= magnitude > 0x7F800000u;
        amaxBits = std::max(amaxBits, magnitude);
      }
      uint32_t scaleCode;
      float multiplier;
      if (powerOfTwo) {
        scaleCode = getPowerOfTwoScaleCode(isNaN ? 0x7FC00000u : amaxBits, fp4,
                                           rounding);
        // v = y * 2^-X (exact, or a zero of v's sign once rounded).
        multiplier = scaleCode == kFloat8E8M0NaN
                         ? std::numeric_limits<float>::quiet_NaN()
                         : getPowerOfTwoMultiplier(scaleCode);
      } else {
        // NVFP4, in f32 operations in this order: sf = e4m3(g * (amax / 6)),
        // out = sf == 0 ? 0 : g / sf.
        float amax = isNaN ? std::numeric_limits<float>::quiet_NaN()
                           : fromBits(amaxBits);
        float encode = globalScale * (amax / 6.0f);
        scaleCode = std::isnan(encode)
                        ? kFloat8E4M3FNNaN
                        : roundToSmallFloat(encode, kFloat8E4M3FN);
        float sf = getFloat8E4M3FNValue(scaleCode);
        multiplier = sf == 0.0f ? 0.0f : globalScale / sf;
      }
      for (int64_t i = begin; i < end; ++i) {
        float v = y[i] * multiplier;
        // No NaN code in e2m1: 0x0; e4m3: NaN.
        if (std::isnan(v))
          qCodes[i] = fp4 ? 0 : kFloat8E4M3FNNaN;
        else
          qCodes[i] = roundToSmallFloat(v, format);
      }
      int64_t offset = swizzled ? getSwizzled128x4Offset(row, group, numGroups)
                                : row * numGroups + group;
      scaleCodes[offset] = scaleCode;
    }
  }

  auto getAttr = [](RankedTensorType type, ArrayRef<uint32_t> codes) {
    auto elementType = cast<FloatType>(type.getElementType());
    const llvm::fltSemantics &semantics = elementType.getFloatSemantics();
    unsigned width = elementType.getWidth();
    SmallVector<APFloat> values;
    values.reserve(codes.size());
    for (uint32_t code : codes)
      values.emplace_back(semantics, APInt(width, code));
    return DenseElementsAttr::get(type, values);
  };
  results.push_back(getAttr(qType, qCodes));
  results.push_back(getAttr(scalesType, scaleCodes));
  return success();
}

/// Constant-folds a quantization of a small dense constant (with a constant
/// scale in the static form).
LogicalResult QuantizeOp::fold(FoldAdaptor adaptor,
                               SmallVectorImpl<OpFoldResult> &results) {
  if (isBlockScaled())
    return foldBlockScaled(*this, results);
  std::optional<FloatConstant> input =
      readFloatConstant(getInput(), kMaxFoldedElements);
  if (!input)
    return failure();
  std::optional<FloatConstant> scale;
  if (getScale()) {
    scale = readFloatConstant(getScale(), 1);
    if (!scale)
      return failure();
  }
  RankedTensorType qType = getQ().getType();
  if (!qType.hasStaticShape())
    return failure();
  bool isFloat8 = isa<Float8E4M3FNType>(qType.getElementType());
  int64_t numElements = qType.getNumElements();
  int64_t groupSize = getStaticGroupSize();
  // One scale per group; rows of N = 0 elements have groups of 0 elements
  // (amax = 0, so s = min_scale).
  int64_t numGroups = 0;
  if (!scale) {
    auto scalesType = cast<ShapedType>(getScales().getType());
    if (!scalesType.hasStaticShape())
      return failure();
    numGroups = scalesType.getNumElements();
  }
  float qmax = static_cast<float>(getQMax());
  float scaleUb = getScaleUb().convertToFloat();
  float minScale = getMinScaleValue();

  SmallVector<APFloat> floatValues;
  SmallVector<APInt> intValues;
  SmallVector<APFloat> scales;
  auto quantizeRange = [&](int64_t begin, int64_t end, float s) {
    float inverse = 1.0f / s;
    for (int64_t i = begin; i < end; ++i) {
      float v = static_cast<float>(getAsDouble(input->values[i])) * inverse;
      if (isFloat8)
        floatValues.push_back(quantizeToFloat8(v));
      else
        intValues.push_back(APInt(8, static_cast<uint64_t>(quantizeToInt8(v)),
                                  /*isSigned=*/true));
    }
  };
  if (scale) {
    quantizeRange(0, numElements, scale->values.front().convertToFloat());
  } else {
    for (int64_t g = 0; g < numGroups; ++g) {
      float amax = 0.0f;
      for (int64_t i = g * groupSize; i < (g + 1) * groupSize; ++i) {
        float magnitude =
            std::fabs(static_cast<float>(getAsDouble(input->values[i])));
        amax = std::isnan(magnitude) || std::isnan(amax)
                   ? std::numeric_limits<float>::quiet_NaN()
                   : std::max(amax, magnitude);
      }
      float s = std::isnan(amax)
                    ? amax
                    : std::max(std::min(amax, scaleUb) / qmax, minScale);
      scales.push_back(APFloat(s));
      quantizeRange(g * groupSize, (g + 1) * groupSize, s);
    }
  }
  if (isFloat8)
    results.push_back(DenseElementsAttr::get(qType, floatValues));
  else
    results.push_back(DenseElementsAttr::get(qType, intValues));
  if (!scale)
    results.push_back(DenseElementsAttr::get(
        cast<ShapedType>(getScales().getType()), scales));
  return success();
}
