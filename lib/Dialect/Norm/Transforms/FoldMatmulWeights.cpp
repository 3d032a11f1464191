//===- FoldMatmulWeights.cpp - Fold norm weights into matmuls ---*- C++ -*-===//
//
// norm-fold-matmul-weights: FlashNorm-style folding of a norm op's weight
// (and weight_offset) into the rows of the constant RHS of its matmul
// consumers, of its bias into a row vector added after them, and, with
// defer-scale, of rms_norm's per-row scale into an epilogue.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/Utils/PatternDriver.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "norm/Dialect/Norm/IR/ConstantValues.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/RowView.h"
#include "norm/Support/PassStatistics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <limits>
#include <vector>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFOLDMATMULWEIGHTSPASS
#include "norm/Dialect/Norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

using Options = NormFoldMatmulWeightsPassOptions;

namespace {

/// The folded RHS of one matmul, computed before the IR changes: its
/// elements in the RHS element type (host floats for f32 and f64, APFloats
/// otherwise) and the bias row `bias @ W` (empty without a bias).
struct FoldedRhs {
  SmallVector<float> f32;
  SmallVector<double> f64;
  SmallVector<APFloat> other;
  SmallVector<double> biasRow;
};

/// A matmul consuming the norm result, with its constant RHS.
struct MatmulUse {
  /// `linalg.matmul`, `linalg.batch_matmul` or `tosa.matmul`: operand 0 is
  /// the LHS and operand 1 the RHS in all three.
  Operation *matmul = nullptr;
  /// The LHS value of the matmul: the norm result, its collapse to rows
  /// (`tensor.collapse_shape`) or its reshape to `[B, M, K]` (`tosa.reshape`).
  Value lhs;
  /// The constant the RHS is made of, in its own layout: a dense elements
  /// attribute or a dense_resource blob (torch-mlir's exported weights).
  ElementsAttr constant;
  /// The op holding `constant` (`arith.constant`, `tosa.const`, ...).
  Operation *constantOp = nullptr;
  /// The transpose turning `constant` ([N, K] or [B, N, K]) into the RHS
  /// (`linalg.transpose` or `tosa.transpose`), or null.
  Operation *transpose = nullptr;
  /// True when `constant` is laid out [N, K] or [B, N, K] (transpose op or
  /// transposed indexing maps), false for [K, N] (or [B, K, N]).
  bool nMajor = false;
  /// The RHS with the weight folded in (filled by planFold).
  FoldedRhs folded;
};

/// Outcome of the analysis: the uses, or why the candidate is declined.
struct Analysis {
  std::vector<MatmulUse> uses;
  std::string reason;
};

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

/// Builds `result + broadcast(rowVector)` where rowVector varies along the
/// last dim (and the batch dim for rank 3).
static Value addRowVector(OpBuilder &b, Location loc, Value result,
                          Value rowVector) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> vectorDims;
  if (rank == 3)
    vectorDims.push_back(getAffineDimExpr(0, ctx));
  vectorDims.push_back(getAffineDimExpr(rank - 1, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap vectorMap = AffineMap::get(rank, 0, vectorDims, ctx);
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, result), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{result, rowVector}, init,
             ArrayRef<AffineMap>{id, vectorMap, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddFOp::create(nb, nl, args[0], args[1]).getResult());
             })
      .getResult(0);
}

/// Builds the per-row scale r of rms_norm `op` on its input (rows = all
/// leading dims), in the compute type.
static Value buildRowScale(OpBuilder &b, Location loc, NormOpInterface op) {
  Value x = op.getX();
  RankedTensorType type = op.getInputType();
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  Type computeType = op.getComputeElementType();
  Type f64 = b.getF64Type();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  ArrayRef<OpFoldResult> rowSizes = ArrayRef(sizes).drop_back();
  SmallVector<AffineExpr> rowDims;
  for (int64_t d = 0; d < rank - 1; ++d)
    rowDims.push_back(getAffineDimExpr(d, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowMap = AffineMap::get(rank, 0, rowDims, ctx);
  SmallVector<utils::IteratorType> iterators(rank - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value zero = buildFloatConstant(b, loc, f64, 0.0);
  Value empty = tensor::EmptyOp::create(b, loc, rowSizes, f64);
  Value acc = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  Value squares =
      linalg::GenericOp::create(
          b, loc, acc.getType(), x, acc, ArrayRef<AffineMap>{id, rowMap},
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value v = castFloat(nb, nl, args[0], computeType);
            Value sq =
                castFloat(nb, nl, arith::MulFOp::create(nb, nl, v, v), f64);
            linalg::YieldOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, args[1], sq).getResult());
          })
          .getResult(0);
  Value count = buildIndexToFloat(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, sizes.back()), f64);
  Value init = tensor::EmptyOp::create(b, loc, rowSizes, computeType);
  AffineMap rowId = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
  return linalg::GenericOp::create(
             b, loc, init.getType(), squares, init,
             ArrayRef<AffineMap>{rowId, rowId},
             SmallVector<utils::IteratorType>(rank - 1,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value ms = castFloat(
                   nb, nl, arith::DivFOp::create(nb, nl, args[0], count),
                   computeType);
               linalg::YieldOp::create(nb, nl,
                                       buildInverseScale(nb, nl, op, ms));
             })
      .getResult(0);
}

