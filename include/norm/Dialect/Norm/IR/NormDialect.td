//===- NormDialect.td - Norm dialect definition ------------*- tablegen -*-===//
//
// The norm dialect: first-class normalization layers of modern transformers.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_NORMDIALECT_TD
#define NORM_DIALECT_NORM_IR_NORMDIALECT_TD

include "mlir/IR/OpBase.td"

def Norm_Dialect : Dialect {
  let name = "norm";
  let cppNamespace = "::mlir::norm";
  let summary = "Normalization layers of transformers as first-class ops";
  let description = [{
    The `norm` dialect represents the normalization layers of modern
    transformers (LayerNorm, RMSNorm and Dynamic Tanh) as single
    tensor-level operations with exactly specified numerics: the statistics
    axis, the arithmetic type, where rounding happens, how epsilon enters,
    and an optional fused residual add. Passes raise decomposed
    normalizations into these ops, fuse them with their neighbours and lower
    them to linalg, vectorized CPU loops or GPU kernels.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;

  // Unit attributes norm-lower-cpu and norm-vectorize-matmul put on the
  // `scf.forall` loops they emit, for norm-forall-to-loops to act on after
  // bufferization (docs/Passes.md#internal-attributes):
  //   norm.sequential          keep this loop on one thread;
  //   norm.nontemporal_stores  write full vectors with non-temporal stores
  //                            when every row is 64-byte aligned;
  //   norm.prefetch_next_row   prefetch the next row in the last sweep;
  //   norm.parallel_min_trips  (i64 >= 2) run in parallel only from this
  //                            many iterations on, else sequentially;
  //   norm.nontemporal_min_trips (i64 >= 2) with nontemporal_stores: use
  //                            them only from this many iterations on.
  // The verifier accepts them on scf.forall only. And on functions:
  //   norm.kernel              a function norm-outline-kernels created
  //                            (norm-drop-kernel-results acts on it).
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$kernel,
    "::mlir::UnitAttr":$sequential,
    "::mlir::UnitAttr":$nontemporal_stores,
    "::mlir::UnitAttr":$prefetch_next_row,
    "::mlir::IntegerAttr":$parallel_min_trips,
    "::mlir::IntegerAttr":$nontemporal_min_trips
  );
  let hasOperationAttrVerify = 1;
}

/// Base class of every op of the dialect.
class Norm_Op<string mnemonic, list<Trait> traits = []>
    : Op<Norm_Dialect, mnemonic, traits>;

#endif // NORM_DIALECT_NORM_IR_NORMDIALECT_TD
