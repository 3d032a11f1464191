//===- TensorExpr.h - Symbolic view of tensor-level IR ----------*- C++ -*-===//
//
// A dialect-neutral, element-level view of tensor computations: what one
// element of a tensor value computes, as an expression over the elements of
// leaf tensors, with reductions made explicit. linalg (generic and named
// ops), TOSA and tensor-level arith/math all map to the same expressions, so
// a normalization is recognized once, whatever the frontend emitted.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_RAISE_TENSOREXPR_H
#define LIB_DIALECT_NORM_TRANSFORMS_RAISE_TENSOREXPR_H

#include "norm/Dialect/Norm/Utils/FloatUtils.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Allocator.h"

#include <vector>

namespace mlir {
namespace norm {

/// The operation a `TensorExpr` node computes on its operands' elements.
enum class TensorExprKind {
  /// An element of a tensor (or a scalar) the evaluator did not look into.
  Leaf,
  /// A floating-point constant (splat tensors and scalar constants).
  Const,
  /// The number of elements over the frame dims in `reducedDims`, read
  /// from the dynamic sizes of the tensor `value` (of the frame's rank):
  /// `tensor.dim`s, multiplied, converted to an integer or float `type`.
  DimSize,
  /// The accumulator of a reduction body (only while a body is evaluated).
  Acc,
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Neg,
  Abs,
  Sqrt,
  Rsqrt,
  Recip,
  Tanh,
  Exp,
  /// `pow(operand, constant)` for exponents other than 2 and 0.5.
  Pow,
  /// Rounding to an integral value, ties to even (`math.roundeven`).
  RoundEven,
  /// Rounding to an integral value toward -inf (`math.floor`) and toward
  /// +inf (`math.ceil`); block-scale builders only (see
  /// `setBlockScaleOps`).
  Floor,
  Ceil,
  /// `math.log2` and `math.exp2`; block-scale builders only.
  Log2,
  Exp2,
  /// `(a == b) ? t : f` with an ordered equality (`arith.select` on
  /// `arith.cmpf oeq`, or on `une` with the values swapped): operands a, b,
  /// t, f; block-scale builders only.
  SelectEq,
  /// A float conversion (`extf`, `truncf`, `tosa.cast`) to `type`; at the
  /// root of an evaluation `type` may be a narrow float (`f8E4M3FN`).
  Cast,
  /// A conversion to the signed integer `type`, rounding toward zero
  /// (`arith.fptosi`); only at the root of an evaluation.
  FPToSI,
  /// The sum of the operand over the frame dims in `reducedDims`.
  Sum,
  /// The maximum of the operand over the frame dims in `reducedDims`
  /// (`arith.maximumf`/`maxnumf` combiners, `tosa.reduce_max`; like `Max`,
  /// the node does not tell the NaN behaviors apart).
  ReduceMax,
};

/// One node of an element-level expression. The "frame" is the iteration
/// space of the tensor the evaluation started from: dims `0..rank-1`. A leaf
/// element is addressed by `map`, from frame dims to the leaf's coordinates;
/// every map result is a frame dim or the constant 0 (a broadcast or a unit
/// dim). Nodes are hash-consed: structurally equal expressions are the same
/// node, so "the same value computed twice" compares equal by pointer.
struct TensorExpr {
  TensorExprKind kind;
  /// Element type of the value this node computes.
  Type type;
  SmallVector<TensorExpr *, 2> operands;
  /// Leaf: the tensor or scalar value and its access map.
  Value value;
  AffineMap map;
  /// Const: the value (exact for f16, bf16, f32, f64). Pow: the exponent.
  double constant = 0.0;
  /// Sum, ReduceMax: the reduced frame dims (bit d for dim d).
  uint64_t reducedDims = 0;
  /// Frame dims the value varies along.
  uint64_t deps = 0;
  /// True when a Sum occurs in this expression.
  bool containsSum = false;
  /// True when the reduction accumulator occurs in this expression.
  bool containsAcc = false;
  /// Creation order; orders the operands of commutative nodes.
  unsigned id = 0;

