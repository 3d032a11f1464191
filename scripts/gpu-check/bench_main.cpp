//===- bench_main.cpp - GPU benchmark of compiled norm kernels --*- C++ -*-===//
//
// Times the benchmark cases of gen_bench.py (norm-gpu-pipeline,
// memory=device) on one CUDA stream with CUDA events, and two copies of the
// same bytes in the same run: `sm_copy` (a kernel with 128-bit loads and
// stores, gen_bench.py) and a device-to-device cuMemcpyAsync (which the
// driver may hand to a copy engine):
//
//   gpu-bench [--device-check]
//
// For each case prints the time per call, the effective bandwidth (bytes of
// x (+ residual) read and y (+ residual_out) written per second), its ratio
// to the SM copy and to the D2D copy, the share of the device's DRAM peak
// (from its memory clock and bus width), and whether the output is right;
// then whether the targets are met against the SM copy: [8192,4096]
// RMSNorm, LayerNorm and add+RMSNorm >= 90%, DyT >= 85%, [32,8192] >= 60%
// (variants such as `<op>/nosplit` are timed for comparison only). A second
// table times the fused quantization and gradient kernels (kExtraCases) and
// the copies of as many bytes; their outputs are checked by the execution
// tests.
// `--device-check` only reports the device (exit 1 when there is none).
//
//===----------------------------------------------------------------------===//

#include "norm/Runtime/CudaRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void *mgpuEventCreate();
void mgpuEventDestroy(void *event);
void mgpuEventRecord(void *event, void *stream);
void mgpuEventSynchronize(void *event);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
}

namespace {

template <int Rank>
struct MemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

using MemRef1 = MemRef<1>;
using MemRef2 = MemRef<2>;
using BenchFn = void (*)(MemRef2 *, MemRef2 *, MemRef1 *, MemRef1 *, MemRef1 *,
                         MemRef2 *, MemRef2 *);

/// One benchmark case of gen_bench.py.
struct BenchCase {
  const char *op;
  int64_t m, n;
  const char *dtype;
  int elementBytes;
  /// [M, N] tensors read (and as many written): 2 with a residual.
  int streams;
  BenchFn fn;
};

using ExtraFn = void (*)(MemRef2 *, MemRef2 *, MemRef2 *, MemRef2 *, MemRef2 *,
                         MemRef2 *, MemRef2 *, MemRef2 *);

/// An argument of an extra case: a [rows, cols] buffer the kernel reads
/// (`use`: in = normal values, one, positive = 1 + |normal|, alpha = 0.5,
/// scale = 1/64, none = unused) or writes (out).
struct ExtraArg {
  int64_t rows, cols;
  int elementBytes;
  const char *use;
};

/// A quantization or gradient case of gen_bench.py: eight rank-2 memrefs.
struct ExtraCase {
  const char *op;
  int64_t m, n;
  const char *dtype;
  ExtraArg args[8];
  ExtraFn fn;
};

} // namespace

#define NORM_BENCH_DECLARE(name)                                               \
  extern "C" void _mlir_ciface_##name(MemRef2 *, MemRef2 *, MemRef1 *,         \
                                      MemRef1 *, MemRef1 *, MemRef2 *,         \
                                      MemRef2 *);
#define NORM_BENCH_DECLARE_EXTRA(name)                                         \
  extern "C" void _mlir_ciface_##name(MemRef2 *, MemRef2 *, MemRef2 *,         \
                                      MemRef2 *, MemRef2 *, MemRef2 *,         \
                                      MemRef2 *, MemRef2 *);
#include "bench_cases.inc"

