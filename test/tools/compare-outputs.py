#!/usr/bin/env python3
"""Compares the printMemrefF32 outputs of two runs of the same module, the
reference (the original IR) and the candidate (after a transformation), with
the error metric and bounds of DESIGN section 6.

    compare-outputs.py [--bound TYPE=VALUE]... <manifest.txt> <reference.txt> <candidate.txt>

The manifest (from wrap-main.py) names each printed tensor and its element
type. Per tensor the error is max |y - ref| / (|ref| + rms(ref)); the bound
is 1e-5 for f32 and f64, 2^-9 for f16 and 2^-6 for bf16. NaN and inf must
match exactly. Prints one line per tensor and `compared N tensors, M
failures`; exits 1 on any failure or a count mismatch.
"""

import math
import re
import sys

import numpy as np

BOUNDS = {"f32": 1e-5, "f64": 1e-5, "f16": 2.0**-9, "bf16": 2.0**-6}
NUMBER = re.compile(r"-?nan|-?inf|[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def read_tensors(path):
    with open(path) as f:
        text = f.read()
    tensors = []
    for part in text.split("Unranked Memref")[1:]:
        _, _, data = part.partition("data =")
        values = [float(v) for v in NUMBER.findall(data)]
        tensors.append(np.array(values, dtype=np.float64))
    return tensors


def error(ref, y):
    if ref.size == 0:
        return 0.0
    finite = np.isfinite(ref)
    if not np.array_equal(finite, np.isfinite(y)) or not np.array_equal(
            np.isnan(ref), np.isnan(y)):
        return math.inf
    special = ~finite
    if np.any(ref[special] != y[special]) and not np.all(
            np.isnan(ref[special]) == np.isnan(y[special])):
        return math.inf
    ref, y = ref[finite], y[finite]
    if ref.size == 0:
        return 0.0
    rms = math.sqrt(float(np.mean(ref * ref)))
    denominator = np.abs(ref) + rms
    denominator[denominator == 0] = 1.0
    return float(np.max(np.abs(y - ref) / denominator))


def main():
    # --bound TYPE=VALUE overrides a bound, for transformations documented to
    # need more (e.g. reassociated bf16 matmuls).
    args = sys.argv[1:]
    bounds = dict(BOUNDS)
    while len(args) >= 2 and args[0] == "--bound":
        element, _, value = args[1].partition("=")
        bounds[element] = float(value)
        args = args[2:]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        manifest = [line.split() for line in f if line.strip()]
    reference = read_tensors(args[1])
    candidate = read_tensors(args[2])
    if not (len(manifest) == len(reference) == len(candidate)):
        print("count mismatch: manifest {}, reference {}, candidate {}".format(
            len(manifest), len(reference), len(candidate)))
        return 1
    failures = 0
    for (name, index, element), ref, y in zip(manifest, reference, candidate):
        bound = bounds[element]
        err = error(ref, y) if ref.shape == y.shape else math.inf
        ok = err <= bound
        failures += not ok
        print("{} {}#{} {}: error {:.3g} (bound {:.3g})".format(
            "ok" if ok else "FAIL", name, index, element, err, bound))
    print("compared {} tensors, {} failures".format(len(manifest), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
