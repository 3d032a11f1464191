//===- NormOpsTest.cpp - Unit tests of the norm ops -------------*- C++ -*-===//
//
// Builds norm ops with the C++ builders and checks the verifier, the
// interface accessors and the folders programmatically.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::norm;

namespace {

/// Fixture owning a context with the norm, arith, tensor and func dialects
/// and a function `@test` whose body the tests build into.
class NormOpsTest : public ::testing::Test {
protected:
  NormOpsTest() : builder(&context) {
    context.loadDialect<NormDialect, arith::ArithDialect,
                        tensor::TensorDialect, func::FuncDialect>();
    loc = builder.getUnknownLoc();
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    func = func::FuncOp::create(builder, loc, "test",
                                builder.getFunctionType({}, {}));
    builder.setInsertionPointToStart(func.addEntryBlock());
  }

  /// Adds an argument of the given type to `@test`.
  Value argument(Type type) {
    Block &entry = func.getBody().front();
    Value value = entry.addArgument(type, loc);
    func.setType(builder.getFunctionType(entry.getArgumentTypes(), {}));
    return value;
  }

  /// Terminates `@test` by returning `results`, so that they stay live.
  void finish(ValueRange results) {
    func::ReturnOp::create(builder, loc, results);
    func.setType(builder.getFunctionType(
        func.getBody().front().getArgumentTypes(), results.getTypes()));
  }

  /// A dense f32 constant of the given shape filled by `values`.
  Value constant(ArrayRef<int64_t> shape, ArrayRef<float> values) {
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    return arith::ConstantOp::create(
        builder, loc, type, DenseFPElementsAttr::get(type, values));
  }

  /// Verifies `op` and returns the diagnostic text it produced ("" if none).
  std::string verifyAndCapture(Operation *op) {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      message = diag.str();
      return success();
    });
    if (succeeded(mlir::verify(op)))
      return "";
    return message.empty() ? "<failed without message>" : message;
  }

  RankedTensorType tensorType(ArrayRef<int64_t> shape, Type elementType) {
    return RankedTensorType::get(shape, elementType);
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
};

TEST_F(NormOpsTest, BuildersInferResultTypes) {
  auto xType = tensorType({ShapedType::kDynamic, 64}, builder.getBF16Type());
  Value x = argument(xType);
  Value w = argument(tensorType({64}, builder.getF32Type()));
  Value r = argument(xType);

  auto layerNorm = LayerNormOp::create(builder, loc, x, w, w);
  EXPECT_EQ(layerNorm.getY().getType(), xType);
  EXPECT_FALSE(layerNorm.getResidualOut());
  EXPECT_EQ(verifyAndCapture(layerNorm), "");

  auto rmsNorm = RMSNormOp::create(builder, loc, x, w, r);
  ASSERT_EQ(rmsNorm->getNumResults(), 2u);
  EXPECT_EQ(rmsNorm.getResidualOut().getType(), xType);
  EXPECT_EQ(verifyAndCapture(rmsNorm), "");

  Value alpha = argument(tensorType({}, builder.getF32Type()));
  auto dyt = DyTOp::create(builder, loc, x, alpha, w, w);
  EXPECT_EQ(verifyAndCapture(dyt), "");
}

