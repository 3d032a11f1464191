#!/usr/bin/env python3
"""Differential soundness checker of norm-raise and of the folding and
fusion passes (norm-fold-matmul-weights, norm-fuse-matmul,
norm-fuse-residual).

    norm-soundness.py --seed N --budget SECONDS [--pass raise|fold|fuse|all]
                      [--out DIR] [--jobs N] [--max-mutants N]

It mutates the inputs of the passes' lit tests and the real torch-mlir
exports under test/ (affine maps, iterator types, reduction dims, arith
ops and operands swapped, constants changed, math.absf or a ReLU inserted,
tensor.dim sources and indices changed, bias terms added, casts inserted,
operands and inits replaced, element types changed, pass options), runs
the pass on every mutant that verifies and, for every mutant the pass
changes (for norm-raise: that gains norm ops), executes the mutant and the
pass's output on random inputs of both signs and magnitudes from 1e-3 to
1e3 (wrap-main.py --random) and compares every result with normref's
metric. Many mutants share one module per execution; a batch that fails
to run is bisected. A mutant that reads an init it never wrote (a
tensor.empty accumulated into) is not executed. A difference beyond the
bounds is confirmed by running the mutant alone twice with differently
poisoned heap memory (MALLOC_PERTURB_): a mutant whose own results change
reads memory it never wrote (undefined) and is counted as unstable, not
unsound. For an f16 or bf16 mutant, a difference is also forgiven when the
pass output matches the mutant computed in f32, or is no further from it
than twice the mutant itself (the pass computes as precisely as the chain
or more, e.g. accumulates a bf16 reduction in f32). Likewise for an f32
mutant computed in f64 (its f16 and bf16 roundings kept): such an alarm
is dismissed as more accurate than the original, counted ("dismissed N")
and saved under --out as accurate-*. Each unsound mutant, and each mutant that crashes norm-opt or whose output no longer
compiles or runs, is saved under --out (mutant.mlir, after.mlir, diff.txt,
report.txt with the commands that reproduce it).

The last line is
    soundness: tried N mutants, M parse-valid, K raised/changed, executed E, U unsound
and the exit code is 1 when a mutant is unsound, crashes norm-opt, or
yields output that fails to compile or run. The mutants and inputs depend
only on --seed (the budget only decides how many are tried; --max-mutants
fixes the number).
"""

import argparse
import concurrent.futures
import difflib
import fnmatch
import glob
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soundness import execute as ex  # noqa: E402
from soundness import mutate as mu  # noqa: E402

ROOT = ex.ROOT
T = "test/Transforms/"
# Seed files: globs under the root (every raise, fold and fuse test, so that
# new near-miss tests become seeds too) and `@prenorm-chain`, the chain of
# pre-norm blocks utils/gen-prenorm-chain.py writes.
FUSION_COMMON = ["test/Integration/CPU/Inputs/matmul-blocks.mlir",
                 "@prenorm-chain"]
