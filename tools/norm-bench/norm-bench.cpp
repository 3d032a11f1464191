//===- norm-bench.cpp - Normalization benchmarks vs bandwidth floors ------===//
//
// Measures norm ops compiled by norm-cpu-pipeline (direct and linalg paths,
// static and dynamic leading dims, JIT and ahead of time, the host's vector
// width and 256 bits) against plain C++ loops, oneDNN and PyTorch, and
// against the machine's copy floors measured in the same run on the same
// byte counts. Reports effective GB/s (median of repetitions) and ratios to
// both floors; with --paired, the median of ratios to floors timed back to
// back with each kernel.
//
// Benchmark names: <case>/<impl>/<M>x<N>/<dtype>.
//
//===----------------------------------------------------------------------===//

#include "AOT.h"
#include "Grad.h"
#include "Kernels.h"
#include "Paired.h"
#include "Quant.h"
#include "Slices.h"
#include "baselines/Baselines.h"
#include "norm/ExecutionEngine/JIT.h"
#include "norm/Support/HostCPU.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace norm_bench;

namespace {

/// How one of our implementations is built.
struct Variant {
  const char *impl;
  /// Built by norm-aot (else JIT-compiled here).
  bool aot;
  /// Compiled for a dynamic leading dim (`?xN`), called with M rows.
  bool dynamic;
  /// The JIT's pass pipeline.
  std::string pipeline;
};

/// The implementations of the summary table, in its order.
const char *const kSummaryImpls[] = {"norm",    "norm_dyn",   "aot",
                                     "aot_dyn", "norm_vw256", "linalg",
                                     "naive",   "onednn",     "torch"};

/// Google Benchmark's --benchmark_filter, applied before anything is
/// compiled so that a filtered run builds only the kernels it times.
class Selection {
public:
  explicit Selection(llvm::StringRef filter) {
    if (filter.empty() || filter == "all")
      return;
    negative = filter.consume_front("-");
    regex.emplace(filter, llvm::Regex::NoFlags);
    // An expression llvm::Regex does not take selects everything;
    // Google Benchmark judges it.
    std::string error;
    if (!regex->isValid(error))
      regex.reset();
  }
  /// Whether Google Benchmark runs `name`, registered with `repetitions`
  /// and manual or real time (its full name has those suffixes).
  bool selects(const std::string &name, int repetitions,
               bool manualTime) const {
    if (!regex)
      return true;
    std::string full = llvm::formatv("{0}/repeats:{1}/{2}", name, repetitions,
                                     manualTime ? "manual_time" : "real_time");
    bool matches = regex->match(name) || regex->match(full);
    return matches != negative;
  }

private:
  bool negative = false;
  std::optional<llvm::Regex> regex;
};

/// The medians of one benchmark.
struct Medians {
  double bytesPerSecond = 0;
  /// Real (or manual) time per call, in the benchmark's unit (microseconds).
  double time = 0;
  /// The paired counters (Paired.h), when paired.
  std::optional<double> ntRatio, copyRatio, ntRate, copyRate;
};

/// Collects the median aggregate of every benchmark.
class SummaryReporter : public benchmark::ConsoleReporter {
public:
  /// Colors only on a terminal: a reporter given to RunSpecifiedBenchmarks
  /// does not see --benchmark_color.
  SummaryReporter()
      : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs) {
      // The median aggregate; a single repetition has no aggregates.
      bool median = run.run_type == Run::RT_Aggregate
                        ? run.aggregate_name == "median"
                        : run.repetitions <= 1;
      if (!median)
        continue;
      Medians &entry = medians[run.run_name.function_name];
      auto counter = [&](const char *name) -> std::optional<double> {
        auto it = run.counters.find(name);
        if (it == run.counters.end())
          return std::nullopt;
        return it->second.value;
      };
      entry.bytesPerSecond = counter("bytes_per_second").value_or(0);
      entry.time = run.GetAdjustedRealTime();
      entry.ntRatio = counter(kPairedNTRatio);
      entry.copyRatio = counter(kPairedCopyRatio);
      entry.ntRate = counter(kPairedNTRate);
      entry.copyRate = counter(kPairedCopyRate);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, Medians> medians;
};

/// Reads `<name> -> bytes_per_second` medians from a Google Benchmark JSON
/// file (e.g. the PyTorch script's output).
void mergeJSON(const std::string &path, std::map<std::string, Medians> &into) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << "norm-bench: cannot read " << path << "\n";
    return;
  }
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::errs() << "norm-bench: " << path << ": "
                 << llvm::toString(json.takeError()) << "\n";
    return;
  }
  const llvm::json::Array *list =
      json->getAsObject() ? json->getAsObject()->getArray("benchmarks")
                          : nullptr;
  if (!list)
    return;
  for (const llvm::json::Value &entry : *list) {
    const llvm::json::Object *object = entry.getAsObject();
    if (!object)
      continue;
    auto name = object->getString("run_name");
    auto aggregate = object->getString("aggregate_name");
    auto rate = object->getNumber("bytes_per_second");
    if (name && rate && (!aggregate || *aggregate == "median"))
      into[name->str()].bytesPerSecond = *rate;
  }
}

