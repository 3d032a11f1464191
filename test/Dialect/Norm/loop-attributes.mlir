// RUN: norm-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The dialect's loop attributes (norm.sequential, norm.nontemporal_stores,
// norm.prefetch_next_row) are unit attributes on scf.forall.

// CHECK-LABEL: func.func @on_forall
//       CHECK: scf.forall
//       CHECK: {norm.nontemporal_stores, norm.prefetch_next_row, norm.sequential}
func.func @on_forall(%m: memref<4x8xf32>) {
  scf.forall (%i) in (4) {
  } {norm.sequential, norm.nontemporal_stores, norm.prefetch_next_row}
  return
}

// -----

func.func @not_unit(%m: memref<4x8xf32>) {
  // expected-error @+1 {{attribute 'norm.sequential' must be a unit attribute, got true}}
  scf.forall (%i) in (4) {
  } {norm.sequential = true}
  return
}

// -----

func.func @not_on_forall(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{attribute 'norm.prefetch_next_row' is only valid on 'scf.forall', got 'scf.for'}}
  scf.for %i = %c0 to %n step %c1 {
  } {norm.prefetch_next_row}
  return
}

// -----

func.func @unknown(%n: index) {
  // expected-error @+1 {{unknown norm dialect attribute 'norm.parallel'}}
  scf.forall (%i) in (4) {
  } {norm.parallel}
  return
}

// -----

// CHECK-LABEL: func.func @min_trips
//       CHECK: {norm.parallel_min_trips = 32 : i64}
func.func @min_trips() {
  scf.forall (%i) in (4) {
  } {norm.parallel_min_trips = 32 : i64}
  return
}

// -----

func.func @min_trips_too_small() {
  // expected-error @+1 {{attribute 'norm.parallel_min_trips' must be an i64 integer >= 2, got 1 : i64}}
  scf.forall (%i) in (4) {
  } {norm.parallel_min_trips = 1 : i64}
  return
}

// -----

func.func @min_trips_not_integer() {
  // expected-error @+1 {{attribute 'norm.parallel_min_trips' must be an i64 integer >= 2, got unit}}
  scf.forall (%i) in (4) {
  } {norm.parallel_min_trips}
  return
}

// -----

// CHECK-LABEL: func.func @nontemporal_min_trips
//       CHECK: {norm.nontemporal_min_trips = 64 : i64, norm.nontemporal_stores}
func.func @nontemporal_min_trips() {
  scf.forall (%i) in (4) {
  } {norm.nontemporal_stores, norm.nontemporal_min_trips = 64 : i64}
  return
}

// -----

func.func @nontemporal_min_trips_not_i64() {
  // expected-error @+1 {{attribute 'norm.nontemporal_min_trips' must be an i64 integer >= 2, got unit}}
  scf.forall (%i) in (4) {
  } {norm.nontemporal_min_trips}
  return
}

// -----

// norm.kernel: a unit attribute on functions (the func.func ops
// norm-outline-kernels creates, and the llvm.func they become).

// CHECK-LABEL: func.func private @kernel
//  CHECK-SAME: attributes {norm.kernel}
func.func private @kernel() attributes {norm.kernel} {
  return
}

// CHECK-LABEL: llvm.func @llvm_kernel
//  CHECK-SAME: attributes {norm.kernel}
llvm.func @llvm_kernel() attributes {norm.kernel} {
  llvm.return
}

// -----

// expected-error @+1 {{attribute 'norm.kernel' must be a unit attribute, got 1 : i64}}
func.func private @kernel_not_unit() attributes {norm.kernel = 1 : i64} {
  return
}

// -----

func.func @kernel_not_on_func() {
  // expected-error @+1 {{attribute 'norm.kernel' is only valid on functions, got 'scf.forall'}}
  scf.forall (%i) in (4) {
  } {norm.kernel}
  return
}
