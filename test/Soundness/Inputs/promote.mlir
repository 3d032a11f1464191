// Input of promote-f64.test (not a test itself).
func.func @dyt_grad_like(%x: tensor<4xf32>, %a: f32, %n: i32) -> (tensor<4xf32>, i32) {
  %ninf = arith.constant 0xFF800000 : f32
  %mask = arith.constant 0x7FFFFFFF : i32
  %one = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %a, %in : f32
    %t = math.tanh %s : f32
    %t2 = arith.mulf %t, %t : f32
    %d = arith.subf %one, %t2 : f32
    %r = arith.truncf %d : f32 to bf16
    %e = arith.extf %r : bf16 to f32
    %m = arith.maximumf %e, %ninf : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %k = arith.andi %n, %mask : i32
  return %1, %k : tensor<4xf32>, i32
}

func.func @bf16_only(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %1 = math.tanh %x : tensor<4xbf16>
  return %1 : tensor<4xbf16>
}
