//===- TensorExpr.cpp - Symbolic view of tensor-level elementwise IR ------===//
//
// Evaluates tensor values to hash-consed element-level expressions: linalg
// ops (generic and named, with their bodies), TOSA elementwise and reduction
// ops, tensor-level arith/math ops and reshapes of unit dims.
//
//===----------------------------------------------------------------------===//

#include "TensorExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::norm;

/// Deeper operand chains are cut into leaves (they cannot be part of one
/// normalization anyway) so the evaluator never recurses without bound.
static constexpr unsigned kMaxDepth = 256;
/// Largest number of nodes one builder creates before it stops expanding.
static constexpr size_t kMaxNodes = 1 << 16;

bool mlir::norm::isSupportedFloat(Type type) {
  return type &&
         (type.isF16() || type.isBF16() || type.isF32() || type.isF64());
}

unsigned mlir::norm::getPrecision(Type type) {
  return llvm::APFloat::semanticsPrecision(
      cast<FloatType>(type).getFloatSemantics());
}

double mlir::norm::roundToType(double value, Type type) {
  llvm::APFloat result(value);
  bool losesInfo = false;
  result.convert(cast<FloatType>(type).getFloatSemantics(),
                 llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return result.convertToDouble();
}

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

TensorExpr *TensorExprBuilder::intern(TensorExprKind kind, Type type,
                                      ArrayRef<TensorExpr *> operands,
                                      Value value, AffineMap map,
                                      double constant, uint64_t reducedDims) {
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(constant));
  std::memcpy(&bits, &constant, sizeof(bits));
  std::vector<uintptr_t> key{
      static_cast<uintptr_t>(kind),
      reinterpret_cast<uintptr_t>(type.getAsOpaquePointer()),
      reinterpret_cast<uintptr_t>(value.getAsOpaquePointer()),
      reinterpret_cast<uintptr_t>(map.getAsOpaquePointer()),
      static_cast<uintptr_t>(bits),
      static_cast<uintptr_t>(reducedDims)};
  for (TensorExpr *operand : operands)
    key.push_back(reinterpret_cast<uintptr_t>(operand));
  auto it = uniquer.find(key);
  if (it != uniquer.end())
    return it->second;

  auto node = std::make_unique<TensorExpr>();
  node->kind = kind;
  node->type = type;
  node->operands.assign(operands.begin(), operands.end());
  node->value = value;
  node->map = map;
  node->constant = constant;
  node->reducedDims = reducedDims;
  node->id = nodes.size();
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
  if (kind == TensorExprKind::Sum)
    node->deps &= ~reducedDims;
  TensorExpr *result = node.get();
  nodes.push_back(std::move(node));
  uniquer.emplace(std::move(key), result);
  return result;
}

TensorExpr *TensorExprBuilder::getLeaf(Value value, AffineMap map, Type type) {
  return intern(TensorExprKind::Leaf, type, {}, value, map);
}

TensorExpr *TensorExprBuilder::getConst(double value, Type type) {
  return intern(TensorExprKind::Const, type, {}, {}, {},
                roundToType(value, type));
}

TensorExpr *TensorExprBuilder::getAcc(Type type) {
  return intern(TensorExprKind::Acc, type, {});
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

TensorExpr *TensorExprBuilder::getSum(TensorExpr *operand,
                                      uint64_t reducedDims) {
  // A sum of partial sums (one TOSA reduce_sum per axis) is one sum.
  if (operand->is(TensorExprKind::Sum))
    return getSum(operand->getOperand(0), reducedDims | operand->reducedDims);
  return intern(TensorExprKind::Sum, operand->type, {operand}, {}, {}, 0.0,
                reducedDims);
}

//===----------------------------------------------------------------------===//
// Evaluation of tensor values
//===----------------------------------------------------------------------===//

TensorExpr *TensorExprBuilder::evaluate(Value value) {
  return evaluate(value, identityMap);
}

TensorExpr *TensorExprBuilder::evaluate(Value value, AffineMap map) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !isSupportedFloat(type.getElementType()))
    return nullptr;
  map = normalizeMap(map, type.getShape());
  if (!map)
    return nullptr;
  auto key =
      std::make_pair(value.getAsOpaquePointer(),
                     static_cast<const void *>(map.getAsOpaquePointer()));
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;

  TensorExpr *expr = nullptr;
  if (depth < kMaxDepth && nodes.size() < kMaxNodes) {
    ++depth;
    expr = evaluateImpl(value, map);
    --depth;
  }
  if (!expr)
    expr = getLeaf(value, map, type.getElementType());
  memo[key] = expr;
  if (map == identityMap && type.getShape() == ArrayRef(frameShape))
    materializations.try_emplace(expr, value);
  SmallVector<TensorExpr *, 2> &list = nodesOfValue[value];
  if (!llvm::is_contained(list, expr))
    list.push_back(expr);
  return expr;
}

