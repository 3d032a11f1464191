// RUN: norm-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(norm-dealloc-after-last-use))' | FileCheck %s

// A buffer only read by later ops is freed after the last of them, not at
// the end of the function.
// CHECK-LABEL: func.func @freed_after_last_use
// CHECK:         %[[A:.*]] = memref.alloc() {bufferization.manual_deallocation} : memref<8xf32>
// CHECK:         linalg.fill
// CHECK-NEXT:    call @use(%[[A]])
// CHECK-NEXT:    memref.dealloc %[[A]] {bufferization.manual_deallocation}
// CHECK-NEXT:    call @other()
// CHECK-NEXT:    return
func.func private @use(memref<8xf32>)
func.func private @other()
func.func @freed_after_last_use(%c: f32) {
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  call @use(%a) : (memref<8xf32>) -> ()
  call @other() : () -> ()
  return
}

// -----

// Uses through views count: the buffer lives until the view's last use.
// CHECK-LABEL: func.func @through_views
// CHECK:         %[[A:.*]] = memref.alloc() {bufferization.manual_deallocation} : memref<2x4xf32>
// CHECK:         %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK:         call @other()
// CHECK-NEXT:    call @use(%[[V]])
// CHECK-NEXT:    memref.dealloc %[[A]] {bufferization.manual_deallocation}
// CHECK-NEXT:    return
func.func private @use(memref<8xf32>)
func.func private @other()
func.func @through_views(%c: f32) {
  %a = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<2x4xf32>)
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  call @other() : () -> ()
  call @use(%v) : (memref<8xf32>) -> ()
  return
}

// -----

// A use in a nested region keeps the buffer until the op holding it.
// CHECK-LABEL: func.func @nested_use
// CHECK:         %[[A:.*]] = memref.alloc() {bufferization.manual_deallocation}
// CHECK:         scf.if
// CHECK:           call @use(%[[A]])
// CHECK:         }
// CHECK-NEXT:    memref.dealloc %[[A]] {bufferization.manual_deallocation}
// CHECK-NEXT:    call @other()
func.func private @use(memref<8xf32>)
func.func private @other()
func.func @nested_use(%c: f32, %p: i1) {
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  scf.if %p {
    func.call @use(%a) : (memref<8xf32>) -> ()
  }
  call @other() : () -> ()
  return
}

// -----

// Returned (directly or through a view), yielded or stored: left to the
// deallocation pipeline, unchanged.
// CHECK-LABEL: func.func @returned
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @returned(%c: f32) -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  return %a : memref<8xf32>
}

// CHECK-LABEL: func.func @returned_view
// CHECK:         memref.alloc() : memref<2x4xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @returned_view(%c: f32) -> memref<8xf32> {
  %a = memref.alloc() : memref<2x4xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  linalg.fill ins(%c : f32) outs(%v : memref<8xf32>)
  return %v : memref<8xf32>
}

// CHECK-LABEL: func.func @yielded
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @yielded(%c: f32, %p: i1, %b: memref<8xf32>) -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  %r = scf.if %p -> memref<8xf32> {
    scf.yield %a : memref<8xf32>
  } else {
    scf.yield %b : memref<8xf32>
  }
  return %r : memref<8xf32>
}

// CHECK-LABEL: func.func @stored
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func @stored(%slot: memref<memref<8xf32>>) {
  %a = memref.alloc() : memref<8xf32>
  memref.store %a, %slot[] : memref<memref<8xf32>>
  return
}

// An alias made by a call (which may return its argument) that is returned.
// CHECK-LABEL: func.func @returned_through_call
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         return
func.func private @identity(memref<8xf32>) -> memref<8xf32>
func.func @returned_through_call() -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  %r = call @identity(%a) : (memref<8xf32>) -> memref<8xf32>
  return %r : memref<8xf32>
}

// -----

// Allocations freed by their producer or already freed are left alone; an
// unused one is left to the deallocation pipeline.
// CHECK-LABEL: func.func @manual_and_unused
// CHECK:         memref.alloc() {bufferization.manual_deallocation} : memref<8xf32>
// CHECK-NEXT:    memref.dealloc %{{.*}} {bufferization.manual_deallocation}
// CHECK-NEXT:    memref.alloc() : memref<4xf32>
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT:    call @use2(%[[C]])
// CHECK-NEXT:    memref.dealloc %[[C]] : memref<2xf32>
// CHECK-NEXT:    return
func.func private @use2(memref<2xf32>)
func.func @manual_and_unused() {
  %a = memref.alloc() {bufferization.manual_deallocation} : memref<8xf32>
  memref.dealloc %a {bufferization.manual_deallocation} : memref<8xf32>
  %b = memref.alloc() : memref<4xf32>
  // Freed already: not freed twice.
  %c = memref.alloc() : memref<2xf32>
  call @use2(%c) : (memref<2xf32>) -> ()
  memref.dealloc %c : memref<2xf32>
  return
}

// -----

// An allocation of constant dynamic sizes is made static first (the
// canonicalizer would replace it, dropping the marks), then freed.
// CHECK-LABEL: func.func @constant_sizes
// CHECK:         %[[A:.*]] = memref.alloc() {bufferization.manual_deallocation} : memref<19x33xf32>
// CHECK:         %[[C:.*]] = memref.cast %[[A]] : memref<19x33xf32> to memref<?x33xf32>
// CHECK-NEXT:    call @use(%[[C]])
// CHECK-NEXT:    memref.dealloc %[[A]] {bufferization.manual_deallocation}
// CHECK-NEXT:    return
func.func private @use(memref<?x33xf32>)
func.func @constant_sizes() {
  %c19 = arith.constant 19 : index
  %a = memref.alloc(%c19) : memref<?x33xf32>
  call @use(%a) : (memref<?x33xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @dim_of_static
// CHECK:         %[[A:.*]] = memref.alloc() {bufferization.manual_deallocation} : memref<19x33xf32>
// CHECK:         call @use
// CHECK-NEXT:    memref.dealloc %[[A]] {bufferization.manual_deallocation}
func.func @dim_of_static(%s: memref<19x33xf32>) {
  %c0 = arith.constant 0 : index
  %cast = memref.cast %s : memref<19x33xf32> to memref<?x33xf32>
  %n = memref.dim %cast, %c0 : memref<?x33xf32>
  %a = memref.alloc(%n) : memref<?x33xf32>
  call @use(%a) : (memref<?x33xf32>) -> ()
  return
}

// A truly dynamic size stays dynamic.
// CHECK-LABEL: func.func @dynamic_sizes
// CHECK:         %[[A:.*]] = memref.alloc(%{{.*}}) {bufferization.manual_deallocation} : memref<?x33xf32>
// CHECK-NEXT:    call @use(%[[A]])
// CHECK-NEXT:    memref.dealloc %[[A]] {bufferization.manual_deallocation}
func.func @dynamic_sizes(%n: index) {
  %a = memref.alloc(%n) : memref<?x33xf32>
  call @use(%a) : (memref<?x33xf32>) -> ()
  return
}
