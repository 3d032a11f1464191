/* Calls the norm-aot kernel rms64 (rms_norm on ?x64 f32 with weight and
 * residual, eps 1e-6) on 5 rows and writes its inputs and results as raw
 * little-endian arrays into the folder argv[1] (x.bin, weight.bin,
 * residual.bin, y.bin, residual_out.bin), for aot_check.py to compare with
 * the float64 reference. */
#include "rms64.h"

#include <stdio.h>

enum { Rows = 5, Cols = 64 };

/* Writes `bytes` bytes of `data` to <dir>/<name>; returns 0 on success. */
static int dump(const char *dir, const char *name, const void *data,
                size_t bytes) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *file = fopen(path, "wb");
  if (!file) {
    perror(path);
    return 1;
  }
  size_t written = fwrite(data, 1, bytes, file);
  return fclose(file) != 0 || written != bytes;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  static float x[Rows * Cols], r[Rows * Cols], w[Cols];
  static float y[Rows * Cols], s[Rows * Cols];
  for (int i = 0; i < Rows * Cols; ++i) {
    x[i] = (float)((i * 7919) % 101) / 25.0f - 2.0f;
    r[i] = (float)((i * 104729) % 37) / 50.0f - 0.3f;
  }
  for (int j = 0; j < Cols; ++j)
    w[j] = 0.75f + (float)j / 64.0f;
  rms64(x, w, r, y, s, Rows);

  int failed = dump(argv[1], "x.bin", x, sizeof(x)) |
               dump(argv[1], "weight.bin", w, sizeof(w)) |
               dump(argv[1], "residual.bin", r, sizeof(r)) |
               dump(argv[1], "y.bin", y, sizeof(y)) |
               dump(argv[1], "residual_out.bin", s, sizeof(s));
  return failed;
}