SUITES = {
    "raise": {
        "kind": "raise",
        "seeds": [T + "norm-raise*.mlir", T + "raise-*.mlir",
                  T + "Inputs/torch-*.mlir"],
        "passes": [["--norm-raise"]],
    },
    "fold": {
        "kind": "fusion",
        "seeds": [T + "norm-fold-matmul-weights*.mlir"] + FUSION_COMMON,
        "passes": [["--norm-fold-matmul-weights"],
                   ["--norm-fold-matmul-weights=defer-scale=true"],
                   ["--norm-fold-matmul-weights=max-rhs-elements=64"],
                   ["--norm-raise", "--norm-fold-matmul-weights"],
                   ["--norm-raise",
                    "--norm-fold-matmul-weights=defer-scale=true"]],
    },
    "fuse": {
        "kind": "fusion",
        "seeds": [T + "norm-fuse-*.mlir", T + "Inputs/torch-block-*.mlir"] +
        FUSION_COMMON,
        "passes": [["--norm-fuse-matmul"], ["--norm-fuse-matmul=tile-rows=1"],
                   ["--norm-fuse-matmul=tile-rows=3"], ["--norm-fuse-residual"],
                   ["--norm-raise", "--norm-fuse-residual"],
                   ["--norm-raise", "--norm-fuse-residual",
                    "--norm-fold-matmul-weights"],
                   ["--norm-fold-matmul-weights",
                    "--norm-fuse-matmul=tile-rows=2"]],
    },
}
# The bounds: normref's per type, times 10 for f32 (a raised op computes in
# another order: one-pass statistics, a reciprocal instead of a division),
# times 4 for f16 and bf16 (the op rounds once where the chain rounds at
# every step); integers (quantized results) may differ by one step of
# rounding, f8 by one ulp. A result gets the loosest bound of its type and
# the float types of its function's signature (f16 inputs and an f32
# result: f16's).
BOUNDS = {"f32": 1e-4, "f64": 1e-5, "f16": 2.0 ** -7, "bf16": 2.0 ** -4,
          "f8E4M3FN": 0.125, "f8E5M2": 0.25, "i8": 0.04, "i16": 0.04,
          "i32": 0.04, "i64": 0.04, "i1": 0.0}
BATCH = 12
# {function (renamed): float types of its signature}, for the bounds.
SIGNATURES = {}


class Mutant:
    """One mutant: where it comes from, what was changed, and what running
    the pass on it gave."""

    def __init__(self, ident, suite, source, chunk, text, mutations, passes):
        self.ident = ident
        self.suite = suite
        self.source = source
        self.chunk = chunk
        self.text = text
        self.mutations = mutations
        self.passes = passes
        self.result = None
        self.verdict = None
        self.lines = []

    @property
    def name(self):
        return "m{}".format(self.ident)

    def describe(self):
        return "{} [{}] {} chunk {}: {} | {}".format(
            self.name, self.suite, self.source, self.chunk,
            "; ".join(self.mutations) or "(unmutated)", " ".join(self.passes))


def seed_files(suite, only=None):
    """The seed files of a suite, relative to the root, sorted; with `only`
    (shell patterns), those that match one of them."""
    files = []
    for pattern in SUITES[suite]["seeds"]:
        if pattern.startswith("@"):
            files.append(pattern)
        else:
            files += sorted(os.path.relpath(p, ROOT) for p in glob.glob(
                os.path.join(ROOT, pattern)))
    if only:
        files = [f for f in files
                 if any(fnmatch.fnmatch(f, p) for p in only)]
    return files


def load_chunks(source, workdir):
    """The `// -----` chunks of a seed file that have a function, with comment
    lines dropped."""
    if source == "@prenorm-chain":
        path = os.path.join(workdir, "prenorm-chain.mlir")
        subprocess.run([sys.executable, os.path.join(
            ROOT, "utils", "gen-prenorm-chain.py"), "--blocks", "2",
            "--hidden", "8", "-o", path], check=True)
    else:
        path = os.path.join(ROOT, source)
    with open(path) as f:
        chunks = ex.wrap_main.split_chunks(f.read())
    return ["\n".join(l for l in c.splitlines()
                      if not l.lstrip().startswith("//")) + "\n"
            for c in chunks]


def make_mutant(ident, args, suites, chunks):
    """Mutant number `ident`: a suite, a chunk and a pass list, then 0 to 3
    mutations, all drawn from a generator seeded with (--seed, ident)."""
    rng = random.Random("{}/{}".format(args.seed, ident))
    suite = suites[ident % len(suites)]
    spec = SUITES[suite]
    source, index, text = rng.choice(chunks[suite])
    passes = rng.choice(spec["passes"])
    count = rng.choices((0, 1, 2, 3), (1, 14, 4, 1))[0]
    mutations = []
    if count:
        mutated = mu.mutate(text, rng, spec["kind"], count)
        if mutated:
            text, mutations = mutated
    return Mutant(ident, suite, source, index, text, mutations, passes)


