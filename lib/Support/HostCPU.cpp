//===- HostCPU.cpp - What the host CPU offers the CPU lowerings -----------===//
//
// Host-CPU queries shared by norm-lower-cpu, norm-vectorize-matmul,
// norm-cpu-pipeline and the tools, and the same facts for a named CPU from
// LLVM's target parser (which needs no registered target).
//
//===----------------------------------------------------------------------===//

#include "norm/Support/HostCPU.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/AArch64TargetParser.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

using namespace mlir;

/// The vector width in bits that the x86 features `features` give: 512
/// with AVX-512F, 256 with AVX, else 128.
static unsigned getX86VectorWidth(const llvm::StringMap<bool> &features) {
  if (features.lookup("avx512f"))
    return 512;
  if (features.lookup("avx"))
    return 256;
  return 128;
}

unsigned mlir::norm::getHostVectorWidth() {
  return getX86VectorWidth(llvm::sys::getHostCPUFeatures());
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

FailureOr<norm::TargetCPUInfo> mlir::norm::lookupTargetCPU(StringRef cpu) {
  norm::TargetCPUInfo info;
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None) {
    // The CPU's features with those they imply (e.g. avx2 -> avx).
    SmallVector<StringRef> names;
    llvm::X86::getFeaturesForCPU(cpu, names);
    llvm::StringMap<bool> features;
    for (StringRef name : names) {
      features[name] = true;
      llvm::X86::updateImpliedFeatures(name, /*Enabled=*/true, features);
    }
    info.vectorWidth = getX86VectorWidth(features);
    info.nativeBF16 = features.lookup("avx512bf16");
    for (const auto &feature : features)
      if (feature.getValue())
        info.features.push_back(("+" + feature.getKey()).str());
    llvm::sort(info.features);
    return info;
  }
  if (std::optional<llvm::AArch64::CpuInfo> aarch64 =
          llvm::AArch64::parseCpu(cpu)) {
    // NEON registers: fixed-width vectors are 128 bits also with SVE.
    info.vectorWidth = 128;
    info.nativeBF16 =
        aarch64->getImpliedExtensions().test(llvm::AArch64::AEK_BF16);
    llvm::AArch64::ExtensionSet extensions;
    extensions.addCPUDefaults(*aarch64);
    std::vector<StringRef> names;
    extensions.toLLVMFeatureList(names);
    for (StringRef name : names)
      info.features.push_back(name.str());
    return info;
  }
  return failure();
}
