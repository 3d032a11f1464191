//===- HostCopies.cpp - Host buffers of kernel launches to the device -----===//
//
// norm-gpu-host-copies: the host/device transfer stage of
// norm-gpu-pipeline{memory=copy}. After bufferization, every run of
// gpu.launch_func ops of a block gets one device copy of each host memref it
// takes, copied in before the first launch that reads it, copied back after
// the run when a launch writes it, and freed after the run.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMGPUHOSTCOPIESPASS
#include "norm/Conversion/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

namespace {

/// What a kernel does with one of its memref arguments.
struct Access {
  bool read = false;
  bool write = false;
};

/// One host memref taken by the launches of a run.
struct HostOperand {
  Value host;
  /// The buffer `host` is a view of.
  Value root;
  /// The first launch of the run that takes it, and whether the kernels
  /// read or write it.
  gpu::LaunchFuncOp first;
  bool readFirst = false;
  bool written = false;
};

} // namespace

/// Whether `value` is in device memory: a memref with a memory space, or a
/// view of a gpu.alloc.
static bool isDeviceMemRef(Value value) {
  auto type = dyn_cast<BaseMemRefType>(value.getType());
  if (!type || type.getMemorySpace())
    return true;
  return memref::skipViewLikeOps(cast<MemrefValue>(value))
             .getDefiningOp<gpu::AllocOp>() != nullptr;
}

/// What the ops of `kernel` do with `arg` and its views: read and write
/// from their memory effects on it; an op without declared effects (or
/// with effects on no particular value) reads and writes it.
static Access getArgumentAccess(BlockArgument arg) {
  Access access;
  SmallVector<Value> worklist{arg};
  DenseSet<Value> visited{arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects) {
        access.read = access.write = true;
        return access;
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &instance : instances) {
        if (instance.getValue() && instance.getValue() != value)
          continue;
        access.read |= isa<MemoryEffects::Read>(instance.getEffect());
        access.write |= isa<MemoryEffects::Write>(instance.getEffect());
      }
      // Views of the argument.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()) &&
            visited.insert(result).second)
          worklist.push_back(result);
    }
  }
  return access;
}

/// What the kernel `launch` starts does with its operand #`index`: a kernel
/// not found as a gpu.func (e.g. already serialized) reads and writes it.
static Access getOperandAccess(gpu::LaunchFuncOp launch, unsigned index,
                               SymbolTableCollection &symbols) {
  auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  if (!kernel || kernel.isExternal() || index >= kernel.getNumArguments())
    return Access{true, true};
  return getArgumentAccess(kernel.getArgument(index));
}

/// Whether `op` may sit inside a run of launches: it touches no memory but
/// device buffers it allocates or frees.
static bool continuesRun(Operation *op) {
  return isa<gpu::AllocOp, gpu::DeallocOp>(op) || isMemoryEffectFree(op);
}

namespace {

/// Places the host operands of one run of launches on the device.
class RunCopier {
public:
  explicit RunCopier(SymbolTableCollection &symbols) : symbols(symbols) {}

  /// Takes `launch` into the run; false when one of its host operands is a
  /// second view of a buffer the run already takes and one of the two is
  /// written (the run must end before `launch`).
  bool add(gpu::LaunchFuncOp launch);
  void clear() {
    launches.clear();
    operands.clear();
  }
  /// Emits the copies of the run; fails (with a diagnostic) on a host
  /// operand without the identity layout.
  LogicalResult emit();

private:
  SymbolTableCollection &symbols;
  SmallVector<gpu::LaunchFuncOp> launches;
  SmallVector<HostOperand> operands;
};

} // namespace

