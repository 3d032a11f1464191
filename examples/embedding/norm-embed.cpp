//===- norm-embed.cpp - A compiler driver embedding norm-mlir ---*- C++ -*-===//
//
// An out-of-tree compiler driver on the installed norm-mlir: reads a .mlir
// module, lowers it to the LLVM dialect with norm-cpu-pipeline and writes
// the result as MLIR or LLVM IR.
//
//   norm-embed INPUT.mlir [-o OUTPUT] [--pipeline=PIPELINE] [--emit=mlir|llvm]
//
// Without --pipeline, the pipeline is built by the C++ API
// (buildNormCPUPipeline), which needs no pass registration. With it, the
// text lists the passes to run on the module, without the builtin.module
// anchor (e.g. 'norm-raise,norm-cpu-pipeline{threads=4}'), by the names
// registerAllNormPasses and mlir::registerAllPasses register. Either way the
// context comes from registerNormPipelineDialects's registry.
//
//===----------------------------------------------------------------------===//

#include "norm/InitAllNorm.h"
#include "norm/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

static int usage(const char *message = nullptr) {
  if (message)
    llvm::errs() << "norm-embed: " << message << "\n";
  llvm::errs() << "usage: norm-embed INPUT.mlir [-o OUTPUT] "
                  "[--pipeline=PIPELINE] [--emit=mlir|llvm]\n";
  return 2;
}

int main(int argc, char **argv) {
  std::string input, output = "-", pipeline, emit = "mlir";
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (arg.consume_front("--pipeline="))
      pipeline = arg.str();
    else if (arg.consume_front("--emit="))
      emit = arg.str();
    else if (arg.starts_with("-") && arg != "-")
      return usage(("unknown option '" + arg + "'").str().c_str());
    else if (input.empty())
      input = arg.str();
    else
      return usage("more than one input");
  }
  if (input.empty())
    return usage("no input");
  if (emit != "mlir" && emit != "llvm")
    return usage("--emit must be 'mlir' or 'llvm'");

  // Everything the norm pipelines need of a context: dialects, their
  // bufferization/convert-to-llvm/... models, the LLVM IR translations.
  DialectRegistry registry;
  norm::registerNormPipelineDialects(registry);
  MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "norm-embed: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return 1;

  PassManager pm(&context, ModuleOp::getOperationName());
  if (pipeline.empty()) {
    // The C++ API: no pass registry involved.
    norm::NormCPUPipelineOptions options;
    if (failed(norm::buildNormCPUPipeline(pm, options)))
      return 1;
  } else {
    // A textual pipeline: the passes it names must be registered. It is
    // added to `pm`, which is anchored on builtin.module already (an anchor
    // in the text would nest a second builtin.module pipeline, which would
    // find no module to run on).
    registerAllPasses();
    norm::registerAllNormPasses();
    if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
      return 1;
  }
  if (failed(pm.run(*module)))
    return 1;

  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << "norm-embed: " << error << "\n";
    return 1;
  }
  if (emit == "mlir") {
    module->print(out->os());
  } else {
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, "norm-embed");
    if (!llvmModule)
      return 1;
    llvmModule->print(out->os(), nullptr);
  }
  out->keep();
  return 0;
}
