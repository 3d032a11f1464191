/* Calls three norm-aot kernels on the same inputs (rms_norm on ?x64 f32
 * with weight and residual, eps 1e-6): rms64 (y), rms64_nvfp4 (y quantized
 * to NVFP4 in the same kernel, row-major e4m3 scales, global scale 2) and
 * rms64_mxfp4 (MXFP4, swizzled_128x4 UE8M0 scales), on 5 rows, and writes
 * the inputs and results as raw little-endian arrays into the folder
 * argv[1] (x.bin, weight.bin, residual.bin, y.bin, residual_out.bin and
 * q_S.bin, scales_S.bin, residual_out_S.bin for S = nvfp4, mxfp4), for
 * aot_check.py to compare with the references. */
#include "rms64.h"
#include "rms64_mxfp4.h"
#include "rms64_nvfp4.h"

#include <stdio.h>

enum { Rows = 5, Cols = 64 };
/* The swizzled scales: roundup(5, 128) * roundup(64 / 32, 4). */
enum { SwizzledScales = 128 * 4 };

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
  static float s_nv[Rows * Cols], s_mx[Rows * Cols];
  /* f4E2M1FN: two elements per byte, Cols / 2 bytes per row. */
  static uint8_t q_nv[Rows * Cols / 2], q_mx[Rows * Cols / 2];
  static uint8_t scales_nv[Rows * Cols / 16], scales_mx[SwizzledScales];
  const float global_scale = 2.0f;
  for (int i = 0; i < Rows * Cols; ++i) {
    x[i] = (float)((i * 7919) % 101) / 25.0f - 2.0f;
    r[i] = (float)((i * 104729) % 37) / 50.0f - 0.3f;
  }
  /* A zero row: zero scales. */
  for (int j = 0; j < Cols; ++j)
    x[j] = r[j] = 0.0f;
  /* Weights of magnitudes 1/16 to 16, changing every 16 columns, so that
   * the groups' scales differ. */
  for (int j = 0; j < Cols; ++j)
    w[j] = (0.75f + (float)j / 64.0f) * (float)(1 << (4 * (j / 16))) / 16.0f;
  rms64(x, w, r, y, s, Rows);
  rms64_nvfp4(x, w, r, &global_scale, q_nv, scales_nv, s_nv, Rows);
  rms64_mxfp4(x, w, r, q_mx, scales_mx, s_mx, Rows);

  int failed = dump(argv[1], "x.bin", x, sizeof(x)) |
               dump(argv[1], "weight.bin", w, sizeof(w)) |
               dump(argv[1], "residual.bin", r, sizeof(r)) |
               dump(argv[1], "y.bin", y, sizeof(y)) |
               dump(argv[1], "residual_out.bin", s, sizeof(s)) |
               dump(argv[1], "q_nvfp4.bin", q_nv, sizeof(q_nv)) |
               dump(argv[1], "scales_nvfp4.bin", scales_nv,
                    sizeof(scales_nv)) |
               dump(argv[1], "residual_out_nvfp4.bin", s_nv, sizeof(s_nv)) |
               dump(argv[1], "q_mxfp4.bin", q_mx, sizeof(q_mx)) |
               dump(argv[1], "scales_mxfp4.bin", scales_mx,
                    sizeof(scales_mx)) |
               dump(argv[1], "residual_out_mxfp4.bin", s_mx, sizeof(s_mx));
  return failed;
}