def process(tools, workdir, mutant):
    path = os.path.join(workdir, mutant.name + ".mlir")
    with open(path, "w") as f:
        f.write(mutant.text)
    mutant.result = ex.apply_passes(tools, path, mutant.passes)
    os.remove(path)
    return mutant


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------

def modules(batch):
    """The before and after modules of a batch, every function renamed
    `m<id>_<name>`, and the sizes of the functions' dynamic dims: 3 (the
    default) for two mutants of three, else 264 where the inputs stay small
    (a count of 264 wraps to 8 through an index_cast to i8). The inputs
    depend on the function's name only, so a mutant gets the same ones in
    any batch."""
    before, after, sizes = [], [], {}
    for m in batch:
        keep = m.result["keep"]
        before.append(ex.prepare(m.result["before"], m.name + "_", keep))
        after.append(ex.prepare(m.result["after"], m.name + "_", keep))
        SIGNATURES.update(ex.signature_types(m.result["before"],
                                             m.name + "_"))
        if hash_seed("dynamic", m.ident) % 3 == 0:
            sizes.update(ex.large_dynamic_sizes(m.result["before"],
                                                m.name + "_", 264))
    return "\n// -----\n".join(before), "\n// -----\n".join(after), sizes


def run_batch(ctx, batch):
    """Executes a batch before and after and sets each mutant's verdict: ok,
    alarm (to be confirmed), broken-before (the mutant itself does not run:
    skipped), broken-after (its pass output does not compile or run)."""
    before, after, sizes = modules(batch)
    stem = "b{}".format(batch[0].ident)
    seed = ctx.args.seed
    ok_b, man_b, out_b, msg_b = ex.execute(ctx.tools, before, ctx.workdir,
                                           stem + "-before", seed,
                                           ctx.args.calls, sizes=sizes)
    ok_a, man_a, out_a, msg_a = (False, [], [], "") if not ok_b else \
        ex.execute(ctx.tools, after, ctx.workdir, stem + "-after", seed,
                   ctx.args.calls, sizes=sizes)
    if ok_b and ok_a and man_b == man_a:
        results = ex.compare(man_b, out_b, out_a, ctx.bounds, SIGNATURES)
        for m in batch:
            lines = [line for label, rows in results.items()
                     if label.startswith(m.name + "_") for _, line in rows]
            m.lines = lines
            m.verdict = "alarm" if any(l.startswith("FAIL") for l in lines) \
                else "ok"
        return
    if len(batch) > 1:
        half = len(batch) // 2
        run_batch(ctx, batch[:half])
        run_batch(ctx, batch[half:])
        return
    m = batch[0]
    if not ok_b:
        m.verdict, m.lines = "broken-before", [msg_b]
    elif not ok_a:
        m.verdict, m.lines = "broken-after", [msg_a]
    else:
        m.verdict, m.lines = "broken-after", [
            "the printed results differ: {} before, {} after".format(
                man_b, man_a)]


def hash_seed(seed, ident):
    digest = hashlib.sha256("{}/{}".format(seed, ident).encode()).hexdigest()
    return int(digest[:8], 16)


