"""The norm_mlir wheel (`pip install .`) as a user gets it: imported from
the virtual environment's site-packages, with no PYTHONPATH or
LD_LIBRARY_PATH, its extension finding LLVM/MLIR through its run path.

Run by scripts/test-wheel.sh with the environment's python; the op and JIT
suites of python/tests run against the same installation after it.
"""

import os
import subprocess
import sys
import sysconfig

import numpy as np

import norm_mlir


def test_imported_from_site_packages():
    site = os.path.realpath(sysconfig.get_paths()["platlib"])
    package = os.path.realpath(os.path.dirname(norm_mlir.__file__))
    assert package == os.path.join(site, "norm_mlir"), package
    assert sys.prefix != sys.base_prefix, "not run in a virtual environment"


def test_no_library_path_needed():
    # A fresh interpreter without LD_LIBRARY_PATH or PYTHONPATH imports the
    # extension and compiles a module.
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    code = ("import norm_mlir; print(norm_mlir.compile("
            "'func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {"
            " %y = norm.rms_norm %x : (tensor<2x8xf32>) -> tensor<2x8xf32>"
            " return %y : tensor<2x8xf32> }', pipeline='canonicalize'))")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert "norm.rms_norm" in out.stdout


def test_rms_norm_against_float64():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 64)).astype(np.float32)
    w = (1.0 + 0.1 * rng.standard_normal(64)).astype(np.float32)
    y = norm_mlir.rms_norm(x, (64,), weight=w, eps=1e-6)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + 1e-6) * w
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=2e-6, atol=2e-6)


def test_jit_module():
    src = """
    func.func @main(%x: tensor<3x16xf32>, %w: tensor<16xf32>,
                    %b: tensor<16xf32>) -> tensor<3x16xf32> {
      %y = norm.layer_norm %x weight(%w) bias(%b)
          : (tensor<3x16xf32>, tensor<16xf32>, tensor<16xf32>)
          -> tensor<3x16xf32>
      return %y : tensor<3x16xf32>
    }"""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    y = norm_mlir.jit(src).main(x, w, b)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
    ref = (x64 - mean) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
