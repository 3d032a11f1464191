//===- CudaRuntime.h - norm_cuda_runtime extensions ---------------*- C -*-===//
//
// The functions norm_cuda_runtime offers beyond the `mgpu*` entry points of
// generated code: for applications (benchmarks, test drivers, embedders)
// that call compiled GPU code and need to check for a device, run it on
// their own stream and time it.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_RUNTIME_CUDARUNTIME_H
#define NORM_RUNTIME_CUDARUNTIME_H

#include <stddef.h>

#if defined(_WIN32)
#define NORM_CUDA_RUNTIME_EXPORT __declspec(dllexport)
#else
#define NORM_CUDA_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// What normCudaDeviceInfo reports about the device in use.
typedef struct NormCudaDeviceInfo {
  char name[256];
  /// 10 * major + minor, e.g. 90 for sm_90.
  int computeCapability;
  int multiprocessors;
  int driverVersion;
  /// Theoretical DRAM bandwidth from the memory clock and bus width in GB/s
  /// (0 when the driver does not report them).
  double peakBandwidthGBs;
} NormCudaDeviceInfo;

/// Returns 1 when the CUDA driver loads and a device can be opened, else 0
/// with the reason copied into `message` (never exits).
NORM_CUDA_RUNTIME_EXPORT int normCudaAvailable(char *message,
                                               size_t messageSize);

/// Makes generated code run on `stream` (a CUstream) instead of streams it
/// creates, without synchronizing it, so that many calls can be queued and
/// timed back to back; null restores the default behaviour.
NORM_CUDA_RUNTIME_EXPORT void normCudaSetStream(void *stream);

/// Waits for all work queued on `stream`.
NORM_CUDA_RUNTIME_EXPORT void normCudaSynchronize(void *stream);

/// Milliseconds between two recorded events (from mgpuEventCreate).
NORM_CUDA_RUNTIME_EXPORT float normCudaEventElapsedMs(void *start, void *end);

/// Fills `info` for the device in use.
NORM_CUDA_RUNTIME_EXPORT void normCudaDeviceInfo(NormCudaDeviceInfo *info);

#ifdef __cplusplus
}
#endif

#endif // NORM_RUNTIME_CUDARUNTIME_H
