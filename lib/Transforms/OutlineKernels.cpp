//===- OutlineKernels.cpp - One function per distinct kernel ----*- C++ -*-===//
//
// norm-outline-kernels: groups the equivalent norm ops and contractions at
// the top level of each function body and moves each group of at least
// `min-count` ops into one private function that all of them call, so that
// the lowerings and every later pass see each distinct kernel once instead
// of once per layer of the model.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Support/PassStatistics.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMOUTLINEKERNELSPASS
#define GEN_PASS_DEF_NORMDROPKERNELRESULTSPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

/// Marks the functions this pass creates.
static constexpr llvm::StringLiteral kKernelAttrName = "norm.kernel";

/// Whether `value` is read by a `norm.quantize` that the CPU lowering fuses
/// with the norm op producing it.
static bool feedsQuantize(Value value) {
  return llvm::any_of(value.getUsers(),
                      [](Operation *user) { return isa<QuantizeOp>(user); });
}

/// Whether every result of `op` (ranked tensors) has a static shape.
static bool hasStaticResults(Operation *op) {
  return llvm::all_of(op->getResultTypes(), [](Type type) {
    return cast<RankedTensorType>(type).hasStaticShape();
  });
}

/// Whether `op` is a kernel this pass outlines (see the pass description).
static bool isOutlinable(Operation *op) {
  bool isNormKernel = isa<NormOpInterface>(op) || isGradientOp(op);
  if (isNormKernel) {
    if (auto norm = dyn_cast<NormOpInterface>(op);
        norm && feedsQuantize(norm.getY()))
      return false;
  } else if (auto quantize = dyn_cast<QuantizeOp>(op)) {
    if (isa_and_nonnull<NormOpInterface>(quantize.getInput().getDefiningOp()))
      return false;
  } else {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
        !linalg::isaContractionOpInterface(linalgOp))
      return false;
  }
  auto isRankedTensor = [](Type type) { return isa<RankedTensorType>(type); };
  if (!llvm::all_of(op->getOperandTypes(), isRankedTensor) ||
      !llvm::all_of(op->getResultTypes(), isRankedTensor) ||
      op->getNumResults() == 0)
    return false;
  // Ops that are not destination-style get their destinations from the
  // caller, which must know the result shapes.
  bool isStatic = hasStaticResults(op);
  if (!isa<DestinationStyleOpInterface>(op) && !isStatic &&
      !isa<ReifyRankedShapedTypeOpInterface>(op))
    return false;
  // The callee holds a clone of the op: what its regions read must be
  // defined in them.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return captured.empty();
}

/// The ops one kernel function holds: `root`, and the `linalg.fill`s that
/// produce its destinations (the caller would otherwise keep one fill loop
/// per kernel call; a fill other ops also use stays for them).
struct Kernel {
  Operation *root;
  SmallVector<Operation *, 1> fills;

  /// The values the kernel reads from the caller, in argument order: the
  /// root's operands, each absorbed fill replaced by its own operands.
  SmallVector<Value> getArguments() const {
    SmallVector<Value> arguments;
    for (Value operand : root->getOperands()) {
      if (Operation *fill = getFill(operand))
        llvm::append_range(arguments, fill->getOperands());
      else
        arguments.push_back(operand);
    }
    return arguments;
  }

  Operation *getFill(Value operand) const {
    Operation *def = operand.getDefiningOp();
    return def && llvm::is_contained(fills, def) ? def : nullptr;
  }

  /// Whether the function writes the root's results into destinations the
  /// caller passes (ops that are not destination-style).
  bool takesDestinations() const {
    return !isa<DestinationStyleOpInterface>(root);
  }
};

static Kernel makeKernel(Operation *root) {
  Kernel kernel{root, {}};
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(root)) {
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      auto fill = init.get().getDefiningOp<linalg::FillOp>();
      if (fill && fill->getBlock() == root->getBlock() &&
          fill.hasPureTensorSemantics())
        kernel.fills.push_back(fill);
    }
  }
  return kernel;
}

