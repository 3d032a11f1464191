//===- HostCPU.cpp - What the host CPU offers the CPU lowerings -----------===//
//
// Host-CPU queries shared by norm-lower-cpu, norm-vectorize-matmul,
// norm-cpu-pipeline and the tools.
//
//===----------------------------------------------------------------------===//

#include "norm/Transforms/HostCPU.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

unsigned mlir::norm::getHostVectorWidth() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx"))
    return 256;
  return 128;
}

bool mlir::norm::hostHasNativeBF16() {
  return llvm::sys::getHostCPUFeatures().lookup("avx512bf16");
}

std::string mlir::norm::describeHostVectorFeatures() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::string result;
  for (StringRef name : {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f",
                         "avx512bw", "avx512vl", "avx512bf16", "avx512fp16"}) {
    if (!features.lookup(name))
      continue;
    if (!result.empty())
      result += ' ';
    result += name.str();
  }
  return result.empty() ? "none" : result;
}

bool mlir::norm::isValidVectorWidthOption(unsigned bits) {
  return bits == 0 || (bits >= 64 && bits <= 2048 && llvm::isPowerOf2_32(bits));
}

unsigned mlir::norm::resolveVectorWidth(unsigned bits) {
  return bits ? bits : getHostVectorWidth();
}
