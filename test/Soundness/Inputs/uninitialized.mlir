#id = affine_map<(d0) -> (d0)>
// An empty tensor read as an input of a generic that uses it.
func.func @reads_input(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %o = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %e : tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
// -----
#id = affine_map<(d0) -> (d0)>
// An empty tensor as the input of a named op.
func.func @reads_named(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %o = tensor.empty() : tensor<4xf32>
  %r = linalg.copy ins(%e : tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
// -----
#id = affine_map<(d0) -> (d0)>
// An empty init whose block argument the body uses.
func.func @reads_init(%x: tensor<4xf32>) -> tensor<4xf32> {
  %o = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
// -----
#id = affine_map<(d0) -> (d0)>
// Defined: the empty input's block argument is unused, the empty init is
// only written, the filled one is read.
func.func @defined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %o = tensor.empty() : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%x, %e, %f : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %g: f32, %c: f32):
    %s = arith.addf %a, %g : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
