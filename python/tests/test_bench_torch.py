"""The eager PyTorch baselines of the block-scaled benchmark cases
(tools/norm-bench/bench_torch.py block_quantize) compute what DESIGN 2d
defines: their bytes equal the bit-exact reference of test/tools/
blockscale.py, edge values included, so norm-bench's torch column times the
same results as the fused kernels."""

import os
import sys

import numpy as np
import pytest

import blockscale

torch = pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools", "norm-bench"))
import bench_torch  # noqa: E402


def inputs(rng):
    y = rng.standard_normal((64, 512)) * 2.0 ** rng.integers(
        -30, 30, size=(64, 1))
    # An all-zero group, -0, and every e2m1 tie at scale 1 (amax 6 in an
    # MXFP4 group: X = 0; the ties of every step).
    y[0, :128] = 0.0
    y[1, :32] = -0.0
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0]
    y[2, :32] = np.resize(ties + [-t for t in ties], 32)
    y[3, :16] = np.resize(ties, 16)
    return y.astype(np.float32)


@pytest.mark.parametrize("variant", list(bench_torch.BLOCK_SCALED))
def test_block_quantize_matches_reference(variant, rng):
    group = bench_torch.BLOCK_SCALED[variant]
    y = inputs(rng)
    q, s = bench_torch.block_quantize(torch, torch.from_numpy(y), variant,
                                      group, bench_torch.e2m1_bounds(torch))
    g = bench_torch.NVFP4_GLOBAL_SCALE
    if variant == "nvfp4":
        want_q, want_s = blockscale.quantize_nvfp4(y, g, group)
    else:
        qtype = "f4E2M1FN" if variant == "mxfp4" else "f8E4M3FN"
        rounding = "up" if variant == "fp8_1x128" else "floor"
        want_q, want_s = blockscale.quantize_mx(y, qtype, group, rounding)
    if variant in ("mxfp4", "nvfp4"):
        want_q = blockscale.pack_fp4(want_q)
    got_q = q.contiguous().view(torch.uint8).numpy().reshape(want_q.shape)
    got_s = s.contiguous().view(torch.uint8).numpy().reshape(want_s.shape)
    np.testing.assert_array_equal(got_q, want_q)
    np.testing.assert_array_equal(got_s, want_s)
