#!/usr/bin/env python3
"""Checks the results of a norm-aot kernel that a C program wrote to a folder
against the float64 reference of test/tools/normref.py.

    aot_check.py DIR --name NAME --op OP --dtype T --shape AxBx... [--axis A]
                 [--weight TYPE] [--bias TYPE] [--residual] [--eps E]

DIR holds raw little-endian arrays: x.bin (T, SHAPE), weight.bin and
bias.bin (their TYPE, shape SHAPE[axis:]) when given, residual.bin (T) with
--residual, and the kernel's results y.bin and, with --residual,
residual_out.bin. y is judged with normref's metric and the bound of T;
residual_out (round_T(x + residual)) must be bit-exact. Prints one line per
result, `PASS: NAME y: max err E (bound B)` or the same with `FAIL:` and the
reason on the next line, then `checked N results, M failures`; exits 1 on a
failure or a missing file.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from normref import BOUNDS, compare, np_dtype, reference, \
    within  # noqa: E402


def load(folder, name, etype, shape):
    """The float64 values of <folder>/<name>.bin, an array of `shape`; None
    when the file is missing or has another size."""
    path = os.path.join(folder, name + ".bin")
    if not os.path.exists(path):
        return None
    data = np.fromfile(path, dtype=np_dtype(etype).newbyteorder("<"))
    if data.size != int(np.prod(shape, dtype=np.int64)):
        return None
    return data.astype(np.float64).reshape(shape)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--name", required=True)
    parser.add_argument("--op", required=True,
                        choices=("layer_norm", "rms_norm", "dyt"))
    parser.add_argument("--dtype", required=True, choices=sorted(BOUNDS))
    parser.add_argument("--shape", required=True)
    parser.add_argument("--axis", type=int, default=-1)
    parser.add_argument("--weight")
    parser.add_argument("--bias")
    parser.add_argument("--residual", action="store_true")
    parser.add_argument("--eps", type=float)
    args = parser.parse_args()

    T = args.dtype
    shape = tuple(int(d) for d in args.shape.split("x"))
    axis = args.axis + len(shape) if args.axis < 0 else args.axis
    inputs = {"x": (T, shape)}
    if args.weight:
        inputs["weight"] = (args.weight, shape[axis:])
    if args.bias:
        inputs["bias"] = (args.bias, shape[axis:])
    if args.residual:
        inputs["residual"] = (T, shape)
    values = {}
    for name, (etype, dims) in inputs.items():
        values[name] = load(args.folder, name, etype, dims)
        if values[name] is None:
            print("error: %s.bin is missing or does not hold %s values of "
                  "%s" % (name, "x".join(map(str, dims)), etype))
            return 1

    y_ref, s_ref = reference(
        args.op, values["x"], T, axis, weight=values.get("weight"),
        weight_type=args.weight, bias=values.get("bias"),
        bias_type=args.bias, residual=values.get("residual"), eps=args.eps)
    results = [("y", y_ref, BOUNDS[T])]
    if args.residual:
        results.append(("residual_out", s_ref, 0.0))

    failures = 0
    for name, ref, bound in results:
        got = load(args.folder, name, T, shape)
        if got is None:
            err, why = np.inf, "%s.bin is missing or has another size" % name
        else:
            err, why = compare(got, ref)
        ok = within(err, bound)
        failures += not ok
        print("%s: %s %s: max err %.3g (bound %.3g)" % (
            "PASS" if ok else "FAIL", args.name, name, err, bound))
        if not ok and why:
            print("    " + why)
    print("checked %d results, %d failures" % (len(results), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
