// norm-gpu-pipeline's default choice between one kernel with a block per
// row and the split kernels for fewer than 64 rows (split-min-elements,
// default 32768): decode rows of 8192 get one kernel; rows of 262144 are cut
// in 8 parts of 32768.

// REQUIRES: cuda-toolkit
// RUN: norm-opt %s --norm-gpu-pipeline=format=isa -o %t.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: norm-opt %s --norm-gpu-pipeline="format=isa split-min-elements=0" -o %t.nosplit.mlir
// RUN: %python %norm_tools/gpu-binary.py ptx %t.nosplit.mlir | FileCheck %s --check-prefix=NOSPLIT

// With split-min-elements=0, the long rows get a block each too.
// NOSPLIT-LABEL: // gpu.binary @long_row_rms_norm_bf16_norm_kernel
//       NOSPLIT:   .entry long_row_rms_norm_bf16_norm_kernel(
//   NOSPLIT-NOT:   .entry

// Decode: 32 static rows of 8192 bf16 get a block of 256 threads each (one
// kernel: at this size the kernel launch, not the bandwidth, sets the time);
// every thread keeps 4 vectors of x and of the weight.
// PTX-LABEL: // gpu.binary @decode_rms_norm_bf16_norm_kernel
//       PTX:   .entry decode_rms_norm_bf16_norm_kernel(
//       PTX:   .maxntid 256, 1, 1
// PTX-COUNT-8:   ld.global.nc.v4.b32
//       PTX:   shfl.sync.bfly.b32
// PTX-COUNT-4:   st.global.v4.b32
//   PTX-NOT:   .entry
func.func @decode_rms_norm_bf16(%x: tensor<32x8192xbf16>, %w: tensor<8192xbf16>) -> tensor<32x8192xbf16> {
  %y = norm.rms_norm %x weight(%w) : (tensor<32x8192xbf16>, tensor<8192xbf16>) -> tensor<32x8192xbf16>
  return %y : tensor<32x8192xbf16>
}

// Few long rows (4 x 262144 bf16) are cut in 8 parts of 32768, a block of
// 1024 threads each: the partials kernel stores one statistic per part, the
// finishing kernel reads the 8 of its row.
// PTX-LABEL: // gpu.binary @long_row_rms_norm_bf16_norm_kernel
//       PTX:   .entry long_row_rms_norm_bf16_norm_kernel(
//       PTX:   .maxntid 1024, 1, 1
//       PTX:   shfl.sync.bfly.b32
//       PTX:   st.global.b32
//       PTX:   .entry long_row_rms_norm_bf16_norm_kernel_0(
// PTX-COUNT-8:   ld.global.nc.b32
//       PTX:   st.global.v4.b32
//   PTX-NOT:   .entry
func.func @long_row_rms_norm_bf16(%x: tensor<4x262144xbf16>, %w: tensor<262144xbf16>) -> tensor<4x262144xbf16> {
  %y = norm.rms_norm %x weight(%w) : (tensor<4x262144xbf16>, tensor<262144xbf16>) -> tensor<4x262144xbf16>
  return %y : tensor<4x262144xbf16>
}
