// RUN: norm-opt %s -norm-outline-kernels -split-input-file | FileCheck %s
// RUN: norm-opt %s "-norm-outline-kernels=min-count=1" -split-input-file | FileCheck %s --check-prefix=ONE

// Two equivalent norm ops (operands differ, op, attributes and types do
// not): one private function, called twice, each call with an empty
// destination tensor the function materializes y into.
// CHECK-LABEL: func.func @two_rms_norms(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32>, %[[W0:.*]]: tensor<64xf32>, %[[W1:.*]]: tensor<64xf32>)
// CHECK:         %[[D0:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK:         %[[A:.*]] = call @norm_kernel_rms_norm(%[[X]], %[[W0]], %[[D0]]) : (tensor<8x64xf32>, tensor<64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
// CHECK:         %[[D1:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK:         %[[B:.*]] = call @norm_kernel_rms_norm(%[[A]], %[[W1]], %[[D1]])
// CHECK:         return %[[B]]
// CHECK-LABEL: func.func private @norm_kernel_rms_norm(
// CHECK-SAME:      %[[KX:.*]]: tensor<8x64xf32>, %[[KW:.*]]: tensor<64xf32>, %[[KD:.*]]: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {norm.kernel}
// CHECK:         %[[Y:.*]] = norm.rms_norm %[[KX]] weight(%[[KW]]) {epsilon = 9.99999974E-6 : f32}
// CHECK:         %[[M:.*]] = bufferization.materialize_in_destination %[[Y]] in %[[KD]]
// CHECK:         return %[[M]]
// CHECK-NOT:   func.func private
func.func @two_rms_norms(%x: tensor<8x64xf32>, %w0: tensor<64xf32>, %w1: tensor<64xf32>) -> tensor<8x64xf32> {
  %a = norm.rms_norm %x weight(%w0) {epsilon = 1.0e-5 : f32} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %b = norm.rms_norm %a weight(%w1) {epsilon = 1.0e-5 : f32} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %b : tensor<8x64xf32>
}

// -----