def confirm(ctx, m):
    """Reruns an alarm alone with heap memory poisoned two ways: unstable
    when the mutant's own results change (it reads memory it never wrote)
    or when it fails upstream's run-time op verification (it reads out of
    bounds), else unsound when the pass output differs from it (or changes itself)."""
    before, after, sizes = modules([m])
    seed = ctx.args.seed
    runs = {}
    for which, text in (("before", before), ("after", after)):
        for perturb in ("85", "170"):
            env = dict(os.environ, MALLOC_PERTURB_=perturb)
            runs[which, perturb] = ex.execute(
                ctx.tools, text, ctx.workdir, "{}-{}-{}".format(
                    m.name, which, perturb), seed, ctx.args.calls, env,
                sizes)
    failed_before = [(k, r) for k, r in runs.items()
                     if k[0] == "before" and not r[0]]
    if failed_before:
        # The mutant itself fails or hangs when run again (an access out
        # of bounds that poisoned memory turns into a crash or an endless
        # loop): it is undefined, whatever its pass output does.
        m.verdict = "unstable"
        m.lines.append("the mutant fails on rerun: " + "; ".join(
            "{} {}: {}".format(k[0], k[1], r[3][:300])
            for k, r in failed_before))
        return
    if not all(r[0] for r in runs.values()):
        m.verdict = "unsound"
        m.lines.append("on rerun: " + "; ".join(
            "{} {}: {}".format(k[0], k[1], r[3][:500])
            for k, r in runs.items() if not r[0]))
        return
    manifest = runs["before", "85"][1]
    self_check = ex.compare(manifest, runs["before", "85"][2],
                            runs["before", "170"][2], ctx.bounds, SIGNATURES)
    if not all(ok for rows in self_check.values() for ok, _ in rows):
        m.verdict = "unstable"
        return
    # A map that reads outside its operand (e.g. `(d0, d1, d1)` on a dim of
    # size 1) may read memory that was written, just not the element meant:
    # stable under poisoning, and still undefined. Upstream's run-time op
    # verification finds it.
    checked = ex.execute(ctx.tools, before, ctx.workdir,
                         "{}-before-checked".format(m.name), seed,
                         ctx.args.calls, None, sizes, checked=True)
    if not checked[0]:
        m.verdict = "unstable"
        m.lines.append("the mutant fails run-time op verification (an "
                       "access out of bounds): " + checked[3][-300:])
        return
    rerun = ex.compare(manifest, runs["before", "85"][2],
                       runs["after", "85"][2], ctx.bounds, SIGNATURES)
    after_self = ex.compare(manifest, runs["after", "85"][2],
                            runs["after", "170"][2], ctx.bounds, SIGNATURES)
    failed = [line for rows in rerun.values() for ok, line in rows if not ok]
    unstable_after = [line for rows in after_self.values()
                      for ok, line in rows if not ok]
    m.verdict = "unsound"
    if failed and matches_wide_chain(ctx, m, manifest,
                                     runs["before", "85"][2], rerun,
                                     runs["after", "85"][2], sizes):
        m.verdict = "narrow"
    elif failed and matches_wide_chain(ctx, m, manifest,
                                       runs["before", "85"][2], rerun,
                                       runs["after", "85"][2], sizes,
                                       "f64"):
        m.verdict = "accurate"
    elif not failed and unstable_after:
        m.lines.append("the pass output reads memory it never wrote: " +
                       "; ".join(unstable_after))
    elif not failed:
        m.verdict = "flaky"


def matches_wide_chain(ctx, m, manifest, before_outputs, rerun,
                       after_outputs, sizes, wide_type="f32"):
    """True when every tensor of an f16 or bf16 mutant (`wide_type` f32) or
    of an f32 mutant (`wide_type` f64) that differs from the pass output is
    explained by the mutant's own rounding: computed in `wide_type`, the
    mutant matches the pass output, or is at least as far (times 2) from
    its wide value as the pass output is (the pass computes more precisely
    than the chain, e.g. a bf16 reduction it accumulates in f32, or 1 -
    tanh^2 without the chain's cancellation; or as imprecisely in another
    order; docs/Numerics.md). Roundings the chain makes on purpose to a type
    narrower than f32 stay in the f64 evaluation."""
    keep = m.result["keep"]
    wide = ex.promote(ex.prepare(m.result["before"], m.name + "_", keep),
                      wide_type)
    if wide is None:
        return False
    ok, wide_manifest, wide_outputs, _ = ex.execute(
        ctx.tools, wide, ctx.workdir, m.name + "-" + wide_type,
        ctx.args.seed,
        ctx.args.calls, sizes=sizes)
    if not ok or wide_manifest != manifest:
        return False
    versus_wide = ex.compare(manifest, wide_outputs, after_outputs,
                             ctx.bounds, SIGNATURES)
    error_after = ex.errors(manifest, wide_outputs, after_outputs)
    error_before = ex.errors(manifest, wide_outputs, before_outputs)
    for label, rows in rerun.items():
        for k, ((ok_narrow, _), (ok_wide, _)) in enumerate(
                zip(rows, versus_wide[label])):
            if not ok_narrow and not ok_wide and \
                    not error_after[label][k] <= 2 * error_before[label][k]:
                return False
    m.lines.append("every difference is explained by the rounding of the "
                   "mutant; the pass output versus the mutant computed in "
                   "{}:".format(wide_type))
    m.lines += ["  {} (the mutant's own error: {:.3g})".format(
        line, error_before[label][k]) for label, rows in versus_wide.items()
        for k, (_, line) in enumerate(rows)]
    return True


