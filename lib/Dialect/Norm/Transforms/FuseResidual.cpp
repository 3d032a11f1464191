//===- FuseResidual.cpp - Fuse residual adds into norm ops ------*- C++ -*-===//
//
// norm-fuse-residual: `norm(a + b)` becomes `norm(a) residual(b)`, whose
// second result `residual_out` (the rounded sum) replaces the other uses of
// the add. The op's residual sum is defined as exactly the rounded sum an
// elementwise add computes, so the rewrite is exact.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/FloatUtils.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Support/PassStatistics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFUSERESIDUALPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

namespace {

/// What the producer of a norm's input is, seen as a residual add.
struct ResidualAdd {
  /// The producer is an add of two tensors (fusable or not).
  bool isAdd = false;
  /// The summands, when the add can be folded into the norm.
  Value lhs, rhs;
  /// Why a recognized add cannot be folded.
  std::string reason;
};

/// True when `value` is `extf(arg)` from `narrow` to a type with at least
/// 2p+2 bits of precision, where one rounding of a sum to `narrow` is the
/// correctly rounded sum.
static bool isWideningOf(Value value, Value arg) {
  auto ext = value.getDefiningOp<arith::ExtFOp>();
  if (!ext || ext.getIn() != arg)
    return false;
  Type narrow = arg.getType(), wide = ext.getType();
  return isSupportedFloat(narrow) && isSupportedFloat(wide) &&
         getPrecision(wide) >= 2 * getPrecision(narrow) + 2;
}

/// True when `value` is the sum of the block arguments `a` and `b` rounded
/// once to their type: `addf(a, b)` or `truncf(addf(extf a, extf b))`.
static bool isRoundedSum(Value value, Value a, Value b) {
  auto isAddOf = [](arith::AddFOp add, auto matchOperand) {
    return (matchOperand(add.getLhs(), 0) && matchOperand(add.getRhs(), 1)) ||
           (matchOperand(add.getLhs(), 1) && matchOperand(add.getRhs(), 0));
  };
  Value args[2] = {a, b};
  if (auto add = value.getDefiningOp<arith::AddFOp>())
    return isAddOf(add, [&](Value v, int i) { return v == args[i]; });
  auto trunc = value.getDefiningOp<arith::TruncFOp>();
  if (!trunc || trunc.getType() != a.getType())
    return false;
  auto add = trunc.getIn().getDefiningOp<arith::AddFOp>();
  return add &&
         isAddOf(add, [&](Value v, int i) { return isWideningOf(v, args[i]); });
}

/// Classifies the producer of `sum` (the input of a norm op of type `type`).
static ResidualAdd analyzeResidualAdd(Value sum) {
  ResidualAdd result;
  Operation *op = sum.getDefiningOp();
  if (!op)
    return result;
  Type type = sum.getType();
  auto setOperands = [&](Value lhs, Value rhs) {
    if (lhs.getType() != type || rhs.getType() != type) {
      result.reason = "the add broadcasts an operand or adds another type";
      return;
    }
    result.lhs = lhs;
    result.rhs = rhs;
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<arith::AddFOp>([&](arith::AddFOp add) {
        result.isAdd = true;
        setOperands(add.getLhs(), add.getRhs());
      })
      .Case<tosa::AddOp>([&](tosa::AddOp add) {
        result.isAdd = true;
        setOperands(add.getInput1(), add.getInput2());
      })
      .Case<linalg::AddOp, linalg::GenericOp>([&](linalg::LinalgOp linalgOp) {
        if (linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1)
          return;
        Block *body = linalgOp.getBlock();
        auto yield = cast<linalg::YieldOp>(body->getTerminator());
        if (!isRoundedSum(yield.getOperand(0), body->getArgument(0),
                          body->getArgument(1)))
          return;
        result.isAdd = true;
        bool identity =
            llvm::all_of(linalgOp.getIndexingMapsArray(),
                         [](AffineMap map) { return map.isIdentity(); });
        if (!identity || !linalgOp.hasPureTensorSemantics()) {
          result.reason = "the add broadcasts or transposes an operand";
          return;
        }
        setOperands(linalgOp.getDpsInputs()[0], linalgOp.getDpsInputs()[1]);
      });
  return result;
}

/// Why the add feeding `op` cannot be fused, or an empty string when it can;
/// sets `insertAfterAdd` when the fused op must be placed right after the
/// add (a use of the sum precedes the norm).
static std::string checkFusion(NormOpInterface op, const ResidualAdd &add,
                               bool &insertAfterAdd) {
  insertAfterAdd = false;
  if (!add.reason.empty())
    return add.reason;
  if (op.getResidual())
    return "the norm op already has a residual";
  Operation *addOp = op.getX().getDefiningOp();
  Block *block = op->getBlock();
  if (addOp->getBlock() != block)
    return "the add is in another block than the norm op";
  for (Operation *user : op.getX().getUsers()) {
    Operation *owner = block->findAncestorOpInBlock(*user);
    if (owner && owner != op && owner->isBeforeInBlock(op))
      insertAfterAdd = true;
  }
  if (!insertAfterAdd)
    return "";
  // Other uses of the sum come before the norm: the fused op goes right
  // after the add, so its parameters must be defined before the add.
  for (Value operand : op->getOperands()) {
    if (operand == op.getX())
      continue;
    Operation *def = operand.getDefiningOp();
    if (def && def->getBlock() == block && !def->isBeforeInBlock(addOp))
      return "the sum is used before the norm op and a parameter of the norm "
             "is defined after the add";
  }
  return "";
}

/// Copies the attributes of `from` to the same op `to` with a residual.
template <typename OpTy>
static void copyAttributes(OpTy from, OpTy to) {
  to.setAxisAttr(from.getAxisAttr());
  to.setComputeTypeAttr(from.getComputeTypeAttr());
  to.setCastModeAttr(from.getCastModeAttr());
  if constexpr (!std::is_same_v<OpTy, DyTOp>)
    to.setEpsilonAttr(from.getEpsilonAttr());
  if constexpr (std::is_same_v<OpTy, RMSNormOp>) {
    to.setEpsilonModeAttr(from.getEpsilonModeAttr());
    to.setWeightOffsetAttr(from.getWeightOffsetAttr());
  }
  if constexpr (!std::is_same_v<OpTy, DyTOp>)
    to.setReturnStats(from.getReturnStats());
  to->setDiscardableAttrs(from->getDiscardableAttrDictionary());
}

/// Folds `add(a, b)` feeding a norm op into `norm(a) residual(b)`; other
/// uses of the sum take the op's `residual_out`.
struct FoldResidualAddIntoNorm
    : public OpInterfaceRewritePattern<NormOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    ResidualAdd add = analyzeResidualAdd(op.getX());
    if (!add.isAdd)
      return rewriter.notifyMatchFailure(op, "the input is not an add");
    bool insertAfterAdd;
    std::string reason = checkFusion(op, add, insertAfterAdd);
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);

