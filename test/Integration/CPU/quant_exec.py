#!/usr/bin/env python3
"""CPU execution tests of norm.quantize (alone and fused after a norm op):
case generator and result checker.

  quant_exec.py gen SUITE OUT.mlir REF.npz [--expect-cases=TEST]
      Writes one MLIR module with the cases of one suite (`@case_K`, each
      holding a norm op whose `y` feeds a `norm.quantize` as its only user,
      the fused form, or a `norm.quantize` alone, and `@main`, which builds
      the inputs as constants, calls every case and prints every output with
      printMemrefF32), and REF.npz with the reference of every printed
      output. The quantized result is printed as f32: the byte code 0..255
      of an f8E4M3FN value (bitcast to i8, extui, uitofp), the value of an
      i8 (sitofp). With --expect-cases, first checks that the suite holds
      exactly the cases the lit test TEST lists (its `PASS: case_K: ...;`
      CHECK lines), in order; exits 1 otherwise.
  quant_exec.py check REF.npz OUTPUT.txt
      Parses mlir-runner's output and compares every output with its
      reference. Prints one line per case, `PASS: case_K: <description>;
      exact F%, max dist D[, scale err E][, residual err E]` or the same with
      `FAIL:` followed by indented reasons, then `all N cases passed` (exit
      0) or `M of N cases FAILED` (exit 1).
  quant_exec.py names SUITE
      Prints `case_K: <description>` for every case of the suite.
  quant_exec.py list
      Prints the suite names.

Suites: quant_f32, quant_f16, quant_bf16 (the matrix op x mode x result
type x residual x shape) and quant_edge; the CPU and GPU lit tests run the
same suites.

Reference (DESIGN.md section 2a): y is the norm op's reference
(normref.reference, rounded to its element type) or the input itself; per
group amax = max |y| (NaN propagates), s = max(min(amax, scale_ub) / QMAX,
min_scale) in f32; inv = 1 / s in f32, v = f32(y) * inv in f32; f8E4M3FN:
NaN -> NaN, else clamp to [-448, 448] and round to nearest even; i8: NaN ->
0, else clip(rint(v), -128, 127). The f8 conversion of ml_dtypes is
cross-checked against an independent exact implementation on every
generated value.

Checking rules: the quantized values are exact (same code; any NaN
encoding matches any NaN) on >= 99% of the elements and within one
quantization step everywhere (f8: the distance of the codes in
sign-magnitude order <= 1, NaN exactly where the reference is NaN; i8:
|diff| <= 1); cases marked `[coverage]` must be 100% exact. Scales: within
1e-5 relative (NaN matches NaN, inf must be equal). residual_out:
normref.compare against the dtype's bound, as norm_exec.py checks.

One allowance (amax slack, fused f16/bf16 dynamic cases only): the norm
op's y is only required to be within its bound (normref.BOUNDS: 1 to 4 ulp
of T) of the reference, and a group's amax is one of its values, so a
lowering whose tanh or rsqrt rounds one y value to the neighbouring value
of T changes that group's scale by one ulp of T (~5e-4 f16, ~4e-3 bf16
relative) and shifts every q of the group. A group whose printed scale does
not match the reference's but matches (within 1e-5) the scale of the next
smaller or next larger T value of amax is checked against that scale and
the q that y_ref quantized with it gives; the PASS line counts such groups
(`N group amax 1 ulp off`). The quantize step itself is still checked
exactly against the scale it used.
"""

import json
import os
import sys
import zlib

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(_HERE, "..", "..", "tools"))
from normref import BOUNDS, compare, parse_printed, rnd, within  # noqa: E402
from norm_exec import Case, Emitter, Operand, case_label, flit, \
    tensor_type, write_module  # noqa: E402

SEED = 20250117

QMAX = {"f8E4M3FN": 448.0, "i8": 127.0}
QSHORT = {"f8E4M3FN": "f8", "i8": "i8"}
DTYPES = ("f32", "f16", "bf16")
SUITES = ["quant_%s" % t for t in DTYPES] + ["quant_edge"]

EXACT_MIN = 0.99      # fraction of exact quantized values
SCALE_BOUND = 1e-5    # relative error of the scales

_F8 = None


def f8_dtype():
    global _F8
    if _F8 is None:
        import ml_dtypes
        _F8 = np.dtype(ml_dtypes.float8_e4m3fn)
    return _F8


# --------------------------------------------------------------------------
# Reference quantization
# --------------------------------------------------------------------------


def default_min_scale(qtype):
    return float(np.float32(1.0 / (QMAX[qtype] * 512.0)))


def _f8_magnitudes():
    """The 127 finite non-negative f8E4M3FN values, by code 0..126."""
    return np.arange(127, dtype=np.uint8).view(f8_dtype()).astype(
        np.float64)


def f8_codes_exact(v):
    """Independent f32 -> f8E4M3FN conversion (clamp, round to nearest
    even, sign of zero kept, NaN -> 0x7F|sign): uint8 codes."""
    v = np.asarray(v, dtype=np.float32).reshape(-1)
    mags = _f8_magnitudes()
    out = np.zeros(v.size, dtype=np.uint8)
    sign = (v.view(np.uint32) >> np.uint32(31)).astype(np.uint8) << 7
    nan = np.isnan(v)
    a = np.minimum(np.abs(v.astype(np.float64)), 448.0)
    a[nan] = 0.0
    hi = np.searchsorted(mags, a, side="left")  # mags[hi] >= a
    hi = np.minimum(hi, 126)
    lo = np.maximum(hi - 1, 0)
    exact = mags[hi] == a
    mid = (mags[lo] + mags[hi]) / 2.0  # exact in float64
    code = np.where(a < mid, lo, np.where(a > mid, hi,
                                          np.where(lo % 2 == 0, lo, hi)))
    code = np.where(exact, hi, code).astype(np.uint8)
    out[:] = code | sign
    out[nan] = 0x7F | sign[nan]
    return out


