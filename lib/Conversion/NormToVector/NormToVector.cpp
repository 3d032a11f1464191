//===- NormToVector.cpp - Lower norm ops to vector row loops ----*- C++ -*-===//
//
// norm-lower-cpu: every norm op becomes an scf.forall over rows whose body
// sweeps the row with vector ops on tensors (statistics in registers, one
// horizontal reduction per statistic, a masked tail step), and
// norm-forall-to-loops, which picks sequential or parallel loops after
// bufferization.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToVector/NormToVector.h"
#include "norm/Conversion/NormLoweringUtils.h"
#include "norm/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/TargetParser/Host.h"

#include <numeric>

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMLOWERCPUPASS
#define GEN_PASS_DEF_NORMFORALLTOLOOPSPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

/// Independent accumulators per statistic: enough to hide the latency of
/// vector adds on current x86 cores.
static constexpr unsigned kUnrollFactor = 4;

/// Vector steps summed in the compute type before the partial sums are added
/// into f64 accumulators: keeps rows of 2^20 elements and more accurate.
static constexpr int64_t kBlockSteps = 64;

unsigned mlir::norm::getHostVectorWidth() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx"))
    return 256;
  return 128;
}

namespace {

/// How a weight, bias or alpha operand is read inside the row loop.
struct Parameter {
  /// The operand as a 1-D tensor of N elements, or null.
  Value row;
  /// The operand's single element when it is a scalar, or null.
  Value scalar;

  explicit operator bool() const { return row || scalar; }
};

/// Builds the direct lowering of one norm op.
class RowLoopBuilder {
public:
  RowLoopBuilder(RewriterBase &b, NormOpInterface op,
                 const NormCPULoweringOptions &options)
      : b(b), op(op), loc(op.getLoc()), options(options) {}

  FailureOr<SmallVector<Value>> build();

private:
  /// Reshapes a tensor of x's shape to [rows, N].
  Value toMatrix(Value value);
  /// Reshapes a [rows, N] tensor back to x's shape.
  Value fromMatrix(Value matrix);
  /// Expands `value` to x's shape along `groups`: a tensor.expand_shape, or
  /// a tensor.reshape when a group holds several dynamic dims (LLVM 22's
  /// expand-strided-metadata crashes on such a memref.expand_shape,
  /// llvm/llvm-project#186830).
  Value expandToInput(Value value, ArrayRef<ReassociationIndices> groups);
  /// Prepares a weight/bias/alpha operand for reads in the row loop.
  Parameter prepareParameter(Value value);

  /// Emits the scf.forall over rows; `sequential` marks it so.
  SmallVector<Value> buildRowLoop(bool sequential);
  /// Emits the body for row `row`, returning the finished row tensors.
  SmallVector<Value> buildRow(OpBuilder &rb, Value row, ValueRange rowInits);

  /// Reads the vector at column `col` of `matrix` (row `row`), masked when
  /// `mask` is given.
  Value readMatrix(OpBuilder &rb, Value matrix, Value row, Value col,
                   Value mask);
  /// Reads a parameter as a vector (or broadcasts its scalar).
  Value readParameter(OpBuilder &rb, const Parameter &param, Value col,
                      Value mask);
  /// Writes `vector` at column `col` of the 1-D row tensor `dest`.
  Value writeRow(OpBuilder &rb, Value vector, Value dest, Value col,
                 Value mask);
  /// s = x (+ residual) at column `col` of row `row`, in the input type.
  Value readInput(OpBuilder &rb, Value row, Value col, Value mask);

  /// Runs `body` over the full vectors of the row and then once over the
  /// masked tail, threading `inits` through.
  SmallVector<Value>
  sweep(OpBuilder &rb, ValueRange inits,
        function_ref<SmallVector<Value>(OpBuilder &, Value col, Value mask,
                                        ValueRange iterArgs)>
            body);

  /// Sums each of the `numTerms` vectors `terms(v)` over the row, v being
  /// s = x + residual (read fresh in every step) widened to the compute
  /// type, in any lane order (see widenUnordered), and writes s into `sRow`
  /// when given. Terms are accumulated in compute-type vector registers within
  /// blocks and in f64 across blocks. Returns the f64 row sums and the
  /// updated `sRow`.
  std::pair<SmallVector<Value>, Value>
  accumulate(OpBuilder &rb, Value row, Value sRow, unsigned numTerms,
             function_ref<SmallVector<Value>(OpBuilder &, Value s)> terms);
  /// accumulate() of a single term.
  std::pair<Value, Value>
  accumulateOne(OpBuilder &rb, Value row, Value sRow,
                function_ref<Value(OpBuilder &, Value s)> term);

  /// Widens `s` to the compute type for a sum over its lanes, which does
  /// not depend on their order: bf16 -> f32 takes the even elements
  /// (shifted up) and then the odd ones (masked), two in-lane integer ops,
  /// where an ordered arith.extf needs a lane-crossing zero extension per
  /// vector register.
  Value widenUnordered(OpBuilder &rb, Value s);

  /// Sums the lanes of a vector accumulator.
  Value reduce(OpBuilder &rb, Value accumulator);

  /// True when N is statically a multiple of the vector length.
  bool hasNoTail() const {
    return !ShapedType::isDynamic(staticRowSize) &&
           staticRowSize % vectorLength == 0;
  }

  RewriterBase &b;
  NormOpInterface op;
  Location loc;
  const NormCPULoweringOptions &options;

