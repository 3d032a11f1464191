//===- FoldMatmulWeightsPlan.cpp - Plan of norm-fold-matmul-weights -------===//
//
// The analysis of norm-fold-matmul-weights: which matmuls consume a norm
// op's result through a constant right-hand side, whether the op's
// parameters are constants, and the folded right-hand sides (and bias
// rows), all computed before the IR changes so that a declined candidate
// leaves it untouched.
//
//===----------------------------------------------------------------------===//

#include "FoldMatmulWeights.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "norm/Dialect/Norm/IR/ConstantValues.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Support/PassStatistics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"
#include <cmath>
#include <limits>
#include <vector>

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::fold_matmul_weights;

using Options = NormFoldMatmulWeightsPassOptions;

//===----------------------------------------------------------------------===//
// Analysis: what one norm op folds into, read before the IR changes
//===----------------------------------------------------------------------===//

/// True for linalg.matmul with the maps of a matmul with transposed B.
static bool hasTransposedBMaps(linalg::MatmulOp matmul) {
  if (!matmul.hasUserDefinedMaps())
    return false;
  MLIRContext *ctx = matmul.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> expected = {AffineMap::get(3, 0, {m, k}, ctx),
                                     AffineMap::get(3, 0, {n, k}, ctx),
                                     AffineMap::get(3, 0, {m, n}, ctx)};
  return matmul.getIndexingMapsArray() == expected;
}

/// True for a `tosa.matmul` whose zero points are float zeros (the only
/// ones a float matmul may have; anything else is no plain product).
static bool isFloatTosaMatmul(tosa::MatMulOp matmul) {
  return matchPattern(matmul.getAZp(), m_AnyZeroFloat()) &&
         matchPattern(matmul.getBZp(), m_AnyZeroFloat());
}

/// Fills `use` from a matmul consuming `lhs` as its first input.
static LogicalResult analyzeMatmul(Operation *user, Value lhs, int64_t limit,
                                   MatmulUse &use, std::string &reason) {
  use.lhs = lhs;
  Value rhs;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(user)) {
    if (matmul.hasUserDefinedMaps() && !hasTransposedBMaps(matmul)) {
      reason = "matmul with unsupported indexing maps";
      return failure();
    }
    use.nMajor = hasTransposedBMaps(matmul);
    rhs = matmul.getDpsInputs()[1];
  } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(user)) {
    if (batch.hasUserDefinedMaps()) {
      reason = "batch_matmul with user-defined indexing maps";
      return failure();
    }
    rhs = batch.getDpsInputs()[1];
  } else if (auto tosaMatmul = dyn_cast<tosa::MatMulOp>(user)) {
    if (!isFloatTosaMatmul(tosaMatmul)) {
      reason = "tosa.matmul with nonzero or non-constant zero points";
      return failure();
    }
    rhs = tosaMatmul.getB();
  } else {
    reason = "a user is not a matmul";
    return failure();
  }
  use.matmul = user;
  // The fold changes what the LHS holds: any other operand reading it (the
  // RHS, or the init a matmul accumulates into) would change too.
  if (user->getOperand(0) != lhs ||
      llvm::count(user->getOperands(), lhs) != 1) {
    reason = "the normalized value is not only the matmul's left operand";
    return failure();
  }
  if (auto transpose = rhs.getDefiningOp<linalg::TransposeOp>()) {
    if (!isa<linalg::MatmulOp>(user) || use.nMajor ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0}) {
      reason = "unsupported transpose feeding the matmul";
      return failure();
    }
    use.transpose = transpose;
    use.nMajor = true;
    rhs = transpose.getInput();
  } else if (auto transpose = rhs.getDefiningOp<tosa::TransposeOp>()) {
    // [B, N, K] -> [B, K, N], the batched form of nn.Linear's weight.
    if (!isa<tosa::MatMulOp>(user) ||
        transpose.getPerms() != ArrayRef<int32_t>{0, 2, 1}) {
      reason = "unsupported transpose feeding the matmul";
      return failure();
    }
    use.transpose = transpose;
    use.nMajor = true;
    rhs = transpose.getInput1();
  }
  use.constantOp = rhs.getDefiningOp();
  if (!matchPattern(rhs, m_Constant(&use.constant)) ||
      !isa<DenseFPElementsAttr, DenseResourceElementsAttr>(use.constant) ||
      !isa<FloatType>(use.constant.getElementType())) {
    reason = "the matmul's right-hand side is not a constant";
    return failure();
  }
  // A dense_resource blob may be missing, or carry a dynamically shaped
  // type (the verifier accepts both).
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(use.constant);
      (resource && !resource.getRawHandle().getBlob()) ||
      !cast<ShapedType>(use.constant.getType()).hasStaticShape()) {
    reason = "the matmul's right-hand side is not a constant";
    return failure();
  }
  if (use.constant.getNumElements() > limit) {
    reason = "the constant right-hand side exceeds max-rhs-elements";
    return failure();
  }
  // The constant's K dim (and batch dim) must be the LHS's: the matmul's
  // verifier leaves a dynamic LHS dim unchecked.
  ArrayRef<int64_t> lhsShape = cast<ShapedType>(lhs.getType()).getShape();
  ArrayRef<int64_t> shape = cast<ShapedType>(use.constant.getType()).getShape();
  int64_t rank = shape.size();
  auto differs = [](int64_t lhsDim, int64_t dim) {
    return !ShapedType::isDynamic(lhsDim) && lhsDim != dim;
  };
  if (rank != int64_t(lhsShape.size()) ||
      differs(lhsShape.back(), shape[use.nMajor ? rank - 1 : rank - 2]) ||
      (rank == 3 && differs(lhsShape[0], shape[0]))) {
    reason = "the right-hand side's K or batch dim is not the left operand's";
    return failure();
  }
  return success();
}