Value TensorExprBuilder::getMaterialization(TensorExpr *expr) const {
  return materializations.lookup(expr);
}

ArrayRef<TensorExpr *> TensorExprBuilder::getNodesOf(Value value) const {
  auto it = nodesOfValue.find(value);
  if (it == nodesOfValue.end())
    return {};
  return it->second;
}

/// The value of an integer constant, seen through index casts and integer
/// extensions.
static std::optional<APInt> getIntegerConstant(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp>(op))
      break;
    value = op->getOperand(0);
  }
  APInt integer;
  if (!matchPattern(value, m_ConstantInt(&integer)))
    return std::nullopt;
  return integer;
}

/// The splat float value of a constant, if it is one; also an integer
/// constant converted by sitofp/uitofp (an element count, say).
static std::optional<double> getSplatFloat(Value value) {
  if (auto convert = value.getDefiningOp<arith::SIToFPOp>())
    if (std::optional<APInt> integer = getIntegerConstant(convert.getIn()))
      return static_cast<double>(integer->getSExtValue());
  if (auto convert = value.getDefiningOp<arith::UIToFPOp>())
    if (std::optional<APInt> integer = getIntegerConstant(convert.getIn()))
      return static_cast<double>(integer->getZExtValue());
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return floatAttr.getValueAsDouble();
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr))
    if (dense.isSplat())
      return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

TensorExpr *TensorExprBuilder::evaluateImpl(Value value, AffineMap map) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return nullptr;
  Type elementType = getElementTypeOrSelf(value.getType());
  if (std::optional<double> splat = getSplatFloat(value))
    return getConst(*splat, elementType);
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (std::optional<double> splat = getSplatFloat(fill.getInputs()[0]))
      return getConst(*splat, elementType);
    return nullptr;
  }
  return evaluateOp(op, cast<OpResult>(value).getResultNumber(), map);
}

TensorExpr *TensorExprBuilder::evaluateReshape(Value source,
                                               RankedTensorType resultType,
                                               AffineMap map) {
  // Only reshapes that insert or drop unit dims: the non-unit dims of the
  // source and the result correspond one to one, in order.
  auto sourceType = dyn_cast<RankedTensorType>(source.getType());
  if (!sourceType)
    return nullptr;
  SmallVector<int64_t> resultDims, sourceDims;
  for (auto [i, size] : llvm::enumerate(resultType.getShape()))
    if (size != 1)
      resultDims.push_back(i);
  for (auto [i, size] : llvm::enumerate(sourceType.getShape()))
    if (size != 1)
      sourceDims.push_back(i);
  if (resultDims.size() != sourceDims.size())
    return nullptr;
  SmallVector<AffineExpr> results(sourceType.getRank(),
                                  getAffineConstantExpr(0, context));
  for (auto [r, s] : llvm::zip_equal(resultDims, sourceDims)) {
    int64_t resultSize = resultType.getDimSize(r);
    int64_t sourceSize = sourceType.getDimSize(s);
    // Dynamic sizes can only be paired by a reassociation (tensor ops),
    // which the caller has checked.
    if (resultSize != sourceSize)
      return nullptr;
    results[s] = map.getResult(r);
  }
  return evaluate(source,
                  AffineMap::get(map.getNumDims(), 0, results, context));
}

