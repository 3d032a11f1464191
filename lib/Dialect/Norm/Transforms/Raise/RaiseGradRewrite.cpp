//===- RaiseGradRewrite.cpp - Gradient ops from matched gradients ---------===//
//
// Replaces a matched gradient (RaiseGradMatch.cpp) by norm.layer_norm_grad,
// norm.rms_norm_grad or norm.dyt_grad: the operands adapted to the op
// (reshaped, cast, converted), dx scaled and summed as the match says, the
// parameter gradients replaced, and what computed them erased.
//
//===----------------------------------------------------------------------===//

#include "RaiseGradInternal.h"
#include "RaiseMatcher.h"

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::raisegrad;

//===----------------------------------------------------------------------===//
// Operand adaptation
//===----------------------------------------------------------------------===//

/// The float tensor `value` with elements of type `element` (extf or truncf;
/// null between distinct types of one width).
static Value convertElements(OpBuilder &b, Location loc, Value value,
                             Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  Type from = type.getElementType();
  if (from == element)
    return value;
  if (getWidth(from) == getWidth(element))
    return {};
  auto target = RankedTensorType::get(type.getShape(), element);
  if (getWidth(from) < getWidth(element))
    return arith::ExtFOp::create(b, loc, target, value);
  return arith::TruncFOp::create(b, loc, target, value);
}

/// `value` reshaped (unit dims added or dropped), cast to `type`'s shape
/// and converted to `type`.
static Value adapt(OpBuilder &b, Location loc, Value value,
                   RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getRank() != type.getRank()) {
    int64_t smallRank = std::min(from.getRank(), type.getRank());
    // Unit dims join the next kept dim (or the last group).
    int64_t lead = std::max(from.getRank(), type.getRank()) - smallRank;
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < smallRank; ++i)
      groups.push_back({lead + i});
    for (int64_t i = lead - 1; i >= 0; --i) {
      if (groups.empty())
        break;
      groups.front().insert(groups.front().begin(), i);
    }
    if (groups.empty())
      return {};
    if (from.getRank() < type.getRank()) {
      // The added dims are type's (unit), the kept ones value's own.
      SmallVector<int64_t> shape(type.getShape());
      for (int64_t i = 0; i < smallRank; ++i)
        shape[lead + i] = from.getDimSize(i);
      value = tensor::ExpandShapeOp::create(b, loc, from.clone(shape), value,
                                            groups);
    } else {
      value = tensor::CollapseShapeOp::create(b, loc, value, groups);
    }
  }
  value = castToShape(b, loc, value, type.getShape());
  if (!value)
    return {};
  return convertElements(b, loc, value, type.getElementType());
}

/// `value` collapsed to the leading dims `shape` (dropping unit normalized
/// dims), cast to `shape` and converted to `element`.
static Value adaptRow(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> shape, Type element) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getRank() != static_cast<int64_t>(shape.size())) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
      groups.push_back({i});
    for (int64_t i = shape.size(); i < from.getRank(); ++i) {
      if (groups.empty())
        break;
      groups.back().push_back(i);
    }
    value = tensor::CollapseShapeOp::create(b, loc, value, groups);
  }
  value = castToShape(b, loc, value, shape);
  if (!value)
    return {};
  return convertElements(b, loc, value, element);
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

std::optional<std::pair<Value, Value>>
raisegrad::getInputs(Operation *rootOp, const GradMatch &m,
                     const GradMatcher &matcher) {
  Value dy = m.dy->value;
  Value x = m.x->is(Kind::Leaf) ? m.x->value : matcher.fullValues.lookup(m.x);
  if (!x)
    return std::nullopt;
  // dy and x have the root's type, or one that differs from it only in
  // dynamic sizes (then cast to it).
  auto xType = cast<RankedTensorType>(rootOp->getResult(0).getType());
  auto hasCompatibleType = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.getElementType() == xType.getElementType() &&
           succeeded(verifyCompatibleShape(type, xType));
  };
  if (!hasCompatibleType(dy) || !hasCompatibleType(x))
    return std::nullopt;
  return std::make_pair(dy, x);
}

