// The normalizations of a small transformer block on a 4x8 f32 activation:
// a pre-attention LayerNorm, then the residual add fused into an RMSNorm
// (norm.rms_norm with `residual` also returns the updated residual stream).
//
// Row 2 sits on a large common offset and row 3 is all zeros: both must give
// finite, accurate results.
//
// Run (from the repository root, after building; scripts/test.sh runs it as
// written):
//
//   build/bin/norm-opt examples/block.mlir --norm-cpu-pipeline \
//     | /usr/lib/llvm-22/bin/mlir-runner -e main -entry-point-result=void \
//         -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so

func.func @main() {
  %x = arith.constant dense<[
    [-1.5, -0.75, 0.0, 0.25, 0.5, 1.0, 2.0, 3.5],
    [0.3, -2.1, 1.7, -0.4, 0.9, -1.3, 2.6, -0.2],
    [1000.1, 999.9, 1000.3, 999.7, 1000.0, 1000.2, 999.8, 1000.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<4x8xf32>
  %resid = arith.constant dense<[
    [0.5, 0.5, 0.5, 0.5, -0.5, -0.5, -0.5, -0.5],
    [1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0],
    [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0],
    [-0.1, 0.2, -0.3, 0.4, -0.5, 0.6, -0.7, 0.8]]> : tensor<4x8xf32>
  %gamma = arith.constant dense<[1.0, 0.5, 2.0, 1.5, 1.0, 0.75, 1.25, 1.0]> : tensor<8xf32>
  %beta = arith.constant dense<[0.0, 0.1, -0.1, 0.2, -0.2, 0.0, 0.05, -0.05]> : tensor<8xf32>
  %w = arith.constant dense<[1.0, 1.1, 0.9, 1.0, 1.2, 0.8, 1.0, 1.05]> : tensor<8xf32>

  // Pre-attention LayerNorm over the last dimension.
  %h = norm.layer_norm %x weight(%gamma) bias(%beta) {epsilon = 1.0e-05 : f32}
       : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>

  // Residual add + RMSNorm: %s = %h + %resid, %y = rms_norm(%s) * %w.
  %y, %s = norm.rms_norm %h weight(%w) residual(%resid) {epsilon = 1.0e-06 : f32}
       : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)

  %hu = tensor.cast %h : tensor<4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%hu) : (tensor<*xf32>) -> ()
  %yu = tensor.cast %y : tensor<4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%yu) : (tensor<*xf32>) -> ()
  %su = tensor.cast %s : tensor<4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}
