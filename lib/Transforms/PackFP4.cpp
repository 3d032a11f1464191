//===- PackFP4.cpp - f4E2M1FN buffers two elements per byte ---------------===//
//
// norm-pack-fp4: rewrites the memrefs of f4E2M1FN to i8 memrefs with the
// last dim halved, element 2k in the low nibble of byte k (docs/Passes.md).
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMPACKFP4PASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;

namespace {

/// Halves `value` when it is static (failing when it is odd).
std::optional<int64_t> halveStatic(int64_t value) {
  if (ShapedType::isDynamic(value))
    return value;
  if (value % 2 != 0)
    return std::nullopt;
  return value / 2;
}

/// memref<... x N x f4E2M1FN> -> memref<... x N/2 x i8>: the last dim and
/// the offset and outer strides (in elements) halved, the last stride 1.
struct PackedTypeConverter : public TypeConverter {
  PackedTypeConverter() {
    addConversion([](Type type) { return type; });
    addConversion([](MemRefType type) -> std::optional<Type> {
      if (!isa<Float4E2M1FNType>(type.getElementType()))
        return type;
      Type i8 = IntegerType::get(type.getContext(), 8);
      if (type.getRank() == 0)
        return MemRefType::get({}, i8, type.getLayout(), type.getMemorySpace());
      SmallVector<int64_t> shape(type.getShape());
      std::optional<int64_t> last = halveStatic(shape.back());
      if (!last)
        return Type();
      shape.back() = *last;
      if (type.getLayout().isIdentity())
        return MemRefType::get(shape, i8, MemRefLayoutAttrInterface(),
                               type.getMemorySpace());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return Type();
      for (int64_t &stride : MutableArrayRef(strides).drop_back()) {
        std::optional<int64_t> half = halveStatic(stride);
        if (!half)
          return Type();
        stride = *half;
      }
      std::optional<int64_t> halfOffset = halveStatic(offset);
      if (!halfOffset)
        return Type();
      return MemRefType::get(
          shape, i8,
          StridedLayoutAttr::get(type.getContext(), *halfOffset, strides),
          type.getMemorySpace());
    });
  }
};

bool isPackedMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && isa<Float4E2M1FNType>(memref.getElementType());
}

/// `index / 2` (the byte of an element index).
Value halve(OpBuilder &b, Location loc, Value index) {
  return arith::ShRUIOp::create(b, loc, index,
                                arith::ConstantIndexOp::create(b, loc, 1));
}

OpFoldResult halve(OpBuilder &b, Location loc, OpFoldResult index) {
  if (std::optional<int64_t> value = getConstantIntValue(index))
    return b.getIndexAttr(*value / 2);
  return halve(b, loc, cast<Value>(index));
}

/// The indices of the byte holding the element at `indices`.
SmallVector<Value> byteIndices(OpBuilder &b, Location loc, ValueRange indices) {
  SmallVector<Value> result(indices);
  if (!result.empty())
    result.back() = halve(b, loc, result.back());
  return result;
}

/// The shift (0 or 4, i8) of the nibble of element `index`.
Value nibbleShift(OpBuilder &b, Location loc, Value index) {
  Value odd = arith::AndIOp::create(b, loc, index,
                                    arith::ConstantIndexOp::create(b, loc, 1));
  Value shift = arith::ShLIOp::create(
      b, loc, odd, arith::ConstantIndexOp::create(b, loc, 2));
  return arith::IndexCastOp::create(b, loc, b.getI8Type(), shift);
}

template <typename OpTy>
struct ConvertAlloc : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = this->getTypeConverter()->template convertType<MemRefType>(
        op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "odd f4E2M1FN buffer");
    SmallVector<Value> sizes(adaptor.getDynamicSizes());
    if (!sizes.empty() && op.getType().isDynamicDim(op.getType().getRank() - 1))
      sizes.back() = halve(rewriter, op.getLoc(), sizes.back());
    rewriter.replaceOpWithNewOp<OpTy>(
        op, type, sizes, adaptor.getSymbolOperands(), op.getAlignmentAttr());
    return success();
  }
};

/// A device buffer (gpu.alloc, async or not) of f4E2M1FN.
struct ConvertGPUAlloc : public OpConversionPattern<gpu::AllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::AllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = getTypeConverter()->convertType<MemRefType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "odd f4E2M1FN buffer");
    SmallVector<Value> sizes(adaptor.getDynamicSizes());
    if (!sizes.empty() && op.getType().isDynamicDim(op.getType().getRank() - 1))
      sizes.back() = halve(rewriter, op.getLoc(), sizes.back());
    Type tokenType = op.getAsyncToken() ? op.getAsyncToken().getType() : Type();
    rewriter.replaceOpWithNewOp<gpu::AllocOp>(
        op, type, tokenType, adaptor.getAsyncDependencies(), sizes,
        adaptor.getSymbolOperands(), op.getHostShared());
    return success();
  }
};

