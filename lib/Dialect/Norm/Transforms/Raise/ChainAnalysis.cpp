//===- ChainAnalysis.cpp - Normalization chains ending at an op -----------===//
//
// Evaluates a candidate root to a TensorExpr, matches it (RaiseMatcher.h),
// and finds the chain's ops and whether it can be replaced: its input is
// available as a tensor, it lies in one block, and nothing outside it uses
// its intermediate values.
//
//===----------------------------------------------------------------------===//

#include "ChainAnalysis.h"
#include "RaiseQuantize.h"

#include "mlir/IR/Block.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

bool mlir::norm::isPossibleRoot(Operation *op) {
  if (op->getNumResults() != 1 || isa<NormOpInterface>(op) ||
      op->hasTrait<OpTrait::ConstantLike>())
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.getRank() >= 1 && type.getRank() <= 64 &&
         isSupportedFloat(type.getElementType());
}

TensorExprBuilder &ChainAnalyzer::getBuilder(RankedTensorType frameType) {
  Type key = RankedTensorType::get(frameType.getShape(),
                                   IndexType::get(frameType.getContext()));
  std::unique_ptr<TensorExprBuilder> &builder = builders[key];
  if (!builder)
    builder = std::make_unique<TensorExprBuilder>(frameType);
  return *builder;
}

void ChainAnalyzer::prepare(ArrayRef<Operation *> ops) {
  for (auto [position, op] : llvm::enumerate(ops))
    positions[op] = position;
  for (Operation *op : ops)
    if (isPossibleRoot(op)) {
      Value result = op->getResult(0);
      getBuilder(cast<RankedTensorType>(result.getType())).evaluate(result);
    }
}

void ChainAnalyzer::forget(Operation *op) {
  for (Value result : op->getResults())
    for (auto &entry : builders)
      entry.second->forget(result);
  analyses.erase(op);
  positions.erase(op);
}

void ChainAnalyzer::sortInProgramOrder(
    SmallVectorImpl<Operation *> &ops) const {
  // Positions recorded by `prepare` need no renumbering of the block, which
  // every rewrite would otherwise trigger again.
  if (llvm::all_of(ops, [&](Operation *op) { return positions.count(op); })) {
    llvm::sort(ops, [&](Operation *a, Operation *b) {
      return positions.lookup(a) < positions.lookup(b);
    });
    return;
  }
  llvm::sort(ops, [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b) : a < b;
  });
}

/// Collects the ops computing the chain: from the root up to the input and
/// parameters, through every value that was evaluated to something else
/// than them (or a constant). Finds the materialized input on the way.
void ChainAnalyzer::collectInterior(TensorExprBuilder &builder,
                                    const TensorExprEvaluation &root,
                                    const NormMatch &match,
                                    ChainAnalysis &analysis) {
  llvm::SmallPtrSet<TensorExpr *, 4> stops{match.x};
  for (TensorExpr *p : {match.weight, match.bias, match.alpha})
    if (p)
      stops.insert(p);
  auto isStop = [&](TensorExpr *e) {
    return stops.contains(e) || e->is(Kind::Const) ||
           (e->is(Kind::Leaf) && e->map.getNumResults() == 0);
  };

  // What the values of the chain were evaluated to. The walk does not go
  // below the input and the parameters (what computes them is not part of
  // the chain, and may be the whole function before it), except through
  // values that compute the same node (a tensor.cast of the input, say).
  DenseMap<Value, SmallVector<TensorExpr *, 2>> nodesOfValue;
  builder.walkEvaluations(
      root,
      [&](const TensorExprEvaluation &user, const TensorExprEvaluation &used) {
        return !isStop(user.expr) || used.expr == user.expr;
      },
      [&](const TensorExprEvaluation &evaluation) {
        SmallVector<TensorExpr *, 2> &nodes = nodesOfValue[evaluation.value];
        if (!llvm::is_contained(nodes, evaluation.expr))
          nodes.push_back(evaluation.expr);
        // The first value completed that computes x element by element.
        if (!analysis.x && evaluation.materializes &&
            evaluation.expr == match.x)
          analysis.x = evaluation.value;
      });
  if (!analysis.x)
    return;

  llvm::SetVector<Operation *> ops;
  ops.insert(root.value.getDefiningOp());
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation *op = ops[i];
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value value : used) {
      auto it = nodesOfValue.find(value);
      if (it == nodesOfValue.end() || llvm::all_of(it->second, isStop))
        continue;
      if (Operation *def = value.getDefiningOp())
        ops.insert(def);
    }
  }
  analysis.interior.assign(ops.begin(), ops.end());
  sortInProgramOrder(analysis.interior);
}

