//===- Raise.cpp - Raise decomposed normalizations to norm ops --*- C++ -*-===//
//
// norm-raise: recognizes LayerNorm, RMSNorm and DyT written out as
// elementwise and reduction ops (linalg, TOSA, tensor-level arith/math, as
// torch-mlir and hand-written IR have them) and replaces each chain by one
// norm op with exactly the semantics the chain computes.
//
// The chain ending at a candidate op is first turned into a hash-consed
// element-level expression (TensorExpr.h), which hides how the frontend
// spelled it; the expression is then matched against the op semantics of
// DESIGN section 2 (RaiseMatcher.h), binding the input, the parameters and
// every attribute (ChainAnalysis.h). This file builds the norm op and holds
// the pattern and the pass.
//
//===----------------------------------------------------------------------===//

#include "ChainAnalysis.h"
#include "RaiseGrad.h"
#include "RaiseBlockScaled.h"
#include "RaiseQuantize.h"
#include "RaiseRewrite.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Support/PassStatistics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <array>
#include <cmath>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMRAISEPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

using Kind = TensorExprKind;

namespace {

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

/// Storage type of a constant parameter: the arithmetic type when the op
/// takes it, else the input type or f32 when the value is exact there.
static Type getConstantStorageType(double value, Type arithmeticType,
                                   Type inputType) {
  if (arithmeticType == inputType || arithmeticType.isF32())
    return arithmeticType;
  if (roundToType(value, inputType) == value)
    return inputType;
  Type f32 = Float32Type::get(inputType.getContext());
  if (roundToType(value, f32) == value)
    return f32;
  return {};
}

/// Builds the tensor operand for a parameter node: the leaf value (with
/// leading unit dims collapsed away) or a splat constant.
static Value materializeParam(OpBuilder &b, Location loc, TensorExpr *p,
                              ArrayRef<int64_t> normalizedShape, bool scalar,
                              const NormMatch &m, DetachedRewrite &created,
                              std::optional<double> valueOverride = {}) {
  if (p && p->is(Kind::Leaf)) {
    auto type = cast<RankedTensorType>(p->value.getType());
    int64_t targetRank = scalar ? std::min<int64_t>(type.getRank(), 1)
                                : static_cast<int64_t>(normalizedShape.size());
    if (type.getRank() == targetRank)
      return p->value;
    int64_t leading = type.getRank() - targetRank;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices first;
    for (int64_t i = 0; i <= leading; ++i)
      first.push_back(i);
    groups.push_back(first);
    for (int64_t i = leading + 1; i < type.getRank(); ++i)
      groups.push_back({i});
    auto resultType = RankedTensorType::get(type.getShape().drop_front(leading),
                                            type.getElementType());
    return created
        .track(tensor::CollapseShapeOp::create(b, loc, resultType, p->value,
                                               groups))
        .getResult();
  }
  double value = valueOverride ? *valueOverride : p->constant;
  Type storage =
      getConstantStorageType(value, p ? p->type : m.paramType, m.inputType);
  if (!storage)
    return {};
  auto type = scalar ? RankedTensorType::get({}, storage)
                     : RankedTensorType::get(normalizedShape, storage);
  auto attr = DenseElementsAttr::get(
      type, b.getFloatAttr(storage, roundToType(value, storage)));
  return created.track(arith::ConstantOp::create(b, loc, attr)).getResult();
}

/// Makes each statistic used outside the chain read the op's: the op's
/// result reshaped to the value's shape and converted to its element type,
/// for the uses outside the chain (`isInterior` tells the chain's ops).
static void replaceStatisticUses(RewriterBase &rewriter, Location loc,
                                 Operation *normOp,
                                 const ChainAnalysis &analysis,
                                 function_ref<bool(Operation *)> isInterior) {
  for (const StatisticUse &use : analysis.statistics) {
    Value stat = normOp->getResult(1 + use.index);
    auto statType = cast<RankedTensorType>(stat.getType());
    auto useType = cast<RankedTensorType>(use.value.getType());
    if (useType.getRank() != statType.getRank()) {
      SmallVector<ReassociationIndices> groups;
      for (int64_t i = 0; i < statType.getRank(); ++i)
        groups.push_back({i});
      for (int64_t i = statType.getRank(); i < useType.getRank(); ++i) {
        if (groups.empty())
          break;
        groups.back().push_back(i);
      }
      auto expandedType =
          RankedTensorType::get(useType.getShape(), statType.getElementType());
      stat = tensor::ExpandShapeOp::create(rewriter, loc, expandedType, stat,
                                           groups);
    }
    Type element = useType.getElementType();
    if (element != statType.getElementType()) {
      if (getWidth(element) < getWidth(statType.getElementType()))
        stat = arith::TruncFOp::create(rewriter, loc, useType, stat);
      else
        stat = arith::ExtFOp::create(rewriter, loc, useType, stat);
    }
    rewriter.replaceUsesWithIf(use.value, stat, [&](OpOperand &operand) {
      return !isInterior(operand.getOwner());
    });
  }
}

/// Where the op goes: before the root, or before the first use of a
/// statistic outside the chain when that comes earlier. Null when an
/// operand of the ops `created` is not defined there.
static Operation *
findInsertionPoint(Operation *root, const ChainAnalysis &analysis,
                   const DetachedRewrite &created,
                   function_ref<bool(Operation *)> isInterior) {
  Block *block = root->getBlock();
  Operation *insertionPoint = root;
  for (const StatisticUse &use : analysis.statistics)
    for (Operation *user : use.value.getUsers()) {
      if (isInterior(user))
        continue;
      Operation *owner = block->findAncestorOpInBlock(*user);
      if (owner && owner->isBeforeInBlock(insertionPoint))
        insertionPoint = owner;
    }
  if (insertionPoint == root)
    return root;
  for (Operation *op : created.getOps())
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || created.isTracked(def))
        continue;
      Operation *owner = block->findAncestorOpInBlock(*def);
      if (owner && !owner->isBeforeInBlock(insertionPoint))
        return nullptr;
    }
  return insertionPoint;
}

