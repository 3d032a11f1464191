//===- TensorExprEvaluator.cpp - Evaluate tensor IR to TensorExprs --------===//
//
// Evaluates tensor values to hash-consed element-level expressions: TOSA
// elementwise and reduction ops, tensor-level arith/math ops, reshapes of
// unit dims and constants (linalg ops and the elementwise expressions of
// every op are in TensorExprLinalg.cpp). Evaluations are memoized per
// builder and remember what they went through, so a chain can be walked
// again without evaluating it anew.
//
//===----------------------------------------------------------------------===//

#include "TensorExprEvaluator.h"

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

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::tensor_expr;

/// Deeper operand chains are cut into leaves (they cannot be part of one
/// normalization anyway) so the evaluator never recurses without bound.
/// Roots evaluated in program order hit the memo after a few levels.
static constexpr unsigned kMaxDepth = 256;
/// Largest number of nodes one outermost evaluation creates before it stops
/// expanding (a bound on the work for one root, not for the builder).
static constexpr unsigned kMaxNodes = 1 << 16;

/// True for the element types of a quantized root: floats narrower than f16
/// and integers.
bool tensor_expr::isQuantizedType(Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return floatType.getWidth() < 16;
  return isa<IntegerType>(type);
}

//===----------------------------------------------------------------------===//
// Evaluation of tensor values
//===----------------------------------------------------------------------===//

Value mlir::norm::castToShape(OpBuilder &b, Location loc, Value value,
                              ArrayRef<int64_t> shape) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getShape() == shape)
    return value;
  if (failed(verifyCompatibleShape(from.getShape(), shape)))
    return {};
  return tensor::CastOp::create(b, loc, from.clone(shape), value);
}

TensorExpr *TensorExprBuilder::evaluate(Value value) {
  return evaluate(value, identityMap);
}

TensorExpr *TensorExprBuilder::evaluate(Value value, AffineMap map) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return nullptr;
  // Quantized values (narrow floats, integers) only at the root: inside a
  // chain they are leaves of the ops that read them, except narrow floats
  // for a block-scale builder (NVFP4's f8E4M3FN scales, read back by extf).
  Type elementType = type.getElementType();
  bool narrowFloat = isa<FloatType>(elementType) && isQuantizedType(elementType);
  if (!isSupportedFloat(elementType) &&
      !(evaluationStack.empty() && isQuantizedType(elementType)) &&
      !(blockScaleOps && narrowFloat))
    return nullptr;
  map = normalizeMap(map, type.getShape());
  if (!map)
    return nullptr;
  auto [it, inserted] =
      evaluationIndex.try_emplace({value, map}, evaluations.size());
  unsigned index = it->second;
  // Memoized or not, the evaluation in progress made this one: record it,
  // so that walking from a root later sees what evaluating it went through.
  if (!evaluationStack.empty()) {
    SmallVector<unsigned, 2> &uses = evaluations[evaluationStack.back()].uses;
    if (!llvm::is_contained(uses, index))
      uses.push_back(index);
  }
  if (!inserted) {
    // Still in progress only on a cycle (graph regions): cut it with a leaf.
    TensorExpr *expr = evaluations[index].expr;
    return expr ? expr : getLeaf(value, map, type.getElementType());
  }
  evaluations.emplace_back();
  evaluations.back().value = value;
  evaluations.back().map = map;
  evaluationsOfValue[value].push_back(index);

  // The depth and node limits bound one root's evaluation, not the builder:
  // a builder shared by every root of a function grows with the function.
  if (evaluationStack.empty())
    nodesAtStart = numNodes;
  TensorExpr *expr = nullptr;
  if (evaluationStack.size() < kMaxDepth &&
      numNodes - nodesAtStart < kMaxNodes) {
    evaluationStack.push_back(index);
    expr = evaluateImpl(value, map);
    evaluationStack.pop_back();
  }
  if (!expr)
    expr = getLeaf(value, map, type.getElementType());

  // Fetched again: the evaluations made above may have moved the records.
  TensorExprEvaluation &evaluation = evaluations[index];
  evaluation.expr = expr;
  // A shape that differs from the frame's only where one of them is
  // dynamic holds the same elements (the ops that relate them require equal
  // sizes at run time): castToShape makes it the frame's type.
  evaluation.materializes =
      map == identityMap &&
      succeeded(verifyCompatibleShape(type.getShape(), frameShape));
  evaluation.reachesAnchor = expr->is(TensorExprKind::Sum) ||
                             expr->is(TensorExprKind::Tanh) ||
                             llvm::any_of(evaluation.uses, [&](unsigned use) {
                               return evaluations[use].reachesAnchor;
                             });
  return expr;
}

