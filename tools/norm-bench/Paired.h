//===- Paired.h - Kernels timed back to back with their floors --*- C++ -*-===//
//
// On machines that share their memory bus, bandwidth moves between runs by
// 1.5x, so a ratio of two medians measured seconds apart is noise. A paired
// benchmark times a batch of kernel calls, then the same number of copies
// of the same bytes (non-temporal, then plain) right after, and reports the
// median of the per-pair time ratios.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_PAIRED_H
#define NORM_TOOLS_NORMBENCH_PAIRED_H

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace norm_bench {

/// Counters of a paired benchmark (per repetition; the median aggregate is
/// their median over repetitions).
/// Median over the repetition's pairs of (copy_nt time / kernel time).
constexpr const char kPairedNTRatio[] = "x_nt_paired";
/// Median over the repetition's pairs of (copy time / kernel time).
constexpr const char kPairedCopyRatio[] = "x_copy_paired";
/// Bytes per second of the paired copies over the repetition.
constexpr const char kPairedNTRate[] = "copy_nt_bytes_per_second";
constexpr const char kPairedCopyRate[] = "copy_bytes_per_second";

/// The floors of a kernel: copies of the bytes it moves.
struct Floors {
  std::function<void()> copy, copyNT;
};

/// Registers a benchmark `name` moving `bytes` per call of `body`, whose
/// floors copy half of them from `source` to `destination`.
using AddFloorBenchmark = std::function<void(
    const std::string &name, size_t bytes, std::function<void()> body,
    const void *source, void *destination)>;

/// Runs one repetition of a paired benchmark with manual time (the kernel's
/// time only): batches of `batch` kernel calls, each followed by `batch`
/// non-temporal and `batch` plain copies, all timed. `batch` is calibrated
/// on the first call (batches of about 2 ms) and kept across repetitions.
/// Sets bytes processed (`bytes` per kernel call) and the counters above.
void runPaired(benchmark::State &state, const std::function<void()> &kernel,
               const Floors &floors, size_t bytes, int64_t &batch);

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_PAIRED_H
