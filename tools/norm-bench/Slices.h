//===- Slices.h - Norm + matmul slices for norm-bench -----------*- C++ -*-===//
//
// Slices of a transformer block in which a norm meets matmuls, compiled
// unfused, with the norm's weights folded into the matmuls, and tile-fused
// with them (norm-fold-matmul-weights, norm-fuse-matmul), all through
// norm-cpu-pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_SLICES_H
#define NORM_TOOLS_NORMBENCH_SLICES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace norm_bench {

struct SliceKernel;

/// The compiled slices; they must outlive the benchmark run (and be
/// destroyed before the process exits, not by static destructors).
class SliceKernels {
public:
  SliceKernels();
  ~SliceKernels();
  /// Registers one Google Benchmark per slice, shape and implementation
  /// (`<slice>/<impl>/<M>x<H>/f32`), after compiling each and checking its
  /// outputs against the unfused one. Returns false when one does not
  /// compile or disagrees. `registerCase` is norm-bench's helper (name,
  /// bytes, body).
  bool registerBenchmarks(
      unsigned threads, bool quick, const std::vector<llvm::StringRef> &libs,
      const std::function<void(const std::string &, size_t,
                               std::function<void()>)> &registerCase);

private:
  std::vector<std::unique_ptr<SliceKernel>> kernels;
};

/// Prints the slice table: median time, GB/s of the bytes a slice must move
/// (inputs, matmul weights, outputs), GFLOP/s and speed-up over unfused.
/// `times` holds median real times in microseconds by benchmark name.
void printSliceSummary(const std::map<std::string, double> &times);

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_SLICES_H
