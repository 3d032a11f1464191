"""The float64 reference of the norm ops and the error metric of the tests.

Every execution test of norm-mlir compares against what this module computes
and judges with its metric and bounds: the lit suites (test/Integration,
through norm_exec.py, matmul_exec.py, compare-outputs.py and the AOT
checker), pytest (python/tests, whose conftest.py puts this folder on
sys.path) and scripts/gpu-check (its references come from norm_exec.py).
Two C++ drivers of scripts/gpu-check run where there is no Python and mirror
`compare` (exec_main.cpp) and the reference (bench_main.cpp); the lit test
Integration/AOT/gpu-check-driver.test keeps exec_main.cpp in step.

Reference (docs/Ops.md): rounds exactly where the op rounds and
computes everything else in float64. Inputs are values of their element
types; with a residual, s = round_T(x + residual) (correctly rounded) is
normalized and is also the `residual_out` result; the statistics and the
normalization are float64; `cast_mode = final` rounds the result to T once;
`cast_mode = before_weight` computes n_T = round_T(n) and then
y = round_T(round_W(round_W(n_T * w') + b)) with W the widest of T, the
weight type and the bias type (w' = weight + weight_offset, not rounded).

Error metric (docs/Numerics.md#error-metric-and-bounds), per output tensor:
err = max |y - ref| / (|ref| + rms(ref)) over the finite reference entries,
rms over the same entries; y must be NaN exactly where the reference is NaN
and equal to it where either is infinite (else err = inf); an entry whose
denominator is 0 (an all-zero finite reference) counts 0 when y equals it
and inf otherwise. Bounds: f32 and f64 1e-5, f16 2^-9, bf16 2^-6 (2 ulp at
1.0); `within` is false for a NaN error.
"""

import re

import numpy as np

BOUNDS = {"f32": 1e-5, "f64": 1e-5, "f16": 2.0 ** -9, "bf16": 2.0 ** -6}
ELEMENT_TYPES = ("f16", "bf16", "f32", "f64")

# Width order of the element types for W in `before_weight` (f16 and bf16
# never meet: weight and bias are x's type or f32).
_RANK = {"f16": 0, "bf16": 0, "f32": 1, "f64": 2}
# bf16 is added on first use (importing ml_dtypes takes a while, and a
# checker that only compares printed values does not need it).
_NP_TYPES = {"f16": np.dtype(np.float16), "f32": np.dtype(np.float32),
             "f64": np.dtype(np.float64)}


def np_dtype(name):
    """The NumPy dtype of an element type name (f16, bf16, f32, f64)."""
    if name == "bf16" and "bf16" not in _NP_TYPES:
        import ml_dtypes
        _NP_TYPES["bf16"] = np.dtype(ml_dtypes.bfloat16)
    return _NP_TYPES[name]


def type_name(dtype):
    """The element type name of a NumPy dtype (the inverse of np_dtype)."""
    dtype = np.dtype(dtype)
    for name in ELEMENT_TYPES:
        if dtype == np_dtype(name):
            return name
    raise KeyError("no norm element type for %s" % dtype)


def rnd(a, t):
    """Rounds float64 values to element type `t` (a name or a NumPy dtype)
    once, to nearest even, and back to float64."""
    dtype = np_dtype(t) if isinstance(t, str) else np.dtype(t)
    return np.asarray(a, dtype=np.float64).astype(dtype).astype(np.float64)


def widest(*types):
    """The widest of the element type names given (None entries ignored)."""
    return max((t for t in types if t is not None), key=lambda t: _RANK[t])


def reference(op, x, T, axis=-1, weight=None, weight_type=None, bias=None,
              bias_type=None, alpha=None, residual=None, eps=None,
              epsilon_mode=None, weight_offset=None, cast_mode="final"):
    """The float64 reference of one norm op: (y, residual_out), where
    residual_out is None without a residual.

    op: "layer_norm", "rms_norm" or "dyt"; x, residual, weight, bias:
    float64 arrays holding values of their element types (T for x and
    residual, weight_type and bias_type for the others); axis: the first
    normalized dim; alpha: dyt's scalar, as a number; eps: the epsilon the
    op uses (the attribute's value, rounded to its type by the caller; None:
    the op's default); epsilon_mode: rms_norm's mode (None: inside_sqrt);
    weight_offset: rms_norm's, added to the weight without rounding."""
    x = np.asarray(x, dtype=np.float64)
    rank = x.ndim
    axis = axis + rank if axis < 0 else axis
    n = int(np.prod(x.shape[axis:], dtype=np.int64))
    with np.errstate(all="ignore"):
        s = x if residual is None else rnd(x + np.asarray(residual), T)
        rows = s.reshape(-1, n)
        if op == "layer_norm":
            eps = 1e-5 if eps is None else eps
            mu = rows.mean(axis=1, keepdims=True)
            var = ((rows - mu) ** 2).mean(axis=1, keepdims=True)
            normalized = (rows - mu) * (1.0 / np.sqrt(var + eps))
        elif op == "rms_norm":
            eps = 1e-6 if eps is None else eps
            ms = (rows ** 2).mean(axis=1, keepdims=True)
            mode = epsilon_mode or "inside_sqrt"
            if mode == "inside_sqrt":
                r = 1.0 / np.sqrt(ms + eps)
            elif mode == "outside_sqrt":
                r = 1.0 / (np.sqrt(ms) + eps)
            elif mode == "clamp":
                r = 1.0 / np.maximum(np.sqrt(ms), eps)  # NaN propagates
            else:
                raise ValueError("unknown epsilon_mode %r" % mode)
            normalized = rows * r
        elif op == "dyt":
            normalized = np.tanh(float(alpha) * rows)
        else:
            raise ValueError("unknown op %r" % op)
        normalized = normalized.reshape(s.shape)
        w = None
        if weight is not None:
            # weight_offset is added in the compute type: not rounded.
            w = np.asarray(weight, dtype=np.float64) + (weight_offset or 0.0)
            if w.size == 1:
                w = w.reshape(())  # a scalar weight (ScaleNorm's g)
        b = None if bias is None else np.asarray(bias, dtype=np.float64)
        if cast_mode == "final":
            y = normalized
            if w is not None:
                y = y * w
            if b is not None:
                y = y + b
            y = rnd(y, T)
        elif cast_mode == "before_weight":
            W = widest(T, weight_type if weight is not None else None,
                       bias_type if bias is not None else None)
            y = rnd(normalized, T)
            if w is not None:
                y = rnd(y * w, W)
            if b is not None:
                y = rnd(y + b, W)
            y = rnd(y, T)
        else:
            raise ValueError("unknown cast_mode %r" % cast_mode)
    return y, (s if residual is not None else None)


