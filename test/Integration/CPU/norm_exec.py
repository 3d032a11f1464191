#!/usr/bin/env python3
"""CPU execution tests of the norm ops: case generator and result checker.

  norm_exec.py gen SUITE OUT.mlir REF.npz [--expect-cases=TEST]
      Writes one MLIR module with many cases of one suite (`@case_K`, each
      holding one norm op, and `@main`, which builds the inputs as constants,
      calls every case and prints every output with printMemrefF32/F64), and
      REF.npz with the float64 reference (normref.py) of every printed
      output. With --expect-cases, first checks that the suite holds
      exactly the cases the lit test TEST lists (its `PASS: case_K: ...`
      CHECK lines), in order; exits 1 otherwise.
  norm_exec.py check REF.npz OUTPUT.txt
      Parses mlir-runner's printMemref output and compares every output
      tensor with its reference (normref.compare: the error metric, bounds
      and NaN/inf rules of docs/Numerics.md#error-metric-and-bounds). Prints one line per case,
      `PASS: case_K: <description>; max err E (bound B)` or the same with
      `FAIL:` followed by indented reasons (a case whose output is missing
      fails), then one summary line, `all N cases passed` (exit 0) or
      `M of N cases FAILED` (exit 1).
  norm_exec.py names SUITE
      Prints `case_K: <description>` for every case of the suite, the names
      the lit tests list in their CHECK lines.
  norm_exec.py list
      Prints the suite names.

Suites: `<op>_<dtype>` for op in layer_norm, rms_norm, dyt and dtype in f32,
f16, bf16, f64, and `edge`. The data come from a fixed seed, so a suite
always generates the same module.

The reference is test/tools/normref.py's (docs/Ops.md, rounding
exactly where the op rounds): the inputs are values of their element types
and the epsilon is rounded to its attribute's type. Bounds are normref's
(docs/Numerics.md#error-metric-and-bounds: f32 and f64 1e-5, f16 2^-9, bf16 2^-6); some edge
cases carry their own bound (the 1e4-offset LayerNorm rows: 1e-4).
"""

import json
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from normref import BOUNDS, compare, np_dtype, parse_printed, reference, \
    rnd, within  # noqa: E402

SEED = 20240611

BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}

OPS = ("layer_norm", "rms_norm", "dyt")
DTYPES = ("f32", "f16", "bf16", "f64")
SUITES = ["%s_%s" % (op, t) for op in OPS for t in DTYPES] + ["edge"]

# Element counts above which a constant is written as a hex blob.
HEX_THRESHOLD = 4096


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


class Operand:
    """One operand of a case: element type, static shape, dynamic dims."""

    def __init__(self, etype, shape, dyn=()):
        self.etype = etype
        self.shape = tuple(shape)
        self.dyn = tuple(dyn)  # indices of dims written as `?` in @case_K
        self.data = None  # float64 array, exactly representable in etype
        # A Procedure that the module evaluates to `data` at run time (large
        # inputs), or None: `data` is written as a constant.
        self.proc = None

    def static_type(self):
        return tensor_type(self.shape, self.etype)

    def arg_type(self):
        dims = ["?" if i in self.dyn else d for i, d in enumerate(self.shape)]
        return tensor_type(dims, self.etype)


def tensor_type(dims, etype):
    return "tensor<" + "".join("%sx" % d for d in dims) + etype + ">"