// Near misses: another epsilon, another type, another op. No group has two
// ops, so nothing is outlined (with min-count=1, each op gets its own
// function).
// CHECK-LABEL: func.func @not_equivalent(
// CHECK-NOT:     call
// CHECK:         norm.rms_norm %{{.*}} {epsilon = 9.99999974E-6 : f32} : (tensor<8x64xf32>)
// CHECK:         norm.rms_norm %{{.*}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
// CHECK:         norm.rms_norm %{{.*}} : (tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK:         norm.layer_norm
// CHECK-NOT:   func.func private
// ONE-LABEL:   func.func @not_equivalent(
// ONE-COUNT-4:   call @norm_kernel_
// ONE:         func.func private @norm_kernel_rms_norm(
// ONE:         func.func private @norm_kernel_rms_norm_0(
// ONE:         func.func private @norm_kernel_rms_norm_1(
// ONE:         func.func private @norm_kernel_layer_norm(
func.func @not_equivalent(%x: tensor<8x64xf32>, %z: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>) {
  %a = norm.rms_norm %x {epsilon = 1.0e-5 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %b = norm.rms_norm %x {epsilon = 1.0e-6 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %c = norm.rms_norm %z : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %d = norm.layer_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %a, %b, %c, %d : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>
}

// -----

// Fused residual norms (two results, two destinations) and matmuls of one
// shape with their fills: one function each; the caller keeps the empty
// tensors, reshapes and the add.
// CHECK-LABEL: func.func @blocks(
// CHECK-SAME:      %[[X:.*]]: tensor<8x64xf32>, %[[R:.*]]: tensor<8x64xf32>, %[[W0:.*]]: tensor<64x64xf32>, %[[W1:.*]]: tensor<64x64xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[DY:.*]] = tensor.empty()
// CHECK:         %[[DS:.*]] = tensor.empty()
// CHECK:         %[[Y0:.*]]:2 = call @norm_kernel_rms_norm(%[[X]], %[[R]], %[[DY]], %[[DS]]) : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         %[[E0:.*]] = tensor.empty()
// CHECK:         %[[M0:.*]] = call @norm_kernel_matmul(%[[Y0]]#0, %[[W0]], %[[ZERO]], %[[E0]]) : (tensor<8x64xf32>, tensor<64x64xf32>, f32, tensor<8x64xf32>) -> tensor<8x64xf32>
// CHECK:         %[[Y1:.*]]:2 = call @norm_kernel_rms_norm(%[[Y0]]#1, %[[M0]],
// CHECK:         %[[M1:.*]] = call @norm_kernel_matmul(%[[Y1]]#0, %[[W1]], %[[ZERO]],
// CHECK:         return %[[Y1]]#1, %[[M1]]
// CHECK-LABEL: func.func private @norm_kernel_rms_norm(
// CHECK:         %{{.*}}, %{{.*}} = norm.rms_norm %{{.*}} residual(%{{.*}})
// CHECK-COUNT-2: bufferization.materialize_in_destination
// CHECK-LABEL: func.func private @norm_kernel_matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<8x64xf32>, %[[B:.*]]: tensor<64x64xf32>, %[[V:.*]]: f32, %[[E:.*]]: tensor<8x64xf32>) -> tensor<8x64xf32> attributes {norm.kernel}
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<8x64xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<8x64xf32>, tensor<64x64xf32>) outs(%[[F]] : tensor<8x64xf32>)
// CHECK-NOT:     materialize_in_destination
// CHECK:         return %[[MM]]
func.func @blocks(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %y0, %s0 = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  %e0 = tensor.empty() : tensor<8x64xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %m0 = linalg.matmul ins(%y0, %w0 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%f0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y1, %s1 = norm.rms_norm %s0 residual(%m0) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  %e1 = tensor.empty() : tensor<8x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %m1 = linalg.matmul ins(%y1, %w1 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%f1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %s1, %m1 : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// A norm whose y feeds norm.quantize stays with it (the CPU lowering fuses
// the pair), as does that quantize; the two plain norms are outlined.
// CHECK-LABEL: func.func @quantized(
// CHECK:         %[[Y:.*]] = norm.rms_norm %{{.*}} : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
// CHECK:         norm.quantize %[[Y]]
// CHECK:         %[[Z:.*]] = norm.rms_norm %{{.*}} : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
// CHECK:         norm.quantize %[[Z]]
// CHECK:         call @norm_kernel_rms_norm(%{{.*}}, %{{.*}}) : (tensor<8x64xbf16>, tensor<8x64xbf16>)
// CHECK:         call @norm_kernel_rms_norm(
// CHECK:         func.func private @norm_kernel_rms_norm(
// CHECK-NOT:     norm.quantize
// CHECK:         return
func.func @quantized(%x: tensor<8x64xbf16>, %s: tensor<f32>) -> (tensor<8x64xf8E4M3FN>, tensor<8x64xf8E4M3FN>, tensor<8x64xbf16>, tensor<8x64xbf16>) {
  %y = norm.rms_norm %x : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %q = norm.quantize %y scale(%s) : (tensor<8x64xbf16>, tensor<f32>) -> tensor<8x64xf8E4M3FN>
  %z = norm.rms_norm %x : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %p = norm.quantize %z scale(%s) : (tensor<8x64xbf16>, tensor<f32>) -> tensor<8x64xf8E4M3FN>
  %a = norm.rms_norm %x : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %b = norm.rms_norm %a : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  return %q, %p, %a, %b : tensor<8x64xf8E4M3FN>, tensor<8x64xf8E4M3FN>, tensor<8x64xbf16>, tensor<8x64xbf16>
}

// -----

// Ops nested in another op's region are not outlined; generics whose body
// scales the product by a value from above, or that are element-wise, are
// not contractions.
// CHECK-LABEL: func.func @declined(
// CHECK-NOT:     call
// CHECK:         scf.for
// CHECK:           norm.rms_norm
// CHECK:           norm.rms_norm
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-NOT:   func.func private
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @declined(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %c: tensor<8x64xf32>, %s: f32) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l = scf.for %i = %c0 to %c2 step %c1 iter_args(%t = %x) -> (tensor<8x64xf32>) {
    %a = norm.rms_norm %t : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %b = norm.rms_norm %a : (tensor<8x64xf32>) -> tensor<8x64xf32>
    scf.yield %b : tensor<8x64xf32>
  }
  %m0 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %s : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %m1 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%m0, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %s : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %e0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x64xf32>
  %e1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e0 : tensor<8x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x64xf32>
  return %l, %m0, %m1, %e0, %e1 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// The function name is made unique in the module; a generic contraction
// with a self-contained body is outlined as the named one is.
// CHECK-LABEL: func.func @norm_kernel_generic(
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @names(
// CHECK:         call @norm_kernel_generic_0(
// CHECK:         call @norm_kernel_generic_0(
// CHECK-LABEL: func.func private @norm_kernel_generic_0(
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "reduction"]
#mA2 = affine_map<(m, n, k) -> (m, k)>
#mB2 = affine_map<(m, n, k) -> (k, n)>
#mC2 = affine_map<(m, n, k) -> (m, n)>
func.func @norm_kernel_generic(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c = tensor.empty() : tensor<8x64xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  return %n : tensor<8x64xf32>
}
func.func @names(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %c: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %m0 = linalg.generic {indexing_maps = [#mA2, #mB2, #mC2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %m1 = linalg.generic {indexing_maps = [#mA2, #mB2, #mC2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%m0, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%c : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  return %m0, %m1 : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// Dynamic shapes: the destinations get the reified sizes of the results.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:      %[[X:.*]]: tensor<?x64xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK:         %[[D:.*]] = tensor.empty(%[[N]]) : tensor<?x64xf32>
// CHECK:         %[[A:.*]] = call @norm_kernel_layer_norm(%[[X]], %[[D]]) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK:         tensor.dim %[[A]]
// CHECK:         call @norm_kernel_layer_norm(%[[A]],
// CHECK-LABEL: func.func private @norm_kernel_layer_norm(
// CHECK-SAME:      %{{.*}}: tensor<?x64xf32>, %{{.*}}: tensor<?x64xf32>) -> tensor<?x64xf32>
func.func @dynamic(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %a = norm.layer_norm %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %b = norm.layer_norm %a : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %b : tensor<?x64xf32>
}
