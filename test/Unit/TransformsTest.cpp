//===- TransformsTest.cpp - Unit tests of the norm pattern sets -*- C++ -*-===//
//
// Applies populateNormRaisePatterns, populateNormFuseResidualPatterns and
// populateNormFoldMatmulWeightsPatterns with the upstream greedy driver, as
// an embedding compiler would without our passes, in both traversal orders.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::norm;

namespace {

/// An RMSNorm as torch-mlir emits aten.rms_norm: square, row sum, mean,
/// epsilon (an f64 constant truncated in the body), rsqrt, scale, weight.
constexpr const char *kRMSNormChain = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @rms(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-6 : f64
  %full = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %rows = tensor.empty() : tensor<4x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%rows : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x8xf32>) outs(%acc : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<4x1xf32>) outs(%rows : tensor<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %ms = arith.divf %a, %n : f32
    %e = arith.truncf %eps : f64 to f32
    %v = arith.addf %ms, %e : f32
    %q = math.rsqrt %v : f32
    linalg.yield %q : f32
  } -> tensor<4x1xf32>
  %nrm = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %r : tensor<4x8xf32>, tensor<4x1xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%nrm, %w : tensor<4x8xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
)mlir";

/// Two residual adds, each feeding an RMSNorm.
constexpr const char *kResidualChain = R"mlir(
func.func @chain(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %m: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = tosa.add %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = norm.rms_norm %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = arith.addf %h, %m : tensor<4x8xf32>
  %y2 = norm.rms_norm %h2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %y2, %h2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
)mlir";

/// An RMSNorm with a constant weight feeding a matmul with a constant RHS.
constexpr const char *kNormMatmul = R"mlir(
func.func @fold(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %rhs = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = norm.rms_norm %x weight(%w) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%y, %rhs : tensor<4x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}
)mlir";

class NormTransformsTest : public ::testing::TestWithParam<bool> {
protected:
  NormTransformsTest() {
    context.loadDialect<NormDialect, arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, math::MathDialect,
                        tensor::TensorDialect, tosa::TosaDialect>();
  }

  /// Parses `source` and applies `patterns` greedily, top-down or not as
  /// the test parameter says.
  OwningOpRef<ModuleOp> run(const char *source, RewritePatternSet patterns) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    if (!module)
      return module;
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(GetParam());
    EXPECT_TRUE(
        succeeded(applyPatternsGreedily(*module, std::move(patterns), config)));
    EXPECT_TRUE(succeeded(verify(*module)));
    return module;
  }

  /// Counts the ops of type `OpTy` in `module`.
  template <typename OpTy>
  static unsigned count(ModuleOp module) {
    unsigned n = 0;
    module.walk([&](OpTy) { ++n; });
    return n;
  }

  MLIRContext context;
};

/// The greedy driver visits the chain's ops in either order; the pattern
/// only rewrites the outermost op, so the weight is always part of the op.
TEST_P(NormTransformsTest, RaisePatternsRaiseTheWholeChain) {
  RewritePatternSet patterns(&context);
  populateNormRaisePatterns(patterns);
  OwningOpRef<ModuleOp> module = run(kRMSNormChain, std::move(patterns));
  ASSERT_TRUE(module);
  EXPECT_EQ(count<RMSNormOp>(*module), 1u);
  EXPECT_EQ(count<linalg::GenericOp>(*module), 0u);
  EXPECT_EQ(count<linalg::FillOp>(*module), 0u);
  RMSNormOp op;
  module->walk([&](RMSNormOp found) { op = found; });
  ASSERT_TRUE(op);
  EXPECT_TRUE(op.getWeight());
  EXPECT_EQ(op.getWeight(),
            module->lookupSymbol<func::FuncOp>("rms").getArgument(1));
  EXPECT_EQ(op.getEpsilon().convertToDouble(),
            static_cast<double>(static_cast<float>(1.0e-6)));
  EXPECT_EQ(op.getEpsilonMode(), EpsilonMode::inside_sqrt);
  EXPECT_FALSE(op.getComputeTypeAttr());
}