/// True when `reshape` of the normalized value `y` keeps its rows: a static
/// `[B, M, K]` result whose last dim is y's (row-major reshapes that keep the
/// last dim move whole rows).
static bool keepsRows(tosa::ReshapeOp reshape, Value y) {
  auto inputType = cast<ShapedType>(y.getType());
  auto resultType = cast<ShapedType>(reshape.getType());
  return inputType.hasStaticShape() && resultType.hasStaticShape() &&
         resultType.getRank() == 3 &&
         resultType.getShape().back() == inputType.getShape().back();
}

/// Finds the matmul uses of `op`'s result, or why there are none usable.
static Analysis analyze(NormOpInterface op, int64_t limit) {
  Analysis analysis;
  Value y = op.getY();
  RankedTensorType type = op.getInputType();
  if (op.getNumNormalizedDims() != 1 || type.getRank() < 2 ||
      type.getRank() > 3) {
    analysis.reason = "only rank-2/3 inputs normalized over the last dim";
    return analysis;
  }
  if (y.use_empty()) {
    analysis.reason = "the result has no users";
    return analysis;
  }
  for (Operation *user : y.getUsers()) {
    // batch_matmul on 3-D results, matmul on 2-D results or on a collapse of
    // a 3-D result to rows.
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user)) {
      if (collapse.getResultType().getRank() != 2 ||
          collapse.getReassociationIndices().back().size() != 1) {
        analysis.reason = "unsupported collapse of the result";
        return analysis;
      }
      for (Operation *collapseUser : collapse->getUsers()) {
        MatmulUse use;
        if (!isa<linalg::MatmulOp>(collapseUser) ||
            failed(analyzeMatmul(collapseUser, collapse, limit, use,
                                 analysis.reason))) {
          if (analysis.reason.empty())
            analysis.reason = "a user of the collapsed result is not a matmul";
          analysis.uses.clear();
          return analysis;
        }
        analysis.uses.push_back(use);
      }
      continue;
    }
    // tosa.matmul on 3-D results or on a reshape of the result to
    // [B, M, K], as torch-mlir's TOSA backend emits nn.Linear.
    if (auto reshape = dyn_cast<tosa::ReshapeOp>(user)) {
      if (!keepsRows(reshape, y)) {
        analysis.reason = "unsupported reshape of the result";
        return analysis;
      }
      for (Operation *reshapeUser : reshape->getUsers()) {
        MatmulUse use;
        if (!isa<tosa::MatMulOp>(reshapeUser) ||
            failed(analyzeMatmul(reshapeUser, reshape, limit, use,
                                 analysis.reason))) {
          if (analysis.reason.empty())
            analysis.reason = "a user of the reshaped result is not a matmul";
          analysis.uses.clear();
          return analysis;
        }
        analysis.uses.push_back(use);
      }
      continue;
    }
    MatmulUse use;
    if (failed(analyzeMatmul(user, y, limit, use, analysis.reason))) {
      analysis.uses.clear();
      return analysis;
    }
    if (isa<linalg::BatchMatmulOp, tosa::MatMulOp>(user) !=
        (type.getRank() == 3)) {
      analysis.reason = "matmul rank does not match the normalized value";
      analysis.uses.clear();
      return analysis;
    }
    analysis.uses.push_back(use);
  }
  return analysis;
}