/// The statistic of the op raised from `m` (see StatisticUse) that `value`,
/// an intermediate value of the chain evaluated in `builder`'s frame,
/// computes, if any.
static std::optional<unsigned> matchStatistic(TensorExprBuilder &builder,
                                              Value value, const NormMatch &m) {
  if (m.kind == NormKind::DyT || m.sumOfSquares)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !isSupportedFloat(type.getElementType()))
    return std::nullopt;
  ArrayRef<int64_t> frame = builder.getFrameShape();
  int64_t rank = frame.size();
  if (type.getRank() != rank && type.getRank() != m.axis)
    return std::nullopt;
  MLIRContext *context = builder.getContext();
  SmallVector<AffineExpr> results;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i < m.axis) {
      if (type.getDimSize(i) != frame[i])
        return std::nullopt;
      results.push_back(getAffineDimExpr(i, context));
      continue;
    }
    if (type.getDimSize(i) != 1)
      return std::nullopt;
    results.push_back(getAffineConstantExpr(0, context));
  }
  TensorExpr *e =
      builder.evaluate(value, AffineMap::get(rank, 0, results, context));
  if (!e)
    return std::nullopt;
  TensorExpr *original = e;
  // The op's statistic converts to the value's type by extf or truncf.
  if (type.getElementType() != m.computeType &&
      getWidth(type.getElementType()) == getWidth(m.computeType))
    return std::nullopt;
  // A conversion of the statistic to another float type.
  if (e->is(TensorExprKind::Cast) && e->getOperand(0)->type == m.computeType &&
      getWidth(e->type) != getWidth(m.computeType))
    e = e->getOperand(0);
  unsigned rstdIndex = m.kind == NormKind::LayerNorm ? 1 : 0;
  if (m.kind == NormKind::LayerNorm && e == m.mean)
    return 0;
  // The variance's own mean, in any float type (DESIGN 2b lets the raised
  // op compute it in the compute type).
  if (m.kind == NormKind::LayerNorm && m.varianceMean) {
    TensorExpr *core = original;
    while (core->is(TensorExprKind::Cast))
      core = core->getOperand(0);
    if (core == m.varianceMean || core == m.mean)
      return 0;
  }
  if (e->type != m.computeType)
    return std::nullopt;
  if (m.rstd && e == m.rstd)
    return rstdIndex;
  // The factor spelled otherwise: 1 / d for a chain dividing by d, and
  // rsqrt(s) and 1 / sqrt(s) for each other.
  TensorExpr *divisor = m.rstdDivisor;
  if (!divisor && m.rstd && m.rstd->is(TensorExprKind::Recip))
    divisor = m.rstd->getOperand(0);
  if (!divisor && m.rstd && m.rstd->is(TensorExprKind::Rsqrt))
    divisor = builder.getUnary(TensorExprKind::Sqrt, m.rstd->getOperand(0));
  if (!divisor)
    return std::nullopt;
  if (e == builder.getUnary(TensorExprKind::Recip, divisor))
    return rstdIndex;
  if (divisor->is(TensorExprKind::Sqrt) &&
      e == builder.getUnary(TensorExprKind::Rsqrt, divisor->getOperand(0)))
    return rstdIndex;
  return std::nullopt;
}

