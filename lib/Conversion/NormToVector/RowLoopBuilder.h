//===- RowLoopBuilder.h - Vector row loops of one norm op -------*- C++ -*-===//
//
// The builder behind norm-lower-cpu: one norm op becomes an scf.forall over
// rows whose body sweeps the row with vector ops on tensors. RowSweeps.cpp
// holds the sweeps (reads, writes, masked tails, row sums), RowLoopBuilder.cpp
// the statistics of each op, the row loop and the reshapes around it,
// BlockScaledSweeps.cpp the output sweep of the block-scaled quantizations.
// GradToVector.cpp builds the gradient ops' row loops on the same sweeps.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_NORMTOVECTOR_ROWLOOPBUILDER_H
#define LIB_CONVERSION_NORMTOVECTOR_ROWLOOPBUILDER_H

#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace norm {
namespace cpu_lowering {

/// Independent accumulators per statistic: enough to hide the latency of
/// vector adds on current x86 cores.
constexpr unsigned kUnrollFactor = 4;

/// Vector steps summed in the compute type before the partial sums are added
/// into the row-sum type (f64): keeps rows of 2^20 elements and more
/// accurate.
constexpr int64_t kBlockSteps = 64;

/// How a weight, bias or alpha operand is read inside the row loop.
struct Parameter {
  /// The operand as a 1-D tensor of N elements, or null.
  Value row;
  /// The operand's single element when it is a scalar, widened to the
  /// compute type and broadcast to a vector; or null.
  Value scalar;

  explicit operator bool() const { return row || scalar; }
};

/// The [rows, N] view of a vector lowering's operands and the sweeps over
/// a row (RowSweeps.cpp): what the row loops of the forward ops
/// (RowLoopBuilder) and of the gradient ops (GradToVector.cpp) share. The
/// builder deriving from it sets the geometry (`rank`, `axis`, `rowSize`,
/// `staticRowSize`) and the vector types before it sweeps.
class RowSweeps {
protected:
  RowSweeps(RewriterBase &b, Location loc) : b(b), loc(loc) {}

  /// Reshapes a tensor of x's shape to [rows, N].
  Value toMatrix(Value value);
  /// Reshapes a [rows, M] tensor back to `resultType`, x's shape with the
  /// last dim M (`lastSize`) and its own element type.
  Value fromMatrix(Value matrix, RankedTensorType resultType,
                   ArrayRef<OpFoldResult> sizes);
  /// Expands `value` to `resultType` along `groups`: a tensor.expand_shape,
  /// or a tensor.reshape when a group holds several dynamic dims (LLVM 22's
  /// expand-strided-metadata crashes on such a memref.expand_shape,
  /// llvm/llvm-project#186830).
  Value expandToInput(Value value, RankedTensorType resultType,
                      ArrayRef<OpFoldResult> sizes,
                      ArrayRef<ReassociationIndices> groups);

  /// Reads one vector along the last dim of `source` (a tensor of any rank)
  /// at `indices`, of source's element type, masked when `mask` is given
  /// (masked lanes read 0).
  Value read(OpBuilder &rb, Value source, ValueRange indices, Value mask);
  /// Writes `vector` along the last dim of `dest` at `indices`, masked when
  /// `mask` is given; returns the updated tensor.
  Value write(OpBuilder &rb, Value vector, Value dest, ValueRange indices,
              Value mask);
  /// Reads the vector at column `col` of `matrix` (row `row`), masked when
  /// `mask` is given.
  Value readMatrix(OpBuilder &rb, Value matrix, Value row, Value col,
                   Value mask);
  /// Writes `vector` at column `col` of `dest`: a 1-D row tensor, or the
  /// [1, N] result of a single-row input (at row 0).
  Value writeRow(OpBuilder &rb, Value vector, Value dest, Value col,
                 Value mask);

