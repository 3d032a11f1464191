//===- RaiseMatcher.cpp - Match TensorExprs against the norm ops ----------===//
//
// The parts of the norm-raise matcher that every normalization shares: the
// readings of the epilogue (weight, Gemma's weight offset, bias, final or
// before-weight rounding), the row statistics (means, epsilon, reduced
// dims, the input), and the final checks of types, parameters and
// attributes against the op semantics. The normalized cores of LayerNorm,
// RMSNorm and DyT are in RaiseMatchCores.cpp.
//
//===----------------------------------------------------------------------===//

#include "RaiseMatcher.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

/// Formats a frame-dim bit set as `[1, 2]`.
static std::string formatDims(uint64_t dims) {
  std::string text = "[";
  bool first = true;
  for (unsigned d = 0; d < 64; ++d) {
    if (!(dims & (uint64_t(1) << d)))
      continue;
    if (!first)
      text += ", ";
    text += std::to_string(d);
    first = false;
  }
  return text + "]";
}

static std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Formats a constant with up to 9 significant digits.
static std::string formatNumber(double value) {
  return llvm::formatv("{0}", llvm::format("%.9g", value)).str();
}

//===----------------------------------------------------------------------===//
// Entry point and epilogue
//===----------------------------------------------------------------------===//

std::optional<NormMatch> NormChainMatcher::match(TensorExpr *root) {
  Type resultType = root->type;
  NormMatch result;

  // cast_mode = final: y = round_T(core * w + b), or y = core * w + b when
  // the arithmetic happens in T itself.
  SmallVector<std::pair<TensorExpr *, Type>> finalForms;
  if (root->is(Kind::Cast) &&
      getWidth(root->getOperand(0)->type) > getWidth(resultType))
    finalForms.push_back({root->getOperand(0), root->getOperand(0)->type});
  finalForms.push_back({root, resultType});
  for (auto [yc, computeType] : finalForms) {
    NormMatch base;
    base.inputType = resultType;
    base.computeType = computeType;
    base.paramType = computeType;
    auto core = [&](TensorExpr *n, NormMatch &m) {
      return matchCore(n, m) && finish(m);
    };
    if (matchEpilogue(yc, base, /*allowOffset=*/true, core, result))
      return result;
  }

  // cast_mode = before_weight: y = round_T(round_T(n) * w + b) computed in
  // the wider of T and the parameter types (Hugging Face LLaMA).
  TensorExpr *wide = root;
  Type arithmeticType = resultType;
  if (root->is(Kind::Cast) &&
      getWidth(root->getOperand(0)->type) > getWidth(resultType)) {
    wide = root->getOperand(0);
    arithmeticType = wide->type;
  }
  NormMatch base;
  base.inputType = resultType;
  base.paramType = arithmeticType;
  base.castMode = CastMode::before_weight;
  auto roundedCore = [&](TensorExpr *core, NormMatch &m) {
    if (!m.weight && !m.bias)
      return false;
    TensorExpr *rounded = core;
    if (arithmeticType != resultType) {
      if (!rounded->is(Kind::Cast) ||
          rounded->getOperand(0)->type != resultType)
        return false;
      rounded = rounded->getOperand(0);
    }
    if (!rounded->is(Kind::Cast) || rounded->type != resultType ||
        getWidth(rounded->getOperand(0)->type) <= getWidth(resultType))
      return false;
    TensorExpr *n = rounded->getOperand(0);
    m.computeType = n->type;
    return matchCore(n, m) && finish(m);
  };
  if (matchEpilogue(wide, base, /*allowOffset=*/false, roundedCore, result))
    return result;
  return std::nullopt;
}

TensorExpr *NormChainMatcher::asParam(TensorExpr *e, Type paramType) {
  if (e->containsSum || e->type != paramType)
    return nullptr;
  if (e->is(Kind::Leaf) || e->is(Kind::Const))
    return e;
  if (e->is(Kind::Cast) && e->getOperand(0)->is(Kind::Leaf))
    return e->getOperand(0);
  return nullptr;
}