const ChainAnalysis &ChainAnalyzer::analyze(Operation *root) {
  std::unique_ptr<ChainAnalysis> &slot = analyses[root];
  if (slot)
    return *slot;
  slot = std::make_unique<ChainAnalysis>();
  ChainAnalysis &analysis = *slot;
  if (!isPossibleRoot(root))
    return analysis;
  Value result = root->getResult(0);
  TensorExprBuilder &builder =
      getBuilder(cast<RankedTensorType>(result.getType()));
  TensorExpr *expr = builder.evaluate(result);
  if (!expr || expr->is(Kind::Leaf) || expr->is(Kind::Const))
    return analysis;
  NormChainMatcher matcher(builder);
  std::optional<NormMatch> match = matcher.match(expr);
  if (!match) {
    analysis.progress = matcher.getProgress();
    analysis.reason = matcher.getReason().str();
    return analysis;
  }
  // Matched: now the IR around the chain decides whether it can be
  // replaced by one op.
  analysis.progress = kChecked;
  collectInterior(builder, *builder.lookup(result), *match, analysis);
  if (!analysis.x) {
    analysis.reason = "the normalized input is not available as a tensor "
                      "(it is computed inside the chain's first op)";
    return analysis;
  }
  Block *block = root->getBlock();
  llvm::SmallPtrSet<Operation *, 16> interiorSet(analysis.interior.begin(),
                                                 analysis.interior.end());
  for (Operation *op : analysis.interior) {
    if (op->getBlock() != block) {
      analysis.reason = "the chain spans several blocks";
      return analysis;
    }
    if (op == root)
      continue;
    for (Value value : op->getResults())
      for (Operation *user : value.getUsers()) {
        Operation *owner = block->findAncestorOpInBlock(*user);
        if (owner && interiorSet.contains(owner))
          continue;
        // A statistic used elsewhere (a training graph's forward) is taken
        // from the op's `return_stats` results.
        if (llvm::any_of(analysis.statistics, [&](const StatisticUse &use) {
              return use.value == value;
            }))
          continue;
        if (std::optional<unsigned> index =
                matchStatistic(builder, value, *match)) {
          analysis.statistics.push_back({value, *index});
          continue;
        }
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "an intermediate value of the chain (the result of '"
           << op->getName() << "' at " << op->getLoc()
           << ") is also used outside it";
        analysis.reason = text;
        return analysis;
      }
  }
  // The norm ops propagate a NaN (epsilon_mode clamp included): a clamp
  // `max(sqrt(ms), eps)` that gives a NaN the bound computes something else.
  if (!assumeNoNans)
    for (Operation *op : analysis.interior) {
      std::string nanDrop;
      op->walk([&](Operation *nested) {
        if (nanDrop.empty())
          nanDrop = describeNaNDrop(nested);
      });
      if (!nanDrop.empty()) {
        analysis.reason = nanDrop + "; the norm op propagates it "
                                    "(assume-no-nans or fastmath<nnan> to "
                                    "raise)";
        return analysis;
      }
    }
  analysis.match = match;
  return analysis;
}

SmallVector<Operation *> ChainAnalyzer::getAnchors(Operation *root) {
  SmallVector<Operation *> anchors;
  if (isPossibleRoot(root)) {
    Value result = root->getResult(0);
    TensorExprBuilder &builder =
        getBuilder(cast<RankedTensorType>(result.getType()));
    if (const TensorExprEvaluation *evaluation = builder.lookup(result)) {
      // Only evaluations that lead to a Sum or a Tanh are walked.
      llvm::SmallPtrSet<Operation *, 8> seen;
      builder.walkEvaluations(
          *evaluation,
          [](const TensorExprEvaluation &, const TensorExprEvaluation &used) {
            return used.reachesAnchor;
          },
          [&](const TensorExprEvaluation &visited) {
            Operation *op = visited.value.getDefiningOp();
            if (op &&
                (visited.expr->is(Kind::Sum) || visited.expr->is(Kind::Tanh)) &&
                seen.insert(op).second)
              anchors.push_back(op);
          });
    }
  }
  // A chain fused into one op anchors itself.
  if (anchors.empty())
    anchors.push_back(root);
  return anchors;
}
