//===- HostBuffers.cpp - Host side of the GPU lowerings -------*- C++ -*-===//
//
// The host code every GPU lowering (norm ops, norm.quantize, gradient ops)
// builds around its kernels: the kernels' input buffers, the device buffers
// of memory=device and their copies into destinations, direct writes into a
// result's destination, the result buffers handed back as tensors, and the
// gpu.launch op (KernelBuilder.h declares them). With memory=copy, the
// buffers are the host's; norm-gpu-host-copies (HostCopies.cpp) places them
// on the device after bufferization.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/PatternDriver.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

Value gpu_lowering::flattenBuffer(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value flat = buffer;
  if (type.getRank() == 0) {
    flat = memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1}, type.getElementType()), buffer,
        ArrayRef<ReassociationIndices>{},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  } else if (type.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    // The collapsed size is dynamic exactly when a dim is: upstream's type
    // inference makes it a static 0 when a static dim is 0, which the
    // verifier then rejects for a group that also holds a dynamic dim.
    int64_t size = 1;
    for (int64_t dim : type.getShape())
      size = ShapedType::isDynamic(dim) || ShapedType::isDynamic(size)
                 ? ShapedType::kDynamic
                 : size * dim;
    auto collapsedType = memref::CollapseShapeOp::computeCollapsedType(
        type, ArrayRef<ReassociationIndices>{all});
    if (collapsedType.getDimSize(0) != size)
      collapsedType = MemRefType::get({size}, type.getElementType(),
                                      collapsedType.getLayout());
    flat = memref::CollapseShapeOp::create(b, loc, collapsedType, buffer,
                                           ArrayRef<ReassociationIndices>{all});
  }
  auto dynamicType =
      MemRefType::get({ShapedType::kDynamic}, type.getElementType());
  if (flat.getType() != dynamicType)
    flat = memref::CastOp::create(b, loc, dynamicType, flat);
  return flat;
}

Value gpu_lowering::allocateDevice(OpBuilder &b, Location loc, MemRefType type,
                                   ValueRange dynamicSizes) {
  auto alloc = gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(),
                                    ValueRange{}, dynamicSizes, ValueRange{});
  alloc->setAttr(bufferization::BufferizationDialect::kManualDeallocation,
                 b.getUnitAttr());
  return alloc.getMemref();
}

Value gpu_lowering::getDirectDestination(Value result, Operation *kernelAt,
                                         ArrayRef<Operation *> lowered,
                                         Operation *&materialize) {
  materialize = nullptr;
  if (!result.hasOneUse())
    return Value();
  auto op = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *result.getUsers().begin());
  if (!op || op.getSource() != result)
    return Value();
  MemRefType type = getBufferType(result);
  auto destType = dyn_cast<MemRefType>(op.getDest().getType());
  if (!destType || !destType.getLayout().isIdentity() ||
      destType.getMemorySpace() != nullptr ||
      destType.getElementType() != type.getElementType() ||
      destType.getRank() != type.getRank())
    return Value();
  // The kernel writes the memref where it runs: the memref must exist
  // there, the materialization must follow in the same block (not
  // conditionally), and nothing in between may touch memory but the lowered
  // ops and the materializations of their results.
  if (op->getBlock() != kernelAt->getBlock() ||
      !kernelAt->isBeforeInBlock(op) ||
      !DominanceInfo(kernelAt->getParentOp())
           .properlyDominates(op.getDest(), kernelAt))
    return Value();
  auto isLowered = [&](Operation *candidate) {
    return candidate && llvm::is_contained(lowered, candidate);
  };
  for (Operation *between = kernelAt->getNextNode(); between != op;
       between = between->getNextNode()) {
    auto other = dyn_cast<bufferization::MaterializeInDestinationOp>(between);
    if (!isLowered(between) && !isMemoryEffectFree(between) &&
        !(other && isLowered(other.getSource().getDefiningOp())))
      return Value();
  }
  materialize = op;
  return op.getDest();
}