TensorExpr *NormChainMatcher::asWeight(TensorExpr *e, Type paramType,
                                       bool allowOffset, double &offset) {
  offset = 0.0;
  if (TensorExpr *param = asParam(e, paramType))
    return param;
  // Gemma: (1 + w) added in the arithmetic type.
  if (!allowOffset || !e->is(Kind::Add))
    return nullptr;
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *constant = e->getOperand(i);
    TensorExpr *param = asParam(e->getOperand(1 - i), paramType);
    if (constant->is(Kind::Const) && param && !param->is(Kind::Const)) {
      offset = constant->constant;
      return param;
    }
  }
  return nullptr;
}

bool NormChainMatcher::matchEpilogue(TensorExpr *e, const NormMatch &base,
                                     bool allowOffset, CoreFn matchRest,
                                     NormMatch &out) {
  // Readings of e as core [* weight] [+ bias], the fullest first.
  SmallVector<std::pair<TensorExpr *, TensorExpr *>, 3> biasSplits;
  if (e->is(Kind::Add))
    for (unsigned i = 0; i < 2; ++i)
      if (TensorExpr *bias = asParam(e->getOperand(1 - i), base.paramType))
        biasSplits.push_back({e->getOperand(i), bias});
  biasSplits.push_back({e, nullptr});

  for (auto [rest, bias] : biasSplits) {
    SmallVector<std::tuple<TensorExpr *, TensorExpr *, double>, 3> weightSplits;
    if (rest->is(Kind::Mul))
      for (unsigned i = 0; i < 2; ++i) {
        double offset;
        if (TensorExpr *weight = asWeight(rest->getOperand(1 - i),
                                          base.paramType, allowOffset, offset))
          weightSplits.push_back({rest->getOperand(i), weight, offset});
      }
    weightSplits.push_back({rest, nullptr, 0.0});
    for (auto [core, weight, offset] : weightSplits) {
      NormMatch m = base;
      m.weight = weight;
      m.bias = bias;
      m.weightOffset = offset;
      if (matchRest(core, m)) {
        out = m;
        return true;
      }
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Statistics and input
//===----------------------------------------------------------------------===//

bool NormChainMatcher::bindInput(TensorExpr *xc, NormMatch &m) {
  if (m.xc)
    return m.xc == xc ||
           fail(kStructure, "the statistics are computed from another tensor "
                            "than the one normalized");
  if (xc->containsSum || xc->is(Kind::Const))
    return false;
  m.xc = xc;
  m.x = xc;
  if (xc->is(Kind::Cast) &&
      getWidth(xc->type) > getWidth(xc->getOperand(0)->type))
    m.x = xc->getOperand(0);
  return true;
}

bool NormChainMatcher::setDims(uint64_t dims, NormMatch &m) {
  if (m.reducedDims && m.reducedDims != dims)
    return fail(kStructure,
                llvm::formatv("the statistics reduce different dims ({0} and "
                              "{1})",
                              formatDims(m.reducedDims), formatDims(dims)));
  unsigned lowest = llvm::countr_zero(dims);
  uint64_t all = rank == 64 ? ~uint64_t(0) : (uint64_t(1) << rank) - 1;
  uint64_t trailing = all & ~((uint64_t(1) << lowest) - 1);
  if (dims != trailing)
    return fail(kStructure,
                llvm::formatv("the statistics reduce dims {0} of a rank-{1} "
                              "input, not trailing dims ending at dim {2}",
                              formatDims(dims), rank, rank - 1));
  m.reducedDims = dims;
  m.axis = lowest;
  return true;
}

bool NormChainMatcher::matchMean(TensorExpr *e, TensorExpr *&summand,
                                 uint64_t &dims, NormMatch &m) {
  // sum / N, sum * (1/N), (1/N) * sum.
  TensorExpr *sum = nullptr, *scale = nullptr;
  bool divides = false;
  auto isCount = [](TensorExpr *n) {
    return n->is(Kind::Const) || n->is(Kind::DimSize);
  };
  if (e->is(Kind::Div) && e->getOperand(0)->is(Kind::Sum) &&
      isCount(e->getOperand(1))) {
    sum = e->getOperand(0);
    scale = e->getOperand(1);
    divides = true;
  } else if (e->is(Kind::Mul)) {
    for (unsigned i = 0; i < 2; ++i)
      if (e->getOperand(i)->is(Kind::Sum) &&
          (e->getOperand(1 - i)->is(Kind::Const) ||
           (e->getOperand(1 - i)->is(Kind::Recip) &&
            e->getOperand(1 - i)->getOperand(0)->is(Kind::DimSize)))) {
        sum = e->getOperand(i);
        scale = e->getOperand(1 - i);
      }
  }
  if (!sum) {
    // N converted through a type that rounds it (a bf16 count extended to
    // f32): not the count the op divides by.
    bool ofSum = (e->is(Kind::Div) || e->is(Kind::Mul)) &&
                 llvm::any_of(e->operands,
                              [](TensorExpr *n) { return n->is(Kind::Sum); });
    for (TensorExpr *operand : e->operands) {
      if (!ofSum)
        break;
      TensorExpr *count =
          operand->is(Kind::Recip) ? operand->getOperand(0) : operand;
      if (count->is(Kind::Cast) && count->getOperand(0)->is(Kind::DimSize))
        return fail(kStatistic,
                    "the element count is rounded to " +
                        formatType(count->getOperand(0)->type) +
                        " before the arithmetic in " + formatType(e->type));
    }
    return false;
  }
  // The count read from the dynamic sizes: it must be that of the summed
  // dims.
  TensorExpr *size = scale->is(Kind::Recip) ? scale->getOperand(0) : scale;
  if (size->is(Kind::DimSize)) {
    // N read at run time (the count converted to the arithmetic type, as
    // the op's lowering does); finish() checks whose sizes they are.
    if (size->reducedDims != sum->reducedDims)
      return fail(kStatistic, "the sum is divided by the size of other dims "
                              "than those it sums over");
    if (!llvm::is_contained(m.countTensors, size->value))
      m.countTensors.push_back(size->value);
    summand = sum->getOperand(0);
    dims = sum->reducedDims;
    return true;
  }
  int64_t count = 1;
  ArrayRef<int64_t> shape = builder.getFrameShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (!(sum->reducedDims & (uint64_t(1) << d)))
      continue;
    if (ShapedType::isDynamic(shape[d]))
      return fail(kStatistic, "the number of normalized elements is not "
                              "static (dynamic normalized dims)");
    count *= shape[d];
  }
  Type type = e->type;
  double c = scale->constant;
  // N itself is rounded to the arithmetic type, as the op's lowering does.
  double expected = divides ? roundToType(static_cast<double>(count), type)
                            : roundToType(1.0 / count, type);
  if (c != expected) {
    double unbiased = divides ? roundToType(count - 1.0, type)
                              : roundToType(1.0 / (count - 1), type);
    std::string what =
        (divides ? "divided by " : "scaled by ") + formatNumber(c);
    return fail(kStructure,
                llvm::formatv("the sum over {0} elements is {1}, not {2} N{3}",
                              count, what, divides ? "by" : "by 1 /",
                              c == unbiased ? " (unbiased variance)" : ""));
  }
  summand = sum->getOperand(0);
  dims = sum->reducedDims;
  return true;
}

bool NormChainMatcher::matchEpsilonAdd(TensorExpr *e, TensorExpr *&stat,
                                       NormMatch &m) {
  if (!e->is(Kind::Add))
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *eps = e->getOperand(i);
    if (!eps->is(Kind::Const))
      continue;
    if (m.epsilon && *m.epsilon != eps->constant)
      return fail(kStructure, "the chain adds two different epsilons");
    stat = e->getOperand(1 - i);
    // (s + e1) + e2: two epsilons where the op has one.
    if (stat->is(Kind::Add) && stat->containsSum &&
        (stat->getOperand(0)->is(Kind::Const) ||
         stat->getOperand(1)->is(Kind::Const)))
      return fail(kStructure, "the chain adds two epsilons to the statistic");
    m.epsilon = eps->constant;
    return true;
  }
  for (unsigned i = 0; i < 2; ++i) {
    TensorExpr *eps = e->getOperand(i);
    if (!eps->containsSum && eps->deps == 0 &&
        e->getOperand(1 - i)->containsSum) {
      stat = e->getOperand(1 - i);
      return fail(kStructure, "epsilon is not a constant");
    }
  }
  return false;
}

bool NormChainMatcher::matchEpsilonOrNone(TensorExpr *e, TensorExpr *&stat,
                                          NormMatch &m) {
  if (e->is(Kind::Add))
    return matchEpsilonAdd(e, stat, m);
  // No epsilon (torch-mlir's rms_norm with eps=None): epsilon 0, since
  // s + 0 = s for the nonnegative statistic s.
  if (!e->containsSum || (m.epsilon && *m.epsilon != 0.0))
    return false;
  m.epsilon = 0.0;
  stat = e;
  return true;
}

//===----------------------------------------------------------------------===//
// Final checks
//===----------------------------------------------------------------------===//

std::optional<int64_t> NormChainMatcher::getParamAxis(TensorExpr *p) {
  if (!p || !p->is(Kind::Leaf))
    return std::nullopt;
  ArrayRef<AffineExpr> results = p->map.getResults();
  for (AffineExpr result : results)
    if (auto dim = dyn_cast<AffineDimExpr>(result))
      return dim.getPosition();
  return std::nullopt;
}

bool NormChainMatcher::checkParam(TensorExpr *p, StringRef name,
                                  bool allowScalar, bool scalarOnly,
                                  NormMatch &m) {
  if (p->is(Kind::Const))
    return true;
  auto type = dyn_cast<RankedTensorType>(p->value.getType());
  if (!type)
    return fail(kCore, llvm::formatv("the {0} is a scalar value, not a "
                                     "tensor",
                                     name));
  Type elementType = type.getElementType();
  if (elementType != m.inputType && !elementType.isF32())
    return fail(kCore, llvm::formatv("the {0} has element type {1}; the op "
                                     "takes {2} or f32",
                                     name, formatType(elementType),
                                     formatType(m.inputType)));
  ArrayRef<AffineExpr> results = p->map.getResults();
  ArrayRef<int64_t> shape = type.getShape();
  bool isScalar = llvm::all_of(shape, [](int64_t s) { return s == 1; });
  if (isScalar && (allowScalar || scalarOnly))
    return true;
  if (scalarOnly)
    return fail(kCore, llvm::formatv("the {0} is not a scalar", name));
  // Leading unit dims (dropped by a reshape), then exactly the normalized
  // dims axis..rank-1.
  int64_t normalizedRank = rank - m.axis;
  int64_t leading = static_cast<int64_t>(shape.size()) - normalizedRank;
  ArrayRef<int64_t> frame = builder.getFrameShape();
  bool ok = leading >= 0;
  for (int64_t i = 0; ok && i < leading; ++i)
    ok = shape[i] == 1;
  for (int64_t j = 0; ok && j < normalizedRank; ++j) {
    int64_t d = m.axis + j;
    AffineExpr result = results[leading + j];
    auto dim = dyn_cast<AffineDimExpr>(result);
    ok = (dim && dim.getPosition() == d) ||
         (shape[leading + j] == 1 && frame[d] == 1);
  }
  if (!ok)
    return fail(kCore, llvm::formatv("the {0} of type {1} is not applied "
                                     "along the normalized dims {2}..{3}",
                                     name, formatType(type), m.axis, rank - 1));
  return true;
}

bool NormChainMatcher::isInputShaped(Value tensor, const NormMatch &m) {
  // The tensor holds x element by element (x itself, or a cast or reshape
  // of unit dims of it): its sizes are the frame's, dim for dim.
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type ||
      failed(verifyCompatibleShape(type.getShape(), builder.getFrameShape())))
    return false;
  TensorExpr *e = builder.evaluate(tensor);
  return e && (e == m.x || e == m.xc);
}

