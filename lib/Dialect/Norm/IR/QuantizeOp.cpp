//===- QuantizeOp.cpp - norm.quantize ---------------------------*- C++ -*-===//
//
// Verifier, shape reification and helpers of norm.quantize: the FP8/int8
// forms of DESIGN 2a and the block-scaled forms of 2d.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::norm;
using mlir::norm::detail::formatShape;

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

double QuantizeOp::getQMax() {
  Type type = getQuantizedElementType();
  if (isa<Float8E4M3FNType>(type))
    return 448.0;
  return isa<Float4E2M1FNType>(type) ? 6.0 : 127.0;
}

float QuantizeOp::getMinScaleValue() {
  if (std::optional<APFloat> minScale = getMinScale())
    return minScale->convertToFloat();
  return static_cast<float>(1.0 / (getQMax() * 512.0));
}

int64_t QuantizeOp::getStaticGroupSize() {
  if (int64_t groupSize = getGroupSize())
    return groupSize;
  return getInputType().getShape().back();
}

/// The operand and attributes only the block-scaled forms take are absent
/// or at their defaults.
static LogicalResult verifyNoBlockScaleAttrs(QuantizeOp op) {
  if (op.getGlobalScale())
    return op.emitOpError("operand 'global_scale' needs the NVFP4 form "
                          "(f4E2M1FN with f8E4M3FN scales)");
  if (op.getScaleRounding() != ScaleRounding::floor)
    return op.emitOpError("attribute 'scale_rounding' needs f8E8M0FNU "
                          "scales");
  if (op.getScaleLayout() != ScaleLayout::row_major)
    return op.emitOpError("attribute 'scale_layout' needs block scales "
                          "(f8E8M0FNU or f8E4M3FN)");
  return success();
}

/// The block-scaled forms of DESIGN 2d: the (q, scales) element types pick
/// the form, which fixes the group size; the scales are row-major (the
/// input shape with the last dim N / G) or the flat swizzled_128x4 tiles.
static LogicalResult verifyBlockScaled(QuantizeOp op) {
  Type qType = op.getQuantizedElementType();
  bool fp4 = isa<Float4E2M1FNType>(qType);
  bool e8m0 = op.isPowerOfTwoScaled();
  StringRef scalesName = e8m0 ? "f8E8M0FNU" : "f8E4M3FN";
  if (!fp4 && !isa<Float8E4M3FNType>(qType))
    return op.emitOpError("scales of ")
           << scalesName << " need 'q' of f8E4M3FN or f4E2M1FN, got "
           << op.getQ().getType();
  if (!e8m0 && !fp4)
    return op.emitOpError("scales of f8E4M3FN (NVFP4) need 'q' of "
                          "f4E2M1FN, got ")
           << op.getQ().getType();
  if (!op.getScaleUb().isInfinity())
    return op.emitOpError("attribute 'scale_ub' does not apply to block "
                          "scales");
  if (op.getMinScale())
    return op.emitOpError("attribute 'min_scale' does not apply to block "
                          "scales");
  if (e8m0 && op.getGlobalScale())
    return op.emitOpError("operand 'global_scale' needs the NVFP4 form "
                          "(f4E2M1FN with f8E4M3FN scales)");
  if (!e8m0 && !op.getGlobalScale())
    return op.emitOpError("the NVFP4 form (f4E2M1FN with f8E4M3FN scales) "
                          "needs a 'global_scale' operand");
  if (!e8m0 && op.getScaleRounding() != ScaleRounding::floor)
    return op.emitOpError("attribute 'scale_rounding' needs f8E8M0FNU "
                          "scales");

  // The group size of the form.
  int64_t groupSize = op.getGroupSize();
  if (!e8m0) {
    if (groupSize != 16)
      return op.emitOpError("the NVFP4 form needs 'group_size' = 16, got ")
             << groupSize;
  } else if (fp4) {
    if (groupSize != 32)
      return op.emitOpError("the MXFP4 form (f4E2M1FN with f8E8M0FNU "
                            "scales) needs 'group_size' = 32, got ")
             << groupSize;
  } else if (groupSize != 32 && groupSize != 128) {
    return op.emitOpError("f8E4M3FN with f8E8M0FNU scales needs "
                          "'group_size' = 32 (MXFP8) or 128 (1x128), got ")
           << groupSize;
  }
  RankedTensorType inputType = op.getInputType();
  int64_t rowSize = inputType.getShape().back();
  if (ShapedType::isDynamic(rowSize))
    return op.emitOpError("block scales need a static last dim of 'input', "
                          "got ")
           << inputType;
  if (rowSize % groupSize != 0)
    return op.emitOpError("attribute 'group_size' = ")
           << groupSize << " must divide the last dim " << rowSize
           << " of 'input'";
  int64_t numGroups = rowSize / groupSize;

  RankedTensorType scalesType = op.getScales().getType();
  if (op.getScaleLayout() == ScaleLayout::row_major) {
    SmallVector<int64_t> expected(inputType.getShape());
    expected.back() = numGroups;
    if (scalesType.getShape() != ArrayRef<int64_t>(expected))
      return op.emitOpError("result 'scales' must be a tensor of ")
             << scalesName << " of shape " << formatShape(expected) << ", got "
             << scalesType;
    return success();
  }
  // swizzled_128x4: one flat dim, static when the leading dims are.
  int64_t expected = ShapedType::kDynamic;
  ArrayRef<int64_t> leading = inputType.getShape().drop_back();
  if (llvm::none_of(leading, ShapedType::isDynamic)) {
    int64_t numRows = 1;
    for (int64_t size : leading)
      numRows *= size;
    expected = getSwizzled128x4Size(numRows, numGroups);
  }
  if (scalesType.getShape() != ArrayRef<int64_t>{expected})
    return op.emitOpError("result 'scales' in the swizzled_128x4 layout must "
                          "be a tensor of ")
           << scalesName << " of shape " << formatShape({expected})
           << " (roundup(rows, 128) * roundup(groups, 4)), got " << scalesType;
  return success();
}

