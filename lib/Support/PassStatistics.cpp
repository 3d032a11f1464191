//===- PassStatistics.cpp - Pass statistics independent of LLVM's ---------===//
//
// The registry that maps a pass to its PassStatistic members, and the pass
// instrumentation that sums and reports them.
//
//===----------------------------------------------------------------------===//

#include "norm/Support/PassStatistics.h"

#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <mutex>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::norm;

namespace {
/// The statistics of every live pass that declares some. Passes are created
/// and destroyed on several threads (the pass manager clones a pipeline per
/// thread), hence the lock.
struct StatisticRegistry {
  std::mutex mutex;
  llvm::DenseMap<const Pass *, SmallVector<const PassStatistic *, 8>> byPass;
};
} // namespace

/// The process-wide registry. It is never destroyed, so that a pass
/// destroyed during static destruction still finds it.
static StatisticRegistry &getRegistry() {
  static StatisticRegistry *registry = new StatisticRegistry();
  return *registry;
}

PassStatistic::PassStatistic(Pass *owner, const char *name,
                             const char *description)
    : owner(owner), name(name), description(description) {
  StatisticRegistry &registry = getRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.byPass[owner].push_back(this);
}

PassStatistic::~PassStatistic() {
  StatisticRegistry &registry = getRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.byPass.find(owner);
  if (it == registry.byPass.end())
    return;
  llvm::erase(it->second, this);
  if (it->second.empty())
    registry.byPass.erase(it);
}

SmallVector<const PassStatistic *>
mlir::norm::getPassStatistics(const Pass *pass) {
  StatisticRegistry &registry = getRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.byPass.find(pass);
  if (it == registry.byPass.end())
    return {};
  return SmallVector<const PassStatistic *>(it->second.begin(),
                                            it->second.end());
}

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

namespace {
/// One statistic of the report, summed over the runs of a pass.
struct StatisticSum {
  std::string name;
  std::string description;
  uint64_t value = 0;
};

/// Records the statistics of each pass before it runs and adds what they
/// counted during the run to the sums of the pass's name (the clones a pass
/// manager makes for its threads share the name). Prints the report on
/// destruction, i.e. when the pass manager is destroyed.
class PassStatisticsInstrumentation : public PassInstrumentation {
public:
  explicit PassStatisticsInstrumentation(raw_ostream &os) : os(os) {}
  ~PassStatisticsInstrumentation() override { print(); }

  void runBeforePass(Pass *pass, Operation *) override {
    SmallVector<const PassStatistic *> statistics = getPassStatistics(pass);
    if (statistics.empty())
      return;
    SmallVector<uint64_t, 8> values;
    for (const PassStatistic *statistic : statistics)
      values.push_back(statistic->getValue());
    std::lock_guard<std::mutex> lock(mutex);
    valuesBefore[pass] = std::move(values);
  }
  void runAfterPass(Pass *pass, Operation *) override { addRun(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { addRun(pass); }

private:
  /// Adds what the statistics of `pass` counted since runBeforePass.
  void addRun(Pass *pass) {
    SmallVector<const PassStatistic *> statistics = getPassStatistics(pass);
    if (statistics.empty())
      return;
    std::lock_guard<std::mutex> lock(mutex);
    SmallVector<uint64_t, 8> before = valuesBefore.lookup(pass);
    valuesBefore.erase(pass);
    std::vector<StatisticSum> &sums = sumsByPass[pass->getName()];
    if (sums.empty())
      for (const PassStatistic *statistic : statistics)
        sums.push_back({statistic->getName(), statistic->getDescription()});
    for (auto [index, statistic] : llvm::enumerate(statistics)) {
      uint64_t start = index < before.size() ? before[index] : 0;
      sums[index].value += statistic->getValue() - start;
    }
  }

  /// Prints the sums like `-mlir-pass-statistics-display=list`.
  void print() {
    os << "===" << std::string(73, '-') << "===\n";
    StringRef title = "... Pass statistics report ...";
    os.indent((80 - title.size()) / 2) << title << "\n";
    os << "===" << std::string(73, '-') << "===\n";
    SmallVector<StringRef> passNames;
    for (const auto &entry : sumsByPass)
      passNames.push_back(entry.getKey());
    llvm::sort(passNames);
    for (StringRef passName : passNames) {
      std::vector<StatisticSum> sums = sumsByPass.lookup(passName);
      llvm::sort(sums, [](const StatisticSum &lhs, const StatisticSum &rhs) {
        return lhs.name < rhs.name;
      });
      size_t nameWidth = 0, valueWidth = 0;
      for (const StatisticSum &sum : sums) {
        nameWidth = std::max(nameWidth, sum.name.size());
        valueWidth = std::max(valueWidth, llvm::utostr(sum.value).size());
      }
      os.indent(2) << passName << "\n";
      for (const StatisticSum &sum : sums)
        os.indent(4) << "(S) "
                     << llvm::right_justify(llvm::utostr(sum.value), valueWidth)
                     << " " << llvm::left_justify(sum.name, nameWidth) << " - "
                     << sum.description << "\n";
    }
    os << "\n";
    os.flush();
  }

  raw_ostream &os;
  std::mutex mutex;
  llvm::DenseMap<const Pass *, SmallVector<uint64_t, 8>> valuesBefore;
  llvm::StringMap<std::vector<StatisticSum>> sumsByPass;
};
} // namespace

void mlir::norm::enableNormPassStatistics(PassManager &pm, raw_ostream &os) {
  pm.addInstrumentation(std::make_unique<PassStatisticsInstrumentation>(os));
}