namespace {

/// Records every op a builder inserts, so that giving up erases exactly
/// those (the block's own; nested ones go with them), and no op that was
/// there before.
struct InsertedOps : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

/// Builds the gradient op of a match and replaces the values it computes.
class GradRewriter {
public:
  GradRewriter(Operation *rootOp, const GradMatch &m,
               const GradMatcher &matcher, Value dy, Value x,
               ArrayRef<ParamGrad> paramGrads)
      : rootOp(rootOp), block(rootOp->getBlock()), m(m), matcher(matcher),
        paramGrads(paramGrads), dy(dy), x(x),
        xType(cast<RankedTensorType>(rootOp->getResult(0).getType())),
        ob(rootOp->getContext(), &inserted), loc(rootOp->getLoc()) {
    xElement = xType.getElementType();
    computeType =
        xElement.isF64() ? xElement : Float32Type::get(rootOp->getContext());
    rank = xType.getRank();
  }

  /// Finds the operands and where the op goes; false when an operand is not
  /// defined there.
  bool collectOperands();
  /// Creates the op and what adapts its operands; false, with what it
  /// inserted erased, when they cannot be adapted or it does not verify.
  bool createOp();
  /// Replaces dx and the parameter gradients by the op's results; returns
  /// the values replaced and their replacements.
  SmallVector<std::pair<Value, Value>> replaceUses();

  Operation *getOp() const { return gradOp; }

private:
  /// dx from the op's: times the row scale (normalized input), plus the
  /// tensors added to it.
  Value buildDx();
  bool rollback();

  Operation *rootOp;
  Block *block;
  const GradMatch &m;
  const GradMatcher &matcher;
  ArrayRef<ParamGrad> paramGrads;
  Value dy, x, mean, rstd, weight, alpha, scale;
  SmallVector<Value> extras;
  RankedTensorType xType;
  Type xElement, computeType;
  int64_t rank;
  bool hasBias = false;
  Operation *insertionPoint = nullptr;
  Operation *gradOp = nullptr;
  InsertedOps inserted;
  OpBuilder ob;
  Location loc;
};

} // namespace

bool GradRewriter::collectOperands() {
  // The op goes before the first of the values it replaces; what it uses
  // must be defined there.
  insertionPoint = rootOp;
  for (const ParamGrad &grad : paramGrads)
    if (Operation *def = grad.value.getDefiningOp())
      if (def->getBlock() == block && def->isBeforeInBlock(insertionPoint))
        insertionPoint = def;
  auto definedBefore = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return true;
    Operation *owner = block->findAncestorOpInBlock(*def);
    return !owner || owner->isBeforeInBlock(insertionPoint);
  };
  SmallVector<Value> needed{dy, x};
  if (m.mean) {
    mean = matcher.rowValues.lookup(m.mean);
    needed.push_back(mean);
  }
  if (m.rstd) {
    rstd = matcher.rowValues.lookup(m.rstd);
    needed.push_back(rstd);
  }
  if (m.weight)
    needed.push_back(m.weight->value);
  if (m.alpha)
    needed.push_back(m.alpha->value);
  // The tensors added to dx: read as is, or materialized sums of such.
  for (TensorExpr *extra : m.extras)
    extras.push_back(extra->is(Kind::Leaf) ? extra->value
                                           : matcher.fullValues.lookup(extra));
  needed.append(extras.begin(), extras.end());
  for (Value value : needed)
    if (!value || !definedBefore(value))
      return false;
  return true;
}

bool GradRewriter::rollback() {
  SmallVector<Operation *> own;
  for (Operation *op : inserted.ops)
    if (op->getBlock() == block)
      own.push_back(op);
  for (Operation *op : llvm::reverse(own))
    op->erase();
  return false;
}