namespace {
/// The operands and epsilon of the norm op built for a chain.
struct NormParams {
  Value weight, bias, alpha;
  double epsilon;
};
} // namespace

/// Builds the norm op of `m` on `x`, detached in `created`; with
/// `withStats`, it returns the statistics too.
static Operation *createNormOp(DetachedRewrite &created, Location loc,
                               const NormMatch &m, Value x, const NormParams &p,
                               bool withStats) {
  OpBuilder &b = created.getBuilder();
  MLIRContext *context = b.getContext();
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t rank = xType.getRank();
  Type computeType = m.computeType;
  Type defaultCompute =
      m.inputType.isF64() ? m.inputType : Float32Type::get(context);
  TypeAttr computeTypeAttr;
  if (computeType != m.inputType || computeType != defaultCompute)
    computeTypeAttr = TypeAttr::get(computeType);
  FloatAttr epsilonAttr =
      computeType.isF64() ? b.getF64FloatAttr(p.epsilon)
                          : b.getF32FloatAttr(static_cast<float>(p.epsilon));
  IntegerAttr axisAttr = b.getI64IntegerAttr(m.axis - rank);
  auto castModeAttr = CastModeAttr::get(context, m.castMode);

  SmallVector<Type> resultTypes{xType};
  if (withStats)
    resultTypes.append(m.kind == NormKind::LayerNorm ? 2 : 1,
                       RankedTensorType::get(
                           xType.getShape().take_front(m.axis), computeType));

  Operation *normOp = nullptr;
  switch (m.kind) {
  case NormKind::LayerNorm: {
    auto op = created.track(
        withStats
            ? LayerNormOp::create(b, loc, resultTypes, x, p.weight, p.bias,
                                  Value(), FloatAttr(), IntegerAttr(),
                                  TypeAttr(), CastModeAttr(), b.getUnitAttr())
            : LayerNormOp::create(b, loc, x, p.weight, p.bias, Value()));
    op.setEpsilonAttr(epsilonAttr);
    op.setAxisAttr(axisAttr);
    op.setComputeTypeAttr(computeTypeAttr);
    op.setCastModeAttr(castModeAttr);
    normOp = op;
    break;
  }
  case NormKind::RMSNorm: {
    auto op = created.track(
        withStats ? RMSNormOp::create(b, loc, resultTypes, x, p.weight, Value(),
                                      FloatAttr(), EpsilonModeAttr(),
                                      FloatAttr(), IntegerAttr(), TypeAttr(),
                                      CastModeAttr(), b.getUnitAttr())
                  : RMSNormOp::create(b, loc, x, p.weight, Value()));
    op.setEpsilonAttr(epsilonAttr);
    op.setEpsilonModeAttr(EpsilonModeAttr::get(context, m.epsilonMode));
    op.setWeightOffsetAttr(
        b.getF32FloatAttr(static_cast<float>(m.weightOffset)));
    op.setAxisAttr(axisAttr);
    op.setComputeTypeAttr(computeTypeAttr);
    op.setCastModeAttr(castModeAttr);
    normOp = op;
    break;
  }
  case NormKind::DyT: {
    auto op = created.track(
        DyTOp::create(b, loc, x, p.alpha, p.weight, p.bias, Value()));
    op.setAxisAttr(axisAttr);
    op.setComputeTypeAttr(computeTypeAttr);
    op.setCastModeAttr(castModeAttr);
    normOp = op;
    break;
  }
  }

  return normOp;
}

