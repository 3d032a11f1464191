#!/usr/bin/env python3
"""Prints the time NormRaisePass takes on chains of pre-norm blocks
(utils/gen-prenorm-chain.py), to check that `norm-raise` stays linear in
the number of norms. A measurement, not a test: on a loaded machine the
times vary.

    python3 utils/raise-timing.py [--norm-opt build/bin/norm-opt]
        [--blocks 100 400 1600] [--runs 2]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def raise_time(norm_opt, path):
    out = subprocess.run(
        [norm_opt, "--norm-raise", "-mlir-timing", path, "-o", os.devnull],
        check=True, capture_output=True, text=True).stderr
    match = re.search(r"^\s*([0-9.]+) \(.*\)\s+NormRaisePass$", out, re.M)
    if not match:
        sys.exit("no NormRaisePass line in -mlir-timing output")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--norm-opt",
                        default=os.path.join(HERE, "..", "build", "bin",
                                             "norm-opt"))
    parser.add_argument("--blocks", type=int, nargs="+",
                        default=[100, 400, 1600])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        for blocks in args.blocks:
            path = os.path.join(tmp, f"chain{blocks}.mlir")
            with open(path, "w") as f:
                subprocess.run([sys.executable,
                                os.path.join(HERE, "gen-prenorm-chain.py"),
                                "--blocks", str(blocks)], stdout=f,
                               check=True)
            times = [raise_time(args.norm_opt, path)
                     for _ in range(args.runs)]
            best[blocks] = min(times)
            print(f"{blocks:6d} blocks: " +
                  " ".join(f"{t:.3f}" for t in times) + " s")
            os.remove(path)
    sizes = sorted(best)
    for small, large in zip(sizes, sizes[1:]):
        print(f"{large}/{small}: {best[large] / best[small]:.1f}x the time "
              f"for {large / small:g}x the blocks")


if __name__ == "__main__":
    main()
