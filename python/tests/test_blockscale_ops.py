"""norm_mlir.quantize and the norms' quant= with the block-scaled formats
(mxfp8, fp8_1x128, mxfp4, nvfp4; row-major and swizzled_128x4 scales)
against the bit-exact reference of test/tools/blockscale.py.

As in test_quantize.py, the fused kernels (norm and quantization in one)
must give exactly what the norm followed by a separate quantization gives:
the reference quantizes the norm's own y (the unfused kernel's, rounded to
the input dtype), so every q and scale is compared bit for bit.
"""

import ml_dtypes
import numpy as np
import pytest

import blockscale
import norm_mlir
from norm_mlir import _kernels

TYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)

# format: (q element type, scales dtype, group size, default rounding)
FORMS = {
    "mxfp8": ("f8E4M3FN", E8M0, 32, "floor"),
    "fp8_1x128": ("f8E4M3FN", E8M0, 128, "up"),
    "mxfp4": ("f4E2M1FN", E8M0, 32, "floor"),
    "nvfp4": ("f4E2M1FN", E4M3, 16, None),
}
# (format, options): every format with both layouts, both roundings.
CASES = [
    ("mxfp8", {}),
    ("mxfp8", {"scale_rounding": "up", "scale_layout": "swizzled_128x4"}),
    ("fp8_1x128", {}),
    ("fp8_1x128", {"scale_rounding": "floor",
                   "scale_layout": "swizzled_128x4"}),
    ("mxfp4", {"scale_layout": "swizzled_128x4"}),
    ("mxfp4", {"scale_rounding": "up"}),
    ("nvfp4", {}),
    ("nvfp4", {"scale_layout": "swizzled_128x4", "global_scale": 448 * 6 / 9}),
]
CASE_IDS = ["-".join([form] + [str(v) for v in options.values()])
            for form, options in CASES]


def reference(form, y, options):
    """(q, scales) as the ready-made ops return them, from blockscale.py:
    q packed (FP4) or float8_e4m3fn, the scales row-major or swizzled."""
    qtype, sdtype, group, rounding = FORMS[form]
    if form == "nvfp4":
        g = np.float32(options.get("global_scale", 1.0))
        q, s = blockscale.quantize_nvfp4(y, g, group)
    else:
        q, s = blockscale.quantize_mx(
            y, qtype, group, options.get("scale_rounding", rounding))
    if options.get("scale_layout") == "swizzled_128x4":
        s = blockscale.swizzle_scales(s)
    q = blockscale.pack_fp4(q) if qtype == "f4E2M1FN" else q.view(E4M3)
    return q, s.view(sdtype)


