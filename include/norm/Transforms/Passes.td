//===- Passes.td - Passes on upstream IR -------------------*- tablegen -*-===//
//
// Passes of the CPU pipeline that work on upstream ops, not on norm ops:
// loops after bufferization, bufferization and reshape workarounds, matmul
// vectorization, narrow float stores. One file each in lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_TRANSFORMS_PASSES_TD
#define NORM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NormForallToLoopsPass : Pass<"norm-forall-to-loops"> {
  let summary = "Turn bufferized scf.forall loops into sequential or parallel loops";
  let description = [{
    After bufferization, rewrites each `scf.forall` into `scf.parallel`
    (when `threads` > 1 and the loop is not marked `norm.sequential`) or
    into `scf.for`. `norm-lower-cpu` marks the loop it emits for small
    inputs as sequential, and the loops writing large outputs with
    `norm.nontemporal_stores`: such a loop is versioned on the alignment of
    the rows it writes, and when every row starts on a 64-byte boundary its
    full-vector, in-bounds `vector.transfer_write`s become aligned
    `vector.store {nontemporal = true}`, so a write-once output costs no
    read for ownership. Loops marked `norm.prefetch_next_row` (rows swept
    several times, large inputs) prefetch, in their last sweep, each cache
    line of the row read next by the same thread, so that memory keeps
    streaming while a row is finished from the cache.

    LLVM 22 turns a non-temporal store of bf16 values rounded by
    `vcvtneps2bf16` into a regular store (with a read for ownership). So
    the bf16 truncations (`arith.truncf`) feeding the non-temporal stores
    are expanded into integer ops, or, with `native-bf16` (targets with a
    bf16 conversion instruction), kept, their encodings xor-ed with a zero
    that LLVM cannot fold (an empty `llvm.inline_asm` returning its i16
    operand, `"=r,0"`, once per loop): the same bits, one integer op per
    vector, and the store stays non-temporal. f16 truncations (`vcvtps2phx`
    on AVX-512 FP16 meets the same fate) always get the xor.

    ```mlir
    scf.forall (%i) in (%m) { ... }                       // threads = 1
    scf.for %i = %c0 to %m step %c1 { ... }
    ```
  }];
  let options = [
    Option<"threads", "threads", "unsigned", /*default=*/"1",
           "Threads available (1: every loop becomes scf.for)">,
    Option<"prefetch", "prefetch", "bool", /*default=*/"true",
           "Honour norm.prefetch_next_row (false: drop it)">,
    Option<"nativeBF16", "native-bf16", "bool", /*default=*/"false",
           "Round the bf16 values of non-temporal stores with arith.truncf, "
           "for targets with a conversion instruction (vcvtneps2bf16); "
           "false: with integer ops">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def NormVectorizeMatmulPass : Pass<"norm-vectorize-matmul"> {
  let summary = "Tile f32/f64 matmuls into cache blocks and vector register tiles";
  let description = [{
    The CPU code for the matmuls next to norms. Each f32/f64 linalg
    contraction on tensors with one M, one N and one K dim
    (`linalg.matmul` and its transposed forms, `linalg.batch_matmul`, a
    `linalg.generic` of that form) is tiled with `TilingInterface` into an
    `scf.forall` over blocks of `block-n` columns (marked `norm.sequential`
    with `threads=1` or for small static matmuls; `norm-forall-to-loops`
    makes it parallel otherwise), an `scf.for` over blocks of `block-k`
    rows of B, and `scf.for` loops over `tile-m` x `tile-n` register tiles
    and single K steps. The register tile is vectorized by
    `linalg::vectorize` (masked where it is partial), its accumulator is
    hoisted out of the K loop, and the `vector.contract` is lowered to
    outer products: one broadcast of an element of A and one FMA per vector
    of B. Other contractions (f16/bf16, mixed types, several M/N/K dims) are
    left as they are.

    ```mlir
    %c = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x256xf32>)
                       outs(%z : tensor<64x256xf32>) -> tensor<64x256xf32>
    // becomes (sketch, AVX-512)
    scf.forall (%jb) in (1) shared_outs(%o = %z) {          // 256-column blocks
      scf.for %kb = 0 to 512 step 256 {                      // K blocks
        scf.for %i = 0 to 64 step 8 { scf.for %j = 0 to 256 step 32 {
          %acc = vector.transfer_read ... : vector<8x32xf32>
          scf.for %k = 0 to 256 step 1 iter_args(%v = %acc) {
            %r = vector.outerproduct %a_col, %b_row, %v : vector<8xf32>, vector<32xf32>
          }
          vector.transfer_write ...
    }}}}
    ```
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: from the host CPU)">,
    Option<"tileM", "tile-m", "int64_t", /*default=*/"0",
           "Rows of the register tile (0: 8 with 512-bit vectors, else 4)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"0",
           "Columns of the register tile (0: two vectors)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"256",
           "Columns of B per cache block (the parallel loop's step)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"256",
           "Rows of B per cache block">,
    Option<"threads", "threads", "unsigned", /*default=*/"1",
           "Threads the column blocks may be spread over">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def NormCollapseDestinationsPass : Pass<"norm-collapse-destinations"> {
  let summary = "Materialize the source of an expand_shape into the collapsed destination";
  let description = [{
    `eliminate-empty-tensors` writes a computation straight into the buffer
    its result is materialized into by following the result back to a
    `tensor.empty`, but it does not look through `tensor.expand_shape`.
    Lowerings that compute on a collapsed view (norm-lower-cpu's `[rows, N]`
    of an input of rank 3 or more) and expand the result back therefore got
    a temporary buffer and a copy. This pass rewrites
    `materialize_in_destination (expand_shape %x) in %dest` into
    `materialize_in_destination %x in (collapse_shape %dest)` when `%dest` is
    a memref that collapses with the same reassociation, so that the empty
    tensor `%x` starts from is found and replaced by the destination.
    `norm-cpu-pipeline` and `norm-gpu-pipeline` run it right before
    `eliminate-empty-tensors`.

    ```mlir
    %y = tensor.expand_shape %m [[0, 1], [2]] output_shape [4, 64, 768] : tensor<256x768xf32> into tensor<4x64x768xf32>
    bufferization.materialize_in_destination %y in restrict writable %d : (tensor<4x64x768xf32>, memref<4x64x768xf32>) -> ()
    // becomes
    %c = memref.collapse_shape %d [[0, 1], [2]] : memref<4x64x768xf32> into memref<256x768xf32>
    bufferization.materialize_in_destination %m in restrict writable %c : (tensor<256x768xf32>, memref<256x768xf32>) -> ()
    ```
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def NormSplitSharedInitsPass : Pass<"norm-split-shared-inits"> {
  let summary = "Give each destination-style op its own tensor.empty / linalg.fill init";
  let description = [{
    With LLVM 22, `eliminate-empty-tensors` followed by `one-shot-bufferize`
    computes wrong results when one `tensor.empty` (or a `linalg.fill` of
    one) is the init of several destination-style ops whose results are
    materialized in different buffers: the init becomes the first
    destination, and the other ops start from, and overwrite, that buffer.
    This pass clones such a `linalg.fill` (on tensors) or `tensor.empty` for
    every destination use but one (an init operand of a destination-style op
    or the initial value of a loop-carried tensor, as in tiled ops). `norm-cpu-pipeline` and
    `norm-gpu-pipeline` run it right before `eliminate-empty-tensors` (after
    `cse`, which would merge the clones again). Shared inits produced by
    other ops are left as they are.

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
    %q = linalg.matmul ins(%y, %wq : ...) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
    %k = linalg.matmul ins(%y, %wk : ...) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
    // becomes
    %e2 = tensor.empty() : tensor<8x64xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
    %q = linalg.matmul ins(%y, %wq : ...) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
    %k = linalg.matmul ins(%y, %wk : ...) outs(%z2 : tensor<8x64xf32>) -> tensor<8x64xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NormLegalizeReshapesPass : Pass<"norm-legalize-reshapes"> {
  let summary = "Replace reshapes that LLVM 22 cannot lower with ones it can";
  let description = [{
    LLVM 22's `expand-strided-metadata` crashes on an `expand_shape` whose
    reassociation group holds more than one dynamic dim
    (llvm/llvm-project#186830). This pass rewrites each such
    `tensor.expand_shape` into a `tensor.reshape` to the same sizes (which
    bufferizes to `memref.reshape`), and rejects each such
    `memref.expand_shape` with a diagnostic, leaving the module unchanged.
    `norm-cpu-pipeline` and `norm-gpu-pipeline` run it before
    bufferization, so that a module written with upstream ops alone gets a
    diagnostic or a working lowering instead of a crash.

    ```mlir
    %e = tensor.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64]
        : tensor<?x64xf32> into tensor<?x?x64xf32>
    // becomes
    %shape = tensor.from_elements %b, %s, %c64 : tensor<3xindex>
    %e = tensor.reshape %m(%shape) : (tensor<?x64xf32>, tensor<3xindex>) -> tensor<?x?x64xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NormStoreNarrowFloatsAsIntsPass
    : Pass<"norm-store-narrow-floats-as-ints"> {
  let summary = "Store and load 16-bit float vectors as integer vectors in the LLVM dialect";
  let description = [{
    On x86 without native bf16/f16 vector support, LLVM scalarizes a store
    of `vector<Nxbf16>` that comes from a bitcast of `vector<Nxi16>` (what
    `arith-expand{include-bf16}` produces for `arith.truncf`), lane by lane.
    With opaque pointers the stored type is irrelevant, so this pass stores
    the integer vector itself. It also drops the arith `fastmath`
    attribute that `arith-emulate-unsupported-floats` + `convert-to-llvm`
    leave on `llvm.fpext`/`llvm.fptrunc` (ops without fastmath flags), so
    the output parses without the arith dialect (e.g. in `mlir-runner`).

    ```mlir
    %b = llvm.bitcast %i : vector<32xi16> to vector<32xbf16>
    llvm.store %b, %p : vector<32xbf16>, !llvm.ptr
    // becomes
    llvm.store %i, %p : vector<32xi16>, !llvm.ptr
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // NORM_TRANSFORMS_PASSES_TD

def NormShardPartitionPass : Pass<"norm-shard-partition", "::mlir::ModuleOp"> {
  let summary = "Sharding propagation and partition on the functions that hold shard annotations";
  let description = [{
    Runs upstream `sharding-propagation` and `shard-partition` on each
    `func.func` with a body that holds a `shard.shard` op, and leaves every
    other function and declaration alone (upstream propagation fails on any
    op without `ShardingInterface`, e.g. `func.call`, `mpi.init` or
    `memref.get_global`, so a driver function around the sharded ones must
    not go through it).

    Before propagation it legalizes the inputs that make LLVM 22's
    `shard-partition` crash or produce invalid IR (reproducers under
    `test/Upstream`):
    - an unused ranked-tensor argument gets a replicated annotation;
    - other uses of a value that also has a `shard.shard` annotation of its
      definition are routed through the annotated value;
    - a constant defined outside a `linalg` op and used in its body is
      cloned into the body; any other value from outside gets a
      diagnostic;
    - a `tensor.empty` or `linalg.fill` shared by several destination-style
      ops is cloned for each (`norm-split-shared-inits`).

    After propagation every split dim is checked: a dynamic dim, a dim that
    does not split evenly over the processes of its grid axes, a grid of
    dynamic shape, or an explicit uneven `sharded_dims_offsets` gets a
    diagnostic and the module is left as it was. Norm ops partition through
    their `ShardingInterface` (docs/Sharding.md).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NormLowerShardCollectivesPass
    : Pass<"norm-lower-shard-collectives", "::mlir::ModuleOp"> {
  let summary = "Lower the shard collectives convert-shard-to-mpi leaves, and check the rank count";
  let description = [{
    LLVM 22's `convert-shard-to-mpi` lowers `shard.all_reduce` and the
    process index ops only; on any other collective it reports a legalization
    error yet exits with success. This pass rewrites, on tensors:
    - `shard.all_slice`: each process extracts its own piece (upstream's
      pattern; no communication);
    - `shard.all_gather`: the piece, bit-cast to integers of its width, is
      inserted at the process's offset into a zero tensor of the gathered
      shape, and a `bitwise_or` `shard.all_reduce` assembles the whole
      tensor bit for bit (bf16/f16 travel as 16-bit integers);
    - `shard.all_to_all`: an all_gather along the concat axis, then the
      process's slice along the split axis;
    - `shard.reduce_scatter`: an all_reduce, then the process's slice;
    - a bf16/f16 `shard.all_reduce` (sum, max, min, product): reduced in
      f32 and rounded once (MPI has no 16-bit float type; LLVM 22 would
      emit MPI datatype 0).
    Any other collective left (broadcast, gather, scatter, reduce, send,
    recv, shift) gets a diagnostic.

    With `check-ranks` (default), each function that refers to a grid first
    checks that the run has exactly as many MPI ranks as the grid has
    processes (after `mpi.init` when the function calls it) and stops with a
    message otherwise: with fewer or more ranks LLVM 22's lowering computes
    wrong numbers silently. The check calls `MPI_Comm_size` with MPICH's
    ABI (`MPI_Comm` an int, `MPI_COMM_WORLD` = 0x44000000).
  }];
  let options = [
    Option<"checkRanks", "check-ranks", "bool", /*default=*/"true",
           "Check the number of MPI ranks against each grid at run time "
           "(MPICH ABI)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NormFinalizeSPMDPass : Pass<"norm-finalize-spmd", "::mlir::ModuleOp"> {
  let summary = "Clean up after convert-shard-to-mpi: communicators, grids, DLTI";
  let description = [{
    Runs after `convert-shard-to-mpi` (in `norm-spmd-pipeline`):
    - fails with a diagnostic on any `shard` op left but grids (LLVM 22's
      conversion reports these yet exits with success);
    - a communicator split with a constant color (a reduction over every
      axis of the grid, which has exactly the world's ranks: see
      `norm-lower-shard-collectives`) is replaced by the communicator it
      splits, so no communicator is created;
    - every other `mpi.comm_split` (reductions over some axes of a
      multi-axis grid) is freed with `MPI_Comm_free` after its last use in
      its block (LLVM 22 creates one per all-reduce and never frees it;
      MPICH aborts after 2048); CSE before this pass merges the splits of
      one block;
    - erases the `shard.grid` ops;
    - removes the `"MPI:Implementation" = "MPICH"` entry from the module's
      `dlti.map` (and the map when it is empty). Another implementation
      stays (then no `MPI_Comm_free` is inserted: its handles are
      pointers).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def NormMPIImplementationPass
    : Pass<"norm-mpi-implementation", "::mlir::ModuleOp"> {
  let summary = "Attach or strip the module's MPI implementation DLTI entry";
  let description = [{
    LLVM 22's MPI-to-LLVM conversion picks the MPI ABI from the module's
    `dlti.map` entry `"MPI:Implementation"` and, when there is none, reports
    a spurious error before using MPICH's; `mlir-runner` cannot parse a
    module with a `dlti` attribute at all. Without `strip`, this pass adds
    `"MPI:Implementation" = "MPICH"` to a module that holds `mpi` ops and
    names no implementation; with `strip`, it removes the entry (and an
    empty map). `norm-cpu-pipeline` runs it around `convert-to-llvm`.
  }];
  let options = [
    Option<"strip", "strip", "bool", /*default=*/"false",
           "Remove the entry instead of attaching it">
  ];
  let dependentDialects = ["::mlir::DLTIDialect"];
}

def NormExpandF8ConversionsPass : Pass<"norm-expand-f8-conversions"> {
  let summary = "Expand arith.truncf/extf to and from f8E4M3FN, f8E8M0FNU and f4E2M1FN into integer arithmetic";
  let description = [{
    MLIR 22 lowers no `arith.truncf` to `f8E4M3FN` and no `arith.extf` from
    it on the CPU, and its `arith-expand` conversions to f8E8M0FNU and
    f4E2M1FN do not round as `arith.truncf` does (ties away from zero,
    truncation). This pass rewrites `truncf` to and `extf` from the three
    types, on scalars and vectors, into i32/f32 arithmetic that vectorizes:
    `truncf` from f16, bf16 or f32 rounds to nearest even; to f8E4M3FN it
    gives NaN for NaN, infinities and magnitudes above 464 (which round past
    448), as `arith.truncf` defines it; to f4E2M1FN it saturates at +-6 and
    gives +0 for NaN (the rule of `norm.quantize`); to f8E8M0FNU it gives
    the nearest power of two (ties up), at least 2^-127, and NaN for NaN,
    infinities, zeros, negative values and magnitudes rounding past 2^127
    (ml_dtypes' rule). `extf` to f16, bf16, f32 or f64 is exact (f8E8M0FNU
    to f16 rounds). Other conversions of 8-bit or narrower float types (and
    from f64) are reported as errors. `norm-cpu-pipeline` runs it before
    the floating-point expansions.

    ```mlir
    %q = arith.truncf %v : vector<8xf32> to vector<8xf8E4M3FN>
    // becomes integer ops on the f32 bits and
    %q = arith.bitcast %bits : vector<8xi8> to vector<8xf8E4M3FN>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def NormOutlineKernelsPass
    : Pass<"norm-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline equivalent norm ops and contractions into one shared function";
  let description = [{
    A model repeats the same layer: 32 decoder blocks hold 64 norm ops of
    one shape and a few matmul shapes. Lowered in place, every one of them
    becomes its own copy of the same row loops or register-tiled loop nest,
    and every later pass of the pipeline pays for each copy. This pass
    groups the ops at the top level of each function body that are
    equivalent (same op, attributes and operand and result types; operand
    values may differ) and, for each group of at least `min-count` ops,
    moves the op into one private function (marked `norm.kernel`) taking
    its operands and returning its results, then replaces every op of the
    group by a `func.call` of it. The lowering then runs once per distinct
    kernel, as IREE compiles one executable per distinct dispatch.

    The function is destination-passing: an op that is not destination-style
    (the norm ops) takes one more argument per result, an empty tensor the
    caller creates (with the reified sizes of a dynamic shape), into which
    the function materializes the result
    (`bufferization.materialize_in_destination`), so that the buffers are
    allocated in the caller and `norm-drop-kernel-results` can drop the
    returned ones after bufferization. A `linalg.fill` producing a
    contraction's init is cloned into the function (the fill value and its
    empty tensor become arguments).

    The ops outlined: `norm.layer_norm`, `norm.rms_norm`, `norm.dyt`, the
    gradient ops, `norm.quantize`, and linalg contractions on tensors
    (`linalg.matmul`, its transposed and batch forms). Declined: ops with
    non-tensor operands or results, ops whose regions use values from
    above, a norm op whose `y` a `norm.quantize` reads and that
    `norm.quantize` (the CPU lowering fuses the pair into one row loop),
    ops nested in other ops' regions, and ops that are not destination-style
    with a dynamic result shape they cannot reify. What is computed does not change:
    the callee holds a clone of the op. `norm-cpu-pipeline` runs it before
    the norm lowering.

    ```mlir
    %a = norm.rms_norm %x weight(%w0) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    %b = norm.rms_norm %a weight(%w1) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    // becomes
    %d0 = tensor.empty() : tensor<8x64xf32>
    %a = call @norm_kernel_rms_norm(%x, %w0, %d0) : (tensor<8x64xf32>, tensor<64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
    %d1 = tensor.empty() : tensor<8x64xf32>
    %b = call @norm_kernel_rms_norm(%a, %w1, %d1) : (tensor<8x64xf32>, tensor<64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
    func.func private @norm_kernel_rms_norm(%arg0: tensor<8x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {norm.kernel} {
      %0 = norm.rms_norm %arg0 weight(%arg1) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
      %1 = bufferization.materialize_in_destination %0 in %arg2 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
      return %1 : tensor<8x64xf32>
    }
    ```
  }];
  let options = [
    Option<"minCount", "min-count", "unsigned", /*default=*/"2",
           "Outline a group of equivalent ops only when it has at least "
           "this many (>= 1; 1 outlines every op the pass handles)">
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NormDeallocAfterLastUsePass
    : Pass<"norm-dealloc-after-last-use", "::mlir::func::FuncOp"> {
  let summary = "Free each local buffer right after its last use";
  let description = [{
    Runs after bufferization, before the ownership-based deallocation
    pipeline. A `memref.alloc` whose aliases (every memref result of an op
    that takes it or one of its aliases: views, casts, calls, selects) never
    leave its block (no terminator takes one: not returned, yielded or
    branched with; not stored as a value) is freed by a `memref.dealloc`
    right after the last op of its block that uses it or an alias, and both
    ops are marked `bufferization.manual_deallocation`, so that the
    deallocation pipeline leaves them alone. The other allocations are left
    to that pipeline, which frees them at the end of their block with one
    `bufferization.dealloc` whose simplification compares every pair of its
    operands. A chain of N transformer blocks then frees each intermediate
    buffer after the block that reads it: peak memory no longer grows with
    N, and the pipeline's compile time stays linear in N.

    ```mlir
    %a = memref.alloc() : memref<8x64xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<8x64xf32>)
    call @use(%a) : (memref<8x64xf32>) -> ()
    // becomes
    %a = memref.alloc() {bufferization.manual_deallocation} : memref<8x64xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<8x64xf32>)
    call @use(%a) : (memref<8x64xf32>) -> ()
    memref.dealloc %a {bufferization.manual_deallocation} : memref<8x64xf32>
    ```

    Allocations already marked `bufferization.manual_deallocation` (freed
    by their producer) are left alone. `norm-cpu-pipeline` runs it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NormDropKernelResultsPass
    : Pass<"norm-drop-kernel-results", "::mlir::ModuleOp"> {
  let summary = "Drop the results of outlined kernels that return their destination";
  let description = [{
    After bufferization, a function `norm-outline-kernels` created (marked
    `norm.kernel`) returns the buffers the caller passed as destinations.
    Returned, they would be new buffers to the deallocation passes, which
    then copy them in the callee and lose track of their aliasing in the
    caller. This pass removes every result of a `norm.kernel` function that
    is one of its arguments (or a `memref.cast` of one) and gives each call
    that argument instead, as upstream's `drop-equivalent-buffer-results`
    does for all functions (which would also change the signatures of the
    module's public functions). Before bufferization it does the tensor
    half of the same job: a `bufferization.materialize_in_destination` into
    a destination argument whose source is already computed in that
    argument (through destination-style inits, loop inits and reshapes, as
    `eliminate-empty-tensors` leaves it) is replaced by its source, which
    one-shot-bufferize would otherwise see as a second write of the
    argument. `norm-cpu-pipeline` runs it after `eliminate-empty-tensors`
    and right after `one-shot-bufferize`. Functions without the attribute
    are left alone.

    ```mlir
    %r = call @norm_kernel_rms_norm(%x, %d) : (memref<8x64xf32>, memref<8x64xf32>) -> memref<8x64xf32>
    func.func private @norm_kernel_rms_norm(%a: memref<8x64xf32>, %b: memref<8x64xf32>) -> memref<8x64xf32> attributes {norm.kernel} {
      ...
      return %b : memref<8x64xf32>
    }
    // becomes
    call @norm_kernel_rms_norm(%x, %d) : (memref<8x64xf32>, memref<8x64xf32>) -> ()
    func.func private @norm_kernel_rms_norm(%a: memref<8x64xf32>, %b: memref<8x64xf32>) attributes {norm.kernel} {
      ...
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NormPackFP4Pass : Pass<"norm-pack-fp4", "::mlir::ModuleOp"> {
  let summary = "Store f4E2M1FN buffers two elements per byte";
  let description = [{
    MLIR lowers a `memref` of `f4E2M1FN` to one byte per element, while the
    block-scaled formats (DESIGN 2d) store two per byte: element `2k` in
    the low nibble of byte `k` (PyTorch `float4_e2m1fn_x2`, CUTLASS). This
    pass rewrites every such buffer of the module, function signatures
    included, to `i8` with its last dim halved (`memref<8x4096xf4E2M1FN>`
    becomes `memref<8x2048xi8>`), so that the function boundary (JIT, AOT,
    C API, Python) sees the packed bytes.

    Runs on bufferized IR before the strided metadata is expanded. A vector
    load or store of an even number of elements at an even index becomes a
    byte vector load or store (`vector.bitcast`, element 2k in the low
    nibble); a scalar load extracts a nibble, a scalar store replaces one
    with two atomic read-modify-writes (`memref.atomic_rmw` andi, ori), so
    that parallel loops writing the two halves of a byte stay correct.
    Views, copies, allocations, globals and calls are rewritten with the
    halved last dim. Buffers whose last dim, offset or outer strides are
    odd, views that step over the last dim, and any other op on such a
    buffer fail with a diagnostic.

    ```mlir
    %v = vector.load %m[%i, %j] : memref<8x64xf4E2M1FN>, vector<32xf4E2M1FN>
    // becomes
    %h = arith.divui %j, %c2 : index
    %b = vector.load %m[%i, %h] : memref<8x32xi8>, vector<16xi8>
    %c = vector.bitcast %b : vector<16xi8> to vector<32xi4>
    %v = arith.bitcast %c : vector<32xi4> to vector<32xf4E2M1FN>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def NormSetTargetCPUPass : Pass<"norm-set-target-cpu"> {
  let summary = "Compile the LLVM dialect functions for a named CPU";
  let description = [{
    Sets `target_cpu` and `target_features` (the CPU's features, from
    LLVM's target parser, as clang writes them) on every `llvm.func` with a
    body, so that LLVM compiles them for the named CPU whatever the target
    machine that compiles the module was made for: the JIT's (the host) or
    `llc -mcpu=native`'s. `norm-cpu-pipeline{target-cpu=...}` ends with it.
    An unknown name is an error.

    ```mlir
    llvm.func @k(...) { ... }
    // becomes, with cpu=x86-64-v3
    llvm.func @k(...) attributes {target_cpu = "x86-64-v3",
        target_features = #llvm.target_features<["+avx", "+avx2", ...]>}
    ```
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "The CPU, as LLVM names it (x86-64-v3, skylake-avx512, "
           "sapphirerapids, znver4, neoverse-v1, ...)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}