    Value sum = op.getX();
    Operation *addOp = sum.getDefiningOp();
    if (insertAfterAdd)
      rewriter.setInsertionPointAfter(addOp);
    else
      rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    // y and residual_out have the type of the add's lhs; the statistics
    // keep theirs.
    Type sumType = add.lhs.getType();
    SmallVector<Type> extraTypes{sumType};
    for (Value stat : op->getResults().drop_front(op.getNumOutputs()))
      extraTypes.push_back(stat.getType());
    Operation *fused =
        llvm::TypeSwitch<Operation *, Operation *>(op)
            .Case<LayerNormOp>([&](LayerNormOp norm) {
              auto newOp = LayerNormOp::create(
                  rewriter, loc, sumType, extraTypes, add.lhs, norm.getWeight(),
                  norm.getBias(), add.rhs, FloatAttr(), IntegerAttr(),
                  TypeAttr(), CastModeAttr(), UnitAttr());
              copyAttributes(norm, newOp);
              return newOp;
            })
            .Case<RMSNormOp>([&](RMSNormOp norm) {
              auto newOp = RMSNormOp::create(
                  rewriter, loc, sumType, extraTypes, add.lhs, norm.getWeight(),
                  add.rhs, FloatAttr(), EpsilonModeAttr(), FloatAttr(),
                  IntegerAttr(), TypeAttr(), CastModeAttr(), UnitAttr());
              copyAttributes(norm, newOp);
              return newOp;
            })
            .Case<DyTOp>([&](DyTOp norm) {
              auto newOp =
                  DyTOp::create(rewriter, loc, add.lhs, norm.getAlpha(),
                                norm.getWeight(), norm.getBias(), add.rhs);
              copyAttributes(norm, newOp);
              return newOp;
            })
            .Default([](Operation *) { return nullptr; });
    if (!fused)
      return rewriter.notifyMatchFailure(op, "unknown norm op");

    // y and the statistics replace the op's results; residual_out the sum.
    SmallVector<Value> replacements{fused->getResult(0)};
    llvm::append_range(replacements, fused->getResults().drop_front(2));
    Value residualOut = fused->getResult(1);
    rewriter.replaceOp(op, replacements);
    rewriter.replaceAllUsesWith(sum, residualOut);
    if (addOp->use_empty())
      rewriter.eraseOp(addOp);
    return success();
  }
};

/// Fuses the residual add of every norm op once, in program order, then
/// counts and explains the norm ops still fed by an add.
struct NormFuseResidualPass
    : public norm::impl::NormFuseResidualPassBase<NormFuseResidualPass> {
  using NormFuseResidualPassBase::NormFuseResidualPassBase;
  NormFuseResidualPass() = default;
  NormFuseResidualPass(const NormFuseResidualPass &other)
      : NormFuseResidualPassBase(other), patterns(other.patterns) {}

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateNormFuseResidualPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override;

  FrozenRewritePatternSet patterns;

  PassStatistic numFused{this, "fused", "Number of residual adds fused"};
  PassStatistic numDeclined{this, "declined",
                            "Number of add-fed norm ops left unchanged"};
};

} // namespace

void mlir::norm::populateNormFuseResidualPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldResidualAddIntoNorm>(patterns.getContext());
}

void NormFuseResidualPass::runOnOperation() {
  // Each norm op is visited once, in program order: a chain of pre-norm
  // blocks fuses at every step since each add feeds the next norm directly.
  // Only norm ops and their input adds change; nothing else is folded.
  SmallVector<Operation *> norms;
  getOperation()->walk([&](NormOpInterface op) { norms.push_back(op); });
  numFused += applyPatternsOnce(norms, patterns);

  // Candidates left: norm ops still fed by an add.
  getOperation()->walk([&](NormOpInterface op) {
    ResidualAdd add = analyzeResidualAdd(op.getX());
    if (!add.isAdd)
      return;
    bool insertAfterAdd;
    std::string reason = checkFusion(op, add, insertAfterAdd);
    if (reason.empty())
      reason = "the add was not fused";
    ++numDeclined;
    if (remarks)
      op->emitRemark("residual add not fused: ") << reason;
  });
}