/// Multiplies every row of the matmul result `result` by `scale` (indexed by
/// the result's leading dims).
static Value scaleRows(OpBuilder &b, Location loc, Value result, Value scale) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> rowDims;
  for (int64_t d = 0; d < rank - 1; ++d)
    rowDims.push_back(getAffineDimExpr(d, ctx));
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowMap = AffineMap::get(rank, 0, rowDims, ctx);
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, result), type.getElementType());
  Type scaleType = cast<RankedTensorType>(scale.getType()).getElementType();
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{result, scale}, init,
             ArrayRef<AffineMap>{id, rowMap, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = castFloat(nb, nl, args[0], scaleType);
               Value scaled = arith::MulFOp::create(nb, nl, v, args[1]);
               linalg::YieldOp::create(
                   nb, nl, castFloat(nb, nl, scaled, type.getElementType()));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Analysis: what one norm op folds into, read before the IR changes
//===----------------------------------------------------------------------===//

/// A norm op whose weight and bias fold into its matmul consumers.
struct FoldPlan {
  /// Also move rms_norm's per-row scale after the matmuls.
  bool defer = false;
  /// Why defer-scale was asked for but the scale stays (empty otherwise).
  std::string notDeferred;
  /// The weight and bias per element of the normalized dim (empty when
  /// absent; a scalar weight is repeated) and the weight offset.
  SmallVector<double> weight, bias;
  double offset = 0.0;
  /// Size of the normalized dim: the K of every matmul.
  int64_t k = 0;
  std::vector<MatmulUse> uses;
};

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
static APFloat roundTo(double value, const llvm::fltSemantics &semantics) {
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

/// The folded RHS of `use` as a `dense_resource` blob of the RHS's type,
/// named after the original blob (the builtin dialect's blob manager makes
/// the name unique): little-endian, row-major, as the builtin dialect stores
/// them.
static ElementsAttr getFoldedResource(const MatmulUse &use,
                                      DenseResourceElementsAttr original) {
  auto type = cast<RankedTensorType>(use.constant.getType());
  const FoldedRhs &folded = use.folded;
  std::string name = (original.getRawHandle().getKey() + "_folded").str();
  if (!folded.f32.empty())
    return cast<ElementsAttr>(DenseF32ResourceElementsAttr::get(
        type, name,
        HeapAsmResourceBlob::allocateAndCopyInferAlign(
            ArrayRef<float>(folded.f32))));
  if (!folded.f64.empty())
    return cast<ElementsAttr>(DenseF64ResourceElementsAttr::get(
        type, name,
        HeapAsmResourceBlob::allocateAndCopyInferAlign(
            ArrayRef<double>(folded.f64))));
  unsigned bytes = cast<FloatType>(type.getElementType()).getWidth() / 8;
  SmallVector<char> data(folded.other.size() * bytes);
  for (auto [i, value] : llvm::enumerate(folded.other)) {
    uint64_t word = value.bitcastToAPInt().getZExtValue();
    for (unsigned byte = 0; byte < bytes; ++byte)
      data[i * bytes + byte] = char((word >> (8 * byte)) & 0xff);
  }
  return DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyWithAlign(data, bytes));
}

/// The folded RHS of `use` as a constant attribute of the RHS's type: a
/// `dense_resource` blob when the RHS was one (a model's weights stay out of
/// line), a dense attribute otherwise.
static ElementsAttr getFoldedAttr(const MatmulUse &use) {
  auto type = cast<RankedTensorType>(use.constant.getType());
  const FoldedRhs &folded = use.folded;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(use.constant);
      resource && cast<FloatType>(type.getElementType()).getWidth() % 8 == 0)
    return getFoldedResource(use, resource);
  if (!folded.f32.empty())
    return DenseElementsAttr::get(type, ArrayRef<float>(folded.f32));
  if (!folded.f64.empty())
    return DenseElementsAttr::get(type, ArrayRef<double>(folded.f64));
  return DenseFPElementsAttr::get(type, folded.other);
}

