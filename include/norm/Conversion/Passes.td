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
    (E[d]^2 > E[d^2] / 2) run a second, centered sweep. DyT's f32 `tanh` is a
    rational function whose degree follows the result type (docs/Numerics.md),
    so DyT stays vectorized.

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
           "caches (a dynamic row count is checked at run time, a dynamic "
           "row length counts as large; -1: never)">,
    Option<"nativeBF16", "native-bf16", "bool", /*default=*/"false",
           "Round a bf16 y that a fused norm.quantize reads with "
           "arith.truncf, for targets with a conversion instruction "
           "(vcvtneps2bf16); false: with integer ops on its f32 encoding">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
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

    A `norm.quantize` that is the only user of a norm's `y` is computed in
    the norm's kernel (q, and the scales, written instead of y); any other
    `norm.quantize` gets its own kernel, aligned lanes of a warp taking each
    group (or row) of the quantized dim. The gradient ops get a row kernel
    and a column kernel (deterministic, no atomics).

    Norm ops are tensor-level, so the pass reaches memrefs by itself, still
    before bufferization: operands are turned into buffers with
    `bufferization.to_buffer`, the kernel writes freshly allocated buffers,
    and the results are `bufferization.to_tensor ... restrict writable` of
    those, which one-shot bufferization keeps in place. Option `memory`
    says where the tensors live at run time:

    - `copy` (default): in host memory, as in a module whose inputs are
      constants and whose results are printed. The kernels take the
      operands' buffers and a `memref.alloc` per result as they are; after
      bufferization, `norm-gpu-host-copies` copies them to and from
      `gpu.alloc` buffers around each run of launches (`norm-gpu-pipeline`
      runs it).
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
    %xd = memref.collapse_shape %xh [[0, 1]] : memref<?x4096xbf16> into memref<?xbf16>
    %yh = memref.alloc(%m) : memref<?x4096xbf16>
    %yd = memref.collapse_shape %yh [[0, 1]] : memref<?x4096xbf16> into memref<?xbf16>
    gpu.launch blocks(%b, %1, %1) in (%gx = %m, ...) threads(%t, ...) in (%bx = %c128, ...)
        workgroup(%partial : memref<32xf32, #gpu.address_space<workgroup>>) {
      %v = vector.load %xd[%i] {alignment = 16} : memref<?xbf16>, vector<8xbf16>
      ... %s, %ok = gpu.shuffle xor %sum, %c16, %c32 : f32 ...
      gpu.barrier
      vector.store %yv, %yd[%i] {alignment = 16} : memref<?xbf16>, vector<8xbf16>
    }
    %y = bufferization.to_tensor %yh restrict writable : memref<?x4096xbf16> to tensor<?x4096xbf16>
    ```
  }];
  let options = [
    Option<"memory", "memory", "::mlir::norm::GPUMemory",
           /*default=*/"::mlir::norm::GPUMemory::Copy",
           "Where tensors live at run time: 'copy' (host memory, copied to "
           "and from the device by norm-gpu-host-copies) or 'device'",
           [{::llvm::cl::values(
             clEnumValN(::mlir::norm::GPUMemory::Copy, "copy",
                        "host memory, copied by norm-gpu-host-copies"),
             clEnumValN(::mlir::norm::GPUMemory::Device, "device",
                        "device memory, used in place"))}]>,
    Option<"warpMaxElements", "warp-max-elements", "int64_t",
           /*default=*/"1024",
           "Rows of at most this many elements get a warp, longer rows a "
           "block">,
    Option<"splitMinElements", "split-min-elements", "int64_t",
           /*default=*/"32768",
           "Fewer than 64 rows of a static length are each cut into 2, 4 or "
           "8 parts of at least this many elements, one block per part (two "
           "kernels); 0: rows are never cut">,
    Option<"maxBlockSize", "max-block-size", "int64_t", /*default=*/"1024",
           "Most threads per block (a multiple of 32 in [32, 1024])">,
    Option<"fastTanh", "fast-tanh", "bool", /*default=*/"false",
           "DyT with f16/bf16 results uses the hardware tanh "
           "(tanh.approx.f32, relative error < 2^-10.9; needs sm_75) instead "
           "of libdevice's tanhf">,
    Option<"fp8Cvt", "fp8-cvt", "bool", /*default=*/"false",
           "Fused FP8 quantization converts with cvt.rn.satfinite.e4m3x2.f32 "
           "(needs sm_90, or sm_89 with PTX 8.1) instead of integer ops">,
    Option<"fp4Cvt", "fp4-cvt", "bool", /*default=*/"false",
           "Block-scaled FP4 quantization converts with "
           "cvt.rn.satfinite.e2m1x2.f32 (needs an arch- or family-specific "
           "sm_100 or later target: sm_100a, sm_100f, sm_120a, ...) instead "
           "of integer ops">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def NormAnnotateKernelArgsPass : Pass<"norm-annotate-kernel-args",
                                      "::mlir::gpu::GPUModuleOp"> {
  let summary = "Mark the buffer pointers of norm kernels noalias (and "
                "readonly where only loaded)";
  let description = [{
    On a `gpu.module` after `convert-gpu-to-nvvm` (and `canonicalize`): the
    kernels of `norm-lower-gpu` are `llvm.func`s with `gpu.kernel` named
    `<function>_norm_kernel` (with `_<n>` appended by the outliner for the
    second and later kernels of a function), their memref arguments expanded
    to descriptors (allocated pointer, aligned pointer, offset, sizes,
    strides). The buffers are distinct: the inputs are only read, and each
    output is a buffer of its own (a fresh allocation, or the memref a
    result is materialized into, which must not overlap the inputs). The
    pass gives each aligned pointer, the one loads and stores go through,
    `llvm.noalias`, and `llvm.readonly` when every use (through
    getelementptr and addrspacecast) is a load. The NVPTX backend then reads
    inputs through the non-coherent cache (`ld.global.nc`) and may move
    loads across stores. Upstream's conversion does not carry `llvm.noalias`
    from memref arguments to descriptors, hence this pass. Other functions
    are left alone.
  }];
}

def NormGPUHostCopiesPass : Pass<"norm-gpu-host-copies", "::mlir::ModuleOp"> {
  let summary = "Copy the host buffers of GPU kernel launches to and from "
                "device memory";
  let description = [{
    The host/device transfer stage of `norm-gpu-pipeline{memory=copy}`, after
    bufferization: `norm-lower-gpu{memory=copy}` launches its kernels on the
    host buffers of the tensors (their `bufferization.to_buffer`, the
    `memref.alloc` of each result), and this pass places them in device
    memory. A run of launches in a block (only launches, device allocations
    and side-effect-free ops in between) gets one `gpu.alloc` per host
    memref operand: copied in with `gpu.memcpy` before the first launch that
    takes it when that launch reads it, copied back after the run when a
    launch of the run writes it, and freed after the run. A memref is in
    device memory when it is a view of a `gpu.alloc` or has a memory space;
    those are left alone. What a kernel reads and writes is taken from the
    memory effects of the ops of its `gpu.func` on the argument (and its
    views); a kernel without a body here reads and writes every operand. A
    kernel of `norm-lower-gpu` writes every element of an output it does
    not read, so such an output is not copied in; for other kernels every
    host operand is copied in. Two views of one host buffer in a run, one of
    them written, end the run. A host operand without the identity layout is
    an error (`gpu.memcpy` copies contiguous memrefs).

    ```mlir
    gpu.launch_func @k::@k blocks in (...) threads in (...) args(%x : memref<?xf32>, %y : memref<?xf32>)
    // becomes
    %dx = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %dx, %x : memref<?xf32>, memref<?xf32>
    %dy = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @k::@k blocks in (...) threads in (...) args(%dx : memref<?xf32>, %dy : memref<?xf32>)
    gpu.memcpy %y, %dy : memref<?xf32>, memref<?xf32>
    gpu.dealloc %dx : memref<?xf32>
    gpu.dealloc %dy : memref<?xf32>
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // NORM_CONVERSION_PASSES_TD
