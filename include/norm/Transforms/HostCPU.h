//===- HostCPU.h - What the host CPU offers the CPU lowerings ---*- C++ -*-===//
//
// One place for the host-CPU queries of the CPU lowerings and the CPU
// pipeline, and for the check of their `vector-width` options.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TRANSFORMS_HOSTCPU_H
#define NORM_TRANSFORMS_HOSTCPU_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

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

#endif // NORM_TRANSFORMS_HOSTCPU_H
