"""Float64 NumPy references of the norm ops for the Python tests.

The reference rounds exactly where the op rounds (DESIGN.md section 2): the
residual sum s = round_T(x + residual), the final cast to T, and with
cast_mode = before_weight y = round_T(round_W(round_W(round_T(n) * w') + b))
where W is the widest of T and the weight and bias types. Everything else is
computed in float64.
"""

import numpy as np
import ml_dtypes

DTYPES = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
          "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}
# Error bounds of DESIGN.md section 6 (2 ulp at 1.0 for bf16).
BOUNDS = {"f32": 1e-5, "f64": 1e-5, "f16": 2.0 ** -9, "bf16": 2.0 ** -6}
_WIDTH = {"f16": 0, "bf16": 0, "f32": 1, "f64": 2}


def name_of(dtype):
    for name, d in DTYPES.items():
        if np.dtype(dtype) == d:
            return name
    raise KeyError(dtype)


def rnd(a, dtype):
    """Rounds float64 values to `dtype` once and back to float64."""
    return np.asarray(a, np.float64).astype(dtype).astype(np.float64)


def f64(a):
    return None if a is None else np.asarray(a).astype(np.float64)


def error(y, ref):
    """max |y - ref| / (|ref| + rms(ref)) over the finite reference."""
    y = np.asarray(y).astype(np.float64)
    ref = np.asarray(ref, np.float64)
    if ref.size == 0:
        return 0.0
    rms = np.sqrt(np.mean(ref[np.isfinite(ref)] ** 2)) if ref.size else 0.0
    mask = np.isfinite(ref)
    return float(np.max(np.abs(y[mask] - ref[mask]) / (np.abs(ref[mask]) + rms),
                        initial=0.0))


def _affine(n, x_dtype, weight, bias, cast_mode):
    w = f64(weight) if weight is not None else 1.0
    b = f64(bias) if bias is not None else 0.0
    if cast_mode == "final":
        return rnd(n * w + b, x_dtype)
    types = [name_of(x_dtype)] + [name_of(a.dtype) for a in (weight, bias)
                                  if a is not None]
    wide = DTYPES[max(types, key=_WIDTH.get)]
    y = rnd(rnd(n, x_dtype) * w, wide)
    if bias is not None:
        y = rnd(y + b, wide)
    return rnd(y, x_dtype)


def _stream(x, residual):
    if residual is None:
        return f64(x), None
    s = rnd(f64(x) + f64(residual), x.dtype)
    return s, s


def _axes(x, k):
    return tuple(range(x.ndim - k, x.ndim))


def layer_norm(x, k, weight=None, bias=None, eps=1e-5, residual=None,
               cast_mode="final"):
    s, s_out = _stream(x, residual)
    axes = _axes(x, k)
    mu = s.mean(axis=axes, keepdims=True)
    var = ((s - mu) ** 2).mean(axis=axes, keepdims=True)
    n = (s - mu) / np.sqrt(var + eps)
    return _affine(n, x.dtype, weight, bias, cast_mode), s_out


def rms_norm(x, k, weight=None, eps=1e-6, residual=None, mode="inside_sqrt",
             weight_offset=0.0, cast_mode="final"):
    s, s_out = _stream(x, residual)
    ms = (s ** 2).mean(axis=_axes(x, k), keepdims=True)
    if mode == "inside_sqrt":
        r = 1.0 / np.sqrt(ms + eps)
    elif mode == "outside_sqrt":
        r = 1.0 / (np.sqrt(ms) + eps)
    else:
        r = 1.0 / np.maximum(np.sqrt(ms), eps)
    n = s * r
    w = None
    if weight is not None:
        w = f64(weight) + weight_offset
    y = _affine_offset(n, x.dtype, weight, w, cast_mode)
    return y, s_out


def _affine_offset(n, x_dtype, weight, w, cast_mode):
    if w is None:
        return rnd(n, x_dtype)
    if cast_mode == "final":
        return rnd(n * w, x_dtype)
    wide = DTYPES[max([name_of(x_dtype), name_of(weight.dtype)],
                      key=_WIDTH.get)]
    return rnd(rnd(rnd(n, x_dtype) * w, wide), x_dtype)


def dyt(x, alpha, weight=None, bias=None, residual=None):
    s, s_out = _stream(x, residual)
    n = np.tanh(float(alpha) * s)
    return _affine(n, x.dtype, weight, bias, "final"), s_out
