//===- NormToVector.h - Lower norm ops to vector row loops ------*- C++ -*-===//
//
// The direct CPU lowering of norm ops (norm-lower-cpu).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H
#define NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H

#include "norm/Dialect/Norm/IR/NormOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace norm {

/// Parameters of the direct CPU lowering.
struct NormCPULoweringOptions {
  /// Vector register width in bits; 0 asks the host CPU.
  unsigned vectorWidth = 0;
  /// Threads rows may be spread over.
  unsigned threads = 1;
  /// Inputs with fewer elements are processed by one thread.
  int64_t parallelThreshold = 1 << 17;
  /// Results of at least this many bytes in all are written with
  /// non-temporal stores (dynamic shapes count as large); negative: never.
  int64_t nontemporalThreshold = 8 << 20;
};

/// Attribute on the scf.forall of norm-lower-cpu asking for non-temporal
/// stores of full vectors (applied by norm-forall-to-loops).
/// Marks an scf.forall that norm-forall-to-loops keeps sequential (set by
/// norm-lower-cpu for small inputs and by norm-vectorize-matmul).
constexpr llvm::StringLiteral kSequentialAttrName = "norm.sequential";

constexpr llvm::StringLiteral kNontemporalStoresAttrName =
    "norm.nontemporal_stores";

/// Attribute on the scf.forall of norm-lower-cpu asking that the last sweep
/// over a row prefetch the next row (applied by norm-forall-to-loops).
constexpr llvm::StringLiteral kPrefetchNextRowAttrName =
    "norm.prefetch_next_row";

/// The vector register width of the host CPU in bits (512 with AVX-512F,
/// 256 with AVX, else 128).
unsigned getHostVectorWidth();

/// Lowers `op` to an scf.forall over rows with vector sweeps on tensors and
/// returns the replacement values of its results.
FailureOr<SmallVector<Value>>
lowerNormOpToVectorLoops(RewriterBase &rewriter, NormOpInterface op,
                         const NormCPULoweringOptions &options);

/// Adds the pattern rewriting every norm op with lowerNormOpToVectorLoops.
void populateNormToVectorPatterns(RewritePatternSet &patterns,
                                  const NormCPULoweringOptions &options);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_NORMTOVECTOR_NORMTOVECTOR_H