/// Creates the folded RHS constant of `use`: a `tosa.const` where the
/// original was one (a TOSA module stays TOSA), an `arith.constant`
/// otherwise.
static Value buildFoldedConstant(OpBuilder &b, Location loc,
                                 const MatmulUse &use) {
  ElementsAttr folded = getFoldedAttr(use);
  auto type = cast<RankedTensorType>(folded.getType());
  if (isa<tosa::ConstOp>(use.constantOp))
    return tosa::ConstOp::create(b, loc, type, folded);
  return arith::ConstantOp::create(b, loc, type, cast<TypedAttr>(folded));
}

/// `scale` (one entry per row of the norm's input) reshaped to the leading
/// dims `rowShape` of a matmul result: the same rows in row-major order,
/// through a collapse to one dim and, for a `[B, M]` result, an expand.
static Value reshapeRows(OpBuilder &b, Location loc, Value scale,
                         ArrayRef<int64_t> rowShape) {
  auto type = cast<RankedTensorType>(scale.getType());
  if (type.getShape() == rowShape)
    return scale;
  if (type.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    scale = tensor::CollapseShapeOp::create(
        b, loc, scale, ArrayRef<ReassociationIndices>{all});
  }
  if (rowShape.size() == 1)
    return scale;
  ReassociationIndices all = llvm::to_vector(
      llvm::seq<int64_t>(0, static_cast<int64_t>(rowShape.size())));
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(rowShape, type.getElementType()), scale,
      ArrayRef<ReassociationIndices>{all});
}

/// The constant row vector `bias @ W` for a matmul result of `resultType`
/// with `n` columns, rounded to the result's element type.
static Value buildBiasRow(OpBuilder &b, Location loc,
                          ArrayRef<double> rowVector, int64_t n,
                          RankedTensorType resultType) {
  SmallVector<int64_t> vectorShape;
  if (resultType.getRank() == 3)
    vectorShape.push_back(rowVector.size() / n);
  vectorShape.push_back(n);
  auto vectorType =
      RankedTensorType::get(vectorShape, resultType.getElementType());
  const llvm::fltSemantics &semantics =
      cast<FloatType>(resultType.getElementType()).getFloatSemantics();
  SmallVector<APFloat> values;
  for (double v : rowVector)
    values.push_back(roundTo(v, semantics));
  return arith::ConstantOp::create(
      b, loc, vectorType, DenseFPElementsAttr::get(vectorType, values));
}

