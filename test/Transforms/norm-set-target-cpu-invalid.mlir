// RUN: norm-opt %s "-norm-set-target-cpu=cpu=pentium9" -verify-diagnostics -split-input-file
// RUN: norm-opt %s -norm-set-target-cpu -verify-diagnostics -split-input-file

// A CPU name LLVM does not know (or none): one error at the op the pass
// runs on, and the pass fails.
// expected-error @below {{norm-set-target-cpu: option 'cpu' must be an x86-64 or AArch64 CPU name LLVM knows}}
module {
  llvm.func @kernel() {
    llvm.return
  }
}
