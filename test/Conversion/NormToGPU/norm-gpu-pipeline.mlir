// Compile-only checks of norm-gpu-pipeline: every op reaches PTX with 128-bit
// global loads (and warp shuffles where it reduces), ptxas accepts the PTX
// for sm_80 and sm_90, format=bin gives cubins, and norm_cuda_runtime
// provides every mgpu* function the host code calls. Inputs are read through
// the non-coherent cache (the kernels' pointers are noalias, inputs
// readonly), weight and bias are loaded with x before the reductions (no
// global load between the first shuffle and the first store of y), and the
// final multiply-add is one FMA.

// REQUIRES: cuda-toolkit
// RUN: norm-opt %s --norm-gpu-pipeline="format=isa split-min-elements=1024" -o %t.sm90.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm90.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTXAS
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_80 format=isa split-min-elements=1024" -o %t.sm80.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm80.mlir | FileCheck %s --check-prefix=SM80
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm80.mlir %ptxas sm_80 | FileCheck %s --check-prefix=PTXAS
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_70 format=isa split-min-elements=1024" -o %t.sm70.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm70.mlir | FileCheck %s --check-prefix=SM70
// RUN: FileCheck %s --check-prefix=HOST < %t.sm90.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.sm90.mlir -o %t.ll
// RUN: %python %norm_tools/check-runtime-symbols.py %t.ll %norm_cuda_runtime | FileCheck %s --check-prefix=RUNTIME
// RUN: norm-opt %s --norm-gpu-pipeline="format=bin split-min-elements=1024" -o %t.bin.mlir
// RUN: rm -rf %t.cubin && %python %norm_tools/gpu-binary.py extract %t.bin.mlir %t.cubin | FileCheck %s --check-prefix=BIN
// RUN: od -An -c -N4 %t.cubin/layer_norm_bf16_norm_kernel.cubin | FileCheck %s --check-prefix=ELF
// RUN: norm-opt %s --norm-gpu-pipeline=split-min-elements=1024 | FileCheck %s --check-prefix=FATBIN

// Rows of 4096 bf16, a dynamic row count: below 64 rows (decode) each row
// is cut in 4 parts of 1024 (split-min-elements=1024 here; the default,
// 32768, cuts only longer rows: norm-gpu-pipeline-split.mlir) and two
// kernels run over the parts (4 blocks
// per row): the first reduces each part and stores its mean and squared
// deviations (2 x f32, lane 0), the second combines the 4 parts' partials
// (no shuffle) and writes its part of y with the weight and bias of that
// part. From 64 rows on, a block per row: x, weight and bias (4 vectors
// each) all loaded before the first shuffle; after it only shared-memory
// loads until y is stored.
// PTX-LABEL: // gpu.binary @layer_norm_bf16_norm_kernel
//       PTX:   .target sm_90
//       PTX:   .entry layer_norm_bf16_norm_kernel(
//       PTX:   .maxntid 64, 1, 1
// PTX-COUNT-2:   ld.global.nc.v4.b32
//       PTX:   shfl.sync.bfly.b32
//       PTX:   bar.sync
//   PTX-NOT:   st.global.v4
//       PTX:   st.global.b32
//       PTX:   st.global.b32
//       PTX:   ret;
//       PTX:   .entry layer_norm_bf16_norm_kernel_0(
//       PTX:   .maxntid 64, 1, 1
// PTX-COUNT-6:   ld.global.nc.v4.b32
// PTX-COUNT-8:   ld.global.nc.b32
//   PTX-NOT:   shfl.sync
//       PTX:   fma.rn.f32
//       PTX:   st.global.v4.b32
//   PTX-NOT:   shfl.sync
//       PTX:   ret;
//       PTX:   .entry layer_norm_bf16_norm_kernel_1(
//       PTX:   .maxntid 128, 1, 1
// PTX-COUNT-12:  ld.global.nc.v4.b32
//   PTX-NOT:   st.global
//       PTX:   shfl.sync.bfly.b32
//   PTX-NOT:   ld.global
//       PTX:   bar.sync
//   PTX-NOT:   ld.global
//       PTX:   fma.rn.f32
//   PTX-NOT:   ld.global
//       PTX:   st.global.v4.b32
//       PTX:   ret;

// SM80-LABEL: // gpu.binary @layer_norm_bf16_norm_kernel
//       SM80:   .target sm_80
//       SM80:   .entry layer_norm_bf16_norm_kernel_1(
//       SM80:   ld.global.nc.v4.b32
//       SM80:   shfl.sync.bfly.b32