  /// Runs `body` over the full vectors of the row and then once over the
  /// masked tail, threading `inits` through.
  SmallVector<Value>
  sweep(OpBuilder &rb, ValueRange inits,
        function_ref<SmallVector<Value>(OpBuilder &, Value col, Value mask,
                                        ValueRange iterArgs)>
            body);
  /// sweep() over the columns [begin, begin + length) of the row (`begin`
  /// null: from 0); `staticLength` is `length` when static (no tail when it
  /// is a multiple of the vector length).
  SmallVector<Value>
  sweepRange(OpBuilder &rb, Value begin, Value length, int64_t staticLength,
             ValueRange inits,
             function_ref<SmallVector<Value>(OpBuilder &, Value col, Value mask,
                                             ValueRange iterArgs)>
                 body);

  /// True when N is statically a multiple of the vector length.
  bool hasNoTail() const {
    return !ShapedType::isDynamic(staticRowSize) &&
           staticRowSize % vectorLength == 0;
  }

  RewriterBase &b;
  Location loc;
  /// The rank of x and its first normalized dim.
  int64_t rank = 0, axis = 0;
  /// N, as an index value and (when static) as a number.
  Value rowSize;
  int64_t staticRowSize = ShapedType::kDynamic;
  /// The lanes of a vector step, and its compute-type and mask types.
  int64_t vectorLength = 0;
  VectorType computeVectorType, maskType;
};

/// Builds the direct lowering of one norm op, of a norm op fused with the
/// norm.quantize of its `y`, or of a norm.quantize alone.
class RowLoopBuilder : public RowSweeps {
public:
  /// `op` may be null (a quantization alone); `quant` is null or quantizes
  /// `op`'s `y` (or, alone, any input) along the rows of the lowering.
  RowLoopBuilder(RewriterBase &b, NormOpInterface op, QuantizeOp quant,
                 const NormLowerCPUPassOptions &options)
      : RowSweeps(b, op ? op.getLoc() : quant.getLoc()), op(op), quant(quant),
        options(options) {}

  /// Replacements of the results of the op (without `quant`), or of
  /// `quant`'s results followed by the norm op's `residual_out`.
  FailureOr<SmallVector<Value>> build();

private:
  /// Reshapes the [rows, 1] statistics of the row loop to `resultType`, the
  /// leading dims of x (`sizes`).
  Value statsFromMatrix(Value matrix, RankedTensorType resultType,
                        ArrayRef<OpFoldResult> sizes);
  /// The results of a statically empty input, of `resultTypes` and
  /// `sizes`: empty tensors, and the values the contract gives the
  /// non-empty ones (statistics and scales of empty rows).
  SmallVector<Value>
  buildStaticallyEmpty(ArrayRef<RankedTensorType> resultTypes,
                       ArrayRef<SmallVector<OpFoldResult>> sizes,
                       unsigned numRowResults);
  /// Prepares a weight/bias/alpha operand for reads in the row loop.
  Parameter prepareParameter(Value value);

  /// A [rows, size] result of the row loop: y (or q, then the scales), then
  /// residual_out, then the statistics ([rows, 1]). The scales in the
  /// swizzled_128x4 layout are instead the [T, K4, 32, 4, 4] view of the
  /// flat scales (`swizzled`), of which a row owns a [K4, 4] slice.
  struct OutputSpec {
    Type elementType;
    OpFoldResult size;
    int64_t staticSize;
    bool swizzled = false;
  };
  SmallVector<OutputSpec> getOutputSpecs();
  /// The destination of a row result for `rows` rows: an empty [rows, size]
  /// tensor, or the zero-filled swizzled scales (their padding is 0).
  Value buildOutputInit(OpBuilder &rb, const OutputSpec &spec,
                        OpFoldResult rows);
  /// The slice of the destination `shared` of `spec` that row `row` writes,
  /// as (offsets, sizes, strides), and its (rank-reduced) type.
  void getRowSlice(OpBuilder &rb, const OutputSpec &spec, Value row,
                   SmallVectorImpl<OpFoldResult> &offsets,
                   SmallVectorImpl<OpFoldResult> &sizes,
                   SmallVectorImpl<OpFoldResult> &strides);
  RankedTensorType getRowType(const OutputSpec &spec);