bool NormChainMatcher::finish(NormMatch &m) {
  Type inputType = m.inputType, computeType = m.computeType;
  // Every term of the chain is one the op computes: rms_norm has no bias.
  if (m.kind == NormKind::RMSNorm && m.bias)
    return fail(kCore, "norm.rms_norm has no bias (the chain adds a term "
                       "after the weight)");
  for (Value tensor : m.countTensors)
    if (!isInputShaped(tensor, m))
      return fail(kCore, "the number of normalized elements is read from "
                         "the sizes of another tensor than the input");
  if (!isSupportedFloat(inputType))
    return fail(kCore, "the element type is not f16, bf16, f32 or f64");
  if (m.x->type != inputType)
    return fail(kCore,
                llvm::formatv("the input has element type {0} but the "
                              "result {1}",
                              formatType(m.x->type), formatType(inputType)));
  if ((computeType != inputType && !computeType.isF32() &&
       !computeType.isF64()) ||
      getWidth(computeType) < getWidth(inputType))
    return fail(kCore,
                llvm::formatv("the arithmetic happens in {0}, which "
                              "is not a compute type for {1}",
                              formatType(computeType), formatType(inputType)));
  if (m.epsilon && (!std::isfinite(*m.epsilon) || *m.epsilon < 0.0))
    return fail(kCore, "epsilon is negative or not finite");
  if (!std::isfinite(m.weightOffset) ||
      roundToType(m.weightOffset, Float32Type::get(builder.getContext())) !=
          m.weightOffset)
    return fail(kCore, "the constant added to the weight is not an f32 value");
  if (m.weightOffset != 0.0 && m.kind != NormKind::RMSNorm)
    return fail(kCore, "a constant is added to the weight of a LayerNorm or "
                       "DyT");

  if (m.kind == NormKind::DyT) {
    // DyT has no reduction: the parameters give the axis.
    std::optional<int64_t> weightAxis = getParamAxis(m.weight);
    std::optional<int64_t> biasAxis = getParamAxis(m.bias);
    if (weightAxis && biasAxis && *weightAxis != *biasAxis)
      return fail(kCore, "weight and bias are applied along different dims");
    m.axis = weightAxis ? *weightAxis : biasAxis ? *biasAxis : rank - 1;
    if (!checkParam(m.alpha, "alpha", true, true, m))
      return false;
  }
  if (m.weight &&
      !checkParam(m.weight, "weight", m.kind == NormKind::RMSNorm, false, m))
    return false;
  if (m.bias && !checkParam(m.bias, "bias", false, false, m))
    return false;

  // Constant parameters become splat tensors of x.shape[axis:].
  bool staticParams =
      llvm::all_of(builder.getFrameShape().drop_front(m.axis),
                   [](int64_t size) { return !ShapedType::isDynamic(size); });
  if (((m.weight && m.weight->is(Kind::Const) && m.kind != NormKind::RMSNorm) ||
       (m.bias && m.bias->is(Kind::Const))) &&
      !staticParams)
    return fail(kCore, "a constant parameter over dynamic normalized dims");

  if (m.sumOfSquares &&
      (m.weightOffset != 0.0 || (m.weight && !m.weight->is(Kind::Const))))
    return fail(kCore, "a root sum of squares (||x||) is raised only with a "
                       "constant or no weight, which absorbs sqrt(N)");

  if (m.castMode == CastMode::before_weight) {
    // The arithmetic type of the epilogue is fixed by the parameter types.
    Type expected = inputType;
    for (TensorExpr *p : {m.weight, m.bias})
      if (p && p->is(Kind::Leaf)) {
        Type type = getElementTypeOrSelf(p->value.getType());
        if (getWidth(type) > getWidth(expected))
          expected = type;
      }
    if (expected != m.paramType)
      return fail(kCore,
                  llvm::formatv("the rounded value is scaled in {0}, "
                                "not in the wider of the input and "
                                "parameter types ({1})",
                                formatType(m.paramType), formatType(expected)));
  }
  if (m.kind != NormKind::DyT && !m.epsilon)
    return fail(kCore, "no epsilon");
  return true;
}
