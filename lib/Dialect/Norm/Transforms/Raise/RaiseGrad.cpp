//===- RaiseGrad.cpp - Raise decomposed norm gradients --------------------===//
//
// A candidate `dx` is read as an element-level expression (TensorExpr.h).
// Its leaves are given roles, each read through its own access (dy and x:
// tensors of x's shape read as is; the statistics: tensors of the leading
// dims that the backward reads or computes, read as rows; weight: a tensor
// of the normalized dims, read in order; alpha: a one-element tensor), the
// expression must read nothing else, and it is compared with the gradient
// formula of DESIGN section 2b built from those roles. The comparison
// evaluates both expressions numerically, in f64 with every conversion
// taken as exact, at sample elements of several rows for pseudo-random
// fillings of the leaves of both signs and many magnitudes: autograd and
// the decompositions order and group the terms in many ways (DESIGN 2b
// allows the raise to reassociate them), so equal values, not equal trees,
// decide.
// The sums of the parameter gradients are found the same way among the
// values of the block. A sum of `dx` and tensors read as is (the residual
// path's gradient, gradients of x from other paths, added by autograd)
// keeps those tensors as adds.
//
//===----------------------------------------------------------------------===//

#include "RaiseGrad.h"
#include "RaiseGradInternal.h"

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::raisegrad;

namespace {

/// Why a candidate gradient stayed decomposed.
struct GradDecline {
  bool isCandidate = false;
  /// The builder of its frame, whose node ids `anchors` are.
  const TensorExprBuilder *builder = nullptr;
  std::string reason;
  /// Ids of its row sums and tanh nodes.
  SmallVector<unsigned> anchors;
};

} // namespace

/// True for a row-shaped tensor: the leading dims of `frame` up to `axis`,
/// then unit dims or nothing.
static bool isRowShaped(Type type, ArrayRef<int64_t> frame) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !isSupportedFloat(ranked.getElementType()))
    return false;
  int64_t rank = ranked.getRank();
  if (rank > static_cast<int64_t>(frame.size()))
    return false;
  // Trailing unit dims are taken as normalized dims.
  for (int64_t i = 0; i < rank; ++i)
    if (ranked.getDimSize(i) != frame[i] && ranked.getDimSize(i) != 1)
      return false;
  return true;
}

/// A property of `root` computed over the nodes it reads, operands first,
/// and memoized in `memo` per node: `ownValue(node)` decides a node without
/// its operands (or returns std::nullopt), otherwise the node combines its
/// operands' values with any (`anyOperand`) or all. Iterative, so that long
/// operand chains need no deep recursion.
template <typename OwnValue>
static bool foldOperands(TensorExpr *root, DenseMap<TensorExpr *, bool> &memo,
                         bool anyOperand, OwnValue ownValue) {
  SmallVector<std::pair<TensorExpr *, unsigned>> stack{{root, 0}};
  while (!stack.empty()) {
    auto &[node, next] = stack.back();
    if (memo.count(node)) {
      stack.pop_back();
      continue;
    }
    if (std::optional<bool> own = ownValue(node)) {
      memo[node] = *own;
      stack.pop_back();
      continue;
    }
    if (next < node->operands.size()) {
      stack.push_back({node->getOperand(next++), 0});
      continue;
    }
    auto operandValue = [&](TensorExpr *operand) {
      return memo.lookup(operand);
    };
    memo[node] = anyOperand ? llvm::any_of(node->operands, operandValue)
                            : llvm::all_of(node->operands, operandValue);
    stack.pop_back();
  }
  return memo.lookup(root);
}

/// True when a row sum or a tanh occurs in `root`, the nodes a gradient is
/// anchored at (see GradMatcher::isCandidate). Memoized in `memo` per node,
/// so that the candidates along a residual stream, each reading all those
/// before it, take linear time in all.
static bool reachesAnchor(TensorExpr *root,
                          DenseMap<TensorExpr *, bool> &memo) {
  return foldOperands(root, memo, /*anyOperand=*/true,
                      [](TensorExpr *node) -> std::optional<bool> {
                        if (node->is(Kind::Sum) || node->is(Kind::Tanh))
                          return true;
                        return std::nullopt;
                      });
}