bool GradRewriter::createOp() {
  ob.setInsertionPoint(insertionPoint);
  ArrayRef<int64_t> leadingShape = xType.getShape().take_front(m.axis);
  // dy, x and the tensors added to dx with the root's type.
  for (Value *value : {&dy, &x})
    *value = castToShape(ob, loc, *value, xType.getShape());
  for (Value &extra : extras)
    if (Value cast = castToShape(ob, loc, extra, xType.getShape()))
      extra = cast;
  if (m.weight) {
    auto weightType = cast<RankedTensorType>(m.weight->value.getType());
    auto target = RankedTensorType::get(xType.getShape().drop_front(m.axis),
                                        weightType.getElementType());
    weight = adapt(ob, loc, m.weight->value, target);
    if (!weight)
      return rollback();
  }
  if (mean) {
    mean = adaptRow(ob, loc, mean, leadingShape, computeType);
    if (!mean)
      return rollback();
  }
  if (rstd) {
    rstd = adaptRow(ob, loc, rstd, leadingShape, computeType);
    if (!rstd)
      return rollback();
  }
  // With the normalized input, the op gets mean 0 and rstd 1; dx is scaled
  // by rstd after it.
  if (m.normalizedInput) {
    scale = rstd;
    SmallVector<OpFoldResult> rowSizes(
        ArrayRef(tensor::getMixedSizes(ob, loc, x)).take_front(m.axis));
    auto rowConstant = [&](double value) {
      Value empty = tensor::EmptyOp::create(ob, loc, rowSizes, computeType);
      Value fill = buildFloatConstant(ob, loc, computeType, value);
      return linalg::FillOp::create(ob, loc, fill, empty).getResult(0);
    };
    if (m.kind == GradKind::LayerNorm)
      mean = rowConstant(0.0);
    rstd = rowConstant(1.0);
  }
  if (m.alpha) {
    alpha = m.alpha->value;
    auto alphaType = cast<RankedTensorType>(alpha.getType());
    if (alphaType.getRank() > 1) {
      alpha = adapt(ob, loc, alpha,
                    RankedTensorType::get({}, alphaType.getElementType()));
      if (!alpha)
        return rollback();
    }
  }
  hasBias = llvm::any_of(paramGrads,
                         [](const ParamGrad &grad) { return grad.index == 1; }) &&
            m.kind != GradKind::RMSNorm;
  SmallVector<Type> types{xType};
  if (weight)
    types.push_back(weight.getType());
  if (hasBias)
    types.push_back(weight
                        ? weight.getType()
                        : RankedTensorType::get(
                              xType.getShape().drop_front(m.axis), xElement));
  if (alpha)
    types.push_back(alpha.getType());
  IntegerAttr axisAttr = ob.getI64IntegerAttr(m.axis - rank);
  UnitAttr biasAttr = hasBias ? ob.getUnitAttr() : UnitAttr();
  switch (m.kind) {
  case GradKind::LayerNorm:
    gradOp = LayerNormGradOp::create(ob, loc, types, dy, x, mean, rstd, weight,
                                     axisAttr, TypeAttr(), biasAttr);
    break;
  case GradKind::RMSNorm:
    gradOp = RMSNormGradOp::create(ob, loc, types, dy, x, rstd, weight,
                                   m.weightOffset != 0.0
                                       ? ob.getF32FloatAttr(m.weightOffset)
                                       : FloatAttr(),
                                   axisAttr, TypeAttr());
    break;
  case GradKind::DyT:
    gradOp = DyTGradOp::create(ob, loc, types, dy, x, alpha, weight, axisAttr,
                               TypeAttr(), biasAttr);
    break;
  }
  ScopedDiagnosticHandler handler(rootOp->getContext(),
                                  [](Diagnostic &) { return success(); });
  if (failed(mlir::verify(gradOp)))
    return rollback();
  return true;
}

Value GradRewriter::buildDx() {
  ob.setInsertionPoint(rootOp);
  Value dx = gradOp->getResult(0);
  // x's sizes, for the elementwise ops on dx.
  SmallVector<OpFoldResult> sizesOf;
  if (scale || !extras.empty())
    sizesOf = tensor::getMixedSizes(ob, loc, x);
  if (scale) {
    // dx * rstd, rstd read per row.
    Value empty = tensor::EmptyOp::create(ob, loc, sizesOf, xElement);
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(rank, rootOp->getContext());
    AffineMap rows = identity.getMajorSubMap(m.axis);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    dx = linalg::GenericOp::create(
             ob, loc, xType, ValueRange{dx, scale}, ValueRange{empty},
             ArrayRef<AffineMap>{identity, rows, identity}, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value factor = args[1];
               if (m.rstdDivisor != 1.0)
                 factor = arith::MulFOp::create(
                     nb, nloc, factor,
                     buildFloatConstant(nb, nloc, computeType, m.rstdDivisor));
               Value product = arith::MulFOp::create(
                   nb, nloc, castFloat(nb, nloc, args[0], computeType), factor);
               linalg::YieldOp::create(nb, nloc,
                                       castFloat(nb, nloc, product, xElement));
             })
             .getResult(0);
  }
  for (Value added : extras) {
    Value empty = tensor::EmptyOp::create(ob, loc, sizesOf, xElement);
    dx =
        linalg::AddOp::create(ob, loc, ValueRange{added, dx}, ValueRange{empty})
            .getResult(0);
  }
  return dx;
}

