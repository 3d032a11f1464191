//===- ConversionTest.cpp - Unit tests of the lowering patterns -*- C++ -*-===//
//
// Applies the exported pattern sets of the norm lowerings and of
// norm-legalize-reshapes with upstream's greedy driver, as an embedding
// compiler would without our passes, and checks that the result verifies
// and holds no norm op.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/NormToGPU/NormToGPU.h"
#include "norm/Conversion/NormToLinalg/NormToLinalg.h"
#include "norm/Conversion/NormToVector/NormToVector.h"
#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::norm;

namespace {

/// One op of each kind, with a residual, a dynamic leading dim and a
/// scalar weight.
constexpr const char *kNormOps = R"mlir(
func.func @ops(%x: tensor<?x64xf32>, %r: tensor<?x64xf32>, %w: tensor<64xf32>,
               %b: tensor<64xf32>, %a: tensor<f32>, %g: tensor<1xf32>)
    -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %y0, %s0 = norm.layer_norm %x weight(%w) bias(%b) residual(%r)
      : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
  %y1 = norm.rms_norm %x weight(%g) : (tensor<?x64xf32>, tensor<1xf32>) -> tensor<?x64xf32>
  %y2 = norm.dyt %x alpha(%a) weight(%w) bias(%b)
      : (tensor<?x64xf32>, tensor<f32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y0, %s0, %y1, %y2 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}
)mlir";

class ConversionPatternsTest : public ::testing::Test {
protected:
  ConversionPatternsTest() {
    DialectRegistry registry;
    registry.insert<NormDialect, func::FuncDialect, arith::ArithDialect,
                    bufferization::BufferizationDialect, gpu::GPUDialect,
                    linalg::LinalgDialect, math::MathDialect,
                    memref::MemRefDialect, scf::SCFDialect,
                    tensor::TensorDialect, vector::VectorDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parse(const char *text) {
    return parseSourceString<ModuleOp>(text, &context);
  }

  /// Applies `patterns` greedily and checks the module verifies and has no
  /// norm op left.
  void applyAndCheck(ModuleOp module, RewritePatternSet &&patterns) {
    ASSERT_TRUE(succeeded(applyPatternsGreedily(module, std::move(patterns))));
    EXPECT_TRUE(succeeded(verify(module)));
    int normOps = 0;
    module.walk([&](NormOpInterface) { ++normOps; });
    EXPECT_EQ(normOps, 0);
  }

  MLIRContext context;
};

TEST_F(ConversionPatternsTest, NormToLinalg) {
  OwningOpRef<ModuleOp> module = parse(kNormOps);
  ASSERT_TRUE(module);
  RewritePatternSet patterns(&context);
  populateNormToLinalgPatterns(patterns);
  applyAndCheck(*module, std::move(patterns));
  int generics = 0;
  module->walk([&](linalg::GenericOp) { ++generics; });
  EXPECT_GT(generics, 0);
}

TEST_F(ConversionPatternsTest, NormToVector) {
  OwningOpRef<ModuleOp> module = parse(kNormOps);
  ASSERT_TRUE(module);
  NormLowerCPUPassOptions options;
  options.vectorWidth = 256;
  RewritePatternSet patterns(&context);
  populateNormToVectorPatterns(patterns, options);
  applyAndCheck(*module, std::move(patterns));
  int loops = 0;
  module->walk([&](scf::ForallOp) { ++loops; });
  EXPECT_GT(loops, 0);
}

TEST_F(ConversionPatternsTest, NormToGPU) {
  OwningOpRef<ModuleOp> module = parse(kNormOps);
  ASSERT_TRUE(module);
  NormLowerGPUPassOptions options;
  RewritePatternSet patterns(&context);
  populateNormToGPUPatterns(patterns, options);
  applyAndCheck(*module, std::move(patterns));
  int launches = 0;
  module->walk([&](gpu::LaunchOp) { ++launches; });
  EXPECT_GT(launches, 0);
}

TEST_F(ConversionPatternsTest, LegalizeReshapes) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @expand(%t: tensor<?xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  %e = tensor.expand_shape %t [[0, 1]] output_shape [%a, %b] : tensor<?xf32> into tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}
)mlir");
  ASSERT_TRUE(module);
  RewritePatternSet patterns(&context);
  populateLegalizeReshapesPatterns(patterns);
  ASSERT_TRUE(succeeded(applyPatternsGreedily(*module, std::move(patterns))));
  EXPECT_TRUE(succeeded(verify(*module)));
  int expands = 0, reshapes = 0;
  module->walk([&](tensor::ExpandShapeOp) { ++expands; });
  module->walk([&](tensor::ReshapeOp) { ++reshapes; });
  EXPECT_EQ(expands, 0);
  EXPECT_EQ(reshapes, 1);
}

TEST_F(ConversionPatternsTest, CollapseDestinations) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @f(%m: tensor<256x768xf32>, %d: memref<4x64x768xf32>) {
  %y = tensor.expand_shape %m [[0, 1], [2]] output_shape [4, 64, 768] : tensor<256x768xf32> into tensor<4x64x768xf32>
  bufferization.materialize_in_destination %y in restrict writable %d : (tensor<4x64x768xf32>, memref<4x64x768xf32>) -> ()
  return
}
)mlir");
  ASSERT_TRUE(module);
  RewritePatternSet patterns(&context);
  populateCollapseDestinationsPatterns(patterns);
  ASSERT_TRUE(succeeded(applyPatternsGreedily(*module, std::move(patterns))));
  EXPECT_TRUE(succeeded(verify(*module)));
  int expands = 0, collapses = 0;
  module->walk([&](tensor::ExpandShapeOp) { ++expands; });
  module->walk([&](memref::CollapseShapeOp) { ++collapses; });
  EXPECT_EQ(expands, 0);
  EXPECT_EQ(collapses, 1);
}

} // namespace
