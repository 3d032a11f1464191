#!/usr/bin/env python3
"""Writes the GPU benchmark module and the case table bench_main.cpp uses.

  gen_bench.py OUT.mlir OUT_NOSPLIT.mlir OUT.inc

Every case is a function over device buffers (norm-gpu-pipeline with
memory=device) with the same C signature, so the driver calls all of them
alike: `_mlir_ciface_<op>_<M>x<N>_<dtype>(x, r, w, b, alpha, y, s)` with
x, r, y, s of shape [M, N], w, b of shape [N] and alpha of shape [1]
(unused operands are ignored). Results are materialized into y (and s), so
no buffer is allocated per call.

`sm_copy(src, dst)` is the floor the kernels are compared with: a kernel
(not the copy engine) moving `memref<?xi32>` src to dst with 128-bit
loads and stores, four independent vectors per thread and iteration, over a
grid-stride loop of 1024 blocks of 256 threads (the length must be a
multiple of 4).

The cases of few rows are also written to a second module, OUT_NOSPLIT.mlir
(functions prefixed `nosplit_`), which gpu-check.sh compiles with
`split-min-elements=0`: the split kernels and the block-per-row kernel on
the same shapes, timed in the same run.

Quantization and gradient cases ("extra" cases) have another signature:
eight rank-2 memrefs `(a0, ..., a7)` (vectors as [1, N], per-row values as
[M, 1]), described by the table `kExtraCases` (each argument's shape,
element size, whether the kernel reads or writes it, and how the driver
fills it); unused arguments are [1, 1] f32.
"""

import sys

SHAPES = [(8192, 4096), (32, 8192), (1, 4096), (4, 65536), (1, 1048576)]
# Shapes with fewer rows than the split kernels' limit (64): also compiled
# without split kernels.
SPLIT_ROWS_BELOW = 64
DTYPES = [("bf16", 2), ("f32", 4)]
# (name, norm op text, streams: tensors of [M, N] read = written)
OPS = [
    ("rms_norm", "{y} = norm.rms_norm %xt weight(%wt) : ({t}, {w}) -> {t}", 1),
    ("layer_norm",
     "{y} = norm.layer_norm %xt weight(%wt) bias(%bt) : ({t}, {w}, {w}) -> {t}",
     1),
    ("add_rms_norm",
     "{y}, %st = norm.rms_norm %xt weight(%wt) residual(%rt) : ({t}, {w}, {t})"
     " -> ({t}, {t})", 2),
    ("dyt",
     "{y} = norm.dyt %xt alpha(%at) weight(%wt) bias(%bt) : ({t}, {a}, {w}, "
     "{w}) -> {t}", 1),
]


SM_COPY = """\
func.func @sm_copy(%src: memref<?xi32>, %dst: memref<?xi32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %blocks = arith.constant 1024 : index
  %threads = arith.constant 256 : index
  %len = memref.dim %src, %c0 : memref<?xi32>
  %vectors = arith.divui %len, %c4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %threads, %sy = %c1, %sz = %c1) {
    %stride = arith.muli %gx, %sx : index
    %block0 = arith.muli %bx, %sx : index
    %first = arith.addi %block0, %tx : index
    %step = arith.muli %stride, %c4 : index
    scf.for %i = %first to %vectors step %step {
      %i1 = arith.addi %i, %stride : index
      %i2 = arith.addi %i1, %stride : index
      %i3 = arith.addi %i2, %stride : index
      %full = arith.cmpi ult, %i3, %vectors : index
      scf.if %full {
        %e0 = arith.muli %i, %c4 : index
        %e1 = arith.muli %i1, %c4 : index
        %e2 = arith.muli %i2, %c4 : index
        %e3 = arith.muli %i3, %c4 : index
        %v0 = vector.load %src[%e0] {alignment = 16} : memref<?xi32>, vector<4xi32>
        %v1 = vector.load %src[%e1] {alignment = 16} : memref<?xi32>, vector<4xi32>
        %v2 = vector.load %src[%e2] {alignment = 16} : memref<?xi32>, vector<4xi32>
        %v3 = vector.load %src[%e3] {alignment = 16} : memref<?xi32>, vector<4xi32>
        vector.store %v0, %dst[%e0] {alignment = 16} : memref<?xi32>, vector<4xi32>
        vector.store %v1, %dst[%e1] {alignment = 16} : memref<?xi32>, vector<4xi32>
        vector.store %v2, %dst[%e2] {alignment = 16} : memref<?xi32>, vector<4xi32>
        vector.store %v3, %dst[%e3] {alignment = 16} : memref<?xi32>, vector<4xi32>
      } else {
        scf.for %k = %c0 to %c4 step %c1 {
          %off = arith.muli %k, %stride : index
          %j = arith.addi %i, %off : index
          %in = arith.cmpi ult, %j, %vectors : index
          scf.if %in {
            %e = arith.muli %j, %c4 : index
            %v = vector.load %src[%e] {alignment = 16} : memref<?xi32>, vector<4xi32>
            vector.store %v, %dst[%e] {alignment = 16} : memref<?xi32>, vector<4xi32>
          }
        }
      }
    }
    gpu.terminator
  }
  return
}
"""


