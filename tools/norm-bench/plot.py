#!/usr/bin/env python3
"""Bar chart of norm-bench results: ratio to the non-temporal copy floor.

Usage: plot.py BENCH.json [TORCH.json ...] --out chart.png
Reads Google Benchmark JSON (medians), groups by case/shape/dtype and draws
one bar per implementation: the paired ratio (x_nt_paired, norm-bench
--paired) where there is one, else the ratio to the median of copy_nt.
"""

import argparse
import json
from collections import defaultdict


def load(paths):
    """{name: bytes_per_second} and {name: x_nt_paired} of the medians."""
    medians, paired = {}, {}
    for path in paths:
        for entry in json.load(open(path)).get("benchmarks", []):
            if entry.get("aggregate_name", "median") != "median":
                continue
            name = entry.get("run_name") or entry["name"]
            name = name.split("/repeats:")[0]
            if "bytes_per_second" in entry:
                medians[name] = entry["bytes_per_second"]
            if "x_nt_paired" in entry:
                paired[name] = entry["x_nt_paired"]
    return medians, paired


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    medians, paired = load(args.inputs)
    groups = defaultdict(dict)
    for name, rate in medians.items():
        case, impl, shape, dtype = name.split("/")
        if case in ("copy", "copy_nt"):
            continue
        floor = medians.get(f"copy_nt/floor/{shape}/{dtype}")
        if name in paired:
            groups[f"{case}\n{shape}\n{dtype}"][impl] = paired[name]
        elif floor:
            groups[f"{case}\n{shape}\n{dtype}"][impl] = rate / floor
    impls = ["norm", "norm_dyn", "aot", "aot_dyn", "norm_vw256", "linalg",
             "naive", "onednn", "torch"]
    labels = sorted(groups)
    fig, ax = plt.subplots(figsize=(max(10, len(labels) * 0.9), 5))
    width = 0.8 / len(impls)
    for k, impl in enumerate(impls):
        xs = [i + k * width for i, label in enumerate(labels) if impl in groups[label]]
        ys = [groups[label][impl] for label in labels if impl in groups[label]]
        ax.bar(xs, ys, width, label=impl)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 for i in range(len(labels))])
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("ratio to non-temporal copy floor")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
