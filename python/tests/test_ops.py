"""norm_mlir.layer_norm / rms_norm / dyt against the float64 references of
normref.py (test/tools).

Every op and dtype, with and without weight/bias and residual, the
attribute variants, the caching of compiled kernels and the errors.
"""

import numpy as np
import pytest

import norm_mlir
import normref as ref

DTYPES = ["f32", "f64", "f16", "bf16"]
SHAPE = (4, 3, 96)  # 12 rows of 96


def make(rng, dtype, shape, scale=1.0, offset=0.0):
    return (offset + scale * rng.standard_normal(shape)).astype(
        ref.np_dtype(dtype))


def check(y, y_ref, dtype, x=None):
    assert y.dtype == ref.np_dtype(dtype)
    if x is not None:
        assert y.shape == x.shape
    err = ref.error(y, y_ref)
    assert err <= ref.BOUNDS[dtype], f"error {err} above {ref.BOUNDS[dtype]}"


def check_residual(s, s_ref):
    np.testing.assert_array_equal(s.astype(np.float64), s_ref)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["plain", "affine", "residual"])
def test_layer_norm(dtype, variant, rng):
    x = make(rng, dtype, SHAPE, 2.0, 0.5)
    w = b = r = None
    if variant != "plain":
        w = make(rng, dtype, SHAPE[-1:], 0.2, 1.0)
        b = make(rng, dtype, SHAPE[-1:], 0.1)
    if variant == "residual":
        r = make(rng, dtype, SHAPE)
    out = norm_mlir.layer_norm(x, (96,), w, b, eps=1e-5, residual=r)
    y_ref, s_ref = ref.layer_norm(x, 1, w, b, 1e-5, residual=r)
    if r is None:
        check(out, y_ref, dtype, x)
    else:
        check(out[0], y_ref, dtype, x)
        check_residual(out[1], s_ref)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["plain", "affine", "residual"])
def test_rms_norm(dtype, variant, rng):
    x = make(rng, dtype, SHAPE, 2.0, 0.5)
    w = r = None
    if variant != "plain":
        w = make(rng, dtype, SHAPE[-1:], 0.2, 1.0)
    if variant == "residual":
        r = make(rng, dtype, SHAPE)
    out = norm_mlir.rms_norm(x, 96, w, eps=1e-6, residual=r)
    y_ref, s_ref = ref.rms_norm(x, 1, w, 1e-6, residual=r)
    if r is None:
        check(out, y_ref, dtype, x)
    else:
        check(out[0], y_ref, dtype, x)
        check_residual(out[1], s_ref)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["plain", "affine", "residual"])
def test_dyt(dtype, variant, rng):
    x = make(rng, dtype, SHAPE, 2.0)
    w = b = r = None
    if variant != "plain":
        w = make(rng, dtype, SHAPE[-1:], 0.2, 1.0)
        b = make(rng, dtype, SHAPE[-1:], 0.1)
    if variant == "residual":
        r = make(rng, dtype, SHAPE)
    out = norm_mlir.dyt(x, 0.75, w, b, residual=r)
    y_ref, s_ref = ref.dyt(x, 0.75, w, b, residual=r)
    if r is None:
        check(out, y_ref, dtype, x)
    else:
        check(out[0], y_ref, dtype, x)
        check_residual(out[1], s_ref)


# The documented absolute error bounds of the CPU lowering's tanh
# (docs/Numerics.md, TanhApproximation.h), by result type.
TANH_BOUNDS = {"f32": 4.2e-7, "f16": 1.7e-5, "bf16": 5.9e-5}


