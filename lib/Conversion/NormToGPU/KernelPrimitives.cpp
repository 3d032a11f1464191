//===- KernelPrimitives.cpp - What every GPU kernel body shares -*- C++ -*-===//
//
// The pieces of kernel bodies the norm, quantize and gradient kernels share
// (declared in KernelBuilder.h): the vector length and alignment of row
// accesses, lane reductions with warp shuffles, reductions across the warps
// of a block through workgroup memory, and the conversion of a vector to a
// quantized type.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "norm/Dialect/Norm/Utils/NormArithmetic.h"
#include "norm/Dialect/Norm/Utils/Quantization.h"
#include "norm/Dialect/Norm/Utils/RowView.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::gpu_lowering;

int64_t gpu_lowering::getRowVectorLength(int64_t staticRowSize,
                                         Type elementType) {
  int64_t vectorLength = std::max<int64_t>(
      1, kAccessBytes * 8 / elementType.getIntOrFloatBitWidth());
  if (ShapedType::isDynamic(staticRowSize))
    return vectorLength;
  while (staticRowSize % vectorLength != 0)
    vectorLength /= 2;
  return vectorLength;
}

llvm::MaybeAlign gpu_lowering::getAccessAlignment(Type elementType,
                                                  int64_t vectorLength) {
  int64_t bytes = vectorLength * elementType.getIntOrFloatBitWidth() / 8;
  return llvm::MaybeAlign(
      std::min<int64_t>(std::max<int64_t>(bytes, 1), kAccessBytes));
}

Value gpu_lowering::buildLanesReduce(OpBuilder &b, Location loc, Value value,
                                     int64_t lanes, CombineFn combine) {
  for (int32_t offset = static_cast<int32_t>(lanes) / 2; offset >= 1;
       offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, value, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = combine(b, loc, value, other);
  }
  return value;
}

Value gpu_lowering::buildLanesMax(OpBuilder &b, Location loc, Value value,
                                  int64_t lanes) {
  return buildLanesReduce(
      b, loc, value, lanes,
      [](OpBuilder &cb, Location cl, Value lhs, Value rhs) {
        return arith::MaximumFOp::create(cb, cl, lhs, rhs).getResult();
      });
}

SmallVector<Value>
gpu_lowering::buildWarpsReduce(OpBuilder &b, Location loc, ValueRange values,
                               ValueRange scratch, Value thread,
                               int64_t numWarps, CombineFn combine) {
  Value warpSize = arith::ConstantIndexOp::create(b, loc, kWarpSize);
  Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
  Value warpLane = arith::RemUIOp::create(b, loc, thread, warpSize);
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpLane,
                            arith::ConstantIndexOp::create(b, loc, 0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    for (auto [value, buffer] : llvm::zip_equal(values, scratch))
      memref::StoreOp::create(b, loc, value, buffer, ValueRange{warp});
  }
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> totals;
  for (Value buffer : scratch) {
    Value total;
    for (int64_t w = 0; w < numWarps; ++w) {
      Value partial = memref::LoadOp::create(
          b, loc, buffer,
          ValueRange{arith::ConstantIndexOp::create(b, loc, w)});
      total = total ? combine(b, loc, total, partial) : partial;
    }
    totals.push_back(total);
  }
  return totals;
}

MemRefType gpu_lowering::getWorkgroupBufferType(MLIRContext *context,
                                                int64_t size,
                                                Type elementType) {
  return MemRefType::get(
      {size}, elementType, AffineMap(),
      gpu::AddressSpaceAttr::get(context,
                                 gpu::GPUDialect::getWorkgroupAddressSpace()));
}

Value gpu_lowering::buildQuantizeVector(OpBuilder &b, Location loc, Value y,
                                        Value inverse, Type quantizedType,
                                        bool useCvt) {
  if (!useCvt || !isa<Float8E4M3FNType>(quantizedType))
    return buildQuantize(b, loc, y, inverse, quantizedType);
  // cvt.rn.satfinite.e4m3x2.f32: round to nearest even, saturate to +-448,
  // NaN stays NaN, two values per instruction (the first operand lands in
  // the high byte, so element 0 comes from the second).
  Value v = arith::MulFOp::create(b, loc, buildWidenedQuantizeInput(b, loc, y),
                                  inverse);
  int64_t length = cast<VectorType>(v.getType()).getNumElements();
  auto pairType = VectorType::get({2}, b.getI8Type());
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < length; i += 2) {
    Value first = vector::ExtractOp::create(b, loc, v, i);
    Value second = i + 1 < length
                       ? Value(vector::ExtractOp::create(b, loc, v, i + 1))
                       : first;
    pairs.push_back(NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, pairType, second, first, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false, quantizedType));
  }
  auto bytesType = VectorType::get({length}, b.getI8Type());
  Value bytes;
  if (length == 1) {
    bytes = vector::ExtractStridedSliceOp::create(
        b, loc, pairs.front(), ArrayRef<int64_t>{0}, ArrayRef<int64_t>{1},
        ArrayRef<int64_t>{1});
  } else {
    bytes = arith::ConstantOp::create(
        b, loc, bytesType,
        DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0)));
    for (auto [k, pair] : llvm::enumerate(pairs))
      bytes = vector::InsertStridedSliceOp::create(
          b, loc, pair, bytes, ArrayRef<int64_t>{int64_t(2 * k)},
          ArrayRef<int64_t>{1});
  }
  return arith::BitcastOp::create(
      b, loc, VectorType::get({length}, quantizedType), bytes);
}

