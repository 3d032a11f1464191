//===- JIT.h - Compile and load norm modules in memory ----------*- C++ -*-===//
//
// A thin layer over mlir::ExecutionEngine for tools and bindings: parse a
// module, run a pass pipeline (norm-cpu-pipeline by default) and JIT-compile
// it for the host, with every diagnostic collected as text.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_EXECUTIONENGINE_JIT_H
#define NORM_EXECUTIONENGINE_JIT_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>

namespace mlir {
namespace norm {

/// Creates a context from registerNormPipelineDialects's registry (every
/// upstream dialect and extension, the norm dialect, the LLVM IR
/// translations).
std::unique_ptr<MLIRContext> createNormContext();

/// Registers every upstream and norm pass and pipeline (once per process).
void registerAllPassesOnce();

/// Parses `source` in `context` and runs the textual pass `pipeline` on it
/// (the elements of a builtin.module pipeline, e.g. "norm-cpu-pipeline").
/// Returns the module, or null with the diagnostics in `errorMessage`.
OwningOpRef<Operation *> parseAndTransform(MLIRContext &context,
                                           llvm::StringRef source,
                                           llvm::StringRef pipeline,
                                           std::string &errorMessage);

/// A module compiled to machine code for the host CPU (the target machine
/// is the host's; functions that norm-cpu-pipeline{target-cpu=...} marked
/// with another CPU are compiled for that one, whose features the host must
/// have).
class JITModule {
public:
  /// Parses `source`, lowers it with `pipeline` to the LLVM dialect and
  /// JIT-compiles it at -O3. `sharedLibs` are loaded first (e.g. the OpenMP
  /// runtime for threads > 1). Returns null with `errorMessage` on failure.
  static std::unique_ptr<JITModule>
  compile(llvm::StringRef source, llvm::StringRef pipeline,
          std::string &errorMessage,
          llvm::ArrayRef<llvm::StringRef> sharedLibs = {});

  /// The address of `_mlir_ciface_<name>` (functions with
  /// `llvm.emit_c_interface`), or null.
  void *lookupCInterface(llvm::StringRef name) const;

  /// Calls a packed wrapper (`invokePacked`): `args` holds pointers to each
  /// argument and then to each result.
  llvm::Error invokePacked(llvm::StringRef name,
                           llvm::MutableArrayRef<void *> args) const;

private:
  JITModule() = default;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ExecutionEngine> engine;
};

/// Path of the OpenMP runtime the CPU pipeline's threads need, or "" when it
/// is not installed.
std::string findOpenMPRuntime();

} // namespace norm
} // namespace mlir

#endif // NORM_EXECUTIONENGINE_JIT_H