def assert_same(got, want, e4m3=False):
    """Same dtype, shape and bits; with `e4m3`, any NaN encoding of e4m3
    for a NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape
    got, want = got.view(np.uint8), want.view(np.uint8)
    differ = got != want
    if e4m3:
        differ &= ~(((got & 0x7F) == 0x7F) & ((want & 0x7F) == 0x7F))
    bad = np.argwhere(differ)
    assert bad.size == 0, "differs at %s: got %#x, want %#x" % (
        bad[0], got[tuple(bad[0])], want[tuple(bad[0])])


def check(form, got, y, options):
    """q (values) and the scales (exact codes) of `got` against y's
    reference."""
    q, s = got
    want_q, want_s = reference(form, y, options)
    assert_same(q, want_q, e4m3=FORMS[form][0] == "f8E4M3FN")
    assert_same(s, want_s)


def make(rng, dtype, shape, scale=2.0):
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(
        -20, 20, size=shape[:-1] + (1,))
    return (scale * x).astype(TYPES[dtype])


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("form,options", CASES, ids=CASE_IDS)
def test_quantize_alone(form, options, dtype, rng):
    y = make(rng, dtype, (5, 3, 256))
    y[0, 0, :] = 0  # an all-zero row
    y[1, 1, 7] = np.nan  # a NaN group
    y[2, 0, 40] = np.inf  # saturation
    y[3, 2, :128] = -0.0
    got = norm_mlir.quantize(y, form, **options)
    qtype, sdtype, group, _ = FORMS[form]
    q, s = got
    if qtype == "f4E2M1FN":
        assert q.dtype == np.uint8 and q.shape == (5, 3, 128)
    else:
        assert q.dtype == E4M3 and q.shape == (5, 3, 256)
    if options.get("scale_layout") == "swizzled_128x4":
        assert s.shape == (blockscale.swizzled_size(15, 256 // group),)
    else:
        assert s.shape == (5, 3, 256 // group)
    assert s.dtype == sdtype
    check(form, got, y, options)


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("form,options", CASES, ids=CASE_IDS)
def test_rms_norm_fused(form, options, dtype, rng):
    """quant= on rms_norm with a weight, and with a residual: exactly the
    quantization of the unfused y; residual_out unchanged."""
    n = 384
    x = make(rng, dtype, (7, n))
    r = make(rng, dtype, (7, n))
    w = (rng.standard_normal(n) * np.repeat(
        2.0 ** rng.integers(-8, 8, size=n // 32), 32)).astype(TYPES[dtype])
    x[0] = 0
    quant = dict(dtype=form, **options)
    y = norm_mlir.rms_norm(x, (n,), w, eps=1e-6)
    check(form, norm_mlir.rms_norm(x, (n,), w, eps=1e-6, quant=quant), y,
          options)
    y, s = norm_mlir.rms_norm(x, (n,), w, eps=1e-6, residual=r)
    q, scales, s_fused = norm_mlir.rms_norm(x, (n,), w, eps=1e-6,
                                            residual=r, quant=quant)
    check(form, (q, scales), y, options)
    np.testing.assert_array_equal(s_fused.view(np.uint8), s.view(np.uint8))


def test_edge_shapes(rng):
    """A 1-d input (one row, padded to 128 when swizzled) and no rows."""
    y = make(rng, "f32", (64,))
    for form, options in (("nvfp4", {"global_scale": 3.0}),
                          ("mxfp8", {"scale_layout": "swizzled_128x4"})):
        got = norm_mlir.quantize(y, form, **options)
        check(form, got, y, options)
    q, s = norm_mlir.quantize(np.empty((0, 64), np.float32), "mxfp4",
                              scale_layout="swizzled_128x4")
    assert q.shape == (0, 32) and q.dtype == np.uint8
    assert s.shape == (0,) and s.dtype == E8M0


@pytest.mark.parametrize("op", ["layer_norm", "dyt"])
def test_other_norms_fused(op, rng):
    """The string form of quant= on layer_norm and dyt (3-d input)."""
    x = make(rng, "bf16", (2, 3, 128))
    w = make(rng, "bf16", (128,), 1.0)
    for form in ("mxfp4", "nvfp4"):
        if op == "layer_norm":
            y = norm_mlir.layer_norm(x, (128,), w)
            got = norm_mlir.layer_norm(x, (128,), w, quant=form)
        else:
            y = norm_mlir.dyt(x, 0.5, w)
            got = norm_mlir.dyt(x, 0.5, w, quant=form)
        check(form, got, y, {})


def test_errors(rng):
    y = make(rng, "f32", (4, 96))
    with pytest.raises(ValueError, match="scale: not for the block-scaled "
                       "format 'mxfp4'"):
        norm_mlir.quantize(y, "mxfp4", scale=1.0)
    with pytest.raises(ValueError, match="scale_ub, min_scale: not for"):
        norm_mlir.quantize(y, "mxfp8", scale_ub=2.0, min_scale=1e-3)
    with pytest.raises(ValueError, match="mxfp8: f8E4M3FN with f8E8M0FNU "
                       "scales needs group_size 32 or 128, got 16"):
        norm_mlir.quantize(y, "mxfp8", group_size=16)
    with pytest.raises(ValueError, match="fp8_1x128 needs a last dim that "
                       "group_size 128 divides, got 96"):
        norm_mlir.quantize(y, "fp8_1x128")
    with pytest.raises(ValueError, match="scale_rounding is for the "
                       "power-of-two scales"):
        norm_mlir.quantize(y, "nvfp4", scale_rounding="up")
    with pytest.raises(ValueError, match="global_scale is for nvfp4, not "
                       "mxfp4"):
        norm_mlir.quantize(y, "mxfp4", global_scale=2.0)
    with pytest.raises(ValueError, match="global_scale must be one number"):
        norm_mlir.quantize(y, "nvfp4", global_scale=[1.0, 2.0])
    with pytest.raises(ValueError, match="scale_layout must be 'row_major' "
                       "or 'swizzled_128x4'"):
        norm_mlir.quantize(y, "mxfp4", scale_layout="tiled")
    with pytest.raises(ValueError, match="scale_rounding must be 'floor' or "
                       "'up'"):
        norm_mlir.quantize(y, "mxfp8", scale_rounding="ceil")
    with pytest.raises(ValueError, match="scale_layout are for the "
                       "block-scaled formats"):
        norm_mlir.quantize(y, "fp8", scale_layout="swizzled_128x4")
    with pytest.raises(TypeError, match="mxfp8, fp8_1x128, mxfp4, nvfp4"):
        norm_mlir.quantize(y, "fp4")
    with pytest.raises(TypeError, match="float64 input cannot be quantized"):
        norm_mlir.quantize(y.astype(np.float64), "nvfp4")
    with pytest.raises(TypeError, match="unknown quant keys"):
        norm_mlir.rms_norm(y, (96,), quant={"dtype": "mxfp4", "layout": 1})


@pytest.mark.parametrize("quant,message", [
    ({"dtype": "f4E2M1FN", "group_size": 32},
     "f4E2M1FN needs block scales"),
    ({"dtype": "f8E4M3FN", "scales_dtype": "f8E4M3FN", "group_size": 16},
     "no block-scaled form has f8E4M3FN values with f8E4M3FN scales"),
    ({"dtype": "i8", "scales_dtype": "f8E8M0FNU", "group_size": 32},
     "no block-scaled form has i8 values"),
    ({"dtype": "f4E2M1FN", "scales_dtype": "f8E4M3FN", "group_size": 16},
     "NVFP4 \\(f8E4M3FN scales\\) needs global_scale"),
    ({"dtype": "f4E2M1FN", "scales_dtype": "f8E8M0FNU", "group_size": 32,
      "global_scale": True}, "global_scale is for NVFP4"),
    ({"dtype": "f4E2M1FN", "scales_dtype": "f8E8M0FNU", "group_size": 32,
      "static": True}, "block scales are dynamic"),
    ({"dtype": "f8E4M3FN", "scales_dtype": "f8E8M0FNU", "group_size": 32,
      "scale_ub": 1.0}, "scale_ub does not apply to block scales"),
    ({"dtype": "f8E4M3FN", "group_size": 32, "scale_rounding": "up"},
     "scale_rounding is for block scales"),
    ({"dtype": "f4E2M1FN", "scales_dtype": "f8E4M3FN", "group_size": 16,
      "global_scale": True, "scale_rounding": "up"},
     "scale_rounding is for f8E8M0FNU scales"),
    ({"dtype": "f4E2M1FN", "scales_dtype": "f8E8M0FNU", "group_size": 32,
      "scale_layout": "column_major"}, "unknown scale_layout"),
    ({"dtype": "f4E2M1FN", "scales_dtype": "bf16", "group_size": 32},
     "unsupported scales dtype 'bf16'"),
])
def test_kernel_spec_errors(quant, message):
    """KernelSpec (norm-aot's and the ready-made ops' kernels) rejects
    every combination norm.quantize's verifier would."""
    with pytest.raises(ValueError, match=message):
        _kernels.KernelSpec("quantize", (None, 64), "bf16", quant=quant)


def test_kernel_spec_swizzled_shapes():
    """Swizzled scales: a flat static size when the leading dims are
    static, dynamic otherwise; the module verifies either way."""
    quant = {"dtype": "f4E2M1FN", "scales_dtype": "f8E4M3FN",
             "group_size": 16, "global_scale": True,
             "scale_layout": "swizzled_128x4"}
    static = _kernels.KernelSpec("rms_norm", (2, 3, 256), "bf16",
                                 weight="f32", residual=True, quant=quant)
    assert static.scales_shape == (128 * 16,)
    dynamic = _kernels.KernelSpec("rms_norm", (None, 256), "bf16",
                                  quant=quant)
    assert dynamic.scales_shape == (None,)
    for spec in (static, dynamic):
        names = [a[0] for a in spec.arguments()]
        assert names[-4 if spec.residual else -3:] == (
            ["global_scale", "q", "scales", "residual_out"] if spec.residual
            else ["global_scale", "q", "scales"])
        norm_mlir.verify(spec.source())