/// Replaces the chain ending at `root` by the norm op of `analysis`.
static LogicalResult rewriteChain(PatternRewriter &rewriter, Operation *root,
                                  ChainAnalysis &analysis) {
  const NormMatch &m = *analysis.match;
  if (m.kind == NormKind::RMSNorm && m.bias)
    return rewriter.notifyMatchFailure(root, "norm.rms_norm has no bias");
  MLIRContext *context = rewriter.getContext();
  Location loc = root->getLoc();
  DetachedRewrite created(context);
  OpBuilder &b = created.getBuilder();
  // x with the root's shape (more static, or less, than x's own: they
  // differ only in dynamic sizes).
  Value x = castToShape(
      b, loc, analysis.x,
      cast<RankedTensorType>(root->getResult(0).getType()).getShape());
  if (!x)
    return rewriter.notifyMatchFailure(root, "x's shape is not the result's");
  created.track(x);
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> normalizedShape = xType.getShape().drop_front(m.axis);

  // ScaleNorm's ||x|| = sqrt(N) * rms(x): the op's clamp/outside form with
  // epsilon and weight divided by sqrt(N) (epsilon by N inside the root).
  double epsilon = m.epsilon.value_or(0.0);
  std::optional<double> weightValue;
  bool scalarWeight =
      m.kind == NormKind::RMSNorm &&
      (!m.weight || m.weight->is(Kind::Const) ||
       llvm::all_of(
           cast<RankedTensorType>(m.weight->value.getType()).getShape(),
           [](int64_t s) { return s == 1; }));
  if (m.sumOfSquares) {
    double count = 1.0;
    for (int64_t size : normalizedShape)
      count *= static_cast<double>(size);
    double root = std::sqrt(count);
    epsilon = m.epsilonMode == EpsilonMode::inside_sqrt ? epsilon / count
                                                        : epsilon / root;
    weightValue = (m.weight ? m.weight->constant : 1.0) / root;
  }

  Value weight, bias, alpha;
  if (m.weight || weightValue) {
    weight = materializeParam(b, loc, m.weight, normalizedShape, scalarWeight,
                              m, created, weightValue);
    if (!weight)
      return rewriter.notifyMatchFailure(root, "weight not representable");
  }
  if (m.bias) {
    bias = materializeParam(b, loc, m.bias, normalizedShape, false, m, created);
    if (!bias)
      return rewriter.notifyMatchFailure(root, "bias not representable");
  }
  if (m.alpha) {
    alpha =
        materializeParam(b, loc, m.alpha, normalizedShape, true, m, created);
    if (!alpha)
      return rewriter.notifyMatchFailure(root, "alpha not representable");
  }

  // Statistics used outside the chain come from `return_stats` results.
  bool withStats = !analysis.statistics.empty();
  NormParams params{weight, bias, alpha, epsilon};
  Operation *normOp = createNormOp(created, loc, m, x, params, withStats);
  // The new op must verify before the IR changes.
  std::string diagnostic;
  if (failed(DetachedRewrite::verify(normOp, diagnostic)))
    return rewriter.notifyMatchFailure(
        root, "the norm op built for the chain does not verify: " + diagnostic);

  // The op goes before the root, or before the first outside use of a
  // statistic; what it uses must be defined there.
  Block *block = root->getBlock();
  llvm::SmallPtrSet<Operation *, 16> interiorSet(analysis.interior.begin(),
                                                 analysis.interior.end());
  auto isInterior = [&](Operation *user) {
    Operation *owner = block->findAncestorOpInBlock(*user);
    return owner && interiorSet.contains(owner);
  };
  Operation *insertionPoint =
      findInsertionPoint(root, analysis, created, isInterior);
  if (!insertionPoint)
    return rewriter.notifyMatchFailure(
        root, "a statistic is used before the chain's operands are all "
              "defined");

  created.commit(rewriter, insertionPoint);
  rewriter.setInsertionPoint(insertionPoint);

  replaceStatisticUses(rewriter, loc, normOp, analysis, isInterior);
  // Replace the root, erase the chain, then what only it used (inits,
  // constants).
  eraseReplacedChain(rewriter, root, normOp->getResult(0), analysis.interior);
  return success();
}