# Quantization cases (DESIGN 2a benchmark): bf16 input, fused into
# rms_norm (with and without the residual add).
QUANT_SHAPES = [(8192, 4096), (32, 8192)]
QUANT_MODES = [
    # (label, q type, quantize op text, scales shape of [M, N])
    ("fp8_static", "f8E4M3FN",
     "{q} = norm.quantize {y} scale({sc}) : ({t}, tensor<1xf32>) -> {qt}",
     None),
    ("fp8_token", "f8E4M3FN",
     "{q}, %sct = norm.quantize {y} : ({t}) -> ({qt}, {st})",
     lambda m, n: (m, 1)),
    ("int8_token", "i8",
     "{q}, %sct = norm.quantize {y} : ({t}) -> ({qt}, {st})",
     lambda m, n: (m, 1)),
    ("fp8_group128", "f8E4M3FN",
     "{q}, %sct = norm.quantize {y} {{group_size = 128 : i64}} : ({t}) -> "
     "({qt}, {st})",
     lambda m, n: (m, n // 128)),
]
GRAD_SHAPES = [(8192, 4096), (32, 8192)]
UNUSED = (1, 1, "f32", "none")


def memref(shape, elem):
    return "memref<%dx%dx%s>" % (shape[0], shape[1], elem)


def tensor(shape, elem):
    return "tensor<%s>" % "x".join([str(d) for d in shape] + [elem])


class Extra:
    """Writes one extra case: arguments a0..a7 of rank 2, viewed as the
    tensors of the op (collapsed to 1 or 0 dims by `memref.collapse_shape`
    ahead of the op, so that its kernel can write the outputs in place)."""

    def __init__(self, name, op, m, n, dtype):
        self.name, self.op, self.m, self.n, self.dtype = name, op, m, n, dtype
        self.args = []   # (rows, cols, elem, use)
        self.body = []

    def arg(self, rows, cols, elem, use):
        """A new argument; use: in (normal values), one, positive, alpha,
        scale (inputs), out, or none; returns its name."""
        self.args.append((rows, cols, elem, use))
        return "%%a%d" % (len(self.args) - 1)

    def view(self, rows, cols, elem, use, shape):
        """A new argument seen as a memref of `shape` (2 dims, 1 dim or ()
        for a scalar): (name of the argument, of the view, the view's
        type)."""
        name = self.arg(rows, cols, elem, use)
        if len(shape) == 2:
            return name, name, memref((rows, cols), elem)
        flat = "memref<%s>" % "x".join([str(d) for d in shape] + [elem])
        self.body.append("  %sc = memref.collapse_shape %s %s : %s into %s" %
                         (name, name, "[[0, 1]]" if shape else "[]",
                          memref((rows, cols), elem), flat))
        return name, name + "c", flat

    def input(self, rows, cols, elem, use, shape):
        """A tensor of `shape` reading a new argument."""
        name, view, viewType = self.view(rows, cols, elem, use, shape)
        self.body.append("  %sm = bufferization.to_tensor %s restrict : "
                         "%s to %s" % (name, view, viewType,
                                       tensor(shape, elem)))
        return name + "m"

    def output(self, rows, cols, elem, shape):
        """A new argument written as a tensor of `shape` (see store)."""
        _, view, viewType = self.view(rows, cols, elem, "out", shape)
        return view, viewType, tensor(shape, elem)

    def store(self, value, output):
        view, viewType, tensorType = output
        self.body.append(
            "  bufferization.materialize_in_destination %s in restrict "
            "writable %s : (%s, %s) -> ()" % (value, view, tensorType,
                                              viewType))

    def emit(self):
        while len(self.args) < 8:
            self.arg(*UNUSED)
        params = ", ".join("%%a%d: %s" % (i, memref((r, c), e))
                           for i, (r, c, e, _) in enumerate(self.args))
        text = ["func.func @%s(%s) attributes {llvm.emit_c_interface} {" %
                (self.name, params)] + self.body + ["  return", "}", ""]
        size = {"bf16": 2, "f32": 4, "f8E4M3FN": 1, "i8": 1}
        specs = ", ".join('{%d, %d, %d, "%s"}' % (r, c, size[e], u)
                          for r, c, e, u in self.args)
        row = ('  {"%s", %d, %d, "%s", {%s}, _mlir_ciface_%s},' %
               (self.op, self.m, self.n, self.dtype, specs, self.name))
        return text, row


def quant_case(op, mode, m, n):
    label, qelem, qtext, scales = mode
    residual = op == "add_rms_norm"
    e = Extra("%s_quant_%s_%dx%d_bf16" % (op, label, m, n),
              "%s_quant/%s" % (op, label), m, n, "bf16")
    t = tensor((m, n), "bf16")
    x = e.input(m, n, "bf16", "in", (m, n))
    w = e.input(1, n, "bf16", "one", (n,))
    r = e.input(m, n, "bf16", "in", (m, n)) if residual else None
    scale = e.input(1, 1, "f32", "scale", (1,)) if scales is None else None
    q = e.output(m, n, qelem, (m, n))
    sc = e.output(*scales(m, n), "f32", scales(m, n)) if scales else None
    s = e.output(m, n, "bf16", (m, n)) if residual else None
    if residual:
        e.body.append("  %%y, %%s = norm.rms_norm %s weight(%s) residual(%s) "
                      ": (%s, tensor<%dxbf16>, %s) -> (%s, %s)" %
                      (x, w, r, t, n, t, t, t))
    else:
        e.body.append("  %%y = norm.rms_norm %s weight(%s) : (%s, "
                      "tensor<%dxbf16>) -> %s" % (x, w, t, n, t))
    qt = tensor((m, n), qelem)
    st = tensor(scales(m, n), "f32") if scales else None
    e.body.append("  " + qtext.format(q="%qt", y="%y", t=t, qt=qt, st=st,
                                      sc=scale))
    e.store("%qt", q)
    if scales:
        e.store("%sct", sc)
    if residual:
        e.store("%s", s)
    return e


def grad_case(op, m, n, dtype):
    e = Extra("%s_grad_%dx%d_%s" % (op, m, n, dtype), op + "_grad", m, n,
              dtype)
    t, v = tensor((m, n), dtype), tensor((n,), dtype)
    st = tensor((m,), "f32")
    dy = e.input(m, n, dtype, "in", (m, n))
    x = e.input(m, n, dtype, "in", (m, n))
    if op == "layer_norm":
        mean = e.input(m, 1, "f32", "in", (m,))
        rstd = e.input(m, 1, "f32", "positive", (m,))
        w = e.input(1, n, dtype, "one", (n,))
        text = ("%%dx, %%dw, %%db = norm.layer_norm_grad %s, %s mean(%s) "
                "rstd(%s) weight(%s) {has_bias} : (%s, %s, %s, %s, %s) -> "
                "(%s, %s, %s)" % (dy, x, mean, rstd, w, t, t, st, st, v, t, v,
                                  v))
        results = ["%dx", "%dw", "%db"]
    elif op == "rms_norm":
        rstd = e.input(m, 1, "f32", "positive", (m,))
        w = e.input(1, n, dtype, "one", (n,))
        text = ("%%dx, %%dw = norm.rms_norm_grad %s, %s rstd(%s) weight(%s) : "
                "(%s, %s, %s, %s) -> (%s, %s)" % (dy, x, rstd, w, t, t, st, v,
                                                  t, v))
        results = ["%dx", "%dw"]
    else:
        alpha = e.input(1, 1, dtype, "alpha", ())
        w = e.input(1, n, dtype, "one", (n,))
        at = tensor((), dtype)
        text = ("%%dx, %%dw, %%db, %%da = norm.dyt_grad %s, %s alpha(%s) "
                "weight(%s) {has_bias} : (%s, %s, %s, %s) -> (%s, %s, %s, %s)"
                % (dy, x, alpha, w, t, t, at, v, t, v, v, at))
        results = ["%dx", "%dw", "%db", "%da"]
    # dx is [M, N], dweight and dbias [N] (an argument [1, N]), dalpha a
    # scalar (an argument [1, 1]).
    views = {"%dx": (m, n, (m, n)), "%dw": (1, n, (n,)), "%db": (1, n, (n,)),
             "%da": (1, 1, ())}
    outputs = [e.output(views[r][0], views[r][1], dtype, views[r][2])
               for r in results]
    e.body.append("  " + text)
    for value, output in zip(results, outputs):
        e.store(value, output)
    return e


def forward_case(op, text, streams, m, n, dtype, size, prefix=""):
    """The function and table row of a forward case."""
    name = "%s%s_%dx%d_%s" % (prefix, op, m, n, dtype)
    mat = "%dx%dx%s" % (m, n, dtype)
    vec = "%dx%s" % (n, dtype)
    t, w, a = "tensor<%s>" % mat, "tensor<%s>" % vec, "tensor<1x%s>" % dtype
    mlir = ["func.func @%s(%%x: memref<%s>, %%r: memref<%s>, "
            "%%w: memref<%s>, %%b: memref<%s>, %%a: memref<1x%s>, "
            "%%y: memref<%s>, %%s: memref<%s>) attributes "
            "{llvm.emit_c_interface} {" %
            (name, mat, mat, vec, vec, dtype, mat, mat)]
    for v, ty in (("x", mat), ("r", mat), ("w", vec), ("b", vec),
                  ("a", "1x" + dtype)):
        mlir.append("  %%%st = bufferization.to_tensor %%%s restrict : "
                    "memref<%s> to tensor<%s>" % (v, v, ty, ty))
    mlir.append("  " + text.format(y="%yt", t=t, w=w, a=a))
    mlir.append("  bufferization.materialize_in_destination %%yt "
                "in restrict writable %%y : (%s, memref<%s>) -> ()" % (t, mat))
    if streams == 2:
        mlir.append("  bufferization.materialize_in_destination %%st in "
                    "restrict writable %%s : (%s, memref<%s>) -> ()" %
                    (t, mat))
    mlir += ["  return", "}", ""]
    label = op + ("/nosplit" if prefix else "")
    row = ('  {"%s", %d, %d, "%s", %d, %d, _mlir_ciface_%s},' %
           (label, m, n, dtype, size, streams, name))
    return name, mlir, row


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    head = ["// Generated by gen_bench.py: the norm-mlir GPU benchmark cases.",
            ""]
    mlir, nosplit, inc = list(head), list(head), list(head)
    table, extra_table = [], []
    for op, text, streams in OPS:
        for m, n in SHAPES:
            for dtype, size in DTYPES:
                name, body, row = forward_case(op, text, streams, m, n,
                                               dtype, size)
                mlir += body
                inc.append("NORM_BENCH_DECLARE(%s)" % name)
                table.append(row)
                if m < SPLIT_ROWS_BELOW and op != "dyt":
                    name, body, row = forward_case(op, text, streams, m, n,
                                                   dtype, size, "nosplit_")
                    nosplit += body
                    inc.append("NORM_BENCH_DECLARE(%s)" % name)
                    table.append(row)
    extras = [quant_case(op, mode, m, n)
              for op in ("rms_norm", "add_rms_norm")
              for mode in QUANT_MODES for m, n in QUANT_SHAPES]
    extras += [grad_case(op, m, n, dtype)
               for op in ("layer_norm", "rms_norm", "dyt")
               for m, n in GRAD_SHAPES for dtype, _ in DTYPES]
    for e in extras:
        text, row = e.emit()
        mlir += text
        inc.append("NORM_BENCH_DECLARE_EXTRA(%s)" % e.name)
        extra_table.append(row)
    mlir.append(SM_COPY)
    inc.append("extern \"C\" void _mlir_ciface_sm_copy(MemRef1 *, MemRef1 *);")
    inc += ["", "static const BenchCase kCases[] = {"] + table + ["};", ""]
    inc += ["static const ExtraCase kExtraCases[] = {"] + extra_table + \
        ["};", ""]
    for path, lines in ((argv[1], mlir), (argv[2], nosplit), (argv[3], inc)):
        with open(path, "w") as f:
            f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
