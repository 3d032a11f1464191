//===- Paired.cpp - Kernels timed back to back with floors ------*- C++ -*-===//
//
// A pair is a batch of kernel calls and the same number of copies right
// after it: within a pair the machine's bandwidth is (nearly) the same, so
// the ratio of the two times compares the kernel with the copy, whatever
// the other tenants of the memory bus do.
//
//===----------------------------------------------------------------------===//

#include "Paired.h"

#include <algorithm>
#include <chrono>
#include <vector>

using namespace norm_bench;

namespace {

using Clock = std::chrono::steady_clock;

/// Seconds that `count` calls of `body` take.
double timeCalls(const std::function<void()> &body, int64_t count) {
  Clock::time_point start = Clock::now();
  for (int64_t i = 0; i < count; ++i)
    body();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Batch size for pairs of about `target` seconds of kernel time: grows the
/// number of calls timed until one measurement takes 0.2 ms.
int64_t calibrateBatch(const std::function<void()> &kernel, double target) {
  kernel();
  for (int64_t calls = 1;; calls *= 4) {
    double seconds = timeCalls(kernel, calls);
    if (seconds >= 2e-4 || calls >= (int64_t(1) << 20))
      return std::clamp<int64_t>(int64_t(target / (seconds / double(calls))), 1,
                                 int64_t(1) << 20);
  }
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2;
}

} // namespace

void norm_bench::runPaired(benchmark::State &state,
                           const std::function<void()> &kernel,
                           const Floors &floors, size_t bytes, int64_t &batch) {
  if (batch == 0)
    batch = calibrateBatch(kernel, 2e-3);
  std::vector<double> ntRatios, copyRatios;
  double ntSeconds = 0, copySeconds = 0;
  int64_t calls = 0;
  while (state.KeepRunningBatch(batch)) {
    double kernelTime = timeCalls(kernel, batch);
    double ntTime = timeCalls(floors.copyNT, batch);
    double copyTime = timeCalls(floors.copy, batch);
    state.SetIterationTime(kernelTime);
    ntRatios.push_back(ntTime / kernelTime);
    copyRatios.push_back(copyTime / kernelTime);
    ntSeconds += ntTime;
    copySeconds += copyTime;
    calls += batch;
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  double moved = double(calls) * double(bytes);
  state.counters[kPairedNTRatio] = median(ntRatios);
  state.counters[kPairedCopyRatio] = median(copyRatios);
  state.counters[kPairedNTRate] = ntSeconds > 0 ? moved / ntSeconds : 0;
  state.counters[kPairedCopyRate] = copySeconds > 0 ? moved / copySeconds : 0;
}
