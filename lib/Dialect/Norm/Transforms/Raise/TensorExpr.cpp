//===- TensorExpr.cpp - TensorExpr nodes and their construction -----------===//
//
// The hash-consed nodes of the element-level view of tensor IR: uniquing,
// and the constructors' exact simplifications (constant folding, casts of
// casts, squares, narrow arithmetic computed in a wide type). Evaluating IR
// into nodes is in TensorExprEvaluator.cpp and TensorExprLinalg.cpp. The
// float helpers shared by the passes live in Dialect/Norm/Utils/FloatUtils.
//
//===----------------------------------------------------------------------===//

#include "TensorExpr.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace mlir::norm;

/// Applies `kind` to two constants in the arithmetic of `type`, or returns
/// nothing for kinds that are not folded.
static std::optional<double> foldBinary(TensorExprKind kind, double lhs,
                                        double rhs, Type type) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type).getFloatSemantics();
  bool losesInfo = false;
  llvm::APFloat a(lhs), b(rhs);
  a.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  b.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  llvm::APFloat::roundingMode rm = llvm::APFloat::rmNearestTiesToEven;
  switch (kind) {
  case TensorExprKind::Add:
    a.add(b, rm);
    break;
  case TensorExprKind::Sub:
    a.subtract(b, rm);
    break;
  case TensorExprKind::Mul:
    a.multiply(b, rm);
    break;
  case TensorExprKind::Div:
    a.divide(b, rm);
    break;
  case TensorExprKind::Max:
    a = llvm::maximum(a, b);
    break;
  case TensorExprKind::Min:
    a = llvm::minimum(a, b);
    break;
  default:
    return std::nullopt;
  }
  return a.convertToDouble();
}

static bool isCommutative(TensorExprKind kind) {
  return kind == TensorExprKind::Add || kind == TensorExprKind::Mul ||
         kind == TensorExprKind::Max || kind == TensorExprKind::Min;
}

/// True when `expr` is `e` extended from `narrow`, or a constant exactly
/// representable in `narrow`; sets `narrowExpr` to the unextended form.
static bool isExactExtensionOf(TensorExprBuilder &builder, TensorExpr *expr,
                               Type narrow, TensorExpr *&narrowExpr) {
  if (expr->is(TensorExprKind::Cast) && expr->getOperand(0)->type == narrow) {
    narrowExpr = expr->getOperand(0);
    return true;
  }
  if (expr->is(TensorExprKind::Const) &&
      roundToType(expr->constant, narrow) == expr->constant) {
    narrowExpr = builder.getConst(expr->constant, narrow);
    return true;
  }
  return false;
}

/// True when every value of `expr` is >= 0 (+0 for zeros) or NaN.
static bool isNonNegativeOrNaN(TensorExpr *expr) {
  if (expr->is(TensorExprKind::Abs))
    return true;
  if (expr->is(TensorExprKind::ReduceMax))
    return isNonNegativeOrNaN(expr->getOperand(0));
  return false;
}

//===----------------------------------------------------------------------===//
// Node construction
//===----------------------------------------------------------------------===//

TensorExprBuilder::TensorExprBuilder(RankedTensorType frameType)
    : context(frameType.getContext()),
      frameShape(frameType.getShape().begin(), frameType.getShape().end()) {
  identityMap = normalizeMap(
      AffineMap::getMultiDimIdentityMap(frameShape.size(), context),
      frameShape);
}

AffineMap TensorExprBuilder::normalizeMap(AffineMap map,
                                          ArrayRef<int64_t> shape) const {
  if (!map || map.getNumDims() != frameShape.size() ||
      map.getNumSymbols() != 0 || map.getNumResults() != shape.size())
    return {};
  SmallVector<AffineExpr> results;
  AffineExpr zero = getAffineConstantExpr(0, context);
  for (auto [expr, size] : llvm::zip_equal(map.getResults(), shape)) {
    if (size == 1) {
      results.push_back(zero);
      continue;
    }
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      results.push_back(frameShape[dim.getPosition()] == 1 ? zero : expr);
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return {};
    results.push_back(zero);
  }
  return AffineMap::get(frameShape.size(), 0, results, context);
}

/// Nodes are uniqued by what they compute; the derived fields (deps,
/// containsSum, ...) follow from the key and the id orders creation.
unsigned TensorExprBuilder::NodeInfo::getHashValue(const NodeKey &key) {
  return llvm::hash_combine(
      key.kind, key.type.getAsOpaquePointer(), key.value.getAsOpaquePointer(),
      key.map.getAsOpaquePointer(), key.constantBits, key.reducedDims,
      llvm::hash_combine_range(key.operands.begin(), key.operands.end()));
}

unsigned TensorExprBuilder::NodeInfo::getHashValue(const TensorExpr *node) {
  return getHashValue(
      NodeKey{node->kind, node->type, node->operands, node->value, node->map,
              llvm::bit_cast<uint64_t>(node->constant), node->reducedDims});
}