  bool is(TensorExprKind k) const { return kind == k; }
  TensorExpr *getOperand(unsigned i) const { return operands[i]; }
};

/// One evaluation the builder made: `value` accessed by `map` computes
/// `expr`. Evaluations are memoized, and each records the evaluations it
/// made itself, so what evaluating a root went through can be walked again
/// later without evaluating anything.
struct TensorExprEvaluation {
  Value value;
  AffineMap map;
  /// Null while the evaluation is in progress.
  TensorExpr *expr = nullptr;
  /// The evaluations made while computing this one, in the order made
  /// (memoized ones included).
  SmallVector<unsigned, 2> uses;
  /// True when this evaluation or one it made (transitively) is a Sum or a
  /// Tanh: the ops a normalization candidate is anchored at.
  bool reachesAnchor = false;
  /// True for the identity access of a value whose shape is the frame's,
  /// or differs from it only where one of them is dynamic: `value`
  /// materializes `expr` element by element (castToShape gives it the
  /// frame's type).
  bool materializes = false;
};

/// `value` cast to `shape` when its own shape differs from it only in
/// dynamic sizes; itself when the shapes are equal; null when they are
/// incompatible.
Value castToShape(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> shape);

/// Builds hash-consed expressions for the values a tensor depends on, within
/// the frame of one root tensor shape. Ops it cannot express become leaves.
/// Values are f16, bf16, f32 or f64 tensors, except the root of an
/// evaluation, which may also be a quantized tensor (a narrow float such as
/// f8E4M3FN, or an integer) computed by a conversion.
///
/// Evaluations are memoized for the builder's lifetime, so one builder
/// serves every root of its frame shape: evaluating a second root reuses
/// what the first one went through. The result of an evaluation depends on
/// the IR that computes the value only, so the IR that a memoized value
/// depends on must not change while the builder is used (see `forget`).
class TensorExprBuilder {
public:
  /// `frameType` gives the frame's shape; its rank is the frame rank.
  explicit TensorExprBuilder(RankedTensorType frameType);

  /// Makes this builder express what the block-scaled forms of
  /// norm.quantize are written with (floor, ceil, log2, exp2, a select on
  /// an equality, and narrow float tensors such as f8E4M3FN scales inside a
  /// chain, read back by `extf`), which other builders keep as leaves. Set
  /// before the first evaluation.
  void setBlockScaleOps(bool enable) { blockScaleOps = enable; }
  bool hasBlockScaleOps() const { return blockScaleOps; }
  TensorExprBuilder(const TensorExprBuilder &) = delete;
  TensorExprBuilder &operator=(const TensorExprBuilder &) = delete;

  /// The expression of an element of `value`, whose coordinates are the
  /// frame dims (a value of the frame's shape) or, with `map`, any access
  /// from the frame. Returns null when `map` is not a valid access.
  TensorExpr *evaluate(Value value);
  TensorExpr *evaluate(Value value, AffineMap map);

  /// The memoized evaluation of `value` with the identity access, if any.
  const TensorExprEvaluation *lookup(Value value) const;
  /// Walks the evaluations that evaluating `root` made, transitively, each
  /// once, in the order the evaluation completed them (operands first):
  /// what a fresh evaluation of `root` would go through, without evaluating
  /// anything. `follow(user, used)` says whether to walk an evaluation that
  /// `user` made; `root` must come from `lookup`.
  void walkEvaluations(const TensorExprEvaluation &root,
                       function_ref<bool(const TensorExprEvaluation &user,
                                         const TensorExprEvaluation &used)>
                           follow,
                       function_ref<void(const TensorExprEvaluation &)> visit);

  /// Drops the memoized evaluations of `value` (whose op is being erased),
  /// so that a new value at the same address is evaluated afresh.
  void forget(Value value);

  ArrayRef<int64_t> getFrameShape() const { return frameShape; }
  int64_t getRank() const { return frameShape.size(); }
  MLIRContext *getContext() const { return context; }

  /// `map` with unit dims of `shape` (and of the frame) replaced by 0;
  /// null when a result is neither a dim nor the constant 0.
  AffineMap normalizeMap(AffineMap map, ArrayRef<int64_t> shape) const;
  /// The identity access of a value of the frame's shape, normalized.
  AffineMap getIdentityMap() const { return identityMap; }

