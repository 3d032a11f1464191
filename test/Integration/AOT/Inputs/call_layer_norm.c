/* Calls the norm-aot kernel ln_bf16 (layer_norm on 4x?x48 bf16 over the last
 * two dims, called with ? = 2; bf16 weight, f32 bias) and writes its inputs
 * and result as raw little-endian arrays into the folder argv[1] (x.bin,
 * weight.bin, bias.bin, y.bin), for aot_check.py to compare with the float64
 * reference. */
#include "ln_bf16.h"

#include <stdio.h>
#include <string.h>

enum { Rows = 4, N = 96 };

static uint16_t toBF16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
  return (uint16_t)(u >> 16);
}

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
  static uint16_t x[Rows * N], w[N], y[Rows * N];
  static float b[N];
  for (int i = 0; i < Rows * N; ++i)
    x[i] = toBF16((float)((i * 7919) % 113) / 16.0f + 100.0f * (i / N));
  for (int j = 0; j < N; ++j) {
    w[j] = toBF16(0.5f + (float)(j % 7) / 8.0f);
    b[j] = (float)(j % 5) / 10.0f - 0.2f;
  }
  ln_bf16(x, w, b, y, 2);

  int failed = dump(argv[1], "x.bin", x, sizeof(x)) |
               dump(argv[1], "weight.bin", w, sizeof(w)) |
               dump(argv[1], "bias.bin", b, sizeof(b)) |
               dump(argv[1], "y.bin", y, sizeof(y));
  return failed;
}