# --------------------------------------------------------------------------
# Findings
# --------------------------------------------------------------------------

def save(ctx, m, kind):
    """Writes a finding's files under --out; returns its folder."""
    folder = os.path.join(ctx.args.out, "{}-{}".format(kind, m.name))
    os.makedirs(folder, exist_ok=True)
    r = m.result
    sizes = {}
    if "keep" in r:
        before, after, sizes = modules([m])
    else:
        before, after = r.get("before", m.text), r.get("after", "")
    with open(os.path.join(folder, "mutant.mlir"), "w") as f:
        f.write(before)
    with open(os.path.join(folder, "after.mlir"), "w") as f:
        f.write(after)
    with open(os.path.join(folder, "diff.txt"), "w") as f:
        f.writelines(difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), "mutant.mlir",
            "after.mlir"))
    passes = " ".join(m.passes)
    with open(os.path.join(folder, "report.txt"), "w") as f:
        f.write("{}: {}\n\n".format(kind, m.describe()))
        f.write("\n".join(m.lines) + "\n")
        if r.get("stderr"):
            f.write("\nnorm-opt stderr:\n" + r["stderr"][-5000:] + "\n")
        f.write(REPRO.format(passes=passes, seed=ctx.args.seed,
                             calls=ctx.args.calls, pipeline=ctx.tools.pipeline,
                             libs=ctx.tools.shared_libs, tools=ex.TOOLS,
                             sizes="".join(
                                 " --dynamic-size={}={}".format(k, v)
                                 for k, v in sorted(sizes.items()))))
    return folder


REPRO = """
To reproduce (in this folder; the same inputs as in the checker's run):
  norm-opt mutant.mlir {passes} -o after.mlir
  for v in mutant after; do
    python3 {tools}/wrap-main.py $v.mlir -o $v.main.mlir --manifest $v.manifest --random {seed} --calls {calls}{sizes}
    norm-opt $v.main.mlir {pipeline} | mlir-runner -e main -entry-point-result=void -shared-libs={libs} > $v.out
  done
  python3 {tools}/compare-outputs.py --bound f32=1e-4 --bound bf16=0.0625 --bound f16=0.0078125 mutant.manifest mutant.out after.out
"""


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

class Context:
    def __init__(self, args, tools, workdir, bounds):
        self.args = args
        self.tools = tools
        self.workdir = workdir
        self.bounds = bounds


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=60.0,
                        metavar="SECONDS",
                        help="no new mutants after this many seconds")
    parser.add_argument("--max-mutants", type=int, metavar="N",
                        help="stop after N mutants")
    parser.add_argument("--pass", dest="suite", default="all",
                        choices=sorted(SUITES) + ["all"])
    parser.add_argument("--out", default="soundness-out", metavar="DIR",
                        help="where findings are saved")
    parser.add_argument("--seeds", nargs="+", metavar="PATTERN",
                        help="only the seed files (paths from the root, or "
                        "@prenorm-chain) that match one of these shell "
                        "patterns")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3,
                        help="random input sets per function")
    parser.add_argument("--norm-opt", default=shutil.which("norm-opt") or
                        os.path.join(ROOT, "build", "bin", "norm-opt"))
    parser.add_argument("--mlir-runner", default=shutil.which(
        "mlir-runner") or "/usr/lib/llvm-22/bin/mlir-runner")
    parser.add_argument("--mlir-lib-dir", default="/usr/lib/llvm-22/lib")
    parser.add_argument("--pipeline",
                        default="--norm-cpu-pipeline=lowering=linalg")
    parser.add_argument("--bound", action="append", default=[],
                        metavar="TYPE=VALUE", help="override a bound")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds per norm-opt or mlir-runner run")
    parser.add_argument("--keep-work", action="store_true",
                        help="keep the work folder")
    parser.add_argument("--replay", nargs="+", metavar="FINDING",
                        help="check saved findings (folders under a previous "
                        "--out) again instead of making mutants")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args()


