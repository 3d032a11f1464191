#!/usr/bin/env python3
"""Times a norm op sharded over MPI ranks through norm-spmd-pipeline.

  spmd_bench.py [--rows=8192] [--hidden=4096] [--reps=20]
                [--norm-opt=build/bin/norm-opt] [--out=FILE.json]

For [rows, hidden] f32 RMSNorm (with weight) it builds and runs, under
mpirun:
  - 1 rank, unsharded: the op lowered by norm-cpu-pipeline (direct path);
  - 2 ranks, hidden dim split: norm-spmd-pipeline's partition (local f64
    partial sums of squares, one MPI_Allreduce of `rows` f64 values, local
    normalization), then norm-cpu-pipeline;
  - 2 ranks, rows split: the local op on half the rows, no communication.
Each variant is a module holding the partitioned function (compiled from
the sharded source by norm-spmd-pipeline) and a driver, appended after
partitioning and written against the local types, that makes the inputs of
its rank, calls the function once to warm up and then `reps` times, timing
each call with rtclock (mlir-runner --O3, as LLVM's loop vectorizer is
what makes the partitioned linalg code fast). The 2-rank hidden-split module also times the
all-reduce alone (the same `shard.all_reduce` of `rows` f64 values through
the same lowering), whose median over the kernel's median is the share of
the time spent in MPI. Reported: the median time per call of each variant
on rank 0 (ranks synchronize at the all-reduce), in ms, and the speedups
over 1 rank. Prints a table and, with --out, writes JSON.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

LLVM = "/usr/lib/llvm-22"
MPICH = "/usr/lib/x86_64-linux-gnu/libmpich.so"


def kernel_source(rows, hidden, processes, split):
    """The sharded (or plain) module: @kernel and, with `split`, the
    annotations; @allreduce_only: the statistics' all-reduce alone."""
    lines = []
    if split:
        lines.append("shard.grid @grid(shape = %d)" % processes)
    x = "tensor<%dx%dxf32>" % (rows, hidden)
    w = "tensor<%dxf32>" % hidden
    lines.append("func.func @kernel(%%x: %s, %%w: %s) -> %s {" % (x, w, x))
    if split:
        lines.append("  %%s = shard.sharding @grid split_axes = %s : "
                     "!shard.sharding" % split)
        lines.append("  %%xs = shard.shard %%x to %%s : %s" % x)
        lines.append("  %%y = norm.rms_norm %%xs weight(%%w) : (%s, %s) -> %s"
                     % (x, w, x))
        lines.append("  %%ys = shard.shard %%y to %%s : %s" % x)
        lines.append("  return %%ys : %s" % x)
    else:
        lines.append("  %%y = norm.rms_norm %%x weight(%%w) : (%s, %s) -> %s"
                     % (x, w, x))
        lines.append("  return %%y : %s" % x)
    lines.append("}")
    if split == "[[], [0]]":
        s = "tensor<%dxf64>" % rows
        lines.append("func.func @allreduce_only(%%s: %s) -> %s {" % (s, s))
        lines.append("  %%r = shard.all_reduce %%s on @grid grid_axes = [0] :"
                     " %s -> %s" % (s, s))
        lines.append("  return %%r : %s" % s)
        lines.append("}")
    return "\n".join(lines) + "\n"


def driver(x_type, w_type, reps, allreduce_type):
    """@main against the local types: inputs from indices, a warm-up call,
    then `reps` timed calls (printed one per line, in seconds)."""
    xs = [int(d) for d in re.findall(r"\d+", x_type)[:2]]
    wn = int(re.findall(r"\d+", w_type)[0])
    out = ["func.func private @rtclock() -> f64",
           "func.func private @printF64(f64)",
           "func.func private @printNewline()",
           "func.func @main() {",
           "  mpi.init",
           "  %ex = tensor.empty() : " + x_type,
           "  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],"
           " iterator_types = [\"parallel\", \"parallel\"]} outs(%ex : "
           + x_type + ") {",
           "  ^bb0(%o: f32):",
           "    %i = linalg.index 0 : index",
           "    %j = linalg.index 1 : index",
           "    %c31 = arith.constant 31 : index",
           "    %c97 = arith.constant 97 : index",
           "    %a = arith.muli %i, %c31 : index",
           "    %b = arith.addi %a, %j : index",
           "    %m = arith.remui %b, %c97 : index",
           "    %mi = arith.index_cast %m : index to i64",
           "    %mf = arith.sitofp %mi : i64 to f32",
           "    %s = arith.constant 0.01 : f32",
           "    %v = arith.mulf %mf, %s : f32",
           "    linalg.yield %v : f32",
           "  } -> " + x_type,
           "  %one = arith.constant 1.0 : f32",
           "  %ew = tensor.empty() : " + w_type,
           "  %%w = linalg.fill ins(%%one : f32) outs(%%ew : %s) -> %s"
           % (w_type, w_type),
           "  %c0 = arith.constant 0 : index",
           "  %c1 = arith.constant 1 : index",
           "  %%reps = arith.constant %d : index" % reps,
           "  %%warm = func.call @kernel(%%x, %%w) : (%s, %s) -> %s"
           % (x_type, w_type, x_type),
           "  scf.for %it = %c0 to %reps step %c1 {",
           "    %t0 = func.call @rtclock() : () -> f64",
           "    %%y = func.call @kernel(%%x, %%w) : (%s, %s) -> %s"
           % (x_type, w_type, x_type),
           "    %t1 = func.call @rtclock() : () -> f64",
           "    %dt = arith.subf %t1, %t0 : f64",
           "    func.call @printF64(%dt) : (f64) -> ()",
           "    func.call @printNewline() : () -> ()",
           "  }"]
    if allreduce_type:
        n = int(re.findall(r"\d+", allreduce_type)[0])
        out += ["  %ones = arith.constant 1.0 : f64",
                "  %es = tensor.empty() : " + allreduce_type,
                "  %%sums = linalg.fill ins(%%ones : f64) outs(%%es : %s) -> %s"
                % (allreduce_type, allreduce_type),
                "  %%warm2 = func.call @allreduce_only(%%sums) : (%s) -> %s"
                % (allreduce_type, allreduce_type),
                "  scf.for %it2 = %c0 to %reps step %c1 {",
                "    %u0 = func.call @rtclock() : () -> f64",
                "    %%r = func.call @allreduce_only(%%sums) : (%s) -> %s"
                % (allreduce_type, allreduce_type),
                "    %u1 = func.call @rtclock() : () -> f64",
                "    %du = arith.subf %u1, %u0 : f64",
                "    %neg = arith.negf %du : f64",
                "    func.call @printF64(%neg) : (f64) -> ()",
                "    func.call @printNewline() : () -> ()",
                "  }"]
        del n
    del xs, wn
    out += ["  mpi.finalize", "  return", "}"]
    return "\n".join(out) + "\n"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          **kw)