const TensorExprEvaluation *TensorExprBuilder::lookup(Value value) const {
  auto it = evaluationIndex.find({value, identityMap});
  if (it == evaluationIndex.end() || !evaluations[it->second].expr)
    return nullptr;
  return &evaluations[it->second];
}

void TensorExprBuilder::walkEvaluations(
    const TensorExprEvaluation &root,
    function_ref<bool(const TensorExprEvaluation &,
                      const TensorExprEvaluation &)>
        follow,
    function_ref<void(const TensorExprEvaluation &)> visit) {
  // Iterative, so that long operand chains need no deep recursion.
  struct Frame {
    unsigned index;
    unsigned nextUse;
  };
  walkMarks.resize(evaluations.size(), 0);
  ++walkNumber;
  unsigned rootIndex = &root - evaluations.data();
  walkMarks[rootIndex] = walkNumber;
  SmallVector<Frame> stack{{rootIndex, 0}};
  while (!stack.empty()) {
    Frame &frame = stack.back();
    const TensorExprEvaluation &evaluation = evaluations[frame.index];
    if (frame.nextUse < evaluation.uses.size()) {
      unsigned use = evaluation.uses[frame.nextUse++];
      const TensorExprEvaluation &used = evaluations[use];
      if (walkMarks[use] == walkNumber || !used.expr ||
          !follow(evaluation, used))
        continue;
      walkMarks[use] = walkNumber;
      stack.push_back({use, 0});
      continue;
    }
    visit(evaluation);
    stack.pop_back();
  }
}

void TensorExprBuilder::forget(Value value) {
  auto it = evaluationsOfValue.find(value);
  if (it == evaluationsOfValue.end())
    return;
  for (unsigned index : it->second)
    evaluationIndex.erase({value, evaluations[index].map});
  evaluationsOfValue.erase(it);
}

/// The width of the integers of `type` (index: its 64-bit storage).
static unsigned getIntegerWidth(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isIndex() ? IndexType::kInternalStorageBitWidth
                           : element.getIntOrFloatBitWidth();
}

/// The value of an integer constant, seen through index casts and integer
/// extensions, each applied as it converts: truncated or sign-extended
/// (`index_cast`, `extsi`), truncated or zero-extended (`index_castui`,
/// `extui`) to its result's width.
static std::optional<APInt> getIntegerConstant(Value value) {
  SmallVector<Operation *> casts;
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp>(op))
      break;
    casts.push_back(op);
    value = op->getOperand(0);
  }
  APInt integer;
  if (!matchPattern(value, m_ConstantInt(&integer)))
    return std::nullopt;
  for (Operation *op : llvm::reverse(casts)) {
    unsigned width = getIntegerWidth(op->getResult(0).getType());
    integer = isa<arith::IndexCastOp, arith::ExtSIOp>(op)
                  ? integer.sextOrTrunc(width)
                  : integer.zextOrTrunc(width);
  }
  return integer;
}

/// `integer` converted to the float type `type` as sitofp (`isSigned`) or
/// uitofp do, rounding to nearest even; none for types the evaluator does
/// not compute in.
static std::optional<double> convertIntegerToFloat(const APInt &integer,
                                                   bool isSigned, Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  if (!floatType || !isSupportedFloat(floatType))
    return std::nullopt;
  APFloat converted(floatType.getFloatSemantics());
  converted.convertFromAPInt(integer, isSigned, APFloat::rmNearestTiesToEven);
  return converted.convertToDouble();
}