/// Raises the normalization chain ending at the matched op. Only the
/// outermost op of a chain is rewritten: when the single user of the op
/// would end a larger chain containing it, the pattern leaves the op to it.
///
/// With an analyzer (norm-raise's), analyses are shared between the ops of
/// one pass run; alone (in any driver), each match analyzes afresh.
struct RaiseNormalizationChain : public RewritePattern {
  RaiseNormalizationChain(MLIRContext *context, ChainAnalyzer *analyzer)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context),
        analyzer(analyzer) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isPossibleRoot(op))
      return failure();
    std::optional<ChainAnalyzer> local;
    ChainAnalyzer &chains = analyzer ? *analyzer : local.emplace();
    // A copy: the rewrite erases the root, and the analyzer forgets it.
    ChainAnalysis analysis = chains.analyze(op);
    if (!analysis.match)
      return rewriter.notifyMatchFailure(op, analysis.reason);
    Value result = op->getResult(0);
    if (result.hasOneUse()) {
      Operation *user = *result.getUsers().begin();
      const ChainAnalysis &outer = chains.analyze(user);
      if (outer.match && llvm::is_contained(outer.interior, op))
        return rewriter.notifyMatchFailure(op, "part of a larger chain");
    }
    return rewriteChain(rewriter, op, analysis);
  }

  ChainAnalyzer *analyzer;
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Tells the analyzer which ops the rewrites erase.
struct ForgetErasedOps : public RewriterBase::Listener {
  explicit ForgetErasedOps(ChainAnalyzer &analyzer) : analyzer(analyzer) {}
  void notifyOperationErased(Operation *op) override { analyzer.forget(op); }
  ChainAnalyzer &analyzer;
};