namespace {

/// Seconds per call of `call`, on `stream`: the median over samples of
/// back-to-back calls timed with events, each sample about 20 ms long.
template <typename Fn>
double timePerCall(void *stream, Fn call) {
  void *start = mgpuEventCreate(), *end = mgpuEventCreate();
  auto timeCalls = [&](int calls) {
    mgpuEventRecord(start, stream);
    for (int i = 0; i < calls; ++i)
      call();
    mgpuEventRecord(end, stream);
    mgpuEventSynchronize(end);
    return normCudaEventElapsedMs(start, end) * 1e-3 / calls;
  };
  timeCalls(3); // warm up (module load, caches, clocks)
  double estimate = timeCalls(10);
  int calls = static_cast<int>(
      std::clamp(0.02 / std::max(estimate, 1e-7), 10.0, 5000.0));
  std::vector<double> samples;
  for (int i = 0; i < 7; ++i)
    samples.push_back(timeCalls(calls));
  std::sort(samples.begin(), samples.end());
  mgpuEventDestroy(start);
  mgpuEventDestroy(end);
  return samples[samples.size() / 2];
}

/// Rounds a float to bfloat16 (nearest even), as raw bits.
uint16_t toBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// Fills `count` elements of `bytes` each at `device` with `value(i)`.
template <typename ValueFn>
void fill(void *device, int64_t count, int bytes, void *stream, ValueFn value) {
  std::vector<uint8_t> host(count * bytes);
  for (int64_t i = 0; i < count; ++i) {
    float v = value(i);
    if (bytes == 4)
      std::memcpy(&host[i * 4], &v, 4);
    else {
      uint16_t b = toBF16(v);
      std::memcpy(&host[i * 2], &b, 2);
    }
  }
  mgpuMemcpy(device, host.data(), host.size(), stream);
  normCudaSynchronize(stream);
}

/// Widens `count` elements of `bytes` each (f32 or bf16 bits) to double.
std::vector<double> widen(const std::vector<uint8_t> &raw, int bytes) {
  std::vector<double> out(raw.size() / bytes);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    if (bytes == 4)
      std::memcpy(&bits, &raw[i * 4], 4);
    else {
      uint16_t half;
      std::memcpy(&half, &raw[i * 2], 2);
      bits = static_cast<uint32_t>(half) << 16;
    }
    float v;
    std::memcpy(&v, &bits, 4);
    out[i] = v;
  }
  return out;
}