def variant(opt, tmp, name, rows, hidden, processes, split, reps):
    src = os.path.join(tmp, name + ".mlir")
    with open(src, "w") as f:
        f.write(kernel_source(rows, hidden, processes, split))
    part = run([opt, src, "--norm-spmd-pipeline"]).stdout
    sig = re.search(r"func\.func @kernel\(%arg0: (tensor<[^>]*>), "
                    r"%arg1: (tensor<[^>]*>)\)", part)
    ar = re.search(r"func\.func @allreduce_only\(%arg0: (tensor<[^>]*>)\)",
                   part)
    body = part.rstrip()
    assert body.endswith("}")
    full = body[:-1] + driver(sig.group(1), sig.group(2), reps,
                              ar.group(1) if ar else None) + "}\n"
    with open(os.path.join(tmp, name + ".spmd.mlir"), "w") as f:
        f.write(full)
    llvm = os.path.join(tmp, name + ".llvm.mlir")
    run([opt, "--norm-cpu-pipeline", "-o", llvm],
        input=full)
    pattern = os.path.join(tmp, name + ".out.%r")
    libs = ",".join([os.path.join(LLVM, "lib", "libmlir_runner_utils.so"),
                     os.path.join(LLVM, "lib", "libmlir_c_runner_utils.so"),
                     MPICH])
    run(["mpirun", "-np", str(processes), "-outfile-pattern", pattern,
         os.path.join(LLVM, "bin", "mlir-runner"), "--O3", llvm, "-e", "main",
         "-entry-point-result=void", "-shared-libs=" + libs])
    with open(pattern.replace("%r", "0")) as f:
        values = [float(v) for v in f.read().split()]
    kernel = [v for v in values if v >= 0]
    allreduce = [-v for v in values if v < 0]
    return statistics.median(kernel), (statistics.median(allreduce)
                                       if allreduce else None)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=8192)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--norm-opt", default=os.path.join("build", "bin",
                                                       "norm-opt"))
    p.add_argument("--out")
    a = p.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        one, _ = variant(a.norm_opt, tmp, "one", a.rows, a.hidden, 1, None,
                         a.reps)
        hidden, allreduce = variant(a.norm_opt, tmp, "hidden", a.rows,
                                    a.hidden, 2, "[[], [0]]", a.reps)
        rows, _ = variant(a.norm_opt, tmp, "rows", a.rows, a.hidden, 2, "[[0]]",
                          a.reps)
    results = {
        "shape": [a.rows, a.hidden], "dtype": "f32", "op": "rms_norm",
        "reps": a.reps,
        "one_rank_ms": one * 1e3,
        "two_ranks_hidden_split_ms": hidden * 1e3,
        "two_ranks_hidden_split_allreduce_ms": allreduce * 1e3,
        "mpi_share": allreduce / hidden,
        "two_ranks_rows_split_ms": rows * 1e3,
        "speedup_hidden_split": one / hidden,
        "speedup_rows_split": one / rows,
    }
    print("f32 rms_norm [%d,%d], median of %d calls, rank 0:"
          % (a.rows, a.hidden, a.reps))
    print("  1 rank (unsharded, direct)      %8.3f ms" % (one * 1e3))
    print("  2 ranks, hidden split           %8.3f ms  (x%.2f vs 1 rank)"
          % (hidden * 1e3, one / hidden))
    print("    of which MPI_Allreduce        %8.3f ms  (%.1f%% of the call)"
          % (allreduce * 1e3, 100 * allreduce / hidden))
    print("  2 ranks, rows split (no comm.)  %8.3f ms  (x%.2f vs 1 rank)"
          % (rows * 1e3, one / rows))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
