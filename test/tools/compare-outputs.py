#!/usr/bin/env python3
"""Compares the printMemrefF32 outputs of two runs of the same module, the
reference (the original IR) and the candidate (after a transformation), with
the error metric and bounds of docs/Numerics.md#error-metric-and-bounds (normref.py).

    compare-outputs.py [--bound TYPE=VALUE | --bound FUNCTION#RESULT=VALUE]...
                       <manifest.txt> <reference.txt> <candidate.txt>

The manifest (from wrap-main.py) names each printed tensor and its element
type. Per tensor the error is normref.compare's: max |y - ref| / (|ref| +
rms(ref)) over the finite reference entries, NaN and inf matching exactly;
the bound is normref.BOUNDS' (1e-5 for f32 and f64, 2^-9 for f16, 2^-6 for
bf16) unless --bound overrides it, for an element type or for one tensor
(`FUNCTION#RESULT`, which wins). Prints one line per tensor,
`PASS: <function>#<result> <type>: error E (bound B)` or the same with
`FAIL:` (a tensor missing from either output, or printed with other sizes,
fails), then `compared N tensors, M failures`; exits 1 on any failure.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from normref import BOUNDS, compare, parse_printed, within  # noqa: E402


def read_tensors(path):
    with open(path) as f:
        return parse_printed(f.read())


def main():
    # --bound TYPE=VALUE overrides a bound, for transformations documented to
    # need more (e.g. reassociated bf16 matmuls); --bound FUNCTION#RESULT=VALUE
    # one tensor's, where the reference itself is known to be less accurate.
    args = sys.argv[1:]
    bounds = dict(BOUNDS)
    tensor_bounds = {}
    while len(args) >= 2 and args[0] == "--bound":
        key, _, value = args[1].partition("=")
        (tensor_bounds if "#" in key else bounds)[key] = float(value)
        args = args[2:]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        manifest = [line.split() for line in f if line.strip()]
    reference = read_tensors(args[1])
    candidate = read_tensors(args[2])
    if not (len(manifest) == len(reference) == len(candidate)):
        print("error: count mismatch: manifest {}, reference {}, candidate "
              "{}".format(len(manifest), len(reference), len(candidate)))
    failures = 0
    for i, (name, index, element) in enumerate(manifest):
        bound = tensor_bounds.get("{}#{}".format(name, index),
                                  bounds[element])
        err, why = math.inf, None
        if i >= len(reference) or i >= len(candidate):
            why = "not printed by the {}".format(
                "reference" if i >= len(reference) else "candidate")
        else:
            (ref_sizes, ref), (sizes, y) = reference[i], candidate[i]
            if isinstance(ref, str) or isinstance(y, str):
                why = "unreadable output: {}".format(
                    ref if isinstance(ref, str) else y)
            elif ref_sizes != sizes:
                why = "printed sizes {}, reference sizes {}".format(
                    list(sizes), list(ref_sizes))
            else:
                err, why = compare(y, ref)
        ok = within(err, bound)
        failures += not ok
        print("{}: {}#{} {}: error {:.3g} (bound {:.3g})".format(
            "PASS" if ok else "FAIL", name, index, element, err, bound))
        if not ok and why:
            print("    " + why)
    if len(reference) != len(candidate) or len(reference) > len(manifest):
        failures = max(failures, 1)
    print("compared {} tensors, {} failures".format(len(manifest), failures))
    return 1 if failures or not manifest else 0


if __name__ == "__main__":
    sys.exit(main())