/// True when every reassociation group of a tensor reshape holds at most one
/// dim that is not statically 1.
static bool hasOneNonUnitDimPerGroup(ArrayRef<ReassociationIndices> groups,
                                     ArrayRef<int64_t> expandedShape) {
  for (const ReassociationIndices &group : groups)
    if (llvm::count_if(group,
                       [&](int64_t d) { return expandedShape[d] != 1; }) > 1)
      return false;
  return true;
}

TensorExpr *TensorExprBuilder::evaluateOp(Operation *op, unsigned resultIndex,
                                          AffineMap map) {
  auto resultType =
      cast<RankedTensorType>(op->getResult(resultIndex).getType());
  auto operandExpr = [&](Value operand) { return evaluate(operand, map); };

  if (auto cast = dyn_cast<tensor::CastOp>(op)) {
    auto sourceType = dyn_cast<RankedTensorType>(cast.getSource().getType());
    if (!sourceType || sourceType.getRank() != resultType.getRank())
      return nullptr;
    return evaluate(cast.getSource(), map);
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    if (!hasOneNonUnitDimPerGroup(expand.getReassociationIndices(),
                                  resultType.getShape()))
      return nullptr;
    return evaluateReshape(expand.getSrc(), resultType, map);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    if (!hasOneNonUnitDimPerGroup(collapse.getReassociationIndices(),
                                  collapse.getSrcType().getShape()))
      return nullptr;
    return evaluateReshape(collapse.getSrc(), resultType, map);
  }
  if (auto reshape = dyn_cast<tosa::ReshapeOp>(op)) {
    auto sourceType = dyn_cast<RankedTensorType>(reshape.getInput1().getType());
    if (!sourceType || !sourceType.hasStaticShape() ||
        !resultType.hasStaticShape())
      return nullptr;
    return evaluateReshape(reshape.getInput1(), resultType, map);
  }
  if (auto identity = dyn_cast<tosa::IdentityOp>(op))
    return evaluate(identity.getInput1(), map);
  if (auto reduce = dyn_cast<tosa::ReduceSumOp>(op)) {
    // The reduced axis of a rank-R input is frame dim `axis`.
    auto inputType = cast<RankedTensorType>(reduce.getInput().getType());
    int64_t axis = reduce.getAxis();
    if (inputType.getRank() != getRank() || axis < 0 || axis >= getRank())
      return nullptr;
    AffineExpr dim = getAffineDimExpr(axis, context);
    if (llvm::is_contained(map.getResults(), dim))
      return nullptr;
    SmallVector<AffineExpr> results(map.getResults());
    results[axis] = dim;
    TensorExpr *operand = evaluate(
        reduce.getInput(), AffineMap::get(getRank(), 0, results, context));
    if (!operand)
      return nullptr;
    return getSum(operand, uint64_t(1) << axis);
  }
  if (isa<linalg::LinalgOp>(op))
    return evaluateLinalg(op, resultIndex, map);
  if (op->getNumResults() != 1)
    return nullptr;
  // Tensor-level arith/math and TOSA elementwise ops: operands are accessed
  // like the result (TOSA's implicit broadcast is the unit-dim
  // normalization of the operand's map).
  for (Value operand : op->getOperands()) {
    auto operandType = dyn_cast<RankedTensorType>(operand.getType());
    if (operandType && operandType.getRank() != resultType.getRank())
      if (!isa<tosa::MulOp>(op) || operand != op->getOperand(2))
        return nullptr;
  }
  return buildElementwise(op, llvm::to_vector(op->getOperands()), operandExpr);
}