bool RunCopier::add(gpu::LaunchFuncOp launch) {
  bool normKernel = isNormKernelName(launch.getKernelName().getValue());
  // The launch's host operands, each once, with what its kernel does with
  // them.
  SmallVector<HostOperand> taken;
  for (auto [index, operand] : llvm::enumerate(launch.getKernelOperands())) {
    if (isDeviceMemRef(operand))
      continue;
    Access access = getOperandAccess(launch, index, symbols);
    // A kernel of norm-lower-gpu writes whole any output it does not read;
    // another kernel may write part of it.
    if (!normKernel)
      access.read = true;
    auto *entry = llvm::find_if(
        taken, [&](const HostOperand &other) { return other.host == operand; });
    if (entry != taken.end()) {
      entry->readFirst |= access.read;
      entry->written |= access.write;
      continue;
    }
    Value root = memref::skipViewLikeOps(cast<MemrefValue>(operand));
    taken.push_back({operand, root, launch, access.read, access.write});
  }
  // Two views of one buffer, one of them written, cannot share the run.
  for (const HostOperand &entry : taken)
    for (const HostOperand &other : llvm::concat<const HostOperand>(
             ArrayRef<HostOperand>(taken), ArrayRef<HostOperand>(operands)))
      if (other.root == entry.root && other.host != entry.host &&
          (other.written || entry.written))
        return false;
  for (HostOperand &entry : taken) {
    auto *known = llvm::find_if(operands, [&](const HostOperand &other) {
      return other.host == entry.host;
    });
    if (known != operands.end())
      known->written |= entry.written;
    else
      operands.push_back(entry);
  }
  launches.push_back(launch);
  return true;
}

LogicalResult RunCopier::emit() {
  if (launches.empty())
    return success();
  OpBuilder b(launches.front());
  Location loc = launches.front().getLoc();
  SmallVector<Value> deviceBuffers;
  for (HostOperand &entry : operands) {
    auto type = cast<MemRefType>(entry.host.getType());
    if (!type.getLayout().isIdentity())
      return entry.first.emitError("norm-gpu-host-copies: kernel operand of "
                                   "type ")
             << type
             << " is a host memref without the identity layout; gpu.memcpy "
                "copies contiguous memrefs only";
    b.setInsertionPoint(entry.first);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(memref::DimOp::create(b, loc, entry.host, d));
    auto alloc = gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                                      ValueRange{}, sizes, ValueRange{});
    Value device = alloc.getMemref();
    if (entry.readFirst)
      gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, device,
                            entry.host);
    // The launches before the first one do not take it.
    for (gpu::LaunchFuncOp launch : launches) {
      for (OpOperand &use : launch.getKernelOperandsMutable())
        if (use.get() == entry.host)
          use.set(device);
    }
    deviceBuffers.push_back(device);
  }
  b.setInsertionPointAfter(launches.back());
  for (auto [entry, device] : llvm::zip_equal(operands, deviceBuffers))
    if (entry.written)
      gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                            entry.host, device);
  for (Value device : deviceBuffers)
    gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{}, device);
  return success();
}

namespace {
struct NormGPUHostCopiesPass
    : public norm::impl::NormGPUHostCopiesPassBase<NormGPUHostCopiesPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    // The blocks holding launches, each once, in program order.
    SmallVector<Block *> blocks;
    DenseSet<Block *> seen;
    getOperation()->walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty()) {
        launch.emitError("norm-gpu-host-copies: runs before gpu-async-region; "
                         "asynchronous launches are not supported");
        return signalPassFailure();
      }
      if (seen.insert(launch->getBlock()).second)
        blocks.push_back(launch->getBlock());
    });
    for (Block *block : blocks) {
      SmallVector<gpu::LaunchFuncOp> launches;
      for (auto launch : block->getOps<gpu::LaunchFuncOp>())
        launches.push_back(launch);
      RunCopier run(symbols);
      Operation *previous = nullptr;
      for (gpu::LaunchFuncOp launch : launches) {
        // The run goes on while only device allocations and side-effect-free
        // ops separate the launches.
        bool contiguous = previous != nullptr;
        for (Operation *op = previous ? previous->getNextNode() : nullptr;
             contiguous && op && op != launch.getOperation();
             op = op->getNextNode())
          contiguous = continuesRun(op);
        if (!contiguous || !run.add(launch)) {
          if (failed(run.emit()))
            return signalPassFailure();
          run.clear();
          if (!run.add(launch)) {
            launch.emitError("norm-gpu-host-copies: two operands of the "
                             "launch are views of one host buffer and one "
                             "of them is written; separate device copies "
                             "would not keep their aliasing");
            return signalPassFailure();
          }
        }
        previous = launch;
      }
      if (failed(run.emit()))
        return signalPassFailure();
    }
  }
};
} // namespace