def _tanh_inputs(dtype):
    """Every finite value of a 16-bit type, or every 256th f32 in
    [-12, 12] plus the clamp points and non-finite values."""
    if dtype == "f32":
        top = int(np.array(12.0, np.float32).view(np.uint32))
        pos = np.arange(0, top + 1, 256, dtype=np.uint32).view(np.float32)
        x = np.concatenate([pos, -pos, np.float32([8.0, 7.999999, 8.000001,
                                                   11.99998, 100.0, 1e30])])
    else:
        x = np.arange(1 << 16, dtype=np.uint16).view(ref.np_dtype(dtype))
        with np.errstate(invalid="ignore"):
            x = x[np.isfinite(x.astype(np.float64))]
    x = x.astype(ref.np_dtype(dtype))
    # Rows of 64 (a whole number of vectors at any width).
    return x[:x.size - x.size % 64].reshape(-1, 64)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_dyt_tanh_error_bound(dtype):
    """DyT with alpha = 1 is tanh: the result is within the documented bound
    of f64 tanh, before its final rounding to the result type. For 16-bit
    types every finite input is tried: y must be the rounding of a value
    within the bound of tanh(x)."""
    x = _tanh_inputs(dtype)
    y = norm_mlir.dyt(x, 1.0).astype(np.float64)
    exact = np.tanh(x.astype(np.float64))
    bound = TANH_BOUNDS[dtype]
    if dtype == "f32":
        err = np.abs(y - exact).max()
        assert err <= bound, f"tanh error {err} above {bound}"
    else:
        t = ref.np_dtype(dtype)
        lo = (exact - bound).astype(t).astype(np.float64)
        hi = (exact + bound).astype(t).astype(np.float64)
        bad = np.nonzero((y < lo) | (y > hi))
        assert bad[0].size == 0, (
            f"{bad[0].size} results not the rounding of tanh within {bound}: "
            f"x={x[bad][:4]}, y={y[bad][:4]}, tanh={exact[bad][:4]}")
    nan = np.full((1, 64), np.nan, ref.np_dtype(dtype))
    assert np.all(np.isnan(norm_mlir.dyt(nan, 1.0)))
    inf = np.full((1, 64), np.inf, ref.np_dtype(dtype))
    half_ulp = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
    assert np.all(np.abs(norm_mlir.dyt(inf, 1.0).astype(np.float64) - 1.0)
                  <= bound + half_ulp[dtype])


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_f32_weights_on_16_bit_inputs(dtype, rng):
    x = make(rng, dtype, (6, 64))
    w = make(rng, "f32", (64,), 0.2, 1.0)
    b = make(rng, "f32", (64,), 0.1)
    check(norm_mlir.layer_norm(x, 64, w, b),
          ref.layer_norm(x, 1, w, b)[0], dtype)
    check(norm_mlir.rms_norm(x, 64, w, eps=1e-6),
          ref.rms_norm(x, 1, w, 1e-6)[0], dtype)
    alpha = np.array([0.5], np.float32)
    check(norm_mlir.dyt(x, alpha, w, b), ref.dyt(x, 0.5, w, b)[0], dtype)


def test_llama_rms_norm_before_weight(rng):
    """Hugging Face's LlamaRMSNorm on bf16: weight * x.to(bf16)."""
    x = make(rng, "bf16", (5, 128))
    w = make(rng, "bf16", (128,), 0.2, 1.0)
    y = norm_mlir.rms_norm(x, 128, w, eps=1e-6, cast_mode="before_weight")
    check(y, ref.rms_norm(x, 1, w, 1e-6, cast_mode="before_weight")[0],
          "bf16")


def test_gemma_weight_offset(rng):
    x = make(rng, "bf16", (5, 128))
    w = make(rng, "bf16", (128,), 0.1)
    y = norm_mlir.rms_norm(x, 128, w, eps=1e-6, weight_offset=1.0)
    check(y, ref.rms_norm(x, 1, w, 1e-6, weight_offset=1.0)[0], "bf16")


@pytest.mark.parametrize("mode", ["outside_sqrt", "clamp"])
def test_epsilon_modes(mode, rng):
    x = make(rng, "f32", (7, 40))
    x[3] = 0.0  # an all-zero row stays finite
    y = norm_mlir.rms_norm(x, 40, eps=1e-3, epsilon_mode=mode)
    assert np.all(np.isfinite(y))
    check(y, ref.rms_norm(x, 1, None, 1e-3, mode=mode)[0], "f32")


def test_layer_norm_large_offset_and_f64_compute(rng):
    """Rows 1e4 + N(0, 0.1^2) in f32 normalize within 1e-4."""
    x = (1e4 + 0.1 * rng.standard_normal((4, 512))).astype(np.float32)
    y_ref = ref.layer_norm(x, 1)[0]
    assert ref.error(norm_mlir.layer_norm(x, 512), y_ref) <= 1e-4
    y64 = norm_mlir.layer_norm(x, 512, compute_dtype=np.float64)
    assert ref.error(y64, y_ref) <= 1e-5