TensorExpr *TensorExprBuilder::evaluateLinalg(Operation *op,
                                              unsigned resultIndex,
                                              AffineMap map) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (!linalgOp.hasPureTensorSemantics() || linalgOp.hasIndexSemantics())
    return nullptr;
  int64_t rank = getRank();
  unsigned numLoops = linalgOp.getNumLoops();
  SmallVector<AffineMap> indexingMaps = linalgOp.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  SmallVector<int64_t> loopRanges = linalgOp.getStaticLoopRanges();
  OpOperand *init = linalgOp.getDpsInitOperand(resultIndex);
  AffineMap outMap = linalgOp.getMatchingIndexingMap(init);
  AffineExpr zero = getAffineConstantExpr(0, context);

  // Frame coordinate of every loop: parallel loops from the result's access,
  // reduction loops positionally from a rank-R input that they index.
  SmallVector<AffineExpr> loopToFrame(numLoops);
  for (auto [position, expr] : llvm::enumerate(outMap.getResults())) {
    AffineExpr frameExpr = map.getResult(position);
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      AffineExpr &slot = loopToFrame[dim.getPosition()];
      if (slot && slot != frameExpr)
        return nullptr;
      slot = frameExpr;
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return nullptr;
  }
  uint64_t reducedDims = 0;
  for (unsigned loop = 0; loop < numLoops; ++loop) {
    if (iterators[loop] != utils::IteratorType::reduction)
      continue;
    if (loopToFrame[loop])
      return nullptr;
    std::optional<int64_t> frameDim;
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      if (!type || type.getRank() != rank)
        continue;
      AffineMap inputMap = linalgOp.getMatchingIndexingMap(input);
      for (auto [position, expr] : llvm::enumerate(inputMap.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim || dim.getPosition() != loop)
          continue;
        if (frameDim && *frameDim != static_cast<int64_t>(position))
          return nullptr;
        frameDim = position;
      }
    }
    if (!frameDim)
      return nullptr;
    AffineExpr dim = getAffineDimExpr(*frameDim, context);
    if (llvm::is_contained(map.getResults(), dim))
      return nullptr;
    loopToFrame[loop] = frameShape[*frameDim] == 1 ? zero : dim;
    reducedDims |= uint64_t(1) << *frameDim;
  }
  for (unsigned loop = 0; loop < numLoops; ++loop) {
    if (loopRanges[loop] == 1)
      loopToFrame[loop] = zero;
    if (!loopToFrame[loop])
      return nullptr;
  }
  AffineMap loopMap = AffineMap::get(rank, 0, loopToFrame, context);

  Block *body = linalgOp.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield)
    return nullptr;
  unsigned numInputs = linalgOp.getNumDpsInputs();
  bool isReduction = reducedDims != 0;
  Type resultElementType =
      getElementTypeOrSelf(op->getResult(resultIndex).getType());
  auto blockArgExpr = [&](Value arg) -> TensorExpr * {
    unsigned index = cast<BlockArgument>(arg).getArgNumber();
    OpOperand &operand = op->getOpOperand(index);
    if (index >= numInputs && isReduction && index - numInputs == resultIndex)
      return getAcc(resultElementType);
    Value operandValue = operand.get();
    if (!isa<ShapedType>(operandValue.getType())) {
      if (std::optional<double> splat = getSplatFloat(operandValue))
        return getConst(*splat, operandValue.getType());
      if (!isSupportedFloat(operandValue.getType()))
        return nullptr;
      return getLeaf(operandValue, AffineMap::get(rank, 0, {}, context),
                     operandValue.getType());
    }
    AffineMap operandMap =
        linalgOp.getMatchingIndexingMap(&operand).compose(loopMap);
    return evaluate(operandValue, operandMap);
  };
  DenseMap<Value, TensorExpr *> environment;
  TensorExpr *yielded =
      evaluateScalar(yield.getOperand(resultIndex), environment, blockArgExpr);
  if (!yielded)
    return nullptr;
  if (!isReduction)
    return yielded->containsAcc ? nullptr : yielded;

  // Reduction body: acc + term, with a zero initial value.
  if (!yielded->is(TensorExprKind::Add))
    return nullptr;
  TensorExpr *lhs = yielded->getOperand(0), *rhs = yielded->getOperand(1);
  TensorExpr *term = lhs->is(TensorExprKind::Acc)   ? rhs
                     : rhs->is(TensorExprKind::Acc) ? lhs
                                                    : nullptr;
  if (!term || term->containsAcc)
    return nullptr;
  TensorExpr *initExpr = evaluate(init->get(), map);
  if (!initExpr || !initExpr->is(TensorExprKind::Const) ||
      initExpr->constant != 0.0)
    return nullptr;
  return getSum(term, reducedDims);
}

