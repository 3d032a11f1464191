//===- print_main.cpp - Driver of ahead-of-time GPU suites checked later --===//
//
// Linked with one compiled grad_exec.py, quant_exec.py or blockscale_exec.py
// suite (its `@main` renamed to `norm_main`) and norm_cuda_runtime. The
// suite prints every output with printMemrefF32/F64 (blockscale_exec.py's
// bit patterns with printMemrefI32); this driver provides those functions
// (LLVM's runner utils need libMLIR and libLLVM, which the GPU machine does
// not have) and prints in their format, which the suite's own
// `check REF.npz OUTPUT` parses (test/tools/normref.py: parse_printed),
// with the digits that give back every value exactly:
//
//   <test> > OUTPUT
//
// Exits 1 with the runtime's message when no GPU can be used.
//
//===----------------------------------------------------------------------===//

#include "norm/Runtime/CudaRuntime.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

/// Prints a strided memref of rank `rank` (descriptor as generated code
/// passes it) the way LLVM's printMemref does, values in one bracket.
template <typename T>
void print(int64_t rank, void *descriptor, const char *format) {
  auto *words = static_cast<int64_t *>(descriptor);
  const T *aligned = reinterpret_cast<const T *>(words[1]);
  int64_t offset = words[2];
  const int64_t *sizes = words + 3;
  const int64_t *strides = words + 3 + rank;
  std::printf("Unranked Memref base@ = %p rank = %lld offset = %lld sizes = [",
              static_cast<const void *>(aligned), static_cast<long long>(rank),
              static_cast<long long>(offset));
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    std::printf("%s%lld", d ? ", " : "", static_cast<long long>(sizes[d]));
    count *= sizes[d];
  }
  std::printf("] strides = [");
  for (int64_t d = 0; d < rank; ++d)
    std::printf("%s%lld", d ? ", " : "", static_cast<long long>(strides[d]));
  std::printf("] data = \n[");
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = offset;
    for (int64_t d = 0; d < rank; ++d)
      at += index[d] * strides[d];
    if (i)
      std::fputs(i % 16 ? ", " : ",\n", stdout);
    std::printf(format, static_cast<double>(aligned[at]));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  std::printf("]\n");
}

/// An unranked memref as generated code passes it to printMemref.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

} // namespace

extern "C" {
void norm_main();

// Both entry points: modules declare printMemref with and without
// `llvm.emit_c_interface`.
void printMemrefF32(int64_t rank, void *descriptor) {
  print<float>(rank, descriptor, "%.9g");
}
void printMemrefF64(int64_t rank, void *descriptor) {
  print<double>(rank, descriptor, "%.17g");
}
void printMemrefI32(int64_t rank, void *descriptor) {
  print<int32_t>(rank, descriptor, "%.10g");
}
void _mlir_ciface_printMemrefF32(UnrankedMemRef *memref) {
  printMemrefF32(memref->rank, memref->descriptor);
}
void _mlir_ciface_printMemrefF64(UnrankedMemRef *memref) {
  printMemrefF64(memref->rank, memref->descriptor);
}
void _mlir_ciface_printMemrefI32(UnrankedMemRef *memref) {
  printMemrefI32(memref->rank, memref->descriptor);
}
}

int main() {
  char message[512];
  if (!normCudaAvailable(message, sizeof(message))) {
    std::fprintf(stderr, "norm_cuda_runtime: %s\n", message);
    return 1;
  }
  norm_main();
  std::fflush(stdout);
  return 0;
}