TEST_F(NormOpsTest, DefaultAttributesAndInterface) {
  Value x = argument(tensorType({2, 3, 8}, builder.getF16Type()));
  auto op = RMSNormOp::create(builder, loc, x);
  auto iface = cast<NormOpInterface>(op.getOperation());
  EXPECT_EQ(iface.getAxis(), -1);
  EXPECT_EQ(iface.getNormalizedDim(), 2);
  EXPECT_EQ(iface.getNumNormalizedDims(), 1);
  EXPECT_TRUE(iface.getComputeElementType().isF32());
  EXPECT_FLOAT_EQ(iface.getEpsilon().convertToDouble(), 1e-6f);
  EXPECT_EQ(iface.getEpsilonMode(), EpsilonMode::inside_sqrt);
  EXPECT_EQ(iface.getCastMode(), CastMode::final);
  EXPECT_FALSE(iface.subtractsMean());
  EXPECT_TRUE(iface.hasReduction());

  auto layerNorm = LayerNormOp::create(builder, loc, x);
  EXPECT_FLOAT_EQ(layerNorm.getEpsilon().convertToDouble(), 1e-5f);
  EXPECT_TRUE(cast<NormOpInterface>(layerNorm.getOperation()).subtractsMean());

  Value x64 = argument(tensorType({4}, builder.getF64Type()));
  auto op64 = LayerNormOp::create(builder, loc, x64);
  EXPECT_TRUE(cast<NormOpInterface>(op64.getOperation())
                  .getComputeElementType()
                  .isF64());
}

TEST_F(NormOpsTest, VerifierRejectsBadWeightShape) {
  Value x = argument(tensorType({8, 16}, builder.getF32Type()));
  Value w = argument(tensorType({8}, builder.getF32Type()));
  auto op = LayerNormOp::create(builder, loc, x, w);
  EXPECT_NE(verifyAndCapture(op).find("operand 'weight' shape [8] must be "
                                      "the normalized shape [16]"),
            std::string::npos);
}

TEST_F(NormOpsTest, VerifierRejectsBadAxisAndEpsilon) {
  Value x = argument(tensorType({8, 16}, builder.getF32Type()));
  auto op = RMSNormOp::create(builder, loc, x);
  op.setAxis(2);
  EXPECT_NE(verifyAndCapture(op).find("attribute 'axis' = 2 is out of range"),
            std::string::npos);
  op.setAxis(-2);
  EXPECT_EQ(verifyAndCapture(op), "");
  op.setEpsilonAttr(builder.getF32FloatAttr(-1.0f));
  EXPECT_NE(verifyAndCapture(op).find("attribute 'epsilon' must be finite"),
            std::string::npos);
  op.setEpsilonAttr(builder.getF32FloatAttr(std::nanf("")));
  EXPECT_NE(verifyAndCapture(op).find("attribute 'epsilon' must be finite"),
            std::string::npos);
}

TEST_F(NormOpsTest, VerifierRejectsWrongTypes) {
  Value x = argument(tensorType({4, 16}, builder.getBF16Type()));
  Value w16 = argument(tensorType({16}, builder.getF16Type()));
  auto op = RMSNormOp::create(builder, loc, x, w16);
  EXPECT_NE(verifyAndCapture(op).find("operand 'weight' element type must be "
                                      "'bf16' (the element type of 'x') or f32"),
            std::string::npos);

  Value xi = argument(tensorType({4, 16}, builder.getI32Type()));
  auto intOp = RMSNormOp::create(builder, loc, xi);
  EXPECT_NE(verifyAndCapture(intOp).find(
                "operand #0 must be 'x': ranked tensor of rank >= 1 of f16, "
                "bf16, f32 or f64, but got 'tensor<4x16xi32>'"),
            std::string::npos);

  Value x64 = argument(tensorType({4, 16}, builder.getF64Type()));
  auto narrow = LayerNormOp::create(builder, loc, x64);
  narrow.setComputeTypeAttr(TypeAttr::get(builder.getF32Type()));
  EXPECT_NE(verifyAndCapture(narrow).find("is narrower than the element type"),
            std::string::npos);
}

TEST_F(NormOpsTest, VerifierRejectsNonScalarAlpha) {
  Value x = argument(tensorType({4, 16}, builder.getF32Type()));
  Value alpha = argument(tensorType({16}, builder.getF32Type()));
  auto op = DyTOp::create(builder, loc, x, alpha);
  EXPECT_NE(verifyAndCapture(op).find(
                "operand #1 must be 'alpha': scalar (tensor<T> or "
                "tensor<1xT>) of f16, bf16, f32 or f64, but got "
                "'tensor<16xf32>'"),
            std::string::npos);
}