/// The splat float value of a constant, if it is one; also an integer
/// constant converted by sitofp/uitofp (an element count, say).
/// The value of an integer constant or integer splat tensor constant, when
/// f64 holds it exactly.
std::optional<double> tensor_expr::getSplatInteger(Value value) {
  Attribute attr;
  if (!isa<IntegerType>(getElementTypeOrSelf(value.getType())) ||
      !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  APInt integer;
  if (auto intAttr = dyn_cast<IntegerAttr>(attr))
    integer = intAttr.getValue();
  else if (auto dense = dyn_cast<DenseIntElementsAttr>(attr);
           dense && dense.isSplat())
    integer = dense.getSplatValue<APInt>();
  else
    return std::nullopt;
  if (integer.getBitWidth() > 64)
    return std::nullopt;
  int64_t v = integer.getSExtValue();
  if (v > (int64_t(1) << 53) || v < -(int64_t(1) << 53))
    return std::nullopt;
  return static_cast<double>(v);
}

std::optional<double> tensor_expr::getSplatFloat(Value value) {
  if (auto convert = value.getDefiningOp<arith::SIToFPOp>())
    if (std::optional<APInt> integer = getIntegerConstant(convert.getIn()))
      return convertIntegerToFloat(*integer, /*isSigned=*/true,
                                   value.getType());
  if (auto convert = value.getDefiningOp<arith::UIToFPOp>())
    if (std::optional<APInt> integer = getIntegerConstant(convert.getIn()))
      return convertIntegerToFloat(*integer, /*isSigned=*/false,
                                   value.getType());
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

/// `value` as the number of elements over some dims of a tensor of rank
/// `rank`: `tensor.dim`s of that tensor (constant dims), multiplied
/// (`arith.muli`), through index and integer casts to 64 bits (which keep
/// every count) and `sitofp`/`uitofp` (the count rounded to the float type,
/// which the users of DimSize check). Returns the tensor and the dims.
std::optional<std::pair<Value, uint64_t>>
tensor_expr::matchDimCount(Value value, int64_t rank) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(op)) {
    if (getIntegerWidth(op->getResult(0).getType()) < 64)
      return std::nullopt;
    return matchDimCount(op->getOperand(0), rank);
  }
  if (isa<arith::SIToFPOp, arith::UIToFPOp>(op))
    return matchDimCount(op->getOperand(0), rank);
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!type || type.getRank() != rank || !index || *index < 0 ||
        *index >= rank)
      return std::nullopt;
    return std::make_pair(dim.getSource(), uint64_t(1) << *index);
  }
  if (auto mul = dyn_cast<arith::MulIOp>(op)) {
    auto lhs = matchDimCount(mul.getLhs(), rank);
    auto rhs = matchDimCount(mul.getRhs(), rank);
    if (!lhs || !rhs || lhs->first != rhs->first || (lhs->second & rhs->second))
      return std::nullopt;
    return std::make_pair(lhs->first, lhs->second | rhs->second);
  }
  return std::nullopt;
}

TensorExpr *TensorExprBuilder::evaluateCountArithmetic(Operation *op) {
  SmallVector<TensorExpr *, 2> operands;
  bool count = false;
  for (Value operand : op->getOperands()) {
    TensorExpr *e = nullptr;
    if (std::optional<double> splat = getSplatFloat(operand))
      e = getConst(*splat, operand.getType());
    else if (auto dims = matchDimCount(operand, getRank()))
      e = getDimSize(dims->first, dims->second, operand.getType());
    if (!e)
      return nullptr;
    count |= e->is(TensorExprKind::DimSize);
    operands.push_back(e);
  }
  if (!count)
    return nullptr;
  return getBinary(isa<arith::DivFOp>(op) ? TensorExprKind::Div
                                          : TensorExprKind::Mul,
                   operands[0], operands[1]);
}

TensorExpr *TensorExprBuilder::evaluateImpl(Value value, AffineMap map) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return nullptr;
  Type elementType = getElementTypeOrSelf(value.getType());
  if (!isSupportedFloat(elementType))
    return evaluateOp(op, cast<OpResult>(value).getResultNumber(), map);
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
  if (auto tile = dyn_cast<tosa::TileOp>(op)) {
    // A tile of unit dims is a broadcast (torch-mlir's TOSA `expand`);
    // repeating a longer dim is not an access map.
    auto inputType = dyn_cast<RankedTensorType>(tile.getInput1().getType());
    if (!inputType || inputType.getRank() != resultType.getRank() ||
        static_cast<int64_t>(map.getNumResults()) != resultType.getRank())
      return nullptr;
    SmallVector<AffineExpr> results;
    for (int64_t i = 0; i < inputType.getRank(); ++i) {
      int64_t size = inputType.getDimSize(i);
      if (size == 1)
        results.push_back(getAffineConstantExpr(0, context));
      else if (size == resultType.getDimSize(i) && !ShapedType::isDynamic(size))
        results.push_back(map.getResult(i));
      else
        return nullptr;
    }
    return evaluate(tile.getInput1(),
                    AffineMap::get(map.getNumDims(), 0, results, context));
  }
  if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp>(op)) {
    // The reduced axis of a rank-R input is frame dim `axis`.
    Value input = op->getOperand(0);
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t axis = 0;
    if (auto sum = dyn_cast<tosa::ReduceSumOp>(op))
      axis = sum.getAxis();
    else
      axis = cast<tosa::ReduceMaxOp>(op).getAxis();
    if (inputType.getRank() != getRank() || axis < 0 || axis >= getRank())
      return nullptr;
    AffineExpr dim = getAffineDimExpr(axis, context);
    if (llvm::is_contained(map.getResults(), dim))
      return nullptr;
    SmallVector<AffineExpr> results(map.getResults());
    results[axis] = dim;
    TensorExpr *operand =
        evaluate(input, AffineMap::get(getRank(), 0, results, context));
    if (!operand)
      return nullptr;
    if (isa<tosa::ReduceMaxOp>(op))
      return getReduceMax(operand, uint64_t(1) << axis);
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
