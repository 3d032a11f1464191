//===- PassStatisticsTest.cpp - Norm pass statistics ----------*- C++ -*-===//
//
// enableNormPassStatistics as an embedder uses it: its own pass manager and
// stream, the report on the pass manager's destruction, summed over runs
// and over the clones of a multithreaded run.
//
//===----------------------------------------------------------------------===//

#include "norm/Support/PassStatistics.h"
#include "norm/Dialect/Norm/IR/NormOps.h"
#include "norm/Dialect/Norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::norm;

namespace {

/// Two functions, each with two residual adds feeding an RMSNorm.
constexpr const char *kTwoResidualChains = R"mlir(
func.func @a(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %m: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = arith.addf %x, %r : tensor<4x8xf32>
  %y = norm.rms_norm %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = arith.addf %h, %m : tensor<4x8xf32>
  %y2 = norm.rms_norm %h2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @b(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %m: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = arith.addf %x, %r : tensor<4x8xf32>
  %y = norm.rms_norm %h : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = arith.addf %h, %m : tensor<4x8xf32>
  %y2 = norm.rms_norm %h2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}
)mlir";

class PassStatisticsTest : public ::testing::TestWithParam<bool> {
protected:
  PassStatisticsTest() {
    context.loadDialect<NormDialect, arith::ArithDialect, func::FuncDialect>();
    context.enableMultithreading(GetParam());
  }

  /// Runs norm-fuse-residual (and canonicalize, which has no statistics)
  /// `runs` times on fresh copies of kTwoResidualChains with the report
  /// enabled, and returns the report.
  std::string runAndReport(unsigned runs) {
    std::string report;
    llvm::raw_string_ostream os(report);
    {
      PassManager pm(&context);
      pm.nest<func::FuncOp>().addPass(createNormFuseResidualPass());
      pm.addPass(createCanonicalizerPass());
      enableNormPassStatistics(pm, os);
      for (unsigned i = 0; i < runs; ++i) {
        OwningOpRef<ModuleOp> module =
            parseSourceString<ModuleOp>(kTwoResidualChains, &context);
        EXPECT_TRUE(module);
        EXPECT_TRUE(succeeded(pm.run(*module)));
      }
      // Nothing is printed before the pass manager is destroyed.
      EXPECT_TRUE(report.empty());
    }
    return report;
  }

  MLIRContext context;
};

} // namespace

/// A norm pass lists its statistics in declaration order; an upstream pass
/// has none.
TEST(PassStatisticsRegistryTest, ListsTheStatisticsOfAPass) {
  std::unique_ptr<Pass> fuse = createNormFuseResidualPass();
  SmallVector<const PassStatistic *> statistics = getPassStatistics(fuse.get());
  ASSERT_EQ(statistics.size(), 2u);
  EXPECT_STREQ(statistics[0]->getName(), "fused");
  EXPECT_STREQ(statistics[1]->getName(), "declined");
  EXPECT_EQ(statistics[0]->getValue(), 0u);
  std::unique_ptr<Pass> canonicalize = createCanonicalizerPass();
  EXPECT_TRUE(getPassStatistics(canonicalize.get()).empty());
  // A destroyed pass leaves nothing behind.
  const Pass *address = fuse.get();
  fuse.reset();
  EXPECT_TRUE(getPassStatistics(address).empty());
}

/// Four residual adds per module, in two functions that the threads share
/// out: one run reports 4, two runs 8.
TEST_P(PassStatisticsTest, ReportsTheCountsSummedOverRunsAndThreads) {
  std::string once = runAndReport(1);
  EXPECT_NE(once.find("... Pass statistics report ..."), std::string::npos)
      << once;
  EXPECT_NE(once.find("  NormFuseResidualPass\n"
                      "    (S) 0 declined - Number of add-fed norm ops left "
                      "unchanged\n"
                      "    (S) 4 fused    - Number of residual adds fused\n"),
            std::string::npos)
      << once;
  EXPECT_EQ(once.find("Canonicalizer"), std::string::npos) << once;

  std::string twice = runAndReport(2);
  EXPECT_NE(twice.find("    (S) 8 fused    - Number of residual adds fused\n"),
            std::string::npos)
      << twice;
}

INSTANTIATE_TEST_SUITE_P(Threading, PassStatisticsTest, ::testing::Bool());
