//===- Passes.td - Norm conversion passes ------------------*- tablegen -*-===//
//
// Lowerings of norm ops: portable linalg, direct vector loops, GPU kernels.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_CONVERSION_PASSES_TD
#define NORM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def NormToLinalgPass : Pass<"norm-to-linalg"> {
  let summary = "Decompose norm ops into linalg.generic on tensors";
  let description = [{
    Rewrites every norm op into `linalg.generic` ops on tensors: one
    reduction per row statistic over the normalized dimensions, then one
    elementwise op that applies the statistics, weight, bias and casts. It is
    the ops' `AggregatedOpInterface` decomposition applied everywhere, the
    portable form for a host compiler with its own code generation.
    LayerNorm accumulates on data shifted by the first element of each row
    (exact), so rows with a large common offset stay accurate.

    ```mlir
    // Before
    %y = norm.rms_norm %x weight(%w) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    // After (sketch)
    %sq = linalg.generic {iterator_types = ["parallel", "reduction"]} ins(%x) outs(%zeros) { x*x + acc }
    %r  = linalg.generic {iterator_types = ["parallel"]} ins(%sq) outs(%e) { rsqrt(acc/N + eps) }
    %y  = linalg.generic {iterator_types = ["parallel", "parallel"]} ins(%x, %r, %w) outs(%init) { x*r*w }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def NormLowerCPUPass : Pass<"norm-lower-cpu"> {
  let summary = "Lower norm ops to vectorized row loops for the CPU";
  let description = [{
    Rewrites every norm op into an `scf.forall` over rows (the leading dims
    collapsed into one) whose body sweeps the row with `vector` ops on
    tensors: the statistics are accumulated in vector registers (several
    independent accumulators) and reduced once per row, and a final sweep
    writes the output. Narrow inputs are loaded narrow and widened in
    registers; the row tail is one masked vector step. A row is read from
    memory once and swept again from cache. LayerNorm sums d = x - c and d^2
    in one sweep (c: the mean of the row's first vector) and takes
    var = E[d^2] - E[d]^2 in f64; rows where that cancels
    (E[d]^2 > E[d^2] / 2) run a second, centered sweep. `tanh` uses upstream's f32
    polynomial approximation, so DyT stays vectorized.

    With `threads` > 1, large inputs get a parallel loop over rows and small
    ones (decode shapes) a sequential one, chosen at run time from the number
    of elements, so that small inputs do not pay for waking a thread team.
    The loop over rows stays an `scf.forall` on tensors (bufferization comes
    later); `norm-forall-to-loops` turns it into loops after bufferization.

    ```mlir
    // Before
    %y = norm.rms_norm %x : (tensor<?x4096xf32>) -> tensor<?x4096xf32>
    // After (sketch)
    %y = scf.forall (%i) in (%m) shared_outs(%o = %init) {
      %acc = scf.for %j = 0 to %n step 32 iter_args(%a = %zero) {
        %v = vector.transfer_read %x[%i, %j] : tensor<?x4096xf32>, vector<32xf32>
        ... }
      %ss = vector.reduction <add>, %acc : vector<32xf32> into f32
      %row = scf.for %j ... { vector.transfer_write %yv, %r[%j] }
      scf.forall.in_parallel { tensor.parallel_insert_slice %row into %o[%i, 0] ... }
    }
    ```
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: from the host CPU)">,
    Option<"threads", "threads", "unsigned", /*default=*/"1",
           "Threads rows may be spread over (1: always sequential)">,
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"131072",
           "Elements below which rows are processed sequentially">,
    Option<"nontemporalThreshold", "nontemporal-threshold", "int64_t",
           /*default=*/"8388608",
           "Bytes of all results from which full-vector stores bypass the "
           "caches (dynamic shapes count as large; -1: never)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

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

    ```mlir
    scf.forall (%i) in (%m) { ... }                       // threads = 1
    scf.for %i = %c0 to %m step %c1 { ... }
    ```
  }];
  let options = [
    Option<"threads", "threads", "unsigned", /*default=*/"1",
           "Threads available (1: every loop becomes scf.for)">,
    Option<"prefetch", "prefetch", "bool", /*default=*/"true",
           "Honour norm.prefetch_next_row (false: drop it)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
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

def NormLowerGPUPass : Pass<"norm-lower-gpu"> {
  let summary = "Lower norm ops to GPU kernels (a warp or a block per row)";
  let description = [{
    Rewrites every norm op into one `gpu.launch` (several, selected at run
    time, when the row length is dynamic). Rows of at most
    `warp-max-elements` elements get one warp each (several warps per
    block), longer rows one block each. Every thread reads its part of the
    row with 128-bit vector loads (`vector<4xf32>`, `vector<8xbf16>`,
    `vector<8xf16>`, `vector<2xf64>`; narrower when the row length is not a
    multiple) and keeps it in registers between the reductions and the write,
    so `x` (and `residual`) is read once and `y` (and `residual_out`)
    written once; rows too long for the registers are finished by loops that
    read the rest of the row again. Row sums are reduced with butterfly
    `gpu.shuffle xor` in each warp and through workgroup memory across the
    warps of a block. Narrow types are computed in f32 (the op's compute
    type); the element arithmetic is the one every norm lowering shares.

    Norm ops are tensor-level, so the pass reaches memrefs by itself, still
    before bufferization: operands are turned into buffers with
    `bufferization.to_buffer`, the kernel writes freshly allocated buffers,
    and the results are `bufferization.to_tensor ... restrict writable` of
    those, which one-shot bufferization keeps in place. Option `memory`
    says where the tensors live at run time:

    - `copy` (default): in host memory, as in a module whose inputs are
      constants and whose results are printed. Operands are copied into
      `gpu.alloc` buffers with `gpu.memcpy` and results copied back into
      `memref.alloc` buffers; the device buffers are freed after the kernel.
    - `device`: in device memory (16-byte aligned), as when a caller passes
      device buffers. The kernel reads the operands' buffers; a result whose
      only use is `bufferization.materialize_in_destination` into a memref
      is written straight into that memref, other results into `gpu.alloc`
      buffers that the caller owns.

    ```mlir
    // Before
    %y = norm.rms_norm %x weight(%w) : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
    // After (sketch, memory=copy)
    %xh = bufferization.to_buffer %x read_only : tensor<?x4096xbf16> to memref<?x4096xbf16>
    %xd = gpu.alloc(%len) : memref<?xbf16>
    gpu.memcpy %xd, %xflat : memref<?xbf16>, memref<?xbf16>
    gpu.launch blocks(%b, %1, %1) in (%gx = %m, ...) threads(%t, ...) in (%bx = %c128, ...)
        workgroup(%partial : memref<32xf32, #gpu.address_space<workgroup>>) {
      %v = vector.load %xd[%i] {alignment = 16} : memref<?xbf16>, vector<8xbf16>
      ... %s, %ok = gpu.shuffle xor %sum, %c16, %c32 : f32 ...
      gpu.barrier
      vector.store %yv, %yd[%i] {alignment = 16} : memref<?xbf16>, vector<8xbf16>
    }
    gpu.memcpy %yflat, %yd : memref<?xbf16>, memref<?xbf16>
    %y = bufferization.to_tensor %yh restrict writable : memref<?x4096xbf16> to tensor<?x4096xbf16>
    ```
  }];
  let options = [
    Option<"memory", "memory", "::mlir::norm::GPUMemory",
           /*default=*/"::mlir::norm::GPUMemory::Copy",
           "Where tensors live at run time: 'copy' (host memory, copied to "
           "and from the device around each kernel) or 'device'",
           [{::llvm::cl::values(
             clEnumValN(::mlir::norm::GPUMemory::Copy, "copy",
                        "host memory, copied around each kernel"),
             clEnumValN(::mlir::norm::GPUMemory::Device, "device",
                        "device memory, used in place"))}]>,
    Option<"warpMaxElements", "warp-max-elements", "int64_t",
           /*default=*/"1024",
           "Rows of at most this many elements get a warp, longer rows a "
           "block">,
    Option<"maxBlockSize", "max-block-size", "int64_t", /*default=*/"1024",
           "Most threads per block (a multiple of 32 in [32, 1024])">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // NORM_CONVERSION_PASSES_TD
