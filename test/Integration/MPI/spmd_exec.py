#!/usr/bin/env python3
"""MPI execution tests of norm-spmd-pipeline: case generator and checker.

  spmd_exec.py gen SUITE OUT.mlir REF.npz
      Writes one module holding the cases of a suite: each `@case_K` is a
      function with upstream `shard` annotations (or hand-written
      collectives) written on global shapes, and `@main` calls `mpi.init`,
      builds the global inputs as constants (the same on every rank), calls
      every case and prints every result with printMemrefF32 (16-bit
      results widened to f32), then calls `mpi.finalize`. Callers keep the
      global view (norm-shard-partition passes each rank its shard and
      gathers the results), so every rank prints whole results. REF.npz
      holds the f64 reference of every printed output.
  spmd_exec.py check REF.npz NRANKS OUT_PATTERN
      Reads the output of every rank (OUT_PATTERN with %r replaced by the
      rank, as `mpirun -outfile-pattern` writes it) and compares each
      printed result with the unsharded reference under the bound of its
      element type (normref.BOUNDS: f32 1e-5). Prints `PASS: rank R case_K:
      <description>; err E` or `FAIL: ...` per rank and case, then `all N
      checks passed` (exit 0) or `M of N checks FAILED` (exit 1).
  spmd_exec.py names SUITE
      Prints `case_K: <description>` for every case of the suite.

Suites: spmd2 (grid of 2, run with -np 2) and spmd4 (2x2 and 4 grids, run
with -np 4).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import normref  # noqa: E402

MLIR_TYPE = {"f32": "f32", "f16": "f16", "bf16": "bf16"}


def ttype(shape, t):
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), t)


def dense(values, shape, t):
    """An arith.constant of `values` (float64 holding values of t)."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    text = ", ".join(repr(float(v)) for v in flat)
    return "arith.constant dense<[%s]> : tensor<%dx%s>" % (
        text, flat.size, t) if len(shape) == 1 else \
        "arith.constant dense<%s> : %s" % (_nested(flat, shape), ttype(shape, t))


