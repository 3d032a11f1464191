/* Calls two norm-aot kernels linked into one program (add + RMSNorm on
 * rows of 64 and of 128) and checks both against a double reference. */
#include "add_rms64.h"
#include "add_rms128.h"

#include <math.h>
#include <stdio.h>

static int check(const float *x, const float *w, const float *r,
                 const float *y, const float *s, int rows, int n) {
  int bad = 0;
  for (int i = 0; i < rows; ++i) {
    double ms = 0;
    for (int j = 0; j < n; ++j) {
      float sum = x[i * n + j] + r[i * n + j];
      if (s[i * n + j] != sum)
        ++bad;
      ms += (double)sum * sum;
    }
    double scale = 1.0 / sqrt(ms / n + 1e-6);
    for (int j = 0; j < n; ++j) {
      double ref = (double)s[i * n + j] * scale * w[j];
      if (fabs(y[i * n + j] - ref) > 1e-5 * (fabs(ref) + 1.0))
        ++bad;
    }
  }
  return bad;
}

int main(void) {
  enum { ROWS = 3 };
  static float x[ROWS * 128], r[ROWS * 128], w[128], y[ROWS * 128],
      s[ROWS * 128];
  for (int i = 0; i < ROWS * 128; ++i) {
    x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    r[i] = (float)((i * 11) % 29) / 20.0f - 0.7f;
  }
  for (int j = 0; j < 128; ++j)
    w[j] = 0.5f + (float)j / 128.0f;
  add_rms64(x, w, r, y, s, ROWS);
  int bad64 = check(x, w, r, y, s, ROWS, 64);
  add_rms128(x, w, r, y, s, ROWS);
  int bad128 = check(x, w, r, y, s, ROWS, 128);
  printf("add_rms64: %d mismatches\nadd_rms128: %d mismatches\n", bad64,
         bad128);
  return bad64 || bad128;
}
