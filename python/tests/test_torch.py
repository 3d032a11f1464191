"""norm_mlir's ready functions against PyTorch on the CPU (when installed)."""

import numpy as np
import pytest

import norm_mlir
import normref as ref

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: comparisons against PyTorch "
                    "CPU skipped")

DTYPES = ["f32", "f64", "f16", "bf16"]
TORCH_DTYPES = {"f32": torch.float32, "f64": torch.float64,
                "f16": torch.float16, "bf16": torch.bfloat16}


def to_torch(a, dtype):
    if a is None:
        return None
    return torch.from_numpy(np.asarray(a).astype(np.float64)).to(
        TORCH_DTYPES[dtype])


def to_numpy(t):
    return t.to(torch.float64).numpy()


def make(rng, dtype, shape, scale=1.0, offset=0.0):
    return (offset + scale * rng.standard_normal(shape)).astype(
        ref.np_dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_matches_torch(dtype, rng):
    x = make(rng, dtype, (4, 3, 96), 2.0, 0.5)
    w = make(rng, dtype, (96,), 0.2, 1.0)
    b = make(rng, dtype, (96,), 0.1)
    y = norm_mlir.layer_norm(x, (96,), w, b, eps=1e-5)
    t = torch.nn.functional.layer_norm(to_torch(x, dtype), (96,),
                                       to_torch(w, dtype), to_torch(b, dtype),
                                       eps=1e-5)
    assert ref.error(y, to_numpy(t)) <= ref.BOUNDS[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_matches_torch(dtype, rng):
    x = make(rng, dtype, (4, 3, 96), 2.0, 0.5)
    w = make(rng, dtype, (96,), 0.2, 1.0)
    for eps in (None, 1e-6):  # None: finfo(dtype).eps on both sides
        y = norm_mlir.rms_norm(x, (96,), w, eps=eps)
        t = torch.nn.functional.rms_norm(to_torch(x, dtype), (96,),
                                         to_torch(w, dtype), eps=eps)
        assert ref.error(y, to_numpy(t)) <= ref.BOUNDS[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_add_rms_norm_matches_torch(dtype, rng):
    """vLLM's fused add + RMSNorm: s = x + r in the dtype, then RMSNorm(s)."""
    x = make(rng, dtype, (8, 64))
    r = make(rng, dtype, (8, 64))
    w = make(rng, dtype, (64,), 0.2, 1.0)
    y, s = norm_mlir.rms_norm(x, 64, w, eps=1e-6, residual=r)
    ts = to_torch(x, dtype) + to_torch(r, dtype)
    t = torch.nn.functional.rms_norm(ts, (64,), to_torch(w, dtype), eps=1e-6)
    np.testing.assert_array_equal(s.astype(np.float64), to_numpy(ts))
    assert ref.error(y, to_numpy(t)) <= ref.BOUNDS[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dyt_matches_torch(dtype, rng):
    x = make(rng, dtype, (6, 80), 2.0)
    w = make(rng, dtype, (80,), 0.2, 1.0)
    b = make(rng, dtype, (80,), 0.1)
    y = norm_mlir.dyt(x, 0.5, w, b)
    # The DyT module: tanh(alpha * x) * weight + bias, computed in float32
    # and rounded once for 16-bit inputs (as with autocast).
    xt = to_torch(x, dtype)
    compute = torch.float64 if dtype == "f64" else torch.float32
    t = (torch.tanh(0.5 * xt.to(compute)) * to_torch(w, dtype).to(compute)
         + to_torch(b, dtype).to(compute)).to(TORCH_DTYPES[dtype])
    assert ref.error(y, to_numpy(t)) <= ref.BOUNDS[dtype]


def test_llama_rms_norm_matches_hugging_face(rng):
    """LlamaRMSNorm.forward in bf16 is rms_norm with cast_mode before_weight."""
    x = make(rng, "bf16", (4, 128))
    w = make(rng, "bf16", (128,), 0.2, 1.0)
    xt, wt = to_torch(x, "bf16"), to_torch(w, "bf16")
    hidden = xt.to(torch.float32)
    variance = hidden.pow(2).mean(-1, keepdim=True)
    hidden = hidden * torch.rsqrt(variance + 1e-6)
    t = wt * hidden.to(torch.bfloat16)
    y = norm_mlir.rms_norm(x, 128, w, eps=1e-6, cast_mode="before_weight")
    assert ref.error(y, to_numpy(t)) <= ref.BOUNDS["bf16"]
