// REQUIRES: cuda-toolkit
// RUN: norm-opt %s --norm-gpu-pipeline=format=isa -o %t.sm90.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm90.mlir | FileCheck %s --check-prefix=SM90
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm90.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTXAS
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_89 features=+ptx81 format=isa" -o %t.sm89.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm89.mlir | FileCheck %s --check-prefix=SM89
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_89 features=+ptx80 format=isa" -o %t.sm89ptx80.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm89ptx80.mlir | FileCheck %s --check-prefix=INT
// RUN: norm-opt %s --norm-gpu-pipeline="chip=sm_80 format=isa" -o %t.sm80.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.sm80.mlir | FileCheck %s --check-prefix=INT
// RUN: %python %norm_tools/gpu-binary.py ptxas %t.sm80.mlir %ptxas sm_80 | FileCheck %s --check-prefix=PTXAS

// Fused norm + quantization kernels, and the kernels of a norm.quantize
// alone, down to PTX: FP8 by cvt.rn.satfinite.e4m3x2.f32 on sm_90 (and
// sm_89 with PTX 8.1), by integer ops elsewhere; int8 by cvt.rni (round to
// nearest even); ptxas accepts every kernel.

// SM90-LABEL: .entry static_fp8_norm_kernel
//       SM90: cvt.rn.satfinite.e4m3x2.f32
//       SM90: st.global.v2.b32
// SM90-LABEL: .entry token_i8_norm_kernel
//       SM90: max.NaN.f32
//       SM90: cvt.rni.f32.f32
// SM90-LABEL: .entry group_fp8_norm_kernel
//       SM90: shfl.sync.bfly.b32
//       SM90: cvt.rn.satfinite.e4m3x2.f32

// SM90-LABEL: .entry alone_group_fp8_norm_kernel
//       SM90: ld.global.nc.v4.b32
//       SM90: max.NaN.f32
//       SM90: shfl.sync.bfly.b32
//       SM90: cvt.rn.satfinite.e4m3x2.f32
//       SM90: st.global.v2.b32
// SM90-LABEL: .entry alone_dynamic_i8_norm_kernel
//       SM90: cvt.rni.f32.f32
// SM90-LABEL: .entry alone_dynamic_i8_norm_kernel_0
//       SM90: cvt.rni.f32.f32

// SM89: .target sm_89
// SM89: cvt.rn.satfinite.e4m3x2.f32

// INT-LABEL: .entry static_fp8_norm_kernel
//   INT-NOT: cvt.rn.satfinite.e4m3x2
//       INT: min.u32
//       INT: st.global.v2.b32
// INT-LABEL: .entry alone_group_fp8_norm_kernel
//       INT: min.u32
//   INT-NOT: cvt.rn.satfinite.e4m3x2

// PTXAS-COUNT-5: ptxas ok:

func.func @static_fp8(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %s: tensor<f32>) -> tensor<?x4096xf8E4M3FN> {
  %y = norm.rms_norm %x weight(%w) : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  %q = norm.quantize %y scale(%s) : (tensor<?x4096xbf16>, tensor<f32>) -> tensor<?x4096xf8E4M3FN>
  return %q : tensor<?x4096xf8E4M3FN>
}

func.func @token_i8(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>) -> (tensor<?x4096xi8>, tensor<?x1xf32>, tensor<?x4096xbf16>) {
  %y, %s = norm.rms_norm %x residual(%r) : (tensor<?x4096xbf16>, tensor<?x4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>)
  %q, %sc = norm.quantize %y : (tensor<?x4096xbf16>) -> (tensor<?x4096xi8>, tensor<?x1xf32>)
  return %q, %sc, %s : tensor<?x4096xi8>, tensor<?x1xf32>, tensor<?x4096xbf16>
}

func.func @group_fp8(%x: tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>) {
  %y = norm.layer_norm %x : (tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>)
  return %q, %sc : tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>
}

func.func @alone_group_fp8(%y: tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>) {
  %q, %sc = norm.quantize %y {group_size = 128 : i64} : (tensor<?x4096xbf16>) -> (tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>)
  return %q, %sc : tensor<?x4096xf8E4M3FN>, tensor<?x32xf32>
}

func.func @alone_dynamic_i8(%y: tensor<?x?xf32>, %s: tensor<f32>) -> tensor<?x?xi8> {
  %q = norm.quantize %y scale(%s) : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi8>
  return %q : tensor<?x?xi8>
}
