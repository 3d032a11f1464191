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
#include "RaiseRewrite.h"

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
  Value dy =
      m.dy->is(Kind::Leaf) ? m.dy->value : matcher.fullValues.lookup(m.dy);
  Value x = m.x->is(Kind::Leaf) ? m.x->value : matcher.fullValues.lookup(m.x);
  if (!dy || !x)
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

/// Builds the gradient op of a match (detached, then committed) and
/// replaces the values it computes.
class GradRewriter {
public:
  GradRewriter(Operation *rootOp, const GradMatch &m,
               const GradMatcher &matcher, Value dy, Value x,
               ArrayRef<ParamGrad> paramGrads)
      : rootOp(rootOp), block(rootOp->getBlock()), m(m), matcher(matcher),
        paramGrads(paramGrads), dy(dy), x(x),
        xType(cast<RankedTensorType>(rootOp->getResult(0).getType())),
        created(rootOp->getContext()), ob(created.getBuilder()),
        loc(rootOp->getLoc()) {
    xElement = xType.getElementType();
    computeType =
        xElement.isF64() ? xElement : Float32Type::get(rootOp->getContext());
    rank = xType.getRank();
  }

  /// Finds the operands and where the op goes; false when an operand is not
  /// defined there.
  bool collectOperands();
  /// Creates the op and what adapts its operands, detached from the IR;
  /// false when they cannot be adapted or the op does not verify (nothing
  /// of it is left then).
  bool createOp();
  /// Inserts the op and what adapts its operands; replaces the parameter
  /// gradients by its results and returns dx (the replacement of the
  /// root); the values replaced are added to `replaced`.
  Value commit(RewriterBase &rewriter, SmallVectorImpl<Value> &replaced);

private:
  /// dx from the op's: times the row scale (normalized input), plus the
  /// tensors added to it.
  Value buildDx(OpBuilder &b);

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
  DetachedRewrite created;
  /// Builds detached (see DetachedRewrite).
  OpBuilder &ob;
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

bool GradRewriter::createOp() {
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
      return false;
  }
  if (mean) {
    mean = adaptRow(ob, loc, mean, leadingShape, computeType);
    if (!mean)
      return false;
  }
  if (rstd) {
    rstd = adaptRow(ob, loc, rstd, leadingShape, computeType);
    if (!rstd)
      return false;
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
        return false;
    }
  }
  hasBias =
      llvm::any_of(paramGrads,
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
  // What dx is built from besides the op: the row scale and the tensors
  // added, with the casts made for them.
  created.track(gradOp);
  if (scale)
    created.track(scale);
  for (Value extra : extras)
    created.track(extra);
  std::string diagnostic;
  return succeeded(DetachedRewrite::verify(gradOp, diagnostic));
}

Value GradRewriter::buildDx(OpBuilder &ob) {
  OpBuilder::InsertionGuard guard(ob);
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

Value GradRewriter::commit(RewriterBase &rewriter,
                           SmallVectorImpl<Value> &replaced) {
  created.commit(rewriter, insertionPoint);
  // The parameter gradients, reshaped and converted to the values they
  // replace.
  SmallVector<std::pair<Value, Value>> replacements;
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
    OpBuilder::InsertionGuard guard(rewriter);
    if (Operation *def = grad.value.getDefiningOp())
      rewriter.setInsertionPoint(def);
    Value adapted = adapt(rewriter, loc, result,
                          cast<RankedTensorType>(grad.value.getType()));
    if (!adapted)
      continue;
    replacements.push_back({grad.value, adapted});
  }
  for (auto [from, to] : replacements) {
    rewriter.replaceAllUsesWith(from, to);
    replaced.push_back(from);
  }
  // dx: the op's, scaled and summed as the match says.
  return buildDx(rewriter);
}

namespace {

/// Tells the gradient driver which ops a rewrite erased.
struct ForgetErased : public RewriterBase::Listener {
  explicit ForgetErased(function_ref<void(Operation *)> forget)
      : forget(forget) {}
  void notifyOperationErased(Operation *op) override { forget(op); }
  function_ref<void(Operation *)> forget;
};

} // namespace

bool raisegrad::rewriteGradient(Operation *rootOp, const GradMatch &m,
                                const GradMatcher &matcher, Value dy, Value x,
                                ArrayRef<ParamGrad> paramGrads,
                                const SmallPtrSetImpl<Operation *> &chainOps,
                                function_ref<void(Operation *)> forget) {
  GradRewriter gradRewriter(rootOp, m, matcher, dy, x, paramGrads);
  if (!gradRewriter.collectOperands() || !gradRewriter.createOp())
    return false;
  ForgetErased listener(forget);
  IRRewriter rewriter(rootOp->getContext(), &listener);
  SmallVector<Value> replaced;
  Value dx = gradRewriter.commit(rewriter, replaced);
  // What the gradient was computed with, in program order (the block's
  // cached positions, not a scan of the block: that would be quadratic in a
  // graph of many gradients): the ops the match read and those of the
  // parameter gradients replaced.
  Block *block = rootOp->getBlock();
  llvm::SetVector<Operation *> chainSet;
  auto addToChain = [&](Operation *op) {
    if (op && op != rootOp && op->getBlock() == block)
      chainSet.insert(op);
  };
  for (Operation *op : chainOps)
    addToChain(op);
  for (Value value : replaced)
    addToChain(value.getDefiningOp());
  SmallVector<Operation *> chain = chainSet.takeVector();
  llvm::sort(chain,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  eraseReplacedChain(rewriter, rootOp, dx, chain);
  return true;
}