bool TensorExprBuilder::NodeInfo::isEqual(const NodeKey &key,
                                          const TensorExpr *node) {
  if (node == getEmptyKey() || node == getTombstoneKey())
    return false;
  return key.kind == node->kind && key.type == node->type &&
         key.value == node->value && key.map == node->map &&
         key.constantBits == llvm::bit_cast<uint64_t>(node->constant) &&
         key.reducedDims == node->reducedDims &&
         key.operands == ArrayRef<TensorExpr *>(node->operands);
}

TensorExpr *TensorExprBuilder::intern(TensorExprKind kind, Type type,
                                      ArrayRef<TensorExpr *> operands,
                                      Value value, AffineMap map,
                                      double constant, uint64_t reducedDims) {
  NodeKey key{kind,       type, operands,
              value,      map,  llvm::bit_cast<uint64_t>(constant),
              reducedDims};
  auto it = uniquer.find_as(key);
  if (it != uniquer.end())
    return *it;

  auto *node = new (allocator.Allocate()) TensorExpr();
  node->kind = kind;
  node->type = type;
  node->operands.assign(operands.begin(), operands.end());
  node->value = value;
  node->map = map;
  node->constant = constant;
  node->reducedDims = reducedDims;
  node->id = numNodes++;
  node->containsSum = kind == TensorExprKind::Sum;
  node->containsAcc = kind == TensorExprKind::Acc;
  if (kind == TensorExprKind::Leaf)
    for (AffineExpr result : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(result))
        node->deps |= uint64_t(1) << dim.getPosition();
  for (TensorExpr *operand : operands) {
    node->deps |= operand->deps;
    node->containsSum |= operand->containsSum;
    node->containsAcc |= operand->containsAcc;
  }
  if (kind == TensorExprKind::Sum || kind == TensorExprKind::ReduceMax)
    node->deps &= ~reducedDims;
  uniquer.insert(node);
  return node;
}

TensorExpr *TensorExprBuilder::getLeaf(Value value, AffineMap map, Type type) {
  return intern(TensorExprKind::Leaf, type, {}, value, map);
}

TensorExpr *TensorExprBuilder::getConst(double value, Type type) {
  return intern(TensorExprKind::Const, type, {}, {}, {},
                roundToType(value, type));
}

TensorExpr *TensorExprBuilder::getDimSize(Value tensor, uint64_t dims,
                                          Type type) {
  return intern(TensorExprKind::DimSize, type, {}, tensor, {}, 0.0, dims);
}

TensorExpr *TensorExprBuilder::getAcc(Type type) {
  return intern(TensorExprKind::Acc, type, {});
}

TensorExpr *TensorExprBuilder::getSelectEq(TensorExpr *a, TensorExpr *b,
                                           TensorExpr *t, TensorExpr *f) {
  // The equality is symmetric: a constant compared with goes second.
  if (a->is(TensorExprKind::Const) && !b->is(TensorExprKind::Const))
    std::swap(a, b);
  return intern(TensorExprKind::SelectEq, t->type, {a, b, t, f});
}

TensorExpr *TensorExprBuilder::getUnary(TensorExprKind kind,
                                        TensorExpr *operand) {
  Type type = operand->type;
  if (operand->is(TensorExprKind::Const)) {
    double c = operand->constant;
    switch (kind) {
    case TensorExprKind::Neg:
      return getConst(-c, type);
    case TensorExprKind::Abs:
      return getConst(std::fabs(c), type);
    case TensorExprKind::Recip:
      return getConst(*foldBinary(TensorExprKind::Div, 1.0, c, type), type);
    case TensorExprKind::RoundEven: {
      llvm::APFloat rounded(c);
      rounded.roundToIntegral(llvm::APFloat::rmNearestTiesToEven);
      return getConst(rounded.convertToDouble(), type);
    }
    case TensorExprKind::Floor:
      return getConst(std::floor(c), type);
    case TensorExprKind::Ceil:
      return getConst(std::ceil(c), type);
    default:
      break;
    }
  }
  if (kind == TensorExprKind::Neg && operand->is(TensorExprKind::Neg))
    return operand->getOperand(0);
  return intern(kind, type, {operand});
}

TensorExpr *TensorExprBuilder::getBinary(TensorExprKind kind, TensorExpr *lhs,
                                         TensorExpr *rhs) {
  Type type = lhs->type;
  if (lhs->is(TensorExprKind::Const) && rhs->is(TensorExprKind::Const))
    if (std::optional<double> folded =
            foldBinary(kind, lhs->constant, rhs->constant, type))
      return getConst(*folded, type);
  // 1 / a is the reciprocal (tosa.reciprocal is lowered exactly so).
  if (kind == TensorExprKind::Div && lhs->is(TensorExprKind::Const) &&
      lhs->constant == 1.0)
    return getUnary(TensorExprKind::Recip, rhs);
  // |a| * |a| = a * a exactly.
  if (kind == TensorExprKind::Mul && lhs == rhs && lhs->is(TensorExprKind::Abs))
    return getBinary(kind, lhs->getOperand(0), lhs->getOperand(0));
  // max(a, -inf) = a (the initial value of a max-reduction), and
  // max(a, 0) = a for an `a` that is >= 0 or NaN (`max |y|` from 0).
  if (kind == TensorExprKind::Max)
    for (unsigned i = 0; i < 2; ++i) {
      TensorExpr *constant = i ? lhs : rhs, *other = i ? rhs : lhs;
      if (!constant->is(TensorExprKind::Const))
        continue;
      if (std::isinf(constant->constant) && constant->constant < 0)
        return other;
      if (constant->constant == 0.0 && !std::signbit(constant->constant) &&
          isNonNegativeOrNaN(other))
        return other;
    }
  if (isCommutative(kind) && rhs->id < lhs->id)
    std::swap(lhs, rhs);
  return intern(kind, type, {lhs, rhs});
}