  int64_t rank = 0, axis = 0;
  Type inputType, computeType;
  SmallVector<OpFoldResult> xSizes;
  Value x, residual;
  Parameter weight, bias, alpha;
  Value numRows, rowSize, rowSizeFloat;
  int64_t staticRowSize = ShapedType::kDynamic;
  int64_t vectorLength = 0;
  bool nontemporal = false;
  VectorType inputVectorType, computeVectorType, maskType;
};

} // namespace

Value RowLoopBuilder::toMatrix(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (rank == 2 && axis == 1)
    return value;
  if (axis == 0) {
    // All dims are normalized: one row.
    Value flat = value;
    if (rank > 1) {
      ReassociationIndices all;
      for (int64_t d = 0; d < rank; ++d)
        all.push_back(d);
      flat = tensor::CollapseShapeOp::create(
          b, loc, value, ArrayRef<ReassociationIndices>{all});
    }
    auto matrixType =
        RankedTensorType::get({1, staticRowSize}, type.getElementType());
    return tensor::ExpandShapeOp::create(
        b, loc, matrixType, flat, ArrayRef<ReassociationIndices>{{0, 1}},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), getAsOpFoldResult(rowSize)});
  }
  ReassociationIndices lead, normalized;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? lead : normalized).push_back(d);
  return tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{lead, normalized});
}

Value RowLoopBuilder::fromMatrix(Value matrix) {
  if (rank == 2 && axis == 1)
    return matrix;
  if (axis == 0) {
    Value flat = tensor::CollapseShapeOp::create(
        b, loc, matrix, ArrayRef<ReassociationIndices>{{0, 1}});
    if (rank == 1)
      return flat;
    ReassociationIndices all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    return expandToInput(flat, {all});
  }
  ReassociationIndices lead, normalized;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? lead : normalized).push_back(d);
  return expandToInput(matrix, {lead, normalized});
}

Value RowLoopBuilder::expandToInput(Value value,
                                    ArrayRef<ReassociationIndices> groups) {
  RankedTensorType resultType = op.getInputType();
  if (!hasGroupWithSeveralDynamicDims(resultType, groups))
    return tensor::ExpandShapeOp::create(b, loc, resultType, value, groups,
                                         xSizes);
  Value shape = tensor::FromElementsOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, xSizes));
  return tensor::ReshapeOp::create(b, loc, resultType, value, shape);
}

Parameter RowLoopBuilder::prepareParameter(Value value) {
  Parameter param;
  if (!value)
    return param;
  auto type = cast<RankedTensorType>(value.getType());
  bool isScalar =
      type.getRank() == 0 || (type.getShape() == ArrayRef<int64_t>{1} &&
                              (rank - axis != 1 || staticRowSize != 1));
  if (!op.hasReduction() && value == op.getAlpha())
    isScalar = true;
  if (isScalar || type.getRank() != rank - axis) {
    SmallVector<Value> indices(type.getRank(),
                               arith::ConstantIndexOp::create(b, loc, 0));
    param.scalar = tensor::ExtractOp::create(b, loc, value, indices);
    return param;
  }
  if (type.getRank() == 1) {
    param.row = value;
    return param;
  }
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  param.row = tensor::CollapseShapeOp::create(
      b, loc, value, ArrayRef<ReassociationIndices>{all});
  return param;
}

Value RowLoopBuilder::readMatrix(OpBuilder &rb, Value matrix, Value row,
                                 Value col, Value mask) {
  Type elementType = cast<ShapedType>(matrix.getType()).getElementType();
  auto vectorType = VectorType::get({vectorLength}, elementType);
  Value padding = buildFloatConstant(rb, loc, elementType, 0.0);
  AffineMap map = AffineMap::getMinorIdentityMap(2, 1, rb.getContext());
  return vector::TransferReadOp::create(rb, loc, vectorType, matrix,
                                        ValueRange{row, col}, map, padding,
                                        mask, rb.getBoolArrayAttr({true}));
}

Value RowLoopBuilder::readParameter(OpBuilder &rb, const Parameter &param,
                                    Value col, Value mask) {
  if (param.scalar) {
    auto vectorType = VectorType::get({vectorLength}, param.scalar.getType());
    return vector::BroadcastOp::create(rb, loc, vectorType, param.scalar);
  }
  Type elementType = cast<ShapedType>(param.row.getType()).getElementType();
  auto vectorType = VectorType::get({vectorLength}, elementType);
  Value padding = buildFloatConstant(rb, loc, elementType, 0.0);
  AffineMap map = AffineMap::getMultiDimIdentityMap(1, rb.getContext());
  return vector::TransferReadOp::create(rb, loc, vectorType, param.row,
                                        ValueRange{col}, map, padding, mask,
                                        rb.getBoolArrayAttr({true}));
}

Value RowLoopBuilder::writeRow(OpBuilder &rb, Value vector, Value dest,
                               Value col, Value mask) {
  AffineMap map = AffineMap::getMultiDimIdentityMap(1, rb.getContext());
  return vector::TransferWriteOp::create(rb, loc, dest.getType(), vector, dest,
                                         ValueRange{col}, map, mask,
                                         rb.getBoolArrayAttr({true}))
      .getResult();
}