  //===--------------------------------------------------------------------===//
  // Node constructors. They simplify what is exact to simplify (constant
  // folding, casts of casts, squares, narrow arithmetic done in a type wide
  // enough that one rounding is exact) so that equivalent frontend forms
  // give the same node.
  //===--------------------------------------------------------------------===//

  TensorExpr *getLeaf(Value value, AffineMap map, Type type);
  TensorExpr *getConst(double value, Type type);
  TensorExpr *getDimSize(Value tensor, uint64_t dims, Type type);
  TensorExpr *getUnary(TensorExprKind kind, TensorExpr *operand);
  TensorExpr *getBinary(TensorExprKind kind, TensorExpr *lhs, TensorExpr *rhs);
  TensorExpr *getPow(TensorExpr *base, double exponent);
  TensorExpr *getCast(TensorExpr *operand, Type type);
  TensorExpr *getFPToSI(TensorExpr *operand, IntegerType type);
  TensorExpr *getSum(TensorExpr *operand, uint64_t reducedDims);
  TensorExpr *getReduceMax(TensorExpr *operand, uint64_t reducedDims);
  TensorExpr *getAcc(Type type);
  TensorExpr *getSelectEq(TensorExpr *a, TensorExpr *b, TensorExpr *t,
                          TensorExpr *f);

private:
  /// What identifies a node: everything but the derived fields.
  struct NodeKey {
    TensorExprKind kind;
    Type type;
    ArrayRef<TensorExpr *> operands;
    Value value;
    AffineMap map;
    uint64_t constantBits;
    uint64_t reducedDims;
  };
  /// Hashes and compares nodes by their key, so lookups need no node.
  struct NodeInfo : public llvm::DenseMapInfo<TensorExpr *> {
    static unsigned getHashValue(const NodeKey &key);
    static unsigned getHashValue(const TensorExpr *node);
    static bool isEqual(const NodeKey &key, const TensorExpr *node);
    static bool isEqual(const TensorExpr *lhs, const TensorExpr *rhs) {
      return lhs == rhs;
    }
  };

  TensorExpr *intern(TensorExprKind kind, Type type,
                     ArrayRef<TensorExpr *> operands, Value value = {},
                     AffineMap map = {}, double constant = 0.0,
                     uint64_t reducedDims = 0);
  TensorExpr *evaluateImpl(Value value, AffineMap map);
  TensorExpr *evaluateOp(Operation *op, unsigned resultIndex, AffineMap map);
  TensorExpr *evaluateLinalg(Operation *op, unsigned resultIndex,
                             AffineMap map);
  /// `1 / N`, `c * N`...: a float `arith.divf`/`mulf` outside a body of an
  /// element count (see DimSize) and a constant; null for anything else.
  TensorExpr *evaluateCountArithmetic(Operation *op);
  TensorExpr *evaluateScalar(Value scalar,
                             DenseMap<Value, TensorExpr *> &environment,
                             function_ref<TensorExpr *(Value)> blockArgExpr);
  TensorExpr *buildElementwise(Operation *op, ArrayRef<Value> operands,
                               function_ref<TensorExpr *(Value)> operandExpr);
  TensorExpr *evaluateReshape(Value source, RankedTensorType resultType,
                              AffineMap map);

  MLIRContext *context;
  bool blockScaleOps = false;
  SmallVector<int64_t> frameShape;
  AffineMap identityMap;

  /// Nodes, allocated together and uniqued by their key.
  llvm::SpecificBumpPtrAllocator<TensorExpr> allocator;
  llvm::DenseSet<TensorExpr *, NodeInfo> uniquer;
  unsigned numNodes = 0;

  /// Evaluations, indexed by (value, normalized map) and by value.
  std::vector<TensorExprEvaluation> evaluations;
  DenseMap<std::pair<Value, AffineMap>, unsigned> evaluationIndex;
  DenseMap<Value, SmallVector<unsigned, 1>> evaluationsOfValue;
  /// The evaluations in progress, innermost last.
  SmallVector<unsigned> evaluationStack;
  /// Nodes that existed when the outermost evaluation in progress began.
  unsigned nodesAtStart = 0;

  /// Walk marks: evaluation i was walked by the walk numbered walkMarks[i].
  std::vector<unsigned> walkMarks;
  unsigned walkNumber = 0;
};

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_RAISE_TENSOREXPR_H
