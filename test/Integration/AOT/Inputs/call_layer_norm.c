/* Calls the norm-aot kernel ln_bf16 (layer_norm on 4x?x48 bf16 over the last
 * two dims, called with ? = 2; bf16 weight, f32 bias) and compares it with a
 * double reference rounded to bf16 once (DESIGN.md section 6 bound for bf16:
 * 2^-6). */
#include "ln_bf16.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { Rows = 4, N = 96 };

static float fromBF16(uint16_t bits) {
  uint32_t u = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t toBF16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

int main(void) {
  static uint16_t x[Rows * N], w[N], y[Rows * N];
  static float b[N];
  for (int i = 0; i < Rows * N; ++i)
    x[i] = toBF16((float)((i * 7919) % 113) / 16.0f + 100.0f * (i / N));
  for (int j = 0; j < N; ++j) {
    w[j] = toBF16(0.5f + (float)(j % 7) / 8.0f);
    b[j] = (float)(j % 5) / 10.0f - 0.2f;
  }
  ln_bf16(x, w, b, y, 2);

  double maxError = 0;
  for (int i = 0; i < Rows; ++i) {
    double mean = 0, var = 0, ref[N], refMs = 0;
    for (int j = 0; j < N; ++j)
      mean += fromBF16(x[i * N + j]);
    mean /= N;
    for (int j = 0; j < N; ++j) {
      double d = fromBF16(x[i * N + j]) - mean;
      var += d * d;
    }
    var /= N;
    for (int j = 0; j < N; ++j) {
      double n = (fromBF16(x[i * N + j]) - mean) / sqrt(var + 1e-5);
      ref[j] = fromBF16(toBF16((float)(n * fromBF16(w[j]) + b[j])));
      refMs += ref[j] * ref[j];
    }
    double rms = sqrt(refMs / N);
    for (int j = 0; j < N; ++j) {
      double e = fabs(fromBF16(y[i * N + j]) - ref[j]) / (fabs(ref[j]) + rms);
      if (e > maxError)
        maxError = e;
    }
  }
  printf("ln_bf16: error below 2^-6=%d\n", maxError <= 1.0 / 64);
  return 0;
}