/// A kernel's signature: its arguments converted, its workgroup and private
/// attributions (block arguments after them) kept.
struct ConvertGPUFunc : public OpConversionPattern<gpu::GPUFuncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::GPUFuncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionType type = op.getFunctionType();
    TypeConverter::SignatureConversion signature(op.front().getNumArguments());
    SmallVector<Type> inputs;
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      Type converted = getTypeConverter()->convertType(input);
      if (!converted)
        return rewriter.notifyMatchFailure(op, "odd f4E2M1FN buffer");
      signature.addInputs(i, converted);
      inputs.push_back(converted);
    }
    for (unsigned i = type.getNumInputs(), e = op.front().getNumArguments();
         i < e; ++i)
      signature.addInputs(i, op.front().getArgument(i).getType());
    rewriter.applySignatureConversion(&op.front(), signature,
                                      getTypeConverter());
    rewriter.modifyOpInPlace(op, [&] {
      op.setFunctionType(
          FunctionType::get(op.getContext(), inputs, type.getResults()));
    });
    return success();
  }
};

/// Ops whose operands and results change type and nothing else.
template <typename OpTy>
struct ConvertTypesOnly : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> types;
    if (failed(this->getTypeConverter()->convertTypes(op->getResultTypes(),
                                                      types)))
      return failure();
    Operation *converted = rewriter.clone(*op);
    rewriter.modifyOpInPlace(converted, [&] {
      converted->setOperands(adaptor.getOperands());
      for (auto [result, type] : llvm::zip(converted->getResults(), types))
        result.setType(type);
    });
    rewriter.replaceOp(op, converted->getResults());
    return success();
  }
};

struct ConvertSubView : public OpConversionPattern<memref::SubViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::SubViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = getTypeConverter()->convertType<MemRefType>(op.getType());
    int64_t sourceRank = op.getSourceType().getRank();
    // The last dim must stay a contiguous run of whole bytes.
    if (!type || op.getStaticStrides().back() != 1 ||
        op.getDroppedDims().test(sourceRank - 1))
      return rewriter.notifyMatchFailure(op, "not a view of whole bytes");
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> offsets = op.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = op.getMixedSizes();
    offsets.back() = halve(rewriter, loc, offsets.back());
    sizes.back() = halve(rewriter, loc, sizes.back());
    rewriter.replaceOpWithNewOp<memref::SubViewOp>(
        op, type, adaptor.getSource(), offsets, sizes, op.getMixedStrides());
    return success();
  }
};

template <typename OpTy>
struct ConvertReshape : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = this->getTypeConverter()->template convertType<MemRefType>(
        op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "odd f4E2M1FN buffer");
    if constexpr (std::is_same_v<OpTy, memref::ExpandShapeOp>) {
      SmallVector<OpFoldResult> outputShape = op.getMixedOutputShape();
      outputShape.back() = halve(rewriter, op.getLoc(), outputShape.back());
      rewriter.replaceOpWithNewOp<memref::ExpandShapeOp>(
          op, type, adaptor.getSrc(), op.getReassociationIndices(),
          outputShape);
    } else {
      rewriter.replaceOpWithNewOp<memref::CollapseShapeOp>(
          op, type, adaptor.getSrc(), op.getReassociationIndices());
    }
    return success();
  }
};