bool gpu_lowering::copyMaterializationsFromDevice(RewriterBase &b, Value result,
                                                  Value buffer) {
  SmallVector<bufferization::MaterializeInDestinationOp> copies;
  bool onlyCopies = !result.use_empty();
  for (Operation *user : result.getUsers()) {
    auto op = dyn_cast<bufferization::MaterializeInDestinationOp>(user);
    auto destType =
        op ? dyn_cast<MemRefType>(op.getDest().getType()) : MemRefType();
    // gpu.memcpy copies contiguous memrefs (the pass rejects others).
    if (op && op.getSource() == result && destType &&
        destType.getLayout().isIdentity())
      copies.push_back(op);
    else
      onlyCopies = false;
  }
  if (copies.empty())
    return false;
  // The buffer is freed after the last op of its block that holds a copy
  // (copies may sit in nested regions, e.g. an scf.if after the kernel).
  Block *home = buffer.getParentBlock();
  Operation *last = nullptr;
  bool freeable = true;
  OpBuilder::InsertionGuard guard(b);
  for (bufferization::MaterializeInDestinationOp op : copies) {
    b.setInsertionPoint(op);
    gpu::MemcpyOp::create(b, op.getLoc(), /*asyncToken=*/Type(), ValueRange{},
                          op.getDest(), buffer);
    Operation *holder = home->findAncestorOpInBlock(*op);
    if (holder && (!last || last->isBeforeInBlock(holder)))
      last = holder;
    freeable &= holder != nullptr;
  }
  if (onlyCopies && freeable) {
    b.setInsertionPointAfter(last);
    freeDevice(b, last->getLoc(), buffer);
  }
  for (bufferization::MaterializeInDestinationOp op : copies)
    b.eraseOp(op);
  return onlyCopies;
}

void gpu_lowering::freeDevice(OpBuilder &b, Location loc, Value buffer) {
  auto dealloc = gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(),
                                        ValueRange{}, buffer);
  dealloc->setAttr(bufferization::BufferizationDialect::kManualDeallocation,
                   b.getUnitAttr());
}

MemRefType gpu_lowering::getBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

Value gpu_lowering::buildKernelInput(OpBuilder &b, Location loc, Value tensor) {
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, getBufferType(tensor), tensor, /*read_only=*/true);
  return flattenBuffer(b, loc, buffer);
}

gpu::LaunchOp gpu_lowering::createKernelLaunch(OpBuilder &b, Location loc,
                                               Operation *op, Value grid,
                                               Value threadsX, Value threadsY,
                                               TypeRange workgroupTypes) {
  // Named so that gpu-kernel-outlining gives the kernel (and its module)
  // the name norm-annotate-kernel-args recognizes.
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto kernelSymbol =
      FlatSymbolRefAttr::get(b.getContext(), getNormKernelName(op));
  return gpu::LaunchOp::create(
      b, loc, grid, one, one, threadsX, threadsY, one,
      /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
      ValueRange{}, workgroupTypes, /*privateAttributions=*/TypeRange{},
      /*clusterSizeX=*/Value(), /*clusterSizeY=*/Value(),
      /*clusterSizeZ=*/Value(), /*module=*/kernelSymbol,
      /*function=*/kernelSymbol);
}

Value ResultBuffers::add(Value result, ArrayRef<OpFoldResult> sizes) {
  MemRefType type = getBufferType(result);
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  Value buffer;
  if (deviceMemory) {
    // Straight into the memref the result is materialized into, else a
    // device buffer.
    Operation *materialize = nullptr;
    buffer = getDirectDestination(result, op, op, materialize);
    if (buffer)
      absorbed.push_back(materialize);
    else
      buffer = allocateDevice(b, loc, type, dynamicSizes);
  } else {
    buffer = memref::AllocOp::create(b, loc, type, dynamicSizes);
  }
  results.push_back(result);
  shaped.push_back(buffer);
  return flattenBuffer(b, loc, buffer);
}

SmallVector<Value> ResultBuffers::finish(ArrayRef<Value> temporaries) {
  for (Value temporary : temporaries)
    freeDevice(b, loc, temporary);
  SmallVector<Value> replacements;
  for (auto [result, buffer] : llvm::zip_equal(results, shaped)) {
    bool absorbedResult = llvm::any_of(absorbed, [&](Operation *materialize) {
      return materialize->getOperand(0) == result;
    });
    if (absorbedResult) {
      // Written in place; the result has no other use.
      replacements.push_back(tensor::EmptyOp::create(
          b, loc, memref::getMixedSizes(b, loc, buffer),
          cast<RankedTensorType>(result.getType()).getElementType()));
      continue;
    }
    // memory=device: a result nothing uses is freed after the kernels, one
    // only materialized into memrefs after copying it there; others belong
    // to the caller.
    if (deviceMemory && !copyMaterializationsFromDevice(b, result, buffer) &&
        result.use_empty())
      freeDevice(b, loc, buffer);
    replacements.push_back(bufferization::ToTensorOp::create(
        b, loc, result.getType(), buffer, /*restrict=*/true,
        /*writable=*/true));
  }
  for (Operation *materialize : absorbed)
    b.eraseOp(materialize);
  return replacements;
}
