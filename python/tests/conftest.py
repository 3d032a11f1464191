"""Shared fixtures of the norm_mlir tests (PYTHONPATH=<build>/python)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))


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
