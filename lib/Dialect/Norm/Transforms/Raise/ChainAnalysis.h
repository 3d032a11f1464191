//===- ChainAnalysis.h - Normalization chains ending at an op ---*- C++ -*-===//
//
// The analysis behind norm-raise: the decomposed normalization (if any)
// that ends at a candidate op, the ops that compute it, and why a candidate
// is declined. Candidates share the evaluation of the IR, so analyzing
// every op of a function costs time linear in its size.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_CHAINANALYSIS_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_CHAINANALYSIS_H

#include "RaiseMatcher.h"

#include "llvm/ADT/DenseMap.h"

#include <memory>

namespace mlir {
namespace norm {

/// An intermediate value of a chain that is also used outside it and
/// computes one of the op's statistics (`return_stats`), with the leading
/// dims of the input and unit normalized dims (`[M, 1]`) or the leading dims
/// alone, in the compute type or converted to `value`'s element type.
struct StatisticUse {
  Value value;
  /// The op's statistic: 0 for LayerNorm's mean, 1 for its rstd; 0 for
  /// RMSNorm's rstd.
  unsigned index = 0;
};

/// What was found at one candidate root.
struct ChainAnalysis {
  std::optional<NormMatch> match;
  int progress = kNothing;
  std::string reason;
  /// The materialized input `x`.
  Value x;
  /// The chain's ops (the root included), in program order.
  SmallVector<Operation *> interior;
  /// The statistics the chain computes that are also used outside it.
  SmallVector<StatisticUse> statistics;
};

/// True for ops that may end a chain: one ranked float tensor result.
bool isPossibleRoot(Operation *op);

/// Analyzes the chains ending at candidate ops. The IR is evaluated once
/// for all candidates: one TensorExprBuilder per frame shape memoizes what
/// every value computes, and each candidate's analysis is memoized too.
///
/// Memoized results stay valid while the IR they depend on is unchanged.
/// norm-raise visits candidates consumers first, so a rewrite only changes
/// ops after every candidate still to be visited (the chain it replaces is
/// used by nothing else, and the new op takes its place); the ops it erases
/// are forgotten (`forget`), so that a new op at the same address is
/// analyzed afresh.
class ChainAnalyzer {
public:
  /// With `assumeNoNans`, a clamp that turns a NaN into a number (see
  /// describeNaNDrop) does not decline a chain.
  explicit ChainAnalyzer(bool assumeNoNans = false)
      : assumeNoNans(assumeNoNans) {}
  ChainAnalyzer(const ChainAnalyzer &) = delete;
  ChainAnalyzer &operator=(const ChainAnalyzer &) = delete;

  /// Records the program order of `ops` (a walk of the IR) and evaluates
  /// the possible roots among them in that order, producers first, so that
  /// each evaluation meets memoized operands after a few levels instead of
  /// going down the whole function (a residual stream, say).
  void prepare(ArrayRef<Operation *> ops);

  /// The chain ending at `root` (memoized). The reference stays valid until
  /// `root` is forgotten.
  const ChainAnalysis &analyze(Operation *root);

  /// The reduction and tanh ops that the chain at `root` went through (its
  /// anchors: a decomposed normalization is one candidate however many of
  /// its ops could end a chain), or `root` itself when there are none.
  SmallVector<Operation *> getAnchors(Operation *root);

  /// Drops what is known about `op`, which is being erased.
  void forget(Operation *op);

private:
  TensorExprBuilder &getBuilder(RankedTensorType frameType);
  void collectInterior(TensorExprBuilder &builder,
                       const TensorExprEvaluation &root, const NormMatch &match,
                       ChainAnalysis &analysis);
  void sortInProgramOrder(SmallVectorImpl<Operation *> &ops) const;

  /// One builder per frame shape (a tensor type of that shape and index
  /// elements stands for the shape).
  DenseMap<Type, std::unique_ptr<TensorExprBuilder>> builders;
  DenseMap<Operation *, std::unique_ptr<ChainAnalysis>> analyses;
  bool assumeNoNans;
  /// Positions of the prepared ops in program order.
  DenseMap<Operation *, unsigned> positions;
};

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_CHAINANALYSIS_H
