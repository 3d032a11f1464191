//===- GradRowSweeps.cpp - Sweeps of the gradient row loops ---*- C++ -*-===//
//
// The body of a block of norm-lower-cpu's gradient row loops: per group of
// rows, the sweeps of layer_norm_grad and rms_norm_grad (sum g * xh and g,
// then write dx and add the parameter-gradient terms) and the single sweep
// of dyt_grad, and the writes of dx and the block's partial rows.
//
//===----------------------------------------------------------------------===//

#include "GradToVector.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/TanhApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::cpu_lowering;

Value GradRowLoopBuilder::readWeight(OpBuilder &tb, Value col, Value mask) {
  if (!weightRow)
    return Value();
  return read(tb, weightRow, ValueRange{col}, mask);
}

std::pair<Value, Value> GradRowLoopBuilder::readRow(OpBuilder &tb,
                                                    const RowGroup &group,
                                                    int64_t i, Value col,
                                                    Value mask) {
  Value dyv = castFloat(
      tb, loc, read(tb, dyMatrix, ValueRange{group.rows[i], col}, mask),
      computeType);
  Value xv = castFloat(tb, loc,
                       read(tb, xMatrix, ValueRange{group.rows[i], col}, mask),
                       computeType);
  return std::make_pair(dyv, xv);
}

/// `sum + term`, or `term` for the first term of a sum.
static Value addTerm(OpBuilder &sb, Location loc, Value sum, Value term) {
  return sum ? Value(arith::AddFOp::create(sb, loc, sum, term)) : term;
}

SmallVector<Value> GradRowLoopBuilder::writeOutputs(
    OpBuilder &sb, const RowGroup &group, ValueRange state, Value col,
    Value mask, ArrayRef<Value> dxs, Value weightTerm, Value biasTerm) {
  // Adds `term` into row `index` of the partial tile `tile` at `col`.
  auto accumulateInto = [&](Value tile, unsigned index, Value term) {
    SmallVector<Value> indices{constantIndex(sb, index), col};
    Value old = read(sb, tile, indices, mask);
    return write(sb, arith::AddFOp::create(sb, loc, old, term), tile, indices,
                 mask);
  };
  Value dx = state[0];
  for (auto [local, dxv] : llvm::zip_equal(group.locals, dxs))
    dx = write(sb, dxv, dx, ValueRange{local, col}, mask);
  SmallVector<Value> updated{dx};
  if (!numPartials)
    return updated;
  Value tile = state[1];
  unsigned index = 0;
  if (weight)
    tile = accumulateInto(tile, index++, weightTerm);
  if (hasBias)
    tile = accumulateInto(tile, index++, biasTerm);
  updated.push_back(tile);
  return updated;
}

SmallVector<Value> GradRowLoopBuilder::buildDyTSweep(OpBuilder &rb,
                                                     const RowGroup &group,
                                                     ValueRange iter) {
  // For f32 and f64 results, t and s come from buildTanhAndSlope, whose s
  // keeps its relative accuracy near saturation. 16-bit results take the
  // rational tanh and 1 - t * t: about half the vector ops, and the
  // absolute error of s (<= 9e-7) is far below their rounding.
  // DyT: t = tanh(alpha x), s = 1 - t^2; dx = dy w alpha s;
  // dweight += dy t, dbias += dy, dalpha += dy w x s (lanes).
  int64_t count = group.rows.size();
  return sweep(
      rb, iter, [&](OpBuilder &sb, Value col, Value mask, ValueRange state) {
        Value w = readWeight(sb, col, mask);
        SmallVector<Value> dxs;
        Value weightTerm, biasTerm, alphaTerm;
        for (int64_t i = 0; i < count; ++i) {
          auto [dyv, xv] = readRow(sb, group, i, col, mask);
          Value scaled = arith::MulFOp::create(sb, loc, alphaVector, xv);
          Value t, slope;
          if (elementType.getIntOrFloatBitWidth() == 16) {
            t = buildApproximateTanh(sb, loc, scaled, sb.getF32Type());
            slope = arith::SubFOp::create(
                sb, loc, buildFloatConstant(sb, loc, computeVectorType, 1.0),
                arith::MulFOp::create(sb, loc, t, t));
          } else {
            std::tie(t, slope) = buildTanhAndSlope(sb, loc, scaled);
          }
          Value g = w ? Value(arith::MulFOp::create(sb, loc, dyv, w)) : dyv;
          dxs.push_back(
              castFloat(sb, loc,
                        arith::MulFOp::create(
                            sb, loc, g,
                            arith::MulFOp::create(sb, loc, alphaVector, slope)),
                        elementType));
          weightTerm = addTerm(sb, loc, weightTerm,
                               arith::MulFOp::create(sb, loc, dyv, t));
          biasTerm = addTerm(sb, loc, biasTerm, dyv);
          // Masked lanes read dy = 0: their term is 0.
          alphaTerm = addTerm(
              sb, loc, alphaTerm,
              arith::MulFOp::create(sb, loc, g,
                                    arith::MulFOp::create(sb, loc, xv, slope)));
        }
        SmallVector<Value> updated = writeOutputs(sb, group, state, col, mask,
                                                  dxs, weightTerm, biasTerm);
        updated.push_back(
            arith::AddFOp::create(sb, loc, state.back(), alphaTerm));
        return updated;
      });
}