def test_multi_dim_normalized_shape_and_edge_shapes(rng):
    x = make(rng, "f32", (2, 3, 4, 5))
    w = make(rng, "f32", (4, 5), 0.2, 1.0)
    check(norm_mlir.layer_norm(x, (4, 5), w), ref.layer_norm(x, 2, w)[0],
          "f32")
    one = make(rng, "f32", (6, 1))  # N == 1
    assert np.all(norm_mlir.layer_norm(one, 1) == 0.0)
    empty = np.zeros((0, 16), np.float32)  # zero rows
    assert norm_mlir.rms_norm(empty, 16).shape == (0, 16)
    y, s = norm_mlir.rms_norm(empty, 16, residual=empty)
    assert y.shape == s.shape == (0, 16)
    vec = make(rng, "f64", (33,))  # rank 1
    check(norm_mlir.rms_norm(vec, 33), ref.rms_norm(vec, 1, None,
                                                    np.finfo(np.float64).eps)[0],
          "f64")


def test_nan_and_inf_propagate():
    x = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0],
                  [np.inf, 1.0, 0.0]], np.float32)
    y = norm_mlir.layer_norm(x, 3)
    assert np.all(np.isnan(y[0])) and np.all(np.isfinite(y[1]))
    assert not np.any(np.isfinite(y[2]))


def test_rms_norm_default_eps_is_machine_epsilon(rng):
    x = np.zeros((2, 8), np.float32)
    x[0, 0] = 1e-4
    y = norm_mlir.rms_norm(x, 8)  # eps = finfo(f32).eps as in PyTorch
    eps = float(np.finfo(np.float32).eps)
    expected = 1e-4 / np.sqrt(1e-8 / 8 + eps)
    assert abs(float(y[0, 0]) - expected) <= 1e-5 * expected


def test_kernels_are_compiled_once_per_signature(rng):
    x = make(rng, "f32", (3, 24))
    norm_mlir.rms_norm(x, 24, eps=1e-5)
    before = norm_mlir.kernel_cache_size()
    for rows in (1, 3, 17):  # the batch size is dynamic: same kernel
        norm_mlir.rms_norm(make(rng, "f32", (rows, 24)), 24, eps=1e-5)
    assert norm_mlir.kernel_cache_size() == before
    norm_mlir.rms_norm(x, 24, eps=1e-4)  # another epsilon: a new kernel
    assert norm_mlir.kernel_cache_size() == before + 1


def test_errors():
    x = np.ones((2, 8), np.float32)
    with pytest.raises(TypeError, match="float16, bfloat16, float32 or "
                                        "float64, got int32"):
        norm_mlir.layer_norm(x.astype(np.int32), 8)
    with pytest.raises(TypeError, match="NumPy array"):
        norm_mlir.rms_norm([[1.0, 2.0]], 2)
    with pytest.raises(ValueError, match=r"expected input with shape \[\*, 4\]"):
        norm_mlir.layer_norm(x, 4)
    with pytest.raises(ValueError, match="weight must have shape"):
        norm_mlir.layer_norm(x, 8, np.ones(4, np.float32))
    with pytest.raises(TypeError, match="weight must have the input's dtype"):
        norm_mlir.layer_norm(x, 8, np.ones(8, np.float64))
    with pytest.raises(ValueError, match="residual must have the input's "
                                         "shape"):
        norm_mlir.rms_norm(x, 8, residual=np.ones((3, 8), np.float32))
    with pytest.raises(TypeError, match="residual must be"):
        norm_mlir.rms_norm(x, 8, residual=np.ones((2, 8), np.float64))
    with pytest.raises(ValueError, match="eps must be finite"):
        norm_mlir.layer_norm(x, 8, eps=-1.0)
    with pytest.raises(ValueError, match="epsilon_mode"):
        norm_mlir.rms_norm(x, 8, epsilon_mode="outside")
    with pytest.raises(ValueError, match="weight_offset needs a weight"):
        norm_mlir.rms_norm(x, 8, weight_offset=1.0)
    with pytest.raises(TypeError, match="alpha must be"):
        norm_mlir.dyt(x, np.ones(2, np.float32))
    # A compute type narrower than the input is a verifier error, raised
    # with the MLIR diagnostic.
    with pytest.raises(norm_mlir.MLIRError, match="compute_type"):
        norm_mlir.layer_norm(x.astype(np.float64), 8,
                             compute_dtype=np.float32)