// The host copies (norm-gpu-host-copies) sit in the branch of each variant:
// few rows get the two split kernels, which share one device copy of x.
// HOST-LABEL: llvm.func @layer_norm_bf16
//       HOST:   llvm.icmp "ult" %{{.*}}, %{{.*}} : i64
//       HOST:   llvm.call @mgpuStreamCreate()
//       HOST:   llvm.call @mgpuMemAlloc
//       HOST:   llvm.call @mgpuMemAlloc
//       HOST:   llvm.call @mgpuMemcpy
//       HOST:   gpu.launch_func <%{{.*}} : !llvm.ptr> @layer_norm_bf16_norm_kernel::@layer_norm_bf16_norm_kernel
//   HOST-NOT:   llvm.call @mgpuMemFree
//       HOST:   gpu.launch_func <%{{.*}} : !llvm.ptr> @layer_norm_bf16_norm_kernel::@layer_norm_bf16_norm_kernel_0
//       HOST:   llvm.call @mgpuMemcpy
//       HOST:   llvm.call @mgpuMemFree
//       HOST:   llvm.call @mgpuStreamSynchronize
//       HOST:   llvm.call @mgpuStreamCreate()
//       HOST:   llvm.call @mgpuMemcpy
//       HOST:   gpu.launch_func <%{{.*}} : !llvm.ptr> @layer_norm_bf16_norm_kernel::@layer_norm_bf16_norm_kernel_1
//       HOST:   llvm.call @mgpuMemcpy
//       HOST:   llvm.call @mgpuMemFree
//       HOST:   llvm.call @mgpuStreamSynchronize
// HOST-LABEL: gpu.binary @layer_norm_bf16_norm_kernel
//  HOST-SAME:   #nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
//  HOST-SAME:   assembly = "

// RUNTIME: runtime provides: mgpuLaunchKernel mgpuMemAlloc mgpuMemFree mgpuMemcpy mgpuModuleGetFunction mgpuModuleLoadJIT mgpuModuleUnload mgpuStreamCreate mgpuStreamDestroy mgpuStreamSynchronize

// BIN: layer_norm_bf16_norm_kernel cubin
// ELF: 177   E   L   F

// FATBIN: gpu.binary @layer_norm_bf16_norm_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}, "P\ED

// PTXAS-COUNT-8: ptxas ok:
//     PTXAS-NOT: ptxas

func.func @layer_norm_bf16(%x: tensor<?x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// A warp per row: shuffles and no barrier; x, residual and weight loaded
// before residual_out is stored and the row reduced.
// PTX-LABEL: // gpu.binary @add_rms_norm_f32_norm_kernel
//       PTX:   .maxntid 32, 4, 1
// PTX-COUNT-18:  ld.global.nc.v4.b32
//   PTX-NOT:   ld.global
//       PTX:   st.global.v4.b32
//   PTX-NOT:   ld.global
//       PTX:   shfl.sync.bfly.b32
//   PTX-NOT:   ld.global
//   PTX-NOT:   bar.sync
//       PTX:   st.global.v4.b32
//       PTX:   ret;
func.func @add_rms_norm_f32(%x: tensor<?x768xf32>, %w: tensor<768xf32>, %r: tensor<?x768xf32>) -> (tensor<?x768xf32>, tensor<?x768xf32>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) : (tensor<?x768xf32>, tensor<768xf32>, tensor<?x768xf32>) -> (tensor<?x768xf32>, tensor<?x768xf32>)
  return %y, %s : tensor<?x768xf32>, tensor<?x768xf32>
}

// No reduction: vector loads, no shuffle; for a bf16 result on sm_75 and
// later the hardware tanh (libdevice's tanhf, built on ex2.approx, on sm_70),
// and tanh * weight + bias as one FMA.
// PTX-LABEL: // gpu.binary @dyt_bf16_norm_kernel
//       PTX:   ld.global.nc.v4.b32
//   PTX-NOT:   shfl.sync
//   PTX-NOT:   ex2.approx
//       PTX:   tanh.approx.f32
//   PTX-NOT:   ex2.approx
//       PTX:   fma.rn.f32
//   PTX-NOT:   ex2.approx
//       PTX:   st.global.v4.b32
//       PTX:   ret;
// SM70-LABEL: // gpu.binary @dyt_bf16_norm_kernel
//   SM70-NOT:   tanh.approx
//       SM70:   ex2.approx
//   SM70-NOT:   tanh.approx
//       SM70:   ret;
func.func @dyt_bf16(%x: tensor<16x1024xbf16>, %a: tensor<f32>, %w: tensor<1024xbf16>, %b: tensor<1024xbf16>) -> tensor<16x1024xbf16> {
  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b) : (tensor<16x1024xbf16>, tensor<f32>, tensor<1024xbf16>, tensor<1024xbf16>) -> tensor<16x1024xbf16>
  return %y : tensor<16x1024xbf16>
}

