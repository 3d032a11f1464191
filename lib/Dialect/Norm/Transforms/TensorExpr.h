//===- TensorExpr.h - Symbolic view of tensor-level elementwise IR -*- C++
//-*-===//
//
// A dialect-neutral, element-level view of tensor computations: what one
// element of a tensor value computes, as an expression over the elements of
// leaf tensors, with reductions made explicit. linalg (generic and named
// ops), TOSA and tensor-level arith/math all map to the same expressions, so
// a normalization is recognized once, whatever the frontend emitted.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_NORM_TRANSFORMS_TENSOREXPR_H
#define LIB_DIALECT_NORM_TRANSFORMS_TENSOREXPR_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <vector>

namespace mlir {
namespace norm {

/// The operation a `TensorExpr` node computes on its operands' elements.
enum class TensorExprKind {
  /// An element of a tensor (or a scalar) the evaluator did not look into.
  Leaf,
  /// A floating-point constant (splat tensors and scalar constants).
  Const,
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
  /// A float conversion (`extf`, `truncf`, `tosa.cast`) to `type`.
  Cast,
  /// The sum of the operand over the frame dims in `reducedDims`.
  Sum,
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
  /// Sum: the reduced frame dims (bit d for dim d).
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

/// Builds hash-consed expressions for the values a tensor depends on, within
/// the frame of one root tensor type. Ops it cannot express become leaves.
class TensorExprBuilder {
public:
  /// `frameType` is the type of the root value; its rank is the frame rank.
  explicit TensorExprBuilder(RankedTensorType frameType);

  /// The expression of an element of `value`, whose coordinates are the
  /// frame dims (a value of the frame's shape) or, with `map`, any access
  /// from the frame. Returns null when `map` is not a valid access.
  TensorExpr *evaluate(Value value);
  TensorExpr *evaluate(Value value, AffineMap map);

  /// The value of the frame's shape that computes `expr` element by element
  /// with the identity access, or null when the IR has no such value.
  Value getMaterialization(TensorExpr *expr) const;

  /// Every node that `value` was evaluated to (under any access map).
  ArrayRef<TensorExpr *> getNodesOf(Value value) const;

  /// Calls `fn` on every value evaluated so far, with its nodes.
  void forEachEvaluatedValue(
      function_ref<void(Value, ArrayRef<TensorExpr *>)> fn) const {
    for (const auto &[value, list] : nodesOfValue)
      fn(value, list);
  }

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
  TensorExpr *getUnary(TensorExprKind kind, TensorExpr *operand);
  TensorExpr *getBinary(TensorExprKind kind, TensorExpr *lhs, TensorExpr *rhs);
  TensorExpr *getPow(TensorExpr *base, double exponent);
  TensorExpr *getCast(TensorExpr *operand, Type type);
  TensorExpr *getSum(TensorExpr *operand, uint64_t reducedDims);
  TensorExpr *getAcc(Type type);

private:
  TensorExpr *intern(TensorExprKind kind, Type type,
                     ArrayRef<TensorExpr *> operands, Value value = {},
                     AffineMap map = {}, double constant = 0.0,
                     uint64_t reducedDims = 0);
  TensorExpr *evaluateImpl(Value value, AffineMap map);
  TensorExpr *evaluateOp(Operation *op, unsigned resultIndex, AffineMap map);
  TensorExpr *evaluateLinalg(Operation *op, unsigned resultIndex,
                             AffineMap map);
  TensorExpr *evaluateScalar(Value scalar,
                             DenseMap<Value, TensorExpr *> &environment,
                             function_ref<TensorExpr *(Value)> blockArgExpr);
  TensorExpr *buildElementwise(Operation *op, ArrayRef<Value> operands,
                               function_ref<TensorExpr *(Value)> operandExpr);
  TensorExpr *evaluateReshape(Value source, RankedTensorType resultType,
                              AffineMap map);

  MLIRContext *context;
  SmallVector<int64_t> frameShape;
  AffineMap identityMap;
  std::vector<std::unique_ptr<TensorExpr>> nodes;
  std::map<std::vector<uintptr_t>, TensorExpr *> uniquer;
  std::map<std::pair<const void *, const void *>, TensorExpr *> memo;
  DenseMap<TensorExpr *, Value> materializations;
  DenseMap<Value, SmallVector<TensorExpr *, 2>> nodesOfValue;
  unsigned depth = 0;
};

/// True for f16, bf16, f32 and f64.
bool isSupportedFloat(Type type);

/// Number of significand bits (precision) of a supported float type.
unsigned getPrecision(Type type);

/// `value` rounded to `type` (round to nearest even).
double roundToType(double value, Type type);

} // namespace norm
} // namespace mlir

#endif // LIB_DIALECT_NORM_TRANSFORMS_TENSOREXPR_H