/// Tells the quantize raise's builders which ops the rewrites erase (their
/// evaluations are forgotten, and they are not visited).
struct ForgetErasedQuantizeOps : public RewriterBase::Listener {
  using Builders = DenseMap<Type, std::unique_ptr<TensorExprBuilder>>;
  ForgetErasedQuantizeOps(Builders &builders, Builders &blockBuilders)
      : builders(builders), blockBuilders(blockBuilders) {}
  void notifyOperationErased(Operation *op) override {
    erased.insert(op);
    for (Value result : op->getResults()) {
      for (auto &entry : builders)
        entry.second->forget(result);
      for (auto &entry : blockBuilders)
        entry.second->forget(result);
    }
  }
  Builders &builders;
  /// The builders of the block-scaled forms (block-scale ops enabled).
  Builders &blockBuilders;
  llvm::SmallPtrSet<Operation *, 16> erased;
};

/// Raises the chains of the op it runs on: the pattern set through
/// applyPatternsOnce, consumers first, with one ChainAnalyzer for all
/// candidates; then counts and explains the declined ones.
struct NormRaisePass : public norm::impl::NormRaisePassBase<NormRaisePass> {
  using NormRaisePassBase::NormRaisePassBase;
  NormRaisePass() = default;
  NormRaisePass(const NormRaisePass &other) : NormRaisePassBase(other) {}
  void runOnOperation() override;

  PassStatistic numRaisedLayerNorm{
      this, "raised-layer-norm", "Number of chains raised to norm.layer_norm"};
  PassStatistic numRaisedRMSNorm{this, "raised-rms-norm",
                                 "Number of chains raised to norm.rms_norm"};
  PassStatistic numRaisedDyT{this, "raised-dyt",
                             "Number of chains raised to norm.dyt"};
  PassStatistic numDeclined{
      this, "declined", "Number of normalization candidates left unchanged"};
  PassStatistic numRaisedGrad{this, "raised-grad",
                              "Number of gradients raised to norm.*_grad ops"};
  PassStatistic numDeclinedGrad{this, "declined-grad",
                                "Number of gradient candidates left unchanged"};
  PassStatistic numRaisedQuantize{
      this, "raised-quantize",
      "Number of quantizations raised to norm.quantize"};
  PassStatistic numDeclinedQuantize{
      this, "declined-quantize",
      "Number of quantization candidates left unchanged"};
};

} // namespace

/// Adds the raising pattern, sharing `analyzer` between its matches when
/// given (norm-raise's driver visits consumers first; see ChainAnalyzer).
static void populateNormRaisePatterns(RewritePatternSet &patterns,
                                      ChainAnalyzer *analyzer) {
  patterns.add<RaiseNormalizationChain>(patterns.getContext(), analyzer);
}

void mlir::norm::populateNormRaisePatterns(RewritePatternSet &patterns) {
  ::populateNormRaisePatterns(patterns, /*analyzer=*/nullptr);
}

/// Counts the norm ops of each kind under `root`.
static std::array<unsigned, 3> countNormOps(Operation *root) {
  std::array<unsigned, 3> counts{0, 0, 0};
  root->walk([&](Operation *op) {
    if (isa<LayerNormOp>(op))
      ++counts[0];
    else if (isa<RMSNormOp>(op))
      ++counts[1];
    else if (isa<DyTOp>(op))
      ++counts[2];
  });
  return counts;
}

/// The ops nested in `root`'s regions, in program order.
static SmallVector<Operation *> collectOps(Operation *root) {
  SmallVector<Operation *> ops;
  for (Region &region : root->getRegions())
    region.walk([&](Operation *op) { ops.push_back(op); });
  return ops;
}

