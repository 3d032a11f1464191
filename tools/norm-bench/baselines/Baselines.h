//===- Baselines.h - Reference implementations for norm-bench ---*- C++ -*-===//
//
// What norm-bench measures our code against: plain C++ loops, oneDNN, and
// the machine's copy floors. bf16 is stored as uint16_t.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_BASELINES_BASELINES_H
#define NORM_TOOLS_NORMBENCH_BASELINES_BASELINES_H

#include <cstddef>
#include <cstdint>

namespace norm_bench {

/// Element type of a benchmark case.
enum class DType { F32, BF16 };

/// Normalization case.
enum class Case { LayerNorm, RMSNorm, DyT, AddRMSNorm };

/// Buffers and sizes of one benchmark case; pointers are to f32 or bf16
/// (uint16_t) data per `dtype`, weights and bias always of the same type.
struct Problem {
  DType dtype;
  int64_t rows, cols;
  const void *x, *residual, *weight, *bias;
  float alpha;
  void *y, *residualOut;
  float epsilon;
};

/// Plain C++ loops (compiled with -O3 -march=native -ffast-math, OpenMP over
/// rows). Returns false for a case it does not implement.
bool runNaive(Case kind, const Problem &p);

/// oneDNN layer_normalization forward inference (LayerNorm only). The
/// primitive is created on first use for each shape and reused.
bool runOneDNN(Case kind, const Problem &p);
/// True when oneDNN implements `kind` for `p`'s shape and dtype on this CPU
/// (creates the primitive).
bool oneDNNSupports(Case kind, const Problem &p);

/// Streaming copy of `bytes` bytes (OpenMP over chunks).
void copyFloor(const void *src, void *dst, size_t bytes);
/// Copy with non-temporal stores (no write-allocate read).
void copyNonTemporalFloor(const void *src, void *dst, size_t bytes);

/// Sets the thread count of the OpenMP runtime the baselines use.
void setBaselineThreads(int threads);

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_BASELINES_BASELINES_H