Value RowLoopBuilder::readInput(OpBuilder &rb, Value row, Value col,
                                Value mask) {
  Value value = readMatrix(rb, x, row, col, mask);
  if (residual)
    value = buildResidualSum(rb, loc, value,
                             readMatrix(rb, residual, row, col, mask));
  return value;
}

SmallVector<Value> RowLoopBuilder::sweep(
    OpBuilder &rb, ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Value, Value, ValueRange)>
        body) {
  Value zero = arith::ConstantIndexOp::create(rb, loc, 0);
  Value step = arith::ConstantIndexOp::create(rb, loc, vectorLength);
  Value fullEnd = arith::MulIOp::create(
      rb, loc, arith::DivUIOp::create(rb, loc, rowSize, step), step);
  auto loop = scf::ForOp::create(
      rb, loc, zero, fullEnd, step, inits,
      [&](OpBuilder &lb, Location, Value col, ValueRange iterArgs) {
        scf::YieldOp::create(lb, loc, body(lb, col, Value(), iterArgs));
      });
  // The tail: one masked step, statically absent when N is a multiple of
  // the vector length.
  if (hasNoTail())
    return SmallVector<Value>(loop.getResults());
  Value remaining = arith::SubIOp::create(rb, loc, rowSize, fullEnd);
  Value mask =
      vector::CreateMaskOp::create(rb, loc, maskType, ValueRange{remaining});
  return body(rb, fullEnd, mask, loop.getResults());
}

/// Zeroes the lanes of `value` that `mask` turns off (no-op without mask).
static Value maskLanes(OpBuilder &b, Location loc, Value value, Value mask) {
  if (!mask)
    return value;
  Value zero = buildFloatConstant(b, loc, value.getType(), 0.0);
  return arith::SelectOp::create(b, loc, mask, value, zero);
}

std::pair<SmallVector<Value>, Value> RowLoopBuilder::accumulate(
    OpBuilder &rb, Value row, Value sRow, unsigned numTerms,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> terms) {
  Type f64 = rb.getF64Type();
  VectorType wideType = computeVectorType.clone(f64);
  Value zero = arith::ConstantIndexOp::create(rb, loc, 0);
  Value step = arith::ConstantIndexOp::create(rb, loc, vectorLength);
  Value blockLength =
      arith::ConstantIndexOp::create(rb, loc, vectorLength * kBlockSteps);
  Value fullEnd = arith::MulIOp::create(
      rb, loc, arith::DivUIOp::create(rb, loc, rowSize, step), step);

  // Loop-carried values: the accumulators, then sRow.
  SmallVector<Value> inits(numTerms,
                           buildFloatConstant(rb, loc, wideType, 0.0));
  if (sRow)
    inits.push_back(sRow);
  auto blocks = scf::ForOp::create(
      rb, loc, zero, fullEnd, blockLength, inits,
      [&](OpBuilder &ob, Location, Value blockStart, ValueRange outer) {
        Value blockEnd = arith::MinUIOp::create(
            ob, loc, arith::AddIOp::create(ob, loc, blockStart, blockLength),
            fullEnd);
        SmallVector<Value> innerInits(
            numTerms, buildFloatConstant(ob, loc, computeVectorType, 0.0));
        if (sRow)
          innerInits.push_back(outer[numTerms]);
        auto steps = scf::ForOp::create(
            ob, loc, blockStart, blockEnd, step, innerInits,
            [&](OpBuilder &ib, Location, Value col, ValueRange inner) {
              Value s = readInput(ib, row, col, Value());
              SmallVector<Value> next;
              for (auto [sum, term] :
                   llvm::zip_equal(inner.take_front(numTerms),
                                   terms(ib, widenUnordered(ib, s))))
                next.push_back(arith::AddFOp::create(ib, loc, sum, term));
              if (sRow)
                next.push_back(writeRow(ib, s, inner[numTerms], col, Value()));
              scf::YieldOp::create(ib, loc, next);
            });
        SmallVector<Value> next;
        for (unsigned t = 0; t < numTerms; ++t)
          next.push_back(arith::AddFOp::create(
              ob, loc, outer[t], castFloat(ob, loc, steps.getResult(t), f64)));
        if (sRow)
          next.push_back(steps.getResult(numTerms));
        scf::YieldOp::create(ob, loc, next);
      });

  SmallVector<Value> totals(blocks.getResults().take_front(numTerms));
  if (sRow)
    sRow = blocks.getResult(numTerms);
  // The masked tail step.
  if (!hasNoTail()) {
    Value remaining = arith::SubIOp::create(rb, loc, rowSize, fullEnd);
    Value mask =
        vector::CreateMaskOp::create(rb, loc, maskType, ValueRange{remaining});
    Value s = readInput(rb, row, fullEnd, mask);
    SmallVector<Value> tail = terms(rb, castFloat(rb, loc, s, computeType));
    for (auto [total, term] : llvm::zip_equal(totals, tail)) {
      Value masked = maskLanes(rb, loc, term, mask);
      total = arith::AddFOp::create(rb, loc, total,
                                    castFloat(rb, loc, masked, f64));
    }
    if (sRow)
      sRow = writeRow(rb, s, sRow, fullEnd, mask);
  }
  SmallVector<Value> sums;
  for (Value total : totals)
    sums.push_back(reduce(rb, total));
  return {sums, sRow};
}

