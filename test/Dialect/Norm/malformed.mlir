// RUN: %python %S/../../tools/check-malformed.py norm-opt %s | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: checked 60 inputs, 0 failures

// Malformed inputs: norm-opt must reject each one with a located
// diagnostic, never by crashing. Each chunk's EXPECT-ERROR text must occur
// in the first error message (test/tools/check-malformed.py).

// -----

// Missing the `:` type list.
// EXPECT-ERROR: expected ':'
func.func @missing_type_list(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x
  return %y : tensor<8x64xf32>
}

// -----

// Missing `)` after an operand.
// EXPECT-ERROR: expected ')'
func.func @missing_rparen(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weight(%g : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Input cut in the middle of the attribute dictionary.
// EXPECT-ERROR: expected non-function type
func.func @cut_mid_attribute(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {epsilon = 1.0e-06 :

// -----

// Input cut in the middle of the functional type.
// EXPECT-ERROR: expected 'x' in dimension list
func.func @cut_mid_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x6

// -----

// `weights` is not an operand keyword.
// EXPECT-ERROR: expected ':'
func.func @weights_keyword(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weights(%g) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// `gamma` is not an operand keyword.
// EXPECT-ERROR: expected ':'
func.func @gamma_keyword(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x gamma(%g) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// rms_norm takes no bias.
// EXPECT-ERROR: expected ':'
func.func @rms_norm_bias(%x: tensor<8x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x weight(%w) bias(%b) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// layer_norm takes no alpha.
// EXPECT-ERROR: expected ':'
func.func @layer_norm_alpha(%x: tensor<8x64xf32>, %a: tensor<f32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x alpha(%a) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// dyt requires alpha.
// EXPECT-ERROR: custom op 'norm.dyt' expected 'alpha'
func.func @dyt_without_alpha(%x: tensor<8x768xf32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  %y = norm.dyt %x weight(%w) : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Empty alpha operand.
// EXPECT-ERROR: expected SSA operand
func.func @dyt_empty_alpha(%x: tensor<8x768xf32>) -> tensor<8x768xf32> {
  %y = norm.dyt %x alpha() : (tensor<8x768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Operand keywords out of order: residual before weight.
// EXPECT-ERROR: expected ':'
func.func @keyword_order(%x: tensor<8x64xf32>, %w: tensor<64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y, %s = norm.rms_norm %x residual(%r) weight(%w) : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// The same operand keyword twice.
// EXPECT-ERROR: expected ':'
func.func @weight_twice(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weight(%w) weight(%w) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Fewer operand types than operands.
// EXPECT-ERROR: custom op 'norm.rms_norm' number of operands and types do not match: got 2 operands and 1 types
func.func @too_few_types(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// More operand types than operands.
// EXPECT-ERROR: custom op 'norm.layer_norm' number of operands and types do not match: got 1 operands and 3 types
func.func @too_many_types(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Two result types bound to a single name.
// EXPECT-ERROR: operation defines 2 results but was provided 1 to bind
func.func @result_count(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// Three results.
// EXPECT-ERROR: 'norm.rms_norm' op expects 2 results (y, residual_out), got 3
func.func @three_results(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y, %s, %t = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// A plain type instead of a functional type.
// EXPECT-ERROR: custom op 'norm.rms_norm' invalid kind of type specified: expected builtin.function, but found 'tensor<8x64xf32>'
func.func @not_functional_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Functional type without `->`.
// EXPECT-ERROR: expected '->' in function type
func.func @missing_arrow(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Unknown epsilon_mode value.
// EXPECT-ERROR: expected ::mlir::norm::EpsilonMode to be one of: inside_sqrt, outside_sqrt, clamp
func.func @unknown_epsilon_mode(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {epsilon_mode = #norm<epsilon_mode foo>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// cast_mode without a value.
// EXPECT-ERROR: expected valid keyword or string
func.func @empty_cast_mode(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {cast_mode = #norm<cast_mode>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Unknown attribute mnemonic.
// EXPECT-ERROR: unknown attribute `bogus` in dialect `norm`
func.func @unknown_attr_mnemonic(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {cast_mode = #norm<bogus x>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Unknown type of the norm dialect as compute type.
// EXPECT-ERROR: dialect 'norm' provides no type parsing hook
func.func @unknown_dialect_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {compute_type = !norm.f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Garbage bytes.
// EXPECT-ERROR: unexpected character
func.func @garbage(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x ¤¶§ ~~~ $$ ` \ : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// EXPECT-ERROR: invalid attribute name
# Garbage at the top level.
@@@ ### !!! ???

// -----

// Unterminated string.
// EXPECT-ERROR: expected '"' in string literal
func.func @unterminated_string(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {note = "abc} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Duplicate attribute.
// EXPECT-ERROR: duplicate key 'epsilon' in dictionary attribute
func.func @duplicate_attribute(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {epsilon = 1.0e-05 : f32, epsilon = 1.0e-06 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Axis literal that does not fit in i64.
// EXPECT-ERROR: integer constant out of range for attribute
func.func @axis_overflow(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {axis = 99999999999999999999 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// `nan` is not a float literal.
// EXPECT-ERROR: expected attribute value
func.func @nan_keyword(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {epsilon = nan : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: operandSegmentSizes of the wrong length.
// EXPECT-ERROR: invalid properties {operandSegmentSizes = array<i32: 1, 0>} for op norm.layer_norm: size mismatch in attribute conversion: 2 vs 4
func.func @segments_wrong_length(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.layer_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: operandSegmentSizes summing to more than the operands.
// EXPECT-ERROR: 'norm.rms_norm' op operand count (1) does not match with the total size (3) specified in attribute 'operandSegmentSizes'
func.func @segments_wrong_sum(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: two operands in an optional segment.
// EXPECT-ERROR: 'norm.rms_norm' op operand group starting at #1 requires 0 or 1 element, but found 2
func.func @segments_two_weights(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x, %w, %w) <{operandSegmentSizes = array<i32: 1, 2, 0>}> : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: negative segment size.
// EXPECT-ERROR: 'norm.rms_norm' op 'operandSegmentSizes' attribute cannot have negative elements
func.func @segments_negative(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x, %w) <{operandSegmentSizes = array<i32: 1, 2, -1>}> : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: dyt with an empty alpha segment.
// EXPECT-ERROR: 'norm.dyt' op operand segment #1 must hold exactly one value, got 0
func.func @segments_no_alpha(%x: tensor<8x768xf32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  %y = "norm.dyt"(%x, %w) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}> : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Generic form: operandSegmentSizes of i64 elements.
// EXPECT-ERROR: invalid properties {operandSegmentSizes = array<i64: 1, 0, 0>} for op norm.rms_norm: expected DenseI32ArrayAttr for key `value`
func.func @segments_i64(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i64: 1, 0, 0>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: operandSegmentSizes missing.
// EXPECT-ERROR: 'norm.layer_norm' op operand count (1) does not match with the total size (0) specified in attribute 'operandSegmentSizes'
func.func @segments_missing(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.layer_norm"(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: three results.
// EXPECT-ERROR: 'norm.rms_norm' op expects 2 results (y, residual_out), got 3
func.func @generic_three_results(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y:3 = "norm.rms_norm"(%x, %r) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  return %y#0 : tensor<8x64xf32>
}

// -----

// Generic form: no result.
// EXPECT-ERROR: 'norm.rms_norm' op expected 1 or more results
func.func @generic_no_result(%x: tensor<8x64xf32>) {
  "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<8x64xf32>) -> ()
  return
}

// -----

// Generic form: a region attached.
// EXPECT-ERROR: 'norm.rms_norm' op requires zero regions
func.func @generic_region(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> ({
  ^bb0:
  }) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: properties that are not a dictionary.
// EXPECT-ERROR: invalid properties 3 : i32 for op norm.rms_norm: expected DictionaryAttr to set properties
func.func @generic_properties_not_dict(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <3 : i32> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: an ill-typed property.
// EXPECT-ERROR: invalid properties {epsilon = 1 : i32, operandSegmentSizes = array<i32: 1, 0, 0>} for op norm.rms_norm: Invalid attribute `epsilon` in property conversion: 1 : i32
func.func @generic_property_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, epsilon = 1 : i32}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// memref instead of tensor.
// EXPECT-ERROR: 'norm.rms_norm' op operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'memref<8x64xf32>'
func.func @memref_input(%x: memref<8x64xf32>) -> memref<8x64xf32> {
  %y = norm.rms_norm %x : (memref<8x64xf32>) -> memref<8x64xf32>
  return %y : memref<8x64xf32>
}

// -----

// Unranked input.
// EXPECT-ERROR: 'norm.layer_norm' op operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'tensor<*xf16>'
func.func @unranked_input(%x: tensor<*xf16>) -> tensor<*xf16> {
  %y = norm.layer_norm %x : (tensor<*xf16>) -> tensor<*xf16>
  return %y : tensor<*xf16>
}

// -----

// Vector input.
// EXPECT-ERROR: 'norm.dyt' op operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'vector<8x64xf32>'
func.func @vector_input(%x: vector<8x64xf32>, %a: tensor<f32>) -> vector<8x64xf32> {
  %y = norm.dyt %x alpha(%a) : (vector<8x64xf32>, tensor<f32>) -> vector<8x64xf32>
  return %y : vector<8x64xf32>
}

// -----

// Scalar f32 input.
// EXPECT-ERROR: 'norm.rms_norm' op operand #0 must be 'x': ranked tensor of rank >= 1 of f16, bf16, f32 or f64, but got 'f32'
func.func @scalar_input(%x: f32) -> f32 {
  %y = norm.rms_norm %x : (f32) -> f32
  return %y : f32
}

// -----

// Use of an undefined value.
// EXPECT-ERROR: use of undeclared SSA value name
func.func @undefined_value(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weight(%nope) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Operand type differs from the value's type.
// EXPECT-ERROR: use of value '%x' expects different type than prior uses: 'tensor<8x64xf16>' vs 'tensor<8x64xf32>'
func.func @operand_type_mismatch(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x : (tensor<8x64xf16>) -> tensor<8x64xf16>
  return %y : tensor<8x64xf32>
}

// -----

// Negative dimension in the tensor type.
// EXPECT-ERROR: expected non-function type
func.func @negative_dim(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : (tensor<-1x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Misspelled op name.
// EXPECT-ERROR: custom op 'norm.layernorm' is unknown
func.func @misspelled_op(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layernorm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Op without its input.
// EXPECT-ERROR: expected SSA operand
func.func @missing_input(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Attribute dictionary before the operand keywords.
// EXPECT-ERROR: expected ':'
func.func @attr_dict_first(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {epsilon = 1.0e-06 : f32} weight(%w) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// A result used with a type other than its own.
// EXPECT-ERROR: use of value '%y' expects different type than prior uses: 'tensor<8x64xf16>' vs 'tensor<8x64xf32>'
func.func @result_use_type(%x: tensor<8x64xf32>) -> tensor<8x64xf16> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf16>
}

// -----

// Gradient op, generic form without its statistics operand.
// EXPECT-ERROR: 'norm.rms_norm_grad' op expected 3 or more operands, but found 2
func.func @grad_missing_operand(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %dx = "norm.rms_norm_grad"(%dy, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// Gradient op, generic form with no result.
// EXPECT-ERROR: 'norm.dyt_grad' op expects 2 results (dx, dalpha), got 0
func.func @grad_no_result(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<f32>) {
  "norm.dyt_grad"(%dy, %x, %a) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> ()
  return
}

// -----

// Gradient op with unranked inputs (dy is checked first).
// EXPECT-ERROR: 'norm.layer_norm_grad' op operand #0 must be 'dy': ranked tensor of f16, bf16, f32 or f64, but got 'tensor<*xf32>'
func.func @grad_unranked(%dy: tensor<*xf32>, %x: tensor<*xf32>, %m: tensor<4xf32>, %r: tensor<4xf32>) -> tensor<*xf32> {
  %dx = norm.layer_norm_grad %dy, %x mean(%m) rstd(%r) : (tensor<*xf32>, tensor<*xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %dx : tensor<*xf32>
}

// -----

// Gradient op, has_bias with a value.
// EXPECT-ERROR: has_bias
func.func @grad_has_bias_value(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<f32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>) {
  %dx, %db, %da = "norm.dyt_grad"(%dy, %x, %a) <{has_bias = 1 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>)
  return %dx, %db, %da : tensor<4x8xf32>, tensor<8xf32>, tensor<f32>
}

// -----

// Gradient op, statistics that are not tensors.
// EXPECT-ERROR: 'norm.rms_norm_grad' op operand #2 must be 'rstd': ranked tensor of f16, bf16, f32 or f64, but got 'f32'
func.func @grad_scalar_stats(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %r: f32) -> tensor<4x8xf32> {
  %dx = norm.rms_norm_grad %dy, %x rstd(%r) : (tensor<4x8xf32>, tensor<4x8xf32>, f32) -> tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// Gradient op, weight that is not a tensor.
// EXPECT-ERROR: 'norm.dyt_grad' op operand #3 must be 'weight': ranked tensor of f16, bf16, f32 or f64, but got 'f32'
func.func @grad_scalar_weight(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %a: tensor<f32>, %w: f32) -> (tensor<4x8xf32>, f32, tensor<f32>) {
  %dx, %dw, %da = norm.dyt_grad %dy, %x alpha(%a) weight(%w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<f32>, f32) -> (tensor<4x8xf32>, f32, tensor<f32>)
  return %dx, %dw, %da : tensor<4x8xf32>, f32, tensor<f32>
}

// -----

// return_stats with a value.
// EXPECT-ERROR: return_stats
func.func @stats_with_value(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y, %r = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, return_stats = 3 : i64}> : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// Statistics of an unranked type.
// EXPECT-ERROR: 'norm.layer_norm' op result #1 must be variadic of 'residual_out', 'mean' or 'rstd': ranked tensor of f16, bf16, f32 or f64, but got 'tensor<*xf32>'
func.func @stats_unranked(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y, %m, %r = norm.layer_norm %x {return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<*xf32>, tensor<4xf32>)
  return %y : tensor<4x8xf32>
}

// -----

// Statistics that are not tensors.
// EXPECT-ERROR: 'norm.rms_norm' op result #1 must be variadic of 'residual_out', 'mean' or 'rstd': ranked tensor of f16, bf16, f32 or f64, but got 'f32'
func.func @stats_scalar(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y, %r = norm.rms_norm %x {return_stats} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, f32)
  return %y : tensor<4x8xf32>
}
