//===- CudaRuntime.cpp - mgpu* entry points on the CUDA driver --*- C++ -*-===//
//
// norm_cuda_runtime: the functions that upstream `gpu-to-llvm` lowering and
// the `gpu.binary` translation call (`mgpuModuleLoad`, `mgpuLaunchKernel`,
// `mgpuMemAlloc`, ...), implemented on the CUDA driver API.
//
// The driver (`libcuda.so.1`) is loaded with dlopen at first use and the few
// types and entry points needed are declared here, so the library builds on
// machines without the CUDA toolkit and links against nothing but libc and
// libdl. Every driver error, including a missing driver or device, prints
// one clear message to stderr and exits the process with status 1: the
// generated host code has no way to observe an error, and continuing would
// compute garbage or crash.
//
//===----------------------------------------------------------------------===//

#include "norm/Runtime/CudaRuntime.h"
#include "FunctionCache.h"

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <utility>

namespace {

//===----------------------------------------------------------------------===//
// The slice of the CUDA driver API this runtime uses
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;

constexpr CUresult kSuccess = 0;
// Enumerator values from cuda.h (stable across driver versions).
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSize = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
constexpr int kJitOptimizationLevel = 7;
constexpr int kFuncMaxDynamicSharedBytes = 8;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMemoryClockRate = 36;
constexpr int kAttrMemoryBusWidth = 37;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kAttrMemoryPoolsSupported = 115;
constexpr int kMemPoolAttrReleaseThreshold = 4;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDefault = 0;
constexpr unsigned kMemAttachGlobal = 1;

/// Driver entry points, resolved once by name (the `_v2` names are the ones
/// cuda.h maps the plain names to).
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*devicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                               void **);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*funcSetAttribute)(CUfunction, int, int);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamDestroy)(CUstream);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*streamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*memsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*memHostRegister)(void *, size_t, unsigned);
  // Stream-ordered allocation (CUDA 11.2 drivers on); null when missing.
  CUresult (*memAllocAsync)(CUdeviceptr *, size_t, CUstream);
  CUresult (*memFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*deviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
  CUresult (*memPoolSetAttribute)(CUmemoryPool, int, void *);
  CUresult (*memHostUnregister)(void *);
};

/// Prints `norm_cuda_runtime: <message>` and exits with status 1 at once.
[[noreturn]] void fatal(const char *format, ...) {
  std::fflush(stdout);
  std::fputs("norm_cuda_runtime: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stdout);
  // _Exit: no atexit handlers or global destructors, which would call back
  // into this runtime (e.g. to unload GPU modules) and fail again.
  std::_Exit(1);
}

/// State of the runtime: the driver, the device and its primary context.
struct Runtime {
  Driver driver{};
  void *library = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  /// Whether device buffers come from the device's memory pool in stream
  /// order (cuMemAllocAsync), which keeps freed memory for reuse.
  bool streamOrderedAlloc = false;
  /// Why the driver or device is unusable (empty when usable).
  char error[512] = {0};
};

int defaultDevice = 0;
/// Set once exit() has begun: GPU modules that generated code unloads from
/// its global destructors (ahead-of-time objects) outlive the driver then.
std::atomic<bool> processExiting{false};
/// A stream owned by the embedding application that stands in for the
/// streams generated code creates (see normCudaSetStream).
CUstream externalStream = nullptr;

/// Resolves `name` in the driver into `slot`; false when it is missing.
template <typename Fn>
bool resolve(void *library, Fn &slot, const char *name) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
  return slot != nullptr;
}

/// Loads the driver and opens the default device, recording what went wrong
/// in `rt.error` instead of exiting.
void initialize(Runtime &rt) {
  auto fail = [&](const char *format, auto... args) {
    std::snprintf(rt.error, sizeof(rt.error), format, args...);
  };
  rt.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!rt.library) {
    const char *why = dlerror();
    fail("no CUDA driver: cannot load libcuda.so.1 (%s)",
         why ? why : "unknown error");
    return;
  }
  Driver &d = rt.driver;
  const char *missing = nullptr;