TensorExpr *TensorExprBuilder::evaluateScalar(
    Value scalar, DenseMap<Value, TensorExpr *> &environment,
    function_ref<TensorExpr *(Value)> blockArgExpr) {
  auto it = environment.find(scalar);
  if (it != environment.end())
    return it->second;
  TensorExpr *expr = nullptr;
  Operation *op = scalar.getDefiningOp();
  auto arg = dyn_cast<BlockArgument>(scalar);
  Block *body = nullptr;
  if (arg)
    body = arg.getOwner();
  else if (op)
    body = op->getBlock();
  // Inside the body: block arguments and ops; outside: captured scalars.
  bool inBody = body && isa_and_nonnull<linalg::LinalgOp>(body->getParentOp());
  if (arg && inBody) {
    expr = blockArgExpr(scalar);
  } else if (std::optional<double> splat = getSplatFloat(scalar)) {
    expr = isSupportedFloat(scalar.getType())
               ? getConst(*splat, scalar.getType())
               : nullptr;
  } else if (op && inBody) {
    expr = buildElementwise(
        op, llvm::to_vector(op->getOperands()), [&](Value operand) {
          return evaluateScalar(operand, environment, blockArgExpr);
        });
  } else if (isSupportedFloat(scalar.getType())) {
    expr = getLeaf(scalar, AffineMap::get(getRank(), 0, {}, context),
                   scalar.getType());
  }
  environment[scalar] = expr;
  return expr;
}

/// True when `value` is a constant whose elements are all integer zero.
static bool isZeroIntConstant(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr))
    return llvm::all_of(dense.getValues<APInt>(),
                        [](const APInt &v) { return v.isZero(); });
  return false;
}

