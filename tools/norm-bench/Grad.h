//===- Grad.h - Gradient cases for norm-bench -------------------*- C++ -*-===//
//
// The backward of LayerNorm (weight and bias) and RMSNorm (weight) on f32
// and bf16 rows: norm.layer_norm_grad / norm.rms_norm_grad compiled by
// norm-cpu-pipeline, paired with copies of the bytes they must move (read
// dy, x, the statistics and the weight; write dx, dweight and dbias).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_GRAD_H
#define NORM_TOOLS_NORMBENCH_GRAD_H

#include "Paired.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace norm_bench {

struct GradKernel;

/// The compiled gradient kernels; they must outlive the benchmark run.
class GradKernels {
public:
  GradKernels();
  ~GradKernels();
  /// Compiles every case (`<op>_grad/<M>x<N>/<dtype>`) that `selected`
  /// keeps, checks its dx against a scalar f64 computation on a few rows,
  /// and registers it with `add(name, bytes, body, floors-source,
  /// floors-destination)`. Returns false when one does not compile or
  /// disagrees.
  bool
  registerBenchmarks(unsigned threads, bool quick,
                     const std::vector<llvm::StringRef> &libs,
                     const std::function<bool(const std::string &)> &selected,
                     const AddFloorBenchmark &add);

private:
  std::vector<std::unique_ptr<GradKernel>> kernels;
};

/// Prints the gradient table: GB/s of the bytes each case must move and,
/// when paired, the ratio to the non-temporal copy of those bytes. `times`
/// and `ntRatios` are keyed by benchmark name; `torchRates` holds PyTorch's
/// merged rates (`<op>_grad/torch/<M>x<N>/<dtype>`, bytes per second of the
/// same bytes: eager autograd, forward + backward less forward).
void printGradSummary(const std::map<std::string, double> &times,
                      const std::map<std::string, double> &ntRatios,
                      const std::map<std::string, double> &torchRates,
                      bool paired);

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_GRAD_H