/// The element types of `input`, `q`, `scale` and `scales` and the scalar
/// shape of `scale` are ODS constraints; this checks the shapes against
/// `input`, the attributes and the static/dynamic form.
LogicalResult QuantizeOp::verify() {
  RankedTensorType inputType = getInputType();
  RankedTensorType qType = getQ().getType();
  if (qType.getShape() != inputType.getShape())
    return emitOpError("result 'q' shape ")
           << formatShape(qType.getShape()) << " must equal the shape "
           << formatShape(inputType.getShape()) << " of 'input'";

  int64_t groupSize = getGroupSize();
  if (groupSize < 0)
    return emitOpError("attribute 'group_size' must be >= 0, got ")
           << groupSize;
  APFloat scaleUb = getScaleUb();
  if (scaleUb.isNaN() || scaleUb.isNegative() || scaleUb.isZero())
    return emitOpError("attribute 'scale_ub' must be > 0, got ")
           << scaleUb.convertToDouble();
  if (std::optional<APFloat> minScale = getMinScale())
    if (!minScale->isFiniteNonZero() || minScale->isNegative())
      return emitOpError("attribute 'min_scale' must be finite and > 0, got ")
             << minScale->convertToDouble();

  bool fp4 = isa<Float4E2M1FNType>(getQuantizedElementType());
  if (getScale()) {
    // Static form: one given scale, one result.
    if (getScales())
      return emitOpError("with a 'scale' operand has one result, got 2");
    if (fp4)
      return emitOpError("result 'q' of f4E2M1FN needs the block-scaled "
                         "dynamic form (no 'scale' operand)");
    if (getGlobalScale())
      return emitOpError("takes 'scale' or 'global_scale', not both");
    if (groupSize != 0)
      return emitOpError("attribute 'group_size' needs the dynamic form (no "
                         "'scale' operand)");
    if (!scaleUb.isInfinity())
      return emitOpError("attribute 'scale_ub' needs the dynamic form (no "
                         "'scale' operand)");
    if (getMinScale())
      return emitOpError("attribute 'min_scale' needs the dynamic form (no "
                         "'scale' operand)");
    if (failed(verifyNoBlockScaleAttrs(*this)))
      return failure();
    return success();
  }

  // Dynamic form: the scales are the second result.
  if (!getScales())
    return emitOpError("without a 'scale' operand expects a second result "
                       "'scales'");
  if (isBlockScaled())
    return verifyBlockScaled(*this);
  if (fp4)
    return emitOpError("result 'q' of f4E2M1FN needs block scales "
                       "(f8E8M0FNU or f8E4M3FN), got ")
           << getScales().getType();
  if (failed(verifyNoBlockScaleAttrs(*this)))
    return failure();
  int64_t rowSize = inputType.getShape().back();
  int64_t numGroups = 1;
  if (groupSize != 0) {
    if (ShapedType::isDynamic(rowSize))
      return emitOpError("attribute 'group_size' needs a static last dim of "
                         "'input', got ")
             << inputType;
    if (rowSize % groupSize != 0)
      return emitOpError("attribute 'group_size' = ")
             << groupSize << " must divide the last dim " << rowSize
             << " of 'input'";
    numGroups = rowSize / groupSize;
  }
  SmallVector<int64_t> expected(inputType.getShape());
  expected.back() = numGroups;
  if (getScales().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result 'scales' must be a tensor of f32 of shape ")
           << formatShape(expected) << ", got " << getScales().getType();
  return success();
}

LogicalResult QuantizeOp::reifyResultShapes(
    OpBuilder &builder, ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, getLoc(), getInput());
  reifiedReturnShapes.push_back(sizes);
  if (getScales() && getScaleLayout() == ScaleLayout::swizzled_128x4) {
    // roundup(M, 128) * roundup(N / G, 4), M the product of the leading
    // dims.
    RankedTensorType scalesType = getScales().getType();
    if (scalesType.hasStaticShape()) {
      reifiedReturnShapes.push_back(
          {builder.getIndexAttr(scalesType.getDimSize(0))});
      return success();
    }
    int64_t numGroups = getInputType().getShape().back() / getGroupSize();
    Location loc = getLoc();
    Value rows = arith::ConstantIndexOp::create(builder, loc, 1);
    for (OpFoldResult size : ArrayRef(sizes).drop_back())
      rows = arith::MulIOp::create(
          builder, loc, rows,
          getValueOrCreateConstantIndexOp(builder, loc, size));
    Value c127 = arith::ConstantIndexOp::create(builder, loc, 127);
    Value c128 = arith::ConstantIndexOp::create(builder, loc, 128);
    Value padded = arith::MulIOp::create(
        builder, loc,
        arith::DivUIOp::create(builder, loc,
                               arith::AddIOp::create(builder, loc, rows, c127),
                               c128),
        c128);
    Value size =
        arith::MulIOp::create(builder, loc, padded,
                              arith::ConstantIndexOp::create(
                                  builder, loc, llvm::alignTo(numGroups, 4)));
    reifiedReturnShapes.push_back({getAsOpFoldResult(size)});
    return success();
  }
  if (getScales()) {
    SmallVector<OpFoldResult> scaleSizes(sizes);
    int64_t groupSize = getGroupSize();
    scaleSizes.back() = builder.getIndexAttr(
        groupSize == 0 ? 1 : getInputType().getShape().back() / groupSize);
    reifiedReturnShapes.push_back(scaleSizes);
  }
  return success();
}