TEST_F(NormOpsTest, VerifierRejectsForeignAttribute) {
  Value x = argument(tensorType({4, 16}, builder.getF32Type()));
  Value alpha = argument(tensorType({}, builder.getF32Type()));
  auto op = DyTOp::create(builder, loc, x, alpha);
  op->setAttr("epsilon", builder.getF32FloatAttr(1e-5f));
  EXPECT_NE(verifyAndCapture(op).find("does not take attribute 'epsilon'"),
            std::string::npos);
}

/// Runs the canonicalization patterns and folders of the norm ops on the
/// test module.
static LogicalResult canonicalize(ModuleOp module) {
  MLIRContext *context = module.getContext();
  RewritePatternSet patterns(context);
  LayerNormOp::getCanonicalizationPatterns(patterns, context);
  RMSNormOp::getCanonicalizationPatterns(patterns, context);
  DyTOp::getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(module, std::move(patterns));
}

TEST_F(NormOpsTest, CanonicalizeDropsIdentityWeightAndZeroBias) {
  Value x = argument(tensorType({4, 4}, builder.getF32Type()));
  Value ones = constant({4}, {1, 1, 1, 1});
  Value zeros = constant({4}, {0, -0.0f, 0, 0});
  auto op = LayerNormOp::create(builder, loc, x, ones, zeros);
  finish(op->getResults());
  ASSERT_TRUE(succeeded(canonicalize(*module)));
  EXPECT_FALSE(op.getWeight());
  EXPECT_FALSE(op.getBias());
  EXPECT_EQ(verifyAndCapture(op), "");
}

TEST_F(NormOpsTest, CanonicalizeFoldsExactWeightOffset) {
  Value x = argument(tensorType({4, 4}, builder.getF32Type()));
  Value w = constant({4}, {0.5f, -0.25f, 2.0f, 0.0f});
  auto op = RMSNormOp::create(builder, loc, x, w);
  op.setWeightOffsetAttr(builder.getF32FloatAttr(1.0f));
  finish(op->getResults());
  ASSERT_TRUE(succeeded(canonicalize(*module)));
  EXPECT_TRUE(op.getWeightOffset().isZero());
  DenseFPElementsAttr folded;
  ASSERT_TRUE(matchPattern(op.getWeight(), m_Constant(&folded)));
  SmallVector<float> values;
  for (const APFloat &v : folded.getValues<APFloat>())
    values.push_back(v.convertToFloat());
  EXPECT_EQ(values, (SmallVector<float>{1.5f, 0.75f, 3.0f, 1.0f}));
}

TEST_F(NormOpsTest, ConstantFoldMatchesDirectComputation) {
  Value x = constant({2, 4}, {1, 2, 3, 4, -1, 0, 1, 2});
  auto op = RMSNormOp::create(builder, loc, x);
  SmallVector<OpFoldResult> results;
  ASSERT_TRUE(succeeded(op->fold(results)));
  ASSERT_EQ(results.size(), 1u);
  auto attr = cast<DenseFPElementsAttr>(cast<Attribute>(results[0]));
  SmallVector<double> values;
  for (const APFloat &v : attr.getValues<APFloat>())
    values.push_back(v.convertToDouble());
  double first[] = {1, 2, 3, 4}, second[] = {-1, 0, 1, 2};
  double ms1 = (1 + 4 + 9 + 16) / 4.0, ms2 = (1 + 0 + 1 + 4) / 4.0;
  for (int j = 0; j < 4; ++j) {
    EXPECT_NEAR(values[j], first[j] / std::sqrt(ms1 + 1e-6), 1e-6);
    EXPECT_NEAR(values[4 + j], second[j] / std::sqrt(ms2 + 1e-6), 1e-6);
  }
}

} // namespace
