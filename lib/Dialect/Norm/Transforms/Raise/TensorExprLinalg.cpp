//===- TensorExprLinalg.cpp - Evaluate linalg ops to TensorExprs ----------===//
//
// The part of the tensor evaluator that reads op bodies: linalg ops
// (generic and named, with their bodies; sum and max reductions), scalar
// arith/math ops inside them, and the elementwise expression of every op
// the evaluator accepts.
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

TensorExpr *TensorExprBuilder::evaluateLinalg(Operation *op,
                                              unsigned resultIndex,
                                              AffineMap map) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  // Index semantics are fine for a result that does not read the index
  // (torch-mlir's amax is a max and argmax pair: the max is evaluated, a
  // `linalg.index` is not).
  if (!linalgOp.hasPureTensorSemantics())
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
    // In a reduction, an output's block argument is its running
    // accumulator: this result's is Acc; another result's is not its
    // initial value, and is not expressed.
    if (index >= numInputs && isReduction)
      return index - numInputs == resultIndex ? getAcc(resultElementType)
                                              : nullptr;
    Value operandValue = operand.get();
    if (!isa<ShapedType>(operandValue.getType())) {
      if (std::optional<double> splat = getSplatFloat(operandValue))
        return getConst(*splat, operandValue.getType());
      if (!isSupportedFloat(operandValue.getType()))
        return nullptr;
      return getLeaf(operandValue, AffineMap::get(rank, 0, {}, context),
                     operandValue.getType());
    }
    // An integer splat (PyTorch's `1 - t * t` reads its 1 as an i64
    // tensor): a constant, exact in f64, that only a conversion to float
    // uses.
    if (std::optional<double> integer = getSplatInteger(operandValue))
      return getConst(*integer, Float64Type::get(context));
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

  // Reduction body: acc + term with a zero initial value, or max(acc, term)
  // (maximumf, maxnumf, compare-and-select), which is max(init, max of the
  // terms): -inf and, for terms >= 0 such as |y|, 0 leave the maximum.
  if (!yielded->is(TensorExprKind::Add) && !yielded->is(TensorExprKind::Max))
    return nullptr;
  TensorExpr *lhs = yielded->getOperand(0), *rhs = yielded->getOperand(1);
  TensorExpr *term = lhs->is(TensorExprKind::Acc)   ? rhs
                     : rhs->is(TensorExprKind::Acc) ? lhs
                                                    : nullptr;
  if (!term || term->containsAcc)
    return nullptr;
  TensorExpr *initExpr = evaluate(init->get(), map);
  if (!initExpr)
    return nullptr;
  if (yielded->is(TensorExprKind::Max))
    return getBinary(TensorExprKind::Max, getReduceMax(term, reducedDims),
                     initExpr);
  if (!initExpr->is(TensorExprKind::Const) || initExpr->constant != 0.0)
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
  } else if (std::optional<double> integer = getSplatInteger(scalar)) {
    expr = getConst(*integer, Float64Type::get(context));
  } else if (std::optional<std::pair<Value, uint64_t>> count =
                 !inBody ? matchDimCount(scalar, getRank()) : std::nullopt) {
    expr = getDimSize(count->first, count->second, scalar.getType());
  } else if (op && inBody) {
    expr = buildElementwise(
        op, llvm::to_vector(op->getOperands()), [&](Value operand) {
          return evaluateScalar(operand, environment, blockArgExpr);
        });
  } else if (op && isa<arith::DivFOp, arith::MulFOp>(op) &&
             (expr = evaluateCountArithmetic(op))) {
    // Arithmetic on an element count outside the body (`1 / N`).
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
  // Conversions may produce the quantized type of a root; every other op
  // computes in a supported float type.
  bool quantizingConversion =
      isQuantizedType(resultType) &&
      ((isa<FloatType>(resultType) && isa<arith::TruncFOp, tosa::CastOp>(op)) ||
       (resultType.isSignlessInteger() && isa<arith::FPToSIOp>(op)));
  if (!isSupportedFloat(resultType) && !quantizingConversion)
    return nullptr;
  // Only round-to-nearest-even truncations are a Cast.
  if (auto trunc = dyn_cast<arith::TruncFOp>(op))
    if (std::optional<arith::RoundingMode> mode = trunc.getRoundingmode())
      if (*mode != arith::RoundingMode::to_nearest_even)
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
    // A block-scale builder also reads narrow floats back (`extf` of an
    // f8E4M3FN scale).
    Type from = getElementTypeOrSelf(operands[0].getType());
    bool narrowSource = blockScaleOps && isa<arith::ExtFOp>(op) &&
                        isa<FloatType>(from) && isQuantizedType(from);
    if (!isSupportedFloat(from) && !narrowSource)
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
      .Case<arith::SIToFPOp, arith::UIToFPOp>([&](auto) -> TensorExpr * {
        // Only of integer constants (see getSplatInteger) and of element
        // counts.
        TensorExpr *a = operandExpr(operands[0]);
        if (a && a->is(Kind::DimSize))
          return getDimSize(a->value, a->reducedDims, resultType);
        if (!a || !a->is(Kind::Const))
          return nullptr;
        // The constant lost its width: a negative one is not known as
        // unsigned.
        if (isa<arith::UIToFPOp>(op) && a->constant < 0.0)
          return nullptr;
        return getConst(a->constant, resultType);
      })
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
      .Case<math::RoundEvenOp>([&](auto) { return unary(Kind::RoundEven); })
      .Case<math::FloorOp>([&](auto) {
        return blockScaleOps ? unary(Kind::Floor) : nullptr;
      })
      .Case<math::CeilOp>([&](auto) {
        return blockScaleOps ? unary(Kind::Ceil) : nullptr;
      })
      .Case<math::Log2Op>([&](auto) {
        return blockScaleOps ? unary(Kind::Log2) : nullptr;
      })
      .Case<math::Exp2Op>([&](auto) {
        return blockScaleOps ? unary(Kind::Exp2) : nullptr;
      })
      .Case<arith::FPToSIOp>([&](auto) -> TensorExpr * {
        if (!isSupportedFloat(getElementTypeOrSelf(operands[0].getType())))
          return nullptr;
        TensorExpr *a = operandExpr(operands[0]);
        return a ? getFPToSI(a, cast<IntegerType>(resultType)) : nullptr;
      })
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
        // Both bounds inside the type (a saturation): min(max(a, lo), hi).
        return getBinary(Kind::Min,
                         getBinary(Kind::Max, a,
                                   getConst(lo.getValueAsDouble(), resultType)),
                         getConst(hi.getValueAsDouble(), resultType));
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
        // (a == b) ? t : f, ordered (false on NaN); `une` is its negation.
        if (blockScaleOps && pred == P::OEQ)
          return getSelectEq(l, r, t, f);
        if (blockScaleOps && pred == P::UNE)
          return getSelectEq(l, r, f, t);
        return nullptr;
      })
      .Default([](Operation *) { return nullptr; });
}
