//===- KernelCall.h - Calling JIT-compiled kernels in norm-bench -*- C++
//-*-===//
//
// What the quantization and gradient cases share: aligned buffers, memref
// descriptors and calls through the C interface, bf16 inputs, and the
// pieces of the kernel modules they build (reads of memref arguments as
// tensors, writes of results into them, the @kernel function).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TOOLS_NORMBENCH_KERNELCALL_H
#define NORM_TOOLS_NORMBENCH_KERNELCALL_H

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace norm_bench {

/// A 64-byte aligned, zeroed allocation.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes)
      : data(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), size(bytes) {
    std::memset(data, 0, (bytes + 63) / 64 * 64);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  void *data;
  size_t size;
};

/// A memref descriptor of rank <= 2 as the C interface reads it:
/// allocated, aligned, offset, sizes, strides.
struct Descriptor {
  int64_t fields[7] = {};
  Descriptor() = default;
  Descriptor(void *data, std::vector<int64_t> shape) {
    fields[0] = fields[1] = reinterpret_cast<intptr_t>(data);
    size_t rank = shape.size();
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      fields[3 + d] = shape[d];
      fields[3 + rank + d] = stride;
      stride *= shape[d];
    }
  }
};

/// Calls `_mlir_ciface_kernel(desc *...)` with pointers to `args` (three
/// to nine of them).
inline void callKernel(void *entry, std::vector<Descriptor> &args) {
  using P = void *;
  P p[9] = {};
  for (size_t i = 0; i < args.size(); ++i)
    p[i] = &args[i];
  switch (args.size()) {
  case 3:
    return reinterpret_cast<void (*)(P, P, P)>(entry)(p[0], p[1], p[2]);
  case 4:
    return reinterpret_cast<void (*)(P, P, P, P)>(entry)(p[0], p[1], p[2],
                                                         p[3]);
  case 5:
    return reinterpret_cast<void (*)(P, P, P, P, P)>(entry)(p[0], p[1], p[2],
                                                            p[3], p[4]);
  case 6:
    return reinterpret_cast<void (*)(P, P, P, P, P, P)>(entry)(
        p[0], p[1], p[2], p[3], p[4], p[5]);
  case 7:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P)>(entry)(
        p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
  case 8:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P)>(entry)(
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
  case 9:
    return reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(entry)(
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
  default:
    llvm::report_fatal_error("norm-bench: unexpected kernel arity");
  }
}

inline uint16_t toBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

inline void fillBF16(void *data, size_t count, float mean, float spread,
                     unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, spread);
  auto *out = static_cast<uint16_t *>(data);
  for (size_t i = 0; i < count; ++i)
    out[i] = toBF16(dist(rng));
}

inline std::string toTensor(const std::string &name, const std::string &memref,
                            const std::string &tensor) {
  return llvm::formatv("  %{0} = bufferization.to_tensor %{0}m restrict : "
                       "{1} to {2}\n",
                       name, memref, tensor);
}

inline std::string store(const std::string &name, const std::string &tensor,
                         const std::string &memref) {
  return llvm::formatv("  bufferization.materialize_in_destination %{0} in "
                       "restrict writable %{0}m : ({1}, {2}) -> ()\n",
                       name, tensor, memref);
}

inline std::string wrap(const std::string &params, const std::string &body) {
  return llvm::formatv("func.func @kernel({0}) attributes "
                       "{{llvm.emit_c_interface} {{\n{1}  return\n}\n",
                       params, body)
      .str();
}

} // namespace norm_bench

#endif // NORM_TOOLS_NORMBENCH_KERNELCALL_H
