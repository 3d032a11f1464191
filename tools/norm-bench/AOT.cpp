//===- AOT.cpp - Kernels built ahead of time by norm-aot --------*- C++ -*-===//
//
// Each kernel is built the way the README tells users to build one:
//
//   norm-aot --op rms_norm --shape '?x4096' --dtype f32 --weight --residual
//            --name K --pipeline-options threads=T -o DIR/K --shared
//
// then DIR/libK.so is loaded with dlopen and `_mlir_ciface_K` called with
// the descriptors of the generated DIR/K.h, whose prototype is read to
// check the argument order.
//
//===----------------------------------------------------------------------===//

#include "AOT.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <dlfcn.h>

using namespace norm_bench;

AOTKernels::~AOTKernels() {
  if (!folder.empty())
    llvm::sys::fs::remove_directories(folder);
}

bool AOTKernels::init(const std::string &toolPath, unsigned threadCount,
                      const std::string &openmpPath, std::string &error) {
  if (!llvm::sys::fs::can_execute(toolPath)) {
    error = "cannot find norm-aot at " + toolPath;
    return false;
  }
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("norm-bench-aot", path)) {
    error = "cannot create a folder for the AOT kernels: " + ec.message();
    return false;
  }
  tool = toolPath;
  folder = path.str().str();
  threads = threadCount;
  openmp = openmpPath;
  return true;
}

void AOTKernels::add(Kernel *kernel, const std::string &name, bool dynamic) {
  requests.push_back({kernel, name, dynamic});
}

std::vector<std::string> AOTKernels::commandLine(const Request &request) const {
  const Workspace &ws = *request.kernel->workspace;
  Case kind = request.kernel->kind;
  std::string shape = llvm::formatv(
      "{0}x{1}", request.dynamic ? "?" : std::to_string(ws.shape.rows),
      ws.shape.cols);
  std::string op = kind == Case::AddRMSNorm ? "rms_norm" : caseName(kind);
  std::vector<std::string> args = {
      tool,      "--op", op, "--shape", shape, "--dtype", typeName(ws.dtype),
      "--weight"};
  if (kind == Case::LayerNorm || kind == Case::DyT)
    args.push_back("--bias");
  if (kind == Case::AddRMSNorm)
    args.push_back("--residual");
  args.insert(args.end(), {"--name", request.name, "--pipeline-options",
                           llvm::formatv("threads={0}", threads).str(), "-o",
                           (folder + "/" + request.name), "--shared"});
  return args;
}

/// The parameter names of `_mlir_ciface_<name>(...)` in norm-aot's header.
static std::vector<std::string> headerParameters(llvm::StringRef header,
                                                 llvm::StringRef name) {
  std::string prefix = ("_mlir_ciface_" + name + "(").str();
  size_t begin = header.find(prefix);
  if (begin == llvm::StringRef::npos)
    return {};
  llvm::StringRef list = header.drop_front(begin + prefix.size());
  list = list.take_until([](char c) { return c == ')'; });
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> params;
  list.split(params, ',');
  for (llvm::StringRef param : params) {
    // "name_memref_f32_2d_t *x" -> "x".
    param = param.trim();
    size_t star = param.rfind('*');
    names.push_back(
        param.drop_front(star == llvm::StringRef::npos ? 0 : star + 1)
            .trim()
            .str());
  }
  return names;
}

bool AOTKernels::load(const Request &request) {
  std::string prefix = folder + "/" + request.name;
  auto header = llvm::MemoryBuffer::getFile(prefix + ".h");
  std::vector<std::string> expected =
      kernelArguments(request.kernel->kind, /*withAlpha=*/true);
  if (!header) {
    llvm::errs() << "norm-bench: norm-aot wrote no " << prefix << ".h\n";
    return false;
  }
  std::vector<std::string> found =
      headerParameters((*header)->getBuffer(), request.name);
  if (found != expected) {
    llvm::errs() << "norm-bench: " << prefix << ".h declares ("
                 << llvm::join(found, ", ") << "), expected ("
                 << llvm::join(expected, ", ") << ")\n";
    return false;
  }
  std::string library = folder + "/lib" + request.name + ".so";
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    llvm::errs() << "norm-bench: cannot load " << library << ": " << dlerror()
                 << "\n";
    return false;
  }
  std::string symbol = "_mlir_ciface_" + request.name;
  std::string error;
  if (!request.kernel->bind(dlsym(handle, symbol.c_str()), expected, error)) {
    llvm::errs() << "norm-bench: " << library << ": " << symbol << ": " << error
                 << "\n";
    return false;
  }
  return true;
}

bool AOTKernels::buildAll(unsigned jobs) {
  if (requests.empty())
    return true;
  // A threaded kernel calls the OpenMP runtime (__kmpc_*) and its library
  // does not name it: load the runtime first, globally.
  if (threads > 1 && !openmp.empty() &&
      !dlopen(openmp.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    llvm::errs() << "norm-bench: cannot load " << openmp << ": " << dlerror()
                 << "\n";
    return false;
  }
  struct Running {
    llvm::sys::ProcessInfo process;
    const Request *request;
  };
  std::deque<Running> running;
  bool ok = true;
  auto finish = [&](Running &job) {
    std::string error;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(job.process, std::nullopt, &error);
    std::string log = folder + "/" + job.request->name + ".log";
    if (done.ReturnCode != 0) {
      llvm::errs() << "norm-bench: norm-aot failed for " << job.request->name
                   << " (exit code " << done.ReturnCode << ")" << error << ": "
                   << llvm::join(commandLine(*job.request), " ") << "\n";
      if (auto text = llvm::MemoryBuffer::getFile(log))
        llvm::errs() << (*text)->getBuffer();
      ok = false;
    }
  };
  for (const Request &request : requests) {
    while (running.size() >= std::max(1u, jobs)) {
      finish(running.front());
      running.pop_front();
    }
    std::vector<std::string> args = commandLine(request);
    std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
    std::string log = folder + "/" + request.name + ".log";
    std::optional<llvm::StringRef> redirects[] = {
        std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
    std::string error;
    bool failed = false;
    llvm::sys::ProcessInfo process = llvm::sys::ExecuteNoWait(
        tool, argRefs, std::nullopt, redirects, 0, &error, &failed);
    if (failed) {
      llvm::errs() << "norm-bench: cannot run " << tool << ": " << error
                   << "\n";
      ok = false;
      break;
    }
    running.push_back({process, &request});
  }
  for (Running &job : running)
    finish(job);
  if (!ok)
    return false;
  for (const Request &request : requests)
    if (!load(request))
      return false;
  return true;
}
