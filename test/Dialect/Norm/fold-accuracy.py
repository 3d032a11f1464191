#!/usr/bin/env python3
"""Constant folding of the norm ops against the float64 reference.

    fold-accuracy.py gen OUT.mlir     writes functions returning norm ops on
                                      constant inputs (the same rows with a
                                      weight and bias as dense and as
                                      dense_resource constants)
    fold-accuracy.py check IN.mlir    reads the folded constants that
                                      `norm-opt --canonicalize` printed and
                                      prints PASS/FAIL per case against
                                      test/tools/normref.py

Cases: LayerNorm rows 1e4 + N(0, 0.1^2) in f32 (whose f32 mean is off by up
to half an ulp of 1e4, so a mean subtracted in f32 is off by 5e-4 of the
spread), RMSNorm rows with a common offset, and DyT. Bounds are those of the
execution tests.
"""

import os
import re
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import normref  # noqa: E402

ROWS, N = 4, 1024


def cases():
    rng = np.random.default_rng(20261203)
    x_ln = (1e4 + rng.normal(0.0, 0.1, (ROWS, N))).astype(np.float32)
    x_rms = (3.0 + rng.normal(0.0, 1e-3, (ROWS, N))).astype(np.float32)
    x_dyt = rng.normal(0.0, 2.0, (ROWS, N)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, N).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, N).astype(np.float32)
    return [
        ("layer_norm_offset", "layer_norm", x_ln, w, b, {}),
        ("layer_norm_offset_resource", "layer_norm", x_ln, w, b,
         {"resource": True}),
        ("rms_norm_offset", "rms_norm", x_rms, w, None, {}),
        ("rms_norm_resource", "rms_norm", x_rms, w, None, {"resource": True}),
        ("dyt", "dyt", x_dyt, w, b, {}),
    ]


def dense(a):
    body = ", ".join("[" + ", ".join("%.9e" % v for v in row) + "]"
                     for row in a) if a.ndim == 2 else \
        ", ".join("%.9e" % v for v in a)
    if a.ndim == 2:
        return "dense<[%s]>" % body
    return "dense<[%s]>" % body


def gen(path):
    funcs, blobs = [], []
    for name, op, x, w, b, opts in cases():
        t = "tensor<%dx%dxf32>" % (ROWS, N)
        p = "tensor<%dxf32>" % N
        lines = ["func.func @%s() -> %s {" % (name, t),
                 "  %%x = arith.constant %s : %s" % (dense(x), t)]
        for key, value in (("w", w), ("b", b)):
            if value is None:
                continue
            if opts.get("resource"):
                blob = name + "_" + key
                hexdata = "0x" + ("04000000" + value.astype("<f4").tobytes().hex()).upper()
                blobs.append('      %s: "%s"' % (blob, hexdata))
                lines.append("  %%%s = arith.constant dense_resource<%s> : %s"
                             % (key, blob, p))
            else:
                lines.append("  %%%s = arith.constant %s : %s"
                             % (key, dense(value), p))
        if op == "layer_norm":
            lines.append("  %%y = norm.layer_norm %%x weight(%%w) bias(%%b) "
                         ": (%s, %s, %s) -> %s" % (t, p, p, t))
        elif op == "rms_norm":
            lines.append("  %%y = norm.rms_norm %%x weight(%%w) : (%s, %s) -> %s"
                         % (t, p, t))
        else:
            lines.append("  %a = arith.constant dense<0.75> : tensor<f32>")
            lines.append("  %%y = norm.dyt %%x alpha(%%a) weight(%%w) "
                         "bias(%%b) : (%s, tensor<f32>, %s, %s) -> %s"
                         % (t, p, p, t))
        lines += ["  return %%y : %s" % t, "}"]
        funcs.append("\n".join(lines))
    text = "\n\n".join(funcs) + "\n"
    if blobs:
        text += "\n{-#\n  dialect_resources: {\n    builtin: {\n" + \
            ",\n".join(blobs) + "\n    }\n  }\n#-}\n"
    with open(path, "w") as f:
        f.write(text)


NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def check(path):
    with open(path) as f:
        text = f.read()
    failures = 0
    all_cases = cases()
    for name, op, x, w, b, _ in all_cases:
        m = re.search(r"func\.func @%s\(\).*?\n(.*?)\n  \}" % name, text,
                      re.S)
        body = m.group(1) if m else ""
        if "norm." in body or "arith.constant dense<" not in body:
            print("FAIL: %s: not folded" % name)
            failures += 1
            continue
        ret = re.search(r"return (%\S+)", body).group(1)
        const = re.search(r"%s = arith.constant dense<(.*?)> : tensor<"
                          % re.escape(ret), body, re.S).group(1)
        if const.startswith('"0x'):
            # Large constants print as a hex blob of little-endian f32.
            y = np.frombuffer(bytes.fromhex(const[3:-1]), dtype="<f4")
        else:
            y = np.array([float(v) for v in NUMBER.findall(const)])
        if op == "layer_norm":
            ref = normref.layer_norm(x, 1, weight=w, bias=b)
        elif op == "rms_norm":
            ref = normref.rms_norm(x, 1, weight=w)
        else:
            ref = normref.dyt(x, np.float32(0.75), weight=w, bias=b)
        err, why = normref.compare(y, ref[0])
        bound = normref.BOUNDS["f32"]
        ok = normref.within(err, bound)
        failures += not ok
        print("%s: %s: max err %.3g (bound %.0e)%s"
              % ("PASS" if ok else "FAIL", name, err, bound,
                 "" if ok else "; " + why))
    print("checked %d cases, %d failures" % (len(all_cases), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
        sys.exit(0)
    sys.exit(check(sys.argv[2]))
