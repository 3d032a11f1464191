"""Shared fixtures of the norm_mlir tests (PYTHONPATH=<build>/python)."""

import os
import sys

import numpy as np
import pytest

# normref (the float64 reference of the norm ops and the error metric of
# every test suite) lives with the lit test tools.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "tools"))


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def pytest_report_header(config):
    try:
        import torch
        return f"PyTorch {torch.__version__}: comparisons against it run"
    except ImportError:
        return ("PyTorch is not installed: the comparisons against it are "
                "skipped")