std::pair<Value, Value>
RowLoopBuilder::accumulateOne(OpBuilder &rb, Value row, Value sRow,
                              function_ref<Value(OpBuilder &, Value)> term) {
  auto [sums, newSRow] =
      accumulate(rb, row, sRow, 1, [&](OpBuilder &bb, Value s) {
        return SmallVector<Value>{term(bb, s)};
      });
  return {sums.front(), newSRow};
}

Value RowLoopBuilder::widenUnordered(OpBuilder &rb, Value s) {
  auto type = cast<VectorType>(s.getType());
  int64_t length = type.getNumElements();
  if (!type.getElementType().isBF16() || !computeType.isF32() ||
      length % 2 != 0)
    return castFloat(rb, loc, s, computeType);
  auto pairsType = VectorType::get({length / 2}, rb.getI32Type());
  auto halfType = VectorType::get({length / 2}, rb.getF32Type());
  Value pairs = vector::BitCastOp::create(rb, loc, pairsType, s);
  auto splat = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(
        rb, loc,
        DenseElementsAttr::get(pairsType, rb.getI32IntegerAttr(value)));
  };
  // Little-endian: element 2k is the low half of pair k.
  Value even = arith::BitcastOp::create(
      rb, loc, halfType, arith::ShLIOp::create(rb, loc, pairs, splat(16)));
  Value odd = arith::BitcastOp::create(
      rb, loc, halfType,
      arith::AndIOp::create(rb, loc, pairs, splat(int32_t(0xFFFF0000u))));
  SmallVector<int64_t> concatenation(length);
  std::iota(concatenation.begin(), concatenation.end(), 0);
  return vector::ShuffleOp::create(rb, loc, even, odd, concatenation);
}

Value RowLoopBuilder::reduce(OpBuilder &rb, Value accumulator) {
  return vector::ReductionOp::create(rb, loc, vector::CombiningKind::ADD,
                                     accumulator,
                                     arith::FastMathFlags::reassoc);
}

SmallVector<Value> RowLoopBuilder::buildRow(OpBuilder &rb, Value row,
                                            ValueRange rowInits) {
  Value yRow = rowInits[0];
  Value sRow = residual ? rowInits[1] : Value();
  auto widen = [&](OpBuilder &bb, Value v) {
    return castFloat(bb, loc, v, computeType);
  };

  // Per-element normalization given the vector of s in the compute type.
  std::function<Value(OpBuilder &, Value)> normalize;

  if (!op.hasReduction()) {
    Value alphaVector = vector::BroadcastOp::create(
        rb, loc, VectorType::get({vectorLength}, alpha.scalar.getType()),
        alpha.scalar);
    normalize = [&, alphaVector](OpBuilder &bb, Value s) {
      return buildDyTCore(bb, loc, op, alphaVector, s);
    };
  } else if (op.subtractsMean()) {
    // Statistics of d = s - shift, shift being the mean of the row's first
    // vector: close to the row mean for all but contrived rows, so that
    // rows with a large common offset stay accurate.
    Value firstCount = arith::MinUIOp::create(
        rb, loc, rowSize,
        arith::ConstantIndexOp::create(rb, loc, vectorLength));
    Value firstMask =
        vector::CreateMaskOp::create(rb, loc, maskType, ValueRange{firstCount});
    Value first = maskLanes(
        rb, loc,
        widen(rb, readInput(rb, row, arith::ConstantIndexOp::create(rb, loc, 0),
                            firstMask)),
        firstMask);
    Value shiftScalar = castFloat(
        rb, loc,
        arith::DivFOp::create(
            rb, loc, castFloat(rb, loc, reduce(rb, first), rb.getF64Type()),
            buildIndexToFloat(rb, loc, firstCount, rb.getF64Type())),
        computeType);
    Value shift =
        vector::BroadcastOp::create(rb, loc, computeVectorType, shiftScalar);

    // One sweep sums d and d^2: var = E[d^2] - E[d]^2 (in f64). This
    // cancels badly only when the mean of d is large against the spread,
    // E[d]^2 > E[d^2] / 2; such rows take a second, centered sweep.
    auto [sums, newSRow] =
        accumulate(rb, row, sRow, 2, [&](OpBuilder &bb, Value s) {
          Value d = arith::SubFOp::create(bb, loc, s, shift);
          return SmallVector<Value>{d, arith::MulFOp::create(bb, loc, d, d)};
        });
    sRow = newSRow;
    Value meanD = arith::DivFOp::create(rb, loc, sums[0], rowSizeFloat);
    Value meanSquareD = arith::DivFOp::create(rb, loc, sums[1], rowSizeFloat);
    Value oneSweepVariance = arith::SubFOp::create(
        rb, loc, meanSquareD, arith::MulFOp::create(rb, loc, meanD, meanD));
    Value mean = castFloat(rb, loc, meanD, computeType);
    Value meanVector =
        vector::BroadcastOp::create(rb, loc, computeVectorType, mean);
    auto centered = [&, shift, meanVector](OpBuilder &bb, Value s) -> Value {
      return arith::SubFOp::create(
          bb, loc, arith::SubFOp::create(bb, loc, s, shift), meanVector);
    };
    Value accurate = arith::CmpFOp::create(
        rb, loc, arith::CmpFPredicate::OGE,
        arith::MulFOp::create(rb, loc,
                              buildFloatConstant(rb, loc, rb.getF64Type(), 2.0),
                              oneSweepVariance),
        meanSquareD);
    auto ifOp = scf::IfOp::create(
        rb, loc, accurate,
        [&](OpBuilder &tb, Location) {
          scf::YieldOp::create(tb, loc, oneSweepVariance);
        },
        [&](OpBuilder &eb, Location) {
          Value squares =
              accumulateOne(eb, row, Value(), [&](OpBuilder &bb, Value s) {
                Value d = centered(bb, s);
                return Value(arith::MulFOp::create(bb, loc, d, d));
              }).first;
          scf::YieldOp::create(
              eb, loc,
              Value(arith::DivFOp::create(eb, loc, squares, rowSizeFloat)));
        });
    Value variance = castFloat(rb, loc, ifOp.getResult(0), computeType);
    Value scale = vector::BroadcastOp::create(
        rb, loc, computeVectorType, buildInverseScale(rb, loc, op, variance));
    normalize = [&, centered, scale](OpBuilder &bb, Value s) -> Value {
      return arith::MulFOp::create(bb, loc, centered(bb, s), scale);
    };
  } else {
    Value squares;
    std::tie(squares, sRow) =
        accumulateOne(rb, row, sRow, [&](OpBuilder &bb, Value s) -> Value {
          return arith::MulFOp::create(bb, loc, s, s);
        });
    Value meanSquare = castFloat(
        rb, loc, arith::DivFOp::create(rb, loc, squares, rowSizeFloat),
        computeType);
    Value scale = vector::BroadcastOp::create(
        rb, loc, computeVectorType, buildInverseScale(rb, loc, op, meanSquare));
    normalize = [&, scale](OpBuilder &bb, Value s) -> Value {
      return arith::MulFOp::create(bb, loc, s, scale);
    };
  }

  // Output sweep (DyT also writes residual_out here).
  bool writeResidualHere = sRow && !op.hasReduction();
  SmallVector<Value> inits{yRow};
  if (writeResidualHere)
    inits.push_back(sRow);
  SmallVector<Value> rows = sweep(
      rb, inits, [&](OpBuilder &bb, Value col, Value mask, ValueRange iter) {
        Value s = readInput(bb, row, col, mask);
        Value n = normalize(bb, widen(bb, s));
        Value w = weight ? readParameter(bb, weight, col, mask) : Value();
        Value bv = bias ? readParameter(bb, bias, col, mask) : Value();
        Value y = buildNormOutput(bb, loc, op, n, w, bv);
        SmallVector<Value> next{writeRow(bb, y, iter[0], col, mask)};
        if (writeResidualHere)
          next.push_back(writeRow(bb, s, iter[1], col, mask));
        return next;
      });
  SmallVector<Value> finished{rows[0]};
  if (sRow)
    finished.push_back(writeResidualHere ? rows[1] : sRow);
  return finished;
}