std::pair<Value, Value> gpu_lowering::buildBlockScale(OpBuilder &b,
                                                      Location loc,
                                                      QuantizeOp op, Value amax,
                                                      Value globalScale) {
  Type scalesType = op.getScalesElementType();
  if (op.isPowerOfTwoScaled()) {
    Value code = buildPowerOfTwoScaleCode(b, loc, op, amax);
    return {buildBlockScaleValue(b, loc, code, scalesType),
            buildPowerOfTwoMultiplier(b, loc, code)};
  }
  auto [sf, multiplier] = buildNVFP4Scale(b, loc, globalScale, amax);
  return {buildBlockScaleValue(b, loc, sf, scalesType), multiplier};
}

Value gpu_lowering::buildBlockQuantizeVector(OpBuilder &b, Location loc,
                                             Value y, Value multiplier,
                                             Type quantizedType, bool useCvt,
                                             bool useFP4Cvt) {
  // The FP8 element rule of the block-scaled forms is the one of the FP8
  // per-group form with `multiplier` for the inverse scale.
  if (isa<Float8E4M3FNType>(quantizedType))
    return buildQuantizeVector(b, loc, y, multiplier, quantizedType, useCvt);
  int64_t length = cast<VectorType>(y.getType()).getNumElements();
  if (!useFP4Cvt || length % 2 != 0)
    return buildBlockQuantize(b, loc, y, multiplier, quantizedType);
  // cvt.rn.satfinite.e2m1x2.f32: round to nearest even, saturate to +-6,
  // two values per byte, the first operand in the high nibble (so element
  // 2k, in the low nibble, is the second). It has no NaN code to keep:
  // a NaN element means a NaN in the group, whose multiplier is then NaN
  // (finite y times a finite multiplier is never NaN), and all its codes
  // are 0x0 (docs/Numerics.md).
  Value v = arith::MulFOp::create(b, loc, buildWidenedQuantizeInput(b, loc, y),
                                  multiplier);
  auto bytesType = VectorType::get({length / 2}, b.getI8Type());
  Value bytes = arith::ConstantOp::create(
      b, loc, bytesType,
      DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0)));
  for (int64_t i = 0; i < length; i += 2) {
    Value even = vector::ExtractOp::create(b, loc, v, i);
    Value odd = vector::ExtractOp::create(b, loc, v, i + 1);
    Value pair = NVVM::ConvertF32x2ToF4x2Op::create(
        b, loc, b.getI8Type(), odd, even, /*relu=*/false, quantizedType);
    bytes = vector::InsertOp::create(b, loc, pair, bytes, i / 2);
  }
  Value groupScale = vector::ExtractOp::create(b, loc, multiplier, 0);
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                      groupScale, groupScale);
  bytes = arith::SelectOp::create(
      b, loc, isNaN,
      arith::ConstantOp::create(
          b, loc, bytesType,
          DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0))),
      bytes);
  Value codes = vector::BitCastOp::create(
      b, loc, VectorType::get({length}, b.getIntegerType(4)), bytes);
  return arith::BitcastOp::create(
      b, loc, VectorType::get({length}, quantizedType), codes);
}

Value gpu_lowering::buildSwizzledScaleOffset(OpBuilder &b, Location loc,
                                             Value row, Value group,
                                             Value paddedGroups) {
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto mul = [&](Value lhs, Value rhs) {
    return arith::MulIOp::create(b, loc, lhs, rhs).getResult();
  };
  auto add = [&](Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs).getResult();
  };
  auto div = [&](Value lhs, int64_t rhs) {
    return arith::DivUIOp::create(b, loc, lhs, index(rhs)).getResult();
  };
  auto rem = [&](Value lhs, int64_t rhs) {
    return arith::RemUIOp::create(b, loc, lhs, index(rhs)).getResult();
  };
  // (row / 128) * (K4 * 512) + (group / 4) * 512 + (row % 32) * 16 +
  // ((row % 128) / 32) * 4 + group % 4, with K4 * 512 = paddedGroups * 128.
  Value tile = mul(div(row, 128), mul(paddedGroups, index(128)));
  Value column = mul(div(group, 4), index(512));
  Value inner = add(mul(rem(row, 32), index(16)),
                    add(mul(div(rem(row, 128), 32), index(4)), rem(group, 4)));
  return add(add(tile, column), inner);
}
