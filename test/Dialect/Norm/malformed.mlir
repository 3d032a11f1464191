// RUN: %python %S/../../tools/check-malformed.py norm-opt %s | FileCheck %s
// CHECK: checked {{[0-9]+}} inputs, 0 failures

// Malformed inputs: norm-opt must reject each one with a located
// diagnostic, never by crashing.

// -----

// Missing the `:` type list.
func.func @missing_type_list(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x
  return %y : tensor<8x64xf32>
}

// -----

// Missing `)` after an operand.
func.func @missing_rparen(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weight(%g : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Input cut in the middle of the attribute dictionary.
func.func @cut_mid_attribute(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {epsilon = 1.0e-06 :

// -----

// Input cut in the middle of the functional type.
func.func @cut_mid_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x6

// -----

// `weights` is not an operand keyword.
func.func @weights_keyword(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weights(%g) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// `gamma` is not an operand keyword.
func.func @gamma_keyword(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x gamma(%g) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// rms_norm takes no bias.
func.func @rms_norm_bias(%x: tensor<8x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x weight(%w) bias(%b) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// layer_norm takes no alpha.
func.func @layer_norm_alpha(%x: tensor<8x64xf32>, %a: tensor<f32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x alpha(%a) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// dyt requires alpha.
func.func @dyt_without_alpha(%x: tensor<8x768xf32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  %y = norm.dyt %x weight(%w) : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Empty alpha operand.
func.func @dyt_empty_alpha(%x: tensor<8x768xf32>) -> tensor<8x768xf32> {
  %y = norm.dyt %x alpha() : (tensor<8x768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Operand keywords out of order: residual before weight.
func.func @keyword_order(%x: tensor<8x64xf32>, %w: tensor<64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y, %s = norm.rms_norm %x residual(%r) weight(%w) : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// The same operand keyword twice.
func.func @weight_twice(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weight(%w) weight(%w) : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Fewer operand types than operands.
func.func @too_few_types(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x weight(%w) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// More operand types than operands.
func.func @too_many_types(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Two result types bound to a single name.
func.func @result_count(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// Three results.
func.func @three_results(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y, %s, %t = norm.rms_norm %x residual(%r) : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  return %y : tensor<8x64xf32>
}

// -----

// A plain type instead of a functional type.
func.func @not_functional_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Functional type without `->`.
func.func @missing_arrow(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Unknown epsilon_mode value.
func.func @unknown_epsilon_mode(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {epsilon_mode = #norm<epsilon_mode foo>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// cast_mode without a value.
func.func @empty_cast_mode(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {cast_mode = #norm<cast_mode>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Unknown attribute mnemonic.
func.func @unknown_attr_mnemonic(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {cast_mode = #norm<bogus x>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Unknown type of the norm dialect as compute type.
func.func @unknown_dialect_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {compute_type = !norm.f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Garbage bytes.
func.func @garbage(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x ¤¶§ ~~~ $$ ` \ : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

# Garbage at the top level.
@@@ ### !!! ???

// -----

// Unterminated string.
func.func @unterminated_string(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {note = "abc} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Duplicate attribute.
func.func @duplicate_attribute(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {epsilon = 1.0e-05 : f32, epsilon = 1.0e-06 : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Axis literal that does not fit in i64.
func.func @axis_overflow(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {axis = 99999999999999999999 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// `nan` is not a float literal.
func.func @nan_keyword(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x {epsilon = nan : f32} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: operandSegmentSizes of the wrong length.
func.func @segments_wrong_length(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.layer_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: operandSegmentSizes summing to more than the operands.
func.func @segments_wrong_sum(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: two operands in an optional segment.
func.func @segments_two_weights(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x, %w, %w) <{operandSegmentSizes = array<i32: 1, 2, 0>}> : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: negative segment size.
func.func @segments_negative(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x, %w) <{operandSegmentSizes = array<i32: 1, 2, -1>}> : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: dyt with an empty alpha segment.
func.func @segments_no_alpha(%x: tensor<8x768xf32>, %w: tensor<768xf32>) -> tensor<8x768xf32> {
  %y = "norm.dyt"(%x, %w) <{operandSegmentSizes = array<i32: 1, 0, 1, 0, 0>}> : (tensor<8x768xf32>, tensor<768xf32>) -> tensor<8x768xf32>
  return %y : tensor<8x768xf32>
}

// -----

// Generic form: operandSegmentSizes of i64 elements.
func.func @segments_i64(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i64: 1, 0, 0>}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: operandSegmentSizes missing.
func.func @segments_missing(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.layer_norm"(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: three results.
func.func @generic_three_results(%x: tensor<8x64xf32>, %r: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y:3 = "norm.rms_norm"(%x, %r) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  return %y#0 : tensor<8x64xf32>
}

// -----

// Generic form: no result.
func.func @generic_no_result(%x: tensor<8x64xf32>) {
  "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<8x64xf32>) -> ()
  return
}

// -----

// Generic form: a region attached.
func.func @generic_region(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> ({
  ^bb0:
  }) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: properties that are not a dictionary.
func.func @generic_properties_not_dict(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <3 : i32> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Generic form: an ill-typed property.
func.func @generic_property_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = "norm.rms_norm"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, epsilon = 1 : i32}> : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// memref instead of tensor.
func.func @memref_input(%x: memref<8x64xf32>) -> memref<8x64xf32> {
  %y = norm.rms_norm %x : (memref<8x64xf32>) -> memref<8x64xf32>
  return %y : memref<8x64xf32>
}

// -----

// Unranked input.
func.func @unranked_input(%x: tensor<*xf16>) -> tensor<*xf16> {
  %y = norm.layer_norm %x : (tensor<*xf16>) -> tensor<*xf16>
  return %y : tensor<*xf16>
}

// -----

// Vector input.
func.func @vector_input(%x: vector<8x64xf32>, %a: tensor<f32>) -> vector<8x64xf32> {
  %y = norm.dyt %x alpha(%a) : (vector<8x64xf32>, tensor<f32>) -> vector<8x64xf32>
  return %y : vector<8x64xf32>
}

// -----

// Scalar f32 input.
func.func @scalar_input(%x: f32) -> f32 {
  %y = norm.rms_norm %x : (f32) -> f32
  return %y : f32
}

// -----

// Use of an undefined value.
func.func @undefined_value(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x weight(%nope) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Operand type differs from the value's type.
func.func @operand_type_mismatch(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layer_norm %x : (tensor<8x64xf16>) -> tensor<8x64xf16>
  return %y : tensor<8x64xf32>
}

// -----

// Negative dimension in the tensor type.
func.func @negative_dim(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x : (tensor<-1x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Misspelled op name.
func.func @misspelled_op(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.layernorm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Op without its input.
func.func @missing_input(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Attribute dictionary before the operand keywords.
func.func @attr_dict_first(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %y = norm.rms_norm %x {epsilon = 1.0e-06 : f32} weight(%w) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// A result used with a type other than its own.
func.func @result_use_type(%x: tensor<8x64xf32>) -> tensor<8x64xf16> {
  %y = norm.rms_norm %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf16>
}
