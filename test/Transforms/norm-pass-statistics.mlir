// --norm-pass-statistics: the statistics of the norm passes, counted in any
// LLVM build (-mlir-pass-statistics reports none: see docs/Passes.md), in
// the list format of -mlir-pass-statistics. The counts are summed over the
// pass clones of the threads, so they do not depend on threading.
//
// Two pre-norm blocks and a final norm from torch-mlir: five RMSNorms
// raised, four residual adds fused, nothing declined.
// RUN: norm-opt %S/Inputs/torch-block-linalg.mlir --norm-raise --norm-fuse-residual --norm-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: norm-opt %S/Inputs/torch-block-linalg.mlir --pass-pipeline="builtin.module(func.func(norm-raise,norm-fuse-residual))" --norm-pass-statistics -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCK
//
// This file: one LayerNorm and one RMSNorm raised, one chain declined (a
// bias on an RMSNorm); the RMSNorm fused into its matmul, one norm op
// declined (it normalizes several dims). Four functions, so that several
// threads run clones of the passes.
// RUN: norm-opt %s --norm-raise "--norm-fuse-matmul=tile-rows=2" --norm-pass-statistics -o /dev/null 2>&1 | FileCheck %s
// RUN: norm-opt %s --norm-raise "--norm-fuse-matmul=tile-rows=2" --norm-pass-statistics -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s
//
// Without the flag, no report.
// RUN: norm-opt %s --norm-raise -o /dev/null 2>&1 | count 0

// BLOCK:      ... Pass statistics report ...
// BLOCK:        NormFuseResidualPass
// BLOCK-NEXT:     (S) 0 declined - Number of add-fed norm ops left unchanged
// BLOCK-NEXT:     (S) 4 fused    - Number of residual adds fused
// BLOCK-NEXT:   NormRaisePass
// BLOCK-NEXT:     (S) 0 declined          - Number of normalization candidates left unchanged
// BLOCK-NEXT:     (S) 0 declined-grad     - Number of gradient candidates left unchanged
// BLOCK-NEXT:     (S) 0 declined-quantize - Number of quantization candidates left unchanged
// BLOCK-NEXT:     (S) 0 raised-dyt        - Number of chains raised to norm.dyt
// BLOCK-NEXT:     (S) 0 raised-grad       - Number of gradients raised to norm.*_grad ops
// BLOCK-NEXT:     (S) 0 raised-layer-norm - Number of chains raised to norm.layer_norm
// BLOCK-NEXT:     (S) 0 raised-quantize   - Number of quantizations raised to norm.quantize
// BLOCK-NEXT:     (S) 5 raised-rms-norm   - Number of chains raised to norm.rms_norm
// BLOCK-EMPTY:

// CHECK:      ===-------------------------------------------------------------------------===
// CHECK-NEXT:                          ... Pass statistics report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT:   NormFuseMatmulPass
// CHECK-NEXT:     (S) 1 declined       - Number of candidates left unchanged
// CHECK-NEXT:     (S) 0 fused-epilogue - Number of matmul producers fused into a norm op
// CHECK-NEXT:     (S) 1 fused-prologue - Number of norm ops fused into their matmul consumer
// CHECK-NEXT:   NormRaisePass
// CHECK-NEXT:     (S) 1 declined          - Number of normalization candidates left unchanged
// CHECK-NEXT:     (S) 0 declined-grad     - Number of gradient candidates left unchanged
// CHECK-NEXT:     (S) 0 declined-quantize - Number of quantization candidates left unchanged
// CHECK-NEXT:     (S) 0 raised-dyt        - Number of chains raised to norm.dyt
// CHECK-NEXT:     (S) 0 raised-grad       - Number of gradients raised to norm.*_grad ops
// CHECK-NEXT:     (S) 1 raised-layer-norm - Number of chains raised to norm.layer_norm
// CHECK-NEXT:     (S) 0 raised-quantize   - Number of quantizations raised to norm.quantize
// CHECK-NEXT:     (S) 1 raised-rms-norm   - Number of chains raised to norm.rms_norm
// CHECK-EMPTY:

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @layer_norm_named_ops(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %row = tensor.empty() : tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %count = linalg.fill ins(%n : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %mean = linalg.div ins(%sum, %count : tensor<4xf32>, tensor<4xf32>) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %mean_b = linalg.broadcast ins(%mean : tensor<4xf32>) outs(%full : tensor<4x8xf32>) dimensions = [1]
  %c = linalg.sub ins(%x, %mean_b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = linalg.mul ins(%c, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ssum = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %var = linalg.div ins(%ssum, %count : tensor<4xf32>, tensor<4xf32>) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %eps_t = linalg.fill ins(%eps : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ve = linalg.add ins(%var, %eps_t : tensor<4xf32>, tensor<4xf32>) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %rstd = linalg.rsqrt ins(%ve : tensor<4xf32>) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %rstd_b = linalg.broadcast ins(%rstd : tensor<4xf32>) outs(%full : tensor<4x8xf32>) dimensions = [1]
  %nrm = linalg.mul ins(%c, %rstd_b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  %w_b = linalg.broadcast ins(%w : tensor<8xf32>) outs(%full : tensor<4x8xf32>) dimensions = [0]
  %y0 = linalg.mul ins(%nrm, %w_b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b_b = linalg.broadcast ins(%b : tensor<8xf32>) outs(%full : tensor<4x8xf32>) dimensions = [0]
  %y = linalg.add ins(%y0, %b_b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func @rms_norm_matmul(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %m: tensor<8x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %wv: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ow = arith.mulf %o, %wv : f32
    linalg.yield %ow : f32
  } -> tensor<4x8xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %o : tensor<4x16xf32>
}

func.func @neg_rms_norm_bias(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %row = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%row : tensor<4xf32>) -> tensor<4xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %full = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w, %b : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>) outs(%full : tensor<4x8xf32>) {
  ^bb0(%v: f32, %s: f32, %wv: f32, %bv: f32, %out: f32):
    %ms = arith.divf %s, %n : f32
    %e = arith.addf %ms, %eps : f32
    %r = math.rsqrt %e : f32
    %o = arith.mulf %v, %r : f32
    %ow = arith.mulf %o, %wv : f32
    %ob = arith.addf %ow, %bv : f32
    linalg.yield %ob : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func @prologue_several_dims(%x: tensor<4x8xf32>, %m: tensor<8x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = norm.rms_norm %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%y, %m : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %o : tensor<4x16xf32>
}