def snapshot(norm_opt, workdir):
    """A copy of norm-opt for the whole run, so that a rebuild meanwhile
    (relinking it in place) neither breaks nor mixes the run."""
    path = shutil.which(norm_opt) or norm_opt
    copy = os.path.join(workdir, "norm-opt")
    for attempt in range(60):
        try:
            shutil.copy2(path, copy)
            if ex.run([copy, "--version"], 60)[0] == 0:
                return copy
        except OSError:
            pass
        time.sleep(1.0)
    sys.exit("error: cannot run {}".format(path))


def main():
    args = parse_args()
    bounds = dict(BOUNDS)
    for item in args.bound:
        key, _, value = item.partition("=")
        bounds[key] = float(value)
    suites = sorted(SUITES) if args.suite == "all" else [args.suite]
    workdir = tempfile.mkdtemp(prefix="norm-soundness-")
    tools = ex.Tools(snapshot(args.norm_opt, workdir), args.mlir_runner,
                     args.mlir_lib_dir, args.pipeline, args.timeout)
    ctx = Context(args, tools, workdir, bounds)
    os.makedirs(args.out, exist_ok=True)
    try:
        if args.replay:
            stats, findings = replay(ctx, args.replay)
        else:
            chunks = {suite: [(src, i, c)
                              for src in seed_files(suite, args.seeds)
                              for i, c in enumerate(load_chunks(src,
                                                                workdir))]
                      for suite in suites}
            suites = [suite for suite in suites if chunks[suite]]
            if not suites:
                sys.exit("error: no seed file matches --seeds")
            stats, findings = loop(ctx, suites, chunks)
    finally:
        if not args.keep_work:
            shutil.rmtree(workdir, ignore_errors=True)
    return summarize(stats, findings)


STATS = ("tried", "duplicate", "valid", "changed", "executed", "unsound",
         "crash", "broken-after", "broken-before", "unstable", "flaky",
         "narrow", "accurate", "error", "undrivable", "signature")


def loop(ctx, suites, chunks):
    """Makes, runs and executes mutants round by round until the budget or
    --max-mutants is spent; returns (counts, findings)."""
    args = ctx.args
    stats = dict.fromkeys(STATS, 0)
    findings, seen = [], set()
    start = time.time()
    ident = 0
    pool = concurrent.futures.ThreadPoolExecutor(max(1, args.jobs))
    while time.time() - start < args.budget:
        count = 8 * BATCH
        if args.max_mutants is not None:
            count = min(count, args.max_mutants - ident)
            if count <= 0:
                break
        mutants = []
        for i in range(ident, ident + count):
            m = make_mutant(i, args, suites, chunks)
            key = (m.text, tuple(m.passes))
            stats["tried"] += 1
            if key in seen:
                stats["duplicate"] += 1
                continue
            seen.add(key)
            mutants.append(m)
        ident += count
        check(ctx, pool, stats, findings, mutants)
    pool.shutdown()
    return stats, findings