TensorExpr *TensorExprBuilder::buildElementwise(
    Operation *op, ArrayRef<Value> operands,
    function_ref<TensorExpr *(Value)> operandExpr) {
  if (op->getNumResults() != 1)
    return nullptr;
  Type resultType = getElementTypeOrSelf(op->getResult(0).getType());
  if (!isSupportedFloat(resultType))
    return nullptr;
  using Kind = TensorExprKind;
  auto unary = [&](Kind kind) -> TensorExpr * {
    TensorExpr *a = operandExpr(operands[0]);
    return a ? getUnary(kind, a) : nullptr;
  };
  auto binary = [&](Kind kind) -> TensorExpr * {
    TensorExpr *a = operandExpr(operands[0]);
    TensorExpr *b = a ? operandExpr(operands[1]) : nullptr;
    return b ? getBinary(kind, a, b) : nullptr;
  };
  auto convert = [&]() -> TensorExpr * {
    if (!isSupportedFloat(getElementTypeOrSelf(operands[0].getType())))
      return nullptr;
    TensorExpr *a = operandExpr(operands[0]);
    return a ? getCast(a, resultType) : nullptr;
  };
  auto pow = [&](Value exponentValue) -> TensorExpr * {
    TensorExpr *base = operandExpr(operands[0]);
    TensorExpr *exponent = base ? operandExpr(exponentValue) : nullptr;
    if (!exponent || !exponent->is(Kind::Const))
      return nullptr;
    return getPow(base, exponent->constant);
  };

  return llvm::TypeSwitch<Operation *, TensorExpr *>(op)
      .Case<arith::AddFOp, tosa::AddOp>([&](auto) { return binary(Kind::Add); })
      .Case<arith::SubFOp, tosa::SubOp>([&](auto) { return binary(Kind::Sub); })
      .Case<arith::MulFOp>([&](auto) { return binary(Kind::Mul); })
      .Case<tosa::MulOp>([&](tosa::MulOp mul) -> TensorExpr * {
        if (!isZeroIntConstant(mul.getShift()))
          return nullptr;
        return binary(Kind::Mul);
      })
      .Case<arith::DivFOp>([&](auto) { return binary(Kind::Div); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp, tosa::MaximumOp>(
          [&](auto) { return binary(Kind::Max); })
      .Case<arith::MinimumFOp, arith::MinNumFOp, tosa::MinimumOp>(
          [&](auto) { return binary(Kind::Min); })
      .Case<arith::NegFOp>([&](auto) { return unary(Kind::Neg); })
      .Case<math::AbsFOp, tosa::AbsOp>([&](auto) { return unary(Kind::Abs); })
      .Case<math::SqrtOp>([&](auto) { return unary(Kind::Sqrt); })
      .Case<math::RsqrtOp, tosa::RsqrtOp>(
          [&](auto) { return unary(Kind::Rsqrt); })
      .Case<tosa::ReciprocalOp>([&](auto) { return unary(Kind::Recip); })
      .Case<math::TanhOp, tosa::TanhOp>([&](auto) { return unary(Kind::Tanh); })
      .Case<math::ExpOp, tosa::ExpOp>([&](auto) { return unary(Kind::Exp); })
      .Case<arith::ExtFOp, arith::TruncFOp, tosa::CastOp>(
          [&](auto) { return convert(); })
      .Case<math::PowFOp, tosa::PowOp>([&](auto) { return pow(operands[1]); })
      .Case<math::FPowIOp>([&](math::FPowIOp fpowi) -> TensorExpr * {
        APInt exponent;
        if (!matchPattern(fpowi.getRhs(), m_ConstantInt(&exponent)))
          return nullptr;
        TensorExpr *base = operandExpr(operands[0]);
        return base ? getPow(base, static_cast<double>(exponent.getSExtValue()))
                    : nullptr;
      })
      .Case<tosa::ClampOp>([&](tosa::ClampOp clamp) -> TensorExpr * {
        // clamp(a, lo, hi) with hi at the top of the type (or +inf) is
        // max(a, lo); with lo at the bottom it is min(a, hi).
        auto lo = dyn_cast<FloatAttr>(clamp.getMinValAttr());
        auto hi = dyn_cast<FloatAttr>(clamp.getMaxValAttr());
        if (!lo || !hi)
          return nullptr;
        double largest =
            APFloat::getLargest(cast<FloatType>(resultType).getFloatSemantics())
                .convertToDouble();
        TensorExpr *a = operandExpr(operands[0]);
        if (!a)
          return nullptr;
        if (hi.getValueAsDouble() >= largest)
          return getBinary(Kind::Max, a,
                           getConst(lo.getValueAsDouble(), resultType));
        if (lo.getValueAsDouble() <= -largest)
          return getBinary(Kind::Min, a,
                           getConst(hi.getValueAsDouble(), resultType));
        return nullptr;
      })
      .Case<arith::SelectOp>([&](arith::SelectOp select) -> TensorExpr * {
        // select(a < b, b, a) is max(a, b) (a clamp from below), and the
        // mirrored forms; NaN operands may pick either side.
        auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
        if (!cmp)
          return nullptr;
        TensorExpr *l = operandExpr(cmp.getLhs());
        TensorExpr *r = l ? operandExpr(cmp.getRhs()) : nullptr;
        TensorExpr *t = r ? operandExpr(select.getTrueValue()) : nullptr;
        TensorExpr *f = t ? operandExpr(select.getFalseValue()) : nullptr;
        if (!f)
          return nullptr;
        using P = arith::CmpFPredicate;
        P pred = cmp.getPredicate();
        bool less = pred == P::OLT || pred == P::ULT || pred == P::OLE ||
                    pred == P::ULE;
        bool greater = pred == P::OGT || pred == P::UGT || pred == P::OGE ||
                       pred == P::UGE;
        if ((less && t == r && f == l) || (greater && t == l && f == r))
          return getBinary(Kind::Max, l, r);
        if ((less && t == l && f == r) || (greater && t == r && f == l))
          return getBinary(Kind::Min, l, r);
        return nullptr;
      })
      .Default([](Operation *) { return nullptr; });
}
