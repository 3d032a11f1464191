// norm-cpu-pipeline{target-cpu=...}: the vector width and native-bf16
// follow the named CPU, not the host, and every function is marked for it.
// The f32 row loop of the direct lowering is unrolled four times: 256-bit
// registers give vector<32xf32>, 512-bit ones vector<64xf32>; the explicit
// vector-width runs show the same code for the same width on any host.
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=x86-64-v3" | FileCheck %s --check-prefixes=W256,EXPAND,V3
// RUN: norm-opt %s --norm-cpu-pipeline="vector-width=256 native-bf16=false" | FileCheck %s --check-prefixes=W256,EXPAND
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=skylake-avx512" | FileCheck %s --check-prefixes=W512,EXPAND,SKX
// RUN: norm-opt %s --pass-pipeline="builtin.module(norm-cpu-pipeline{target-cpu=sapphirerapids})" | FileCheck %s --check-prefixes=W512,NATIVE,SPR
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=znver4" | FileCheck %s --check-prefixes=W512,NATIVE
// RUN: norm-opt %s --norm-cpu-pipeline="vector-width=512 native-bf16=true" | FileCheck %s --check-prefixes=W512,NATIVE
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=neoverse-v1" | FileCheck %s --check-prefixes=W128,NATIVE,NEOVERSE
//
// An explicit vector-width or native-bf16 wins over the CPU's.
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=sapphirerapids vector-width=256 native-bf16=false" | FileCheck %s --check-prefixes=W256,EXPAND,SPR
//
// The functions carry the CPU, so llc compiles them for it whatever its own
// -mcpu: AVX-512 (zmm) code for skylake-avx512 from a generic x86-64 llc,
// none for x86-64-v3 from an llc told skylake-avx512.
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=skylake-avx512" | mlir-translate --mlir-to-llvmir | llc -O2 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64 | FileCheck %s --check-prefix=ASM-ZMM
// RUN: norm-opt %s --norm-cpu-pipeline="target-cpu=x86-64-v3" | mlir-translate --mlir-to-llvmir | llc -O2 -mtriple=x86_64-unknown-linux-gnu -mcpu=skylake-avx512 | FileCheck %s --check-prefix=ASM-YMM
//
// A name LLVM does not know: one error, nothing compiled.
// RUN: not norm-opt %s --norm-cpu-pipeline="target-cpu=pentium9" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not norm-opt %s --norm-cpu-pipeline="target-cpu=native" 2>&1 | FileCheck %s --check-prefix=NATIVE-NAME

// W256-LABEL: llvm.func @rms_f32(
//   W256-NOT: vector<64xf32>
//       W256: vector<32xf32>
// W512-LABEL: llvm.func @rms_f32(
//       W512: vector<64xf32>
// W128-LABEL: llvm.func @rms_f32(
//   W128-NOT: vector<32xf32>
//       W128: vector<16xf32>
//
// V3: attributes {{.*}}target_cpu = "x86-64-v3", target_features = #llvm.target_features<[{{.*}}"+avx2"{{.*}}"+fma"
// SKX: attributes {{.*}}target_cpu = "skylake-avx512", target_features = #llvm.target_features<[{{.*}}"+avx512f"
// SPR: attributes {{.*}}target_cpu = "sapphirerapids", target_features = #llvm.target_features<[{{.*}}"+avx512bf16"
// NEOVERSE: attributes {{.*}}target_cpu = "neoverse-v1", target_features = #llvm.target_features<[{{.*}}"+bf16"
func.func @rms_f32(%x: tensor<8x4096xf32>) -> tensor<8x4096xf32> attributes {llvm.emit_c_interface} {
  %y = norm.rms_norm %x : (tensor<8x4096xf32>) -> tensor<8x4096xf32>
  return %y : tensor<8x4096xf32>
}

// Without native bf16 the f32 -> bf16 rounding is integer arithmetic (no
// vector fptrunc to bf16); with it, a vector fptrunc that LLVM lowers to
// the CPU's conversion instruction.
// EXPAND-LABEL: llvm.func @rms_bf16(
//   EXPAND-NOT: llvm.fptrunc {{.*}}bf16>
//       EXPAND: llvm.return
// NATIVE-LABEL: llvm.func @rms_bf16(
//       NATIVE: llvm.fptrunc %{{.*}} : vector<{{[0-9]+}}xf32> to vector<{{[0-9]+}}xbf16>
func.func @rms_bf16(%xm: memref<64x4096xbf16>, %ym: memref<64x4096xbf16>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %xm restrict : memref<64x4096xbf16> to tensor<64x4096xbf16>
  %y = norm.rms_norm %x : (tensor<64x4096xbf16>) -> tensor<64x4096xbf16>
  bufferization.materialize_in_destination %y in restrict writable %ym : (tensor<64x4096xbf16>, memref<64x4096xbf16>) -> ()
  return
}

// ASM-ZMM-LABEL: rms_f32:
//       ASM-ZMM: zmm
// ASM-YMM-LABEL: rms_f32:
//   ASM-YMM-NOT: zmm
//       ASM-YMM: ymm
//   ASM-YMM-NOT: zmm
//       ASM-YMM: .Lfunc_end

// UNKNOWN: error: norm-cpu-pipeline: option 'target-cpu' must be an x86-64 or AArch64 CPU name LLVM knows (e.g. x86-64-v3, skylake-avx512, sapphirerapids, znver4, neoverse-v1), got 'pentium9'
// NATIVE-NAME: error: norm-cpu-pipeline: option 'target-cpu' must be {{.*}}, got 'native'