/// The metadata of a packed buffer, given in elements again: the offset,
/// the last size and the outer strides doubled (what buffer deallocation
/// reads to find the base pointer).
struct ConvertExtractStridedMetadata
    : public OpConversionPattern<memref::ExtractStridedMetadataOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::ExtractStridedMetadataOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto packed = memref::ExtractStridedMetadataOp::create(rewriter, loc,
                                                           adaptor.getSource());
    Value two = arith::ConstantIndexOp::create(rewriter, loc, 2);
    auto twice = [&](Value value) -> Value {
      return arith::MulIOp::create(rewriter, loc, value, two);
    };
    SmallVector<Value> results{packed.getBaseBuffer(),
                               twice(packed.getOffset())};
    ValueRange sizes = packed.getSizes();
    ValueRange strides = packed.getStrides();
    for (auto [i, size] : llvm::enumerate(sizes))
      results.push_back(i + 1 == sizes.size() ? twice(size) : size);
    for (auto [i, stride] : llvm::enumerate(strides))
      results.push_back(i + 1 == strides.size() ? stride : twice(stride));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ConvertDim : public OpConversionPattern<memref::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto sourceType = cast<MemRefType>(op.getSource().getType());
    Location loc = op.getLoc();
    Value dim = memref::DimOp::create(rewriter, loc, adaptor.getSource(),
                                      adaptor.getIndex());
    std::optional<int64_t> index = op.getConstantIndex();
    if (!index)
      return rewriter.notifyMatchFailure(op, "dynamic dim index");
    if (*index == sourceType.getRank() - 1)
      dim = arith::ShLIOp::create(
          rewriter, loc, dim, arith::ConstantIndexOp::create(rewriter, loc, 1));
    rewriter.replaceOp(op, dim);
    return success();
  }
};

struct ConvertLoad : public OpConversionPattern<memref::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value byte = memref::LoadOp::create(
        rewriter, loc, adaptor.getMemref(),
        byteIndices(rewriter, loc, adaptor.getIndices()));
    if (!adaptor.getIndices().empty())
      byte = arith::ShRUIOp::create(
          rewriter, loc, byte,
          nibbleShift(rewriter, loc, adaptor.getIndices().back()));
    Value code = arith::TruncIOp::create(rewriter, loc,
                                         rewriter.getIntegerType(4), byte);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), code);
    return success();
  }
};

struct ConvertStore : public OpConversionPattern<memref::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type();
    Value code = arith::ExtUIOp::create(
        rewriter, loc, i8,
        arith::BitcastOp::create(rewriter, loc, rewriter.getIntegerType(4),
                                 adaptor.getValue()));
    SmallVector<Value> indices =
        byteIndices(rewriter, loc, adaptor.getIndices());
    if (adaptor.getIndices().empty()) {
      memref::StoreOp::create(rewriter, loc, code, adaptor.getMemref(),
                              indices);
      rewriter.eraseOp(op);
      return success();
    }
    // Clear the nibble, then set it: two atomic updates of the byte.
    Value shift = nibbleShift(rewriter, loc, adaptor.getIndices().back());
    Value keep = arith::XOrIOp::create(
        rewriter, loc,
        arith::ShLIOp::create(
            rewriter, loc, arith::ConstantIntOp::create(rewriter, loc, i8, 0xF),
            shift),
        arith::ConstantIntOp::create(rewriter, loc, i8, -1));
    memref::AtomicRMWOp::create(rewriter, loc, arith::AtomicRMWKind::andi, keep,
                                adaptor.getMemref(), indices);
    memref::AtomicRMWOp::create(
        rewriter, loc, arith::AtomicRMWKind::ori,
        arith::ShLIOp::create(rewriter, loc, code, shift), adaptor.getMemref(),
        indices);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The byte vector type of a 1-D vector of an even number of f4E2M1FN.
VectorType getByteVectorType(VectorType type) {
  if (type.getRank() != 1 || type.isScalable() || type.getDimSize(0) % 2 != 0)
    return {};
  return VectorType::get({type.getDimSize(0) / 2},
                         IntegerType::get(type.getContext(), 8));
}

Value bytesToValues(OpBuilder &b, Location loc, Value bytes, VectorType type) {
  Value codes = vector::BitCastOp::create(
      b, loc, VectorType::get(type.getShape(), b.getIntegerType(4)), bytes);
  return arith::BitcastOp::create(b, loc, type, codes);
}

Value valuesToBytes(OpBuilder &b, Location loc, Value values,
                    VectorType byteType) {
  auto type = cast<VectorType>(values.getType());
  Value codes = arith::BitcastOp::create(
      b, loc, VectorType::get(type.getShape(), b.getIntegerType(4)), values);
  return vector::BitCastOp::create(b, loc, byteType, codes);
}