def _nested(flat, shape):
    if len(shape) == 1:
        return "[" + ", ".join(repr(float(v)) for v in flat) + "]"
    step = int(np.prod(shape[1:]))
    return "[" + ", ".join(_nested(flat[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


class Case:
    """One function of the module: its MLIR text, its inputs (name, shape,
    type, values) in argument order, its result types, and the reference
    of each result."""

    def __init__(self, description, grid, body, inputs, results, refs):
        self.description = description
        self.grid = grid
        self.body = body
        self.inputs = inputs
        self.results = results
        self.refs = refs


def rng_for(seed):
    return np.random.default_rng(seed)


def values(rng, shape, t, offset=0.0, scale=1.0):
    return normref.rnd(offset + scale * rng.standard_normal(shape), t)


def norm_case(seed, op, t, shape, split, grid="@grid", weight=False,
              bias=False, residual=False, offset=0.0, dynamic_rows=False,
              description=""):
    """A norm op on x[shape] whose x (and result) carry `split` (the
    split_axes text, e.g. [[], [0]]). With dynamic_rows the function takes
    tensor<?xN> (the call passes a cast)."""
    rng = rng_for(seed)
    m, n = shape
    x = values(rng, shape, t, offset=offset, scale=0.1 if offset else 1.0)
    inputs = [("x", shape, t, x)]
    xt = ttype(["?" if dynamic_rows else m, n], t)
    args = ["%%x: %s" % xt]
    operands = ""
    optypes = [xt]
    alpha = None
    if op == "dyt":
        alpha = normref.rnd(0.75, t)
        inputs.append(("alpha", (), t, np.array(alpha)))
        args.append("%%a: tensor<%s>" % t)
        operands += " alpha(%a)"
        optypes.append("tensor<%s>" % t)
    w = b = r = None
    if weight:
        w = values(rng, (n,), t, offset=1.0, scale=0.25)
        inputs.append(("w", (n,), t, w))
        args.append("%%w: tensor<%dx%s>" % (n, t))
        operands += " weight(%w)"
        optypes.append("tensor<%dx%s>" % (n, t))
    if bias:
        b = values(rng, (n,), t, scale=0.5)
        inputs.append(("b", (n,), t, b))
        args.append("%%b: tensor<%dx%s>" % (n, t))
        operands += " bias(%b)"
        optypes.append("tensor<%dx%s>" % (n, t))
    if residual:
        r = values(rng, shape, t)
        inputs.append(("r", shape, t, r))
        args.append("%%r: %s" % xt)
        operands += " residual(%r)"
        optypes.append(xt)
    restypes = [xt, xt] if residual else [xt]
    results = "%y, %ro" if residual else "%y"
    body = """  %s = shard.sharding %s split_axes = %s : !shard.sharding
  %%xs = shard.shard %%x to %%s : %s
  %s = norm.%s %%xs%s : (%s) -> (%s)
  return %s : %s""" % ("%s", grid, split, xt, results, op, operands,
                       ", ".join(optypes), ", ".join(restypes), results,
                       ", ".join(restypes))
    header = "(%s) -> (%s)" % (", ".join(args), ", ".join(restypes))
    y, ro = normref.reference(op, x, t, weight=w, weight_type=t, bias=b,
                              bias_type=t, alpha=alpha, residual=r)
    refs = [(y, t)] + ([(ro, t)] if residual else [])
    return Case(description, grid, (header, body), inputs,
                [(shape, t)] * len(refs), refs)


def seq_parallel_case(seed, t, shape, processes, grid):
    """Sequence parallelism (Megatron/vLLM): every rank holds a partial sum
    of the row-parallel matmul output; reduce_scatter over the rows,
    add+RMSNorm on the row shard, all_gather of y and residual_out. The
    partials are x * c_r with c_r = (2r + 1) / P^2 (exact, summing to x)."""
    rng = rng_for(seed)
    m, n = shape
    x = values(rng, shape, t)
    res = values(rng, shape, t)
    w = values(rng, (n,), t, offset=1.0, scale=0.25)
    local = (m // processes, n)
    gt, lt = ttype(shape, t), ttype(local, t)
    wt = "tensor<%dx%s>" % (n, t)
    if t == "f32":
        scale = """    %p = arith.mulf %v, %c : f32
    linalg.yield %p : f32"""
    else:
        scale = """    %%vw = arith.extf %%v : %s to f32
    %%p = arith.mulf %%vw, %%c : f32
    %%pn = arith.truncf %%p : f32 to %s
    linalg.yield %%pn : %s""" % (t, t, t)
    body = """  %%rank = shard.process_linear_index on %s : index
  %%ri = arith.index_cast %%rank : index to i64
  %%rf = arith.sitofp %%ri : i64 to f32
  %%two = arith.constant 2.0 : f32
  %%one = arith.constant 1.0 : f32
  %%pp = arith.constant %s : f32
  %%c0 = arith.mulf %%rf, %%two : f32
  %%c1 = arith.addf %%c0, %%one : f32
  %%c = arith.divf %%c1, %%pp : f32
  %%e = tensor.empty() : %s
  %%partial = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%%x : %s) outs(%%e : %s) {
  ^bb0(%%v: %s, %%o: %s):
%s
  } -> %s
  %%sum = shard.reduce_scatter %%partial on %s grid_axes = [0] scatter_axis = 0 : %s -> %s
  %%rl = shard.all_slice %%r on %s grid_axes = [0] slice_axis = 0 : %s -> %s
  %%y, %%ro = norm.rms_norm %%sum weight(%%w) residual(%%rl) : (%s, %s, %s) -> (%s, %s)
  %%yg = shard.all_gather %%y on %s grid_axes = [0] gather_axis = 0 : %s -> %s
  %%rg = shard.all_gather %%ro on %s grid_axes = [0] gather_axis = 0 : %s -> %s
  return %%yg, %%rg : %s, %s""" % (
        grid, repr(float(processes * processes)), gt, gt, gt, t, t, scale,
        gt, grid, gt, lt, grid, gt, lt, lt, wt, lt, lt, lt, grid, lt, gt,
        grid, lt, gt, gt, gt)
    header = "(%%x: %s, %%r: %s, %%w: %s) -> (%s, %s)" % (gt, gt, wt, gt, gt)
    # Each rank's partial is rounded to t; the reduction adds them in f32
    # (16-bit types are widened) and rounds once to t.
    partials = [normref.rnd(x * ((2 * r + 1) / processes ** 2), t)
                for r in range(processes)]
    total = normref.rnd(sum(partials), t)
    y, ro = normref.reference("rms_norm", total, t, weight=w, weight_type=t,
                              residual=res)
    return Case("sequence parallel: reduce_scatter, add+rms_norm on row "
                "shards, all_gather, %s [%d,%d] over %d" % (t, m, n,
                                                            processes),
                grid, (header, body), [("x", shape, t, x), ("r", shape, t, res),
                                       ("w", (n,), t, w)],
                [(shape, t), (shape, t)], [(y, t), (ro, t)])


def prenorm_block_case(seed, shape, cols):
    """RMSNorm on replicated rows feeding a matmul whose weight is split by
    columns (tensor parallelism): each rank computes its output columns."""
    rng = rng_for(seed)
    m, k = shape
    x = values(rng, shape, "f32")
    g = values(rng, (k,), "f32", offset=1.0, scale=0.25)
    wm = values(rng, (k, cols), "f32", scale=1.0 / np.sqrt(k))
    xt, gt = ttype(shape, "f32"), "tensor<%dxf32>" % k
    wt, ot = ttype((k, cols), "f32"), ttype((m, cols), "f32")
    body = """  %%cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %%wm_s = shard.shard %%wm to %%cols : %s
  %%y = norm.rms_norm %%x weight(%%g) : (%s, %s) -> %s
  %%z = arith.constant 0.0 : f32
  %%e = tensor.empty() : %s
  %%f = linalg.fill ins(%%z : f32) outs(%%e : %s) -> %s
  %%o = linalg.matmul ins(%%y, %%wm_s : %s, %s) outs(%%f : %s) -> %s
  %%os = shard.shard %%o to %%cols : %s
  return %%os : %s""" % (wt, xt, gt, xt, ot, ot, ot, xt, wt, ot, ot, ot, ot)
    header = "(%%x: %s, %%g: %s, %%wm: %s) -> (%s)" % (xt, gt, wt, ot)
    y, _ = normref.reference("rms_norm", x, "f32", weight=g, weight_type="f32")
    out = y @ wm
    return Case("pre-norm block: rms_norm then matmul, weight split by "
                "columns, f32 [%d,%d]x[%d,%d]" % (m, k, k, cols), "@grid",
                (header, body), [("x", shape, "f32", x), ("g", (k,), "f32", g),
                                 ("wm", (k, cols), "f32", wm)],
                [((m, cols), "f32")], [(out, "f32")])


def suite(name):
    hidden, rows = "[[], [0]]", "[[0]]"
    if name == "spmd2":
        grids = ["shard.grid @grid(shape = 2)"]
        cases = [
            norm_case(1, "rms_norm", "f32", (16, 256), hidden, weight=True,
                      description="rms_norm f32 hidden split"),
            norm_case(2, "rms_norm", "f32", (16, 256), rows, weight=True,
                      description="rms_norm f32 rows split"),
            norm_case(3, "layer_norm", "f32", (8, 1024), hidden, weight=True,
                      bias=True, offset=1e4,
                      description="layer_norm f32 hidden split, rows at "
                                  "1e4 + N(0, 0.1^2)"),
            norm_case(4, "layer_norm", "f32", (16, 128), rows, weight=True,
                      bias=True, description="layer_norm f32 rows split"),
            norm_case(5, "rms_norm", "f32", (8, 256), hidden, weight=True,
                      residual=True,
                      description="add+rms_norm f32 hidden split"),
            norm_case(6, "rms_norm", "bf16", (8, 256), hidden, weight=True,
                      description="rms_norm bf16 hidden split"),
            norm_case(7, "layer_norm", "bf16", (8, 256), hidden, weight=True,
                      bias=True, residual=True,
                      description="add+layer_norm bf16 hidden split"),
            norm_case(8, "dyt", "f32", (8, 128), hidden, weight=True,
                      bias=True, description="dyt f32 hidden split"),
            norm_case(9, "dyt", "f16", (8, 128), rows, weight=True,
                      description="dyt f16 rows split"),
            norm_case(10, "rms_norm", "f32", (12, 256), hidden, weight=True,
                      dynamic_rows=True,
                      description="rms_norm f32 dynamic rows, hidden split"),
            seq_parallel_case(11, "f32", (16, 256), 2, "@grid"),
            seq_parallel_case(12, "bf16", (16, 256), 2, "@grid"),
            prenorm_block_case(13, (8, 128), 64),
        ]
    elif name == "spmd4":
        grids = ["shard.grid @grid(shape = 2x2)",
                 "shard.grid @line(shape = 4)"]
        cases = [
            norm_case(21, "rms_norm", "f32", (16, 256), "[[0], [1]]",
                      weight=True, description="rms_norm f32 2x2: rows on "
                      "axis 0, hidden on axis 1"),
            norm_case(22, "layer_norm", "f32", (8, 1024), "[[], [0, 1]]",
                      weight=True, bias=True, offset=1e4,
                      description="layer_norm f32 hidden over both axes, "
                                  "rows at 1e4 + N(0, 0.1^2)"),
            norm_case(23, "rms_norm", "bf16", (8, 256), "[[0], [1]]",
                      weight=True, residual=True,
                      description="add+rms_norm bf16 2x2"),
            norm_case(24, "layer_norm", "f32", (16, 128), "[[1], [0]]",
                      weight=True, description="layer_norm f32 2x2: rows "
                      "on axis 1, hidden on axis 0"),
            norm_case(25, "rms_norm", "f32", (16, 256), "[[], [0]]",
                      grid="@line", weight=True,
                      description="rms_norm f32 hidden split over 4"),
            seq_parallel_case(26, "f32", (16, 256), 4, "@line"),
        ]
    else:
        raise SystemExit("unknown suite %r" % name)
    return grids, cases


def generate(name, out_mlir, out_npz):
    grids, cases = suite(name)
    lines = list(grids)
    refs = {}
    main = ["func.func @main() {", "  mpi.init"]
    printed = 0
    for k, case in enumerate(cases):
        header, body = case.body
        lines.append("func.func @case_%d%s {" % (k, header))
        lines.append(body.replace("%s = shard.sharding", "%s = shard.sharding"))
        lines.append("}")
        argnames = []
        for (name_, shape, t, vals) in case.inputs:
            v = "%%in_%d_%s" % (k, name_)
            if shape == ():
                main.append("  %s = arith.constant dense<%r> : tensor<%s>"
                            % (v, float(vals), t))
            else:
                main.append("  %s = %s" % (v, dense(vals, shape, t)))
            argnames.append(v)
        argtypes = [("tensor<%s>" % t) if shape == () else ttype(shape, t)
                    for (_, shape, t, _) in case.inputs]
        if "?x" in header:
            # The dynamic-rows case: cast x to the dynamic type.
            xt = argtypes[0]
            dyn = "tensor<?x%s" % xt[len("tensor<"):].split("x", 1)[1]
            main.append("  %%dyn_%d = tensor.cast %s : %s to %s"
                        % (k, argnames[0], xt, dyn))
            argnames[0] = "%%dyn_%d" % k
            argtypes[0] = dyn
        restypes = [ttype(shape, t) for (shape, t) in case.results]
        if "?x" in header:
            restypes = ["tensor<?x%s" % r[len("tensor<"):].split("x", 1)[1]
                        for r in restypes]
        outs = ["%%out_%d_%d" % (k, i) for i in range(len(restypes))]
        main.append("  %s = func.call @case_%d(%s) : (%s) -> (%s)" % (
            ", ".join(outs), k, ", ".join(argnames), ", ".join(argtypes),
            ", ".join(restypes)))
        for i, (o, rt) in enumerate(zip(outs, restypes)):
            t = case.results[i][1]
            v = o
            if t != "f32":
                wide = rt.replace("x%s>" % t, "xf32>")
                main.append("  %s_w = arith.extf %s : %s to %s" % (o, o, rt,
                                                                   wide))
                v, rt = o + "_w", wide
            main.append("  %s_u = tensor.cast %s : %s to tensor<*xf32>"
                        % (o, v, rt))
            main.append("  func.call @printMemrefF32(%s_u) : "
                        "(tensor<*xf32>) -> ()" % o)
            ref, rt_name = case.refs[i]
            refs["out_%d" % printed] = np.asarray(ref, dtype=np.float64)
            refs["type_%d" % printed] = np.array(rt_name)
            refs["case_%d" % printed] = np.array(k)
            printed += 1
    main += ["  mpi.finalize", "  return", "}"]
    lines.append("func.func private @printMemrefF32(tensor<*xf32>)")
    lines += main
    with open(out_mlir, "w") as f:
        f.write("\n".join(lines) + "\n")
    refs["count"] = np.array(printed)
    refs["descriptions"] = np.array([c.description for c in cases])
    np.savez(out_npz, **refs)


def check(npz, nranks, pattern):
    data = np.load(npz)
    count = int(data["count"])
    descriptions = list(data["descriptions"])
    total = failed = 0
    for rank in range(nranks):
        path = pattern.replace("%r", str(rank))
        try:
            with open(path) as f:
                printed = normref.parse_printed(f.read())
        except OSError as e:
            printed = []
            print("FAIL: rank %d: %s" % (rank, e))
        per_case = {}
        for i in range(count):
            k = int(data["case_%d" % i])
            t = str(data["type_%d" % i])
            ref = data["out_%d" % i]
            if i >= len(printed) or isinstance(printed[i][1], str):
                err, why = np.inf, "output %d missing or unreadable" % i
            else:
                sizes, vals = printed[i]
                if tuple(sizes) != tuple(ref.shape):
                    err, why = np.inf, "shape %s, expected %s" % (
                        sizes, ref.shape)
                else:
                    err, why = normref.compare(vals, ref)
            ok = normref.within(err, normref.BOUNDS[t])
            prev = per_case.get(k, (True, 0.0, []))
            per_case[k] = (prev[0] and ok, max(prev[1], err),
                           prev[2] + ([] if ok else [why]))
        for k in sorted(per_case):
            ok, err, whys = per_case[k]
            total += 1
            if ok:
                print("PASS: rank %d case_%d: %s; err %.3g"
                      % (rank, k, descriptions[k], err))
            else:
                failed += 1
                print("FAIL: rank %d case_%d: %s; err %.3g" % (
                    rank, k, descriptions[k], err))
                for why in whys:
                    print("    %s" % why)
        if len(printed) != count:
            total += 1
            failed += 1
            print("FAIL: rank %d printed %d outputs, expected %d"
                  % (rank, len(printed), count))
    if failed:
        print("%d of %d checks FAILED" % (failed, total))
        return 1
    print("all %d checks passed" % total)
    return 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "gen":
        generate(argv[2], argv[3], argv[4])
        return 0
    if len(argv) == 5 and argv[1] == "check":
        return check(argv[2], int(argv[3]), argv[4])
    if len(argv) == 3 and argv[1] == "names":
        for k, case in enumerate(suite(argv[2])[1]):
            print("case_%d: %s" % (k, case.description))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