# --------------------------------------------------------------------------
# The reference on typed NumPy arrays (x, weight, bias, residual of their
# element types), as the Python tests call it: k is the number of
# normalized (trailing) dims.
# --------------------------------------------------------------------------


def _typed(op, x, k, weight, bias, residual, **kw):
    def f64(a):
        return None if a is None else np.asarray(a).astype(np.float64)

    def name(a):
        return None if a is None else type_name(a.dtype)

    return reference(op, f64(x), type_name(x.dtype), x.ndim - k,
                     weight=f64(weight), weight_type=name(weight),
                     bias=f64(bias), bias_type=name(bias),
                     residual=f64(residual), **kw)


def layer_norm(x, k, weight=None, bias=None, eps=1e-5, residual=None,
               cast_mode="final"):
    return _typed("layer_norm", x, k, weight, bias, residual, eps=eps,
                  cast_mode=cast_mode)


def rms_norm(x, k, weight=None, eps=1e-6, residual=None, mode="inside_sqrt",
             weight_offset=0.0, cast_mode="final"):
    return _typed("rms_norm", x, k, weight, None, residual, eps=eps,
                  epsilon_mode=mode, weight_offset=weight_offset,
                  cast_mode=cast_mode)


def dyt(x, alpha, weight=None, bias=None, residual=None, cast_mode="final"):
    return _typed("dyt", x, 1, weight, bias, residual, alpha=float(alpha),
                  cast_mode=cast_mode)


# --------------------------------------------------------------------------
# Error metric
# --------------------------------------------------------------------------


def compare(y, ref):
    """(err, why) for one output: the metric of the module docstring; why
    describes the worst entry or the mismatch (None when nothing is finite
    in the reference)."""
    y = np.asarray(y).astype(np.float64).reshape(-1)
    ref = np.asarray(ref).astype(np.float64).reshape(-1)
    if y.size != ref.size:
        return np.inf, "%d values, expected %d" % (y.size, ref.size)
    nan_ref = np.isnan(ref)
    bad = np.nonzero(nan_ref != np.isnan(y))[0]
    if bad.size:
        i = bad[0]
        return np.inf, "NaN mismatch at %d entries, first [%d]: got %.9g, " \
            "ref %.9g" % (bad.size, i, y[i], ref[i])
    bad = np.nonzero((np.isinf(ref) | np.isinf(y)) & ~nan_ref & (y != ref))[0]
    if bad.size:
        i = bad[0]
        return np.inf, "inf mismatch at %d entries, first [%d]: got %.9g, " \
            "ref %.9g" % (bad.size, i, y[i], ref[i])
    fin = np.isfinite(ref)
    if not fin.any():
        return 0.0, None
    r = ref[fin]
    d = np.abs(y[fin] - r)
    rms = np.sqrt(np.mean(r * r))
    den = np.abs(r) + rms
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(den > 0, d / np.where(den > 0, den, 1.0),
                     np.where(d == 0, 0.0, np.inf))
    j = int(np.argmax(e))
    idx = np.nonzero(fin)[0][j]
    return float(e[j]), "worst [%d]: got %.9g, ref %.9g" % (idx, y[idx], r[j])


def error(y, ref):
    """The error of one output (compare without the explanation)."""
    return compare(y, ref)[0]


def within(err, bound):
    """True when err passes bound (a NaN error never does)."""
    return bool(err <= bound)


# --------------------------------------------------------------------------
# mlir-runner output
# --------------------------------------------------------------------------

_HEADER = re.compile(r"Unranked Memref base@ = \S+ rank = (\d+) offset = \d+ "
                     r"sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =")
_SEPARATORS = str.maketrans("[],", "   ")


def parse_printed(text):
    """[(sizes, float64 values)] of every printMemref output in `text`; the
    values are an error message (str) when they do not parse."""
    heads = list(_HEADER.finditer(text))
    out = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        sizes = tuple(int(s) for s in h.group(2).split(",") if s.strip())
        if 0 in sizes:
            # printMemref prints one bogus row for a zero-sized outer dim.
            out.append((sizes, np.zeros(sizes)))
            continue
        tokens = text[h.end():end].translate(_SEPARATORS).split()
        try:
            vals = np.array(tokens, dtype=np.float64)  # nan, -nan, inf too
        except ValueError as e:
            vals = str(e)
        out.append((sizes, vals))
    return out
