//===- norm-bench.cpp - Normalization benchmarks vs bandwidth floors ------===//
//
// Measures norm ops compiled by norm-cpu-pipeline (direct and linalg paths)
// against plain C++ loops, oneDNN and PyTorch, and against the machine's
// copy floors measured in the same run on the same byte counts. Reports
// effective GB/s (median of repetitions) and ratios to both floors.
//
// Benchmark names: <case>/<impl>/<M>x<N>/<dtype>.
//
//===----------------------------------------------------------------------===//

#include "Slices.h"
#include "baselines/Baselines.h"
#include "norm/ExecutionEngine/JIT.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace norm_bench;

namespace {

struct Shape {
  int64_t rows, cols;
};

const char *caseName(Case kind) {
  switch (kind) {
  case Case::LayerNorm:
    return "layer_norm";
  case Case::RMSNorm:
    return "rms_norm";
  case Case::DyT:
    return "dyt";
  case Case::AddRMSNorm:
    return "add_rms_norm";
  }
  return "";
}

const char *typeName(DType dtype) {
  return dtype == DType::F32 ? "f32" : "bf16";
}
size_t typeSize(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

/// Bytes a case must move: read x (and residual), write y (and the residual
/// stream).
size_t caseBytes(Case kind, Shape shape, DType dtype) {
  size_t elements = size_t(shape.rows) * size_t(shape.cols);
  size_t streams = kind == Case::AddRMSNorm ? 4 : 2;
  return streams * elements * typeSize(dtype);
}

std::string benchmarkName(const std::string &kind, const std::string &impl,
                          Shape shape, DType dtype) {
  return llvm::formatv("{0}/{1}/{2}x{3}/{4}", kind, impl, shape.rows,
                       shape.cols, typeName(dtype))
      .str();
}

/// A 64-byte aligned buffer.
struct Buffer {
  explicit Buffer(size_t bytes) : size(bytes) {
    data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    std::memset(data, 0, bytes);
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer &) = delete;
  void *data;
  size_t size;
};

/// Fills `buffer` with pseudo-random values of mean `mean`.
void fillRandom(Buffer &buffer, DType dtype, float mean, float spread,
                unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, spread);
  size_t count = buffer.size / typeSize(dtype);
  for (size_t i = 0; i < count; ++i) {
    float v = dist(rng);
    if (dtype == DType::F32) {
      static_cast<float *>(buffer.data)[i] = v;
    } else {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      static_cast<uint16_t *>(buffer.data)[i] = uint16_t(bits >> 16);
    }
  }
}

/// The buffers of one (shape, dtype).
struct Workspace {
  Workspace(Shape shape, DType dtype)
      : x(bytes(shape, dtype)), residual(bytes(shape, dtype)),
        y(bytes(shape, dtype)), residualOut(bytes(shape, dtype)),
        weight(size_t(shape.cols) * typeSize(dtype)),
        bias(size_t(shape.cols) * typeSize(dtype)) {
    fillRandom(x, dtype, 0.5f, 1.5f, 1);
    fillRandom(residual, dtype, 0.0f, 1.0f, 2);
    fillRandom(weight, dtype, 1.0f, 0.2f, 3);
    fillRandom(bias, dtype, 0.0f, 0.1f, 4);
  }
  static size_t bytes(Shape shape, DType dtype) {
    return size_t(shape.rows) * size_t(shape.cols) * typeSize(dtype);
  }
  Buffer x, residual, y, residualOut, weight, bias;
};

/// MLIR source of a kernel writing into caller-provided buffers.
std::string kernelSource(Case kind, Shape shape, DType dtype) {
  std::string t = typeName(dtype);
  std::string mat = llvm::formatv("{0}x{1}x{2}", shape.rows, shape.cols, t);
  std::string vec = llvm::formatv("{0}x{1}", shape.cols, t);
  std::string memMat = "memref<" + mat + ">", tenMat = "tensor<" + mat + ">";
  std::string memVec = "memref<" + vec + ">", tenVec = "tensor<" + vec + ">";
  std::string args, body;
  auto input = [&](const std::string &name, bool matrix) {
    const std::string &mem = matrix ? memMat : memVec;
    const std::string &ten = matrix ? tenMat : tenVec;
    args += llvm::formatv("%{0}m: {1}, ", name, mem).str();
    body += llvm::formatv("  %{0} = bufferization.to_tensor %{0}m restrict : "
                          "{1} to {2}\n",
                          name, mem, ten)
                .str();
  };
  auto output = [&](const std::string &value, const std::string &name) {
    body += llvm::formatv("  bufferization.materialize_in_destination %{0} in "
                          "restrict writable %{1} : ({2}, {3}) -> ()\n",
                          value, name, tenMat, memMat)
                .str();
  };
  input("x", true);
  if (kind == Case::AddRMSNorm)
    input("r", true);
  input("w", false);
  if (kind == Case::LayerNorm || kind == Case::DyT)
    input("b", false);
  args += "%ym: " + memMat;
  if (kind == Case::AddRMSNorm)
    args += ", %sm: " + memMat;

  switch (kind) {
  case Case::LayerNorm:
    body += llvm::formatv("  %y = norm.layer_norm %x weight(%w) bias(%b) : "
                          "({0}, {1}, {1}) -> {0}\n",
                          tenMat, tenVec);
    break;
  case Case::RMSNorm:
    body += llvm::formatv(
        "  %y = norm.rms_norm %x weight(%w) : ({0}, {1}) -> {0}\n", tenMat,
        tenVec);
    break;
  case Case::AddRMSNorm:
    body += llvm::formatv("  %y, %s = norm.rms_norm %x weight(%w) "
                          "residual(%r) : ({0}, {1}, {0}) -> ({0}, {0})\n",
                          tenMat, tenVec);
    break;
  case Case::DyT:
    body += llvm::formatv(
        "  %a = arith.constant dense<0.5> : tensor<{2}>\n"
        "  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b) : ({0}, tensor<{2}>, "
        "{1}, {1}) -> {0}\n",
        tenMat, tenVec, t);
    break;
  }
  output("y", "ym");
  if (kind == Case::AddRMSNorm)
    output("s", "sm");
  return llvm::formatv("func.func @kernel({0}) attributes "
                       "{{llvm.emit_c_interface} {{\n{1}  return\n}\n",
                       args, body)
      .str();
}

/// A strided memref descriptor of rank 1 or 2 over a buffer.
template <int Rank>
struct Descriptor {
  void *allocated, *aligned;
  int64_t offset, sizes[Rank], strides[Rank];
};

Descriptor<2> matrixDescriptor(Buffer &buffer, Shape shape) {
  return {
      buffer.data, buffer.data, 0, {shape.rows, shape.cols}, {shape.cols, 1}};
}
Descriptor<1> vectorDescriptor(Buffer &buffer, Shape shape) {
  return {buffer.data, buffer.data, 0, {shape.cols}, {1}};
}

/// A compiled kernel bound to its workspace.
struct Kernel {
  std::unique_ptr<mlir::norm::JITModule> module;
  std::function<void()> call;
};

bool compileKernel(Kernel &kernel, Case kind, Shape shape, DType dtype,
                   Workspace &ws, const std::string &pipeline,
                   const std::vector<llvm::StringRef> &libs) {
  std::string error;
  kernel.module = mlir::norm::JITModule::compile(
      kernelSource(kind, shape, dtype), pipeline, error, libs);
  if (!kernel.module) {
    llvm::errs() << "norm-bench: cannot compile " << caseName(kind) << " "
                 << shape.rows << "x" << shape.cols << " " << typeName(dtype)
                 << " with '" << pipeline << "':\n"
                 << error;
    return false;
  }
  void *fn = kernel.module->lookupCInterface("kernel");
  if (!fn) {
    llvm::errs() << "norm-bench: kernel entry point not found\n";
    return false;
  }
  auto x = std::make_shared<Descriptor<2>>(matrixDescriptor(ws.x, shape));
  auto r =
      std::make_shared<Descriptor<2>>(matrixDescriptor(ws.residual, shape));
  auto y = std::make_shared<Descriptor<2>>(matrixDescriptor(ws.y, shape));
  auto s =
      std::make_shared<Descriptor<2>>(matrixDescriptor(ws.residualOut, shape));
  auto w = std::make_shared<Descriptor<1>>(vectorDescriptor(ws.weight, shape));
  auto b = std::make_shared<Descriptor<1>>(vectorDescriptor(ws.bias, shape));
  switch (kind) {
  case Case::LayerNorm:
  case Case::DyT: {
    auto f = reinterpret_cast<void (*)(void *, void *, void *, void *)>(fn);
    kernel.call = [=] { f(x.get(), w.get(), b.get(), y.get()); };
    break;
  }
  case Case::RMSNorm: {
    auto f = reinterpret_cast<void (*)(void *, void *, void *)>(fn);
    kernel.call = [=] { f(x.get(), w.get(), y.get()); };
    break;
  }
  case Case::AddRMSNorm: {
    auto f =
        reinterpret_cast<void (*)(void *, void *, void *, void *, void *)>(fn);
    kernel.call = [=] { f(x.get(), r.get(), w.get(), y.get(), s.get()); };
    break;
  }
  }
  return true;
}

/// Collects the median of every benchmark (bytes per second).
class SummaryReporter : public benchmark::ConsoleReporter {
public:
  /// Colors only on a terminal: a reporter given to RunSpecifiedBenchmarks
  /// does not see --benchmark_color.
  SummaryReporter()
      : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

