//===- JIT.cpp - Compile and load norm modules in memory --------*- C++ -*-===//
//
// Parsing, lowering and JIT compilation of norm modules for tools and
// bindings, with diagnostics collected as text.
//
//===----------------------------------------------------------------------===//

#include "norm/ExecutionEngine/JIT.h"
#include "norm/InitAllNorm.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"

#include <functional>
#include <mutex>

using namespace mlir;
using namespace mlir::norm;

std::unique_ptr<MLIRContext> mlir::norm::createNormContext() {
  DialectRegistry registry;
  registerNormPipelineDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

void mlir::norm::registerAllPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    registerAllNormPasses();
  });
}

OwningOpRef<Operation *>
mlir::norm::parseAndTransform(MLIRContext &context, llvm::StringRef source,
                              llvm::StringRef pipeline,
                              std::string &errorMessage) {
  registerAllPassesOnce();
  llvm::raw_string_ostream errors(errorMessage);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    errors << diag.getLocation() << ": " << diag.str() << "\n";
    for (const Diagnostic &note : diag.getNotes())
      errors << note.getLocation() << ": note: " << note.str() << "\n";
    return success();
  });
  OwningOpRef<Operation *> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context), "<source>");
  if (!module) {
    if (errorMessage.empty())
      errors << "failed to parse the module\n";
    return nullptr;
  }
  if (pipeline.empty())
    return module;
  PassManager pm(&context, module->getName().getStringRef());
  if (failed(parsePassPipeline(pipeline, pm, errors))) {
    errors << "invalid pass pipeline '" << pipeline << "'\n";
    return nullptr;
  }
  if (failed(pm.run(*module))) {
    if (errorMessage.empty())
      errors << "the pass pipeline failed\n";
    return nullptr;
  }
  return module;
}

std::unique_ptr<JITModule>
JITModule::compile(llvm::StringRef source, llvm::StringRef pipeline,
                   std::string &errorMessage,
                   llvm::ArrayRef<llvm::StringRef> sharedLibs) {
  static std::once_flag targetsOnce;
  std::call_once(targetsOnce, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });

  std::unique_ptr<JITModule> jit(new JITModule());
  jit->context = createNormContext();
  OwningOpRef<Operation *> module =
      parseAndTransform(*jit->context, source, pipeline, errorMessage);
  if (!module)
    return nullptr;

  // ExecutionEngineOptions::transformer is a function_ref: the function it
  // refers to must outlive ExecutionEngine::create.
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                /*targetMachine=*/nullptr);
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.sharedLibPaths = sharedLibs;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    errorMessage +=
        "JIT compilation failed: " + llvm::toString(engine.takeError()) + "\n";
    return nullptr;
  }
  jit->engine = std::move(*engine);
  return jit;
}

void *JITModule::lookupCInterface(llvm::StringRef name) const {
  auto address = engine->lookup(("_mlir_ciface_" + name).str());
  if (!address) {
    llvm::consumeError(address.takeError());
    return nullptr;
  }
  return *address;
}

llvm::Error JITModule::invokePacked(llvm::StringRef name,
                                    llvm::MutableArrayRef<void *> args) const {
  return engine->invokePacked(name, args);
}

std::string mlir::norm::findOpenMPRuntime() {
  for (const char *path : {"/usr/lib/llvm-22/lib/libomp.so",
                           "/usr/lib/x86_64-linux-gnu/libomp.so.5"})
    if (llvm::sys::fs::exists(path))
      return path;
  return "";
}