/// Raises the decomposed static quantizations under `root` to
/// norm.quantize, consumers first, and counts (and with `remarks` explains)
/// the conversions to a quantized type that are declined. `assumeNoNans`
/// lets clamps that would turn a NaN into a number be raised.
static void raiseQuantizations(Operation *root, bool remarks, bool assumeNoNans,
                               unsigned &raised, unsigned &declined) {
  MLIRContext *context = root->getContext();
  // One builder per frame shape, shared by the candidates: a rewrite erases
  // only ops of its own chain (whose evaluations are forgotten) and ops
  // after the candidates still to be visited.
  DenseMap<Type, std::unique_ptr<TensorExprBuilder>> builders, blockBuilders;
  ForgetErasedQuantizeOps listener(builders, blockBuilders);
  IRRewriter rewriter(context, &listener);
  SmallVector<Operation *> ops = collectOps(root);
  // The scale tensors of block-scaled candidates (raised or explained with
  // their candidate).
  llvm::SmallPtrSet<Operation *, 8> blockScales;
  for (Operation *op : llvm::reverse(ops)) {
    if (listener.erased.contains(op) || op->getNumResults() != 1 ||
        blockScales.contains(op))
      continue;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    // UE8M0 scale codes are raised with the quantization that uses them.
    if (!type || isSupportedFloat(type.getElementType()) ||
        isa<Float8E8M0FNUType>(type.getElementType()))
      continue;
    auto frame =
        RankedTensorType::get(type.getShape(), IndexType::get(context));
    // The block-scaled forms first: their chains are also conversions to
    // f8E4M3FN, which the per-tensor and per-token analysis would decline.
    std::unique_ptr<TensorExprBuilder> &blockBuilder = blockBuilders[frame];
    if (!blockBuilder) {
      blockBuilder = std::make_unique<TensorExprBuilder>(frame);
      blockBuilder->setBlockScaleOps(true);
    }
    BlockScaledAnalysis blockAnalysis =
        analyzeBlockScaled(*blockBuilder, op, assumeNoNans);
    if (blockAnalysis.candidate) {
      blockScales.insert(blockAnalysis.scaleOps.begin(),
                         blockAnalysis.scaleOps.end());
      if (blockAnalysis.match &&
          succeeded(rewriteBlockScaled(rewriter, op, *blockAnalysis.match))) {
        ++raised;
        continue;
      }
      ++declined;
      if (remarks)
        op->emitRemark("block-scaled quantization not raised: ")
            << (blockAnalysis.match
                    ? std::string("the chain matched but could not be "
                                  "rewritten")
                    : blockAnalysis.reason);
      continue;
    }
    std::unique_ptr<TensorExprBuilder> &builder = builders[frame];
    if (!builder)
      builder = std::make_unique<TensorExprBuilder>(frame);
    QuantizeAnalysis analysis = analyzeQuantize(*builder, op, assumeNoNans);
    if (!analysis.candidate)
      continue;
    if (analysis.match &&
        succeeded(rewriteQuantize(rewriter, op, *analysis.match))) {
      ++raised;
      continue;
    }
    ++declined;
    if (remarks)
      op->emitRemark("quantization not raised: ")
          << (analysis.match ? std::string("the chain matched but could not "
                                           "be rewritten")
                             : analysis.reason);
  }
}

