"""The demo's main step (examples/torch_block.py) runs and passes: a
torch-mlir export raised, fused, compiled and checked on run-time data."""

import importlib.util
import os

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def load(name):
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(EXAMPLES, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_torch_block(capsys):
    assert load("torch_block").main() == 0
    out = capsys.readouterr().out
    assert out.count(": PASS") == 3
    assert "norm.rms_norm" in out