/// True when defer-scale asks to move the scale of `op` after the matmuls
/// (it applies to rms_norm without residual whose result is rounded once,
/// at the end); whyNotDeferred then says whether that is sound.
static bool canDeferScale(NormOpInterface op, const Options &options) {
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

/// Reads the constant parameters of `op`, finds its matmul uses and folds
/// their right-hand sides, without changing the IR; fails with the reason
/// the candidate is declined.
static FailureOr<FoldPlan> planFold(NormOpInterface op, const Options &options,
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

//===----------------------------------------------------------------------===//
// Rewrite steps
//===----------------------------------------------------------------------===//

/// Rewrites one matmul consumer: the folded RHS, then the epilogues on its
/// product (the deferred row scale `rowScale`, if any, then the bias row),
/// and with a deferred scale the raw input `x` as its LHS.
static void rewriteMatmul(PatternRewriter &rewriter, NormOpInterface op,
                          const FoldPlan &plan, MatmulUse &use,
                          Value rowScale) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(use.transpose ? use.transpose : use.matmul);
  Value newRhs = buildFoldedConstant(rewriter, loc, use);
  if (use.transpose) {
    // The same transpose (linalg or TOSA) of the folded constant.
    IRMapping mapping;
    mapping.map(use.transpose->getOperand(0), newRhs);
    newRhs = rewriter.clone(*use.transpose, mapping)->getResult(0);
  }
  rewriter.modifyOpInPlace(use.matmul,
                           [&] { use.matmul->getOpOperand(1).set(newRhs); });

  rewriter.setInsertionPointAfter(use.matmul);
  Value result = use.matmul->getResult(0);
  // Only the uses that exist now move to the epilogue (not the epilogue's
  // own uses of the product).
  SmallVector<OpOperand *> resultUses = llvm::map_to_vector(
      result.getUses(), [](OpOperand &use) { return &use; });
  Value replacement = result;
  if (rowScale) {
    // The rows of a collapsed ([B*S, K]) or reshaped ([B', M, K]) LHS.
    ArrayRef<int64_t> rowShape =
        cast<RankedTensorType>(result.getType()).getShape().drop_back();
    Value scale = reshapeRows(rewriter, loc, rowScale, rowShape);
    replacement = scaleRows(rewriter, loc, replacement, scale);
  }
  if (!plan.bias.empty()) {
    ArrayRef<int64_t> constShape =
        cast<RankedTensorType>(use.constant.getType()).getShape();
    int64_t n = constShape[constShape.size() - (use.nMajor ? 2 : 1)];
    Value row = buildBiasRow(rewriter, loc, use.folded.biasRow, n,
                             cast<RankedTensorType>(result.getType()));
    replacement = addRowVector(rewriter, loc, replacement, row);
  }
  if (replacement != result)
    for (OpOperand *resultUse : resultUses)
      rewriter.modifyOpInPlace(resultUse->getOwner(),
                               [&] { resultUse->set(replacement); });
  if (rowScale) {
    // The matmul reads raw x (or its collapse).
    Value rawLhs = op.getX();
    if (use.lhs != op.getY()) {
      // The same collapse or tosa.reshape of raw x.
      Operation *reshape = use.lhs.getDefiningOp();
      rewriter.setInsertionPoint(use.matmul);
      IRMapping mapping;
      mapping.map(op.getY(), op.getX());
      rawLhs = rewriter.clone(*reshape, mapping)->getResult(0);
    }
    rewriter.modifyOpInPlace(use.matmul,
                             [&] { use.matmul->getOpOperand(0).set(rawLhs); });
  }
}

/// The norm op loses its weight and bias, or goes away when its scale was
/// deferred (the matmuls no longer read it).
static void replaceNormOp(PatternRewriter &rewriter, NormOpInterface op,
                          const FoldPlan &plan) {
  if (plan.defer) {
    // Several matmuls may read one collapse or reshape: each is erased once.
    llvm::SetVector<Operation *> collapses;
    for (const MatmulUse &use : plan.uses)
      if (use.lhs != op.getY())
        collapses.insert(use.lhs.getDefiningOp());
    for (Operation *collapse : collapses)
      if (collapse->use_empty())
        rewriter.eraseOp(collapse);
    if (op->use_empty())
      rewriter.eraseOp(op);
    return;
  }
  rewriter.modifyOpInPlace(op, [&] {
    if (auto ln = dyn_cast<LayerNormOp>(op.getOperation())) {
      ln.getWeightMutable().clear();
      ln.getBiasMutable().clear();
    } else if (auto rms = dyn_cast<RMSNormOp>(op.getOperation())) {
      rms.getWeightMutable().clear();
      rms.setWeightOffsetAttr(rewriter.getF32FloatAttr(0.0f));
    } else if (auto dyt = dyn_cast<DyTOp>(op.getOperation())) {
      dyt.getWeightMutable().clear();
      dyt.getBiasMutable().clear();
    }
  });
}

/// Erases what the fold left dead of the constants it read: the ops
/// defining `originals` (the norm op's old weight and bias, the matmuls' old
/// right-hand sides) when nothing uses them any more and they have no side
/// effects, then, the same way, the ops they read (the constant under a
/// transpose or reshape, its shape operand). An op with another user, or
/// that was dead before the fold, is left alone.
static void eraseDeadOriginals(PatternRewriter &rewriter,
                               ArrayRef<Value> originals) {
  SmallVector<Operation *> worklist;
  for (Value value : originals)
    if (Operation *def = value ? value.getDefiningOp() : nullptr)
      worklist.push_back(def);
  llvm::DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    SmallVector<Operation *> producers;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        producers.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
    worklist.append(producers);
  }
}

//===----------------------------------------------------------------------===//
// Pattern and pass
//===----------------------------------------------------------------------===//