/// "12.3" or "-" when absent.
std::string column(std::optional<double> value, int width, int precision) {
  if (!value || *value <= 0)
    return std::string(width - 1, ' ') + "-";
  return llvm::formatv(("{0," + std::to_string(width) + ":F" +
                        std::to_string(precision) + "}")
                           .c_str(),
                       *value)
      .str();
}

/// The summary table: per shape and dtype, the floors' GB/s and every
/// case and implementation's median GB/s with its ratios to the floors
/// (unpaired: ratio of medians; paired: median of per-pair ratios).
void printSummary(const std::vector<Shape> &shapes,
                  const std::vector<DType> &dtypes,
                  const std::vector<Case> &cases,
                  std::map<std::string, Medians> &medians, unsigned threads,
                  bool paired) {
  llvm::outs() << llvm::formatv(
      "\nSummary ({0} threads; host: {1}-bit vectors, {2}; GB/s = median "
      "bytes moved per second; x copy / x nt = ratio of medians to the plain "
      "and non-temporal copy of the same shape{3})\n",
      threads, mlir::norm::getHostVectorWidth(),
      mlir::norm::describeHostVectorFeatures(),
      paired ? "; paired: nt GB/s = the non-temporal copy timed with the "
               "kernel, pair copy / pair nt = median of per-pair ratios "
               "(floor time / kernel time)"
             : "");
  llvm::outs() << llvm::formatv("{0,-36} {1,8} {2,8} {3,8}", "benchmark",
                                "GB/s", "x copy", "x nt");
  if (paired)
    llvm::outs() << llvm::formatv(" {0,8} {1,9} {2,8}", "nt GB/s", "pair copy",
                                  "pair nt");
  llvm::outs() << "\n";
  for (Shape shape : shapes) {
    for (DType dtype : dtypes) {
      std::string copyName = benchmarkName("copy", "floor", shape, dtype);
      std::string ntName = benchmarkName("copy_nt", "floor", shape, dtype);
      double copy =
          medians.count(copyName) ? medians[copyName].bytesPerSecond : 0.0;
      double nt = medians.count(ntName) ? medians[ntName].bytesPerSecond : 0.0;
      for (auto [name, rate] : {std::pair{copyName, copy}, {ntName, nt}})
        if (rate > 0)
          llvm::outs() << llvm::formatv("{0,-36} {1,8:F1}\n", name, rate / 1e9);
      for (Case kind : cases) {
        for (const char *impl : kSummaryImpls) {
          std::string name = benchmarkName(caseName(kind), impl, shape, dtype);
          auto it = medians.find(name);
          if (it == medians.end())
            continue;
          const Medians &m = it->second;
          auto ratio = [&](double floor) -> std::optional<double> {
            if (floor <= 0)
              return std::nullopt;
            return m.bytesPerSecond / floor;
          };
          llvm::outs() << llvm::formatv(
              "{0,-36} {1} {2} {3}", name, column(m.bytesPerSecond / 1e9, 8, 1),
              column(ratio(copy), 8, 2), column(ratio(nt), 8, 2));
          if (paired)
            llvm::outs() << llvm::formatv(
                " {0} {1} {2}",
                column(m.ntRate ? std::optional(*m.ntRate / 1e9) : std::nullopt,
                       8, 1),
                column(m.copyRatio, 9, 2), column(m.ntRatio, 8, 2));
          llvm::outs() << "\n";
        }
      }
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  // Our flags; everything else goes to Google Benchmark.
  bool quick = false, summaryOnly = false, slices = false, onlySlices = false;
  bool quant = false, onlyQuant = false;
  bool grad = false, onlyGrad = false;
  bool paired = false;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int repetitions = 10;
  std::vector<std::string> merges;
  std::vector<char *> gbenchArgs{argv[0]};
  std::string jsonOut, filter, aotTool;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--summary") {
      quick = summaryOnly = true;
    } else if (arg == "--slices") {
      slices = true;
    } else if (arg == "--only-slices") {
      slices = onlySlices = true;
    } else if (arg == "--quant") {
      quant = true;
    } else if (arg == "--only-quant") {
      quant = onlyQuant = true;
    } else if (arg == "--grad") {
      grad = true;
    } else if (arg == "--only-grad") {
      grad = onlyGrad = true;
    } else if (arg == "--paired") {
      paired = true;
    } else if (arg.consume_front("--threads=")) {
      if (arg.getAsInteger(10, threads) || threads < 1) {
        llvm::errs() << "norm-bench: --threads expects a positive integer\n";
        return 2;
      }
    } else if (arg.consume_front("--repetitions=")) {
      if (arg.getAsInteger(10, repetitions) || repetitions < 1) {
        llvm::errs() << "norm-bench: --repetitions expects a positive "
                        "integer\n";
        return 2;
      }
    } else if (arg.consume_front("--merge=")) {
      merges.push_back(arg.str());
    } else if (arg.consume_front("--json=")) {
      jsonOut = arg.str();
    } else if (arg.consume_front("--norm-aot=")) {
      aotTool = arg.str();
    } else if (arg == "--help") {
      llvm::outs() << "usage: norm-bench [--quick|--summary] [--paired] "
                      "[--slices|--only-slices] [--quant|--only-quant] "
                      "[--grad|--only-grad] "
                      "[--threads=N] "
                      "[--repetitions=N] [--json=FILE] [--merge=TORCH.json] "
                      "[--norm-aot=PATH] [Google Benchmark flags]\n"
                      "  --paired       time each kernel back to back with "
                      "copies of the same bytes;\n"
                      "                 report the median of the per-pair "
                      "ratios\n"
                      "  --slices       also norm + matmul slices (unfused, "
                      "folded, fused)\n"
                      "  --only-slices  only those\n"
                      "  --quant        also norm + FP8/int8 quantization "
                      "(fused, unfused)\n"
                      "  --only-quant   only those\n"
                      "  --grad         also the gradient ops (layer_norm, "
                      "rms_norm)\n"
                      "  --only-grad    only those\n"
                      "  --norm-aot     the norm-aot that builds the aot "
                      "kernels (default: next to norm-bench)\n";
      return 0;
    } else {
      if (arg.starts_with("--benchmark_filter="))
        filter = arg.drop_front(strlen("--benchmark_filter=")).str();
      gbenchArgs.push_back(argv[i]);
    }
  }
  std::string outFlag, formatFlag = "--benchmark_out_format=json";
  if (!jsonOut.empty()) {
    outFlag = "--benchmark_out=" + jsonOut;
    gbenchArgs.push_back(outFlag.data());
    gbenchArgs.push_back(formatFlag.data());
  }
  if (quick)
    repetitions = std::min(repetitions, summaryOnly ? 3 : 5);
  int gbenchArgc = gbenchArgs.size();
  benchmark::Initialize(&gbenchArgc, gbenchArgs.data());
  Selection selection(filter);

  setBaselineThreads(threads);
  std::string openmp = mlir::norm::findOpenMPRuntime();
  std::vector<llvm::StringRef> libs;
  if (threads > 1) {
    if (openmp.empty()) {
      llvm::errs() << "norm-bench: --threads > 1 needs the OpenMP runtime "
                      "(libomp-22-dev); using 1 thread for our kernels\n";
      threads = 1;
    } else {
      libs.push_back(openmp);
    }
  }
  benchmark::AddCustomContext("host_vector_width",
                              std::to_string(mlir::norm::getHostVectorWidth()));
  benchmark::AddCustomContext("host_vector_features",
                              mlir::norm::describeHostVectorFeatures());
  benchmark::AddCustomContext("norm_bench_threads", std::to_string(threads));
  benchmark::AddCustomContext("norm_bench_paired", paired ? "true" : "false");

  std::vector<Shape> shapes = {
      {8192, 4096}, {4096, 768}, {32, 8192}, {1, 4096}};
  if (quick)
    shapes = {{4096, 4096}, {32, 8192}};
  if (summaryOnly)
    shapes = {{4096, 4096}};
  std::vector<DType> dtypes = {DType::F32, DType::BF16};
  std::vector<Case> cases = {Case::LayerNorm, Case::RMSNorm, Case::DyT,
                             Case::AddRMSNorm};
  std::string direct =
      llvm::formatv("norm-cpu-pipeline{{threads={0}}", threads);
  std::string vw256 = llvm::formatv(
      "norm-cpu-pipeline{{threads={0} vector-width=256}", threads);
  std::string linalg =
      llvm::formatv("norm-cpu-pipeline{{lowering=linalg threads={0}}", threads);
  std::vector<Variant> variants = {{"norm", false, false, direct},
                                   {"norm_dyn", false, true, direct},
                                   {"aot", true, false, ""},
                                   {"aot_dyn", true, true, ""},
                                   {"norm_vw256", false, false, vw256},
                                   {"linalg", false, false, linalg}};
  // The demo's summary stays short: our kernel on the two lowerings only.
  if (summaryOnly)
    llvm::erase_if(variants, [](const Variant &variant) {
      return llvm::StringRef(variant.impl) != "norm" &&
             llvm::StringRef(variant.impl) != "linalg";
    });

  // Everything is allocated and compiled before anything is measured, but
  // only what --benchmark_filter selects.
  auto registerCase = [&](const std::string &name, size_t bytes,
                          std::function<void()> body) {
    benchmark::RegisterBenchmark(
        name.c_str(),
        [body, bytes](benchmark::State &state) {
          for (auto _ : state)
            body();
          state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
        })
        ->Repetitions(repetitions)
        ->ReportAggregatesOnly(true)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };
  auto registerPaired = [&](const std::string &name, size_t bytes,
                            std::function<void()> body, Floors floors) {
    auto batch = std::make_shared<int64_t>(0);
    benchmark::RegisterBenchmark(
        name.c_str(),
        [body, bytes, floors, batch](benchmark::State &state) {
          runPaired(state, body, floors, bytes, *batch);
        })
        ->Repetitions(repetitions)
        ->ReportAggregatesOnly(true)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  };
  auto selected = [&](const std::string &name, bool kernel) {
    return selection.selects(name, repetitions, paired && kernel);
  };

  if (onlySlices || onlyQuant || onlyGrad)
    shapes.clear();
  // A case registered with its floors: copies of half its bytes.
  auto registerWithFloors = [&](const std::string &name, size_t bytes,
                                std::function<void()> body, const void *source,
                                void *destination) {
    size_t half = bytes / 2;
    if (paired)
      registerPaired(name, bytes, std::move(body),
                     Floors{[source, destination, half] {
                              copyFloor(source, destination, half);
                            },
                            [source, destination, half] {
                              copyNonTemporalFloor(source, destination, half);
                            }});
    else
      registerCase(name, bytes, std::move(body));
  };
  auto selectedKernel = [&](const std::string &name) {
    return selected(name, true);
  };
  QuantKernels quantKernels;
  if (quant && !quantKernels.registerBenchmarks(
                   threads, quick, libs, selectedKernel, registerWithFloors))
    return 1;
  GradKernels gradKernels;
  if (grad && !gradKernels.registerBenchmarks(
                  threads, quick, libs, selectedKernel, registerWithFloors))
    return 1;
  SliceKernels sliceKernels;
  if (slices && !sliceKernels.registerBenchmarks(
                    threads, quick, libs,
                    [&](const std::string &name, size_t bytes,
                        std::function<void()> body) {
                      registerCase(name, bytes, std::move(body));
                    }))
    return 1;

  std::string aotError;
  if (aotTool.empty())
    aotTool = (llvm::sys::path::parent_path(llvm::sys::fs::getMainExecutable(
                   argv[0], reinterpret_cast<void *>(&main))) +
               "/norm-aot")
                  .str();
  AOTKernels aotKernels;
  bool haveAOT = false;
  std::vector<std::unique_ptr<Workspace>> workspaces;
  std::vector<std::unique_ptr<Kernel>> kernels;
  /// Our kernels of one case, shape and dtype, checked against each other.
  struct Group {
    Case kind;
    Workspace *ws;
    std::vector<std::pair<std::string, Kernel *>> kernels;
  };
  std::vector<Group> groups;
  for (Shape shape : shapes) {
    for (DType dtype : dtypes) {
      // A shape the filter leaves out gets no buffers.
      std::vector<std::string> names;
      for (const char *floor : {"copy", "copy_nt"})
        names.push_back(benchmarkName(floor, "floor", shape, dtype));
      for (Case kind : cases)
        for (const char *impl : kSummaryImpls)
          names.push_back(benchmarkName(caseName(kind), impl, shape, dtype));
      if (llvm::none_of(names, [&](const std::string &name) {
            return selected(name, !llvm::StringRef(name).contains("/floor/"));
          }))
        continue;
      workspaces.push_back(std::make_unique<Workspace>(shape, dtype));
      Workspace &ws = *workspaces.back();
      size_t matrixBytes = Workspace::matrixBytes(shape, dtype);
      std::string name = benchmarkName("copy", "floor", shape, dtype);
      if (selected(name, false))
        registerCase(name, 2 * matrixBytes, [&ws, matrixBytes] {
          copyFloor(ws.x(), ws.y(), matrixBytes);
        });
      name = benchmarkName("copy_nt", "floor", shape, dtype);
      if (selected(name, false))
        registerCase(name, 2 * matrixBytes, [&ws, matrixBytes] {
          copyNonTemporalFloor(ws.x(), ws.y(), matrixBytes);
        });
      for (Case kind : cases) {
        size_t bytes = caseBytes(kind, shape, dtype);
        // The floors of the same bytes: x (and residual) copied to y (and
        // residual_out), which are adjacent.
        Floors floors{
            [&ws, bytes] { copyFloor(ws.x(), ws.y(), bytes / 2); },
            [&ws, bytes] { copyNonTemporalFloor(ws.x(), ws.y(), bytes / 2); }};
        auto add = [&](const std::string &name, std::function<void()> body) {
          if (paired)
            registerPaired(name, bytes, std::move(body), floors);
          else
            registerCase(name, bytes, std::move(body));
        };
        groups.push_back({kind, &ws, {}});
        for (const Variant &variant : variants) {
          std::string name =
              benchmarkName(caseName(kind), variant.impl, shape, dtype);
          if (!selected(name, true))
            continue;
          std::unique_ptr<Kernel> kernel;
          if (variant.aot) {
            if (!haveAOT && aotError.empty() &&
                !aotKernels.init(aotTool, threads, openmp, aotError))
              llvm::errs() << "norm-bench: " << aotError
                           << "; the aot kernels are left out\n";
            if (!aotError.empty())
              continue;
            haveAOT = true;
            kernel = std::make_unique<Kernel>(kind, ws);
            aotKernels.add(kernel.get(),
                           llvm::formatv("{0}_{1}_{2}x{3}_{4}", caseName(kind),
                                         variant.impl, shape.rows, shape.cols,
                                         typeName(dtype)),
                           variant.dynamic);
          } else {
            kernel = compileJITKernel(kind, ws, variant.dynamic,
                                      variant.pipeline, libs);
            if (!kernel)
              return 1;
          }
          Kernel *raw = kernel.get();
          kernels.push_back(std::move(kernel));
          groups.back().kernels.push_back({name, raw});
          add(name, [raw] { raw->call(); });
        }
        Problem problem = ws.problem();
        name = benchmarkName(caseName(kind), "naive", shape, dtype);
        if (selected(name, true))
          add(name, [kind, problem] { runNaive(kind, problem); });
        name = benchmarkName(caseName(kind), "onednn", shape, dtype);
        if (selected(name, true) && oneDNNSupports(kind, problem))
          add(name, [kind, problem] { runOneDNN(kind, problem); });
      }
    }
  }
  if (haveAOT && !aotKernels.buildAll(std::thread::hardware_concurrency()))
    return 1;
  // Every path computes what the first one does (a binding mistake or a
  // miscompiled path must not be timed).
  for (const Group &group : groups)
    if (!checkAgreement(group.kind, *group.ws, group.kernels))
      return 1;

  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::map<std::string, Medians> medians = reporter.medians;
  for (const std::string &path : merges)
    mergeJSON(path, medians);
  if (!shapes.empty())
    printSummary(shapes, dtypes, cases, medians, threads, paired);
  // PyTorch's merged rates (entries without a time of ours).
  std::map<std::string, double> torchRates;
  for (const auto &[name, entry] : medians)
    if (llvm::StringRef(name).contains("/torch/"))
      torchRates[name] = entry.bytesPerSecond;
  if (quant) {
    std::map<std::string, QuantMedian> quantMedians;
    for (const auto &[name, entry] : medians)
      quantMedians[name] = {entry.time, entry.ntRatio.value_or(0.0),
                            entry.ntRate.value_or(0.0)};
    printQuantSummary(quantMedians, torchRates, paired);
  }
  if (grad) {
    std::map<std::string, double> times, ntRatios;
    for (const auto &[name, entry] : medians) {
      times[name] = entry.time;
      ntRatios[name] = entry.ntRatio.value_or(0.0);
    }
    printGradSummary(times, ntRatios, torchRates, paired);
  }
  if (slices) {
    std::map<std::string, double> times;
    for (const auto &[name, entry] : reporter.medians)
      times[name] = entry.time;
    printSliceSummary(times);
  }
  return 0;
}