#define NORM_RESOLVE(field, name)                                              \
  if (!missing && !resolve(rt.library, d.field, name))                         \
    missing = name;
  NORM_RESOLVE(init, "cuInit")
  NORM_RESOLVE(driverGetVersion, "cuDriverGetVersion")
  NORM_RESOLVE(deviceGetCount, "cuDeviceGetCount")
  NORM_RESOLVE(deviceGet, "cuDeviceGet")
  NORM_RESOLVE(deviceGetName, "cuDeviceGetName")
  NORM_RESOLVE(deviceGetAttribute, "cuDeviceGetAttribute")
  NORM_RESOLVE(devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  NORM_RESOLVE(ctxSetCurrent, "cuCtxSetCurrent")
  NORM_RESOLVE(getErrorName, "cuGetErrorName")
  NORM_RESOLVE(getErrorString, "cuGetErrorString")
  NORM_RESOLVE(moduleLoadData, "cuModuleLoadData")
  NORM_RESOLVE(moduleLoadDataEx, "cuModuleLoadDataEx")
  NORM_RESOLVE(moduleUnload, "cuModuleUnload")
  NORM_RESOLVE(moduleGetFunction, "cuModuleGetFunction")
  NORM_RESOLVE(funcSetAttribute, "cuFuncSetAttribute")
  NORM_RESOLVE(launchKernel, "cuLaunchKernel")
  NORM_RESOLVE(streamCreate, "cuStreamCreate")
  NORM_RESOLVE(streamDestroy, "cuStreamDestroy_v2")
  NORM_RESOLVE(streamSynchronize, "cuStreamSynchronize")
  NORM_RESOLVE(streamWaitEvent, "cuStreamWaitEvent")
  NORM_RESOLVE(eventCreate, "cuEventCreate")
  NORM_RESOLVE(eventDestroy, "cuEventDestroy_v2")
  NORM_RESOLVE(eventRecord, "cuEventRecord")
  NORM_RESOLVE(eventSynchronize, "cuEventSynchronize")
  NORM_RESOLVE(memAlloc, "cuMemAlloc_v2")
  NORM_RESOLVE(memAllocManaged, "cuMemAllocManaged")
  NORM_RESOLVE(memFree, "cuMemFree_v2")
  NORM_RESOLVE(memcpyAsync, "cuMemcpyAsync")
  NORM_RESOLVE(memsetD32Async, "cuMemsetD32Async")
  NORM_RESOLVE(memsetD16Async, "cuMemsetD16Async")
  NORM_RESOLVE(memHostRegister, "cuMemHostRegister_v2")
  NORM_RESOLVE(memHostUnregister, "cuMemHostUnregister")
#undef NORM_RESOLVE
  // Newer drivers export a _v2 with the same signature; either will do.
  if (!missing &&
      !resolve(rt.library, d.eventElapsedTime, "cuEventElapsedTime_v2") &&
      !resolve(rt.library, d.eventElapsedTime, "cuEventElapsedTime"))
    missing = "cuEventElapsedTime";
  if (missing) {
    fail("the CUDA driver in libcuda.so.1 lacks '%s' (driver too old?)",
         missing);
    return;
  }

  auto describe = [&](CUresult result) {
    const char *name = nullptr;
    if (d.getErrorName(result, &name) != kSuccess || !name)
      name = "unknown error";
    return name;
  };
  CUresult result = d.init(0);
  if (result != kSuccess) {
    fail("no usable CUDA device: cuInit failed with %s", describe(result));
    return;
  }
  // The driver tears itself down in an exit handler it registers in cuInit;
  // this one, registered later, runs before it (see mgpuModuleUnload).
  std::atexit([] { processExiting = true; });
  int count = 0;
  result = d.deviceGetCount(&count);
  if (result != kSuccess || count == 0) {
    fail("no CUDA device found");
    return;
  }
  if (defaultDevice < 0 || defaultDevice >= count) {
    fail("CUDA device %d requested, but only %d present", defaultDevice, count);
    return;
  }
  result = d.deviceGet(&rt.device, defaultDevice);
  if (result == kSuccess)
    result = d.devicePrimaryCtxRetain(&rt.context, rt.device);
  if (result != kSuccess) {
    fail("cannot open CUDA device %d: %s", defaultDevice, describe(result));
    return;
  }

  // Buffers that generated code allocates and frees around its kernels (the
  // partial statistics of split rows, gradient partials, memory=copy
  // buffers) come from the device's memory pool in stream order, which
  // costs about a microsecond instead of cuMemAlloc/cuMemFree's device-wide
  // synchronization; the pool keeps what is freed for the next call.
  int pools = 0;
  CUmemoryPool pool = nullptr;
  uint64_t keepAll = ~uint64_t(0);
  if (resolve(rt.library, d.memAllocAsync, "cuMemAllocAsync") &&
      resolve(rt.library, d.memFreeAsync, "cuMemFreeAsync") &&
      resolve(rt.library, d.deviceGetDefaultMemPool,
              "cuDeviceGetDefaultMemPool") &&
      resolve(rt.library, d.memPoolSetAttribute, "cuMemPoolSetAttribute") &&
      d.deviceGetAttribute(&pools, kAttrMemoryPoolsSupported, rt.device) ==
          kSuccess &&
      pools && d.deviceGetDefaultMemPool(&pool, rt.device) == kSuccess &&
      d.memPoolSetAttribute(pool, kMemPoolAttrReleaseThreshold, &keepAll) ==
          kSuccess)
    rt.streamOrderedAlloc = true;
}

