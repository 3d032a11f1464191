#!/usr/bin/env python3
"""Compile-time benchmark: norm-opt on chains of pre-norm blocks.

    python3 tools/norm-bench/compile_time.py [--norm-opt build/bin/norm-opt]
        [--sizes 100,200,400] [--repetitions 3] [--json FILE] [--quick]
        [--pipeline-input raised|exported]

For each size N, generates N pre-norm blocks (utils/gen-prenorm-chain.py:
Hugging Face RMSNorm, nn.Linear and the residual add as torch-mlir's
linalg-on-tensors export spells them), then times with `--mlir-timing`

  passes    norm-raise, norm-fuse-residual, norm-fold-matmul-weights on the
            generated IR (the three passes' times summed), and
  pipeline  norm-cpu-pipeline (every pass it runs) on their output, or with
            --pipeline-input=exported on the generated IR itself.

Parsing and printing are never counted. Each measurement is the minimum over
the repetitions (on a shared machine, noise only ever adds time). The report
gives seconds and seconds per 100 blocks at each size, and the ratio of the
time at the largest size to the time at the smallest, also divided by the
ratio of the sizes ("x linear": 1.00 is linear). Passes whose time is linear
in the model size keep seconds per 100 blocks flat. The passes that grow
fastest are listed with their own growth, to point at what is superlinear.

The passes' output is checked first: every block must have been raised to
one norm.rms_norm, with a residual (all but the first) and its weight
folded, so a change that stops raising does not pass for a speed-up.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GENERATOR = os.path.join(ROOT, "utils", "gen-prenorm-chain.py")
PASSES = ["norm-raise", "norm-fuse-residual", "norm-fold-matmul-weights"]
PASS_TIMERS = ["NormRaisePass", "NormFuseResidualPass",
               "NormFoldMatmulWeightsPass"]
# Timers of --mlir-timing that are not passes.
NOT_PASSES = {"Parser", "Output", "Rest", "Total"}

# `  seconds (percent%)  name`, nested timers indented after the percentage.
# When passes ran on several threads (the functions of a module), the report
# has a user-time column before the wall-time one: the wall time is kept.
TIMING_LINE = re.compile(
    r"^\s*(?:[0-9.]+ \(\s*[0-9.]+%\)\s+)?([0-9.]+) \(\s*[0-9.]+%\)( +)(.*?)\s*$")


def parse_timing(text):
    """Top-level timers of a --mlir-timing tree report, and the flat sums of
    every timer by name (nested pass timers included)."""
    top, flat = {}, {}
    for line in text.splitlines():
        match = TIMING_LINE.match(line)
        if not match:
            continue
        seconds, indent, name = float(match.group(1)), len(match.group(2)), \
            match.group(3)
        if name.startswith("(A)"):  # analyses, nested in their pass
            continue
        flat[name] = flat.get(name, 0.0) + seconds
        if indent <= 2:
            top[name] = top.get(name, 0.0) + seconds
    return top, flat


def run_norm_opt(norm_opt, args, input_path, output_path):
    command = [norm_opt, input_path] + args + [
        "--mlir-timing", "--mlir-timing-display=tree", "-o", output_path]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        raise SystemExit("compile_time: {} failed".format(" ".join(command)))
    return parse_timing(result.stderr)


def check_raised(path, blocks):
    """Every block raised, fused and folded (the first norm takes the
    function argument directly, so it has no residual)."""
    with open(path) as f:
        text = f.read()
    norms = len(re.findall(r"= norm\.rms_norm ", text))
    residuals = len(re.findall(r"= norm\.rms_norm [^\n]*residual\(", text))
    weights = len(re.findall(r"= norm\.rms_norm [^\n]*weight\(", text))
    generics_with_fpowi = text.count("math.fpowi")
    problems = []
    if norms != blocks:
        problems.append("{} norm.rms_norm ops, expected {}".format(norms,
                                                                   blocks))
    if residuals != blocks - 1:
        problems.append("{} with a residual, expected {}".format(residuals,
                                                                 blocks - 1))
    if weights:
        problems.append("{} still have a weight (not folded)".format(weights))
    if generics_with_fpowi:
        problems.append("{} decomposed norms left".format(generics_with_fpowi))
    if problems:
        raise SystemExit("compile_time: {} blocks: {}".format(
            blocks, "; ".join(problems)))


def best_of(repetitions, run):
    """The fastest of `repetitions` calls of `run`, which returns (seconds,
    details)."""
    best = None
    for _ in range(repetitions):
        seconds, details = run()
        if best is None or seconds < best[0]:
            best = (seconds, details)
    return best


def measure(norm_opt, sizes, hidden, repetitions, pipeline_input, workdir):
    results = []
    pass_args = ["--" + name for name in PASSES]
    for blocks in sizes:
        chain = os.path.join(workdir, "chain{}.mlir".format(blocks))
        raised = os.path.join(workdir, "raised{}.mlir".format(blocks))
        subprocess.run([sys.executable, GENERATOR, "--blocks", str(blocks),
                        "--hidden", str(hidden), "-o", chain], check=True)

        def run_passes():
            top, _ = run_norm_opt(norm_opt, pass_args, chain, raised)
            return (sum(top.get(name, 0.0) for name in PASS_TIMERS),
                    {name: top.get(name, 0.0) for name in PASS_TIMERS})

        def run_pipeline():
            source = raised if pipeline_input == "raised" else chain
            top, flat = run_norm_opt(norm_opt, ["--norm-cpu-pipeline"],
                                     source, os.devnull)
            # Nested pass managers ('func.func' Pipeline) hold their passes.
            return (sum(v for k, v in top.items() if k not in NOT_PASSES),
                    {k: v for k, v in flat.items()
                     if k not in NOT_PASSES and not k.startswith("'")})

        passes = best_of(repetitions, run_passes)
        check_raised(raised, blocks)
        pipeline = best_of(repetitions, run_pipeline)
        results.append({
            "blocks": blocks,
            "passes_s": passes[0],
            "passes_by_pass_s": passes[1],
            "pipeline_s": pipeline[0],
            "pipeline_by_pass_s": pipeline[1],
        })
        print("  {} blocks: passes {:.3f} s, pipeline {:.3f} s".format(
            blocks, passes[0], pipeline[0]), file=sys.stderr)
    return results


def growth(n0, n1, t0, t1):
    """(t1 / t0) / (n1 / n0): 1.0 for time linear in the number of blocks."""
    if t0 <= 0:
        return float("nan")
    return (t1 / t0) / (n1 / n0)


def report(results, pipeline_input, out):
    first, last = results[0], results[-1]
    n0, n1 = first["blocks"], last["blocks"]
    out.write("Compile time on chains of pre-norm blocks: seconds (seconds "
              "per 100 blocks)\n")
    pipeline_label = "norm-cpu-pipeline" + (
        "" if pipeline_input == "raised" else " (exported IR)")
    out.write("{:>8} {:>22} {:>32}\n".format("blocks", "raise+fuse+fold",
                                             pipeline_label))
    for r in results:
        per = 100.0 / r["blocks"]
        out.write("{:>8} {:>10.3f} ({:>9.4f}) {:>20.3f} ({:>9.4f})\n".format(
            r["blocks"], r["passes_s"], r["passes_s"] * per, r["pipeline_s"],
            r["pipeline_s"] * per))
    for key, label in (("passes_s", "raise+fuse+fold"),
                       ("pipeline_s", "norm-cpu-pipeline")):
        ratio = last[key] / first[key] if first[key] > 0 else float("nan")
        out.write("{}: time at {} / time at {} = {:.2f} ({:.2f}x linear)\n"
                  .format(label, n1, n0, ratio,
                          growth(n0, n1, first[key], last[key])))
    # The passes that grow fastest: ours, and the pipeline's that take at
    # least 2% of it at the largest size.
    rows = []
    for key in ("passes_by_pass_s", "pipeline_by_pass_s"):
        for name, t1 in last[key].items():
            if key == "pipeline_by_pass_s" and t1 < 0.02 * last["pipeline_s"]:
                continue
            t0 = first[key].get(name, 0.0)
            rows.append((growth(n0, n1, t0, t1), name, t0, t1))
    rows.sort(key=lambda row: -row[0] if row[0] == row[0] else 0.0)
    out.write("Fastest-growing passes ({} -> {} blocks: seconds, growth vs "
              "linear):\n".format(n0, n1))
    for g, name, t0, t1 in rows[:8]:
        out.write("  {:<42} {:>8.3f} -> {:>8.3f}  {:.2f}x\n".format(
            name, t0, t1, g))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--norm-opt",
                        default=os.path.join(ROOT, "build", "bin", "norm-opt"))
    parser.add_argument("--sizes", default="100,200,400",
                        help="comma-separated block counts, increasing")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="sizes 25,50,100 and one repetition")
    parser.add_argument("--pipeline-input", choices=["raised", "exported"],
                        default="raised",
                        help="what norm-cpu-pipeline compiles: the passes' "
                        "output (default) or the generated IR as exported")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--keep", help="keep the generated IR in this dir")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    repetitions = args.repetitions
    if args.quick:
        sizes, repetitions = [25, 50, 100], 1
    if sorted(sizes) != sizes or len(sizes) < 2 or sizes[0] < 1:
        parser.error("--sizes: at least two increasing positive counts")
    if not os.access(args.norm_opt, os.X_OK):
        parser.error("no norm-opt at {} (build it, or pass --norm-opt)"
                     .format(args.norm_opt))

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        results = measure(args.norm_opt, sizes, args.hidden, repetitions,
                          args.pipeline_input, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="norm-compile-time-") as d:
            results = measure(args.norm_opt, sizes, args.hidden, repetitions,
                              args.pipeline_input, d)
    report(results, args.pipeline_input, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"hidden": args.hidden, "repetitions": repetitions,
                       "pipeline_input": args.pipeline_input,
                       "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