SmallVector<std::pair<Value, Value>> GradRewriter::replaceUses() {
  // Replacements: dx (plus the tensors added to it), then the parameter
  // gradients, reshaped and converted to the values they replace.
  SmallVector<std::pair<Value, Value>> replacements{
      {rootOp->getResult(0), buildDx()}};
  unsigned paramBase = 1;
  for (const ParamGrad &grad : paramGrads) {
    if (grad.index == 1 && !hasBias)
      continue;
    unsigned resultIndex = paramBase;
    if (grad.index == 0) {
      if (!weight)
        continue;
    } else if (grad.index == 1) {
      resultIndex += weight ? 1 : 0;
    } else {
      resultIndex = gradOp->getNumResults() - 1;
    }
    Value result = gradOp->getResult(resultIndex);
    OpBuilder::InsertionGuard guard(ob);
    if (Operation *def = grad.value.getDefiningOp())
      ob.setInsertionPoint(def);
    Value adapted =
        adapt(ob, loc, result, cast<RankedTensorType>(grad.value.getType()));
    if (!adapted)
      continue;
    replacements.push_back({grad.value, adapted});
  }
  for (auto [from, to] : replacements)
    from.replaceAllUsesWith(to);
  return replacements;
}

/// Erases what the gradient computed with (`chainOps`, the root, the values
/// replaced) and nothing else uses, then the inits and constants only those
/// used.
static void eraseReplaced(Operation *rootOp, Operation *gradOp,
                          ArrayRef<std::pair<Value, Value>> replacements,
                          const SmallPtrSetImpl<Operation *> &chainOps,
                          function_ref<void(Operation *)> forget) {
  Block *block = rootOp->getBlock();
  llvm::SetVector<Operation *> maybeDead;
  auto eraseOp = [&](Operation *op) {
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    maybeDead.remove(op);
    forget(op);
    op->erase();
    for (Value value : used)
      if (Operation *def = value.getDefiningOp())
        maybeDead.insert(def);
  };
  // The chain's ops of the block, in program order (the block's cached
  // positions, not a scan of the block: that would be quadratic in a graph
  // of many gradients).
  llvm::SetVector<Operation *> chainSet;
  auto addToChain = [&](Operation *op) {
    if (op && op->getBlock() == block)
      chainSet.insert(op);
  };
  for (Operation *op : chainOps)
    addToChain(op);
  addToChain(rootOp);
  for (const auto &r : replacements)
    addToChain(r.first.getDefiningOp());
  SmallVector<Operation *> chain = chainSet.takeVector();
  llvm::sort(chain, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  for (Operation *op : llvm::reverse(chain))
    if (op->use_empty() && isMemoryEffectFree(op))
      eraseOp(op);
  while (!maybeDead.empty()) {
    Operation *op = maybeDead.pop_back_val();
    if (op != gradOp && isOpTriviallyDead(op))
      eraseOp(op);
  }
}

bool raisegrad::rewriteGradient(Operation *rootOp, const GradMatch &m,
                                const GradMatcher &matcher, Value dy, Value x,
                                ArrayRef<ParamGrad> paramGrads,
                                const SmallPtrSetImpl<Operation *> &chainOps,
                                function_ref<void(Operation *)> forget) {
  GradRewriter rewriter(rootOp, m, matcher, dy, x, paramGrads);
  if (!rewriter.collectOperands() || !rewriter.createOp())
    return false;
  SmallVector<std::pair<Value, Value>> replacements = rewriter.replaceUses();
  eraseReplaced(rootOp, rewriter.getOp(), replacements, chainOps, forget);
  return true;
}
