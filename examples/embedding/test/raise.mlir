// norm-raise turns a decomposed RMSNorm (named linalg ops, as hand-written
// or frontend IR has it) into norm.rms_norm.
// RUN: norm-opt %s --norm-raise | FileCheck %s

// CHECK-LABEL: func.func @rms_norm(
//  CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>
//       CHECK: %[[Y:.*]] = norm.rms_norm %[[X]] weight(%[[W]]) {epsilon = 9.99999974E-6 : f32}
//  CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 0.125 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sq = linalg.square ins(%x : tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sum = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %scale = linalg.fill ins(%inv_n : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ms = linalg.mul ins(%scale, %sum : tensor<4xf32>, tensor<4xf32>) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<4xf32>
  %e = arith.addf %eps, %ms : tensor<4xf32>
  %r = linalg.rsqrt ins(%e : tensor<4xf32>) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %r_b = linalg.broadcast ins(%r : tensor<4xf32>) outs(%full : tensor<4x8xf32>) dimensions = [1]
  %n = linalg.mul ins(%r_b, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w_b = linalg.broadcast ins(%w : tensor<8xf32>) outs(%full : tensor<4x8xf32>) dimensions = [0]
  %y = linalg.mul ins(%n, %w_b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