/// Both adds fold into the norms; the second norm takes the first one's
/// residual_out, and the returned sum is the second one's.
TEST_P(NormTransformsTest, FuseResidualPatternsFuseEveryStep) {
  RewritePatternSet patterns(&context);
  populateNormFuseResidualPatterns(patterns);
  OwningOpRef<ModuleOp> module = run(kResidualChain, std::move(patterns));
  ASSERT_TRUE(module);
  SmallVector<RMSNormOp> norms;
  module->walk([&](RMSNormOp op) { norms.push_back(op); });
  ASSERT_EQ(norms.size(), 2u);
  EXPECT_EQ(count<tosa::AddOp>(*module), 0u);
  EXPECT_EQ(count<arith::AddFOp>(*module), 0u);
  EXPECT_TRUE(norms[0].getResidual());
  EXPECT_EQ(norms[1].getX(), norms[0].getResidualOut());
  auto ret = cast<func::ReturnOp>(
      module->lookupSymbol<func::FuncOp>("chain").getBody().front().back());
  EXPECT_EQ(ret.getOperand(2), norms[1].getResidualOut());
}

/// The weight moves into the rows of the matmul's RHS; the norm keeps no
/// weight.
TEST_P(NormTransformsTest, FoldMatmulWeightsPatternsFoldTheWeight) {
  RewritePatternSet patterns(&context);
  populateNormFoldMatmulWeightsPatterns(patterns);
  OwningOpRef<ModuleOp> module = run(kNormMatmul, std::move(patterns));
  ASSERT_TRUE(module);
  RMSNormOp norm;
  module->walk([&](RMSNormOp op) { norm = op; });
  ASSERT_TRUE(norm);
  EXPECT_FALSE(norm.getWeight());
  linalg::MatmulOp matmul;
  module->walk([&](linalg::MatmulOp op) { matmul = op; });
  ASSERT_TRUE(matmul);
  DenseFPElementsAttr rhs;
  ASSERT_TRUE(matchPattern(matmul.getDpsInputs()[1], m_Constant(&rhs)));
  SmallVector<float> values(rhs.getValues<float>());
  EXPECT_EQ(values, (SmallVector<float>{2, 4, 6, 2, 2.5, 3}));
}

/// The options reach the pattern: with defer-scale the norm op goes away
/// (the matmul reads x, its rows scaled after), and a RHS over
/// max-rhs-elements is left alone.
TEST_P(NormTransformsTest, FoldMatmulWeightsPatternsTakeTheOptions) {
  NormFoldMatmulWeightsPassOptions defer;
  defer.deferScale = true;
  RewritePatternSet deferPatterns(&context);
  populateNormFoldMatmulWeightsPatterns(deferPatterns, defer);
  OwningOpRef<ModuleOp> deferred = run(kNormMatmul, std::move(deferPatterns));
  ASSERT_TRUE(deferred);
  EXPECT_EQ(count<RMSNormOp>(*deferred), 0u);
  func::FuncOp func = deferred->lookupSymbol<func::FuncOp>("fold");
  linalg::MatmulOp matmul;
  deferred->walk([&](linalg::MatmulOp op) { matmul = op; });
  ASSERT_TRUE(matmul);
  EXPECT_EQ(matmul.getDpsInputs()[0], func.getArgument(0));

  NormFoldMatmulWeightsPassOptions small;
  small.maxRhsElements = 5;
  RewritePatternSet smallPatterns(&context);
  populateNormFoldMatmulWeightsPatterns(smallPatterns, small);
  OwningOpRef<ModuleOp> kept = run(kNormMatmul, std::move(smallPatterns));
  ASSERT_TRUE(kept);
  RMSNormOp norm;
  kept->walk([&](RMSNormOp op) { norm = op; });
  ASSERT_TRUE(norm);
  EXPECT_TRUE(norm.getWeight());
}

INSTANTIATE_TEST_SUITE_P(Traversal, NormTransformsTest,
                         ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "TopDown" : "BottomUp";
                         });

} // namespace
