#!/usr/bin/env python3
"""The flow a user of norm-mlir takes, on a real exported model.

examples/torch-block.mlir is a two-block pre-norm transformer (RMSNorm,
linear mixing, SiLU MLP, residual adds; hidden 32) exported by
torch_mlir.fx.export_and_import to linalg-on-tensors, its parameters as
dense_resource blobs (regenerate it with utils/gen-frontend-ir.py). This
script
  1. raises its decomposed normalizations into norm ops, fuses the residual
     adds into them and folds the weights into the following matmuls
     (norm-raise, norm-fuse-residual, norm-fold-matmul-weights), printing
     the ops before and after;
  2. compiles the original and the transformed module with
     norm-cpu-pipeline through the JIT and runs both on random inputs given
     at run time (nothing the constant folder could see);
  3. checks the result against the original export's with the error metric
     of the execution tests, and exits non-zero when it fails.

    PYTHONPATH=build/python python3 examples/torch_block.py
"""

import os
import re
import sys

import numpy as np

import norm_mlir

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "tools"))
import normref  # noqa: E402

PASSES = ("builtin.module(func.func(norm-raise,norm-fuse-residual),"
          "func.func(norm-fold-matmul-weights))")


def count_ops(text):
    counts = {}
    for name in re.findall(r"= ((?:linalg|norm|arith|math)\.[a-z_]+)", text):
        counts[name] = counts.get(name, 0) + 1
    return counts


def summary(counts, prefixes):
    return ", ".join("%d %s" % (n, op) for op, n in sorted(counts.items())
                     if op.startswith(prefixes))


def main():
    with open(os.path.join(HERE, "torch-block.mlir")) as f:
        exported = f.read()
    transformed = norm_mlir.compile(exported, pipeline=PASSES)

    print("exported by torch-mlir: " +
          summary(count_ops(exported), ("linalg.", "math.")))
    print("after %s:\n  %s" % (PASSES, summary(count_ops(transformed),
                                               ("linalg.", "math.",
                                                "norm."))))
    for line in transformed.splitlines():
        if "= norm." in line:
            print("  " + line.strip())

    original = norm_mlir.jit(exported)
    compiled = norm_mlir.jit(transformed)
    rng = np.random.default_rng()
    failures = 0
    for trial in range(3):
        x = rng.standard_normal((2, 4, 32)).astype(np.float32) * (1 + trial)
        expected = np.asarray(original.forward(x))
        y = np.asarray(compiled.forward(x))
        err, why = normref.compare(y, expected)
        ok = normref.within(err, normref.BOUNDS["f32"])
        failures += not ok
        print("run %d on random x (scale %d): max err %.2e against the "
              "export (bound %.0e): %s" % (trial, 1 + trial, err,
                                          normref.BOUNDS["f32"],
                                          "PASS" if ok else "FAIL, " + why))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