def convert(v, qtype):
    """f32 array v -> float64 array of the printed values: the f8 codes
    (ml_dtypes, cross-checked) or the i8 values."""
    v = np.asarray(v, dtype=np.float32)
    with np.errstate(all="ignore"):
        if qtype == "i8":
            r = np.clip(np.rint(v), -128, 127)
            r[np.isnan(v)] = 0
            return r.astype(np.float64)
        c = np.clip(v, np.float32(-448), np.float32(448)).astype(
            f8_dtype()).view(np.uint8)
    mine = f8_codes_exact(v).reshape(c.shape)
    same = (c == mine) | (((c & 0x7F) == 0x7F) & ((mine & 0x7F) == 0x7F))
    if not same.all():
        i = np.argmax(~same.reshape(-1))
        raise AssertionError("ml_dtypes and the exact f8 conversion differ "
                             "at %r: %#x vs %#x" % (v.reshape(-1)[i],
                                                    c.reshape(-1)[i],
                                                    mine.reshape(-1)[i]))
    return c.astype(np.float64)


def _groups(y32, group):
    shape = y32.shape
    n = shape[-1]
    g = group or n
    return y32.reshape(shape[:-1] + (n // g, g))


def group_amax(y, group=0):
    """max |y| per group (float32; NaN propagates)."""
    with np.errstate(all="ignore"):
        y32 = np.asarray(y, dtype=np.float64).astype(np.float32)
    return np.max(np.abs(_groups(y32, group)), axis=-1)


def scales_of(amax, qtype, scale_ub=None, min_scale=None):
    """s = max(min(amax, scale_ub) / QMAX, min_scale) in f32."""
    amax = np.asarray(amax, dtype=np.float32)
    ub = np.float32(np.inf if scale_ub is None else scale_ub)
    ms = np.float32(default_min_scale(qtype) if min_scale is None
                    else min_scale)
    with np.errstate(all="ignore"):
        s = np.maximum(np.minimum(amax, ub) / np.float32(QMAX[qtype]), ms)
    assert s.dtype == np.float32
    return s


def quantize_with(y, qtype, s, group=0):
    """Printed q values of y (float64 values of the input element type)
    quantized with the f32 scale(s) s: a scalar (static) or one per group."""
    with np.errstate(all="ignore"):
        y32 = np.asarray(y, dtype=np.float64).astype(np.float32)
        inv = np.float32(1.0) / np.asarray(s, dtype=np.float32)
        if inv.ndim == 0:
            v = y32 * inv
        else:
            v = (_groups(y32, group) * inv[..., None]).reshape(y32.shape)
    assert v.dtype == np.float32
    return convert(v, qtype)


def quantize_ref(y, qtype, group=0, static=None, scale_ub=None,
                 min_scale=None):
    """(printed q values, scales or None) of norm.quantize on y (float64
    values of the input element type)."""
    if static is not None:
        return quantize_with(y, qtype, np.float32(static)), None
    s = scales_of(group_amax(y, group), qtype, scale_ub, min_scale)
    return quantize_with(y, qtype, s, group), s.astype(np.float64)


def neighbors16(a, T):
    """The next smaller and next larger non-negative value of the 16-bit
    type T of each non-negative float32 value a of T (a itself where there
    is none: at 0, inf, NaN and the largest finite value)."""
    from normref import np_dtype
    t = np_dtype(T)
    bits = np.asarray(a, dtype=np.float32).astype(t).view(np.uint16)
    inf = np.array([np.inf], dtype=np.float32).astype(t).view(np.uint16)[0]
    ok = bits < inf
    lo = np.where(ok & (bits > 0), bits - 1, bits).astype(np.uint16)
    hi = np.where(ok & (bits + 1 < inf), bits + 1, bits).astype(np.uint16)
    return (lo.view(t).astype(np.float32), hi.view(t).astype(np.float32))


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


class QCase:
    """A norm op (a norm_exec.Case) followed by norm.quantize, or a
    norm.quantize alone (norm None, the input an Operand)."""

    def __init__(self, op, T, shape, qtype, mode, dyn=(0,), residual=False,
                 weight=None, bias=None, alpha=None, norm_kw=None,
                 scale_type="tensor<f32>", static_scale=None,
                 static_factor=0.8, scale_ub=None, min_scale=None,
                 coverage=False, note="", gen=None):
        self.op = op
        self.T = T
        self.shape = tuple(shape)
        rank = len(self.shape)
        self.dyn = tuple(d if d >= 0 else d + rank for d in dyn)
        self.qtype = qtype
        self.mode = mode  # "static", "per_token" or a group size
        self.scale_ub = scale_ub
        self.min_scale = min_scale
        self.coverage = coverage
        self.note = note
        self.gen = gen  # callable(qcase, rng) run after the default fill
        self.static_scale = static_scale  # None: chosen from the data
        self.static_factor = static_factor
        if op == "none":
            self.norm = None
            self.x = Operand(T, self.shape, self.dyn)
        else:
            self.norm = Case(op, T, self.shape, dyn=self.dyn,
                             residual=residual, weight=weight, bias=bias,
                             alpha=alpha, **(norm_kw or {}))
            self.x = self.norm.x
        self.s = None
        if mode == "static":
            sshape = () if scale_type == "tensor<f32>" else (1,)
            self.s = Operand("f32", sshape)
        self.raw = None  # uint32 bits of x (f32 coverage inputs)

    @property
    def group(self):
        return 0 if self.mode in ("static", "per_token") else self.mode

    def residual(self):
        return self.norm is not None and self.norm.r is not None

    def operands(self):
        """(keyword, operand): the norm's operands, then the scale."""
        out = self.norm.operands() if self.norm else [("x", self.x)]
        if self.s is not None:
            out = out + [("scale", self.s)]
        return out

    def describe(self):
        if self.norm is not None:
            parts = [self.norm.describe()]
        else:
            parts = ["none", self.T, self.x.arg_type()]
        parts.append("-> %s" % QSHORT[self.qtype])
        if self.mode == "static":
            parts.append("static:%s" % self.s.static_type())
        elif self.mode == "per_token":
            parts.append("per_token")
        else:
            parts.append("group=%d" % self.mode)
        if self.scale_ub is not None:
            parts.append("scale_ub=%g" % self.scale_ub)
        if self.min_scale is not None:
            parts.append("min_scale=%g" % self.min_scale)
        if self.note:
            parts.append("{%s}" % self.note)
        if self.coverage:
            parts.append("[coverage]")
        return " ".join(parts)

    # ----------------------------------------------------------------- data
    def fill(self, rng):
        if self.norm is not None:
            self.norm.fill(rng)
            if self.norm.w is not None:
                # Weights of different magnitudes per block of 64 columns:
                # the groups get different scales.
                w = self.norm.w
                mags = np.array([1.0, 0.03, 6.0, 0.4])
                cols = np.arange(w.shape[-1]) // 64 % 4 if w.shape else 0
                w.data = rnd(w.data * mags[cols], w.etype)
        else:
            rows = int(np.prod(self.shape[:-1], dtype=np.int64))
            n = self.shape[-1]
            rmag = np.array([1.0, 1e-3, 30.0, 0.2, 700.0])[np.arange(rows) %
                                                           5]
            cmag = np.array([1.0, 0.05, 4.0, 0.6])[np.arange(n) // 32 % 4]
            x = rng.normal(0.0, 1.0, (rows, n)) * rmag[:, None] * cmag
            self.x.data = rnd(x.reshape(self.shape), self.T)
        if self.gen is not None:
            self.gen(self, rng)
        if self.s is not None:
            if self.static_scale is None:
                y = self.y_ref()
                amax = np.max(np.abs(y[np.isfinite(y)]), initial=0.0)
                self.static_scale = (amax / QMAX[self.qtype] *
                                     self.static_factor)
            self.s.data = rnd(np.full(self.s.shape, self.static_scale),
                              "f32")

    # ------------------------------------------------------------ reference
    def y_ref(self):
        if self.norm is None:
            return self.x.data
        return self.norm.reference()[0][1]

    def reference(self):
        """[(kind, array)] of every output, in the order of the results."""
        q, s = quantize_ref(
            self.y_ref(), self.qtype, self.group,
            static=(float(self.s.data.reshape(-1)[0]) if self.s is not None
                    else None),
            scale_ub=self.scale_ub, min_scale=self.min_scale)
        outs = [("q_" + QSHORT[self.qtype], q)]
        if s is not None:
            outs.append(("scale", s))
        if self.residual():
            outs.append(("residual_out", self.norm.reference()[1][1]))
        return outs

    def amax_slack(self):
        """True when a group's amax may be one ulp of T off the reference's:
        a norm op's f16/bf16 y is only within its bound (normref.BOUNDS,
        1 to 4 ulp) of the reference, and the amax is one of its values."""
        return (self.norm is not None and self.mode != "static" and
                self.T in ("f16", "bf16"))

    def alternatives(self):
        """[(scales, q)] with every group's amax replaced by its next
        smaller / next larger value of T: the references of the groups
        whose printed scale matches those scales instead (amax_slack)."""
        y = self.y_ref()
        out = []
        for amax in neighbors16(group_amax(y, self.group), self.T):
            s = scales_of(amax, self.qtype, self.scale_ub, self.min_scale)
            out.append((s.astype(np.float64),
                        quantize_with(y, self.qtype, s, self.group)))
        return out

    # ----------------------------------------------------------------- MLIR
    def y_type(self):
        return self.x.arg_type()

    def dims(self):
        return ["?" if i in self.dyn else d for i, d in enumerate(self.shape)]

    def result_types(self):
        d = self.dims()
        res = [tensor_type(d, self.qtype)]
        if self.mode != "static":
            n = self.shape[-1]
            res.append(tensor_type(d[:-1] + [n // (self.group or n)],
                                   "f32"))
        if self.residual():
            res.append(self.y_type())
        return res

    def quant_attrs(self):
        attrs = []
        if self.group:
            attrs.append("group_size = %d : i64" % self.group)
        if self.scale_ub is not None:
            attrs.append("scale_ub = %s : f32" %
                         flit(np.float32(self.scale_ub)))
        if self.min_scale is not None:
            attrs.append("min_scale = %s : f32" %
                         flit(np.float32(self.min_scale)))
        return (" {" + ", ".join(attrs) + "}") if attrs else ""

    def emit_func(self, k):
        names = {"x": "%x", "alpha": "%a", "weight": "%w", "bias": "%b",
                 "residual": "%r", "scale": "%s"}
        ops = self.operands()
        args = ", ".join("%s: %s" % (names[kw], o.arg_type()) for kw, o in ops)
        res = self.result_types()
        lines = ["// case %d: %s" % (k, self.describe()),
                 "func.func @case_%d(%s) -> (%s) {" % (k, args,
                                                      ", ".join(res))]
        y = "%x"
        if self.norm is not None:
            nops = self.norm.operands()
            nres = self.norm.result_types()
            kws = "".join(" %s(%s)" % (kw, names[kw]) for kw, _ in nops[1:])
            y = "%y"
            outs = "%y, %ro" if len(nres) == 2 else "%y"
            lines += [
                "  %s = norm.%s %%x%s%s" % (outs, self.op, kws,
                                           self.norm.attr_dict()),
                "       : (%s) -> %s" % (
                    ", ".join(o.arg_type() for _, o in nops),
                    nres[0] if len(nres) == 1 else "(%s)" % ", ".join(nres)),
            ]
        qres = res[:2] if self.mode != "static" else res[:1]
        qouts = "%q, %sc" if len(qres) == 2 else "%q"
        in_types = [self.y_type()]
        scale = ""
        if self.s is not None:
            scale = " scale(%s)" % names["scale"]
            in_types.append(self.s.arg_type())
        lines += [
            "  %s = norm.quantize %s%s%s" % (qouts, y, scale,
                                            self.quant_attrs()),
            "       : (%s) -> %s" % (
                ", ".join(in_types),
                qres[0] if len(qres) == 1 else "(%s)" % ", ".join(qres)),
        ]
        rets = qouts.split(", ") + (["%ro"] if self.residual() else [])
        lines += ["  return %s : %s" % (", ".join(rets), ", ".join(res)),
                  "}"]
        return "\n".join(lines)


# --------------------------------------------------------------------------
# Suites
# --------------------------------------------------------------------------

MODES = ("static", "per_token", 64, 128)
QTYPES = ("f8E4M3FN", "i8")
STATIC_SHAPES = ((5, 256), (2, 3, 128))


def dense_suite(T):
    """op x mode x result type x residual x shape for one input type."""
    cases = []
    low = T in ("f16", "bf16")
    nstatic = 0
    for op in ("rms_norm", "layer_norm", "dyt", "none"):
        for mi, mode in enumerate(MODES):
            for qtype in QTYPES:
                for res in ((False, True) if op != "none" else (False,)):
                    for dyn in (False, True):
                        i = len(cases)
                        if dyn:
                            shape, d = (3, 256), (0,)
                        else:
                            # Both static shapes for every op, mode and
                            # result type.
                            shape = STATIC_SHAPES[
                                (nstatic + (mi if op == "none" else 0)) % 2]
                            nstatic += 1
                            d = ()
                        kw = dict(dyn=d, residual=res)
                        # Weights (and bias, alpha) on some cases, of T or
                        # f32 (f16/bf16).
                        wty = T if not low or i % 2 else "f32"
                        affine = i % 3 != 2
                        if op == "rms_norm":
                            if affine:
                                kw["weight"] = wty
                            nkw = [{}, dict(eps=1e-5),
                                   dict(eps=0.01, eps_mode="clamp")][i % 3]
                            kw["norm_kw"] = nkw
                        elif op == "layer_norm":
                            if affine:
                                kw["weight"] = wty
                                kw["bias"] = wty
                            if i % 4 == 1:
                                kw["norm_kw"] = dict(
                                    cast_mode="before_weight")
                        elif op == "dyt":
                            if affine:
                                kw["weight"] = wty
                                kw["bias"] = wty
                            kw["alpha"] = (wty, () if i % 2 else (1,),
                                           [0.5, 1.3, -0.8, 2.0][i % 4])
                        if mode == "static":
                            kw["scale_type"] = ("tensor<f32>" if i % 2
                                                else "tensor<1xf32>")
                            kw["static_factor"] = (0.8, 0.3)[i % 4 == 3]
                        cases.append(QCase(op, T, shape, qtype, mode, **kw))
    return cases


# ---------------------------------------------------------------- edge data


def gen_rows_set(rows, value):
    """gen hook: the given rows of x (flattened to 2-D) are `value`."""
    def gen(c, rng):
        x = c.x.data.reshape(-1, c.shape[-1]).copy()
        x[list(rows)] = value
        c.x.data = rnd(x.reshape(c.shape), c.T)
    return gen


def gen_items(items):
    """gen hook: x (flattened to 2-D)[i, j] = v for (i, j, v) in items."""
    def gen(c, rng):
        x = c.x.data.reshape(-1, c.shape[-1]).copy()
        for i, j, v in items:
            x[i, j] = v
        c.x.data = rnd(x.reshape(c.shape), c.T)
    return gen


def gen_scaled(factor):
    def gen(c, rng):
        c.x.data = rnd(c.x.data * factor, c.T)
    return gen


def chain(*gens):
    def gen(c, rng):
        for g in gens:
            g(c, rng)
    return gen


def coverage_bits_f32(rng):
    """uint32 bit patterns of the f32 conversion-coverage input."""
    with np.errstate(all="ignore"):
        return _coverage_bits_f32(rng)


def _coverage_bits_f32(rng):
    f = np.float32
    vals = []
    mags = _f8_magnitudes()
    vals += list(mags)                              # every e4m3 code point
    mids = (mags[:-1] + mags[1:]) / 2.0             # ties (exact in f32)
    vals += list(mids)
    m32 = mids.astype(np.float32)
    vals += list(np.nextafter(m32, f(np.inf)))      # ties +- 1 ulp
    vals += list(np.nextafter(m32, f(0)))
    tiny = 2.0 ** -9                                # smallest e4m3 subnormal
    for b in (tiny / 2, tiny / 4, tiny * 0.75, tiny * 1.25, tiny * 1.5,
              2.0 ** -12, 2.0 ** -20, 1e-5, 1e-30):
        vals.append(b)
        vals.append(np.nextafter(f(b), f(np.inf)))
        vals.append(np.nextafter(f(b), f(0)))
    vals += [2.0 ** -149, 3 * 2.0 ** -149, 1e-40, 2.0 ** -127,
             (1 - 2.0 ** -23) * 2.0 ** -126, 2.0 ** -126]  # f32 denormals
    # Overflow region: clamped to 448 before rounding.
    for b in (448.0, 456.0, 464.0, 472.0, 479.0, 480.0, 496.0, 512.0,
              1000.0, 65504.0, 1e10, 1e30, float(np.finfo(f).max)):
        vals.append(b)
        vals.append(np.nextafter(f(b), f(np.inf)))
        vals.append(np.nextafter(f(b), f(0)))
    vals.append(np.inf)
    # i8: integers and ties at .5 (+- 1 ulp), the clamp region.
    for k in range(-131, 132):
        vals += [k, k + 0.5, np.nextafter(f(k + 0.5), f(np.inf)),
                 np.nextafter(f(k + 0.5), f(-np.inf)), k + 0.25]
    vals += [126.49, 126.5, 127.49, 127.5, 128.0, 200.0, 1e5, 2.0 ** 31,
             2.0 ** 32, 2.0 ** 63, 2.0 ** 64]
    vals += list(rng.normal(0.0, 1.0, 256) * 100)
    v = np.array(vals, dtype=np.float64).astype(np.float32)
    v = np.concatenate([v, -v])
    bits = [v.view(np.uint32)]
    # Zeros of both signs, NaNs of different payloads and signs.
    bits.append(np.array([0x00000000, 0x80000000, 0x7FC00000, 0xFFC00000,
                          0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF,
                          0xFFFFFFFF, 0x7FC00001, 0xFFA00000, 0x7F812345],
                         dtype=np.uint32))
    # Bit patterns spread over every exponent and both signs.
    e = np.repeat(np.arange(256, dtype=np.uint32), 16)
    s = np.tile(np.array([0, 1], dtype=np.uint32), e.size // 2)
    m = rng.integers(0, 1 << 23, e.size, dtype=np.uint32)
    bits.append((s << np.uint32(31)) | (e << np.uint32(23)) | m)
    # Mantissas near the rounding points of e4m3 normals (exponents of
    # the e4m3 range): low bits just under/at/over a half step.
    e2 = np.repeat(np.arange(118, 136, dtype=np.uint32), 24)
    top = rng.integers(0, 8, e2.size, dtype=np.uint32) << np.uint32(20)
    half = np.uint32(1 << 19)
    low = np.array([half - 1, half, half + 1] * 8, dtype=np.uint32)
    low = np.tile(low, e2.size // low.size)
    bits.append((e2 << np.uint32(23)) | top | low)
    return np.concatenate(bits)


def all_bits16():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def gen_coverage(c, rng):
    """gen hook: the coverage input (f32: the bit patterns of
    coverage_bits_f32; f16/bf16: all 65536 bit patterns), one row of
    c.shape[-1] columns after another, padded with zeros."""
    if c.T == "f32":
        bits = coverage_bits_f32(rng)
        raw = np.zeros(int(np.prod(c.shape)), dtype=np.uint32)
        assert bits.size <= raw.size, bits.size
        raw[:bits.size] = bits
        c.raw = raw.reshape(c.shape)
        with np.errstate(all="ignore"):
            c.x.data = raw.view(np.float32).astype(np.float64).reshape(
                c.shape)
    else:
        from normref import np_dtype
        raw = all_bits16()
        assert raw.size == int(np.prod(c.shape))
        c.raw = raw.reshape(c.shape)
        with np.errstate(all="ignore"):
            c.x.data = raw.view(np_dtype(c.T)).astype(np.float64).reshape(
                c.shape)


COVERAGE_ROWS = 36  # x 256 columns: enough for coverage_bits_f32


def edge_suite():
    cases = []
    c = cases.append
    F8, I8 = QTYPES
    # All-zero rows: scale = 1 / (QMAX * 512), q = 0.
    zr = gen_rows_set([0, 2], 0.0)
    for qt in QTYPES:
        c(QCase("none", "f32", (4, 256), qt, "per_token", gen=zr,
                note="zero rows"))
        c(QCase("none", "bf16", (4, 256), qt, 64, dyn=(), gen=zr,
                note="zero rows"))
    c(QCase("rms_norm", "f32", (4, 256), I8, 128, weight="f32",
            gen=lambda q, rng: gen_rows_set([0, 2], 0.0)(q.norm, rng),
            note="zero rows"))
    c(QCase("dyt", "f16", (4, 256), F8, "per_token", alpha=("f32", (), 0.5),
            gen=lambda q, rng: gen_rows_set([1], 0.0)(q.norm, rng),
            note="zero rows"))
    # Saturation: a static scale far below amax / QMAX.
    for qt in QTYPES:
        c(QCase("none", "f32", (4, 256), qt, "static", static_factor=0.01,
                note="saturating"))
        c(QCase("none", "bf16", (4, 256), qt, "static", static_factor=0.1,
                gen=gen_scaled(1e30), note="saturating, huge values"))
        c(QCase("rms_norm", "bf16", (4, 256), qt, "static", weight="bf16",
                static_factor=0.05, note="saturating"))
    # +-inf: with scale_ub (saturate) and without (scale inf: inf * 0).
    infs = gen_items([(0, 5, np.inf), (1, 70, -np.inf), (2, 200, np.inf),
                      (2, 201, -np.inf), (3, 3, np.inf)])
    for qt in QTYPES:
        c(QCase("none", "f32", (4, 256), qt, "per_token", gen=infs,
                note="inf"))
        c(QCase("none", "f16", (4, 256), qt, 64, gen=infs, note="inf"))
        c(QCase("none", "f32", (4, 256), qt, "per_token", gen=infs,
                scale_ub=3.0, note="inf"))
        c(QCase("none", "bf16", (4, 256), qt, 64, gen=infs, scale_ub=0.5,
                note="inf"))
        c(QCase("none", "f32", (4, 256), qt, "static", gen=infs,
                note="inf"))
    # NaN in a group: the group's scale is NaN, its q NaN (f8) / 0 (i8).
    nans = gen_items([(0, 5, np.nan), (1, 70, np.nan), (1, 71, np.inf),
                      (3, 255, -np.nan)])
    for qt in QTYPES:
        c(QCase("none", "f32", (4, 256), qt, 64, gen=nans, note="nan"))
        c(QCase("none", "bf16", (4, 256), qt, "per_token", gen=nans,
                note="nan"))
        c(QCase("none", "f16", (4, 256), qt, 128, gen=nans, scale_ub=2.0,
                note="nan"))
        c(QCase("none", "f32", (4, 256), qt, "static", gen=nans,
                note="nan"))
        c(QCase("rms_norm", "f32", (4, 256), qt, 64, weight="f32",
                residual=True,
                gen=lambda q, rng: nans(q.norm, rng), note="nan"))
    # scale_ub capping some groups.
    for qt in QTYPES:
        c(QCase("none", "f32", (5, 256), qt, "per_token", scale_ub=2.5,
                note="scale_ub"))
        c(QCase("rms_norm", "bf16", (5, 256), qt, 64, weight="bf16",
                scale_ub=1.0, dyn=(), note="scale_ub"))
        c(QCase("layer_norm", "f16", (2, 3, 128), qt, 32, weight="f16",
                bias="f16", residual=True, scale_ub=0.75, note="scale_ub"))
    # min_scale: vLLM's int8 floor FLT_EPSILON; rows of tiny values.
    tiny = chain(gen_scaled(1e-7), gen_rows_set([1], 0.0))
    c(QCase("none", "f32", (4, 256), I8, "per_token", min_scale=1.1920929e-07,
            gen=tiny, note="tiny rows"))
    c(QCase("none", "f32", (4, 256), F8, 64, min_scale=1.1920929e-07,
            gen=tiny, note="tiny rows"))
    c(QCase("none", "f32", (4, 256), I8, 64, gen=tiny,
            note="tiny rows, default min_scale"))
    c(QCase("rms_norm", "f32", (5, 256), I8, "per_token",
            min_scale=0.01, note="min_scale above some amax/QMAX"))
    # Static scales 0, -0, negative, NaN, inf, f32 denormal.
    for qt in QTYPES:
        zx = gen_items([(0, 0, 0.0), (0, 1, -0.0), (1, 2, np.inf),
                        (2, 3, np.nan)])
        for sv, note in ((0.0, "scale 0"), (-0.0, "scale -0"),
                         (-0.05, "negative scale"), (np.nan, "NaN scale"),
                         (np.inf, "inf scale"), (1e-40, "denormal scale")):
            c(QCase("none", "f32", (3, 256), qt, "static", static_scale=sv,
                    scale_type="tensor<1xf32>" if sv == 0 else "tensor<f32>",
                    gen=zx, note=note))
        c(QCase("dyt", "bf16", (3, 256), qt, "static", static_scale=-0.004,
                alpha=("bf16", (), 1.5), weight="bf16", residual=True,
                note="negative scale"))
    # Other shapes: rank 1, rank 3 with dynamic dims, group = N, group 32.
    for qt in QTYPES:
        c(QCase("none", "f32", (256,), qt, "per_token", dyn=(),
                note="rank 1"))
        c(QCase("none", "f16", (256,), qt, 64, dyn=(), note="rank 1"))
        c(QCase("none", "f16", (256,), qt, "per_token", dyn=(0,),
                note="rank 1, dynamic N"))
        c(QCase("none", "bf16", (2, 3, 128), qt, 32, dyn=(0, 1),
                note="rank 3"))
        c(QCase("layer_norm", "f32", (5, 256), qt, 256, weight="f32",
                bias="f32", note="group = N"))
    # Long rows (the standalone GPU kernel takes a block per row), of static
    # and dynamic length, with and without 16-byte accesses.
    for qt in QTYPES:
        c(QCase("none", "bf16", (3, 4096), qt, "per_token", dyn=(),
                note="long rows"))
        c(QCase("none", "f32", (2, 1000), qt, "static", dyn=(),
                note="long rows"))
        c(QCase("none", "f16", (2, 3000), qt, "per_token", dyn=(1,),
                note="long rows, dynamic N"))
        c(QCase("none", "bf16", (3, 2999), qt, "per_token", dyn=(0, 1),
                note="long odd rows, dynamic"))
    # Conversion coverage: static scale 1.0 on every interesting value.
    for qt in QTYPES:
        c(QCase("none", "f32", (COVERAGE_ROWS, 256), qt, "static",
                static_scale=1.0, gen=gen_coverage, coverage=True,
                note="f32 values"))
        c(QCase("none", "f16", (256, 256), qt, "static", static_scale=1.0,
                dyn=(), gen=gen_coverage, coverage=True,
                note="all f16 values"))
        c(QCase("none", "bf16", (256, 256), qt, "static", static_scale=1.0,
                scale_type="tensor<1xf32>", gen=gen_coverage,
                coverage=True, note="all bf16 values"))
    return cases


def build_suite(suite):
    if suite == "quant_edge":
        return edge_suite()
    if suite.startswith("quant_") and suite[6:] in DTYPES:
        return dense_suite(suite[6:])
    raise SystemExit("unknown suite %r (suites: %s)" %
                     (suite, ", ".join(SUITES)))


# --------------------------------------------------------------------------
# gen
# --------------------------------------------------------------------------


class QEmitter(Emitter):
    def raw_value(self, opd, raw, base):
        """An operand written from its raw bits (NaN payloads kept)."""
        name = self.fresh(base)
        st = opd.static_type()
        assert sys.byteorder == "little"
        self.emit('%s = arith.constant dense<"0x%s"> : %s' % (
            name, raw.tobytes().hex().upper(), st))
        at = opd.arg_type()
        if at != st:
            cast = self.fresh(base + "d")
            self.emit("%s = tensor.cast %s : %s to %s" % (cast, name, st, at))
            name = cast
        return name

    def print_q(self, name, ttype, qtype):
        """Prints a quantized tensor as f32: f8 codes 0..255, i8 values."""
        wide = ttype.replace(qtype + ">", "f32>")
        if qtype == "f8E4M3FN":
            b = self.fresh("qb")
            i8t = ttype.replace(qtype + ">", "i8>")
            self.emit("%s = arith.bitcast %s : %s to %s" % (b, name, ttype,
                                                           i8t))
            e = self.fresh("qe")
            i32t = ttype.replace(qtype + ">", "i32>")
            self.emit("%s = arith.extui %s : %s to %s" % (e, b, i8t, i32t))
            f = self.fresh("qf")
            self.emit("%s = arith.uitofp %s : %s to %s" % (f, e, i32t, wide))
        else:
            f = self.fresh("qf")
            self.emit("%s = arith.sitofp %s : %s to %s" % (f, name, ttype,
                                                           wide))
        self.print_tensor(f, wide, "f32")


def gen(suite, out_mlir, out_npz):
    cases = build_suite(suite)
    funcs = []
    em = QEmitter()
    refs = {}
    meta = {"suite": suite, "cases": [], "outputs": []}
    for k, case in enumerate(cases):
        rng = np.random.default_rng([SEED, zlib.crc32(suite.encode()), k])
        case.fill(rng)
        funcs.append(case.emit_func(k))
        em.emit("// case %d" % k)
        args = []
        for kw, opd in case.operands():
            base = "%s%d" % (kw[0] if kw != "scale" else "sc", k)
            if kw == "x" and case.raw is not None:
                args.append(em.raw_value(opd, case.raw, base))
            else:
                args.append(em.value(opd, base))
        res = case.result_types()
        outs = [em.fresh("o%d" % k) for _ in res]
        em.emit("%s = call @case_%d(%s) {no_inline} : (%s) -> (%s)" % (
            ", ".join(outs), k, ", ".join(args),
            ", ".join(o.arg_type() for _, o in case.operands()),
            ", ".join(res)))
        for (kind, ref), v, t in zip(case.reference(), outs, res):
            if kind.startswith("q_"):
                em.print_q(v, t, case.qtype)
            else:
                em.print_tensor(v, t, "f32" if kind == "scale" else case.T)
            i = len(meta["outputs"])
            refs["ref_%d" % i] = ref
            meta["outputs"].append({"case": k, "name": kind})
        alts = case.alternatives() if case.amax_slack() else []
        for j, (sa, qa) in enumerate(alts):
            refs["alt_scale_%d_%d" % (k, j)] = sa
            refs["alt_q_%d_%d" % (k, j)] = qa
        meta["cases"].append({"desc": case.describe(),
                              "bound": BOUNDS[case.T], "dtype": case.T,
                              "coverage": case.coverage,
                              "alternatives": len(alts)})
    write_module(out_mlir, out_npz,
                 "// Generated by quant_exec.py gen %s (seed %d): %d cases." %
                 (suite, SEED, len(cases)), funcs, em, meta, refs)


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------


def _f8_ordinal(codes):
    c = codes.astype(np.int64)
    mag = c & 0x7F
    return np.where(c & 0x80, -mag, mag)


def compare_q(got, ref, kind):
    """(exact mask, distance array, problem or None) of quantized values."""
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    lo, hi = (0, 255) if kind == "q_f8" else (-128, 127)
    valid = np.isfinite(got) & (got == np.round(got)) & (got >= lo) & \
        (got <= hi)
    if not valid.all():
        i = int(np.argmax(~valid))
        return None, None, ("%d values not integers in [%d, %d], first "
                            "[%d]: %.9g" % (int((~valid).sum()), lo, hi, i,
                                            got[i]))
    if kind == "q_i8":
        return got == ref, np.abs(got - ref), None
    g = got.astype(np.uint8)
    r = ref.astype(np.uint8)
    gn = (g & 0x7F) == 0x7F
    rn = (r & 0x7F) == 0x7F
    dist = np.abs(_f8_ordinal(g) - _f8_ordinal(r)).astype(np.float64)
    dist[gn & rn] = 0.0
    dist[gn != rn] = np.inf
    exact = (g == r) | (gn & rn)
    return exact, dist, None


def scale_error(got, ref):
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    gn, rn = np.isnan(got), np.isnan(ref)
    if (gn != rn).any():
        i = int(np.argmax(gn != rn))
        return np.inf, "NaN mismatch at [%d]: got %.9g, ref %.9g" % (
            i, got[i], ref[i])
    inf = (np.isinf(got) | np.isinf(ref)) & ~rn
    if (got[inf] != ref[inf]).any():
        i = int(np.nonzero(inf & (got != ref))[0][0])
        return np.inf, "inf mismatch at [%d]: got %.9g, ref %.9g" % (
            i, got[i], ref[i])
    fin = np.isfinite(ref)
    if not fin.any():
        return 0.0, None
    with np.errstate(all="ignore"):
        d = np.abs(got[fin] - ref[fin])
        e = np.where(d == 0, 0.0, d / np.abs(ref[fin]))
    j = int(np.argmax(e))
    idx = int(np.nonzero(fin)[0][j])
    return float(e[j]), "worst [%d]: got %.9g, ref %.9g" % (idx, got[idx],
                                                            ref[idx])


def scale_matches(got, ref):
    """Per entry: the printed scale matches the reference scale (1e-5
    relative, NaN matches NaN, infinities equal)."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    with np.errstate(all="ignore"):
        close = np.abs(got - ref) <= SCALE_BOUND * np.abs(ref)
    return (np.isnan(got) & np.isnan(ref)) | (got == ref) | (
        close & np.isfinite(ref) & np.isfinite(got))


def choose_alternatives(scale, ref_s, ref_q, alts):
    """With amax slack: the reference scales and q in which every group
    whose printed scale does not match the reference's but matches that of
    a neighbouring amax (one ulp of T smaller or larger) takes that
    neighbour's scale and q. Returns (scales, q, number of such groups)."""
    s = ref_s.reshape(-1).copy()
    ngroups = s.size
    q = ref_q.reshape(ngroups, -1).copy() if ngroups else ref_q
    got = np.asarray(scale, dtype=np.float64).reshape(-1)
    taken = ~scale_matches(got, s)
    moved = 0
    for sa, qa in alts:
        hit = taken & scale_matches(got, sa.reshape(-1))
        s[hit] = sa.reshape(-1)[hit]
        q[hit] = qa.reshape(ngroups, -1)[hit]
        taken &= ~hit
        moved += int(hit.sum())
    return s.reshape(ref_s.shape), q.reshape(ref_q.shape), moved


def check_case(c, outs, alts):
    """Checks one case's printed outputs. outs: [(kind, sizes, values or an
    error string, reference)]; alts: [(scales, q)] (amax slack). Returns
    (stats, notes)."""
    st = {"n": 0, "exact": 0, "dist": 0.0, "scale": None, "res": None,
          "moved": 0}
    notes = []
    good = {}
    for kind, sizes, vals, r in outs:
        if vals is None:
            notes.append("%s: not printed" % kind)
        elif isinstance(vals, str):
            notes.append("%s: unreadable output: %s" % (kind, vals))
        elif tuple(sizes) != r.shape or vals.size != r.size:
            notes.append("%s: printed sizes %s with %d values, expected "
                         "shape %s" % (kind, list(sizes), vals.size,
                                       list(r.shape)))
        else:
            good[kind] = (vals, r)
    qkind = [k for k in good if k.startswith("q_")]
    if alts and "scale" in good and qkind:
        vals, rs = good["scale"]
        qv, rq = good[qkind[0]]
        rs, rq, st["moved"] = choose_alternatives(vals, rs, rq, alts)
        good["scale"] = (vals, rs)
        good[qkind[0]] = (qv, rq)
    for kind, (vals, r) in good.items():
        if kind.startswith("q_"):
            exact, dist, why = compare_q(vals, r, kind)
            if why:
                notes.append("%s: %s" % (kind, why))
                continue
            st["n"] += exact.size
            st["exact"] += int(exact.sum())
            if dist.size:
                st["dist"] = max(st["dist"], float(dist.max()))
            bad = np.nonzero(~exact)[0]
            frac = exact.mean() if exact.size else 1.0
            need = 1.0 if c["coverage"] else EXACT_MIN
            if dist.size and (dist.max() > 1 or frac < need):
                far = np.nonzero(dist > 1)[0]
                show = far if far.size else bad
                ex = ", ".join("[%d] got %g ref %g" % (j, vals[j], r.flat[j])
                               for j in show[:4])
                notes.append("%s: %d of %d not exact (%.2f%%, need %g%%), "
                             "%d more than one step off; %s" % (
                                 kind, bad.size, exact.size, 100 * frac,
                                 100 * need, far.size, ex))
        elif kind == "scale":
            e, why = scale_error(vals, r)
            st["scale"] = max(st["scale"] or 0.0, e)
            if not e <= SCALE_BOUND:
                notes.append("scale: rel err %.3g > %g, %s" % (
                    e, SCALE_BOUND, why))
        else:
            e, why = compare(vals, r)
            st["res"] = max(st["res"] or 0.0, e)
            if not within(e, c["bound"]) or not np.isfinite(e):
                notes.append("%s: err %.3g (bound %.3g), %s" % (
                    kind, e, c["bound"], why))
    return st, notes


def check(ref_npz, output):
    ref = np.load(ref_npz)
    meta = json.loads(str(ref["meta"]))
    with open(output) as f:
        got = parse_printed(f.read())
    outs = meta["outputs"]
    ncases = len(meta["cases"])
    if len(got) != len(outs):
        print("error: %d printed tensors, expected %d" % (len(got),
                                                        len(outs)))
    per_case = [[] for _ in range(ncases)]
    for i, o in enumerate(outs):
        sizes, vals = got[i] if i < len(got) else (None, None)
        per_case[o["case"]].append((o["name"], sizes, vals,
                                    ref["ref_%d" % i]))
    failed = 0
    for k, c in enumerate(meta["cases"]):
        alts = [(ref["alt_scale_%d_%d" % (k, j)], ref["alt_q_%d_%d" % (k, j)])
                for j in range(c.get("alternatives", 0))]
        st, notes = check_case(c, per_case[k], alts)
        ok = not notes
        failed += not ok
        frac = st["exact"] / st["n"] if st["n"] else 0.0
        line = "%s: %s; exact %.2f%%, max dist %g" % (
            "PASS" if ok else "FAIL", case_label(k, c["desc"]), 100 * frac,
            st["dist"])
        if st["scale"] is not None:
            line += ", scale err %.3g" % st["scale"]
        if st["moved"]:
            line += " (%d group amax 1 ulp off)" % st["moved"]
        if st["res"] is not None:
            line += ", residual err %.3g" % st["res"]
        print(line)
        for n in notes:
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
                labels.append(rest.split(";")[0].strip())
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