/// Folds the weight and bias of a norm op into the constant RHS of its
/// matmul consumers. A norm op with nothing to fold is no candidate (plain
/// failure); a declined candidate says why through `notifyMatchFailure`.
struct FoldNormWeightsIntoMatmuls
    : public OpInterfaceRewritePattern<NormOpInterface> {
  FoldNormWeightsIntoMatmuls(MLIRContext *ctx, const Options &options)
      : OpInterfaceRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (!op.getWeight() && !op.getBias() && !canDeferScale(op, options))
      return failure();
    std::string reason;
    FailureOr<FoldPlan> plan = planFold(op, options, reason);
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, reason);
    // defer-scale was asked for but is unsound here: fold the weight and
    // bias alone, if any.
    if (!plan->notDeferred.empty()) {
      if (!op.getWeight() && !op.getBias())
        return rewriter.notifyMatchFailure(
            op, "the scale cannot be deferred: " + plan->notDeferred);
      if (options.remarks)
        op->emitRemark("folded without deferring the scale: ")
            << plan->notDeferred;
    }

    Value rowScale;
    if (plan->defer) {
      rewriter.setInsertionPoint(op);
      rowScale = buildRowScale(rewriter, op.getLoc(), op);
    }
    // What the fold replaces: erased below where nothing else reads it.
    SmallVector<Value> originals = {op.getWeight(), op.getBias()};
    for (MatmulUse &use : plan->uses)
      originals.push_back(use.matmul->getOperand(1));
    for (MatmulUse &use : plan->uses)
      rewriteMatmul(rewriter, op, *plan, use, rowScale);
    replaceNormOp(rewriter, op, *plan);
    eraseDeadOriginals(rewriter, originals);
    return success();
  }

  Options options;
};

/// Keeps the reason of the last declined candidate and the ops erased (a
/// norm op whose scale was deferred goes away).
struct DeclineListener : public RewriterBase::Listener {
  void notifyOperationErased(Operation *op) override { erased.insert(op); }
  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    Diagnostic diag(loc, DiagnosticSeverity::Remark);
    reasonCallback(diag);
    reason = diag.str();
  }
  std::optional<std::string> reason;
  llvm::DenseSet<Operation *> erased;
};

/// Folds every norm op once; the pattern's match failures are the declined
/// candidates, counted and explained with `remarks`.
struct NormFoldMatmulWeightsPass
    : public norm::impl::NormFoldMatmulWeightsPassBase<
          NormFoldMatmulWeightsPass> {
  using NormFoldMatmulWeightsPassBase::NormFoldMatmulWeightsPassBase;
  NormFoldMatmulWeightsPass() = default;
  NormFoldMatmulWeightsPass(const NormFoldMatmulWeightsPass &other)
      : NormFoldMatmulWeightsPassBase(other) {}
  void runOnOperation() override;

  PassStatistic numFolded{this, "folded",
                          "Number of norm ops whose weight/bias were folded"};
  PassStatistic numDeferred{this, "deferred-scale",
                            "Number of rms_norm scales moved after matmuls"};
  PassStatistic numDeclined{this, "declined",
                            "Number of candidates left unchanged"};
};

} // namespace

void mlir::norm::populateNormFoldMatmulWeightsPatterns(
    RewritePatternSet &patterns,
    const NormFoldMatmulWeightsPassOptions &options) {
  patterns.add<FoldNormWeightsIntoMatmuls>(patterns.getContext(), options);
}

void NormFoldMatmulWeightsPass::runOnOperation() {
  if (maxRhsElements < 1) {
    getOperation()->emitError("norm-fold-matmul-weights: option "
                              "'max-rhs-elements' must be positive, got ")
        << int64_t(maxRhsElements);
    return signalPassFailure();
  }
  Options options;
  options.maxRhsElements = maxRhsElements;
  options.deferScale = deferScale;
  options.remarks = remarks;
  RewritePatternSet set(&getContext());
  populateNormFoldMatmulWeightsPatterns(set, options);
  FrozenRewritePatternSet patterns(std::move(set));

  // Each norm op is visited once: declined ones are not retried.
  SmallVector<Operation *> ops;
  getOperation()->walk([&](NormOpInterface op) { ops.push_back(op); });
  DeclineListener listener;
  applyPatternsOnce(
      ops, patterns, &listener, [&](Operation *op, bool rewritten) {
        if (rewritten) {
          ++numFolded;
          numDeferred += listener.erased.contains(op);
        } else if (listener.reason) {
          ++numDeclined;
          if (remarks)
            op->emitRemark("not folded into matmuls: ") << *listener.reason;
        }
        listener.reason.reset();
        listener.erased.clear();
      });
}
