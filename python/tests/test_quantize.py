"""norm_mlir.quantize and the norms' quant= against a NumPy + ml_dtypes
reference of norm.quantize (docs/Ops.md#normquantize).

The fused kernels (norm and quantization in one) must give exactly what
the norm followed by a separate quantize gives; both are checked against
the reference computed from the norm's own y.
"""

import ml_dtypes
import numpy as np
import pytest

import norm_mlir

FP8 = np.dtype(ml_dtypes.float8_e4m3fn)
QMAX = {"fp8": 448.0, "int8": 127.0}
IN_DTYPES = {"f32": np.float32, "f16": np.float16,
             "bf16": ml_dtypes.bfloat16}


def convert(v, qtype):
    """The conversion of f32 values v (already times the inverse scale)."""
    v = v.astype(np.float32)
    if qtype == "fp8":
        return np.clip(v, -448, 448).astype(FP8)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(v), 0,
                        np.clip(np.rint(v), -128, 127)).astype(np.int8)


def reference(y, qtype, scale=None, group_size=0, scale_ub=None,
              min_scale=None):
    """(q, scales) of norm.quantize on y, computed in f32 as specified."""
    y = y.astype(np.float32)
    if scale is not None:
        with np.errstate(all="ignore"):
            inverse = np.float32(1) / np.float32(scale)
            return convert(y * inverse, qtype), None
    n = y.shape[-1]
    g = group_size or n
    grouped = y.reshape(y.shape[:-1] + (n // g, g))
    with np.errstate(invalid="ignore"):
        amax = np.abs(grouped).max(axis=-1)
    ub = np.float32(np.inf if scale_ub is None else scale_ub)
    floor = np.float32(min_scale if min_scale is not None
                       else 1.0 / (QMAX[qtype] * 512))
    with np.errstate(invalid="ignore"):
        s = np.maximum(np.minimum(amax, ub) / np.float32(QMAX[qtype]), floor)
        s = np.where(np.isnan(amax), np.float32(np.nan), s).astype(np.float32)
        inverse = (np.float32(1) / s).astype(np.float32)
        q = convert(grouped * inverse[..., None], qtype)
    return q.reshape(y.shape), s


def assert_bits_equal(q, q_ref):
    assert q.dtype == q_ref.dtype and q.shape == q_ref.shape
    if q.dtype == FP8:
        nan = np.isnan(q_ref.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(q.astype(np.float32)), nan)
        np.testing.assert_array_equal(q.view(np.uint8)[~nan],
                                      q_ref.view(np.uint8)[~nan])
    else:
        np.testing.assert_array_equal(q, q_ref)


def make(rng, dtype, shape, scale=2.0):
    return (scale * rng.standard_normal(shape)).astype(IN_DTYPES[dtype])


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("qtype", ["fp8", "int8"])
@pytest.mark.parametrize("mode", ["static", "per_token", "group64",
                                  "group128"])
def test_quantize_alone(dtype, qtype, mode, rng):
    y = make(rng, dtype, (5, 3, 256))
    y[0, 0, :] = 0  # an all-zero row: the scale floor, q = 0
    y[1, 1, 7] = 1e4 if dtype != "f16" else 6e4  # saturation (static)
    kwargs = {}
    if mode == "static":
        kwargs["scale"] = 0.02
        q = norm_mlir.quantize(y, qtype, **kwargs)
        scales = None
    else:
        kwargs["group_size"] = {"per_token": 0, "group64": 64,
                                "group128": 128}[mode]
        q, scales = norm_mlir.quantize(y, qtype, **kwargs)
    q_ref, s_ref = reference(y, qtype, **kwargs)
    assert_bits_equal(q, q_ref)
    if scales is not None:
        np.testing.assert_allclose(scales, s_ref, rtol=1e-6)
        if mode == "per_token":
            assert scales.shape == (5, 3, 1)
            assert scales[0, 0, 0] == np.float32(1.0 / (QMAX[qtype] * 512))


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm", "dyt"])
@pytest.mark.parametrize("qtype", ["fp8", "int8"])
@pytest.mark.parametrize("quant", [{"scale": 0.01}, {}, {"group_size": 128},
                                   {"group_size": 64, "scale_ub": 0.5}])
@pytest.mark.parametrize("residual", [False, True])
def test_norm_quant_fused(op, qtype, quant, residual, rng):
    """quant= gives the norm's y quantized, exactly as norm then quantize."""
    x = make(rng, "bf16", (9, 512))
    w = make(rng, "bf16", (512,), 1.0)
    r = make(rng, "bf16", (9, 512)) if residual else None

    def norm(**extra):
        if op == "rms_norm":
            return norm_mlir.rms_norm(x, (512,), w, residual=r, **extra)
        if op == "layer_norm":
            return norm_mlir.layer_norm(x, (512,), w, residual=r, **extra)
        return norm_mlir.dyt(x, 0.7, w, residual=r, **extra)

    unfused = norm()
    y = unfused[0] if residual else unfused
    fused = norm(quant=dict(dtype=qtype, **quant))
    assert len(fused) == (3 if residual else 2)
    q, scales = fused[0], fused[1]
    q_ref, s_ref = reference(y, qtype, **quant)
    assert_bits_equal(q, q_ref)
    if "scale" in quant:
        assert scales is None
    else:
        np.testing.assert_allclose(scales, s_ref, rtol=1e-6)
    if residual:
        np.testing.assert_array_equal(fused[2].view(np.uint16),
                                      unfused[1].view(np.uint16))


def test_quantize_special_values():
    """NaN, infinities and scale_ub / min_scale, per group."""
    y = np.array([[1.0, -2.0, np.nan, 3.0],
                  [np.inf, 1.0, -np.inf, 0.5],
                  [1000.0, 3000.0, -2.0, 0.0]], dtype=np.float32)
    q, s = norm_mlir.quantize(y, "fp8", scale_ub=1200.0)
    q_ref, s_ref = reference(y, "fp8", scale_ub=1200.0)
    assert np.isnan(s[0, 0]) and np.isnan(q[0].astype(np.float32)).all()
    assert_bits_equal(q, q_ref)
    np.testing.assert_array_equal(s[1:], s_ref[1:])
    qi, si = norm_mlir.quantize(y, "int8", min_scale=1.1920929e-07)
    qi_ref, si_ref = reference(y, "int8", min_scale=1.1920929e-07)
    assert (qi[0] == 0).all()
    assert_bits_equal(qi, qi_ref)
    # Static scales of 0, -1 and NaN follow from the conversion rules.
    for scale in (0.0, -1.0, np.nan):
        assert_bits_equal(norm_mlir.quantize(y, "fp8", scale=scale),
                          reference(y, "fp8", scale=scale)[0])
        assert_bits_equal(norm_mlir.quantize(y, "int8", scale=scale),
                          reference(y, "int8", scale=scale)[0])


def test_quantize_every_f32_class(rng):
    """Bit-exact against ml_dtypes: every e4m3 value, the ties between
    neighbours and one f32 ulp around them, subnormals, overflow, f32
    denormals, NaN payloads and random bit patterns."""
    codes = np.arange(256, dtype=np.uint8).view(FP8).astype(np.float32)
    finite = np.unique(codes[np.isfinite(codes)])
    ties = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(
        np.float32)
    special = np.array([448, 449, 464, 464.0001, 480, 1e30, np.inf, -np.inf,
                        2.0**-10, 2.0**-11, 1e-40, -1e-40, 0.0, -0.0],
                       dtype=np.float32)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF],
                    dtype=np.uint32).view(np.float32)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    v = np.concatenate([finite, ties, np.nextafter(ties, np.float32(np.inf)),
                        np.nextafter(ties, np.float32(-np.inf)), special,
                        nans, bits]).astype(np.float32)
    for qtype, scale in (("fp8", 1.0), ("int8", 0.25)):
        q = norm_mlir.quantize(v.reshape(1, -1), qtype, scale=scale)
        assert_bits_equal(q, reference(v.reshape(1, -1), qtype,
                                       scale=scale)[0])


def test_quantize_errors(rng):
    y = make(rng, "f32", (4, 96))
    with pytest.raises(TypeError, match="fp8"):
        norm_mlir.quantize(y, "int4")
    with pytest.raises(ValueError, match="group_size 64 must be >= 0 and "
                       "divide the last dim 96"):
        norm_mlir.quantize(y, "fp8", group_size=64)
    with pytest.raises(ValueError, match="dynamic scales"):
        norm_mlir.quantize(y, "fp8", scale=1.0, group_size=32)
    with pytest.raises(TypeError, match="float64 input cannot be quantized"):
        norm_mlir.quantize(y.astype(np.float64), "fp8")
    with pytest.raises(ValueError, match="min_scale must be finite and > 0"):
        norm_mlir.quantize(y, "int8", min_scale=0.0)
    with pytest.raises(ValueError, match="last dim only"):
        norm_mlir.layer_norm(y.reshape(4, 2, 48), (2, 48), quant="fp8")
    with pytest.raises(TypeError, match="unknown quant keys"):
        norm_mlir.rms_norm(y, (96,), quant={"dtype": "fp8", "axis": 0})