SmallVector<Value> RowLoopBuilder::buildRowLoop(bool sequential) {
  SmallVector<Value> outputs;
  SmallVector<OpFoldResult> matrixSizes{getAsOpFoldResult(numRows),
                                        getAsOpFoldResult(rowSize)};
  outputs.push_back(tensor::EmptyOp::create(b, loc, matrixSizes, inputType));
  if (residual)
    outputs.push_back(tensor::EmptyOp::create(b, loc, matrixSizes, inputType));

  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(numRows)}, outputs,
      std::nullopt);
  if (sequential)
    forall->setAttr(kSequentialAttrName, b.getUnitAttr());
  if (nontemporal)
    forall->setAttr(kNontemporalStoresAttrName, b.getUnitAttr());
  // Rows swept more than once leave memory idle while they are finished
  // from the cache; for large inputs the last sweep fetches the next row.
  if (nontemporal && op.hasReduction())
    forall->setAttr(kPrefetchNextRowAttrName, b.getUnitAttr());

  OpBuilder rb = OpBuilder::atBlockBegin(forall.getBody());
  Value row = forall.getInductionVar(0);
  auto rowType = RankedTensorType::get({staticRowSize}, inputType);
  SmallVector<OpFoldResult> offsets{row, rb.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes{rb.getIndexAttr(1),
                                  getAsOpFoldResult(rowSize)};
  SmallVector<OpFoldResult> strides{rb.getIndexAttr(1), rb.getIndexAttr(1)};
  SmallVector<Value> rowInits;
  for (Value shared : forall.getRegionIterArgs())
    rowInits.push_back(tensor::ExtractSliceOp::create(rb, loc, rowType, shared,
                                                      offsets, sizes, strides));
  rb.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> finished = buildRow(rb, row, rowInits);

  rb.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [rowValue, shared] :
       llvm::zip_equal(finished, forall.getRegionIterArgs()))
    tensor::ParallelInsertSliceOp::create(rb, loc, rowValue, shared, offsets,
                                          sizes, strides);
  return SmallVector<Value>(forall.getResults());
}

