//===- Copy.cpp - Memory bandwidth floors -----------------------*- C++ -*-===//
//
// The machine's floor for a read-once/write-once kernel: a streaming copy,
// and a copy with non-temporal stores (no write-allocate read).
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"

#include <cstring>
#include <immintrin.h>
#include <omp.h>

using namespace norm_bench;

void norm_bench::copyFloor(const void *src, void *dst, size_t bytes) {
  const char *s = static_cast<const char *>(src);
  char *d = static_cast<char *>(dst);
  constexpr size_t kChunk = 1 << 16;
  int64_t chunks = int64_t((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    size_t begin = size_t(c) * kChunk;
    size_t size = begin + kChunk > bytes ? bytes - begin : kChunk;
    std::memcpy(d + begin, s + begin, size);
  }
}

void norm_bench::copyNonTemporalFloor(const void *src, void *dst,
                                      size_t bytes) {
  const float *s = static_cast<const float *>(src);
  float *d = static_cast<float *>(dst);
  int64_t floats = int64_t(bytes / 4);
  int64_t vectors = floats / 8;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < vectors; ++i)
    _mm256_stream_ps(d + 8 * i, _mm256_loadu_ps(s + 8 * i));
  for (int64_t i = vectors * 8; i < floats; ++i)
    d[i] = s[i];
  std::memcpy(reinterpret_cast<char *>(d) + floats * 4,
              reinterpret_cast<const char *>(s) + floats * 4, bytes % 4);
  _mm_sfence();
}
