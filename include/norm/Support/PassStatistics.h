//===- PassStatistics.h - Pass statistics independent of LLVM's -*- C++ -*-===//
//
// Counters for the norm passes and a pass instrumentation that reports them
// in the format of `-mlir-pass-statistics`. MLIR's own statistics
// (mlir::Pass::Statistic) derive from llvm::Statistic, which is a no-op in
// an LLVM built without assertions or LLVM_FORCE_ENABLE_STATS (Debian's,
// among others): there `-mlir-pass-statistics` prints an empty report.
// These counters count in every build.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_SUPPORT_PASSSTATISTICS_H
#define NORM_SUPPORT_PASSSTATISTICS_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>

namespace mlir {
namespace norm {

/// A statistic of a pass: a named counter that the pass increments like an
/// unsigned integer, declared as a member of the pass,
///
///   PassStatistic numFused{this, "fused", "Number of residual adds fused"};
///
/// It registers itself with its owning pass, where the instrumentation of
/// `enableNormPassStatistics` finds it. It cannot be copied: a pass that
/// declares one defines its copy constructor as `Pass(const Pass &other) :
/// Base(other), <its other members>(other...) {}`, so that the clone (made
/// by the pass manager for each thread) gets fresh statistics owned by
/// itself, as the generated pass bases do for options, and a copy of the
/// rest (e.g. the patterns `initialize` froze).
class PassStatistic {
public:
  PassStatistic(Pass *owner, const char *name, const char *description);
  ~PassStatistic();
  PassStatistic(const PassStatistic &) = delete;
  PassStatistic &operator=(const PassStatistic &) = delete;

  const char *getName() const { return name; }
  const char *getDescription() const { return description; }
  uint64_t getValue() const { return value.load(std::memory_order_relaxed); }
  operator uint64_t() const { return getValue(); }

  PassStatistic &operator=(uint64_t newValue) {
    value.store(newValue, std::memory_order_relaxed);
    return *this;
  }
  PassStatistic &operator++() {
    value.fetch_add(1, std::memory_order_relaxed);
    return *this;
  }
  PassStatistic &operator+=(uint64_t increment) {
    value.fetch_add(increment, std::memory_order_relaxed);
    return *this;
  }

private:
  const Pass *owner;
  const char *name;
  const char *description;
  std::atomic<uint64_t> value{0};
};

/// The statistics `pass` declares, in declaration order (empty for a pass
/// without PassStatistic members, e.g. every upstream pass).
SmallVector<const PassStatistic *> getPassStatistics(const Pass *pass);

/// Adds to `pm` an instrumentation that sums, over every run of a pass with
/// PassStatistic members (threads and repeated runs included), what each of
/// its statistics counted, and prints the sums to `os` when `pm` is
/// destroyed, in the list format of `-mlir-pass-statistics`: the passes by
/// name, each followed by `(S) <count> <name> - <description>` lines sorted
/// by statistic name. `os` must outlive `pm`. norm-opt's
/// `--norm-pass-statistics` calls this with llvm::errs().
void enableNormPassStatistics(PassManager &pm, raw_ostream &os = llvm::errs());

} // namespace norm
} // namespace mlir

#endif // NORM_SUPPORT_PASSSTATISTICS_H