Runtime runtime;
pthread_once_t runtimeOnce = PTHREAD_ONCE_INIT;
norm_cuda_runtime::FunctionCache functionCache;

/// The runtime, initialized by the first caller (pthread_once rather than
/// std::call_once: the library needs nothing but libc and libdl).
Runtime &getRuntime() {
  pthread_once(&runtimeOnce, [] { initialize(runtime); });
  return runtime;
}

/// The usable driver with the device's context current on this thread;
/// exits with the recorded message when there is none.
Driver &driver() {
  Runtime &rt = getRuntime();
  if (rt.error[0])
    fatal("%s", rt.error);
  thread_local bool current = false;
  if (!current) {
    CUresult result = rt.driver.ctxSetCurrent(rt.context);
    if (result != kSuccess)
      fatal("cuCtxSetCurrent failed with error %d", result);
    current = true;
  }
  return rt.driver;
}

/// Exits with a message naming the failed call when `result` is an error.
void check(CUresult result, const char *call) {
  if (result == kSuccess)
    return;
  Driver &d = getRuntime().driver;
  const char *name = nullptr, *text = nullptr;
  if (d.getErrorName(result, &name) != kSuccess || !name)
    name = "unknown error";
  if (d.getErrorString(result, &text) != kSuccess || !text)
    text = "";
  fatal("%s failed: %s (%s)", call, name, text);
}

#define NORM_CHECK(call) check(call, #call)

CUdeviceptr devicePtr(const void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}

/// A ranked memref descriptor as generated code passes it (`rank` sizes
/// followed by `rank` strides).
struct MemRefDescriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

/// Address and size in bytes of the dense memref `descriptor`.
std::pair<void *, uint64_t> denseRange(int64_t rank,
                                       const MemRefDescriptor *descriptor,
                                       int64_t elementSizeBytes) {
  uint64_t elements = 1;
  for (int64_t i = 0; i < rank; ++i)
    elements *= static_cast<uint64_t>(descriptor->sizesAndStrides[i]);
  return {descriptor->aligned + descriptor->offset * elementSizeBytes,
          elements * elementSizeBytes};
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points called by generated code
//===----------------------------------------------------------------------===//

extern "C" {

NORM_CUDA_RUNTIME_EXPORT void *mgpuModuleLoad(void *data,
                                              size_t /*sizeBytes*/) {
  Driver &d = driver();
  CUmodule module = nullptr;
  NORM_CHECK(d.moduleLoadData(&module, data));
  return module;
}

NORM_CUDA_RUNTIME_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  Driver &d = driver();
  CUmodule module = nullptr;
  char infoLog[4096] = {0}, errorLog[4096] = {0};
  int options[] = {kJitOptimizationLevel, kJitInfoLogBuffer,
                   kJitInfoLogBufferSize, kJitErrorLogBuffer,
                   kJitErrorLogBufferSize};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    infoLog, reinterpret_cast<void *>(sizeof(infoLog)),
                    errorLog, reinterpret_cast<void *>(sizeof(errorLog))};
  CUresult result = d.moduleLoadDataEx(&module, data, 5, options, values);
  if (result != kSuccess && errorLog[0])
    std::fprintf(stderr, "norm_cuda_runtime: PTX JIT log:\n%s\n", errorLog);
  NORM_CHECK(result);
  return module;
}

NORM_CUDA_RUNTIME_EXPORT void mgpuModuleUnload(void *module) {
  functionCache.clear();
  CUresult result = driver().moduleUnload(static_cast<CUmodule>(module));
  // At exit the driver has already released the module with the context,
  // and reports an error: nothing is left to free.
  if (!processExiting)
    NORM_CHECK(result);
}