SmallVector<Value> GradRowLoopBuilder::buildNormSweeps(OpBuilder &rb,
                                                       const RowGroup &group,
                                                       ValueRange iter) {
  int64_t count = group.rows.size();
  // xh, g and dy of row `i` (layer_norm, rms_norm).
  auto terms = [&](OpBuilder &tb, int64_t i, Value col, Value mask, Value w) {
    auto [dyv, xv] = readRow(tb, group, i, col, mask);
    if (group.means[i])
      xv = arith::SubFOp::create(tb, loc, xv, group.means[i]);
    Value xh = arith::MulFOp::create(tb, loc, xv, group.rstds[i]);
    Value g = w ? Value(arith::MulFOp::create(tb, loc, dyv, w)) : dyv;
    return std::make_tuple(dyv, xh, g);
  };

  // Sweep 1, per row: sum(g * xh) and sum(g) (masked lanes read as 0).
  // The lanes are added as a tree (reassoc): a fixed order for a given
  // vector length, not a chain of dependent adds per row.
  auto rowMean = [&](Value accumulator) {
    Value total = castFloat(
        rb, loc,
        vector::ReductionOp::create(rb, loc, vector::CombiningKind::ADD,
                                    accumulator, arith::FastMathFlags::reassoc),
        rb.getF64Type());
    return vector::BroadcastOp::create(
        rb, loc, computeVectorType,
        castFloat(rb, loc, arith::DivFOp::create(rb, loc, total, rowSizeFloat),
                  computeType));
  };
  SmallVector<Value> meanGXh, meanG;
  for (int64_t i = 0; i < count; ++i) {
    SmallVector<Value> sums =
        sweep(rb, ValueRange{zero, zero},
              [&](OpBuilder &sb, Value col, Value mask, ValueRange acc) {
                auto [dyv, xh, g] =
                    terms(sb, i, col, mask, readWeight(sb, col, mask));
                return SmallVector<Value>{
                    arith::AddFOp::create(
                        sb, loc, acc[0], arith::MulFOp::create(sb, loc, g, xh)),
                    arith::AddFOp::create(sb, loc, acc[1], g)};
              });
    meanGXh.push_back(rowMean(sums[0]));
    meanG.push_back(group.means[i] ? Value(rowMean(sums[1])) : Value());
  }

  // Sweep 2, the rows together: dx, and the partial parameter gradients.
  return sweep(
      rb, iter, [&](OpBuilder &sb, Value col, Value mask, ValueRange state) {
        Value w = readWeight(sb, col, mask);
        SmallVector<Value> dxs;
        Value weightTerm, biasTerm;
        for (int64_t i = 0; i < count; ++i) {
          auto [dyv, xh, g] = terms(sb, i, col, mask, w);
          Value inner = arith::SubFOp::create(
              sb, loc, g, arith::MulFOp::create(sb, loc, xh, meanGXh[i]));
          if (meanG[i])
            inner = arith::SubFOp::create(sb, loc, inner, meanG[i]);
          dxs.push_back(castFloat(
              sb, loc, arith::MulFOp::create(sb, loc, group.rstds[i], inner),
              elementType));
          weightTerm = addTerm(sb, loc, weightTerm,
                               arith::MulFOp::create(sb, loc, dyv, xh));
          biasTerm = addTerm(sb, loc, biasTerm, dyv);
        }
        return writeOutputs(sb, group, state, col, mask, dxs, weightTerm,
                            biasTerm);
      });
}

SmallVector<Value> GradRowLoopBuilder::buildRowGroup(OpBuilder &rb, Value local,
                                                     int64_t count,
                                                     ValueRange iter) {
  RowGroup group;
  for (int64_t i = 0; i < count; ++i) {
    Value li = i == 0
                   ? local
                   : arith::AddIOp::create(rb, loc, local, constantIndex(rb, i))
                         .getResult();
    group.locals.push_back(li);
    group.rows.push_back(arith::AddIOp::create(rb, loc, firstRow, li));
  }
  auto rowValue = [&](Value column, Value row) -> Value {
    if (!column)
      return Value();
    return vector::BroadcastOp::create(
        rb, loc, computeVectorType,
        tensor::ExtractOp::create(rb, loc, column, ValueRange{row}));
  };
  for (Value row : group.rows) {
    group.rstds.push_back(rowValue(rstdColumn, row));
    group.means.push_back(rowValue(meanColumn, row));
  }
  if (alpha)
    return buildDyTSweep(rb, group, iter);
  return buildNormSweeps(rb, group, iter);
}
