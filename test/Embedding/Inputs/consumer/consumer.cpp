//===- consumer.cpp - An external C++ user of the norm dialect --*- C++ -*-===//
//
// Builds a norm.rms_norm with the C++ builders, verifies it and lowers it
// with the norm-to-linalg pass.
//
//===----------------------------------------------------------------------===//

#include "norm/Conversion/Passes.h"
#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main() {
  DialectRegistry registry;
  registry.insert<norm::NormDialect, func::FuncDialect, linalg::LinalgDialect,
                  math::MathDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto x = RankedTensorType::get({4, 16}, builder.getF32Type());
  auto w = RankedTensorType::get({16}, builder.getF32Type());
  auto func = func::FuncOp::create(builder, loc, "f",
                                   builder.getFunctionType({x, w}, {x}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  auto rms = norm::RMSNormOp::create(builder, loc, entry->getArgument(0),
                                     entry->getArgument(1));
  func::ReturnOp::create(builder, loc, rms.getY());
  if (failed(verify(*module)))
    return 1;
  llvm::outs() << "built: " << rms << "\n";

  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(norm::createNormToLinalgPass());
  if (failed(pm.run(*module)))
    return 1;
  int normOps = 0, generics = 0;
  module->walk([&](Operation *op) {
    normOps += isa<norm::NormOpInterface>(op);
    generics += isa<linalg::GenericOp>(op);
  });
  llvm::outs() << "after norm-to-linalg: norm ops " << normOps
               << ", linalg.generic " << (generics > 0 ? "yes" : "no") << "\n";
  return 0;
}
