#!/usr/bin/env python3
"""CPU execution tests of the gradient ops: case generator, checker and the
finite-difference check of their reference.

  grad_exec.py gen SUITE OUT.mlir REF.npz
      One module: `@case_K` holds one gradient op (layer_norm_grad,
      rms_norm_grad or dyt_grad); `@main` builds the inputs as constants,
      calls every case and prints every result (16-bit results widened to
      f32, f64 results with printMemrefF64). REF.npz holds the f64
      reference of every printed output and its element type.
  grad_exec.py check REF.npz OUTPUT.txt
      Compares every printed output with its reference under the bound of
      its element type (test/tools/normref.py: metric and BOUNDS). Prints
      `PASS: case_K: <description>; err E` or `FAIL: ...` per case, then
      `all N cases passed` (exit 0) or `M of N cases FAILED` (exit 1).
  grad_exec.py names SUITE
      Prints `case_K: <description>` per case.
  grad_exec.py fdcheck
      Checks the f64 reference itself against central finite differences of
      the forward reference (normref.reference) on random cases of every op
      and parameter set: prints one line per op and `finite differences
      agree` (exit 0) or the worst mismatch (exit 1).

Reference (docs/Ops.md#gradient-ops): in f64 from the inputs as given (the
statistics as the op receives them, in the compute type); xh = (x - mean)
* rstd or x * rstd, g = dy * (weight + weight_offset); layer_norm dx =
rstd * (g - mean(g) - xh * mean(g * xh)); rms_norm dx = rstd * (g - xh *
mean(g * xh)); dweight = column sums of dy * xh; dbias = column sums of dy;
DyT with t = tanh(alpha x): dx = dy * w * alpha * (1 - t^2), dweight =
column sums of dy * t, dalpha = the sum of dy * w * x * (1 - t^2). Results
are rounded to their types.

Suites: grad_f32, grad_bf16, grad_f16, grad_f64: op x {weight and bias,
weight, none} x {static, dynamic rows}, plus rms_norm with a scalar weight
and a weight_offset, a 1000-wide row, 150, 129 and 130 rows (several
blocks of the row loops' parameter sums, the last one partial), rows of 2^20
elements and inputs with a common offset of 1000. train_f32, train_bf16, train_f16, train_f64: a
training step, layer_norm / rms_norm with `return_stats` (x {parameters,
none} x {static, dynamic rows} x {residual, none}, a 3-D input normalized
over two dims, a weight_offset, a long odd row, a long residual row, a single row,
all dims normalized, a [2, 70, 48] input) whose
y, residual_out and statistics are checked against the f64 forward and
whose statistics feed the gradient op, checked as above. Inputs have a
common offset of 3.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import normref  # noqa: E402


def ttype(shape, t):
    if len(shape) == 0:
        return "tensor<%s>" % t
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), t)


def literal(values, shape, t):
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if flat.size > 4096:
        # Large inputs as a hex blob of the element type's bytes (little
        # endian), which parses fast.
        raw = flat.astype(normref.np_dtype(t)).tobytes()
        return 'arith.constant dense<"0x%s"> : %s' % (raw.hex().upper(),
                                                      ttype(shape, t))

    def nested(a, s):
        if len(s) == 0:
            return repr(float(a[0]))
        if len(s) == 1:
            return "[" + ", ".join(repr(float(v)) for v in a) + "]"
        step = int(np.prod(s[1:]))
        return "[" + ", ".join(nested(a[i * step:(i + 1) * step], s[1:])
                               for i in range(s[0])) + "]"
    return "arith.constant dense<%s> : %s" % (nested(flat, list(shape)),
                                              ttype(shape, t))


def compute_type(t):
    return "f64" if t == "f64" else "f32"


def reference(op, dy, x, stats, w, offset, alpha, has_bias):
    """The f64 gradients: (dx, dweight or None, dbias or None, dalpha or
    None)."""
    m, n = x.shape
    if op == "dyt":
        wv = np.ones(n) if w is None else (w.reshape(-1) if w.size == n
                                           else np.full(n, w.reshape(-1)[0]))
        t = np.tanh(alpha * x)
        slope = 1.0 - t * t
        dx = dy * wv * alpha * slope
        dw = None if w is None else (dy * t).sum(axis=0)
        db = dy.sum(axis=0) if has_bias else None
        da = (dy * wv * x * slope).sum()
        return dx, dw, db, da
    if op == "layer_norm":
        mean, rstd = stats
        xh = (x - mean[:, None]) * rstd[:, None]
    else:
        (rstd,) = stats
        xh = x * rstd[:, None]
    if w is None:
        wv = np.ones(n)
    elif w.size == 1:
        wv = np.full(n, w.reshape(-1)[0] + offset)
    else:
        wv = w + offset
    g = dy * wv
    inner = g - xh * (g * xh).mean(axis=1, keepdims=True)
    if op == "layer_norm":
        inner = inner - g.mean(axis=1, keepdims=True)
    dx = rstd[:, None] * inner
    dw = None
    if w is not None:
        # A scalar weight ([1]) gets the sum over every element.
        dw = (dy * xh).sum(axis=0) if w.size == n else \
            np.array([(dy * xh).sum()]).reshape(w.shape)
    db = dy.sum(axis=0) if has_bias else None
    return dx, dw, db, None


def forward(op, x, w, b, alpha, offset, eps):
    """Forward reference in f64 with the statistics recomputed (for the
    finite-difference check)."""
    if op == "dyt":
        y, _ = normref.reference("dyt", x, "f64", weight=w, weight_type="f64",
                                 bias=b, bias_type="f64", alpha=alpha)
        return y
    if op == "layer_norm":
        mu = x.mean(axis=1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
        y = (x - mu) / np.sqrt(var + eps)
    else:
        y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    if w is not None:
        y = y * ((w.reshape(-1) if w.size > 1 else w.reshape(-1)[0]) + offset)
    if b is not None:
        y = y + b
    return y


def fdcheck():
    rng = np.random.default_rng(7)
    worst = 0.0
    for op in ("layer_norm", "rms_norm", "dyt"):
        for params in ("wb", "w", "none", "scalar"):
            if params == "scalar" and op != "rms_norm":
                continue
            m, n, eps, h = 3, 7, 1e-5, 1e-6
            x = rng.standard_normal((m, n))
            dy = rng.standard_normal((m, n))
            w = None if params == "none" else (
                rng.standard_normal(1) if params == "scalar"
                else 1.0 + 0.25 * rng.standard_normal(n))
            b = rng.standard_normal(n) if params == "wb" and op != "rms_norm" \
                else None
            offset = 0.5 if op == "rms_norm" and w is not None else 0.0
            alpha = 0.7

            def loss(x_, w_=w, b_=b, a_=alpha):
                return float((forward(op, x_, w_, b_, a_, offset, eps)
                              * dy).sum())
            if op == "layer_norm":
                mu = x.mean(axis=1)
                stats = (mu, 1 / np.sqrt(((x - mu[:, None]) ** 2).mean(axis=1)
                                         + eps))
            elif op == "rms_norm":
                stats = (1 / np.sqrt((x * x).mean(axis=1) + eps),)
            else:
                stats = ()
            dx, dw, db, da = reference(op, dy, x, stats, w, offset, alpha,
                                       b is not None)

            def numeric(f, v):
                grad = np.zeros_like(v)
                for i in np.ndindex(v.shape):
                    e = np.zeros_like(v)
                    e[i] = h
                    grad[i] = (f(v + e) - f(v - e)) / (2 * h)
                return grad
            checks = [("dx", dx, numeric(lambda v: loss(v), x))]
            if w is not None:
                checks.append(("dweight", dw,
                               numeric(lambda v: loss(x, w_=v), w)))
            if b is not None:
                checks.append(("dbias", db,
                               numeric(lambda v: loss(x, b_=v), b)))
            if op == "dyt":
                checks.append(("dalpha", np.array(da), numeric(
                    lambda v: loss(x, a_=float(v)), np.array(alpha))))
            for name, analytic, num in checks:
                err = np.max(np.abs(np.asarray(analytic).reshape(-1)
                                    - num.reshape(-1))) / \
                    (np.max(np.abs(num)) + 1e-12)
                worst = max(worst, err)
                if err > 1e-6:
                    print("MISMATCH: %s %s %s: relative %.3g"
                          % (op, params, name, err))
                    return 1
        print("%s: reference gradients match finite differences" % op)
    print("finite differences agree (worst relative %.2g)" % worst)
    return 0


# Rows longer than this repeat a random stretch of PERIOD elements (a prime,
# so the repeats fall across every block and vector boundary): the sums over
# them are as long as with fresh values, and the modules, binaries and
# references of the ahead-of-time GPU check (scripts/gpu-check.sh) compress.
LONG_ROW = 1 << 14
PERIOD = 1021


def normal(rng, shape):
    """Standard normal values of `shape`; rows (last dim) longer than
    LONG_ROW repeat their first PERIOD values."""
    shape = tuple(np.atleast_1d(shape))
    n = shape[-1]
    if n <= LONG_ROW:
        return rng.standard_normal(shape)
    stretch = rng.standard_normal(shape[:-1] + (PERIOD,))
    return np.tile(stretch, (1,) * (len(shape) - 1) + (-(-n // PERIOD),))[
        ..., :n]


class Case:
    def __init__(self, description, text, inputs, outputs):
        self.description = description
        self.text = text          # (header, body) of @case_K
        self.inputs = inputs      # [(shape, type, values)]
        self.outputs = outputs    # [(shape, type, reference)]


def make_case(seed, op, t, shape, params, dynamic=False, offset=0.0,
              shift=0.0, alpha=0.8):
    rng = np.random.default_rng(seed)
    m, n = shape
    ct = compute_type(t)
    x = normref.rnd(shift + normal(rng, shape), t)
    dy = normref.rnd(normal(rng, shape), t)
    w = None
    if params in ("wb", "w"):
        w = normref.rnd(1.0 + 0.25 * normal(rng, n), t)
    elif params == "scalar":
        w = normref.rnd(np.array([1.5]), t)
    has_bias = params == "wb" and op != "rms_norm"
    description_alpha = (", alpha %g" % alpha) if alpha != 0.8 else ""
    alpha = float(normref.rnd(alpha, t))
    eps = 1e-5
    stats = ()
    if op == "layer_norm":
        mu = x.mean(axis=1)
        stats = (normref.rnd(mu, ct),
                 normref.rnd(1 / np.sqrt(((x - mu[:, None]) ** 2).mean(axis=1)
                                         + eps), ct))
    elif op == "rms_norm":
        stats = (normref.rnd(1 / np.sqrt((x * x).mean(axis=1) + eps), ct),)
    dx, dw, db, da = reference(op, dy, x, stats, w, offset, alpha, has_bias)

    # dynamic: the rows; "all": the rows and the row length.
    rows = "?" if dynamic else m
    cols = "?" if dynamic == "all" else n
    xt = ttype((rows, cols), t)
    st = ttype((rows,), ct)
    args = ["%%dy: %s" % xt, "%%x: %s" % xt]
    inputs = [((m, n), t, dy), ((m, n), t, x)]
    optypes = [xt, xt]
    operands = ""
    if op == "layer_norm":
        args += ["%%mean: %s" % st, "%%rstd: %s" % st]
        inputs += [((m,), ct, stats[0]), ((m,), ct, stats[1])]
        optypes += [st, st]
        operands += " mean(%mean) rstd(%rstd)"
    elif op == "rms_norm":
        args.append("%%rstd: %s" % st)
        inputs.append(((m,), ct, stats[0]))
        optypes.append(st)
        operands += " rstd(%rstd)"
    else:
        args.append("%%alpha: tensor<%s>" % t)
        inputs.append(((), t, np.array(alpha)))
        optypes.append("tensor<%s>" % t)
        operands += " alpha(%alpha)"
    outputs = [((m, n), t, normref.rnd(dx, t))]
    restypes = [xt]
    if w is not None:
        wt = ttype(("?",) if dynamic == "all" and params != "scalar"
                   else w.shape, t)
        args.append("%%w: %s" % wt)
        inputs.append((w.shape, t, w))
        optypes.append(wt)
        operands += " weight(%w)"
        restypes.append(wt)
        outputs.append((w.shape, t, normref.rnd(dw, t)))
    if has_bias:
        bt = ttype((cols,), t)
        restypes.append(bt)
        outputs.append(((n,), t, normref.rnd(db, t)))
    if op == "dyt":
        restypes.append("tensor<%s>" % t)
        outputs.append(((), t, normref.rnd(np.array(da), t)))
    attrs = []
    if has_bias:
        attrs.append("has_bias")
    if offset:
        attrs.append("weight_offset = %r : f32" % offset)
    attr = (" {%s}" % ", ".join(attrs)) if attrs else ""
    names = ", ".join("%%r%d" % i for i in range(len(restypes)))
    body = "  %s = norm.%s_grad %%dy, %%x%s%s : (%s) -> (%s)\n  return %s : %s" % (
        names, op, operands, attr, ", ".join(optypes), ", ".join(restypes),
        names, ", ".join(restypes))
    header = "(%s) -> (%s)" % (", ".join(args), ", ".join(restypes))
    desc = "%s_grad %s [%d,%d] %s%s%s%s" % (
        op, t, m, n, {"wb": "weight+bias", "w": "weight", "none": "no params",
                      "scalar": "scalar weight"}[params],
        {False: "", True: ", dynamic rows",
         "all": ", dynamic dims"}[dynamic],
        (", weight_offset %g" % offset) if offset else "",
        (", x offset %g" % shift) if shift else "")
    if op == "dyt":
        desc += description_alpha
    return Case(desc, (header, body), inputs, outputs)


def make_train_case(seed, op, t, shape, params, dynamic=False,
                    residual=False, axis=-1, offset=0.0, with_grad=True):
    """A training step: the forward with `return_stats` (and a residual)
    whose statistics feed the gradient op. Outputs: y, [residual_out],
    [mean], rstd, dx, [dweight], [dbias]; references from the f64 forward
    and from the f64 gradient of the rounded statistics. Without
    `with_grad`, the forward alone (y, [residual_out], [mean], rstd)."""
    rng = np.random.default_rng(seed)
    rank = len(shape)
    ax = axis + rank if axis < 0 else axis
    lead = tuple(shape[:ax])
    ct = compute_type(t)
    # A common offset: the statistics must stay accurate for it.
    x = normref.rnd(3.0 + normal(rng, shape), t)
    r = normref.rnd(normal(rng, shape), t) if residual else None
    dy = normref.rnd(normal(rng, shape), t)
    n = int(np.prod(shape[ax:]))
    w = b = None
    if params in ("wb", "w"):
        w = normref.rnd(1.0 + 0.25 * normal(rng, shape[ax:]), t)
    if params == "wb" and op == "layer_norm":
        b = normref.rnd(0.1 * normal(rng, shape[ax:]), t)
    eps = 1e-5 if op == "layer_norm" else 1e-6
    y, s = normref.reference(op, x, t, axis=ax, weight=w, weight_type=t,
                             bias=b, bias_type=t, residual=r, eps=eps,
                             weight_offset=offset)
    s = x if s is None else s
    rows = s.reshape(-1, n)
    if op == "layer_norm":
        mu = rows.mean(axis=1)
        stats = (mu, 1 / np.sqrt(((rows - mu[:, None]) ** 2).mean(axis=1)
                                 + eps))
    else:
        stats = (1 / np.sqrt((rows * rows).mean(axis=1) + eps),)
    stats = tuple(normref.rnd(v, ct) for v in stats)
    dx, dw, db, _ = reference(op, dy.reshape(-1, n), rows, stats,
                              None if w is None else w.reshape(-1), offset,
                              0.0, b is not None)

    dims = ["?" if dynamic and d == 0 else str(v) for d, v in
            enumerate(shape)]
    xt = "tensor<%sx%s>" % ("x".join(dims), t)
    st = ("tensor<%sx%s>" % ("x".join(dims[:ax]), ct)) if ax else \
        "tensor<%s>" % ct
    args = ["%%dy: %s" % xt, "%%x: %s" % xt]
    inputs = [(shape, t, dy), (shape, t, x)]
    fwd_types = [xt]
    fwd_ops = ""
    if r is not None:
        args.append("%%r: %s" % xt)
        inputs.append((shape, t, r))
    if w is not None:
        wt = ttype(w.shape, t)
        args.append("%%w: %s" % wt)
        inputs.append((w.shape, t, w))
        fwd_types.append(wt)
        fwd_ops += " weight(%w)"
    if b is not None:
        bt = ttype(b.shape, t)
        args.append("%%b: %s" % bt)
        inputs.append((b.shape, t, b))
        fwd_types.append(bt)
        fwd_ops += " bias(%b)"
    if r is not None:
        fwd_types.append(xt)
        fwd_ops += " residual(%r)"
    fwd_res = [("%y", xt)]
    outputs = [(shape, t, y)]
    if r is not None:
        fwd_res.append(("%s", xt))
        outputs.append((shape, t, s))
    if op == "layer_norm":
        fwd_res.append(("%mean", st))
        outputs.append((lead, ct, stats[0].reshape(lead)))
    fwd_res.append(("%rstd", st))
    outputs.append((lead, ct, stats[-1].reshape(lead)))
    attrs = ["return_stats"]
    if ax != rank - 1:
        attrs.append("axis = %d : i64" % ax)
    if offset:
        attrs.append("weight_offset = %r : f32" % offset)
    lines = ["  %s = norm.%s %%x%s {%s} : (%s) -> (%s)" % (
        ", ".join(v for v, _ in fwd_res), op, fwd_ops, ", ".join(attrs),
        ", ".join([xt] + fwd_types[1:]), ", ".join(ty for _, ty in fwd_res))]
    if not with_grad:
        lines.append("  return %s : %s" % (
            ", ".join(v for v, _ in fwd_res),
            ", ".join(ty for _, ty in fwd_res)))
        header = "(%s) -> (%s)" % (", ".join(args[1:]),
                                   ", ".join(ty for _, ty in fwd_res))
        desc = "%s return_stats %s [%s] %s%s%s%s%s" % (
            op, t, ",".join(str(d) for d in shape),
            {"wb": "weight+bias", "w": "weight", "none": "no params"}[params],
            ", residual" if residual else "",
            ", dynamic rows" if dynamic else "",
            (", axis %d" % ax) if ax != rank - 1 else "",
            (", weight_offset %g" % offset) if offset else "")
        return Case(desc, (header, "\n".join(lines)), inputs[1:],
                    outputs[:len(fwd_res)])
    # The gradient of the normalized input (the residual sum).
    xin = "%s" if r is not None else "%x"
    g_ops = " mean(%mean) rstd(%rstd)" if op == "layer_norm" else \
        " rstd(%rstd)"
    g_types = [xt, xt] + [st] * (2 if op == "layer_norm" else 1)
    g_res = [("%dx", xt)]
    outputs.append((shape, t, normref.rnd(dx.reshape(shape), t)))
    if w is not None:
        g_ops += " weight(%w)"
        g_types.append(ttype(w.shape, t))
        g_res.append(("%dw", ttype(w.shape, t)))
        outputs.append((w.shape, t, normref.rnd(dw.reshape(w.shape), t)))
    if b is not None:
        g_res.append(("%db", ttype(b.shape, t)))
        outputs.append((b.shape, t, normref.rnd(db.reshape(b.shape), t)))
    g_attrs = []
    if b is not None:
        g_attrs.append("has_bias")
    if ax != rank - 1:
        g_attrs.append("axis = %d : i64" % ax)
    if offset:
        g_attrs.append("weight_offset = %r : f32" % offset)
    lines.append("  %s = norm.%s_grad %%dy, %s%s%s : (%s) -> (%s)" % (
        ", ".join(v for v, _ in g_res), op, xin, g_ops,
        (" {%s}" % ", ".join(g_attrs)) if g_attrs else "",
        ", ".join(g_types), ", ".join(ty for _, ty in g_res)))
    res = fwd_res + g_res
    lines.append("  return %s : %s" % (", ".join(v for v, _ in res),
                                        ", ".join(ty for _, ty in res)))
    header = "(%s) -> (%s)" % (", ".join(args), ", ".join(ty for _, ty in res))
    desc = "%s return_stats -> %s_grad %s [%s] %s%s%s%s%s" % (
        op, op, t, ",".join(str(d) for d in shape),
        {"wb": "weight+bias", "w": "weight", "none": "no params"}[params],
        ", residual" if residual else "",
        ", dynamic rows" if dynamic else "",
        (", axis %d" % ax) if ax != rank - 1 else "",
        (", weight_offset %g" % offset) if offset else "")
    return Case(desc, (header, "\n".join(lines)), inputs, outputs)


def train_suite(t):
    cases = []
    seed = {"f32": 500, "bf16": 600, "f16": 700, "f64": 800}[t]
    for op in ("layer_norm", "rms_norm"):
        for params in ("wb", "none"):
            if op == "rms_norm" and params == "wb":
                params = "w"
            for dynamic in (False, True):
                for residual in (False, True):
                    seed += 1
                    cases.append(make_train_case(seed, op, t, (6, 96), params,
                                                 dynamic, residual))
    cases.append(make_train_case(seed + 1, "layer_norm", t, (2, 3, 40), "wb",
                                 axis=1))
    cases.append(make_train_case(seed + 2, "rms_norm", t, (5, 64), "w",
                                 offset=1.0))
    cases.append(make_train_case(seed + 3, "layer_norm", t, (1, 4099), "wb",
                                 dynamic=True))
    cases.append(make_train_case(seed + 4, "rms_norm", t, (3, 1000), "w",
                                 residual=True))
    cases.append(make_train_case(seed + 5, "rms_norm", t, (1, 256), "w"))
    cases.append(make_train_case(seed + 6, "layer_norm", t, (4, 16), "wb",
                                 axis=0))
    cases.append(make_train_case(seed + 7, "layer_norm", t, (2, 70, 48), "wb",
                                 dynamic=True))
    # Rows of 2048 and more: the CPU row loops' blocks have 256 rows; two
    # blocks, the last one partial.
    cases.append(make_train_case(seed + 8, "layer_norm", t, (258, 2048), "wb"))
    cases.append(make_train_case(seed + 9, "rms_norm", t, (260, 2048), "w",
                                 dynamic=True))
    return cases


def stats_suite(t):
    """The forward with `return_stats` alone, in the shapes every lowering
    treats differently: rows of a warp or a block, rows sharing a warp
    (N = 64), few long rows (split over several blocks on the GPU), an odd N,
    dynamic rows, a residual, several normalized dims."""
    cases = []
    seed = {"f32": 900, "bf16": 1000, "f16": 1100, "f64": 1200}[t]
    for op in ("layer_norm", "rms_norm"):
        params = "wb" if op == "layer_norm" else "w"
        for dynamic in (False, True):
            for residual in (False, True):
                seed += 1
                cases.append(make_train_case(seed, op, t, (6, 96), params,
                                             dynamic, residual,
                                             with_grad=False))
    for k, (op, shape, params, kwargs) in enumerate([
            ("layer_norm", (2, 3, 40), "wb", {"axis": 1}),
            ("rms_norm", (5, 64), "w", {"offset": 1.0}),
            ("layer_norm", (1, 4099), "wb", {"dynamic": True}),
            ("rms_norm", (3, 1000), "none", {"residual": True}),
            ("layer_norm", (33, 64), "wb", {}),
            ("rms_norm", (2, 70, 48), "w", {"dynamic": True}),
            ("layer_norm", (4, 65536), "wb", {}),
            ("rms_norm", (8, 32768), "w", {"residual": True})]):
        cases.append(make_train_case(seed + 1 + k, op, t, shape, params,
                                     with_grad=False, **kwargs))
    return cases


def suite(name):
    # The GPU kernels take a weight row (not a scalar weight): the grad
    # suites without their scalar-weight case.
    if name.startswith("gradgpu_"):
        return [c for c in suite("grad_" + name.split("_")[1])
                if "scalar" not in c.description]
    if name.startswith("train_"):
        return train_suite(name.split("_")[1])
    if name.startswith("stats_"):
        return stats_suite(name.split("_")[1])
    t = name.split("_")[1]
    cases = []
    seed = {"f32": 100, "bf16": 200, "f16": 300, "f64": 400}[t]
    for op in ("layer_norm", "rms_norm", "dyt"):
        for params in ("wb", "w", "none"):
            if op == "rms_norm" and params == "wb":
                continue
            for dynamic in (False, True):
                seed += 1
                cases.append(make_case(seed, op, t, (6, 96), params, dynamic))
    cases.append(make_case(seed + 1, "rms_norm", t, (5, 64), "scalar"))
    cases.append(make_case(seed + 2, "rms_norm", t, (5, 64), "w",
                           offset=1.0))
    cases.append(make_case(seed + 3, "layer_norm", t, (3, 1000), "wb"))
    # Several blocks of 64 rows, the last one partial: the parameter
    # gradients of the row loops are summed over blocks.
    cases.append(make_case(seed + 4, "layer_norm", t, (150, 72), "wb",
                           dynamic=True))
    cases.append(make_case(seed + 5, "rms_norm", t, (129, 40), "w"))
    cases.append(make_case(seed + 9, "dyt", t, (130, 56), "wb",
                           dynamic=True))
    # Large rows (N = 2^20) and a large common offset.
    cases.append(make_case(seed + 6, "layer_norm", t, (1, 1 << 20), "wb"))
    cases.append(make_case(seed + 7, "rms_norm", t, (1, 1 << 20), "w",
                           dynamic=True))
    cases.append(make_case(seed + 8, "layer_norm", t, (8, 512), "wb",
                           shift=1000.0))
    # tanh saturated (alpha x mostly beyond 4): the slope 1 - t^2 is tiny
    # and must keep its relative accuracy, in dx and in dalpha.
    cases.append(make_case(seed + 10, "dyt", t, (4, 200), "wb", shift=2.0,
                           alpha=4.0))
    # A row length known only at run time: the block size chosen there
    # (64 rows, or 256 from 2048 elements on), a masked tail per row.
    cases.append(make_case(seed + 11, "rms_norm", t, (70, 72), "w",
                           dynamic="all"))
    cases.append(make_case(seed + 12, "layer_norm", t, (300, 2100), "wb",
                           dynamic="all"))
    cases.append(make_case(seed + 13, "dyt", t, (65, 100), "wb",
                           dynamic="all"))
    cases.append(make_case(seed + 14, "layer_norm", t, (4, 40), "none",
                           dynamic="all"))
    return cases


def generate(name, out_mlir, out_npz):
    cases = suite(name)
    lines = ["func.func private @printMemrefF32(tensor<*xf32>)",
             "func.func private @printMemrefF64(tensor<*xf64>)"]
    main = ["func.func @main() {"]
    refs = {}
    printed = 0
    for k, case in enumerate(cases):
        header, body = case.text
        lines.append("func.func @case_%d%s {\n%s\n}" % (k, header, body))
        argtypes = header[1:header.index(") -> (")].split(", ")
        argtypes = [a.split(": ", 1)[1] for a in argtypes]
        names = []
        for i, ((shape, t, vals), at) in enumerate(zip(case.inputs, argtypes)):
            v = "%%in_%d_%d" % (k, i)
            main.append("  %s = %s" % (v, literal(vals, shape, t)))
            if at != ttype(shape, t):
                main.append("  %s_c = tensor.cast %s : %s to %s"
                            % (v, v, ttype(shape, t), at))
                v += "_c"
            names.append(v)
        restypes = header[header.index(") -> (") + 6:-1].split(", ")
        outs = ["%%out_%d_%d" % (k, i) for i in range(len(restypes))]
        main.append("  %s = func.call @case_%d(%s) : (%s) -> (%s)" % (
            ", ".join(outs), k, ", ".join(names), ", ".join(argtypes),
            ", ".join(restypes)))
        for o, rt, (shape, t, ref) in zip(outs, restypes, case.outputs):
            v = o
            if t in ("bf16", "f16"):
                wide = rt.replace(t + ">", "f32>")
                main.append("  %s_w = arith.extf %s : %s to %s"
                            % (o, o, rt, wide))
                v, rt = o + "_w", wide
            pt = "f64" if t == "f64" else "f32"
            main.append("  %s_u = tensor.cast %s : %s to tensor<*x%s>"
                        % (o, v, rt, pt))
            main.append("  func.call @printMemref%s(%s_u) : (tensor<*x%s>) "
                        "-> ()" % (pt.upper(), o, pt))
            refs["out_%d" % printed] = np.asarray(ref, dtype=np.float64)
            refs["type_%d" % printed] = np.array(t)
            refs["case_%d" % printed] = np.array(k)
            printed += 1
    main += ["  return", "}"]
    with open(out_mlir, "w") as f:
        f.write("\n".join(lines + main) + "\n")
    refs["count"] = np.array(printed)
    refs["descriptions"] = np.array([c.description for c in cases])
    np.savez(out_npz, **refs)


def check(npz, output):
    data = np.load(npz)
    with open(output) as f:
        printed = normref.parse_printed(f.read())
    count = int(data["count"])
    descriptions = list(data["descriptions"])
    per_case = {}
    for i in range(count):
        k = int(data["case_%d" % i])
        t = str(data["type_%d" % i])
        ref = data["out_%d" % i]
        if i >= len(printed) or isinstance(printed[i][1], str):
            err, why = np.inf, "output %d missing or unreadable" % i
        elif tuple(printed[i][0]) != tuple(ref.shape):
            err, why = np.inf, "output %d shape %s, expected %s" % (
                i, printed[i][0], ref.shape)
        else:
            err, why = normref.compare(printed[i][1], ref)
        ok = normref.within(err, normref.BOUNDS[t])
        prev = per_case.get(k, (True, 0.0, []))
        per_case[k] = (prev[0] and ok, max(prev[1], err),
                       prev[2] + ([] if ok else [why]))
    failed = 0
    for k in sorted(per_case):
        ok, err, whys = per_case[k]
        print("%s: case_%d: %s; err %.3g" % ("PASS" if ok else "FAIL", k,
                                             descriptions[k], err))
        for why in whys:
            print("    %s" % why)
        failed += not ok
    if len(printed) != count:
        print("FAIL: printed %d outputs, expected %d" % (len(printed), count))
        failed += 1
    if failed:
        print("%d of %d cases FAILED" % (failed, len(per_case)))
        return 1
    print("all %d cases passed" % len(per_case))
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "gen":
        generate(argv[2], argv[3], argv[4])
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "names":
        for k, case in enumerate(suite(argv[2])):
            print("case_%d: %s" % (k, case.description))
        return 0
    if len(argv) == 2 and argv[1] == "fdcheck":
        return fdcheck()
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
