// REQUIRES: cuda-toolkit
// RUN: norm-opt %s --norm-gpu-pipeline=format=isa -o %t.sm90.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm90.mlir | FileCheck %s --check-prefix=SM90
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm90.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTXAS
// RUN: norm-opt %s --norm-gpu-pipeline="format=isa memory=device" | FileCheck %s --check-prefix=DEVICE
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_100a features=+ptx86 format=isa" -o %t.sm100a.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm100a.mlir | FileCheck %s --check-prefix=SM100A
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm100a.mlir %ptxas sm_100a | FileCheck %s --check-prefix=PTXAS
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_100f features=+ptx88 format=isa" -o %t.sm100f.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm100f.mlir | FileCheck %s --check-prefix=SM100A
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_100 features=+ptx88 format=isa" -o %t.sm100.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm100.mlir | FileCheck %s --check-prefix=SM100

// The block-scaled forms of norm.quantize alone down to PTX. sm_90: FP8
// elements by cvt.rn.satfinite.e4m3x2.f32, FP4 elements and the scales by
// integer ops; f4E2M1FN results packed two per byte, each thread storing
// whole bytes (no atomics); ptxas accepts every kernel.

// SM90-LABEL: .entry mxfp8_norm_kernel
//       SM90: ld.global.nc.v4.b32
//       SM90: shfl.sync.bfly.b32
//       SM90: max.NaN.f32
//       SM90: st.global.b8
//       SM90: cvt.rn.satfinite.e4m3x2.f32
//       SM90: st.global.v2.b32
// SM90-LABEL: .entry mxfp4_norm_kernel
//   SM90-NOT: cvt.rn.satfinite.e2m1x2
//   SM90-NOT: atom
//       SM90: shfl.sync.bfly.b32
//       SM90: st.global.b8
//       SM90: st.global.b32
// SM90-LABEL: .entry nvfp4_swizzled_norm_kernel
//   SM90-NOT: cvt.rn.satfinite.e2m1x2
//   SM90-NOT: atom
//       SM90: div.rn.f32
//       SM90: st.global.b8
//       SM90: st.global.v2.b8
//   SM90-NOT: cvt.rn.satfinite.e2m1x2
//   SM90-NOT: atom

// Fused with swizzled_128x4 scales: the grid's threads first store the 0
// scales of the padding (a byte each, in a loop), then each block's row is
// normalized in registers, its group maxima taken by shuffles, the scales
// stored at their swizzled offsets and q as packed words.
// SM90-LABEL: .entry fused_swizzled_norm_kernel
//       SM90: st.global.b8 {{.*}}, 0;
//       SM90: shfl.sync.bfly.b32
//       SM90: st.global.b8
//       SM90: st.global.b32
//   SM90-NOT: atom

// On the arch- and family-specific sm_100 targets FP4 elements are
// converted two per cvt.rn.satfinite.e2m1x2.f32 (a thread's 8 bf16 values
// by 4, stored as one word); plain sm_100 has no such instruction.
// SM100A-LABEL: .entry mxfp8_norm_kernel
//       SM100A: cvt.rn.satfinite.e4m3x2.f32
// SM100A-LABEL: .entry mxfp4_norm_kernel
//   SM100A-NOT: atom
// SM100A-COUNT-4: cvt.rn.satfinite.e2m1x2.f32
//       SM100A: st.global.b32
// SM100A-LABEL: .entry nvfp4_swizzled_norm_kernel
// SM100A-COUNT-2: cvt.rn.satfinite.e2m1x2.f32
//       SM100A: st.global.v2.b8
// SM100A-LABEL: .entry fused_swizzled_norm_kernel
//       SM100A: st.global.b8 {{.*}}, 0;
// SM100A-COUNT-4: cvt.rn.satfinite.e2m1x2.f32
// SM100-LABEL: .entry mxfp4_norm_kernel
//   SM100-NOT: cvt.rn.satfinite.e2m1x2.f32
//       SM100: st.global.b32
//   SM100-NOT: cvt.rn.satfinite.e2m1x2.f32

// PTXAS-COUNT-4: ptxas ok:

// memory=device: the packed q buffer is allocated on the device with half
// the bytes, and the kernels take i8 buffers.
// DEVICE-LABEL: llvm.func @mxfp4
//       DEVICE:   llvm.call @mgpuMemAlloc
//       DEVICE:   gpu.launch_func

func.func @mxfp8(%y: tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>)
  return %q, %s : tensor<?x4096xf8E4M3FN>, tensor<?x128xf8E8M0FNU>
}

func.func @mxfp4(%y: tensor<?x4096xbf16>) -> (tensor<?x4096xf4E2M1FN>, tensor<?x128xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf4E2M1FN>, tensor<?x128xf8E8M0FNU>)
  return %q, %s : tensor<?x4096xf4E2M1FN>, tensor<?x128xf8E8M0FNU>
}

func.func @nvfp4_swizzled(%y: tensor<?x256xf32>, %g: tensor<f32>) -> (tensor<?x256xf4E2M1FN>, tensor<?xf8E4M3FN>) {
  %q, %s = norm.quantize %y global_scale(%g) {group_size = 16 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x256xf32>, tensor<f32>) -> (tensor<?x256xf4E2M1FN>, tensor<?xf8E4M3FN>)
  return %q, %s : tensor<?x256xf4E2M1FN>, tensor<?xf8E4M3FN>
}

func.func @fused_swizzled(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>) -> (tensor<?x4096xf4E2M1FN>, tensor<?xf8E8M0FNU>) {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  %q, %s = norm.quantize %y {group_size = 32 : i64, scale_layout = #norm<scale_layout swizzled_128x4>} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf4E2M1FN>, tensor<?xf8E8M0FNU>)
  return %q, %s : tensor<?x4096xf4E2M1FN>, tensor<?xf8E8M0FNU>
}