/// Equivalence of two kernels: the same ops with the same attributes and
/// regions and the same operand and result types; the values read from the
/// caller may differ.
static bool isEquivalentOp(Operation *lhs, Operation *rhs) {
  return lhs->getOperandTypes() == rhs->getOperandTypes() &&
         OperationEquivalence::isEquivalentTo(
             lhs, rhs, OperationEquivalence::ignoreValueEquivalence,
             /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

static bool isEquivalentKernel(const Kernel &lhs, const Kernel &rhs) {
  if (!isEquivalentOp(lhs.root, rhs.root))
    return false;
  for (auto [lhsOperand, rhsOperand] :
       llvm::zip(lhs.root->getOperands(), rhs.root->getOperands())) {
    Operation *lhsFill = lhs.getFill(lhsOperand);
    Operation *rhsFill = rhs.getFill(rhsOperand);
    if (bool(lhsFill) != bool(rhsFill) ||
        (lhsFill && !isEquivalentOp(lhsFill, rhsFill)))
      return false;
  }
  return true;
}

static llvm::hash_code hashKernel(const Kernel &kernel) {
  llvm::hash_code hash = OperationEquivalence::computeHash(
      kernel.root, OperationEquivalence::ignoreHashValue,
      OperationEquivalence::ignoreHashValue,
      OperationEquivalence::IgnoreLocations);
  for (Type type : kernel.root->getOperandTypes())
    hash = llvm::hash_combine(hash, type);
  for (Value operand : kernel.root->getOperands())
    hash = llvm::hash_combine(hash, kernel.getFill(operand) != nullptr);
  return hash;
}

/// The function `kernel` is moved into: the values it reads are the
/// arguments, then (unless the root is destination-style) one destination
/// per result, into which the results are materialized and returned.
/// Inserted at the end of the module under a name unique in it.
static func::FuncOp createKernelFunction(const Kernel &kernel,
                                         SymbolTable &symbols,
                                         ModuleOp module) {
  Operation *root = kernel.root;
  OpBuilder builder(module.getContext());
  std::string name = "norm_kernel_" + root->getName().stripDialect().str();
  std::replace(name.begin(), name.end(), '.', '_');
  SmallVector<Value> arguments = kernel.getArguments();
  SmallVector<Type> argumentTypes = llvm::to_vector(
      llvm::map_range(arguments, [](Value value) { return value.getType(); }));
  if (kernel.takesDestinations())
    llvm::append_range(argumentTypes, root->getResultTypes());
  auto type = builder.getFunctionType(argumentTypes, root->getResultTypes());
  auto func = func::FuncOp::create(builder, root->getLoc(), name, type);
  func.setPrivate();
  func->setAttr(kKernelAttrName, builder.getUnitAttr());
  symbols.insert(func, module.getBody()->end());
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(arguments, body->getArguments().take_front(arguments.size()));
  for (Operation *fill : kernel.fills) {
    Operation *clone = builder.clone(*fill, mapping);
    mapping.map(fill->getResults(), clone->getResults());
  }
  Operation *clone = builder.clone(*root, mapping);
  SmallVector<Value> results = clone->getResults();
  if (kernel.takesDestinations()) {
    for (auto [result, destination] :
         llvm::zip(results, body->getArguments().drop_front(arguments.size())))
      result = bufferization::MaterializeInDestinationOp::create(
                   builder, root->getLoc(), result, destination)
                   .getResult();
  }
  func::ReturnOp::create(builder, root->getLoc(), results);
  return func;
}

/// The destinations the caller passes for `root`'s results: empty tensors
/// of the result shapes (reified where dynamic), or failure when a dynamic
/// shape cannot be reified.
static FailureOr<SmallVector<Value>> createDestinations(OpBuilder &builder,
                                                        Operation *root) {
  ReifiedRankedShapedTypeDims shapes;
  bool isStatic = hasStaticResults(root);
  if (!isStatic && failed(reifyResultShapes(builder, root, shapes)))
    return failure();
  SmallVector<Value> destinations;
  for (auto [index, type] : llvm::enumerate(root->getResultTypes())) {
    auto tensorType = cast<RankedTensorType>(type);
    SmallVector<OpFoldResult> sizes =
        isStatic ? getAsIndexOpFoldResult(builder.getContext(),
                                          tensorType.getShape())
                 : shapes[index];
    destinations.push_back(tensor::EmptyOp::create(
        builder, root->getLoc(), sizes, tensorType.getElementType()));
  }
  return destinations;
}

namespace {

struct NormOutlineKernelsPass
    : public norm::impl::NormOutlineKernelsPassBase<NormOutlineKernelsPass> {
  using NormOutlineKernelsPassBase::NormOutlineKernelsPassBase;
  NormOutlineKernelsPass() = default;
  NormOutlineKernelsPass(const NormOutlineKernelsPass &other)
      : NormOutlineKernelsPassBase(other) {}

  PassStatistic numKernels{this, "kernels", "Number of functions created"};
  PassStatistic numOutlined{this, "outlined",
                            "Number of ops replaced by calls"};

  void runOnOperation() override {
    if (minCount < 1) {
      getOperation()->emitError(
          "norm-outline-kernels: option 'min-count' must be >= 1, got ")
          << unsigned(minCount);
      return signalPassFailure();
    }
    ModuleOp module = getOperation();
    // Groups of equivalent kernels, in the order of their first op.
    SmallVector<SmallVector<Kernel>> groups;
    DenseMap<llvm::hash_code, SmallVector<unsigned, 1>> buckets;
    for (auto func : module.getOps<func::FuncOp>()) {
      for (Block &block : func.getFunctionBody()) {
        for (Operation &op : block) {
          if (!isOutlinable(&op))
            continue;
          Kernel kernel = makeKernel(&op);
          SmallVector<unsigned, 1> &candidates = buckets[hashKernel(kernel)];
          auto group = llvm::find_if(candidates, [&](unsigned index) {
            return isEquivalentKernel(groups[index].front(), kernel);
          });
          if (group != candidates.end()) {
            groups[*group].push_back(kernel);
            continue;
          }
          candidates.push_back(groups.size());
          groups.push_back({kernel});
        }
      }
    }

    SymbolTable symbols(module);
    for (ArrayRef<Kernel> group : groups) {
      if (group.size() < minCount)
        continue;
      // Destinations first: a dynamic result shape that cannot be reified
      // leaves the whole group in place.
      SmallVector<SmallVector<Value>> destinations;
      for (const Kernel &kernel : group) {
        if (!kernel.takesDestinations()) {
          destinations.emplace_back();
          continue;
        }
        OpBuilder builder(kernel.root);
        FailureOr<SmallVector<Value>> created =
            createDestinations(builder, kernel.root);
        if (failed(created))
          break;
        destinations.push_back(std::move(*created));
      }
      if (destinations.size() != group.size()) {
        for (ArrayRef<Value> created : destinations)
          for (Value destination : created)
            destination.getDefiningOp()->erase();
        continue;
      }
      func::FuncOp function =
          createKernelFunction(group.front(), symbols, module);
      for (auto [kernel, kernelDestinations] : llvm::zip(group, destinations)) {
        OpBuilder builder(kernel.root);
        SmallVector<Value> operands = kernel.getArguments();
        llvm::append_range(operands, kernelDestinations);
        auto call = func::CallOp::create(builder, kernel.root->getLoc(),
                                         function, operands);
        kernel.root->replaceAllUsesWith(call.getResults());
        kernel.root->erase();
        for (Operation *fill : kernel.fills)
          if (fill->use_empty())
            fill->erase();
      }
      ++numKernels;
      numOutlined += group.size();
    }
  }
};

/// The buffer `value` is: through `memref.cast`s, and through the results
/// of loops that yield their iteration argument unchanged (the buffer a
/// tiled, bufferized kernel threads through its loops) to their inits.
static Value getReturnedBuffer(Value value) {
  while (true) {
    if (auto cast = value.getDefiningOp<memref::CastOp>()) {
      value = cast.getSource();
      continue;
    }
    auto result = dyn_cast<OpResult>(value);
    auto loop = result ? dyn_cast<LoopLikeOpInterface>(result.getOwner())
                       : LoopLikeOpInterface();
    if (!loop)
      return value;
    BlockArgument iterArg = loop.getTiedLoopRegionIterArg(result);
    OpOperand *yielded =
        iterArg ? loop.getTiedLoopYieldedValue(iterArg) : nullptr;
    if (!yielded || getReturnedBuffer(yielded->get()) != iterArg)
      return value;
    value = loop.getTiedLoopInit(iterArg)->get();
  }
}

/// Whether the tensor `value` is computed in `destination`: reached from it
/// through destination-style inits, loop inits, `tensor.insert_slice`
/// destinations and reshapes (what `eliminate-empty-tensors` leaves when it
/// roots a kernel's result at the destination argument).
static bool isComputedIn(Value value, Value destination) {
  while (value != destination) {
    auto result = dyn_cast<OpResult>(value);
    if (!result)
      return false;
    Operation *op = result.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
      value = dps.getTiedOpOperand(result)->get();
    } else if (auto loop = dyn_cast<LoopLikeOpInterface>(op)) {
      OpOperand *init = loop.getTiedLoopInit(result);
      if (!init)
        return false;
      value = init->get();
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      value = expand.getSrc();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      value = collapse.getSrc();
    } else {
      return false;
    }
  }
  return true;
}

/// Drops the results of the kernel functions that return one of their
/// arguments (after bufferization: the destination the caller passed, which
/// a cast may wrap), and gives each call the argument instead.
struct NormDropKernelResultsPass
    : public norm::impl::NormDropKernelResultsPassBase<
          NormDropKernelResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Tensor level: a materialization into a destination argument whose
    // source is already computed in it is its source.
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(kKernelAttrName) || func.isExternal())
        continue;
      func.walk([&](bufferization::MaterializeInDestinationOp materialize) {
        auto destination = dyn_cast<BlockArgument>(materialize.getDest());
        if (!destination || !materialize.getResult() ||
            destination.getOwner()->getParentOp() != func ||
            !isComputedIn(materialize.getSource(), destination))
          return;
        materialize.getResult().replaceAllUsesWith(materialize.getSource());
        materialize.erase();
      });
    }
    DenseMap<StringAttr, SmallVector<func::CallOp>> calls;
    module.walk([&](func::CallOp call) {
      calls[call.getCalleeAttr().getAttr()].push_back(call);
    });
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(kKernelAttrName) || func.isExternal() ||
          !func.getFunctionBody().hasOneBlock())
        continue;
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      // Result index -> argument number, for results that are arguments.
      DenseMap<unsigned, unsigned> returnedArguments;
      BitVector dropped(func.getNumResults());
      SmallVector<Value> kept;
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        auto argument = dyn_cast<BlockArgument>(getReturnedBuffer(value));
        if (!argument || argument.getOwner() != &func.getBody().front()) {
          kept.push_back(value);
          continue;
        }
        returnedArguments[index] = argument.getArgNumber();
        dropped.set(index);
      }
      if (returnedArguments.empty())
        continue;
      if (failed(func.eraseResults(dropped)))
        return signalPassFailure();
      ret.getOperandsMutable().assign(kept);
      for (func::CallOp call : calls.lookup(func.getSymNameAttr())) {
        OpBuilder builder(call);
        auto newCall = func::CallOp::create(builder, call.getLoc(), func,
                                            call.getOperands());
        unsigned next = 0;
        SmallVector<Value> replacements;
        for (auto [index, result] : llvm::enumerate(call.getResults())) {
          auto it = returnedArguments.find(index);
          if (it == returnedArguments.end()) {
            replacements.push_back(newCall.getResult(next++));
            continue;
          }
          Value argument = call.getOperand(it->second);
          if (argument.getType() != result.getType())
            argument = memref::CastOp::create(builder, call.getLoc(),
                                              result.getType(), argument);
          replacements.push_back(argument);
        }
        call.replaceAllUsesWith(replacements);
        call.erase();
      }
    }
  }
};

} // namespace