/// The bytes of `values` when they are f4E2M1FN codes truncated from a
/// vector of wider integers (the quantization's conversions): the even and
/// odd codes shuffled apart and combined as `even | odd << 4` in i8. NVPTX
/// then stores whole words and x86 shuffles bytes, where both scalarize the
/// i4 vector of valuesToBytes element by element. Null otherwise.
Value codesToBytes(OpBuilder &b, Location loc, Value values,
                   VectorType byteType) {
  auto bitcast = values.getDefiningOp<arith::BitcastOp>();
  auto trunc =
      bitcast ? bitcast.getIn().getDefiningOp<arith::TruncIOp>() : nullptr;
  if (!trunc)
    return {};
  Value codes = trunc.getIn();
  auto codesType = cast<VectorType>(codes.getType());
  if (codesType.getElementTypeBitWidth() > 8)
    codes = arith::TruncIOp::create(
        b, loc, VectorType::get(codesType.getShape(), b.getI8Type()), codes);
  int64_t bytes = byteType.getNumElements();
  SmallVector<int64_t> even, odd;
  for (int64_t i = 0; i < bytes; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
  }
  Value low = vector::ShuffleOp::create(b, loc, codes, codes, even);
  Value high = vector::ShuffleOp::create(b, loc, codes, codes, odd);
  auto splat = [&](int64_t value) {
    return arith::ConstantOp::create(
        b, loc, byteType,
        DenseElementsAttr::get(byteType, b.getI8IntegerAttr(value)));
  };
  // The codes are in [0, 15]: mask the low one, shift the high one.
  low = arith::AndIOp::create(b, loc, low, splat(0xF));
  high = arith::ShLIOp::create(b, loc, high, splat(4));
  return arith::OrIOp::create(b, loc, low, high);
}

/// Whether a transfer reads or writes whole bytes: unmasked, in bounds,
/// along the last dim.
template <typename OpTy>
bool isByteTransfer(OpTy op) {
  return !op.getMask() && op.getPermutationMap().isMinorIdentity() &&
         op.getVectorType().getRank() == 1 && op.isDimInBounds(0);
}

struct ConvertVectorLoad : public OpConversionPattern<vector::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    VectorType byteType = getByteVectorType(op.getVectorType());
    if (!byteType)
      return rewriter.notifyMatchFailure(op, "not whole bytes");
    Location loc = op.getLoc();
    Value bytes = vector::LoadOp::create(
        rewriter, loc, byteType, adaptor.getBase(),
        byteIndices(rewriter, loc, adaptor.getIndices()));
    rewriter.replaceOp(op,
                       bytesToValues(rewriter, loc, bytes, op.getVectorType()));
    return success();
  }
};

struct ConvertVectorStore : public OpConversionPattern<vector::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    VectorType byteType = getByteVectorType(op.getVectorType());
    if (!byteType)
      return rewriter.notifyMatchFailure(op, "not whole bytes");
    Location loc = op.getLoc();
    Value bytes = codesToBytes(rewriter, loc, op.getValueToStore(), byteType);
    if (!bytes)
      bytes = valuesToBytes(rewriter, loc, adaptor.getValueToStore(), byteType);
    // The alignment (in bytes) holds for the bytes.
    vector::StoreOp::create(rewriter, loc, bytes, adaptor.getBase(),
                            byteIndices(rewriter, loc, adaptor.getIndices()),
                            op.getNontemporal(), op.getAlignmentAttr());
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertTransferRead
    : public OpConversionPattern<vector::TransferReadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::TransferReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    VectorType byteType = getByteVectorType(op.getVectorType());
    if (!byteType || !isByteTransfer(op) ||
        !isa<MemRefType>(op.getBase().getType()))
      return rewriter.notifyMatchFailure(op, "not whole bytes");
    Location loc = op.getLoc();
    Value bytes = vector::LoadOp::create(
        rewriter, loc, byteType, adaptor.getBase(),
        byteIndices(rewriter, loc, adaptor.getIndices()));
    rewriter.replaceOp(op,
                       bytesToValues(rewriter, loc, bytes, op.getVectorType()));
    return success();
  }
};

struct ConvertTransferWrite
    : public OpConversionPattern<vector::TransferWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::TransferWriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    VectorType byteType = getByteVectorType(op.getVectorType());
    if (!byteType || !isByteTransfer(op) ||
        !isa<MemRefType>(op.getBase().getType()))
      return rewriter.notifyMatchFailure(op, "not whole bytes");
    Location loc = op.getLoc();
    Value bytes = codesToBytes(rewriter, loc, op.getValueToStore(), byteType);
    if (!bytes)
      bytes = valuesToBytes(rewriter, loc, adaptor.getValueToStore(), byteType);
    vector::StoreOp::create(rewriter, loc, bytes, adaptor.getBase(),
                            byteIndices(rewriter, loc, adaptor.getIndices()));
    rewriter.eraseOp(op);
    return success();
  }
};

