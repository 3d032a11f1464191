#!/usr/bin/env python3
"""Execution tests of the matmuls norm-cpu-pipeline compiles
(norm-vectorize-matmul) against a float64 NumPy reference.

  matmul_exec.py gen OUT.mlir OUT.npz    write the module and the reference
  matmul_exec.py check OUT.npz OUTPUT    compare mlir-runner's output
                                         (norm_exec.py check: one PASS or
                                         FAIL line per case, then a summary)
  matmul_exec.py names                   the case names, as matmul.test
                                         lists them

Each case is one function `@case_K(%a, %b, %c) -> c + a @ b` (matmul, its
transposed-B form, batch_matmul, f32/f64, static and dynamic dims, sizes that
leave partial register tiles and cache blocks), called from @main on dense
constants; the reference is computed in float64 from the same values and
judged with normref.py's metric and bounds (docs/Numerics.md#error-metric-and-bounds).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_exec import BOUNDS, Emitter, case_label, check, dense_lit, \
    write_module  # noqa: E402

SEED = 20261203

# (kind, dtype, (batch,) M, N, K, which dims are dynamic in the argument
# types: a string of letters from "bmnk").
CASES = [
    ("matmul", "f32", (8, 64, 16), ""),            # one register tile row
    ("matmul", "f32", (1, 96, 40), ""),             # decode: M = 1
    ("matmul", "f32", (13, 70, 37), ""),            # partial M, N, K tiles
    ("matmul", "f32", (32, 300, 520), ""),          # partial N and K blocks
    ("matmul", "f32", (19, 33, 21), "m"),           # dynamic rows
    ("matmul", "f32", (9, 65, 30), "mnk"),          # everything dynamic
    ("matmul", "f64", (10, 24, 12), ""),            # f64: 8 lanes per vector
    ("matmul_tb", "f32", (6, 40, 17), ""),          # B transposed (nn.Linear)
    ("batch_matmul", "f32", (3, 5, 40, 9), ""),     # batch dim
    ("batch_matmul", "f32", (2, 9, 34, 8), "bm"),   # dynamic batch and rows
]

TRANSPOSE_B = ("indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
               "affine_map<(m, n, k) -> (n, k)>, "
               "affine_map<(m, n, k) -> (m, n)>]")


def shapes(kind, dims):
    if kind == "batch_matmul":
        b, m, n, k = dims
        return (b, m, k), (b, k, n), (b, m, n), "bmk", "bkn", "bmn"
    m, n, k = dims
    if kind == "matmul_tb":
        return (m, k), (n, k), (m, n), "mk", "nk", "mn"
    return (m, k), (k, n), (m, n), "mk", "kn", "mn"


def ttype(shape, letters, dynamic, etype):
    dims = ["?" if l in dynamic else str(s) for s, l in zip(shape, letters)]
    return "tensor<%sx%s>" % ("x".join(dims), etype)


def describe(kind, etype, dims, dynamic):
    return "%s %s %s dynamic=%s" % (kind, etype, "x".join(map(str, dims)),
                                    dynamic or "none")


def gen(out_mlir, out_npz):
    em = Emitter()
    funcs, refs = [], {}
    meta = {"cases": [], "outputs": []}
    for k, (kind, etype, dims, dynamic) in enumerate(CASES):
        rng = np.random.default_rng([SEED, k])
        npt = np.float32 if etype == "f32" else np.float64
        sa, sb, sc, la, lb, lc = shapes(kind, dims)
        a = rng.standard_normal(sa).astype(npt).astype(np.float64)
        b = rng.standard_normal(sb).astype(npt).astype(np.float64)
        c = rng.standard_normal(sc).astype(npt).astype(np.float64)
        bt = np.swapaxes(b, -1, -2) if kind == "matmul_tb" else b
        ref = c + np.matmul(a, bt)
        static = [ttype(s, l, "", etype) for s, l in
                  ((sa, la), (sb, lb), (sc, lc))]
        args = [ttype(s, l, dynamic, etype) for s, l in
                ((sa, la), (sb, lb), (sc, lc))]
        op = "linalg.batch_matmul" if kind == "batch_matmul" else \
            "linalg.matmul"
        if kind == "matmul_tb":
            op = "linalg.matmul " + TRANSPOSE_B
        funcs.append(
            "func.func @case_%d(%%a: %s, %%b: %s, %%c: %s) -> %s {\n"
            "  %%r = %s ins(%%a, %%b : %s, %s) outs(%%c : %s) -> %s\n"
            "  return %%r : %s\n}" % (k, args[0], args[1], args[2], args[2],
                                      op, args[0], args[1], args[2], args[2],
                                      args[2]))
        names = []
        for data, st, at, base in zip((a, b, c), static, args, "abc"):
            name = em.fresh("%s%d" % (base, k))
            em.emit("%s = arith.constant %s : %s" %
                    (name, dense_lit(data, etype), st))
            if at != st:
                cast = em.fresh(base + "d")
                em.emit("%s = tensor.cast %s : %s to %s" % (cast, name, st, at))
                name = cast
            names.append(name)
        y = em.fresh("y%d" % k)
        em.emit("%s = call @case_%d(%s) {no_inline} : (%s) -> %s" %
                (y, k, ", ".join(names), ", ".join(args), args[2]))
        em.print_tensor(y, args[2], etype)
        refs["ref_%d" % len(meta["outputs"])] = ref
        meta["outputs"].append({"case": k, "name": "c"})
        meta["cases"].append({"desc": describe(kind, etype, dims, dynamic),
                              "bound": BOUNDS[etype], "dtype": etype})
    write_module(out_mlir, out_npz,
                 "// Generated by matmul_exec.py gen (seed %d): %d cases." %
                 (SEED, len(CASES)), funcs, em, meta, refs)


def main(argv):
    if len(argv) == 2 and argv[1] == "names":
        print("\n".join(case_label(k, describe(*case))
                        for k, case in enumerate(CASES)))
        return 0
    if len(argv) == 4 and argv[1] == "gen":
        gen(argv[2], argv[3])
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
