//===- GradToVector.h - Vector row loops of the gradient ops ---*- C++ -*-===//
//
// The builder of norm-lower-cpu's gradient row loops. GradToVector.cpp builds
// the blocks of rows, the partial parameter gradients and their sum over the
// blocks; GradRowSweeps.cpp the sweeps of one row group inside a block.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_NORMTOVECTOR_GRADTOVECTOR_H
#define LIB_CONVERSION_NORMTOVECTOR_GRADTOVECTOR_H

#include "RowLoopBuilder.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
namespace norm {
namespace cpu_lowering {

/// Rows per block of the parameter-gradient partial sums; blocks of rows of
/// a static length of at least kLongRow elements have kLongRowsPerBlock, so
/// that the partial rows and their final sum (one thread) stay about 1% of
/// the traffic. The block size depends on the shape alone, never on the
/// thread count.
constexpr int64_t kRowsPerBlock = 64;
constexpr int64_t kLongRow = 2048;
constexpr int64_t kLongRowsPerBlock = 256;
/// Rows of a block swept together: their parameter-gradient terms are
/// summed before they are added into the block's partial rows.
constexpr int64_t kRowsPerGroup = 4;

/// Builds the row loops of one gradient op on the row sweeps of the forward
/// lowering (RowSweeps), normalized over the last dim (`axis` = rank - 1).
class GradRowLoopBuilder : public cpu_lowering::RowSweeps {
public:
  GradRowLoopBuilder(RewriterBase &b, NormGradOpInterface op,
                     const NormLowerCPUPassOptions &options)
      : RowSweeps(b, op.getLoc()), op(op), options(options), dy(op.getDy()),
        x(op.getX()), mean(op.getMean()), rstd(op.getRstd()),
        alpha(op.getAlpha()), weight(op.getWeight()),
        weightOffset(op.getWeightOffsetValue()), hasBias(op.getHasBiasFlag()),
        computeType(op.getComputeElementType()) {}

  FailureOr<SmallVector<Value>> build();

private:
  /// Rows `local .. local + count - 1` of a block: their indices in the
  /// block (`locals`) and in the [M, N] matrices (`rows`), and their
  /// broadcast `rstd` and `mean` (null where the op has none).
  struct RowGroup {
    SmallVector<Value> locals, rows, rstds, means;
  };

  /// x refined to its static sizes, the geometry and the vector types.
  void buildGeometry();
  /// The block size (chosen at run time for a dynamic row length) and the
  /// number of blocks.
  void buildBlockCounts();
  /// The forall's shared outputs: dx ([M, N]), the parameter-gradient
  /// partials ([blocks, P, N]) and dalpha's partial lanes ([blocks, L]).
  SmallVector<Value> buildOutputs();
  /// The weight row in the compute type, with its offset added.
  Value buildWeightRow();
  /// The forall over blocks, with its sequential and non-temporal
  /// attributes.
  scf::ForallOp buildBlockLoop(ValueRange outputs);
  /// The body of block `forall`: its row loops and its slices of the shared
  /// outputs.
  void buildBlock(scf::ForallOp forall);
  /// Rows `local .. local + count - 1` of the block: their dx, and their
  /// terms summed over the group before they are added into the partial
  /// rows (one read and write of a partial per group, not per row).
  SmallVector<Value> buildRowGroup(OpBuilder &rb, Value local, int64_t count,
                                   ValueRange iter);
  /// DyT's sweep of a row group.
  SmallVector<Value> buildDyTSweep(OpBuilder &rb, const RowGroup &group,
                                   ValueRange iter);
  /// LayerNorm's and RMSNorm's two sweeps of a row group.
  SmallVector<Value> buildNormSweeps(OpBuilder &rb, const RowGroup &group,
                                     ValueRange iter);
  /// dx in x's type, then the parameter gradients summed over the blocks.
  SmallVector<Value> buildResults(scf::ForallOp forall);

  /// The weight factor (null without weight) at a column, in the compute
  /// type.
  Value readWeight(OpBuilder &tb, Value col, Value mask);
  /// dy and x of row `i` of `group` at a column, in the compute type.
  std::pair<Value, Value> readRow(OpBuilder &tb, const RowGroup &group,
                                  int64_t i, Value col, Value mask);
  /// Writes the group's dx at `col` and adds the weight's and dy's terms
  /// into the partial tile (in `state` after dx); returns the updated
  /// tensors.
  SmallVector<Value> writeOutputs(OpBuilder &sb, const RowGroup &group,
                                  ValueRange state, Value col, Value mask,
                                  ArrayRef<Value> dxs, Value weightTerm,
                                  Value biasTerm);

  /// [lead...] -> [M] (rank 0: [1]).
  Value toColumn(Value value);
  Value constantIndex(OpBuilder &ob, int64_t value) {
    return arith::ConstantIndexOp::create(ob, loc, value);
  }
  /// DyT's dalpha: the f64 sum of the blocks' partial vectors ([blocks, L])
  /// in block and lane order, rounded to `type` (alpha's).
  Value sumAlphaPartials(OpBuilder &ob, Value partials, RankedTensorType type);
  /// The sum of parameter gradient `index` over the blocks' partial rows
  /// (`partials[block, index, :]`), in f64, rounded to `type`.
  Value sumOverBlocks(OpBuilder &ob, Value partials, int64_t index,
                      RankedTensorType type);

  NormGradOpInterface op;
  const NormLowerCPUPassOptions &options;
  /// The operands (x and dy refined by buildGeometry); `mean` and `rstd`
  /// for layer_norm_grad, `rstd` for rms_norm_grad, `alpha` for dyt_grad.
  Value dy, x, mean, rstd, alpha, weight;
  double weightOffset;
  bool hasBias;
  Type computeType;

  RankedTensorType opXType, xType;
  Type elementType;
  Value numRows;
  /// Rows per block (static, and as an index value), the number of blocks
  /// and of parameter-gradient partials.
  int64_t staticBlockRows = kRowsPerBlock;
  Value rowsPerBlock, numBlocks;
  unsigned numPartials = 0;
  /// The operands as the row loops read them.
  Value dyMatrix, xMatrix, meanColumn, rstdColumn, rowSizeFloat;
  Value alphaVector, weightRow;
  /// In the block body: its first row and its zero vector.
  Value firstRow, zero;
};

} // namespace cpu_lowering
} // namespace norm
} // namespace mlir

#endif // LIB_CONVERSION_NORMTOVECTOR_GRADTOVECTOR_H