class Case:
    def __init__(self, op, T, shape, axis=-1, axis_attr=None, dyn=(0,),
                 residual=False, weight=None, bias=None, alpha=None,
                 weight_shape=None, weight_dyn=(), eps=None, eps_type="f32",
                 eps_mode=None, weight_offset=None, cast_mode="final",
                 compute_type=None, bound=None, note="", gen=None):
        self.op = op
        self.T = T
        self.shape = tuple(shape)
        rank = len(shape)
        self.axis = axis if axis >= 0 else axis + rank
        # The value written in the attribute (None: default -1, omitted).
        self.axis_attr = axis_attr if axis_attr is not None else (
            None if axis == -1 else axis)
        self.dyn = tuple(d if d >= 0 else d + rank for d in dyn)
        self.residual = residual
        self.eps = eps
        self.eps_type = eps_type
        self.eps_mode = eps_mode
        self.weight_offset = weight_offset
        self.cast_mode = cast_mode
        self.compute_type = compute_type
        self.bound = bound if bound is not None else BOUNDS[T]
        self.note = note
        self.gen = gen  # optional callable(case, rng) filling the data
        norm_shape = self.shape[self.axis:]
        self.x = Operand(T, self.shape, self.dyn)
        self.r = Operand(T, self.shape, self.dyn) if residual else None
        wshape = norm_shape if weight_shape is None else weight_shape
        self.w = Operand(weight, wshape, weight_dyn) if weight else None
        self.b = Operand(bias, norm_shape, weight_dyn) if bias else None
        self.a = None
        if op == "dyt":
            aty, ashape, _ = alpha
            self.a = Operand(aty, ashape)
        self.alpha_value = alpha[2] if alpha else None

    def operands(self):
        """(keyword, operand) in the op's operand order."""
        out = [("x", self.x)]
        for kw, opd in (("alpha", self.a), ("weight", self.w),
                        ("bias", self.b), ("residual", self.r)):
            if opd is not None:
                out.append((kw, opd))
        return out

    def describe(self):
        parts = [self.op, self.T,
                 tensor_type(["?" if i in self.dyn else d
                              for i, d in enumerate(self.shape)], self.T)]
        if self.axis != len(self.shape) - 1:
            parts.append("axis=%d" % (self.axis - len(self.shape)))
        if self.a is not None:
            parts.append("alpha:%s" % self.a.arg_type())
        if self.w is not None:
            parts.append("w:%s" % self.w.arg_type())
        if self.b is not None:
            parts.append("b:%s" % self.b.arg_type())
        if self.r is not None:
            parts.append("residual")
        if self.eps is not None:
            parts.append("eps=%g:%s" % (self.eps, self.eps_type))
        if self.eps_mode:
            parts.append(self.eps_mode)
        if self.weight_offset is not None:
            parts.append("offset=%g" % self.weight_offset)
        if self.cast_mode != "final":
            parts.append(self.cast_mode)
        if self.compute_type:
            parts.append("compute=%s" % self.compute_type)
        if self.note:
            parts.append("[%s]" % self.note)
        return " ".join(parts)

    # ----------------------------------------------------------------- data
    def fill(self, rng):
        rows = int(np.prod(self.shape[:self.axis], dtype=np.int64))
        n = int(np.prod(self.shape[self.axis:], dtype=np.int64))
        # Non-zero mean, rows of different scales (so that `clamp` and a
        # large epsilon matter in some rows).
        scales = np.array([1.0, 0.05, 4.0, 0.5])[np.arange(rows) % 4]
        x = rng.normal(0.5, 1.5, (rows, n)) * scales[:, None]
        self.x.data = rnd(x.reshape(self.shape), self.T)
        if self.r is not None:
            r = rng.normal(-0.25, 1.0, (rows, n)) * scales[:, None]
            self.r.data = rnd(r.reshape(self.shape), self.T)
        if self.w is not None:
            center = 0.0 if self.weight_offset else 1.0
            w = center + rng.normal(0.0, 0.3, self.w.shape)
            self.w.data = rnd(w, self.w.etype)
        if self.b is not None:
            self.b.data = rnd(rng.normal(0.0, 0.2, self.b.shape),
                              self.b.etype)
        if self.a is not None:
            self.a.data = rnd(np.full(self.a.shape, self.alpha_value),
                              self.a.etype)
        if self.gen is not None:
            self.gen(self, rng)

    # ------------------------------------------------------------ reference
    def eps_value(self):
        if self.eps is None:
            return 1e-5 if self.op == "layer_norm" else 1e-6
        return float(rnd(self.eps, self.eps_type))

    def reference(self):
        """The float64 reference of every output: [(name, array)]."""
        opd = {kw: o for kw, o in self.operands()}

        def data(kw):
            return opd[kw].data if kw in opd else None

        def etype(kw):
            return opd[kw].etype if kw in opd else None

        y, s = reference(
            self.op, self.x.data, self.T, self.axis, weight=data("weight"),
            weight_type=etype("weight"), bias=data("bias"),
            bias_type=etype("bias"), residual=data("residual"),
            alpha=float(self.a.data.reshape(-1)[0]) if self.a else None,
            eps=self.eps_value() if self.op != "dyt" else None,
            epsilon_mode=self.eps_mode, weight_offset=self.weight_offset,
            cast_mode=self.cast_mode)
        outs = [("y", y)]
        if s is not None:
            outs.append(("residual_out", s))
        return outs

    # ----------------------------------------------------------------- MLIR
    def attr_dict(self):
        attrs = []
        if self.eps is not None:
            attrs.append("epsilon = %s : %s" % (flit(self.eps),
                                                 self.eps_type))
        if self.axis_attr is not None:
            attrs.append("axis = %d : i64" % self.axis_attr)
        if self.eps_mode:
            attrs.append("epsilon_mode = #norm<epsilon_mode %s>" %
                         self.eps_mode)
        if self.weight_offset is not None:
            attrs.append("weight_offset = %s : f32" %
                         flit(self.weight_offset))
        if self.cast_mode != "final":
            attrs.append("cast_mode = #norm<cast_mode %s>" % self.cast_mode)
        if self.compute_type:
            attrs.append("compute_type = %s" % self.compute_type)
        return (" {" + ", ".join(attrs) + "}") if attrs else ""

    def result_types(self):
        t = self.x.arg_type()
        return [t, t] if self.r is not None else [t]

    def emit_func(self, k):
        ops = self.operands()
        names = {"x": "%x", "alpha": "%a", "weight": "%w", "bias": "%b",
                 "residual": "%r"}
        args = ", ".join("%s: %s" % (names[kw], o.arg_type()) for kw, o in ops)
        res = self.result_types()
        res_s = res[0] if len(res) == 1 else "(%s)" % ", ".join(res)
        kws = "".join(" %s(%s)" % (kw, names[kw]) for kw, _ in ops[1:])
        types = ", ".join(o.arg_type() for _, o in ops)
        results = "%y" if len(res) == 1 else "%y, %s"
        lines = [
            "// case %d: %s" % (k, self.describe()),
            "func.func @case_%d(%s) -> %s {" % (k, args, res_s),
            "  %s = norm.%s %%x%s%s" % (results, self.op, kws,
                                       self.attr_dict()),
            "       : (%s) -> %s" % (types, res_s),
            "  return %s : %s" % (results, ", ".join(res)),
            "}",
        ]
        return "\n".join(lines)


# --------------------------------------------------------------------------
# MLIR literals
# --------------------------------------------------------------------------


def flit(v):
    """A float literal MLIR parses to exactly `v` (finite)."""
    s = repr(float(v))
    if "e" in s and "." not in s:
        s = s.replace("e", ".0e")
    return s


