#!/usr/bin/env python3
"""CPU execution of every op in the shapes the lowerings treat specially.

  shapes_exec.py gen FAMILY OUT.mlir REF.npz [--fold]
      Writes the module and the float64 references of the `shapes` cases of
      FAMILY with the family's own driver (below). With --fold, every
      @case_K takes the inputs @main passes through a tensor.cast to `?`
      dims with their static types instead, and casts them to the `?` dims
      itself: the op then sees dims that are dynamic in its types but fold
      to constants (a tensor.cast of a static tensor).
  shapes_exec.py check FAMILY REF.npz OUTPUT.txt
      The family driver's checker (one PASS or FAIL line per case).
  shapes_exec.py names FAMILY
      The case names, as the lit test lists them.

Families, and the driver that generates and checks them against its f64
reference (test/tools/normref.py):
  norm   norm_exec.py: layer_norm, rms_norm, dyt (residual included)
  quant  quant_exec.py: norm.quantize alone and fused after a norm
  grad   grad_exec.py: the *_grad ops, and the forward with return_stats
         (alone and feeding the gradient ops)

The shapes: statically empty (a 0 dim among the rows, or rows of N = 0:
empty results, NaN statistics, min_scale scales) and sizes that are dynamic
in the op's type, including a single row (`?x?` holding 1x6) and rank 3.
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grad_exec  # noqa: E402
import norm_exec  # noqa: E402
import numpy as np  # noqa: E402
import quant_exec  # noqa: E402
from norm_exec import rnd  # noqa: E402

SUITE = "shapes"


# --------------------------------------------------------------------------
# Rows of N = 0 elements, which the drivers' references do not take
# --------------------------------------------------------------------------


def _empty_rows(x, axis):
    x = np.asarray(x)
    axis = axis + x.ndim if axis < 0 else axis
    return x.size == 0 and int(np.prod(x.shape[axis:], dtype=np.int64)) == 0


class Case(norm_exec.Case):
    """norm_exec.Case; with N = 0, y and residual_out are empty (their
    reference has no value to compute)."""

    def reference(self):
        if not _empty_rows(self.x.data, self.axis):
            return super().reference()
        empty = np.zeros(self.shape)
        return [("y", empty)] + ([("residual_out", empty)] if self.r else [])


class QCase(quant_exec.QCase):
    """quant_exec.QCase; with N = 0 (per token), the rows have one group of
    no element: amax = 0, so the scale is min_scale (docs/Ops.md)."""

    def _n0(self):
        return self.shape[-1] == 0

    def y_ref(self):
        if self._n0():
            return np.zeros(self.shape)
        return super().y_ref()

    def result_types(self):
        if not self._n0():
            return super().result_types()
        d = self.dims()
        res = [quant_exec.tensor_type(d, self.qtype)]
        if self.mode != "static":
            res.append(quant_exec.tensor_type(d[:-1] + [1], "f32"))
        if self.residual():
            res.append(self.y_type())
        return res

    def amax_slack(self):
        return not self._n0() and super().amax_slack()

    def reference(self):
        if not self._n0():
            return super().reference()
        outs = [("q_" + quant_exec.QSHORT[self.qtype], np.zeros(self.shape))]
        if self.mode != "static":
            s = quant_exec.scales_of(np.zeros(self.shape[:-1] + (1,)),
                                     self.qtype, self.scale_ub,
                                     self.min_scale)
            outs.append(("scale", s.astype(np.float64)))
        if self.residual():
            outs.append(("residual_out", np.zeros(self.shape)))
        return outs


_grad_literal = grad_exec.literal


def _literal(values, shape, t):
    """grad_exec.literal, and `dense<>` for tensors of no element (its
    nested lists would give the wrong shape)."""
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return "arith.constant dense<> : %s" % grad_exec.ttype(shape, t)
    return _grad_literal(values, shape, t)


grad_exec.literal = _literal


def empty_rows_case(op, t, m, params, dynamic=False, stats=False):
    """A grad_exec case on x of shape [m, 0] (rows of N = 0): the gradient
    op (dx, dweight, dbias empty; DyT's dalpha, a sum over no element, 0),
    or with `stats` the forward with return_stats (y empty; mean and rstd
    NaN, 0 / 0)."""
    ct = grad_exec.compute_type(t)
    rows = "?" if dynamic else m
    xt = grad_exec.ttype((rows, 0), t)
    st = grad_exec.ttype((rows,), ct)
    wt = grad_exec.ttype((0,), t)
    empty = np.zeros((m, 0))
    nan = np.full((m,), np.nan)
    w = params in ("w", "wb")
    b = params == "wb" and op != "rms_norm"
    if stats:
        nstats = 2 if op == "layer_norm" else 1
        args = ["%%x: %s" % xt] + (["%%w: %s" % wt] if w else []) + \
            (["%%b: %s" % wt] if b else [])
        inputs = [((m, 0), t, empty)] + ([((0,), t, np.zeros(0))] if w else
                                          []) + \
            ([((0,), t, np.zeros(0))] if b else [])
        res = [xt] + [st] * nstats
        names = ["%y", "%mean", "%rstd"][:1] + \
            (["%mean"] if nstats == 2 else []) + ["%rstd"]
        ops = (" weight(%w)" if w else "") + (" bias(%b)" if b else "")
        body = "  %s = norm.%s %%x%s {return_stats} : (%s) -> (%s)\n" \
            "  return %s : %s" % (
                ", ".join(names), op, ops,
                ", ".join([xt] + [wt] * (int(w) + int(b))), ", ".join(res),
                ", ".join(names), ", ".join(res))
        outputs = [((m, 0), t, empty)] + [((m,), ct, nan)] * nstats
        desc = "%s return_stats %s [%d,0] %s%s" % (
            op, t, m, {"wb": "weight+bias", "w": "weight",
                       "none": "no params"}[params],
            ", dynamic rows" if dynamic else "")
        return grad_exec.Case(desc, ("(%s) -> (%s)" % (", ".join(args),
                                                       ", ".join(res)), body),
                              inputs, outputs)
    args = ["%%dy: %s" % xt, "%%x: %s" % xt]
    inputs = [((m, 0), t, empty), ((m, 0), t, empty)]
    optypes = [xt, xt]
    ops = ""
    ones = np.ones((m,))
    if op == "layer_norm":
        args += ["%%mean: %s" % st, "%%rstd: %s" % st]
        inputs += [((m,), ct, ones), ((m,), ct, ones)]
        optypes += [st, st]
        ops += " mean(%mean) rstd(%rstd)"
    elif op == "rms_norm":
        args.append("%%rstd: %s" % st)
        inputs.append(((m,), ct, ones))
        optypes.append(st)
        ops += " rstd(%rstd)"
    else:
        args.append("%%alpha: tensor<%s>" % t)
        inputs.append(((), t, np.array(0.5)))
        optypes.append("tensor<%s>" % t)
        ops += " alpha(%alpha)"
    res, outputs = [xt], [((m, 0), t, empty)]
    if w:
        args.append("%%w: %s" % wt)
        inputs.append(((0,), t, np.zeros(0)))
        optypes.append(wt)
        ops += " weight(%w)"
        res.append(wt)
        outputs.append(((0,), t, np.zeros(0)))
    if b:
        res.append(wt)
        outputs.append(((0,), t, np.zeros(0)))
    if op == "dyt":
        res.append("tensor<%s>" % t)
        outputs.append(((), t, np.array(0.0)))
    names = ", ".join("%%r%d" % i for i in range(len(res)))
    body = "  %s = norm.%s_grad %%dy, %%x%s%s : (%s) -> (%s)\n" \
        "  return %s : %s" % (names, op, ops, " {has_bias}" if b else "",
                              ", ".join(optypes), ", ".join(res), names,
                              ", ".join(res))
    desc = "%s_grad %s [%d,0] %s%s" % (
        op, t, m, {"wb": "weight+bias", "w": "weight", "none": "no params"}[
            params], ", dynamic rows" if dynamic else "")
    return grad_exec.Case(desc, ("(%s) -> (%s)" % (", ".join(args),
                                                   ", ".join(res)), body),
                          inputs, outputs)


def norm_cases():
    """norm_exec.Case: op, T, shape, then keywords."""
    c = []
    # Statically empty: no rows, rows of N = 0, normalized dims 0x8.
    c.append(Case("layer_norm", "f32", (4, 0), weight="f32", bias="f32",
                  dyn=(), note="N=0"))
    c.append(Case("layer_norm", "f32", (4, 0), weight="f32", bias="f32",
                  dyn=(0, 1), weight_dyn=(0,), residual=True, note="N=0"))
    c.append(Case("rms_norm", "bf16", (4, 0), weight="bf16", residual=True,
                  dyn=(), note="N=0"))
    c.append(Case("rms_norm", "f32", (2, 0, 8), axis=-2, weight="f32",
                  dyn=(0,), note="N=0"))
    c.append(Case("dyt", "f16", (3, 0), alpha=("f16", (), 0.5),
                  weight="f16", bias="f16", dyn=(1,), note="N=0"))
    c.append(Case("layer_norm", "bf16", (0, 24), weight="bf16", dyn=(),
                  note="no rows"))
    c.append(Case("rms_norm", "f32", (0, 24), dyn=(0, 1), note="no rows"))
    c.append(Case("dyt", "f32", (0, 2, 8), axis=-2, alpha=("f32", (), 0.7),
                  dyn=(1,), note="no rows"))
    # Dynamic dims (folded to constants with --fold).
    c.append(Case("layer_norm", "f32", (6, 40), weight="f32", bias="f32",
                  dyn=(0, 1), weight_dyn=(0,), note="?x?"))
    c.append(Case("layer_norm", "f32", (4, 40), weight="f32", bias="f32",
                  residual=True, dyn=(1,), note="4x?"))
    c.append(Case("layer_norm", "f32", (1, 6), weight="f32", bias="f32",
                  dyn=(0, 1), weight_dyn=(0,), note="one row"))
    c.append(Case("rms_norm", "f32", (1, 6), dyn=(0, 1), note="one row"))
    c.append(Case("rms_norm", "bf16", (5, 72), weight="bf16", residual=True,
                  dyn=(0, 1), note="?x?"))
    c.append(Case("rms_norm", "f16", (3, 40), eps_mode="clamp", eps=0.1,
                  dyn=(1,), note="3x?"))
    c.append(Case("dyt", "f32", (5, 24), alpha=("f32", (), 0.5),
                  weight="f32", bias="f32", residual=True, dyn=(0, 1),
                  weight_dyn=(0,), note="?x?"))
    c.append(Case("dyt", "bf16", (1, 6), alpha=("bf16", (1,), 0.8),
                  dyn=(0, 1), note="one row"))
    c.append(Case("layer_norm", "f32", (2, 3, 16), axis=-2, weight="f32",
                  bias="f32", dyn=(1,), note="rank 3"))
    c.append(Case("rms_norm", "f32", (2, 3, 16), dyn=(0, 1), note="rank 3"))
    c.append(Case("layer_norm", "f64", (3, 2, 8), axis=0, dyn=(0, 2),
                  note="all dims normalized"))
    # Squares that overflow the compute type, of rows whose variance or
    # mean square does not: [1e20, 0, ..., 0] and the like.
    for op, T, dyn in (("layer_norm", "f32", ()), ("layer_norm", "bf16",
                                                     (0,)),
                       ("rms_norm", "f32", (0, 1)), ("layer_norm", "f32",
                                                     (0, 1))):
        c.append(Case(op, T, (4, 64), weight="f32", dyn=dyn,
                      weight_dyn=(0,) if 1 in dyn else (),
                      gen=gen_huge_rows, note="squares overflow"))
    return c


def gen_huge_rows(case, rng):
    """Rows with a few elements near 1e20 (their squares overflow f32),
    the rest small, and one ordinary row."""
    x = case.x.data.reshape(-1, case.x.data.shape[-1]).copy()
    x[0, :] = 0.0
    x[0, 0] = 1e20
    x[1, :] *= 1e-3
    x[1, 5] = -3e19
    x[1, 40] = 2e19
    x[2, :] = 1e19 * np.sign(x[2, :])
    case.x.data = rnd(x.reshape(case.shape), case.T)


def quant_cases():
    """quant_exec.QCase: op, T, shape, q type, mode, then keywords."""
    f8, i8 = "f8E4M3FN", "i8"
    c = []
    # Statically empty rows (N = 0): the dynamic scales are min_scale.
    c.append(QCase("none", "f32", (4, 0), f8, "per_token", dyn=(),
                   note="N=0"))
    c.append(QCase("none", "bf16", (4, 0), i8, "per_token", dyn=(1,),
                   note="N=0"))
    c.append(QCase("none", "f16", (2, 3, 0), f8, "per_token", dyn=(0,),
                   min_scale=0.25, note="N=0"))
    c.append(QCase("rms_norm", "f32", (4, 0), f8, "per_token", dyn=(),
                   weight="f32", note="N=0"))
    c.append(QCase("layer_norm", "bf16", (3, 0), i8, "per_token", dyn=(0,),
                   weight="bf16", bias="bf16", residual=True, note="N=0"))
    c.append(QCase("dyt", "f32", (2, 0), f8, "per_token", dyn=(),
                   alpha=("f32", (), 0.5), note="N=0"))
    c.append(QCase("none", "f32", (4, 0), f8, "static", dyn=(),
                   static_scale=0.5, note="N=0"))
    c.append(QCase("none", "f32", (0, 64), f8, 32, dyn=(), note="no rows"))
    c.append(QCase("rms_norm", "f32", (0, 64), i8, "per_token", dyn=(0,),
                   weight="f32", note="no rows"))
    # Dynamic dims (folded to constants with --fold).
    c.append(QCase("none", "f32", (1, 6), f8, "per_token", dyn=(0, 1),
                   note="one row"))
    c.append(QCase("none", "bf16", (5, 64), i8, 32, dyn=(0,), note="?x64"))
    c.append(QCase("none", "f32", (4, 40), i8, "static", dyn=(0, 1),
                   note="?x?"))
    c.append(QCase("rms_norm", "bf16", (5, 64), f8, "per_token", dyn=(0, 1),
                   weight="bf16", note="?x?"))
    c.append(QCase("layer_norm", "f32", (4, 64), i8, 16, dyn=(0,),
                   weight="f32", bias="f32", residual=True, note="?x64"))
    c.append(QCase("rms_norm", "f32", (1, 6), f8, "per_token", dyn=(0, 1),
                   note="one row"))
    c.append(QCase("dyt", "f16", (3, 48), f8, "static", dyn=(1,),
                   alpha=("f16", (), 0.5), weight="f16", note="3x?"))
    c.append(QCase("none", "f32", (2, 3, 32), f8, 16, dyn=(0, 1),
                   note="rank 3"))
    return c


def far_mean_case(op, t, shape, dynamic=False):
    """The forward with return_stats on rows whose mean is far below their
    first element ([1, 0, ..., 0] and the like): the mean must be rounded
    once (docs/Ops.md#statistics-return_stats). Outputs: the statistics."""
    m, n = shape
    ct = grad_exec.compute_type(t)
    x = np.zeros(shape)
    x[:, 0] = ([1.0, 3.0, -5.0] * m)[:m]
    x = rnd(x, t)
    eps = 1e-5
    mu = x.mean(axis=1)
    var = ((x - mu[:, None]) ** 2).mean(axis=1)
    stats = [rnd(mu, ct), rnd(1 / np.sqrt(var + eps), ct)]
    if op == "rms_norm":
        stats = [rnd(1 / np.sqrt((x * x).mean(axis=1) + 1e-6), ct)]
    xt = grad_exec.ttype(("?" if dynamic else m, n), t)
    st = grad_exec.ttype(("?" if dynamic else m,), ct)
    names = ["%y"] + (["%mean"] if op == "layer_norm" else []) + ["%rstd"]
    res = [xt] + [st] * (len(names) - 1)
    body = "  %s = norm.%s %%x {return_stats} : (%s) -> (%s)\n" \
        "  return %s : %s" % (", ".join(names), op, xt, ", ".join(res),
                              ", ".join(names[1:]), ", ".join(res[1:]))
    desc = "%s return_stats %s [%d,%d] mean far below the first element%s" \
        % (op, t, m, n, ", dynamic rows" if dynamic else "")
    return grad_exec.Case(desc, ("(%%x: %s) -> (%s)" % (xt, ", ".join(
        res[1:])), body), [(shape, t, x)],
        [((m,), ct, v) for v in stats])


def grad_cases():
    """grad_exec cases: gradients (make_case), forward statistics alone and
    feeding the gradients (make_train_case)."""
    mk, train = grad_exec.make_case, grad_exec.make_train_case
    c = []
    # Statically empty: rows of N = 0, no rows.
    c.append(empty_rows_case("layer_norm", "f32", 4, "wb"))
    c.append(empty_rows_case("rms_norm", "f32", 4, "w"))
    c.append(empty_rows_case("dyt", "bf16", 4, "wb"))
    c.append(empty_rows_case("layer_norm", "f32", 4, "wb", dynamic=True))
    c.append(mk(3005, "layer_norm", "f32", (0, 16), "wb"))
    c.append(mk(3006, "rms_norm", "bf16", (0, 16), "w", dynamic=True))
    c.append(empty_rows_case("layer_norm", "f32", 4, "wb", stats=True))
    c.append(empty_rows_case("rms_norm", "bf16", 3, "w", stats=True))
    c.append(empty_rows_case("layer_norm", "f32", 4, "none", dynamic=True,
                             stats=True))
    c.append(train(3009, "layer_norm", "f32", (0, 16), "wb", dynamic=True))
    # Dynamic dims (folded to constants with --fold).
    c.append(mk(3010, "layer_norm", "f32", (6, 40), "wb", dynamic="all"))
    c.append(mk(3011, "rms_norm", "f32", (1, 6), "w", dynamic="all"))
    c.append(mk(3012, "dyt", "f32", (5, 24), "wb", dynamic=True))
    c.append(mk(3013, "layer_norm", "bf16", (3, 72), "none", dynamic="all"))
    c.append(train(3014, "layer_norm", "f32", (6, 40), "wb", dynamic=True,
                   residual=True))
    c.append(train(3015, "rms_norm", "bf16", (1, 64), "w", dynamic=True))
    c.append(train(3016, "layer_norm", "f32", (2, 3, 16), "wb",
                   dynamic=True, with_grad=False))
    c.append(train(3017, "rms_norm", "f32", (1, 6), "w", dynamic=True,
                   with_grad=False))
    # The mean statistic of rows whose mean is far below their first element.
    c.append(far_mean_case("layer_norm", "f32", (3, 4099)))
    c.append(far_mean_case("layer_norm", "f32", (3, 4099), dynamic=True))
    c.append(far_mean_case("layer_norm", "bf16", (3, 6000)))
    return c


def install(family):
    """Makes the family driver's suite named SUITE our cases; returns the
    driver's (gen, check, names) functions."""
    if family == "norm":
        original = norm_exec.build_suite
        norm_exec.build_suite = lambda s: norm_cases() if s == SUITE else \
            original(s)
        return (norm_exec.gen, norm_exec.check,
                lambda: [c.describe() for c in norm_cases()])
    if family == "quant":
        original = quant_exec.build_suite
        quant_exec.build_suite = lambda s: quant_cases() if s == SUITE else \
            original(s)
        return (quant_exec.gen, quant_exec.check,
                lambda: [c.describe() for c in quant_cases()])
    if family == "grad":
        original = grad_exec.suite
        grad_exec.suite = lambda s: grad_cases() if s == SUITE else \
            original(s)
        return (grad_exec.generate, grad_exec.check,
                lambda: [c.description for c in grad_cases()])
    raise SystemExit("unknown family %r (norm, quant, grad)" % family)


# --------------------------------------------------------------------------
# --fold: the casts to `?` dims move from @main into the cases
# --------------------------------------------------------------------------

CAST = re.compile(r"^\s*(%[\w.]+) = tensor\.cast (%[\w.]+) : "
                  r"(tensor<[^>]*>) to (tensor<[^>]*>)\s*$")
CALL = re.compile(r"^(\s*.*= (?:func\.)?call @(case_\d+))\(([^)]*)\)(.*?)"
                  r": \(([^)]*)\)(.*)$")
FUNC = re.compile(r"^func\.func @(case_\d+)\((.*)\) -> (.*) \{$")


def fold_casts(text):
    lines = text.split("\n")
    casts = {}
    for line in lines:
        m = CAST.match(line)
        if m and "*" not in m.group(4):
            casts[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    # Per case: argument index -> (static type, dynamic type).
    static_args = {}
    for i, line in enumerate(lines):
        m = CALL.match(line)
        if not m:
            continue
        operands = m.group(3).split(", ")
        types = m.group(5).split(", ")
        folded = {}
        for j, (v, t) in enumerate(zip(operands, types)):
            if v in casts and casts[v][2] == t:
                operands[j], types[j] = casts[v][0], casts[v][1]
                folded[j] = (casts[v][1], t)
        static_args[m.group(2)] = folded
        lines[i] = "%s(%s)%s: (%s)%s" % (m.group(1), ", ".join(operands),
                                        m.group(4), ", ".join(types),
                                        m.group(6))
    out = []
    for line in lines:
        m = FUNC.match(line)
        if not m or not static_args.get(m.group(1)):
            out.append(line)
            continue
        folded = static_args[m.group(1)]
        args = m.group(2).split(", ")
        body = []
        for j, (st, dt) in folded.items():
            name, _ = args[j].split(": ", 1)
            args[j] = "%s_static: %s" % (name, st)
            body.append("  %s = tensor.cast %s_static : %s to %s" %
                        (name, name, st, dt))
        out.append("func.func @%s(%s) -> %s {" % (m.group(1),
                                                 ", ".join(args),
                                                 m.group(3)))
        out += body
    return "\n".join(out)


def main(argv):
    if len(argv) >= 5 and argv[1] == "gen" and argv[5:] in ([], ["--fold"]):
        gen, _, _ = install(argv[2])
        gen(SUITE, argv[3], argv[4])
        if argv[5:]:
            with open(argv[3]) as f:
                text = f.read()
            with open(argv[3], "w") as f:
                f.write(fold_casts(text))
        return 0
    if len(argv) == 5 and argv[1] == "check":
        _, check, _ = install(argv[2])
        return check(argv[3], argv[4])
    if len(argv) == 3 and argv[1] == "names":
        _, _, names = install(argv[2])
        for k, desc in enumerate(names()):
            print("case_%d: %s" % (k, desc))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
