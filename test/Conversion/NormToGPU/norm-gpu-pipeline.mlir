// Compile-only checks of norm-gpu-pipeline: every op reaches PTX with 128-bit
// global loads (and warp shuffles where it reduces), ptxas accepts the PTX
// for sm_80 and sm_90, format=bin gives cubins, and norm_cuda_runtime
// provides every mgpu* function the host code calls.

// REQUIRES: cuda-toolkit
// RUN: norm-opt %s --norm-gpu-pipeline=format=isa -o %t.sm90.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm90.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTXAS
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_80 format=isa" -o %t.sm80.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm80.mlir | FileCheck %s --check-prefix=SM80
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm80.mlir %ptxas sm_80 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=HOST < %t.sm90.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.sm90.mlir -o %t.ll
// RUN: %python %norm_tools/check-runtime-symbols.py %t.ll %norm_cuda_runtime | FileCheck %s --check-prefix=RUNTIME
// RUN: norm-opt %s --norm-gpu-pipeline=format=bin -o %t.bin.mlir
// RUN: rm -rf %t.cubin && %python %norm_tools/gpu-binary.py extract %t.bin.mlir %t.cubin | FileCheck %s --check-prefix=BIN
// RUN: od -An -c -N4 %t.cubin/layer_norm_bf16_kernel.cubin | FileCheck %s --check-prefix=ELF
// RUN: norm-opt %s --norm-gpu-pipeline | FileCheck %s --check-prefix=FATBIN

// PTX-LABEL: // gpu.binary @layer_norm_bf16_kernel
//       PTX:   .target sm_90
//       PTX:   .maxntid 128, 1, 1
//       PTX:   ld.global.v4.b32
//       PTX:   shfl.sync.bfly.b32
//       PTX:   bar.sync
//       PTX:   st.global.v4.b32

// SM80-LABEL: // gpu.binary @layer_norm_bf16_kernel
//       SM80:   .target sm_80
//       SM80:   ld.global.v4.b32
//       SM80:   shfl.sync.bfly.b32

// HOST-LABEL: llvm.func @layer_norm_bf16
//       HOST:   llvm.call @mgpuStreamCreate()
//       HOST:   llvm.call @mgpuMemAlloc
//       HOST:   llvm.call @mgpuMemcpy
//       HOST:   gpu.launch_func <%{{.*}} : !llvm.ptr> @layer_norm_bf16_kernel::@layer_norm_bf16_kernel
//       HOST:   llvm.call @mgpuMemFree
//       HOST:   llvm.call @mgpuStreamSynchronize
// HOST-LABEL: gpu.binary @layer_norm_bf16_kernel
//  HOST-SAME:   #nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
//  HOST-SAME:   assembly = "

// RUNTIME: runtime provides: mgpuLaunchKernel mgpuMemAlloc mgpuMemFree mgpuMemcpy mgpuModuleGetFunction mgpuModuleLoadJIT mgpuModuleUnload mgpuStreamCreate mgpuStreamDestroy mgpuStreamSynchronize

// BIN: layer_norm_bf16_kernel cubin
// ELF: 177   E   L   F

// FATBIN: gpu.binary @layer_norm_bf16_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}, "P\ED

// PTXAS-COUNT-8: ptxas ok:
//     PTXAS-NOT: ptxas

func.func @layer_norm_bf16(%x: tensor<?x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %y = norm.layer_norm %x weight(%g) bias(%b) : (tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// A warp per row: shuffles and no barrier.
// PTX-LABEL: // gpu.binary @add_rms_norm_f32_kernel
//       PTX:   .maxntid 32, 4, 1
//       PTX:   ld.global.v4.b32
//       PTX:   shfl.sync.bfly.b32
//   PTX-NOT:   bar.sync
//       PTX:   st.global.v4.b32
//       PTX:   ret;
func.func @add_rms_norm_f32(%x: tensor<?x768xf32>, %w: tensor<768xf32>, %r: tensor<?x768xf32>) -> (tensor<?x768xf32>, tensor<?x768xf32>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r) : (tensor<?x768xf32>, tensor<768xf32>, tensor<?x768xf32>) -> (tensor<?x768xf32>, tensor<?x768xf32>)
  return %y, %s : tensor<?x768xf32>, tensor<?x768xf32>
}

// No reduction: vector loads, no shuffle; tanh from libdevice.
// PTX-LABEL: // gpu.binary @dyt_bf16_kernel
//       PTX:   ld.global.v4.b32
//   PTX-NOT:   shfl.sync
//       PTX:   st.global.v4.b32
//       PTX:   ret;
func.func @dyt_bf16(%x: tensor<16x1024xbf16>, %a: tensor<f32>, %w: tensor<1024xbf16>, %b: tensor<1024xbf16>) -> tensor<16x1024xbf16> {
  %y = norm.dyt %x alpha(%a) weight(%w) bias(%b) : (tensor<16x1024xbf16>, tensor<f32>, tensor<1024xbf16>, tensor<1024xbf16>) -> tensor<16x1024xbf16>
  return %y : tensor<16x1024xbf16>
}

// f64: two-element (128-bit) accesses, 64-bit shuffles as pairs.
// PTX-LABEL: // gpu.binary @layer_norm_f64_kernel
//       PTX:   ld.global.v2.b64
//       PTX:   shfl.sync.bfly.b32
//       PTX:   st.global.v2.b64
func.func @layer_norm_f64(%x: tensor<4x512xf64>) -> tensor<4x512xf64> {
  %y = norm.layer_norm %x : (tensor<4x512xf64>) -> tensor<4x512xf64>
  return %y : tensor<4x512xf64>
}

// A dynamic row length: four kernels (warp or block, 128-bit or scalar).
// PTX-LABEL: // gpu.binary @rms_norm_f16_kernel
//       PTX:   ld.global.v4.b32
//       PTX:   shfl.sync.bfly.b32
// PTX-LABEL: // gpu.binary @rms_norm_f16_kernel_0
//       PTX:   ld.global.b16
//       PTX:   shfl.sync.bfly.b32
// PTX-LABEL: // gpu.binary @rms_norm_f16_kernel_1
//       PTX:   ld.global.v4.b32
//       PTX:   shfl.sync.bfly.b32
//       PTX:   bar.sync
// PTX-LABEL: // gpu.binary @rms_norm_f16_kernel_2
//       PTX:   ld.global.b16
//       PTX:   bar.sync
func.func @rms_norm_f16(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %y = norm.rms_norm %x : (tensor<?x?xf16>) -> tensor<?x?xf16>
  return %y : tensor<?x?xf16>
}
