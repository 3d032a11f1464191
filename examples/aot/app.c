/*===- app.c - A program calling a kernel built by norm-aot -------*- C -*-===*\
|*                                                                            *|
|* Calls rms4096 (README.md#embedding: norm-aot --op rms_norm --shape         *|
|* '?x4096' --dtype bf16 --weight f32 --residual --eps 1e-6 --shared) on      *|
|* 4 rows and checks y and the residual sum against a reference.              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "rms4096.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { ROWS = 4, HIDDEN = 4096 };

/* bf16 <-> f32, round to nearest even (no NaNs here). */
static uint16_t toBF16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}
static float fromBF16(uint16_t value) {
  uint32_t bits = (uint32_t)value << 16;
  float result;
  memcpy(&result, &bits, sizeof(result));
  return result;
}

static uint16_t x[ROWS * HIDDEN], r[ROWS * HIDDEN], y[ROWS * HIDDEN],
    s[ROWS * HIDDEN];
static float w[HIDDEN];

int main(void) {
  for (int i = 0; i < ROWS * HIDDEN; ++i) {
    x[i] = toBF16((float)((i * 37) % 101) / 50.0f - 1.0f);
    r[i] = toBF16((float)((i * 11) % 23) / 23.0f - 0.5f);
  }
  for (int j = 0; j < HIDDEN; ++j)
    w[j] = 0.5f + (float)(j % 7) / 7.0f;

  rms4096(x, w, r, y, s, ROWS);

  /* s = bf16(x + r); y = bf16(s * rsqrt(mean(s^2) + 1e-6) * w). */
  double maxError = 0;
  int sumsMatch = 1;
  for (int row = 0; row < ROWS; ++row) {
    double ms = 0;
    for (int j = 0; j < HIDDEN; ++j) {
      int i = row * HIDDEN + j;
      float sum = fromBF16(toBF16(fromBF16(x[i]) + fromBF16(r[i])));
      sumsMatch &= fromBF16(s[i]) == sum;
      ms += (double)sum * sum;
    }
    double scale = 1 / sqrt(ms / HIDDEN + 1e-6);
    for (int j = 0; j < HIDDEN; ++j) {
      int i = row * HIDDEN + j;
      double ref = fromBF16(s[i]) * scale * w[j];
      /* bf16 keeps 8 significant bits: relative error below 2^-8. */
      maxError = fmax(maxError, fabs(fromBF16(y[i]) - ref) / (fabs(ref) + 1e-3));
    }
  }
  int ok = sumsMatch && maxError < 1.0 / 128;
  printf("rms4096: %d rows, residual sums %s, max relative error %.1e: %s\n",
         ROWS, sumsMatch ? "exact" : "WRONG", maxError, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
