// Bad options of norm-gpu-pipeline and norm-lower-gpu: one clear diagnostic
// at the module and a non-zero exit, never a partial pipeline.

// RUN: norm-opt %s --norm-gpu-pipeline=chip=sm_xx -verify-diagnostics
// RUN: norm-opt %s --norm-gpu-pipeline=format=elf -verify-diagnostics
// RUN: norm-opt %s --norm-gpu-pipeline=features=ptx80 -verify-diagnostics
// RUN: norm-opt %s --norm-gpu-pipeline=memory=unified -verify-diagnostics
// RUN: norm-opt %s --norm-gpu-pipeline=opt-level=4 -verify-diagnostics
// RUN: norm-opt %s --norm-gpu-pipeline=split-min-elements=-1 -verify-diagnostics

// RUN: not norm-opt %s --norm-gpu-pipeline=chip=sm_xx 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not norm-opt %s --norm-gpu-pipeline=chip=sm_9 2>&1 | FileCheck %s --check-prefix=CHIP9
// RUN: not norm-opt %s --norm-gpu-pipeline=format=elf 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not norm-opt %s --norm-gpu-pipeline=features=ptx80 2>&1 | FileCheck %s --check-prefix=FEATURES
// RUN: not norm-opt %s --norm-gpu-pipeline=memory=unified 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not norm-opt %s --norm-gpu-pipeline=toolkit=%t.nowhere 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not norm-opt %s --pass-pipeline="builtin.module(func.func(norm-lower-gpu{max-block-size=100}))" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not norm-opt %s --pass-pipeline="builtin.module(func.func(norm-lower-gpu{memory=host}))" 2>&1 | FileCheck %s --check-prefix=LOWER-MEMORY
// RUN: not norm-opt %s --norm-gpu-pipeline=split-min-elements=-1 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not norm-opt %s --pass-pipeline="builtin.module(func.func(norm-lower-gpu{split-min-elements=-2}))" 2>&1 | FileCheck %s --check-prefix=LOWER-SPLIT

// CHIP: error: norm-gpu-pipeline: option 'chip' must name an NVIDIA GPU architecture such as sm_80, sm_90 or sm_90a, got 'sm_xx'
// CHIP9: error: norm-gpu-pipeline: option 'chip' {{.*}} got 'sm_9'
// FORMAT: error: norm-gpu-pipeline: option 'format' must be 'isa', 'bin' or 'fatbin', got 'elf'
// FEATURES: error: norm-gpu-pipeline: option 'features' must be a PTX ISA version such as +ptx80, got 'ptx80'
// MEMORY: error: norm-gpu-pipeline: option 'memory' must be 'copy' or 'device', got 'unified'
// TOOLKIT: error: norm-gpu-pipeline: no CUDA toolkit at '{{.*}}nowhere' (missing {{.*}}libdevice.10.bc); set option 'toolkit' or CUDA_HOME
// BLOCK: error: norm-lower-gpu: option 'max-block-size' must be a multiple of 32 in [32, 1024], got 100
// LOWER-MEMORY: for the --memory option: Cannot find option named 'host'!
// SPLIT: error: norm-gpu-pipeline: option 'split-min-elements' must be >= 0, got -1
// LOWER-SPLIT: error: norm-lower-gpu: option 'split-min-elements' must be >= 0, got -2

// expected-error@below {{norm-gpu-pipeline: option '}}
module {
  func.func @f(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %y = norm.rms_norm %x : (tensor<4x64xf32>) -> tensor<4x64xf32>
    return %y : tensor<4x64xf32>
  }
}
