//===- Quant.h - Norm + quantization cases for norm-bench -------*- C++ -*-===//
//
// RMSNorm (with and without the residual add) whose bf16 output is
// quantized to FP8 e4m3fn or int8 (static scale, per-token and per-group
// dynamic scales) or to the block-scaled MXFP8, FP8 1x128, MXFP4 and NVFP4, the
// kernels every LLM serving stack hand-writes: the fused kernel (norm-lower-cpu
// computes the norm and its norm.quantize in one row loop) against the norm
// kernel followed by a separate quantize kernel, both paired with copies of the
// bytes the fused case must move.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_QUANT_H
#define NORM_TOOLS_NORMBENCH_QUANT_H

#include "Paired.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace norm_bench {

struct QuantKernel;

/// The medians of one benchmark the quantization table reads.
struct QuantMedian {
  /// Time per call in microseconds.
  double time = 0;
  /// Paired ratio copy_nt time / kernel time (0 when not paired).
  double ntRatio = 0;
  /// Bytes per second of the paired non-temporal copies (0 when not paired).
  double ntRate = 0;
};

/// The compiled quantization kernels; they must outlive the benchmark run.
class QuantKernels {
public:
  QuantKernels();
  ~QuantKernels();
  /// Compiles every case (`<case>/<impl>/<M>x<N>/bf16`, impl `fused`,
  /// `unfused` or `fused_vw256`, the fused kernel for 256-bit vectors, the
  /// AVX2 path on any host) that `selected` keeps, checks that the fused
  /// kernels compute exactly what the unfused pair does, and registers each with
  /// `add(name, bytes, body, floors-source, floors-destination)`. Returns
  /// false when one does not compile or disagrees.
  bool
  registerBenchmarks(unsigned threads, bool quick,
                     const std::vector<llvm::StringRef> &libs,
                     const std::function<bool(const std::string &)> &selected,
                     const AddFloorBenchmark &add);

private:
  std::vector<std::unique_ptr<QuantKernel>> kernels;
};

/// Prints the quantization table: GB/s of the bytes the fused case must
/// move, paired ratios to the non-temporal copy, the unfused pair, and
/// whether fusion saves at least the time of the y traffic it removes,
/// the fused kernel for 256-bit vectors where it was run;
/// with PyTorch's rates merged (`<case>/torch/<M>x<N>/bf16` in
/// `torchRates`, bytes per second of the same bytes), PyTorch's GB/s and
/// the fused kernel's speed-up over it.
void printQuantSummary(const std::map<std::string, QuantMedian> &medians,
                       const std::map<std::string, double> &torchRates,
                       bool paired);

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_QUANT_H
