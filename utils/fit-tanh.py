#!/usr/bin/env python3
"""Fits the rational tanh approximations of the CPU DyT lowering and
measures their error as the generated code evaluates them.

    python3 utils/fit-tanh.py                  # every approximation
    python3 utils/fit-tanh.py --stride 1       # every f32 in [0, 12]

The approximation is `tanh(x) ~ x * P(x^2) / Q(x^2)` on `x` clamped to
`[-c, c]`, with `Q(0) = 1`: an odd function, exact at 0, relatively accurate
near 0, and `+-r(c)` (within the bound of 1) beyond the clamp. The
coefficients are fitted to the minimax relative error on `(0, c]` by
Lawson's iteratively reweighted least squares on the linearized residual
`x P - tanh(x) Q`, then rounded to f32 (the code's constants).

The error is then measured as `lib/Dialect/Norm/Utils/TanhApproximation.cpp`
evaluates the function in f32: clamp, `t = x * x`, Horner with fused
multiply-adds (one rounding each), `x * P`, one correctly rounded division.
Every `stride`-th f32 bit pattern in `[0, 12]` is evaluated (the function is
odd, negative inputs behave alike) against f64 `tanh`; the maximum absolute
error is the bound docs/Numerics.md documents and the tests check.
"""

import argparse

import numpy as np

# name: (degree of P in x^2, degree of Q in x^2, clamp c)
APPROXIMATIONS = {
    "f32": (3, 4, 8.0),   # [7/8], outputs of f32 (and wider) DyT
    "f16": (2, 3, 6.5),   # [5/6], f16 outputs
    "bf16": (2, 2, 5.1),  # [5/4], bf16 outputs
}


def fit(p_deg, q_deg, c, iterations=200):
    """(max relative error of the f64 fit, p, q) with q[0] = 1."""
    x = np.sort(np.concatenate([np.linspace(1e-4, c, 20000),
                                np.geomspace(1e-6, 1e-4, 200)]))
    t = (x / c) ** 2  # scaled for conditioning
    f = np.tanh(x)
    weights = np.ones_like(x)
    q_prev = np.ones_like(x)
    best = None
    for _ in range(iterations):
        a = np.hstack([np.vstack([x * t**k for k in range(p_deg + 1)]).T,
                       np.vstack([-f * t**k
                                  for k in range(1, q_deg + 1)]).T])
        s = np.sqrt(weights) / (f * q_prev)
        sol, *_ = np.linalg.lstsq(a * s[:, None], f * s, rcond=None)
        p = sol[:p_deg + 1]
        q = np.concatenate([[1.0], sol[p_deg + 1:]])
        pv = sum(p[k] * t**k for k in range(p_deg + 1))
        qv = sum(q[k] * t**k for k in range(q_deg + 1))
        err = (x * pv / qv - f) / f
        worst = np.abs(err).max()
        if best is None or worst < best[0]:
            best = (worst, p.copy(), q.copy())
        weights = weights * np.abs(err)
        weights /= weights.sum()
        q_prev = qv
    worst, p, q = best
    p = p / c ** (2 * np.arange(p_deg + 1))
    q = q / c ** (2 * np.arange(q_deg + 1))
    return worst, p.astype(np.float32), q.astype(np.float32)


def evaluate_f32(p, q, c, x):
    """The approximation as the generated code computes it, in f32 (a fused
    multiply-add is formed in f64, exact for f32 operands, and rounded)."""
    f32, f64 = np.float32, np.float64
    x = np.clip(x.astype(f32), -f32(c), f32(c))
    t = (x.astype(f64) * x).astype(f32)

    def horner(co):
        acc = np.full_like(t, co[-1])
        for k in range(len(co) - 2, -1, -1):
            acc = (acc.astype(f64) * t + f64(co[k])).astype(f32)
        return acc

    num = (x.astype(f64) * horner(p)).astype(f32)
    return (num.astype(f64) / horner(q)).astype(f32)


def measure(p, q, c, stride):
    """(max abs error, where) over every stride-th f32 in [0, 12]."""
    lo = 0
    hi = int(np.array(12.0, np.float32).view(np.uint32))
    worst, where = 0.0, 0.0
    chunk = 1 << 22
    for start in range(lo, hi + 1, chunk * stride):
        bits = np.arange(start, min(start + chunk * stride, hi + 1), stride,
                         dtype=np.uint32)
        x = bits.view(np.float32)
        err = np.abs(evaluate_f32(p, q, c, x).astype(np.float64) -
                     np.tanh(x.astype(np.float64)))
        i = int(err.argmax())
        if err[i] > worst:
            worst, where = float(err[i]), float(x[i])
    return worst, where


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stride", type=int, default=61,
                    help="evaluate every STRIDE-th f32 bit pattern")
    ap.add_argument("names", nargs="*", default=list(APPROXIMATIONS))
    args = ap.parse_args()
    for name in args.names:
        p_deg, q_deg, c = APPROXIMATIONS[name]
        fit_err, p, q = fit(p_deg, q_deg, c)
        worst, where = measure(p, q, c, args.stride)
        print("%s: [%d/%d] on [-%g, %g]: fit %.3g relative; f32 evaluation "
              "%.3g absolute (at %.7g)" % (name, 2 * p_deg + 1, 2 * q_deg, c,
                                           c, fit_err, worst, where))
        print("  P = {%s}" % ", ".join("%.9gf" % v for v in p))
        print("  Q = {%s}" % ", ".join("%.9gf" % v for v in q))


if __name__ == "__main__":
    main()
