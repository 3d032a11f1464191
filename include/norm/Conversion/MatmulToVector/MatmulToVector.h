//===- MatmulToVector.h - Register-tiled vector matmuls ---------*- C++ -*-===//
//
// The CPU code norm-cpu-pipeline gives the matmuls next to norms (see
// norm-vectorize-matmul in Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_MATMULTOVECTOR_MATMULTOVECTOR_H
#define NORM_CONVERSION_MATMULTOVECTOR_MATMULTOVECTOR_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace norm {

/// How norm-vectorize-matmul tiles a contraction.
struct NormMatmulVectorizationOptions {
  /// Vector register width in bits; 0 asks the host CPU.
  unsigned vectorWidth = 0;
  /// Rows of the register tile; 0: 8 with 512-bit vectors, else 4.
  int64_t tileM = 0;
  /// Columns of the register tile; 0: two vectors.
  int64_t tileN = 0;
  /// Columns of B per cache block (the parallel loop's step).
  int64_t blockN = 256;
  /// Rows of B per cache block.
  int64_t blockK = 256;
  /// Threads the N blocks may be spread over (1: the block loop is marked
  /// sequential).
  unsigned threads = 1;
};

/// Tiles an f32/f64 contraction with one M, N and K dim (and any batch
/// dims) into cache blocks and register tiles, vectorizes the register tile
/// and lowers it to FMAs on rows of the tile (see norm-vectorize-matmul).
/// Returns the value replacing the op's result. It runs greedy rewrites of
/// its own on the loops it creates, so call it with an IRRewriter, not from
/// inside a pattern.
FailureOr<Value> vectorizeMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const NormMatmulVectorizationOptions &options);

} // namespace norm
} // namespace mlir

#endif // NORM_CONVERSION_MATMULTOVECTOR_MATMULTOVECTOR_H