FailureOr<SmallVector<Value>> RowLoopBuilder::build() {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  RankedTensorType xType = op.getInputType();
  rank = xType.getRank();
  axis = op.getNormalizedDim();
  inputType = xType.getElementType();
  computeType = op.getComputeElementType();
  xSizes = tensor::getMixedSizes(b, loc, op.getX());

  // A statically empty input has empty results: nothing to compute, and the
  // row reshapes below assume that folding the sizes keeps them dynamic. A
  // static 0 in weight, bias or residual means the same (their dims are
  // x's), even where x's own dim is dynamic.
  auto hasStaticZeroDim = [](Value operand) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    return type && llvm::is_contained(type.getShape(), 0);
  };
  if (llvm::any_of(op->getOperands(), hasStaticZeroDim)) {
    Value empty = tensor::EmptyOp::create(b, loc, xSizes, inputType);
    return SmallVector<Value>(op->getNumResults(), empty);
  }

  // Rows and row size.
  staticRowSize = 1;
  for (int64_t d = axis; d < rank; ++d)
    staticRowSize = ShapedType::isDynamic(xType.getDimSize(d)) ||
                            ShapedType::isDynamic(staticRowSize)
                        ? ShapedType::kDynamic
                        : staticRowSize * xType.getDimSize(d);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  numRows = one;
  rowSize = one;
  for (int64_t d = 0; d < rank; ++d) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, xSizes[d]);
    Value &product = d < axis ? numRows : rowSize;
    product = b.createOrFold<arith::MulIOp>(loc, product, size);
  }
  rowSizeFloat = buildIndexToFloat(b, loc, rowSize, b.getF64Type());

  // Vector shapes: kUnrollFactor registers per statistic.
  unsigned width =
      options.vectorWidth ? options.vectorWidth : getHostVectorWidth();
  vectorLength = std::max<int64_t>(
      1, width / computeType.getIntOrFloatBitWidth() * kUnrollFactor);
  inputVectorType = VectorType::get({vectorLength}, inputType);
  computeVectorType = VectorType::get({vectorLength}, computeType);
  maskType = VectorType::get({vectorLength}, b.getI1Type());

  x = toMatrix(op.getX());
  if (Value r = op.getResidual()) {
    // The residual may know more or fewer static dims than x: reshape it as
    // x is reshaped.
    if (r.getType() != xType)
      r = tensor::CastOp::create(b, loc, xType, r);
    residual = toMatrix(r);
  }
  weight = prepareParameter(op.getWeight());
  bias = prepareParameter(op.getBias());
  alpha = prepareParameter(op.getAlpha());

  // Large write-once outputs bypass the caches. All results count: y and
  // residual_out compete for the same cache.
  if (options.nontemporalThreshold >= 0)
    nontemporal = !xType.hasStaticShape() ||
                  xType.getNumElements() *
                          int64_t(inputType.getIntOrFloatBitWidth() / 8) *
                          int64_t(op->getNumResults()) >=
                      options.nontemporalThreshold;

  SmallVector<Value> results;
  int64_t staticElements =
      xType.hasStaticShape() ? xType.getNumElements() : ShapedType::kDynamic;
  if (options.threads <= 1 || (!ShapedType::isDynamic(staticElements) &&
                               staticElements < options.parallelThreshold)) {
    results = buildRowLoop(/*sequential=*/true);
  } else if (!ShapedType::isDynamic(staticElements)) {
    results = buildRowLoop(/*sequential=*/false);
  } else {
    // Decide at run time from the number of elements.
    Value elements = arith::MulIOp::create(b, loc, numRows, rowSize);
    Value large = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::uge, elements,
        arith::ConstantIndexOp::create(b, loc, options.parallelThreshold));
    // The loops' result type: the row count is static when the leading dims
    // are, even if the row size is not.
    int64_t staticRows =
        getConstantIntValue(numRows).value_or(ShapedType::kDynamic);
    SmallVector<Type> types(
        residual ? 2 : 1,
        RankedTensorType::get({staticRows, staticRowSize}, inputType));
    auto ifOp = scf::IfOp::create(b, loc, types, large, true, true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, buildRowLoop(/*sequential=*/false));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, buildRowLoop(/*sequential=*/true));
    }
    results = SmallVector<Value>(ifOp.getResults());
  }

  SmallVector<Value> replacements;
  for (Value result : results) {
    Value reshaped = fromMatrix(result);
    if (reshaped.getType() != xType)
      reshaped = tensor::CastOp::create(b, loc, xType, reshaped);
    replacements.push_back(reshaped);
  }
  return replacements;
}

FailureOr<SmallVector<Value>>
mlir::norm::lowerNormOpToVectorLoops(RewriterBase &rewriter, NormOpInterface op,
                                     const NormCPULoweringOptions &options) {
  return RowLoopBuilder(rewriter, op, options).build();
}

//===----------------------------------------------------------------------===//
// Patterns and passes
//===----------------------------------------------------------------------===//

namespace {

/// Rewrites a norm op into vector row loops.
struct NormOpToVectorLoops : public OpInterfaceRewritePattern<NormOpInterface> {
  NormOpToVectorLoops(MLIRContext *context, NormCPULoweringOptions options)
      : OpInterfaceRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(NormOpInterface op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToVectorLoops(rewriter, op, options);
    if (failed(replacements))
      return failure();
    rewriter.replaceOp(op, *replacements);
    return success();
  }

  NormCPULoweringOptions options;
};

struct NormLowerCPUPass
    : public norm::impl::NormLowerCPUPassBase<NormLowerCPUPass> {
  using NormLowerCPUPassBase::NormLowerCPUPassBase;
  void runOnOperation() override;
};

struct NormForallToLoopsPass
    : public norm::impl::NormForallToLoopsPassBase<NormForallToLoopsPass> {
  using NormForallToLoopsPassBase::NormForallToLoopsPassBase;
  void runOnOperation() override;
};

} // namespace