/// The value `value` reshapes (through `tensor.collapse_shape`,
/// `tensor.expand_shape` and `tosa.reshape`, which keep the row-major order
/// of the elements), or `value` itself.
static Value lookThroughReshapes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tosa::ReshapeOp>(
            def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// Reads the constant float elements of an optional operand (empty when
/// absent), also through reshapes of a constant (torch-mlir's TOSA backend
/// keeps a weight as `[1, 1, K]`); fails when present but not a constant.
static LogicalResult readConstant(Value value, SmallVector<double> &values) {
  values.clear();
  if (!value)
    return success();
  std::optional<FloatConstant> constant =
      readFloatConstant(lookThroughReshapes(value));
  if (!constant)
    return failure();
  values = constant->getValuesAsDoubles();
  return success();
}

//===----------------------------------------------------------------------===//
// The folded right-hand sides and the plan, computed before the IR changes
//===----------------------------------------------------------------------===//

/// `value` as a double, also when the host flushes subnormal inputs.
static double toDouble(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if ((bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0)
    return APFloat(value).convertToDouble();
  return value;
}

/// `value` rounded to nearest even in `semantics`.
APFloat fold_matmul_weights::roundTo(double value,
                                     const llvm::fltSemantics &semantics) {
  APFloat result(value);
  bool losesInfo = false;
  result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return result;
}

/// Whether a folded element keeps the range of its type: `rounded` (the
/// product `w * scale` rounded to the RHS element type) is finite, and a
/// normal number unless it is the product exactly (a zero factor, or a
/// subnormal element left as it was). A product that overflows, or that
/// flushes to zero or a subnormal (losing its precision), would change the
/// matmul by more than rounding.
static bool keepsRange(const APFloat &rounded, double w, double scale) {
  if (!rounded.isFinite())
    return false;
  if (rounded.isNormal())
    return true;
  double product = w * scale;
  return rounded.convertToDouble() == product &&
         (product != 0 || w == 0 || scale == 0);
}

/// The elements of the constant RHS of `use` as host floats, where its type
/// allows it: a dense attribute's data, or an f32/f64 dense_resource blob.
static void readHostValues(const MatmulUse &use, SmallVectorImpl<float> &f32,
                           SmallVectorImpl<double> &f64) {
  Type elementType = use.constant.getElementType();
  if (auto dense = dyn_cast<DenseFPElementsAttr>(use.constant)) {
    if (elementType.isF32())
      f32.assign(dense.getValues<float>().begin(),
                 dense.getValues<float>().end());
    else if (elementType.isF64())
      f64.assign(dense.getValues<double>().begin(),
                 dense.getValues<double>().end());
  } else if (auto blob = dyn_cast<DenseF32ResourceElementsAttr>(use.constant)) {
    if (std::optional<ArrayRef<float>> values = blob.tryGetAsArrayRef())
      f32.assign(values->begin(), values->end());
  } else if (auto blob = dyn_cast<DenseF64ResourceElementsAttr>(use.constant)) {
    if (std::optional<ArrayRef<double>> values = blob.tryGetAsArrayRef())
      f64.assign(values->begin(), values->end());
  }
}

/// Folds the weight into the rows of the RHS of `use`,
/// `W'[k, n] = (w[k] + offset) * W[k, n]` computed in f64 and rounded to its
/// element type, and sums `bias @ W` (one entry per column, per batch) into
/// `use.folded`. Fails with `reason` when a folded element would not keep
/// the range of its type (see keepsRange) or a bias entry would not be
/// finite in the matmul's result type.
static LogicalResult foldRhs(MatmulUse &use, const FoldPlan &plan,
                             std::string &reason) {
  auto constType = cast<RankedTensorType>(use.constant.getType());
  ArrayRef<int64_t> shape = constType.getShape();
  int64_t k = plan.k;
  int64_t n = use.nMajor ? shape[shape.size() - 2] : shape[shape.size() - 1];
  int64_t numElements = use.constant.getNumElements();
  FoldedRhs &folded = use.folded;
  folded.biasRow.assign(plan.bias.empty() ? 0 : numElements / k, 0.0);
  // The factor of element `index` of the constant, `w`; adds its bias term.
  auto scaleOf = [&](int64_t index, double w) {
    int64_t inner = index % (n * k);
    int64_t kk = use.nMajor ? inner % k : inner / n;
    int64_t nn = use.nMajor ? inner / k : inner % n;
    int64_t batch = index / (n * k);
    if (!plan.bias.empty())
      folded.biasRow[batch * n + nn] += plan.bias[kk] * w;
    return plan.weight.empty() ? 1.0 : plan.weight[kk] + plan.offset;
  };
  auto outOfRange = [&] {
    reason = "a folded element of the right-hand side would overflow, or "
             "flush to zero or a subnormal, in its element type";
    return failure();
  };

  // f32 and f64 weights (almost every model) are read and written as host
  // floats: APFloat per element made this pass the slowest of the three.
  // The host's double-to-float conversion rounds a normal, finite result to
  // nearest even, as APFloat does; the other results take APFloat's path,
  // so nothing depends on the host's flush-to-zero mode.
  Type elementType = constType.getElementType();
  SmallVector<float> f32Values;
  SmallVector<double> f64Values;
  readHostValues(use, f32Values, f64Values);
  int64_t index = 0;
  if (elementType.isF32() && int64_t(f32Values.size()) == numElements) {
    folded.f32.reserve(numElements);
    for (float value : f32Values) {
      double w = toDouble(value);
      double scale = scaleOf(index++, w);
      double product = w * scale;
      double magnitude = std::fabs(product);
      if (magnitude >= std::numeric_limits<float>::min() &&
          magnitude <= std::numeric_limits<float>::max()) {
        folded.f32.push_back(static_cast<float>(product));
        continue;
      }
      APFloat rounded = roundTo(product, APFloat::IEEEsingle());
      if (!keepsRange(rounded, w, scale))
        return outOfRange();
      folded.f32.push_back(rounded.convertToFloat());
    }
  } else if (elementType.isF64() && int64_t(f64Values.size()) == numElements) {
    folded.f64.reserve(numElements);
    for (double w : f64Values) {
      double scale = scaleOf(index++, w);
      double product = w * scale;
      if (!keepsRange(APFloat(product), w, scale))
        return outOfRange();
      folded.f64.push_back(product);
    }
  } else {
    std::optional<FloatConstant> constant = readFloatConstant(use.constant);
    if (!constant) {
      reason = "the matmul's right-hand side is not a constant";
      return failure();
    }
    const llvm::fltSemantics &semantics =
        cast<FloatType>(elementType).getFloatSemantics();
    folded.other.reserve(numElements);
    for (const APFloat &value : constant->values) {
      double w = getAsDouble(value);
      double scale = scaleOf(index++, w);
      APFloat rounded = roundTo(w * scale, semantics);
      if (!keepsRange(rounded, w, scale))
        return outOfRange();
      folded.other.push_back(rounded);
    }
  }

  if (folded.biasRow.empty())
    return success();
  auto resultType = dyn_cast<FloatType>(
      getElementTypeOrSelf(use.matmul->getResult(0).getType()));
  if (!resultType || llvm::any_of(folded.biasRow, [&](double v) {
        return !roundTo(v, resultType.getFloatSemantics()).isFinite();
      })) {
    reason = "the bias row bias @ W would not be finite in the matmul's "
             "result type";
    return failure();
  }
  return success();
}

bool fold_matmul_weights::canDeferScale(NormOpInterface op,
                                        const Options &options) {
  return options.deferScale && isa<RMSNormOp>(op) && !op.getResidual() &&
         op.getCastMode() == CastMode::final;
}

/// True when `init` is zero: a zero splat constant or a fill with zero.
static bool isZeroInit(Value init) {
  if (matchPattern(init, m_AnyZeroFloat()))
    return true;
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// Why the per-row scale of `op` cannot move after the matmuls of `uses`,
/// or an empty string. The op must go (no used statistics); each matmul
/// must start from zero (`r * (C + x @ W')` is not `C + r * (x @ W')`) and
/// accumulate in f32 or f64 (on raw x, a narrow accumulator overflows
/// where the normalized rows keep it in range).
static std::string whyNotDeferred(NormOpInterface op,
                                  ArrayRef<MatmulUse> uses) {
  if (op.hasUsedStats())
    return "the norm op's statistics are used";
  for (const MatmulUse &use : uses) {
    Type accumulator = getElementTypeOrSelf(use.matmul->getResult(0));
    if (!accumulator.isF32() && !accumulator.isF64())
      return "a matmul accumulates in a type other than f32 or f64";
    // tosa.matmul has no init: it starts from zero.
    auto matmul = dyn_cast<linalg::LinalgOp>(use.matmul);
    if (matmul && !isZeroInit(matmul.getDpsInits()[0]))
      return "a matmul accumulates into an init that is not zero";
  }
  return "";
}

FailureOr<FoldPlan> fold_matmul_weights::planFold(NormOpInterface op,
                                                  const Options &options,
                                                  std::string &reason) {
  FoldPlan plan;
  plan.defer = canDeferScale(op, options);
  if (failed(readConstant(op.getWeight(), plan.weight)) ||
      failed(readConstant(op.getBias(), plan.bias))) {
    reason = "weight or bias is not a constant";
    return failure();
  }
  Analysis analysis = analyze(op, options.maxRhsElements);
  if (analysis.uses.empty()) {
    reason = analysis.reason;
    return failure();
  }
  plan.uses = std::move(analysis.uses);
  plan.k = op.getInputType().getShape().back();
  if (ShapedType::isDynamic(plan.k)) {
    reason = "the normalized dim is not static";
    return failure();
  }
  // A scalar weight (tensor<T> or tensor<1xT>, RowView's rule) scales every
  // row of the RHS alike.
  if (plan.weight.size() == 1 && op.getWeight() &&
      RowView::getParameterAccess(op.getWeight()) == ParameterAccess::Scalar)
    plan.weight.resize(plan.k, plan.weight[0]);
  if (!plan.weight.empty() && int64_t(plan.weight.size()) != plan.k) {
    reason = "the normalized dim is not static";
    return failure();
  }
  plan.offset = op.getWeightOffset().convertToDouble();
  if (plan.defer) {
    plan.notDeferred = whyNotDeferred(op, plan.uses);
    plan.defer = plan.notDeferred.empty();
  }
  for (MatmulUse &use : plan.uses)
    if (failed(foldRhs(use, plan, reason)))
      return failure();
  return plan;
}
