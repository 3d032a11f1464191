#!/usr/bin/env python3
"""Checks the results of a norm-aot kernel that a C program wrote to a folder
against the float64 reference of test/tools/normref.py.

    aot_check.py DIR --name NAME --op OP --dtype T --shape AxBx... [--axis A]
                 [--weight TYPE] [--bias TYPE] [--residual] [--eps E]
                 [--quant SUFFIX FORMAT LAYOUT]... [--global-scale G]

DIR holds raw little-endian arrays: x.bin (T, SHAPE), weight.bin and
bias.bin (their TYPE, shape SHAPE[axis:]) when given, residual.bin (T) with
--residual, and the kernel's results y.bin and, with --residual,
residual_out.bin. y is judged with normref's metric and the bound of T;
residual_out (round_T(x + residual)) must be bit-exact. Prints one line per
result, `PASS: NAME y: max err E (bound B)` or the same with `FAIL:` and the
reason on the next line, then `checked N results, M failures`; exits 1 on a
failure or a missing file.

Each --quant names the results of a kernel that quantizes the same op's y
in the same kernel (norm-aot --quant FORMAT, FORMAT mxfp8, fp8_1x128,
mxfp4 or nvfp4, LAYOUT row_major or swizzled_128x4): q_SUFFIX.bin (the
bytes, f4E2M1FN packed two per byte), scales_SUFFIX.bin (1-byte codes) and,
with --residual, residual_out_SUFFIX.bin. They must be bit-exact: q and
the scales are test/tools/blockscale.py's quantization of the kernel's own
y (y.bin, from the kernel without quantization: the fused kernel computes
exactly what the norm then the quantization compute), with the format's
default scale_rounding and, for nvfp4, the global scale G (default 1).
Prints `PASS: NAME q_SUFFIX: 0 of B bytes differ`.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from normref import BOUNDS, compare, np_dtype, reference, \
    within  # noqa: E402
import blockscale  # noqa: E402

# The block-scaled formats: q element type, group size, scale_rounding.
QUANT_FORMATS = {"mxfp8": ("f8E4M3FN", 32, "floor"),
                 "fp8_1x128": ("f8E4M3FN", 128, "up"),
                 "mxfp4": ("f4E2M1FN", 32, "floor"),
                 "nvfp4": ("f4E2M1FN", 16, None)}


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


def quant_reference(y, form, layout, global_scale):
    """(q bytes, scale codes) of blockscale.py for the values y (dtype T)."""
    qtype, group, rounding = QUANT_FORMATS[form]
    if form == "nvfp4":
        q, s = blockscale.quantize_nvfp4(y, np.float32(global_scale), group)
    else:
        q, s = blockscale.quantize_mx(y, qtype, group, rounding)
    if qtype == "f4E2M1FN":
        q = blockscale.pack_fp4(q)
    if layout == "swizzled_128x4":
        s = blockscale.swizzle_scales(s)
    return q, s


def check_bytes(folder, name, want):
    """(error, why) of the bytes <folder>/<name>.bin against `want`."""
    path = os.path.join(folder, name + ".bin")
    if not os.path.exists(path):
        return 1, "%s.bin is missing" % name
    got = np.fromfile(path, dtype=np.uint8)
    want = np.asarray(want, dtype=np.uint8).reshape(-1)
    if got.size != want.size:
        return 1, "%s.bin holds %d bytes, not %d" % (name, got.size,
                                                     want.size)
    bad = np.flatnonzero(got != want)
    if bad.size:
        return bad.size, "first at byte %d: got %#x, want %#x" % (
            bad[0], got[bad[0]], want[bad[0]])
    return 0, ""


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
    parser.add_argument("--quant", nargs=3, action="append", default=[],
                        metavar=("SUFFIX", "FORMAT", "LAYOUT"))
    parser.add_argument("--global-scale", type=float, default=1.0)
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
    checked = len(results)
    y_got = load(args.folder, "y", T, shape)
    for suffix, form, layout in args.quant:
        checked += 2
        if y_got is None:
            print("FAIL: %s q_%s: no y.bin to quantize" % (args.name, suffix))
            failures += 2
            continue
        y = y_got.astype(np_dtype(T))
        want_q, want_s = quant_reference(y, form, layout, args.global_scale)
        for name, want in (("q_" + suffix, want_q),
                           ("scales_" + suffix, want_s)):
            bad, why = check_bytes(args.folder, name, want)
            failures += bad != 0
            print("%s: %s %s: %d of %d bytes differ" % (
                "PASS" if not bad else "FAIL", args.name, name, bad,
                want.size))
            if why:
                print("    " + why)
        if args.residual:
            checked += 1
            name = "residual_out_" + suffix
            got = load(args.folder, name, T, shape)
            err, why = (np.inf, "%s.bin is missing or has another size" %
                        name) if got is None else compare(got, s_ref)
            ok = within(err, 0.0)
            failures += not ok
            print("%s: %s %s: max err %.3g (bound 0)" % (
                "PASS" if ok else "FAIL", args.name, name, err))
            if not ok and why:
                print("    " + why)
    print("checked %d results, %d failures" % (checked, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