  void ReportRuns(const std::vector<Run> &runs) override {
    for (const Run &run : runs) {
      if (run.run_type != Run::RT_Aggregate || run.aggregate_name != "median")
        continue;
      auto it = run.counters.find("bytes_per_second");
      if (it != run.counters.end())
        medians[run.run_name.function_name] = it->second.value;
      times[run.run_name.function_name] = run.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians;
  /// Median real time per benchmark, in its time unit (microseconds).
  std::map<std::string, double> times;
};

/// Reads `<name> -> bytes_per_second` medians from a Google Benchmark JSON
/// file (e.g. the PyTorch script's output).
void mergeJSON(const std::string &path, std::map<std::string, double> &into) {
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
      into[name->str()] = *rate;
  }
}

} // namespace

int main(int argc, char **argv) {
  // Our flags; everything else goes to Google Benchmark.
  bool quick = false, summaryOnly = false, slices = false, onlySlices = false;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  int repetitions = 10;
  std::vector<std::string> merges;
  std::vector<char *> gbenchArgs{argv[0]};
  std::string jsonOut;
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
    } else if (arg == "--help") {
      llvm::outs() << "usage: norm-bench [--quick|--summary] [--slices|"
                      "--only-slices] [--threads=N] [--repetitions=N] "
                      "[--json=FILE] [--merge=TORCH.json] [Google Benchmark "
                      "flags]\n"
                      "  --slices       also norm + matmul slices (unfused, "
                      "folded, fused)\n"
                      "  --only-slices  only those\n";
      return 0;
    } else {
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
  std::string linalg =
      llvm::formatv("norm-cpu-pipeline{{lowering=linalg threads={0}}", threads);

  // Everything is allocated and compiled before anything is measured.
  std::vector<std::unique_ptr<Workspace>> workspaces;
  std::vector<std::unique_ptr<Kernel>> kernels;
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

  if (onlySlices)
    shapes.clear();
  SliceKernels sliceKernels;
  if (slices && !sliceKernels.registerBenchmarks(
                    threads, quick, libs,
                    [&](const std::string &name, size_t bytes,
                        std::function<void()> body) {
                      registerCase(name, bytes, std::move(body));
                    }))
    return 1;

  for (Shape shape : shapes) {
    for (DType dtype : dtypes) {
      workspaces.push_back(std::make_unique<Workspace>(shape, dtype));
      Workspace &ws = *workspaces.back();
      size_t matrixBytes = Workspace::bytes(shape, dtype);
      registerCase(
          benchmarkName("copy", "floor", shape, dtype), 2 * matrixBytes,
          [&ws, matrixBytes] { copyFloor(ws.x.data, ws.y.data, matrixBytes); });
      registerCase(benchmarkName("copy_nt", "floor", shape, dtype),
                   2 * matrixBytes, [&ws, matrixBytes] {
                     copyNonTemporalFloor(ws.x.data, ws.y.data, matrixBytes);
                   });
      for (Case kind : cases) {
        size_t bytes = caseBytes(kind, shape, dtype);
        Problem problem{dtype,
                        shape.rows,
                        shape.cols,
                        ws.x.data,
                        ws.residual.data,
                        ws.weight.data,
                        ws.bias.data,
                        0.5f,
                        ws.y.data,
                        ws.residualOut.data,
                        1e-5f};
        for (auto [impl, pipeline] :
             {std::pair<const char *, std::string *>{"norm", &direct},
              {"linalg", &linalg}}) {
          auto kernel = std::make_unique<Kernel>();
          if (!compileKernel(*kernel, kind, shape, dtype, ws, *pipeline, libs))
            return 1;
          std::function<void()> call = kernel->call;
          kernels.push_back(std::move(kernel));
          registerCase(benchmarkName(caseName(kind), impl, shape, dtype), bytes,
                       call);
        }
        registerCase(benchmarkName(caseName(kind), "naive", shape, dtype),
                     bytes, [kind, problem] { runNaive(kind, problem); });
        if (oneDNNSupports(kind, problem))
          registerCase(benchmarkName(caseName(kind), "onednn", shape, dtype),
                       bytes, [kind, problem] { runOneDNN(kind, problem); });
      }
    }
  }

  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::map<std::string, double> medians = reporter.medians;
  for (const std::string &path : merges)
    mergeJSON(path, medians);

  // Summary: GB/s and ratio to both floors measured in this run.
  if (!shapes.empty())
    llvm::outs() << llvm::formatv(
        "\nSummary ({0} threads; GB/s = median bytes moved per second; "
        "x copy / x nt = ratio to the plain and non-temporal copy of the same "
        "shape)\n",
        threads);
  if (!shapes.empty())
    llvm::outs() << llvm::formatv("{0,-34} {1,8} {2,8} {3,8}\n", "benchmark",
                                  "GB/s", "x copy", "x nt");
  for (Shape shape : shapes) {
    for (DType dtype : dtypes) {
      double copy = medians[benchmarkName("copy", "floor", shape, dtype)];
      double nt = medians[benchmarkName("copy_nt", "floor", shape, dtype)];
      // A shape filtered out of this run (--benchmark_filter) has no rows.
      if (copy == 0 && nt == 0)
        continue;
      llvm::outs() << llvm::formatv(
          "{0,-34} {1,8:F1}\n", benchmarkName("copy", "floor", shape, dtype),
          copy / 1e9);
      llvm::outs() << llvm::formatv(
          "{0,-34} {1,8:F1}\n", benchmarkName("copy_nt", "floor", shape, dtype),
          nt / 1e9);
      for (Case kind : cases) {
        for (const char *impl :
             {"norm", "linalg", "naive", "onednn", "torch"}) {
          std::string name = benchmarkName(caseName(kind), impl, shape, dtype);
          auto it = medians.find(name);
          if (it == medians.end())
            continue;
          llvm::outs() << llvm::formatv("{0,-34} {1,8:F1} {2,8:F2} {3,8:F2}\n",
                                        name, it->second / 1e9,
                                        copy > 0 ? it->second / copy : 0.0,
                                        nt > 0 ? it->second / nt : 0.0);
        }
      }
    }
  }
  if (slices)
    printSliceSummary(reporter.times);
  return 0;
}
