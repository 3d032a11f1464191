"""norm_mlir.compile and norm_mlir.verify: parse, verify, transform."""

import pytest

import norm_mlir

RMS = """
func.func @f(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = norm.rms_norm %x weight(%w) {epsilon = 1.0e-06 : f32}
       : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
"""


def test_round_trip_drops_default_attributes():
    text = norm_mlir.compile(RMS)
    assert "norm.rms_norm %arg0 weight(%arg1) : (tensor<?x64xf32>" in text
    assert "epsilon" not in text
    assert norm_mlir.compile(text) == text


@pytest.mark.parametrize("pipeline", [
    "norm-to-linalg",
    "func.func(norm-to-linalg)",
    "builtin.module(func.func(norm-to-linalg),canonicalize)",
    "  builtin.module(norm-to-linalg)  ",
])
def test_pipeline_forms(pipeline):
    text = norm_mlir.compile(RMS, pipeline=pipeline)
    assert "norm.rms_norm" not in text
    assert "linalg.generic" in text


def test_cpu_pipeline_reaches_llvm():
    text = norm_mlir.compile(RMS, pipeline="norm-cpu-pipeline")
    assert "llvm.func @f" in text
    assert "norm." not in text


def test_verify_accepts_valid_module():
    assert norm_mlir.verify(RMS) is None


def test_parse_error_carries_location_and_text():
    with pytest.raises(norm_mlir.MLIRError) as info:
        norm_mlir.compile("func.func @f( {")
    message = str(info.value)
    assert '"<source>":1:14' in message
    assert "expected" in message


def test_verifier_error_carries_diagnostic():
    bad = RMS.replace("tensor<64xf32>", "tensor<32xf32>")
    with pytest.raises(norm_mlir.MLIRError) as info:
        norm_mlir.verify(bad)
    assert ("operand 'weight' shape [32] must be the normalized shape [64]"
            in str(info.value))


def test_unknown_op_is_an_error():
    with pytest.raises(norm_mlir.MLIRError, match="norm.batch_norm"):
        norm_mlir.compile(RMS.replace("norm.rms_norm", "norm.batch_norm"))


def test_bad_pipeline_is_an_error():
    with pytest.raises(norm_mlir.MLIRError, match="no-such-pass"):
        norm_mlir.compile(RMS, pipeline="no-such-pass")


def test_bad_pipeline_option_is_an_error():
    with pytest.raises(norm_mlir.MLIRError, match="vector-width"):
        norm_mlir.compile(RMS, pipeline="norm-cpu-pipeline{vector-width=3}")


def test_mlir_error_is_a_value_error():
    assert issubclass(norm_mlir.MLIRError, ValueError)
    with pytest.raises(ValueError):
        norm_mlir.verify("not mlir")


def test_jit_reports_diagnostics():
    with pytest.raises(norm_mlir.MLIRError, match="shape"):
        norm_mlir.jit(RMS.replace("tensor<64xf32>", "tensor<32xf32>"))