void mlir::norm::populateNormToVectorPatterns(
    RewritePatternSet &patterns, const NormCPULoweringOptions &options) {
  patterns.add<NormOpToVectorLoops>(patterns.getContext(), options);
}

void NormLowerCPUPass::runOnOperation() {
  if (vectorWidth != 0 && (vectorWidth < 64 || vectorWidth > 2048 ||
                           !llvm::isPowerOf2_32(vectorWidth))) {
    getOperation()->emitError("norm-lower-cpu: option 'vector-width' must be "
                              "0 or a power of two in [64, 2048], got ")
        << unsigned(vectorWidth);
    return signalPassFailure();
  }
  if (threads < 1) {
    getOperation()->emitError(
        "norm-lower-cpu: option 'threads' must be >= 1, got ")
        << unsigned(threads);
    return signalPassFailure();
  }
  if (parallelThreshold < 0) {
    getOperation()->emitError("norm-lower-cpu: option 'parallel-threshold' "
                              "must be >= 0, got ")
        << int64_t(parallelThreshold);
    return signalPassFailure();
  }
  if (nontemporalThreshold < -1) {
    getOperation()->emitError("norm-lower-cpu: option 'nontemporal-threshold' "
                              "must be >= 0, or -1 for never, got ")
        << int64_t(nontemporalThreshold);
    return signalPassFailure();
  }
  NormCPULoweringOptions options;
  options.vectorWidth = vectorWidth;
  options.threads = threads;
  options.parallelThreshold = parallelThreshold;
  options.nontemporalThreshold = nontemporalThreshold;

  IRRewriter rewriter(&getContext());
  SmallVector<NormOpInterface> ops;
  getOperation()->walk([&](NormOpInterface op) { ops.push_back(op); });
  if (ops.empty())
    return;
  for (NormOpInterface op : ops) {
    FailureOr<SmallVector<Value>> replacements =
        lowerNormOpToVectorLoops(rewriter, op, options);
    if (failed(replacements)) {
      op->emitError("failed to lower to vector loops");
      return signalPassFailure();
    }
    rewriter.replaceOp(op, *replacements);
  }

  // tanh (DyT) as a vectorizable f32 polynomial rather than a libm call
  // per lane.
  RewritePatternSet patterns(&getContext());
  populatePolynomialApproximateTanhPattern(patterns);
  if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
    return signalPassFailure();
}

/// Alignment (bytes) the non-temporal stores rely on.
static constexpr int64_t kNontemporalAlignment = 64;

/// Returns the full-vector, in-bounds, unmasked 1-D transfer_writes of
/// `loop` into rows of 2-D memrefs defined above the loop whose vector size
/// is a multiple of the alignment, i.e. the stores that become aligned
/// non-temporal stores when each row starts aligned.
static SmallVector<vector::TransferWriteOp>
getNontemporalCandidates(scf::ForallOp loop) {
  SmallVector<vector::TransferWriteOp> writes;
  loop->walk([&](vector::TransferWriteOp write) {
    auto memrefType = dyn_cast<MemRefType>(write.getBase().getType());
    auto subview = write.getBase().getDefiningOp<memref::SubViewOp>();
    VectorType vectorType = write.getVectorType();
    if (!memrefType || write.getMask() || vectorType.getRank() != 1 ||
        !write.getPermutationMap().isMinorIdentity() ||
        !write.isDimInBounds(0) || !memrefType.isLastDimUnitStride() ||
        !subview || subview.getSourceType().getRank() != 2 ||
        loop->isAncestor(subview.getSource().getParentBlock()->getParentOp()))
      return;
    int64_t bytes =
        vectorType.getNumElements() * vectorType.getElementTypeBitWidth() / 8;
    if (bytes % kNontemporalAlignment == 0)
      writes.push_back(write);
  });
  return writes;
}

/// Versions `loop` on the alignment of the rows it writes: when every
/// written row starts on a kNontemporalAlignment boundary (the buffer and
/// the row pitch are aligned), a clone writes full vectors with aligned
/// non-temporal stores (no read for ownership); otherwise the original
/// loop runs with regular stores.
static void useNontemporalStores(RewriterBase &rewriter, scf::ForallOp loop) {
  SmallVector<vector::TransferWriteOp> writes = getNontemporalCandidates(loop);
  if (writes.empty())
    return;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value alignment =
      arith::ConstantIndexOp::create(rewriter, loc, kNontemporalAlignment);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value aligned;
  llvm::SmallDenseSet<Value> checked;
  for (vector::TransferWriteOp write : writes) {
    Value source =
        write.getBase().getDefiningOp<memref::SubViewOp>().getSource();
    if (!checked.insert(source).second)
      continue;
    int64_t elementBytes = write.getVectorType().getElementTypeBitWidth() / 8;
    Value bytes = arith::ConstantIndexOp::create(rewriter, loc, elementBytes);
    auto metadata =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, source);
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, source);
    Value start = arith::AddIOp::create(
        rewriter, loc, pointer,
        arith::MulIOp::create(rewriter, loc, metadata.getOffset(), bytes));
    Value pitch =
        arith::MulIOp::create(rewriter, loc, metadata.getStrides()[0], bytes);
    for (Value value : {start, pitch}) {
      Value isAligned = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(rewriter, loc, value, alignment), zero);
      aligned = aligned
                    ? arith::AndIOp::create(rewriter, loc, aligned, isAligned)
                    : isAligned;
    }
  }

  auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange(), aligned,
                                /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(ifOp.thenBlock());
  IRMapping mapping;
  auto alignedLoop = cast<scf::ForallOp>(rewriter.clone(*loop, mapping));
  alignedLoop->removeAttr(kNontemporalStoresAttrName);
  loop->removeAttr(kNontemporalStoresAttrName);
  rewriter.moveOpBefore(loop, ifOp.elseBlock()->getTerminator());
  for (vector::TransferWriteOp write : writes) {
    auto cloned =
        cast<vector::TransferWriteOp>(mapping.lookup(write.getOperation()));
    rewriter.setInsertionPoint(cloned);
    rewriter.replaceOpWithNewOp<vector::StoreOp>(
        cloned, cloned.getVector(), cloned.getBase(), cloned.getIndices(),
        /*nontemporal=*/true, llvm::MaybeAlign(kNontemporalAlignment));
  }
}

