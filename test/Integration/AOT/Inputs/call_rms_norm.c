/* Calls the norm-aot kernel rms64 (rms_norm on ?x64 f32 with weight and
 * residual, eps 1e-6) and compares it with a double reference. */
#include "rms64.h"

#include <math.h>
#include <stdio.h>

enum { Rows = 5, Cols = 64 };

int main(void) {
  static float x[Rows * Cols], r[Rows * Cols], w[Cols];
  static float y[Rows * Cols], s[Rows * Cols];
  for (int i = 0; i < Rows * Cols; ++i) {
    x[i] = (float)((i * 7919) % 101) / 25.0f - 2.0f;
    r[i] = (float)((i * 104729) % 37) / 50.0f - 0.3f;
  }
  for (int j = 0; j < Cols; ++j)
    w[j] = 0.75f + (float)j / 64.0f;
  rms64(x, w, r, y, s, Rows);

  int exact = 1;
  double maxError = 0;
  for (int i = 0; i < Rows; ++i) {
    double ms = 0, refs[Cols], refMs = 0;
    for (int j = 0; j < Cols; ++j) {
      float sum = x[i * Cols + j] + r[i * Cols + j]; /* rounded to f32 */
      exact &= s[i * Cols + j] == sum;
      ms += (double)sum * sum;
    }
    double inv = 1.0 / sqrt(ms / Cols + 1e-6);
    for (int j = 0; j < Cols; ++j) {
      float sum = x[i * Cols + j] + r[i * Cols + j];
      refs[j] = sum * inv * w[j];
      refMs += refs[j] * refs[j];
    }
    double rms = sqrt(refMs / Cols);
    for (int j = 0; j < Cols; ++j) {
      double e = fabs(y[i * Cols + j] - refs[j]) / (fabs(refs[j]) + rms);
      if (e > maxError)
        maxError = e;
    }
  }
  printf("rms64 rows=%d: residual_out exact=%d y error below 1e-5=%d\n", Rows,
         exact, maxError < 1e-5);
  return 0;
}
