//===- HostCPU.h - What the host CPU offers the CPU lowerings ---*- C++ -*-===//
//
// One place for the host-CPU queries of the CPU lowerings and the CPU
// pipeline, the same facts for a named target CPU (cross-compilation), and
// the check of their `vector-width` options.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_SUPPORT_HOSTCPU_H
#define NORM_SUPPORT_HOSTCPU_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace mlir {
namespace norm {

/// The vector register width of the host CPU in bits (512 with AVX-512F,
/// 256 with AVX, else 128).
unsigned getHostVectorWidth();

/// Whether the host CPU converts f32 to bf16 in one instruction (AVX-512
/// BF16).
bool hostHasNativeBF16();

/// The vector-ISA features of the host CPU that matter to the CPU code, as
/// a space-separated list (e.g. "avx2 fma avx512f avx512bw avx512bf16").
std::string describeHostVectorFeatures();

/// What the CPU code needs to know of a target CPU.
struct TargetCPUInfo {
  /// The vector register width in bits (as getHostVectorWidth: 512 with
  /// AVX-512F, 256 with AVX, else 128; 128 on AArch64).
  unsigned vectorWidth = 128;
  /// Whether the CPU converts f32 to bf16 in one instruction (x86: AVX-512
  /// BF16, AArch64: BF16).
  bool nativeBF16 = false;
  /// Its features in LLVM's form (`+avx2`, ...), as clang writes them into
  /// the `target-features` of each function.
  SmallVector<std::string> features;
};

/// What LLVM's target parser knows of the CPU named `cpu` (x86-64:
/// `x86-64-v3`, `skylake-avx512`, `sapphirerapids`, `znver4`, ...; AArch64:
/// `neoverse-v1`, `apple-m1`, ...), or failure for a name it does not know
/// (`native` included: the host is the default, not a name).
FailureOr<TargetCPUInfo> lookupTargetCPU(StringRef cpu);

/// What a `target-cpu` option accepts, for diagnostics.
constexpr llvm::StringLiteral kTargetCPUExpectation =
    "an x86-64 or AArch64 CPU name LLVM knows (e.g. x86-64-v3, "
    "skylake-avx512, sapphirerapids, znver4, neoverse-v1)";

/// What a `vector-width` option accepts, for diagnostics.
constexpr llvm::StringLiteral kVectorWidthExpectation =
    "0 or a power of two in [64, 2048]";

/// Whether `bits` is a valid `vector-width` option: 0 (the host's width) or
/// a power of two in [64, 2048].
bool isValidVectorWidthOption(unsigned bits);

/// The width in bits a `vector-width` option asks for: `bits`, or the
/// host's when it is 0.
unsigned resolveVectorWidth(unsigned bits);

} // namespace norm
} // namespace mlir

#endif // NORM_SUPPORT_HOSTCPU_H