def check(ctx, pool, stats, findings, mutants):
    """Runs the passes on `mutants`, executes those changed, confirms the
    alarms and records the verdicts."""
    done = list(pool.map(lambda m: process(ctx.tools, ctx.workdir, m),
                         mutants))
    changed = classify(ctx, stats, findings, done)
    batches = [changed[i:i + BATCH] for i in range(0, len(changed), BATCH)]
    list(pool.map(lambda b: run_batch(ctx, b), batches))
    alarms = [m for m in changed if m.verdict == "alarm"]
    list(pool.map(lambda m: confirm(ctx, m), alarms))
    for m in changed:
        record(ctx, stats, findings, m)


def replay(ctx, folders):
    """Checks saved findings again (their mutant.mlir and passes), e.g.
    after a fix; returns (counts, findings)."""
    stats = dict.fromkeys(STATS, 0)
    findings, mutants = [], []
    for n, folder in enumerate(folders):
        with open(os.path.join(folder, "report.txt")) as f:
            passes = f.readline().rstrip("\n").rsplit(" | ", 1)[1].split()
        with open(os.path.join(folder, "mutant.mlir")) as f:
            text = f.read()
        mutants.append(Mutant(n, "replay", folder, 0, text,
                              ["replay of " + folder], passes))
    stats["tried"] = len(mutants)
    pool = concurrent.futures.ThreadPoolExecutor(max(1, ctx.args.jobs))
    check(ctx, pool, stats, findings, mutants)
    pool.shutdown()
    for m in mutants:
        print("{}: {}".format(m.verdict or m.result["status"], m.source))
    return stats, findings


def classify(ctx, stats, findings, done):
    """Counts the pass results of a round; returns the mutants to execute."""
    changed = []
    for m in done:
        status = m.result["status"]
        if status != "invalid" and "before" in m.result:
            stats["valid"] += 1
        if status in ("changed", "undrivable", "signature", "undefined"):
            stats["changed"] += 1
        if status in ("crash", "error", "undrivable"):
            stats[status] += 1
        if status == "undefined":
            stats["unstable"] += 1
        if status == "crash":
            m.lines = ["norm-opt crashed"]
            findings.append(("crash", m, save(ctx, m, "crash")))
        elif status == "signature":
            stats["signature"] += 1
            m.lines = ["the pass added, removed or reordered functions"]
            findings.append(("signature", m, save(ctx, m, "signature")))
        elif status == "changed":
            changed.append(m)
        if ctx.args.verbose:
            print("{} {}".format(status, m.describe()), flush=True)
    return changed


def record(ctx, stats, findings, m):
    if m.verdict == "broken-before":
        stats["broken-before"] += 1
        return
    stats["executed"] += 1
    if m.verdict in ("unsound", "broken-after"):
        stats[m.verdict] += 1
        findings.append((m.verdict, m, save(ctx, m, m.verdict)))
    elif m.verdict in ("unstable", "flaky", "narrow", "accurate"):
        stats[m.verdict] += 1
        save(ctx, m, m.verdict)
    if ctx.args.verbose:
        print("{} {}".format(m.verdict, m.describe()), flush=True)


def summarize(stats, findings):
    for kind, m, folder in findings:
        print("{}: {}\n    -> {}".format(kind.upper(), m.describe(), folder))
        for line in m.lines:
            if not line.startswith("PASS"):
                print("       " + line.splitlines()[0][:300] if line else "")
    print("soundness: {duplicate} duplicates, {error} pass errors, "
          "{undrivable} not executable, {broken-before} mutants that do not "
          "run, {unstable} that read undefined memory, {flaky} alarms not "
          "reproduced, {narrow} explained by the rounding of their f16/bf16 "
          "chain, dismissed {accurate} as more accurate than the original "
          "(f32 chain versus its f64 evaluation); "
          "{crash} crashes, {broken-after} outputs that do not "
          "run, {signature} signature changes".format(**stats))
    print("soundness: tried {tried} mutants, {valid} parse-valid, {changed} "
          "raised/changed, executed {executed}, {unsound} unsound".format(
              **stats), flush=True)
    bad = stats["unsound"] + stats["crash"] + stats["broken-after"] + \
        stats["signature"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