  /// The types of the replacements (y, or q and the scales, then
  /// residual_out, then the statistics) and the sizes they are built with;
  /// returns how many of them are row results (before the statistics).
  unsigned
  getReplacementTypes(RankedTensorType opXType,
                      SmallVectorImpl<RankedTensorType> &replacementTypes,
                      SmallVectorImpl<SmallVector<OpFoldResult>> &resultSizes);
  /// Sets `nontemporal` (and `nontemporalMinRows`) from the sizes of the
  /// row results.
  void chooseNontemporalStores(ArrayRef<RankedTensorType> rowResultTypes);
  /// The row loop: sequential, parallel, or parallel from a row count
  /// decided at run time.
  SmallVector<Value> buildRowLoops();
  /// Emits the scf.forall over rows; `sequential` marks it so.
  SmallVector<Value> buildRowLoop(bool sequential);
  /// The body of one row without a loop, writing [1, N] results (a
  /// statically single-row input).
  SmallVector<Value> buildSingleRow();
  /// Emits the body for row `row`, returning the finished row tensors.
  SmallVector<Value> buildRow(OpBuilder &rb, Value row, ValueRange rowInits);
  /// The swizzled_128x4 scales (BlockScaledSweeps.cpp): the number of
  /// 128-row tiles T, the [T, K4, 32, 4, 4] view of the flat scales
  /// (zero-filled), and its flat size roundup(M, 128) * K4 * 4 from the
  /// leading dims of x.
  OpFoldResult buildNumSwizzledTiles(OpBuilder &rb, OpFoldResult rows);
  Value buildSwizzledScalesInit(OpBuilder &rb, OpFoldResult rows);
  OpFoldResult buildSwizzledScalesSize();

  /// Reads a parameter as a vector (or broadcasts its scalar).
  Value readParameter(OpBuilder &rb, const Parameter &param, Value col,
                      Value mask);
  /// s = x (+ residual) at column `col` of row `row`, in the input type.
  Value readInput(OpBuilder &rb, Value row, Value col, Value mask);

  /// The output sweeps of a row: `y` (the result of `computeY`, which
  /// returns y and s at a column) written as it is or quantized, and
  /// residual_out when `sRow` is given (DyT). `outputs` are the row tensors
  /// of y (or q, then the scales), then sRow. Returns the finished rows.
  SmallVector<Value> buildOutputSweeps(
      OpBuilder &rb, ValueRange outputs, bool writeResidual,
      function_ref<std::pair<Value, Value>(OpBuilder &, Value col, Value mask)>
          computeY);
  /// buildOutputSweeps() of the block-scaled forms (BlockScaledSweeps.cpp):
  /// one sweep over chunks of one group of G >= vector length columns or
  /// of several vector steps of smaller groups; y is kept in registers, the
  /// chunk's group maxima reduced together, their scales written and the
  /// elements converted and stored at once.
  SmallVector<Value> buildBlockScaledSweep(
      OpBuilder &rb, ValueRange outputs, bool writeResidual,
      function_ref<std::pair<Value, Value>(OpBuilder &, Value col, Value mask)>
          computeY);
  /// One chunk of buildBlockScaledSweep(): the `numChunkGroups` groups from
  /// column `col` (a multiple of the chunk length, or the static start of
  /// the row's last, shorter chunk). `rows` are the q row, the scales row
  /// and (DyT) residual_out's row; returns them updated.
  SmallVector<Value> buildBlockScaledChunk(
      OpBuilder &rb, Value col, int64_t numChunkGroups, ValueRange rows,
      bool writeResidual,
      function_ref<std::pair<Value, Value>(OpBuilder &, Value col, Value mask)>
          computeY);
  /// The block scales of groups from their `amax` (f32, a scalar or a
  /// vector of one lane per group): the values the scales result holds
  /// (in its element type) and the f32 multipliers of the elements.
  std::pair<Value, Value> buildBlockScales(OpBuilder &rb, Value amax);
  /// Writes the scales `values` (a scalar, or a vector of consecutive
  /// groups) of the groups from `firstGroup` into the row's scales
  /// `scalesRow`, at their place in the scale layout. `firstGroup` is a
  /// multiple of the number of groups of a full chunk.
  Value writeBlockScales(OpBuilder &rb, Value values, Value scalesRow,
                         Value firstGroup);

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