/// A global of f4E2M1FN: its initial value packed.
struct ConvertGlobal : public OpConversionPattern<memref::GlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::GlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = getTypeConverter()->convertType<MemRefType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "odd f4E2M1FN buffer");
    Attribute initial = op.getInitialValueAttr();
    if (auto dense = dyn_cast_or_null<DenseElementsAttr>(initial)) {
      SmallVector<uint8_t> bytes(type.getNumElements(), 0);
      int64_t i = 0;
      for (APFloat value : dense.getValues<APFloat>()) {
        uint64_t bits = value.bitcastToAPInt().getZExtValue();
        bytes[i / 2] |= static_cast<uint8_t>(bits & 0xF) << (4 * (i % 2));
        ++i;
      }
      auto tensorType =
          RankedTensorType::get(type.getShape(), type.getElementType());
      initial = DenseElementsAttr::get(tensorType, ArrayRef(bytes));
    } else if (initial && !isa<UnitAttr>(initial)) {
      return rewriter.notifyMatchFailure(op, "unknown initial value");
    }
    rewriter.replaceOpWithNewOp<memref::GlobalOp>(
        op, op.getSymName(), op.getSymVisibilityAttr(), type, initial,
        op.getConstant(), op.getAlignmentAttr());
    return success();
  }
};

struct ConvertGetGlobal : public OpConversionPattern<memref::GetGlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::GetGlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = getTypeConverter()->convertType<MemRefType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "odd f4E2M1FN buffer");
    rewriter.replaceOpWithNewOp<memref::GetGlobalOp>(op, type, op.getName());
    return success();
  }
};

/// Whether `op` touches no f4E2M1FN buffer (operands, results, block
/// arguments, a function's signature).
bool isLegal(Operation *op) {
  auto packed = [](Type type) { return isPackedMemRef(type); };
  if (llvm::any_of(op->getOperandTypes(), packed) ||
      llvm::any_of(op->getResultTypes(), packed))
    return false;
  if (auto func = dyn_cast<FunctionOpInterface>(op))
    if (llvm::any_of(func.getArgumentTypes(), packed) ||
        llvm::any_of(func.getResultTypes(), packed))
      return false;
  if (auto global = dyn_cast<memref::GlobalOp>(op))
    return !isPackedMemRef(global.getType());
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (llvm::any_of(block.getArgumentTypes(), packed))
        return false;
  return true;
}

struct NormPackFP4Pass
    : public norm::impl::NormPackFP4PassBase<NormPackFP4Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Nothing to do (and nothing to convert) without f4E2M1FN buffers.
    if (!module
             ->walk([](Operation *op) {
               return isLegal(op) ? WalkResult::advance()
                                  : WalkResult::interrupt();
             })
             .wasInterrupted())
      return;

    MLIRContext *context = &getContext();
    PackedTypeConverter converter;
    // Every f4E2M1FN buffer must hold whole bytes per row.
    WalkResult unpackable = module->walk([&](Operation *op) {
      SmallVector<Value> values(op->getResults());
      for (Region &region : op->getRegions())
        for (Block &block : region)
          llvm::append_range(values, block.getArguments());
      for (Value value : values) {
        if (!isPackedMemRef(value.getType()) ||
            converter.convertType(value.getType()))
          continue;
        op->emitOpError("cannot store ")
            << value.getType()
            << " two elements per byte: the last dim, the offset and the "
               "outer strides must be even and the last stride 1";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unpackable.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal(isLegal);
    RewritePatternSet patterns(context);
    patterns
        .add<ConvertAlloc<memref::AllocOp>, ConvertAlloc<memref::AllocaOp>,
             ConvertTypesOnly<memref::DeallocOp>,
             ConvertTypesOnly<memref::CopyOp>, ConvertTypesOnly<memref::CastOp>,
             ConvertTypesOnly<memref::AssumeAlignmentOp>,
             ConvertTypesOnly<memref::ExtractAlignedPointerAsIndexOp>,
             ConvertExtractStridedMetadata, ConvertSubView,
             ConvertReshape<memref::ExpandShapeOp>,
             ConvertReshape<memref::CollapseShapeOp>, ConvertDim, ConvertLoad,
             ConvertStore, ConvertVectorLoad, ConvertVectorStore,
             ConvertTransferRead, ConvertTransferWrite, ConvertGlobal,
             ConvertGetGlobal, ConvertGPUAlloc, ConvertGPUFunc,
             ConvertTypesOnly<gpu::DeallocOp>, ConvertTypesOnly<gpu::MemcpyOp>,
             ConvertTypesOnly<gpu::LaunchFuncOp>>(converter, context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversions(converter, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
