//===- AOT.h - Kernels built ahead of time by norm-aot ----------*- C++ -*-===//
//
// The ahead-of-time path users take without a JIT: norm-aot compiles a
// kernel to a shared library and a header; the library is loaded with
// dlopen and its `_mlir_ciface_<name>` entry called with the descriptors
// the header declares.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_AOT_H
#define NORM_TOOLS_NORMBENCH_AOT_H

#include "Kernels.h"

#include <string>
#include <vector>

namespace norm_bench {

/// Kernels built by one norm-aot executable into a temporary folder, which
/// is removed on destruction (the loaded libraries stay mapped).
class AOTKernels {
public:
  AOTKernels() = default;
  ~AOTKernels();
  AOTKernels(const AOTKernels &) = delete;
  AOTKernels &operator=(const AOTKernels &) = delete;

  /// Uses the norm-aot at `tool`, building kernels for `threads` threads;
  /// `openmp` is the OpenMP runtime the kernels need for threads > 1.
  /// Returns false with `error` when the tool or a folder is missing.
  bool init(const std::string &tool, unsigned threads,
            const std::string &openmp, std::string &error);

  /// Queues `kernel` (of its case, on its workspace's shape and dtype, with
  /// a static or a dynamic leading dim) under the entry point name `name`;
  /// buildAll() binds it.
  void add(Kernel *kernel, const std::string &name, bool dynamic);

  /// Runs norm-aot for every queued kernel, `jobs` at a time, loads the
  /// libraries and binds the kernels. Returns false with a message on stderr
  /// when one fails.
  bool buildAll(unsigned jobs);

  bool empty() const { return requests.empty(); }

private:
  struct Request {
    Kernel *kernel;
    std::string name;
    bool dynamic;
  };
  std::vector<std::string> commandLine(const Request &request) const;
  bool load(const Request &request);

  std::string tool, folder, openmp;
  unsigned threads = 1;
  std::vector<Request> requests;
};

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_AOT_H
