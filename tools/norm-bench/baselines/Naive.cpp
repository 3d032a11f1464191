//===- Naive.cpp - Plain C++ normalization loops ----------------*- C++ -*-===//
//
// The straightforward implementation a user would write, compiled with
// -O3 -march=native -ffast-math and OpenMP over rows.
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"

#include <cmath>
#include <cstring>
#include <omp.h>

using namespace norm_bench;

static inline float loadBF16(uint16_t v) {
  uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t storeBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

template <typename T> static inline float load(const T *p, int64_t i);
template <> inline float load<float>(const float *p, int64_t i) { return p[i]; }
template <> inline float load<uint16_t>(const uint16_t *p, int64_t i) {
  return loadBF16(p[i]);
}
template <typename T> static inline void store(T *p, int64_t i, float v);
template <> inline void store<float>(float *p, int64_t i, float v) { p[i] = v; }
template <> inline void store<uint16_t>(uint16_t *p, int64_t i, float v) {
  p[i] = storeBF16(v);
}

template <typename T> static void layerNorm(const Problem &p) {
  const T *x = static_cast<const T *>(p.x);
  const T *w = static_cast<const T *>(p.weight);
  const T *b = static_cast<const T *>(p.bias);
  T *y = static_cast<T *>(p.y);
  int64_t n = p.cols;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < p.rows; ++r) {
    const T *xr = x + r * n;
    float sum = 0;
    for (int64_t j = 0; j < n; ++j)
      sum += load(xr, j);
    float mean = sum / n, sq = 0;
    for (int64_t j = 0; j < n; ++j) {
      float d = load(xr, j) - mean;
      sq += d * d;
    }
    float rstd = 1.0f / std::sqrt(sq / n + p.epsilon);
    for (int64_t j = 0; j < n; ++j)
      store(y + r * n, j,
            (load(xr, j) - mean) * rstd * load(w, j) + load(b, j));
  }
}

template <typename T> static void rmsNorm(const Problem &p, bool addResidual) {
  const T *x = static_cast<const T *>(p.x);
  const T *res = static_cast<const T *>(p.residual);
  const T *w = static_cast<const T *>(p.weight);
  T *y = static_cast<T *>(p.y);
  T *s = static_cast<T *>(p.residualOut);
  int64_t n = p.cols;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < p.rows; ++r) {
    const T *xr = x + r * n;
    float sq = 0;
    if (addResidual) {
      for (int64_t j = 0; j < n; ++j) {
        store(s + r * n, j, load(xr, j) + load(res + r * n, j));
        float v = load(s + r * n, j);
        sq += v * v;
      }
      xr = s + r * n;
    } else {
      for (int64_t j = 0; j < n; ++j) {
        float v = load(xr, j);
        sq += v * v;
      }
    }
    float scale = 1.0f / std::sqrt(sq / n + p.epsilon);
    for (int64_t j = 0; j < n; ++j)
      store(y + r * n, j, load(xr, j) * scale * load(w, j));
  }
}

template <typename T> static void dyt(const Problem &p) {
  const T *x = static_cast<const T *>(p.x);
  const T *w = static_cast<const T *>(p.weight);
  const T *b = static_cast<const T *>(p.bias);
  T *y = static_cast<T *>(p.y);
  int64_t n = p.cols;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t j = 0; j < n; ++j)
      store(y + r * n, j,
            std::tanh(p.alpha * load(x + r * n, j)) * load(w, j) + load(b, j));
}

template <typename T> static bool run(Case kind, const Problem &p) {
  switch (kind) {
  case Case::LayerNorm:
    layerNorm<T>(p);
    return true;
  case Case::RMSNorm:
    rmsNorm<T>(p, false);
    return true;
  case Case::AddRMSNorm:
    rmsNorm<T>(p, true);
    return true;
  case Case::DyT:
    dyt<T>(p);
    return true;
  }
  return false;
}

bool norm_bench::runNaive(Case kind, const Problem &p) {
  return p.dtype == DType::F32 ? run<float>(kind, p) : run<uint16_t>(kind, p);
}

void norm_bench::setBaselineThreads(int threads) {
  omp_set_num_threads(threads);
}
