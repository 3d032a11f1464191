// RUN: norm-opt %s -split-input-file "-norm-set-target-cpu=cpu=x86-64-v3" | FileCheck %s
// RUN: norm-opt %s -split-input-file --pass-pipeline="builtin.module(norm-set-target-cpu{cpu=neoverse-v1})" | FileCheck %s --check-prefix=ARM

// Definitions get the CPU and its features; declarations stay as they are.
// CHECK-LABEL: llvm.func @kernel
//  CHECK-SAME: attributes {target_cpu = "x86-64-v3", target_features = #llvm.target_features<[{{.*}}"+avx", "+avx2", {{.*}}"+fma", {{.*}}]>}
//       CHECK: llvm.func @malloc(i64) -> !llvm.ptr
//   CHECK-NOT: target_cpu
// ARM-LABEL: llvm.func @kernel
//  ARM-SAME: attributes {target_cpu = "neoverse-v1", target_features = #llvm.target_features<["+v8.4a", {{.*}}"+bf16", {{.*}}"+sve"{{.*}}]>}
//       ARM: llvm.func @malloc(i64) -> !llvm.ptr
//   ARM-NOT: target_cpu
llvm.func @kernel(%p: !llvm.ptr) {
  llvm.return
}
llvm.func @malloc(i64) -> !llvm.ptr

// -----

// Also nested: the pass runs on whatever op it is nested under.
// CHECK-LABEL: llvm.func @nested
//  CHECK-SAME: target_cpu = "x86-64-v3"
// ARM-LABEL: llvm.func @nested
//  ARM-SAME: target_cpu = "neoverse-v1"
module @inner {
  llvm.func @nested() {
    llvm.return
  }
}
