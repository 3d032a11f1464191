//===- QuantizeFolds.cpp - Constant folding of norm.quantize ----*- C++ -*-===//
//
// Constant folding of norm.quantize on small constant inputs: the FP8 and
// int8 forms with APFloat, the block-scaled forms (DESIGN 2d) on f32 bits.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/ConstantValues.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

using namespace mlir;
using namespace mlir::norm;

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