def hex_bits(v, etype):
    bits = BITS[etype]
    u = np.array([v]).astype(np_dtype(etype)).view(UINT[bits])[0]
    return "0x%0*X" % (bits // 4, int(u))


def elem_lit(v, etype):
    return flit(v) if np.isfinite(v) else hex_bits(v, etype)


def dense_lit(data, etype):
    """The `dense<...>` attribute of a float64 array of etype values."""
    if data.size == 0:
        return "dense<>"
    flat = data.reshape(-1)
    if data.size > 1 and np.all(flat.view(np.uint64) == flat[:1].view(
            np.uint64)):
        return "dense<%s>" % elem_lit(float(flat[0]), etype)  # splat
    if data.size > HEX_THRESHOLD:
        assert sys.byteorder == "little"
        raw = data.astype(np_dtype(etype)).tobytes()
        return 'dense<"0x%s">' % raw.hex().upper()
    if data.ndim == 0:
        return "dense<%s>" % elem_lit(float(data), etype)

    def nest(a):
        if a.ndim == 1:
            return "[" + ", ".join(elem_lit(float(v), etype) for v in a) + "]"
        return "[" + ", ".join(nest(s) for s in a) + "]"

    return "dense<%s>" % nest(data)


# --------------------------------------------------------------------------
# Suites
# --------------------------------------------------------------------------

# (shape, axis, write the axis as a non-negative number): 2-D rows, 3-D
# rows, 3-D with two normalized dims.
SHAPES = [((3, 40), -1, False), ((2, 3, 16), -1, False),
          ((2, 3, 16), -2, False), ((3, 40), -1, True),
          ((2, 3, 16), -2, True)]
RMS_EPS = [(1e-6, "f32"), (0.5, "f32"), (0.0625, "f64"), (1e-5, "f64")]


def gen_scale_norm(g):
    """gen hook: ScaleNorm's scalar weight g/sqrt(N)."""
    def gen(case, rng):
        n = int(np.prod(case.shape[case.axis:]))
        case.w.data = rnd(np.full(case.w.shape, g / np.sqrt(n)),
                          case.w.etype)
    return gen


def dense_suite(op, T):
    """The matrix of one op and dtype."""
    cases = []
    low = T in ("f16", "bf16")
    wtypes = [T, "f32"] if low else [T]

    def add(**kw):
        if "shape" not in kw:
            shape, axis, positive = SHAPES[len(cases) % len(SHAPES)]
            kw["shape"], kw["axis"] = shape, axis
            if positive:
                kw["axis_attr"] = axis + len(shape)
        kw.setdefault("dyn", (0,))
        cases.append(Case(op, T, **kw))

    # {T weight, f32 weight (f16/bf16)} x {static, dynamic leading dim} x
    # {residual, none} x {weight (+bias), none} x [epsilon_mode] x cast_mode.
    for wty in wtypes:
        for dyn in (False, True):
            for res in (False, True):
                for affine in ((True, False) if wty == T else (True,)):
                    for cast in ("final", "before_weight"):
                        common = dict(dyn=(0,) if dyn else (), residual=res,
                                      cast_mode=cast)
                        i = len(cases)
                        if op == "layer_norm":
                            wb = dict(weight=wty, bias=wty) if affine else {}
                            eps = [{}, dict(eps=0.25),
                                   dict(eps=1e-5, eps_type="f64")][i % 3]
                            add(**common, **wb, **eps)
                        elif op == "rms_norm":
                            wb = dict(weight=wty) if affine else {}
                            for mode in ("inside_sqrt", "outside_sqrt",
                                         "clamp"):
                                i = len(cases)
                                e, et = RMS_EPS[i % len(RMS_EPS)]
                                # inside_sqrt is also the default (omitted).
                                if mode == "inside_sqrt" and i % 2:
                                    mode = None
                                add(**common, **wb, eps=e, eps_type=et,
                                    eps_mode=mode)
                        else:
                            wb = dict(weight=wty, bias=wty) if affine else {}
                            alpha = (wtypes[i % len(wtypes)],
                                     () if i % 2 else (1,),
                                     [0.5, 0.8, 1.3, -0.7][i % 4])
                            add(**common, **wb, alpha=alpha)

    # Weight or bias alone; mixed weight/bias types.
    if op in ("layer_norm", "dyt"):
        extra = dict(alpha=(T, (), 0.9)) if op == "dyt" else {}
        add(weight=T, note="weight only", dyn=(), **extra)
        add(bias=T, residual=True, note="bias only",
            cast_mode="before_weight", **extra)
        if low:
            add(weight="f32", bias=T, cast_mode="before_weight", dyn=(),
                note="f32 weight, T bias", **extra)
            add(weight=T, bias="f32", residual=True,
                cast_mode="before_weight", note="T weight, f32 bias",
                **extra)
    if op == "rms_norm":
        # Gemma: weight_offset = 1 (weights around 0).
        for wty in wtypes:
            for cast in ("final", "before_weight"):
                add(weight=wty, weight_offset=1.0, cast_mode=cast,
                    residual=cast == "final", note="Gemma")
        # ScaleNorm: scalar weight g/sqrt(N), clamp with eps e/sqrt(N).
        add(shape=(3, 40), weight="f32", weight_shape=(), dyn=(),
            eps=0.5 / np.sqrt(40), eps_mode="clamp", gen=gen_scale_norm(1.7),
            note="ScaleNorm")
        add(shape=(3, 40), weight=T, weight_shape=(1,),
            eps=0.5 / np.sqrt(40), eps_type="f64", eps_mode="clamp",
            residual=True, gen=gen_scale_norm(2.3), note="ScaleNorm")
        add(shape=(2, 3, 16), axis=-2, weight=T, weight_shape=(1,),
            eps=0.25, eps_mode="clamp", cast_mode="before_weight",
            gen=gen_scale_norm(6.9), note="ScaleNorm")
        add(shape=(3, 40), weight="f32", weight_shape=(), weight_offset=1.0,
            note="scalar weight + offset")
    # Explicit compute types (f64 everywhere; the default type, spelled out).
    cts = ["f64"] if T == "f64" else ["f64", "f64", "f32"]
    for i, ct in enumerate(cts):
        kw = dict(compute_type=ct, residual=i == 1, dyn=(0,) if i else ())
        if op == "layer_norm":
            add(weight=T, bias=T, cast_mode="before_weight" if i else "final",
                **kw)
        elif op == "rms_norm":
            add(weight=wtypes[-1], eps_mode="outside_sqrt" if i else None,
                eps=0.5 if i else None, **kw)
        else:
            add(weight=T, bias=wtypes[-1], alpha=(wtypes[-1], (), 0.6), **kw)
    return cases


def gen_nonfinite(rows):
    """gen hook: rows of x get NaN / +-inf in places (row index -> list of
    (column, value))."""
    def gen(case, rng):
        x = case.x.data.reshape(-1, case.shape[-1]).copy()
        for i, items in rows.items():
            for j, v in items:
                x[i, j] = v
        case.x.data = rnd(x.reshape(case.shape), case.T)
    return gen


NONFINITE = {1: [(3, np.nan)], 2: [(0, np.inf)], 3: [(7, -np.inf)],
             5: [(1, np.inf), (9, -np.inf)], 6: [(15, np.inf)]}


def gen_zero_rows(rows):
    def gen(case, rng):
        x = case.x.data.reshape(-1, case.shape[-1]).copy()
        x[list(rows)] = 0.0
        case.x.data = x.reshape(case.shape)
        if case.r is not None:
            r = case.r.data.reshape(-1, case.shape[-1]).copy()
            r[list(rows)] = 0.0
            case.r.data = r.reshape(case.shape)
    return gen


def gen_offset(offset, sigma):
    def gen(case, rng):
        case.x.data = rnd(offset + rng.normal(0.0, sigma, case.shape), case.T)
    return gen


def gen_pattern(values):
    """gen hook: x repeats `values` along every row."""
    def gen(case, rng):
        n = case.shape[-1]
        row = np.resize(np.array(values, dtype=np.float64), n)
        case.x.data = rnd(np.broadcast_to(row, case.shape), case.T)
    return gen


# Procedural inputs: data that a formula of the flat index i defines, which
# NumPy and the generated module (a tensor.generate in @main) evaluate to the
# same values bit for bit, so that large inputs are computed at run time
# instead of being embedded in the module (and in the GPU check's programs).
# Every value is exact in f32: no rounding can differ between the two.

def _hash32(i):
    """A 32-bit integer hash (xor-shift-multiply) of uint32 array i."""
    x = i.astype(np.uint32)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


class Uniform:
    """x[i] = -4 + 8 * u(i), u(i) = (hash(i ^ seed) >> 8) * 2^-24: uniform in
    [-4, 4) on a grid of 2^-21 (exact in f32)."""

    def __init__(self, seed):
        self.seed = seed

    def values(self, size):
        i = np.arange(size, dtype=np.uint64).astype(np.uint32)
        u = (_hash32(i ^ np.uint32(self.seed)) >> np.uint32(8)).astype(
            np.float64) * 2.0 ** -24
        return -4.0 + 8.0 * u

    def body(self, em, lin, etype):
        i32 = em.fresh("i")
        em.emit("  %s = arith.index_cast %s : index to i32" % (i32, lin))
        x = em.fresh("h")
        em.emit("  %s = arith.xori %s, %s : i32" % (
            x, i32, em.int_constant(self.seed, "i32", "  ")))
        for op, k in (("shrui", 16), ("muli", 0x7FEB352D), ("shrui", 15),
                      ("muli", 0x846CA68B), ("shrui", 16)):
            c = em.int_constant(k if k < 2 ** 31 else k - 2 ** 32, "i32",
                                "  ")
            t = em.fresh("h")
            if op == "shrui":
                em.emit("  %s = arith.shrui %s, %s : i32" % (t, x, c))
                t2 = em.fresh("h")
                em.emit("  %s = arith.xori %s, %s : i32" % (t2, x, t))
                t = t2
            else:
                em.emit("  %s = arith.muli %s, %s : i32" % (t, x, c))
            x = t
        top = em.fresh("h")
        em.emit("  %s = arith.shrui %s, %s : i32" % (
            top, x, em.int_constant(8, "i32", "  ")))
        u = em.fresh("u")
        em.emit("  %s = arith.uitofp %s : i32 to f64" % (u, top))
        v = em.fresh("v")
        em.emit("  %s = arith.mulf %s, %s : f64" % (
            v, u, em.float_constant(8.0 * 2.0 ** -24, "f64", "  ")))
        w = em.fresh("v")
        em.emit("  %s = arith.addf %s, %s : f64" % (
            w, v, em.float_constant(-4.0, "f64", "  ")))
        return em.narrow(w, etype, "  ")


class Periodic:
    """x[i] = head for i < head_len, else table[i % len(table)]."""

    def __init__(self, table, head=0.0, head_len=0):
        self.table = list(table)
        self.head = head
        self.head_len = head_len

    def values(self, size):
        i = np.arange(size)
        out = np.array(self.table, dtype=np.float64)[i % len(self.table)]
        out[:self.head_len] = self.head
        return out

    def body(self, em, lin, etype):
        period = em.fresh("p")
        em.emit("  %s = arith.remui %s, %s : index" % (
            period, lin, em.int_constant(len(self.table), "index", "  ")))
        value = em.float_constant(self.table[-1], etype, "  ")
        for k in range(len(self.table) - 2, -1, -1):
            hit = em.fresh("c")
            em.emit("  %s = arith.cmpi eq, %s, %s : index" % (
                hit, period, em.int_constant(k, "index", "  ")))
            sel = em.fresh("s")
            em.emit("  %s = arith.select %s, %s, %s : %s" % (
                sel, hit, em.float_constant(self.table[k], etype, "  "),
                value, etype))
            value = sel
        if self.head_len:
            inside = em.fresh("c")
            em.emit("  %s = arith.cmpi ult, %s, %s : index" % (
                inside, lin, em.int_constant(self.head_len, "index", "  ")))
            sel = em.fresh("s")
            em.emit("  %s = arith.select %s, %s, %s : %s" % (
                sel, inside, em.float_constant(self.head, etype, "  "), value,
                etype))
            value = sel
        return value


def gen_procedure(proc):
    """gen hook: x is `proc` (Uniform or Periodic), computed at run time."""
    def gen(case, rng):
        if case.T not in ("f32", "f64"):
            raise ValueError("procedural inputs are f32 or f64")
        case.x.data = rnd(proc.values(case.x.data.size).reshape(case.shape),
                          case.T)
        case.x.proc = proc
    return gen


def gen_rows(make_row):
    """gen hook: every row of x is make_row(n, rng) (n = row length)."""
    def gen(case, rng):
        n = case.shape[-1]
        rows = [make_row(n, rng) for _ in range(int(np.prod(case.shape[:-1])))]
        case.x.data = rnd(np.array(rows).reshape(case.shape), case.T)
    return gen


def step_row(n, rng):
    """A block of 1e3 + noise in the first 256 columns, noise after it."""
    row = rng.normal(0.0, 1.0, n)
    row[:256] += 1e3
    return row


def short_step_row(n, rng):
    """1e4 in the first 16 columns, then 0 1 0 1 ...: the squares of the
    values minus the first vector's mean round the same way every time, so
    their f32 sums drift instead of averaging out."""
    row = np.resize(np.array([0.0, 1.0]), n)
    row[:16] = 1e4
    return row


def ramp_row(n, rng):
    """A rising ramp from 0 to 1e3 with noise: its start is far below the
    mean."""
    return np.linspace(0.0, 1e3, n) + rng.normal(0.0, 1.0, n)


def outlier_row(n, rng):
    """One huge value in the first column, unit noise elsewhere."""
    row = rng.normal(0.0, 1.0, n)
    row[0] = 1e6
    return row


def edge_suite():
    cases = []
    c = cases.append
    zr = gen_zero_rows([0, 2])
    # All-zero rows: finite output with eps > 0.
    c(Case("layer_norm", "f32", (4, 16), weight="f32", bias="f32", gen=zr,
           note="zero rows"))
    c(Case("layer_norm", "f32", (4, 16), residual=True, gen=zr,
           cast_mode="before_weight", note="zero rows"))
    for mode, eps in (("inside_sqrt", None), ("outside_sqrt", 1e-6),
                      ("clamp", 0.1)):
        c(Case("rms_norm", "f32", (4, 16), weight="f32", eps=eps,
               eps_mode=mode, gen=zr, note="zero rows"))
    c(Case("rms_norm", "bf16", (4, 16), weight="bf16", gen=zr,
           note="zero rows"))
    c(Case("dyt", "f32", (4, 16), alpha=("f32", (), 0.5), weight="f32",
           bias="f32", gen=zr, note="zero rows"))
    # N == 1.
    c(Case("layer_norm", "f32", (5, 1), weight="f32", bias="f32",
           note="N=1"))
    c(Case("layer_norm", "f32", (5, 1), residual=True, dyn=(0,),
           note="N=1"))
    c(Case("rms_norm", "f32", (5, 1), weight="f32", dyn=(0, 1),
           weight_dyn=(0,), note="N=1"))
    c(Case("rms_norm", "f16", (5, 1), eps_mode="clamp", eps=0.5,
           note="N=1"))
    c(Case("dyt", "f32", (5, 1), alpha=("f32", (1,), 0.7), weight="f32",
           bias="f32", note="N=1"))
    # Zero-sized leading dims.
    c(Case("layer_norm", "f32", (0, 16), weight="f32", bias="f32", dyn=(),
           note="empty"))
    c(Case("layer_norm", "f32", (0, 16), residual=True, dyn=(0,),
           note="empty"))
    c(Case("rms_norm", "f32", (0, 16), weight="f32", residual=True,
           dyn=(0,), note="empty"))
    c(Case("rms_norm", "bf16", (0, 3, 16), axis=-2, dyn=(0,), note="empty"))
    c(Case("dyt", "f32", (0, 16), alpha=("f32", (), 0.5), dyn=(0,),
           note="empty"))
    # NaN / inf inputs propagate.
    nf = gen_nonfinite(NONFINITE)
    for T in DTYPES:
        wb = "f32" if T != "f64" else T
        c(Case("layer_norm", T, (7, 16), weight=wb, bias=wb, gen=nf,
               note="nan/inf"))
        c(Case("rms_norm", T, (7, 16), weight=T, gen=nf, dyn=(0,),
               note="nan/inf"))
        c(Case("dyt", T, (7, 16), alpha=(T, (), 0.5), weight=T, bias=T,
               gen=nf, note="nan/inf"))
    for mode in ("outside_sqrt", "clamp"):
        c(Case("rms_norm", "f32", (7, 16), eps_mode=mode, eps=0.01, gen=nf,
               note="nan/inf"))
    c(Case("layer_norm", "f32", (7, 16), residual=True, gen=nf,
           cast_mode="before_weight", weight="f32", note="nan/inf"))
    # Rows of a length known only at run time count as large: their 16-bit
    # results take the non-temporal stores (rows of a multiple of 64 bytes),
    # bf16 rounded by integer ops or (native-bf16) by arith.truncf behind a
    # register barrier; with NaN and inf inputs too.
    c(Case("rms_norm", "bf16", (4, 256), weight="bf16", dyn=(0, 1),
           weight_dyn=(0,), note="dynamic N, non-temporal stores"))
    c(Case("layer_norm", "bf16", (3, 512), weight="bf16", bias="bf16",
           residual=True, dyn=(1,), weight_dyn=(0,),
           note="dynamic N, non-temporal stores"))
    c(Case("dyt", "bf16", (3, 256), alpha=("f32", (), 0.5), weight="bf16",
           bias="bf16", dyn=(0, 1), weight_dyn=(0,),
           note="dynamic N, non-temporal stores"))
    c(Case("rms_norm", "f16", (3, 256), weight="f16", residual=True,
           dyn=(0, 1), weight_dyn=(0,), note="dynamic N, non-temporal stores"))
    for T in ("bf16", "f16"):
        c(Case("layer_norm", T, (7, 64), weight=T, bias=T, dyn=(0, 1),
               weight_dyn=(0,), gen=nf,
               note="nan/inf, dynamic N, non-temporal stores"))
    # Rows with a large common offset (docs/Numerics.md: within 1e-4 in f32).
    c(Case("layer_norm", "f32", (4, 1024), gen=gen_offset(1e4, 0.1),
           bound=1e-4, dyn=(), note="1e4 offset"))
    c(Case("layer_norm", "f32", (2, 4096), weight="f32", bias="f32",
           gen=gen_offset(1e4, 0.1), bound=1e-4, note="1e4 offset"))
    c(Case("layer_norm", "f32", (3, 1024), gen=gen_offset(-1e4, 0.1),
           bound=1e-4, cast_mode="before_weight", note="-1e4 offset"))
    # Rows whose first vector is far from the row mean (the one-sweep
    # variance would cancel: the centered second sweep runs), and a row whose
    # first value is an outlier.
    for gen, note in ((step_row, "step row"), (ramp_row, "ramp row"),
                      (outlier_row, "outlier at column 0")):
        c(Case("layer_norm", "f32", (3, 1024), weight="f32", bias="f32",
               gen=gen_rows(gen), note=note))
        c(Case("layer_norm", "bf16", (2, 1000), weight="bf16", bias="bf16",
               residual=True, gen=gen_rows(gen), note=note))
    # Rows of 2^20 are computed at run time (procedural inputs).
    c(Case("layer_norm", "f32", (1, 1 << 20), dyn=(),
           gen=gen_procedure(Periodic([0.0, 1.0], head=1e4, head_len=16)),
           note="short step, N=2^20"))
    # Very large N: random rows, and rows whose rounding errors do not
    # cancel (a constant row, a row of two alternating values).
    c(Case("layer_norm", "f32", (1, 1 << 20), dyn=(),
           gen=gen_procedure(Uniform(1)), note="N=2^20"))
    c(Case("rms_norm", "f32", (1, 1 << 20), dyn=(),
           gen=gen_procedure(Uniform(2)), note="N=2^20"))
    c(Case("rms_norm", "f32", (1, 1 << 20), dyn=(), gen=gen_pattern([1.1]),
           note="N=2^20, constant 1.1"))
    c(Case("layer_norm", "f32", (1, 1 << 20), dyn=(),
           gen=gen_procedure(Periodic([float(np.float32(1.1)),
                                       float(np.float32(1.3))])),
           note="N=2^20, 1.1 1.3 1.1 1.3 ..."))
    # 3-D / 4-D inputs with several normalized dims, dynamic dims.
    c(Case("layer_norm", "f32", (2, 3, 16), axis=-2, weight="f32",
           bias="f32", dyn=(0,), note="3-D"))
    c(Case("rms_norm", "f32", (2, 3, 16), axis=-2, axis_attr=1,
           weight="f32", dyn=(0, 1), weight_dyn=(0,), note="3-D"))
    c(Case("dyt", "f32", (2, 3, 16), axis=-2, alpha=("f32", (), 1.1),
           weight="f32", bias="f32", residual=True, dyn=(0, 1),
           note="3-D"))
    c(Case("layer_norm", "f32", (2, 2, 3, 8), axis=-3, weight="f32",
           bias="f32", dyn=(0,), note="4-D"))
    c(Case("layer_norm", "f16", (2, 3, 16), axis=-2, axis_attr=1,
           weight="f16", bias="f16", residual=True, dyn=(0,), note="3-D"))
    # Fully dynamic shapes.
    c(Case("layer_norm", "f32", (3, 40), weight="f32", bias="f32",
           dyn=(0, 1), weight_dyn=(0,), residual=True, note="all dynamic"))
    c(Case("rms_norm", "f32", (3, 40), weight="f32", dyn=(0, 1),
           weight_dyn=(0,), note="all dynamic"))
    c(Case("dyt", "f32", (3, 40), alpha=("f32", (1,), 0.5), weight="f32",
           bias="f32", dyn=(0, 1), weight_dyn=(0,), note="all dynamic"))
    # Rank-1 inputs (a single row), axis 0 of a 2-D input.
    c(Case("layer_norm", "f32", (40,), weight="f32", bias="f32", dyn=(),
           note="rank 1"))
    c(Case("rms_norm", "f32", (40,), dyn=(0,), note="rank 1"))
    c(Case("layer_norm", "f32", (3, 40), axis=-2, axis_attr=0, dyn=(),
           weight="f32", bias="f32", note="axis 0"))
    # epsilon = 0, large epsilon, negative alpha.
    c(Case("layer_norm", "f32", (3, 40), eps=0.0, note="eps=0"))
    c(Case("rms_norm", "f32", (3, 40), eps=0.0, weight="f32", note="eps=0"))
    c(Case("rms_norm", "f32", (3, 40), eps=4.0, eps_mode="clamp",
           note="clamp everywhere"))
    c(Case("layer_norm", "f32", (3, 40), eps=8.0, note="large eps"))
    c(Case("dyt", "f32", (3, 40), alpha=("f32", (), -2.5), weight="f32",
           note="negative alpha"))
    return cases


def build_suite(suite):
    if suite == "edge":
        return edge_suite()
    op, T = suite.rsplit("_", 1)
    if op not in OPS or T not in DTYPES:
        raise SystemExit("unknown suite %r (suites: %s)" %
                         (suite, ", ".join(SUITES)))
    return dense_suite(op, T)


# --------------------------------------------------------------------------
# gen
# --------------------------------------------------------------------------


class Emitter:
    def __init__(self):
        self.lines = []
        self.n = 0

    def fresh(self, base):
        self.n += 1
        return "%%%s_%d" % (base, self.n)

    def emit(self, s):
        self.lines.append("  " + s)

    def int_constant(self, v, t, indent=""):
        name = self.fresh("k")
        self.emit("%s%s = arith.constant %d : %s" % (indent, name, v, t))
        return name

    def float_constant(self, v, t, indent=""):
        name = self.fresh("k")
        self.emit("%s%s = arith.constant %s : %s" % (indent, name, flit(v), t))
        return name

    def narrow(self, v, etype, indent=""):
        if etype == "f64":
            return v
        name = self.fresh("n")
        self.emit("%s%s = arith.truncf %s : f64 to %s" % (indent, name, v,
                                                          etype))
        return name

    def generate(self, name, opd):
        """`name` = a tensor.generate evaluating opd.proc at run time."""
        st = opd.static_type()
        idx = [self.fresh("d") for _ in opd.shape]
        self.emit("%s = tensor.generate {" % name)
        self.emit("^bb0(%s):" % ", ".join("%s: index" % d for d in idx))
        lin = idx[0]
        for d, size in zip(idx[1:], opd.shape[1:]):
            scaled = self.fresh("l")
            self.emit("  %s = arith.muli %s, %s : index" % (
                scaled, lin, self.int_constant(size, "index", "  ")))
            summed = self.fresh("l")
            self.emit("  %s = arith.addi %s, %s : index" % (summed, scaled, d))
            lin = summed
        value = opd.proc.body(self, lin, opd.etype)
        self.emit("  tensor.yield %s : %s" % (value, opd.etype))
        self.emit("} : %s" % st)

    def value(self, opd, base):
        """Materializes an operand in @main (cast to its @case_K argument
        type); returns the SSA name."""
        name = self.fresh(base)
        st = opd.static_type()
        if opd.proc is not None:
            self.generate(name, opd)
        else:
            self.emit("%s = arith.constant %s : %s" %
                      (name, dense_lit(opd.data, opd.etype), st))
        at = opd.arg_type()
        if at != st:
            cast = self.fresh(base + "d")
            self.emit("%s = tensor.cast %s : %s to %s" % (cast, name, st, at))
            name = cast
        return name

    def print_tensor(self, name, ttype, etype):
        if etype in ("f16", "bf16"):
            wide = ttype.replace(etype + ">", "f32>")
            e = self.fresh("ext")
            self.emit("%s = arith.extf %s : %s to %s" % (e, name, ttype, wide))
            name, ttype, etype = e, wide, "f32"
        pt = "f64" if etype == "f64" else "f32"
        u = self.fresh("u")
        self.emit("%s = tensor.cast %s : %s to tensor<*x%s>" %
                  (u, name, ttype, pt))
        self.emit("call @printMemref%s(%s) : (tensor<*x%s>) -> ()" %
                  (pt.upper(), u, pt))


def gen(suite, out_mlir, out_npz):
    cases = build_suite(suite)
    funcs = []
    em = Emitter()
    refs = {}
    meta = {"suite": suite, "cases": [], "outputs": []}
    for k, case in enumerate(cases):
        rng = np.random.default_rng([SEED, zlib.crc32(suite.encode()), k])
        case.fill(rng)
        funcs.append(case.emit_func(k))
        em.emit("// case %d" % k)
        args = [em.value(opd, "%s%d" % (kw[0], k))
                for kw, opd in case.operands()]
        res = case.result_types()
        outs = [em.fresh("y%d" % k)]
        if len(res) == 2:
            outs.append(em.fresh("s%d" % k))
        em.emit("%s = call @case_%d(%s) {no_inline} : (%s) -> %s" % (
            ", ".join(outs), k, ", ".join(args),
            ", ".join(o.arg_type() for _, o in case.operands()),
            res[0] if len(res) == 1 else "(%s)" % ", ".join(res)))
        for (oname, ref), v, t in zip(case.reference(), outs, res):
            em.print_tensor(v, t, case.T)
            i = len(meta["outputs"])
            refs["ref_%d" % i] = ref
            meta["outputs"].append({"case": k, "name": oname})
        meta["cases"].append({"desc": case.describe(), "bound": case.bound,
                              "dtype": case.T})
    write_module(out_mlir, out_npz,
                 "// Generated by norm_exec.py gen %s (seed %d): %d cases." %
                 (suite, SEED, len(cases)), funcs, em, meta, refs)


def write_module(out_mlir, out_npz, header, funcs, em, meta, refs):
    """Writes the module (`funcs` and a @main of `em`'s lines) and the
    references with their metadata, as `check` reads them."""
    text = [header, "",
            "func.func private @printMemrefF32(tensor<*xf32>) "
            "attributes {llvm.emit_c_interface}",
            "func.func private @printMemrefF64(tensor<*xf64>) "
            "attributes {llvm.emit_c_interface}", ""]
    for f in funcs:
        text += [f, ""]
    text += ["func.func @main() {"] + em.lines + ["  return", "}", ""]
    with open(out_mlir, "w") as f:
        f.write("\n".join(text))
    np.savez(out_npz, meta=np.array(json.dumps(meta)), **refs)


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------

def case_label(k, desc):
    """The name a case is reported (and listed in the lit tests) by."""
    return "case_%d: %s" % (k, desc)


def check(ref_npz, output):
    ref = np.load(ref_npz)
    meta = json.loads(str(ref["meta"]))
    with open(output) as f:
        got = parse_printed(f.read())
    outs = meta["outputs"]
    ncases = len(meta["cases"])
    errs = [0.0] * ncases
    notes = [[] for _ in range(ncases)]
    if len(got) != len(outs):
        print("error: %d printed tensors, expected %d" % (len(got),
                                                        len(outs)))
    for i, o in enumerate(outs):
        k = o["case"]
        r = ref["ref_%d" % i]
        if i >= len(got):
            errs[k] = np.inf
            notes[k].append("%s: not printed" % o["name"])
            continue
        sizes, vals = got[i]
        if isinstance(vals, str):
            errs[k] = np.inf
            notes[k].append("%s: unreadable output: %s" % (o["name"], vals))
            continue
        if tuple(sizes) != r.shape or vals.size != r.size:
            errs[k] = np.inf
            notes[k].append("%s: printed sizes %s with %d values, expected "
                            "shape %s" % (o["name"], list(sizes), vals.size,
                                          list(r.shape)))
            continue
        e, why = compare(vals, r)
        if not within(e, meta["cases"][k]["bound"]) or not np.isfinite(e):
            notes[k].append("%s: err %.3g, %s" % (o["name"], e, why))
        errs[k] = max(errs[k], e)
    failed = 0
    for k, c in enumerate(meta["cases"]):
        ok = within(errs[k], c["bound"]) and not notes[k]
        failed += not ok
        print("%s: %s; max err %.3g (bound %.3g)" % (
            "PASS" if ok else "FAIL", case_label(k, c["desc"]), errs[k],
            c["bound"]))
        for n in notes[k]:
            print("    " + n)
    if len(got) != len(outs) and not failed:
        failed = 1
    if failed or not ncases:
        print("%d of %d cases FAILED" % (failed, ncases))
        return 1
    print("all %d cases passed" % ncases)
    return 0


def expected_labels(path):
    """The case labels a lit test lists: its `PASS: <label>; ...` lines."""
    labels = []
    with open(path) as f:
        for line in f:
            _, sep, rest = line.partition(" PASS: ")
            if sep and line.lstrip().startswith("CHECK"):
                labels.append(rest.split("; max err")[0].strip())
    return labels


def names(suite):
    return [case_label(k, c.describe())
            for k, c in enumerate(build_suite(suite))]


def main(argv):
    if len(argv) >= 2 and argv[1] == "list":
        print("\n".join(SUITES))
        return 0
    if len(argv) == 3 and argv[1] == "names":
        print("\n".join(names(argv[2])))
        return 0
    if len(argv) in (5, 6) and argv[1] == "gen":
        if len(argv) == 6:
            # --expect-cases=FILE: the suite must hold exactly the cases the
            # lit test FILE lists (scripts/gpu-check.sh builds with it).
            opt, _, path = argv[5].partition("=")
            if opt != "--expect-cases" or not path:
                sys.stderr.write(__doc__)
                return 2
            want, have = expected_labels(path), names(argv[2])
            if want != have:
                missing = [n for n in want if n not in have]
                extra = [n for n in have if n not in want]
                print("error: suite %s does not hold the cases %s lists "
                      "(%d listed, %d generated)" % (argv[2], path,
                                                     len(want), len(have)))
                for n in missing:
                    print("  missing: " + n)
                for n in extra:
                    print("  not listed: " + n)
                if not missing and not extra:
                    print("  (same cases, other order)")
                return 1
        gen(argv[2], argv[3], argv[4])
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