  /// The f64 mean over the row of `term(s)^2` (s widened to the compute
  /// type), through buildMeanSquareIfOverflowed.
  Value buildMeanSquare(OpBuilder &rb, Value row,
                        function_ref<Value(OpBuilder &, Value s)> term);
  /// `squares / N`, `squares` being the f64 row sum of `term(s)^2`; when
  /// the squares overflowed the compute type (`squares` is +inf), the mean
  /// of another sweep that scales the terms first.
  Value
  buildMeanSquareIfOverflowed(OpBuilder &rb, Value row, Value squares,
                              function_ref<Value(OpBuilder &, Value s)> term);

  /// Widens `s` to the compute type for a sum over its lanes, which does
  /// not depend on their order: bf16 -> f32 takes the even elements
  /// (shifted up) and then the odd ones (masked), two in-lane integer ops,
  /// where an ordered arith.extf needs a lane-crossing zero extension per
  /// vector register.
  Value widenUnordered(OpBuilder &rb, Value s);

  /// Sums the lanes of a vector accumulator.
  Value reduce(OpBuilder &rb, Value accumulator);

  NormOpInterface op;
  QuantizeOp quant;
  const NormLowerCPUPassOptions &options;

  RankedTensorType xType;
  Type inputType, computeType;
  /// With `quant`: the element type of q, the elements of a group (dynamic
  /// for per-token scales of a dynamic N), the groups of a row, and (static
  /// form) the broadcast inverse scale.
  Type quantizedType;
  int64_t staticGroupSize = ShapedType::kDynamic;
  int64_t numGroups = 1;
  Value inverseScale;
  /// The block-scaled forms: the scales' element type, whether they are in
  /// the swizzled_128x4 layout, and NVFP4's global scale (an f32 scalar).
  bool blockScaled = false, swizzled = false;
  Type scalesElementType;
  Value globalScale;
  /// The number of statistics results (`return_stats`), and the scalars of
  /// the current row (mean, then rstd) as buildRow computes them.
  unsigned numStats = 0;
  SmallVector<Value> rowStats;
  SmallVector<OpFoldResult> xSizes;
  Value x, residual;
  Parameter weight, bias, alpha;
  Value numRows, rowSizeFloat;
  bool nontemporal = false;
  /// With a dynamic row count: the fewest rows for non-temporal stores (0:
  /// no run-time condition).
  int64_t nontemporalMinRows = 0;
  VectorType inputVectorType;
};

/// The shape of `value` (a ranked tensor) with the dynamic dims that the
/// tensor.casts in front of it know made static. Creates no op.
SmallVector<int64_t> getShapeThroughCasts(Value value);

/// `value` (a ranked tensor) with the dims its type leaves dynamic but whose
/// size is known statically made static: through tensor.casts of more static
/// tensors, and sizes that fold to constants. A tensor.cast to the refined
/// type, or `value` itself when nothing is known.
Value refineStaticSizes(OpBuilder &b, Location loc, Value value);

/// `value` with the lanes outside `mask` set to zero (a sum over the lanes
/// then ignores them).
Value maskLanes(OpBuilder &b, Location loc, Value value, Value mask);

} // namespace cpu_lowering
} // namespace norm
} // namespace mlir

#endif // LIB_CONVERSION_NORMTOVECTOR_ROWLOOPBUILDER_H