TensorExpr *TensorExprBuilder::getPow(TensorExpr *base, double exponent) {
  // pow(a, 2) is a * a and pow(a, 0.5) is sqrt(a): both correctly rounded.
  if (exponent == 1.0)
    return base;
  if (exponent == 2.0) {
    TensorExpr *root =
        base->is(TensorExprKind::Abs) ? base->getOperand(0) : base;
    return getBinary(TensorExprKind::Mul, root, root);
  }
  if (exponent == 0.5)
    return getUnary(TensorExprKind::Sqrt, base);
  if (exponent == -0.5)
    return getUnary(TensorExprKind::Rsqrt, base);
  return intern(TensorExprKind::Pow, base->type, {base}, {}, {}, exponent);
}

TensorExpr *TensorExprBuilder::getCast(TensorExpr *operand, Type type) {
  Type from = operand->type;
  if (from == type)
    return operand;
  if (operand->is(TensorExprKind::Const))
    return getConst(operand->constant, type);
  // A count N rounded to `from` and then to `type` is N rounded to `type`
  // once when `from` has at least 2p+2 bits of precision for the p bits of
  // `type` (double rounding is innocuous); a count widened from a narrower
  // type keeps the first rounding (257 through bf16 is 256), a Cast.
  if (operand->is(TensorExprKind::DimSize) &&
      getPrecision(from) >= 2 * getPrecision(type) + 2)
    return getDimSize(operand->value, operand->reducedDims, type);
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = type.getIntOrFloatBitWidth();
  bool widening =
      getPrecision(type) >= getPrecision(from) && toWidth > fromWidth;
  if (operand->is(TensorExprKind::Cast)) {
    TensorExpr *inner = operand->getOperand(0);
    bool innerWidening = getPrecision(from) >= getPrecision(inner->type) &&
                         fromWidth > inner->type.getIntOrFloatBitWidth();
    // ext(ext(a)) = ext(a); trunc(ext(a)) back to a's type = a.
    if (innerWidening && widening)
      return getCast(inner, type);
    if (innerWidening && inner->type == type)
      return inner;
  }
  // Narrowing the result of one +, -, *, / or sqrt computed in a type with
  // at least 2p+2 bits of precision from operands of the p-bit type `type`
  // gives the correctly rounded result in `type` (double rounding is
  // innocuous): the op computed in `type` directly.
  if (!widening && getPrecision(from) >= 2 * getPrecision(type) + 2) {
    switch (operand->kind) {
    case TensorExprKind::Add:
    case TensorExprKind::Sub:
    case TensorExprKind::Mul:
    case TensorExprKind::Div: {
      TensorExpr *lhs, *rhs;
      if (isExactExtensionOf(*this, operand->getOperand(0), type, lhs) &&
          isExactExtensionOf(*this, operand->getOperand(1), type, rhs))
        return getBinary(operand->kind, lhs, rhs);
      break;
    }
    case TensorExprKind::Sqrt: {
      TensorExpr *arg;
      if (isExactExtensionOf(*this, operand->getOperand(0), type, arg))
        return getUnary(operand->kind, arg);
      break;
    }
    default:
      break;
    }
  }
  return intern(TensorExprKind::Cast, type, {operand});
}

TensorExpr *TensorExprBuilder::getFPToSI(TensorExpr *operand,
                                         IntegerType type) {
  return intern(TensorExprKind::FPToSI, type, {operand});
}

TensorExpr *TensorExprBuilder::getSum(TensorExpr *operand,
                                      uint64_t reducedDims) {
  // A sum of partial sums over other dims (one TOSA reduce_sum per axis)
  // is one sum. Summed again along its own reduced dims, a sum is a row
  // value repeated along them (N times itself), not one sum.
  if (operand->is(TensorExprKind::Sum) && !(operand->reducedDims & reducedDims))
    return getSum(operand->getOperand(0), reducedDims | operand->reducedDims);
  return intern(TensorExprKind::Sum, operand->type, {operand}, {}, {}, 0.0,
                reducedDims);
}

TensorExpr *TensorExprBuilder::getReduceMax(TensorExpr *operand,
                                            uint64_t reducedDims) {
  // A maximum of partial maxima (one reduction per axis) is one maximum.
  if (operand->is(TensorExprKind::ReduceMax))
    return getReduceMax(operand->getOperand(0),
                        reducedDims | operand->reducedDims);
  return intern(TensorExprKind::ReduceMax, operand->type, {operand}, {}, {},
                0.0, reducedDims);
}