NORM_CUDA_RUNTIME_EXPORT void *mgpuModuleGetFunction(void *module,
                                                     const char *name) {
  // Called before every launch: the driver is asked once per kernel.
  if (void *cached = functionCache.lookup(module, name))
    return cached;
  CUfunction function = nullptr;
  CUresult result = driver().moduleGetFunction(
      &function, static_cast<CUmodule>(module), name);
  if (result != kSuccess)
    fatal("kernel '%s' not found in the loaded GPU module (error %d)", name,
          result);
  functionCache.insert(module, name, function);
  return function;
}

NORM_CUDA_RUNTIME_EXPORT void
mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                 intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                 int32_t smem, void *stream, void **params, void **extra,
                 size_t /*paramsCount*/) {
  Driver &d = driver();
  auto kernel = static_cast<CUfunction>(function);
  if (smem > 48 * 1024) {
    // Dynamic shared memory above 48 KiB needs an explicit opt-in.
    int maxShared = 0;
    NORM_CHECK(d.deviceGetAttribute(
        &maxShared, kAttrMaxSharedMemoryPerBlockOptin, getRuntime().device));
    if (smem > maxShared)
      fatal("kernel needs %d bytes of shared memory, the device allows %d",
            smem, maxShared);
    NORM_CHECK(d.funcSetAttribute(kernel, kFuncMaxDynamicSharedBytes, smem));
  }
  // A launch with an empty grid is an error in CUDA but means "nothing to
  // do" in the gpu dialect.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  NORM_CHECK(d.launchKernel(kernel, gridX, gridY, gridZ, blockX, blockY, blockZ,
                            smem, static_cast<CUstream>(stream), params,
                            extra));
}

NORM_CUDA_RUNTIME_EXPORT void *mgpuStreamCreate() {
  Driver &d = driver();
  if (externalStream)
    return externalStream;
  CUstream stream = nullptr;
  NORM_CHECK(d.streamCreate(&stream, kStreamNonBlocking));
  return stream;
}