/// Rounds to the element type (f32 or bf16) and back.
double roundTo(double value, int bytes) {
  float f = static_cast<float>(value);
  if (bytes == 4)
    return f;
  uint32_t bits = static_cast<uint32_t>(toBF16(f)) << 16;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Checks rows 0 and M-1 of the outputs of `c` (weight 1, bias 0, alpha
/// 0.5) against a double reference with the test bounds; returns the error
/// metric of test/tools/normref.py (max |y - ref| / (|ref| + rms(ref))),
/// restated here because the GPU machine has no Python.
double verify(const BenchCase &c, uint8_t *x, uint8_t *r, uint8_t *y,
              uint8_t *s, void *stream) {
  double worst = 0.0;
  for (int64_t row : {int64_t(0), c.m - 1}) {
    size_t rowBytes = c.n * c.elementBytes, at = row * rowBytes;
    auto fetch = [&](uint8_t *device) {
      std::vector<uint8_t> host(rowBytes);
      mgpuMemcpy(host.data(), device + at, rowBytes, stream);
      normCudaSynchronize(stream);
      return widen(host, c.elementBytes);
    };
    std::vector<double> in = fetch(x), out = fetch(y), ref(c.n);
    bool residual = c.streams == 2;
    if (residual) {
      std::vector<double> res = fetch(r), sum = fetch(s);
      for (int64_t j = 0; j < c.n; ++j) {
        in[j] = roundTo(in[j] + res[j], c.elementBytes);
        if (sum[j] != in[j])
          return INFINITY;
      }
    }
    double sum = 0.0, squares = 0.0;
    for (double v : in)
      sum += v;
    double mean = sum / c.n;
    // Ops are named "<op>" or "<op>/<variant>".
    auto isOp = [&](const char *name) {
      size_t length = std::strlen(name);
      return !std::strncmp(c.op, name, length) &&
             (c.op[length] == 0 || c.op[length] == '/');
    };
    bool layerNorm = isOp("layer_norm");
    for (double v : in)
      squares += layerNorm ? (v - mean) * (v - mean) : v * v;
    for (int64_t j = 0; j < c.n; ++j) {
      if (isOp("dyt"))
        ref[j] = std::tanh(0.5 * in[j]);
      else if (layerNorm)
        ref[j] = (in[j] - mean) / std::sqrt(squares / c.n + 1e-5);
      else
        ref[j] = in[j] / std::sqrt(squares / c.n + 1e-6);
      ref[j] = roundTo(ref[j], c.elementBytes);
    }
    double rms = 0.0;
    for (double v : ref)
      rms += v * v;
    rms = std::sqrt(rms / c.n);
    for (int64_t j = 0; j < c.n; ++j) {
      double e = std::fabs(out[j] - ref[j]) / (std::fabs(ref[j]) + rms);
      worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
  }
  return worst;
}

/// Whether the first `bytes` at `a` and `b` (device) are equal.
bool sameBytes(uint8_t *a, uint8_t *b, int64_t bytes, void *stream) {
  std::vector<uint8_t> hostA(bytes), hostB(bytes);
  mgpuMemcpy(hostA.data(), a, bytes, stream);
  mgpuMemcpy(hostB.data(), b, bytes, stream);
  normCudaSynchronize(stream);
  return hostA == hostB;
}

/// The share of the SM copy's bandwidth case `c` should reach (0: none).
double targetRatio(const BenchCase &c) {
  if (std::strchr(c.op, '/'))
    return 0.0; // a variant, timed for comparison
  if (c.m == 8192 && c.n == 4096)
    return !std::strncmp(c.op, "dyt", 3) ? 0.85 : 0.9;
  if (c.m == 32 && c.n == 8192)
    return 0.6;
  return 0.0;
}

} // namespace

int main(int argc, char **argv) {
  bool deviceCheck = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--device-check"))
      deviceCheck = true;
    else {
      std::fprintf(stderr, "usage: %s [--device-check]\n", argv[0]);
      return 2;
    }
  }
  char message[512];
  if (!normCudaAvailable(message, sizeof(message))) {
    std::fprintf(stderr, "gpu-bench: %s\n", message);
    return 1;
  }
  NormCudaDeviceInfo info;
  normCudaDeviceInfo(&info);
  std::printf("device: %s (sm_%d, %d SMs, driver %d), DRAM peak %.0f GB/s\n",
              info.name, info.computeCapability, info.multiprocessors,
              info.driverVersion, info.peakBandwidthGBs);
  if (deviceCheck)
    return 0;

  // One allocation for the largest case: x | r | y | s, then w, b, alpha.
  int64_t maxBytes = 0;
  for (const BenchCase &c : kCases)
    maxBytes = std::max(maxBytes, c.m * c.n * c.elementBytes);
  int64_t maxRow = 0;
  for (const BenchCase &c : kCases)
    maxRow = std::max(maxRow, c.n * 4);
  void *stream = mgpuStreamCreate();
  auto *base = static_cast<uint8_t *>(
      mgpuMemAlloc(4 * maxBytes + 3 * maxRow + 256, stream, false));
  uint8_t *x = base, *r = base + maxBytes, *y = base + 2 * maxBytes,
          *s = base + 3 * maxBytes, *w = base + 4 * maxBytes, *b = w + maxRow,
          *alpha = b + maxRow;

  std::printf("%-30s %9s %8s %8s %8s %8s %8s %8s  %s\n", "case", "us/call",
              "GB/s", "SM copy", "x SM", "D2D", "x D2D", "of peak", "output");
  std::string filled;
  bool targetMet = true, allVerified = true, copyVerified = true;
  std::string missed;
  std::mt19937 rng(20240611);
  std::normal_distribution<float> normal(0.5f, 1.5f);
  for (const BenchCase &c : kCases) {
    int64_t elements = c.m * c.n;
    if (filled != c.dtype) {
      // Inputs in this element type (values do not change the timing).
      int64_t count = maxBytes / c.elementBytes;
      fill(x, count, c.elementBytes, stream,
           [&](int64_t) { return normal(rng); });
      fill(r, count, c.elementBytes, stream,
           [&](int64_t) { return normal(rng); });
      fill(w, maxRow / 4, c.elementBytes, stream, [](int64_t) { return 1.0f; });
      fill(b, maxRow / 4, c.elementBytes, stream, [](int64_t) { return 0.0f; });
      fill(alpha, 1, c.elementBytes, stream, [](int64_t) { return 0.5f; });
      filled = c.dtype;
    }
    MemRef2 mx{x, x, 0, {c.m, c.n}, {c.n, 1}};
    MemRef2 mr{r, r, 0, {c.m, c.n}, {c.n, 1}};
    MemRef2 my{y, y, 0, {c.m, c.n}, {c.n, 1}};
    MemRef2 ms{s, s, 0, {c.m, c.n}, {c.n, 1}};
    MemRef1 mw{w, w, 0, {c.n}, {1}};
    MemRef1 mb{b, b, 0, {c.n}, {1}};
    MemRef1 ma{alpha, alpha, 0, {1}, {1}};

    // Generated code runs on our stream, without a sync per call.
    normCudaSetStream(stream);
    double seconds =
        timePerCall(stream, [&] { c.fn(&mx, &mr, &mw, &mb, &ma, &my, &ms); });
    normCudaSetStream(nullptr);
    // The kernel ran many times on the same inputs; check its last output.
    double error = verify(c, x, r, y, s, stream);
    double bound = c.elementBytes == 2 ? 1.0 / 64 : 1e-5;
    bool verified = error <= bound;
    allVerified = allVerified && verified;
    // The copies move the same bytes: read M*N*streams (x, r are adjacent),
    // write as many (into y, s).
    // y holds the kernel's output (not x) until the SM copy overwrites it,
    // so comparing y with x afterwards checks the copy.
    int64_t copyBytes = elements * c.elementBytes * c.streams;
    MemRef1 src{x, x, 0, {copyBytes / 4}, {1}};
    MemRef1 dst{y, y, 0, {copyBytes / 4}, {1}};
    normCudaSetStream(stream);
    double smSeconds =
        timePerCall(stream, [&] { _mlir_ciface_sm_copy(&src, &dst); });
    normCudaSetStream(nullptr);
    copyVerified = copyVerified && sameBytes(x, y, copyBytes, stream);
    double d2dSeconds =
        timePerCall(stream, [&] { mgpuMemcpy(y, x, copyBytes, stream); });

    double bytes = 2.0 * copyBytes;
    double gbs = bytes / seconds * 1e-9, smGbs = bytes / smSeconds * 1e-9,
           d2dGbs = bytes / d2dSeconds * 1e-9;
    char name[64];
    std::snprintf(name, sizeof(name), "%s/norm/%lldx%lld/%s", c.op,
                  static_cast<long long>(c.m), static_cast<long long>(c.n),
                  c.dtype);
    char peak[16] = "n/a";
    if (info.peakBandwidthGBs > 0)
      std::snprintf(peak, sizeof(peak), "%.1f%%",
                    100.0 * gbs / info.peakBandwidthGBs);
    char check[64];
    std::snprintf(check, sizeof(check), "%s (err %.2g)",
                  verified ? "ok" : "WRONG", error);
    std::printf("%-30s %9.2f %8.0f %8.0f %7.1f%% %8.0f %7.1f%% %8s  %s\n", name,
                seconds * 1e6, gbs, smGbs, 100.0 * gbs / smGbs, d2dGbs,
                100.0 * gbs / d2dGbs, peak, check);
    double target = targetRatio(c);
    if (target > 0 && gbs < target * smGbs) {
      targetMet = false;
      std::snprintf(check, sizeof(check), "%s below %.0f%%", name,
                    100.0 * target);
      missed += std::string(missed.empty() ? "" : ", ") + check;
    }
  }
  mgpuMemFree(base, stream);

  // Quantization and gradient kernels: bytes are those of every argument
  // read or written; the copies move as many (half read, half written).
  std::printf("\n%-42s %9s %8s %8s %8s %8s %8s\n", "case (fused / gradient)",
              "us/call", "GB/s", "SM copy", "x SM", "D2D", "x D2D");
  for (const ExtraCase &c : kExtraCases) {
    MemRef2 refs[8];
    void *buffers[8];
    int64_t bytes = 0;
    for (int i = 0; i < 8; ++i) {
      const ExtraArg &a = c.args[i];
      int64_t size = a.rows * a.cols * a.elementBytes;
      buffers[i] = mgpuMemAlloc(size + 16, stream, false);
      refs[i] =
          MemRef2{buffers[i], buffers[i], 0, {a.rows, a.cols}, {a.cols, 1}};
      if (std::strcmp(a.use, "none"))
        bytes += size;
      int width = a.elementBytes == 1 ? 4 : a.elementBytes;
      int64_t count = size / width;
      if (!std::strcmp(a.use, "in"))
        fill(buffers[i], count, width, stream,
             [&](int64_t) { return normal(rng); });
      else if (!std::strcmp(a.use, "positive"))
        fill(buffers[i], count, width, stream,
             [&](int64_t) { return 1.0f + std::fabs(normal(rng)); });
      else if (!std::strcmp(a.use, "one"))
        fill(buffers[i], count, width, stream, [](int64_t) { return 1.0f; });
      else if (!std::strcmp(a.use, "alpha"))
        fill(buffers[i], count, width, stream, [](int64_t) { return 0.5f; });
      else if (!std::strcmp(a.use, "scale"))
        fill(buffers[i], count, width, stream,
             [](int64_t) { return 1.0f / 64; });
    }
    normCudaSetStream(stream);
    double seconds = timePerCall(stream, [&] {
      c.fn(&refs[0], &refs[1], &refs[2], &refs[3], &refs[4], &refs[5], &refs[6],
           &refs[7]);
    });
    int64_t copyBytes = std::max<int64_t>(16, bytes / 2 / 16 * 16);
    auto *src = static_cast<uint8_t *>(mgpuMemAlloc(copyBytes, stream, false));
    auto *dst = static_cast<uint8_t *>(mgpuMemAlloc(copyBytes, stream, false));
    MemRef1 srcRef{src, src, 0, {copyBytes / 4}, {1}};
    MemRef1 dstRef{dst, dst, 0, {copyBytes / 4}, {1}};
    double smSeconds =
        timePerCall(stream, [&] { _mlir_ciface_sm_copy(&srcRef, &dstRef); });
    normCudaSetStream(nullptr);
    double d2dSeconds =
        timePerCall(stream, [&] { mgpuMemcpy(dst, src, copyBytes, stream); });
    double gbs = bytes / seconds * 1e-9,
           smGbs = 2.0 * copyBytes / smSeconds * 1e-9,
           d2dGbs = 2.0 * copyBytes / d2dSeconds * 1e-9;
    char name[96];
    std::snprintf(name, sizeof(name), "%s/%lldx%lld/%s", c.op,
                  static_cast<long long>(c.m), static_cast<long long>(c.n),
                  c.dtype);
    std::printf("%-42s %9.2f %8.0f %8.0f %7.1f%% %8.0f %7.1f%%\n", name,
                seconds * 1e6, gbs, smGbs, 100.0 * gbs / smGbs, d2dGbs,
                100.0 * gbs / d2dGbs);
    mgpuMemFree(src, stream);
    mgpuMemFree(dst, stream);
    for (void *buffer : buffers)
      mgpuMemFree(buffer, stream);
    normCudaSynchronize(stream);
  }
  mgpuStreamDestroy(stream);
  std::printf("targets (x SM copy: 8192x4096 rms_norm, layer_norm, "
              "add_rms_norm >= 90%%, dyt >= 85%%; 32x8192 >= 60%%): %s%s\n",
              targetMet ? "met" : "NOT met: ", missed.c_str());
  if (!allVerified)
    std::printf("error: some benchmark outputs are wrong\n");
  if (!copyVerified)
    std::printf("error: sm_copy did not copy its input\n");
  return allVerified && copyVerified ? 0 : 1;
}