/// True for a tensor of the whole frame or one that is not a row value of
/// `frame`, or a sum of such tensors: what a residual stream is to a candidate
/// that reads it. Memoized in `memo` per node.
static bool isSumOfNonRowTensors(TensorExpr *root, ArrayRef<int64_t> frame,
                                 DenseMap<TensorExpr *, bool> &memo) {
  uint64_t fullMask = (uint64_t(1) << frame.size()) - 1;
  return foldOperands(root, memo, /*anyOperand=*/false,
                      [&](TensorExpr *node) -> std::optional<bool> {
                        if (node->is(Kind::Add))
                          return std::nullopt;
                        // A leaf the walk would take as a row value is not one
                        // of them.
                        return node->is(Kind::Leaf) &&
                               (node->deps == fullMask ||
                                (node->deps != 0 &&
                                 !isRowShaped(node->value.getType(), frame)));
                      });
}

/// Raises the gradient whose dx `rootOp` computes, if it is one; otherwise
/// says in `decline` whether it reads like one and why it was not raised.
static bool raiseAt(Operation *rootOp, TensorExprBuilder &builder,
                    DenseMap<TensorExpr *, bool> &anchorMemo,
                    DenseMap<TensorExpr *, bool> &sumOfTensorsMemo,
                    DenseMap<TensorExpr *, bool> &streamMemo,
                    function_ref<void(Operation *)> forget,
                    GradDecline *decline = nullptr) {
  Value rootValue = rootOp->getResult(0);
  TensorExpr *expr = builder.evaluate(rootValue);
  if (!expr || expr->is(Kind::Leaf) || expr->is(Kind::Const))
    return false;
  // Without a row sum or a tanh it matches no formula and is no candidate:
  // skip the walk of everything it reads.
  if (!reachesAnchor(expr, anchorMemo))
    return false;
  const TensorExprEvaluation *evaluation = builder.lookup(rootValue);
  if (!evaluation)
    return false;
  ArrayRef<int64_t> frame = builder.getFrameShape();
  GradMatcher matcher(builder, *evaluation);
  matcher.sumOfTensorsMemo = &sumOfTensorsMemo;
  SmallPtrSet<Operation *, 32> chainOps;
  // Below a sum of tensors that reaches no row sum or tanh and reads no
  // row value (the residual stream a norm reads, back to the function's
  // start) there is nothing the matcher takes: its tensors are leaves, and
  // there is no row value to find. The walk stops there, so a candidate
  // costs what its own block reads, not the stream before it.
  uint64_t fullMask = (uint64_t(1) << frame.size()) - 1;
  builder.walkEvaluations(
      *evaluation,
      [&](const TensorExprEvaluation &user, const TensorExprEvaluation &) {
        return &user == evaluation || user.reachesAnchor ||
               !isSumOfNonRowTensors(user.expr, frame, streamMemo);
      },
      [&](const TensorExprEvaluation &e) {
        if (Operation *def = e.value.getDefiningOp())
          chainOps.insert(def);
        if (e.expr && e.materializes &&
            getElementTypeOrSelf(e.value.getType()) ==
                getElementTypeOrSelf(rootValue.getType()))
          matcher.fullValues.try_emplace(e.expr, e.value);
        if (!e.expr || !isRowShaped(e.value.getType(), frame))
          return;
        // A row value, with its access (the matcher takes those read as
        // rows).
        auto type = cast<RankedTensorType>(e.value.getType());
        if (e.expr->deps == fullMask)
          return;
        if (!e.expr->is(Kind::Const) && type.getRank() >= 1)
          matcher.rowEntries.push_back({e.expr, e.value, e.map});
      });
  std::optional<GradMatch> found = matcher.match();
  if (decline) {
    decline->isCandidate = matcher.isCandidate;
    decline->builder = &builder;
    decline->reason =
        found ? "the gradient matched but could not be rewritten (operand "
                "types, operands defined after the values it replaces, or "
                "the op does not verify)"
        : matcher.reason.empty() ? "it matches no gradient form"
                                 : matcher.reason;
    for (TensorExpr *anchor : matcher.anchors)
      decline->anchors.push_back(anchor->id);
  }
  if (!found)
    return false;
  std::optional<std::pair<Value, Value>> inputs =
      getInputs(rootOp, *found, matcher);
  if (!inputs)
    return false;
  // Parameter gradients among the block's values.
  SmallVector<ParamGrad> paramGrads = findParamGrads(builder, *found, rootOp);
  return rewriteGradient(rootOp, *found, matcher, inputs->first, inputs->second,
                         paramGrads, chainOps, forget);
}