// f32 results keep libdevice's tanhf.
// PTX-LABEL: // gpu.binary @dyt_f32_norm_kernel
//   PTX-NOT:   tanh.approx
//       PTX:   ex2.approx
//   PTX-NOT:   tanh.approx
//       PTX:   ret;
func.func @dyt_f32(%x: tensor<16x1024xf32>, %a: tensor<f32>) -> tensor<16x1024xf32> {
  %y = norm.dyt %x alpha(%a) : (tensor<16x1024xf32>, tensor<f32>) -> tensor<16x1024xf32>
  return %y : tensor<16x1024xf32>
}

// f64: two-element (128-bit) accesses, 64-bit shuffles as pairs.
// PTX-LABEL: // gpu.binary @layer_norm_f64_norm_kernel
//       PTX:   ld.global.nc.v2.b64
//       PTX:   shfl.sync.bfly.b32
//       PTX:   st.global.v2.b64
func.func @layer_norm_f64(%x: tensor<4x512xf64>) -> tensor<4x512xf64> {
  %y = norm.layer_norm %x : (tensor<4x512xf64>) -> tensor<4x512xf64>
  return %y : tensor<4x512xf64>
}

// A dynamic row length: one module of seven kernels, chosen at run time:
// a warp per row (128-bit or scalar accesses), then for long aligned rows a
// block sized for each class of row length (at most 512, 1024 or 4096
// vectors: 128, 256 and 1024 threads, the row read once) and beyond that a
// 256-thread block whose loop reads the rest of the row again, and a block
// with scalar accesses.
// PTX-LABEL: // gpu.binary @rms_norm_f16_norm_kernel
//       PTX:   .entry rms_norm_f16_norm_kernel(
//       PTX:   .maxntid 32, 4, 1
//       PTX:   ld.global.nc.v4.b32
//       PTX:   shfl.sync.bfly.b32
//       PTX:   .entry rms_norm_f16_norm_kernel_0(
//       PTX:   .maxntid 32, 4, 1
//       PTX:   ld.global.nc.b16
//       PTX:   shfl.sync.bfly.b32
//       PTX:   .entry rms_norm_f16_norm_kernel_1(
//       PTX:   .maxntid 128, 1, 1
//       PTX:   ld.global.nc.v4.b32
//       PTX:   bar.sync
//       PTX:   .entry rms_norm_f16_norm_kernel_2(
//       PTX:   .maxntid 256, 1, 1
//       PTX:   .entry rms_norm_f16_norm_kernel_3(
//       PTX:   .maxntid 1024, 1, 1
//       PTX:   .entry rms_norm_f16_norm_kernel_4(
//       PTX:   .maxntid 256, 1, 1
//       PTX:   .entry rms_norm_f16_norm_kernel_5(
//       PTX:   .maxntid 256, 1, 1
//       PTX:   ld.global.nc.b16
//       PTX:   bar.sync
//   PTX-NOT:   .entry
func.func @rms_norm_f16(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %y = norm.rms_norm %x : (tensor<?x?xf16>) -> tensor<?x?xf16>
  return %y : tensor<?x?xf16>
}


// Decode: 32 static rows of 8192 bf16 are split (with split-min-elements=1024)
// in 8 parts of 1024
// (256 blocks); no per-row kernel is compiled.
// PTX-LABEL: // gpu.binary @decode_rms_norm_bf16_norm_kernel
//       PTX:   .entry decode_rms_norm_bf16_norm_kernel(
//       PTX:   .maxntid 64, 1, 1
//       PTX:   shfl.sync.bfly.b32
//       PTX:   st.global.b32
//       PTX:   .entry decode_rms_norm_bf16_norm_kernel_0(
// PTX-COUNT-8:   ld.global.nc.b32
//       PTX:   st.global.v4.b32
//   PTX-NOT:   .entry
func.func @decode_rms_norm_bf16(%x: tensor<32x8192xbf16>, %w: tensor<8192xbf16>) -> tensor<32x8192xbf16> {
  %y = norm.rms_norm %x weight(%w) : (tensor<32x8192xbf16>, tensor<8192xbf16>) -> tensor<32x8192xbf16>
  return %y : tensor<32x8192xbf16>
}

// Head-dim rows (128 bf16: 16 vectors) share warps: 16 lanes per row, 8 rows
// per 128-thread block, a four-step butterfly (offsets 8, 4, 2, 1); groups
// past the last row store nothing.
// PTX-LABEL: // gpu.binary @qk_rms_norm_bf16_norm_kernel
//       PTX:   .maxntid 16, 8, 1
//       PTX:   ld.global.nc.v4.b32
//       PTX:   shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
//       PTX:   shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
//       PTX:   shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
//       PTX:   shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
//   PTX-NOT:   shfl.sync
//       PTX:   st.global.v4.b32
//       PTX:   ret;
func.func @qk_rms_norm_bf16(%x: tensor<?x128xbf16>, %w: tensor<128xbf16>) -> tensor<?x128xbf16> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x128xbf16>, tensor<128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