NORM_CUDA_RUNTIME_EXPORT void mgpuStreamDestroy(void *stream) {
  if (stream && stream == externalStream)
    return;
  NORM_CHECK(driver().streamDestroy(static_cast<CUstream>(stream)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuStreamSynchronize(void *stream) {
  if (stream && stream == externalStream)
    return;
  NORM_CHECK(driver().streamSynchronize(static_cast<CUstream>(stream)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  NORM_CHECK(driver().streamWaitEvent(static_cast<CUstream>(stream),
                                      static_cast<CUevent>(event), 0));
}

NORM_CUDA_RUNTIME_EXPORT void *mgpuEventCreate() {
  Driver &d = driver();
  CUevent event = nullptr;
  NORM_CHECK(d.eventCreate(&event, kEventDefault));
  return event;
}

NORM_CUDA_RUNTIME_EXPORT void mgpuEventDestroy(void *event) {
  NORM_CHECK(driver().eventDestroy(static_cast<CUevent>(event)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuEventSynchronize(void *event) {
  NORM_CHECK(driver().eventSynchronize(static_cast<CUevent>(event)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuEventRecord(void *event, void *stream) {
  NORM_CHECK(driver().eventRecord(static_cast<CUevent>(event),
                                  static_cast<CUstream>(stream)));
}

// With a stream (gpu.alloc / gpu.dealloc in an async region), device
// buffers are allocated and freed in the stream's order from the device's
// memory pool; without one, or where the driver has no pools, synchronously.
NORM_CUDA_RUNTIME_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                            bool isHostShared) {
  Driver &d = driver();
  if (sizeBytes == 0)
    return nullptr;
  CUdeviceptr ptr = 0;
  if (isHostShared)
    NORM_CHECK(d.memAllocManaged(&ptr, sizeBytes, kMemAttachGlobal));
  else if (stream && getRuntime().streamOrderedAlloc)
    NORM_CHECK(d.memAllocAsync(&ptr, sizeBytes, static_cast<CUstream>(stream)));
  else
    NORM_CHECK(d.memAlloc(&ptr, sizeBytes));
  return reinterpret_cast<void *>(ptr);
}

NORM_CUDA_RUNTIME_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  Driver &d = driver();
  // cuMemFree also takes pool memory; it does not wait for work on it, but
  // without a stream the generated code has synchronized before it frees.
  if (stream && getRuntime().streamOrderedAlloc)
    NORM_CHECK(d.memFreeAsync(devicePtr(ptr), static_cast<CUstream>(stream)));
  else
    NORM_CHECK(d.memFree(devicePtr(ptr)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                         void *stream) {
  if (sizeBytes == 0)
    return;
  NORM_CHECK(driver().memcpyAsync(devicePtr(dst), devicePtr(src), sizeBytes,
                                  static_cast<CUstream>(stream)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuMemset32(void *dst, unsigned value,
                                           size_t count, void *stream) {
  if (count == 0)
    return;
  NORM_CHECK(driver().memsetD32Async(devicePtr(dst), value, count,
                                     static_cast<CUstream>(stream)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                           size_t count, void *stream) {
  if (count == 0)
    return;
  NORM_CHECK(driver().memsetD16Async(devicePtr(dst), value, count,
                                     static_cast<CUstream>(stream)));
}

NORM_CUDA_RUNTIME_EXPORT void mgpuMemHostRegister(void *ptr,
                                                  uint64_t sizeBytes) {
  if (sizeBytes == 0)
    return;
  NORM_CHECK(driver().memHostRegister(ptr, sizeBytes, 0));
}

NORM_CUDA_RUNTIME_EXPORT void
mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                          int64_t elementSizeBytes) {
  auto [ptr, size] = denseRange(
      rank, static_cast<MemRefDescriptor *>(descriptor), elementSizeBytes);
  mgpuMemHostRegister(ptr, size);
}

NORM_CUDA_RUNTIME_EXPORT void mgpuMemHostUnregister(void *ptr) {
  NORM_CHECK(driver().memHostUnregister(ptr));
}

NORM_CUDA_RUNTIME_EXPORT void
mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                            int64_t elementSizeBytes) {
  auto [ptr, size] = denseRange(
      rank, static_cast<MemRefDescriptor *>(descriptor), elementSizeBytes);
  if (size != 0)
    mgpuMemHostUnregister(ptr);
}

NORM_CUDA_RUNTIME_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice = device;
}

//===----------------------------------------------------------------------===//
// Extensions for applications embedding generated code
//===----------------------------------------------------------------------===//

NORM_CUDA_RUNTIME_EXPORT int normCudaAvailable(char *message,
                                               size_t messageSize) {
  Runtime &rt = getRuntime();
  if (message && messageSize)
    std::snprintf(message, messageSize, "%s", rt.error);
  return rt.error[0] == 0;
}

NORM_CUDA_RUNTIME_EXPORT void normCudaSetStream(void *stream) {
  externalStream = static_cast<CUstream>(stream);
}

NORM_CUDA_RUNTIME_EXPORT void normCudaSynchronize(void *stream) {
  NORM_CHECK(driver().streamSynchronize(static_cast<CUstream>(stream)));
}

NORM_CUDA_RUNTIME_EXPORT float normCudaEventElapsedMs(void *start, void *end) {
  float ms = 0.0f;
  NORM_CHECK(driver().eventElapsedTime(&ms, static_cast<CUevent>(start),
                                       static_cast<CUevent>(end)));
  return ms;
}

NORM_CUDA_RUNTIME_EXPORT void normCudaDeviceInfo(NormCudaDeviceInfo *info) {
  Driver &d = driver();
  CUdevice device = getRuntime().device;
  std::memset(info, 0, sizeof(*info));
  NORM_CHECK(d.deviceGetName(info->name, sizeof(info->name), device));
  int major = 0, minor = 0, clockKHz = 0, busBits = 0, sms = 0;
  NORM_CHECK(d.deviceGetAttribute(&major, kAttrComputeCapabilityMajor, device));
  NORM_CHECK(d.deviceGetAttribute(&minor, kAttrComputeCapabilityMinor, device));
  NORM_CHECK(d.deviceGetAttribute(&sms, kAttrMultiprocessorCount, device));
  // Not every driver reports the memory clock; 0 means unknown.
  if (d.deviceGetAttribute(&clockKHz, kAttrMemoryClockRate, device) != kSuccess)
    clockKHz = 0;
  if (d.deviceGetAttribute(&busBits, kAttrMemoryBusWidth, device) != kSuccess)
    busBits = 0;
  info->computeCapability = major * 10 + minor;
  info->multiprocessors = sms;
  // Double data rate: two transfers per clock.
  info->peakBandwidthGBs = 2.0 * clockKHz * 1e3 * (busBits / 8.0) / 1e9;
  d.driverGetVersion(&info->driverVersion);
}

} // extern "C"