unsigned
mlir::norm::raiseGradients(Operation *root,
                           SmallVectorImpl<DeclinedGradient> *declined) {
  unsigned raised = 0;
  DenseMap<Type, std::unique_ptr<TensorExprBuilder>> builders;
  // Of the nodes of every builder; cleared with them.
  DenseMap<TensorExpr *, bool> anchorMemo, sumOfTensorsMemo, streamMemo;
  SmallVector<Operation *> candidates;
  root->walk([&](Operation *op) {
    if (op == root || op->getNumResults() != 1 || isa<NormOpInterface>(op) ||
        op->hasTrait<OpTrait::ConstantLike>())
      return;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (type && type.getRank() >= 1 && type.getRank() <= 16 &&
        isSupportedFloat(type.getElementType()))
      candidates.push_back(op);
  });
  llvm::SmallPtrSet<Operation *, 32> erased;
  auto forget = [&](Operation *op) {
    erased.insert(op);
    for (Value result : op->getResults())
      for (auto &entry : builders)
        entry.second->forget(result);
  };
  llvm::MapVector<Operation *, GradDecline> declines;
  // Producers first: a gradient's dx is raised once every gradient it adds
  // (a later block's, reaching x through the residual) is a norm op, so
  // one walk raises the backward of a whole stack of blocks. The values a
  // dx is computed from cannot match a gradient formula themselves: each
  // lacks a term of it.
  for (Operation *op : candidates) {
    if (erased.contains(op))
      continue;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Type key = RankedTensorType::get(type.getShape(),
                                     IndexType::get(op->getContext()));
    std::unique_ptr<TensorExprBuilder> &builder = builders[key];
    if (!builder)
      builder = std::make_unique<TensorExprBuilder>(type);
    GradDecline decline;
    if (raiseAt(op, *builder, anchorMemo, sumOfTensorsMemo, streamMemo, forget,
                declined ? &decline : nullptr)) {
      ++raised;
      // The rewrite changed the block; start the evaluations afresh.
      builders.clear();
      anchorMemo.clear();
      sumOfTensorsMemo.clear();
      streamMemo.clear();
    } else if (decline.isCandidate) {
      declines.insert({op, std::move(decline)});
    }
  }
  if (!declined)
    return raised;
  declined->clear();
  // Ops may have been erased since they were analyzed.
  if (raised)
    return raised;
  // One report per gradient: a term of a dx is left to the candidate using
  // it that reads all its row sums and tanh nodes (the dx, the sum adding
  // the residual's gradient to it). Through the adds of a residual stream,
  // that makes one report for the gradients of a stack of blocks.
  for (auto &[op, decline] : declines) {
    bool completedByUser = llvm::any_of(op->getUsers(), [&](Operation *user) {
      auto it = declines.find(user);
      return it != declines.end() && it->second.builder == decline.builder &&
             llvm::all_of(decline.anchors, [&](unsigned id) {
               return llvm::is_contained(it->second.anchors, id);
             });
    });
    if (!completedByUser)
      declined->push_back({op, decline.reason});
  }
  return raised;
}