void NormRaisePass::runOnOperation() {
  Operation *root = getOperation();

  // Quantizations first: a quantization reads its input `y` as a tensor of
  // its own, whether a norm op or a chain the sweeps below raise. Raised
  // afterwards, a chain `norm(x) * m` with a scalar m could be taken for a
  // norm with a scalar weight, leaving no scale to the quantization.
  unsigned quantizeRaised = 0, quantizeDeclined = 0;
  raiseQuantizations(root, remarks, assumeNoNans, quantizeRaised,
                     quantizeDeclined);
  numRaisedQuantize += quantizeRaised;
  numDeclinedQuantize += quantizeDeclined;

  std::array<unsigned, 3> before = countNormOps(root);

  // Chains are matched from their last op: visit ops consumers first, so
  // the outermost op of a chain is tried before the ops inside it, and a
  // rewrite never changes what an op still to be visited depends on (the
  // analyzer's evaluations stay valid). The patterns erase the chain's ops
  // themselves; no folding or dead-code elimination touches the rest of the
  // IR.
  //
  // A chain whose input is another chain (a post-norm stack: the norm of
  // `x + f(x)` with x itself a normalization) is seen by the analyzer
  // through that inner chain, and matches only once the inner one is a norm
  // op. So sweeps repeat while one raises something, each on the IR the
  // previous one left (a stack of L norms takes L sweeps; the cap bounds
  // the work on pathological inputs).
  constexpr int kMaxSweeps = 64;
  std::array<unsigned, 3> after = before;
  // Gradients first, then the forward chains: a gradient reads the
  // forward's intermediate values (the statistics, `x * r` for dweight,
  // DyT's tanh), which keep the forward from being raised until the
  // gradient is a norm op; the forward then returns the statistics the
  // gradient op reads. Rounds repeat while one raises something.
  constexpr int kMaxRounds = 8;
  // The gradients left decomposed, as the last gradient sweep saw them
  // (valid while nothing was raised since).
  SmallVector<DeclinedGradient> declinedGradients;
  bool declinedStale = true;
  for (int round = 0; round < kMaxRounds; ++round) {
    unsigned gradients = raiseGradients(root, &declinedGradients);
    numRaisedGrad += gradients;
    declinedStale = gradients != 0;
    bool raisedForward = false;
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      SmallVector<Operation *> ops = collectOps(root);
      ChainAnalyzer analyzer(assumeNoNans);
      analyzer.prepare(ops);
      RewritePatternSet set(&getContext());
      ::populateNormRaisePatterns(set, &analyzer);
      FrozenRewritePatternSet patterns(std::move(set));
      ForgetErasedOps listener(analyzer);
      std::reverse(ops.begin(), ops.end());
      (void)applyPatternsOnce(ops, patterns, &listener);
      std::array<unsigned, 3> counts = countNormOps(root);
      bool raised = counts != after;
      after = counts;
      if (!raised)
        break;
      raisedForward = true;
    }
    declinedStale |= raisedForward;
    if (!gradients && !raisedForward)
      break;
  }
  if (declinedStale)
    numRaisedGrad += raiseGradients(root, &declinedGradients);
  for (const DeclinedGradient &gradient : declinedGradients) {
    ++numDeclinedGrad;
    if (remarks)
      gradient.op->emitRemark("gradient not raised: ") << gradient.reason;
  }

  numRaisedLayerNorm += after[0] - before[0];
  numRaisedRMSNorm += after[1] - before[1];
  numRaisedDyT += after[2] - before[2];

  // Declined candidates: chains whose analysis recognized a row statistic
  // (or DyT's tanh) but that are still there. Each reduction or tanh op is
  // attributed to the root whose analysis got furthest (the first on a
  // tie), and each such root is one candidate.
  struct Attribution {
    int progress = kNothing;
    Operation *root = nullptr;
  };
  SmallVector<Operation *> roots;
  for (Operation *op : collectOps(root))
    if (isPossibleRoot(op))
      roots.push_back(op);
  ChainAnalyzer analyzer(assumeNoNans);
  analyzer.prepare(roots);
  llvm::MapVector<Operation *, Attribution> anchors;
  DenseMap<Operation *, unsigned> positions;
  for (auto [position, op] : llvm::enumerate(roots)) {
    positions[op] = position;
    const ChainAnalysis &analysis = analyzer.analyze(op);
    if (analysis.progress < kStatistic)
      continue;
    for (Operation *anchor : analyzer.getAnchors(op)) {
      Attribution &entry = anchors[anchor];
      if (analysis.progress > entry.progress)
        entry = {analysis.progress, op};
    }
  }
  SmallVector<Operation *> declined;
  llvm::SmallPtrSet<Operation *, 8> declinedSet;
  for (auto &[anchor, entry] : anchors)
    if (entry.root && declinedSet.insert(entry.root).second)
      declined.push_back(entry.root);
  llvm::sort(declined, [&](Operation *a, Operation *b) {
    return positions.lookup(a) < positions.lookup(b);
  });
  for (Operation *op : declined) {
    ++numDeclined;
    if (remarks) {
      const ChainAnalysis &analysis = analyzer.analyze(op);
      op->emitRemark("normalization not raised: ")
          << (analysis.match ? std::string("the chain matched but could not "
                                           "be rewritten")
                             : analysis.reason);
    }
  }
}