/// Bytes of one cache line, the prefetch granularity.
static constexpr int64_t kCacheLineBytes = 64;

/// In the last row sweep of `loop` (its last top-level scf.for), prefetches
/// for every full-vector read of a row `%i` of a 2-D buffer defined above
/// the loop the same columns of row `%i + step` (clamped to the last row),
/// the row this thread reads next: one prefetch per cache line.
static void prefetchNextRow(RewriterBase &rewriter, scf::ForallOp loop) {
  if (loop.getRank() != 1)
    return;
  Block *body = loop.getBody();
  scf::ForOp lastSweep;
  for (Operation &op : *body)
    if (auto sweep = dyn_cast<scf::ForOp>(op))
      lastSweep = sweep;
  if (!lastSweep)
    return;
  Value row = loop.getInductionVar(0);
  SmallVector<vector::TransferReadOp> reads;
  lastSweep->walk([&](vector::TransferReadOp read) {
    auto memrefType = dyn_cast<MemRefType>(read.getBase().getType());
    VectorType vectorType = read.getVectorType();
    if (!memrefType || memrefType.getRank() != 2 || read.getMask() ||
        vectorType.getRank() != 1 || !read.isDimInBounds(0) ||
        !memrefType.isLastDimUnitStride() || read.getIndices()[0] != row ||
        loop->isAncestor(read.getBase().getParentBlock()->getParentOp()))
      return;
    reads.push_back(read);
  });
  if (reads.empty())
    return;

  Location loc = loop.getLoc();
  llvm::SmallDenseMap<Value, Value> nextRows;
  for (vector::TransferReadOp read : reads) {
    Value base = read.getBase();
    Value &next = nextRows[base];
    if (!next) {
      // min(%i + step, rows - 1), computed once per buffer at the top of
      // the loop body.
      rewriter.setInsertionPointToStart(body);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      Value step = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                   loop.getMixedStep()[0]);
      Value last = arith::SubIOp::create(
          rewriter, loc, memref::DimOp::create(rewriter, loc, base, 0), one);
      next = arith::MinSIOp::create(
          rewriter, loc, arith::AddIOp::create(rewriter, loc, row, step), last);
    }
    VectorType vectorType = read.getVectorType();
    int64_t elementBytes =
        std::max<int64_t>(1, vectorType.getElementTypeBitWidth() / 8);
    int64_t bytes = vectorType.getNumElements() * elementBytes;
    int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
    rewriter.setInsertionPoint(read);
    Value col = read.getIndices()[1];
    for (int64_t offset = 0; offset * elementBytes < bytes;
         offset += lineElements) {
      Value index = offset == 0
                        ? col
                        : arith::AddIOp::create(rewriter, loc, col,
                                                arith::ConstantIndexOp::create(
                                                    rewriter, loc, offset));
      memref::PrefetchOp::create(rewriter, loc, base, ValueRange{next, index},
                                 /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
    }
  }
}

void NormForallToLoopsPass::runOnOperation() {
  if (threads < 1) {
    getOperation()->emitError(
        "norm-forall-to-loops: option 'threads' must be >= 1, got ")
        << unsigned(threads);
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  SmallVector<scf::ForallOp> loops;
  getOperation()->walk([&](scf::ForallOp loop) { loops.push_back(loop); });
  for (scf::ForallOp loop : loops) {
    if (loop->getNumResults() != 0) {
      loop->emitError("norm-forall-to-loops expects bufferized loops");
      return signalPassFailure();
    }
  }
  for (scf::ForallOp loop : loops)
    if (loop->hasAttr(kNontemporalStoresAttrName))
      useNontemporalStores(rewriter, loop);

  loops.clear();
  getOperation()->walk([&](scf::ForallOp loop) { loops.push_back(loop); });
  for (scf::ForallOp loop : loops) {
    if (!loop->hasAttr(kPrefetchNextRowAttrName))
      continue;
    loop->removeAttr(kPrefetchNextRowAttrName);
    if (prefetch)
      prefetchNextRow(rewriter, loop);
  }
  for (scf::ForallOp loop : loops) {
    rewriter.setInsertionPoint(loop);
    bool sequential = threads <= 1 || loop->hasAttr(kSequentialAttrName);
    LogicalResult converted = sequential
                                  ? scf::forallToForLoop(rewriter, loop)
                                  : scf::forallToParallelLoop(rewriter, loop);
    if (failed(converted)) {
      loop->emitError("failed to convert scf.forall");
      return signalPassFailure();
    }
  }
}
