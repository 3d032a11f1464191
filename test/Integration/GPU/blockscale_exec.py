"""Execution suites of the block-scaled forms of norm.quantize.

  blockscale_exec.py gen SUITE OUT.mlir REF.npz [--expect-cases=FILE]
      Writes a module whose @main quantizes constant inputs with each case's
      norm.quantize (MXFP8, FP8 1x128, MXFP4, NVFP4; row_major and
      swizzled_128x4 scales; static and dynamic leading dims) and prints q
      and the scales as their codes (0..255, one per element, f32 through
      printMemrefF32), and REF.npz with the codes of test/tools/
      blockscale.py. With --expect-cases, FILE's `CHECK` lines must list
      the suite's cases (the .test file is kept in step with the suite).
  blockscale_exec.py check REF.npz OUTPUT
      Compares the printed codes bit for bit with the reference (a NaN
      e4m3 code matches any NaN code) and prints one `PASS:`/`FAIL:` line
      per case and `all N cases passed`.
  blockscale_exec.py names SUITE
      Prints the CHECK lines of the suite's cases.

Suites: blockscale_f32, blockscale_bf16, blockscale_f16 (the input type):
norm.quantize alone. Inputs: normal values over many binades per row, and
groups of zeros, of subnormal-sized values, with +-inf and with a NaN.

blockscale_fused_f32, blockscale_fused_bf16, blockscale_fused_f16: each
form after `norm.rms_norm` with a weight (and after the residual add),
row_major and swizzled_128x4 scales, which norm-lower-gpu lowers to one
kernel from x to q and the scales. @main also runs the same rms_norm alone
(another function, so the two are not merged) and prints its y bit for bit
(printMemrefI32); `check` quantizes that y with test/tools/blockscale.py
(the fused kernel computes y as the norm kernel does, in registers) and
compares the codes bit for bit.
"""

import os
import re
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
import blockscale  # noqa: E402

SEED = 20261206
DTYPES = ("f32", "bf16", "f16")
SUITES = tuple("blockscale_" + t for t in DTYPES) + tuple(
    "blockscale_fused_" + t for t in DTYPES)


def np_dtype(T):
    if T == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return {"f32": np.float32, "f16": np.float16}[T]


class Case:
    def __init__(self, form, T, shape, layout="row_major", rounding="floor",
                 dynamic=False, norm=None):
        self.form, self.T, self.shape = form, T, tuple(shape)
        # None: quantize the input; "rms": rms_norm(x, w) first; "add_rms":
        # rms_norm(x + r, w).
        self.norm = norm
        self.layout, self.rounding, self.dynamic = layout, rounding, dynamic
        self.group = blockscale.GROUP[form]
        self.qtype = "f4E2M1FN" if form in ("mxfp4", "nvfp4") else "f8E4M3FN"
        self.stype = "f8E4M3FN" if form == "nvfp4" else "f8E8M0FNU"

    @property
    def M(self):
        return int(np.prod(self.shape[:-1]))

    @property
    def K(self):
        return self.shape[-1] // self.group

    def describe(self):
        dims = "x".join(("?" if self.dynamic and i == 0 else str(d))
                        for i, d in enumerate(self.shape))
        text = "%s %s tensor<%sx%s>" % (self.form, self.T, dims, self.T)
        if self.form != "nvfp4":
            text += " " + self.rounding
        text += " " + self.layout
        if self.norm:
            text += " after " + ("add + rms_norm" if self.norm == "add_rms"
                                 else "rms_norm")
        return text

    def fill(self, rng):
        M, N = self.M, self.shape[-1]
        G = self.group
        # Each row its own binade spread: values over ~20 binades.
        exps = rng.integers(-12, 8, size=(M, 1))
        y = rng.standard_normal((M, N)) * np.exp2(exps)
        y *= np.exp2(rng.integers(-3, 4, size=(M, N // G)).repeat(G, axis=1))
        special = [("zero", 0.0), ("tiny", None), ("inf", np.inf),
                   ("ninf", -np.inf), ("nan", np.nan)]
        for k, (name, value) in enumerate(special):
            r, g = divmod(3 * k + 1, max(N // G, 1))
            r %= M
            cols = slice(g * G, (g + 1) * G)
            if name == "zero":
                y[r, cols] = 0.0
                y[r, g * G] = -0.0
            elif name == "tiny":
                y[r, cols] = rng.standard_normal(G) * 2.0 ** -140
            else:
                y[r, g * G + (k % G)] = value
        with np.errstate(all="ignore"):
            self.y = y.astype(np_dtype(self.T)).reshape(self.shape)
        if self.norm:
            # x (and r) of the norm: rows of mixed magnitudes, a weight
            # that spreads y over binades; the specials stay in x.
            N = self.shape[-1]
            self.w = (np.exp2(rng.integers(-6, 7, size=N)) *
                      rng.uniform(0.5, 1.0, size=N)).astype(np_dtype(self.T))
            if self.norm == "add_rms":
                self.r = (rng.standard_normal(self.shape) * 0.5).astype(
                    np_dtype(self.T))
        ay = blockscale.as_f32(self.y)
        finite = np.abs(ay[np.isfinite(ay)])
        amax = float(finite.max()) if finite.size else 1.0
        self.g = np.float32(448.0 * 6.0 / amax)

    def reference(self, y=None):
        """q and the scales of the input (fused cases: of `y`, the norm's
        output)."""
        if y is None:
            y = self.y
        if self.form == "nvfp4":
            q, s = blockscale.quantize_nvfp4(y, self.g, self.group)
        else:
            q, s = blockscale.quantize_mx(y, self.qtype, self.group,
                                          self.rounding)
        if self.layout == "swizzled_128x4":
            s = blockscale.swizzle_scales(s, self.M, self.K)
        return q.reshape(self.shape), s

    # ----- IR -----
    def arg_type(self):
        dims = ["?" if self.dynamic and i == 0 else str(d)
                for i, d in enumerate(self.shape)]
        return "tensor<%sx%s>" % ("x".join(dims), self.T)

    def static_type(self):
        return "tensor<%sx%s>" % ("x".join(map(str, self.shape)), self.T)

    def q_type(self):
        return self.arg_type().replace(self.T + ">", self.qtype + ">")

    def s_type(self):
        if self.layout == "swizzled_128x4":
            n = "?" if self.dynamic else str(
                blockscale.swizzled_size(self.M, self.K))
            return "tensor<%sx%s>" % (n, self.stype)
        dims = ["?" if self.dynamic and i == 0 else str(d)
                for i, d in enumerate(self.shape[:-1])] + [str(self.K)]
        return "tensor<%sx%s>" % ("x".join(dims), self.stype)

    def w_type(self):
        return "tensor<%dx%s>" % (self.shape[-1], self.T)

    def norm_args(self):
        """(arguments, types) of the norm's operands x (r) w."""
        names, types = ["%x", "%w"], [self.arg_type(), self.w_type()]
        if self.norm == "add_rms":
            names.append("%r")
            types.append(self.arg_type())
        return names, types

    def emit_norm(self):
        """The rms_norm of a fused case, defining %y."""
        T = self.arg_type()
        if self.norm == "add_rms":
            return ("  %%y, %%ro = norm.rms_norm %%x weight(%%w) residual(%%r) "
                    ": (%s, %s, %s) -> (%s, %s)\n" % (T, self.w_type(), T, T, T))
        return "  %%y = norm.rms_norm %%x weight(%%w) : (%s, %s) -> %s\n" % (
            T, self.w_type(), T)

    def emit_func(self, k):
        if self.norm:
            names, types = self.norm_args()
            args = ", ".join("%s: %s" % a for a in zip(names, types))
        else:
            args = "%%y: %s" % self.arg_type()
        ops = "%y"
        qtypes = self.arg_type()
        if self.form == "nvfp4":
            args += ", %g: tensor<f32>"
            ops += " global_scale(%g)"
            qtypes += ", tensor<f32>"
        attrs = ["group_size = %d : i64" % self.group]
        if self.rounding != "floor":
            attrs.append("scale_rounding = #norm<scale_rounding %s>" %
                         self.rounding)
        if self.layout != "row_major":
            attrs.append("scale_layout = #norm<scale_layout %s>" %
                         self.layout)
        res = "%s, %s" % (self.q_type(), self.s_type())
        text = ("func.func @case_%d(%s) -> (%s) {\n%s"
                "  %%q, %%s = norm.quantize %s {%s} : (%s) -> (%s)\n"
                "  return %%q, %%s : %s\n}\n" % (
                    k, args, res, self.emit_norm() if self.norm else "", ops,
                    ", ".join(attrs), qtypes, res, res))
        if self.norm:
            text += ("func.func @norm_%d(%s) -> %s {\n%s"
                     "  return %%y : %s\n}\n" % (
                         k, ", ".join("%s: %s" % a for a in zip(names, types)),
                         self.arg_type(), self.emit_norm(), self.arg_type()))
        return text


def build_suite(suite):
    if suite not in SUITES:
        raise SystemExit("unknown suite %r (suites: %s)" %
                         (suite, ", ".join(SUITES)))
    T = suite.rsplit("_", 1)[1]
    if suite.startswith("blockscale_fused_"):
        return build_fused_suite(T)
    cases = []
    for form in ("mxfp8", "fp8_1x128", "mxfp4", "nvfp4"):
        roundings = ("floor",) if form == "nvfp4" else ("floor", "up")
        for rounding in roundings:
            cases.append(Case(form, T, (5, 256), rounding=rounding))
            cases.append(Case(form, T, (2, 3, 128), rounding=rounding,
                              dynamic=False))
        cases.append(Case(form, T, (130, 256), layout="swizzled_128x4",
                          rounding=roundings[-1], dynamic=True))
        cases.append(Case(form, T, (3, 384), layout="swizzled_128x4"))
        cases.append(Case(form, T, (7, 512), dynamic=True))
    return cases


def build_fused_suite(T):
    """Each form after rms_norm (and add + rms_norm), both scale layouts,
    static and dynamic rows; rows of 256 and 384 elements (a warp per row,
    so that the norm runs the same kernel shape alone)."""
    cases = []
    for form in ("mxfp8", "fp8_1x128", "mxfp4", "nvfp4"):
        rounding = "floor" if form in ("mxfp8", "nvfp4") else "up"
        cases.append(Case(form, T, (5, 256), rounding=rounding, norm="rms"))
        cases.append(Case(form, T, (6, 384), rounding=rounding,
                          dynamic=True, norm="add_rms"))
        cases.append(Case(form, T, (130, 256), layout="swizzled_128x4",
                          rounding=rounding, dynamic=True, norm="rms"))
        cases.append(Case(form, T, (3, 384), layout="swizzled_128x4",
                          rounding=rounding, norm="add_rms"))
    return cases


# --------------------------------------------------------------------------
# gen
# --------------------------------------------------------------------------


def print_codes(lines, fresh, name, ttype, etype):
    """Prints `name` (a tensor of 8- or 4-bit floats) as codes in f32."""
    bits = "i4" if etype == "f4E2M1FN" else "i8"
    bt = ttype.replace(etype + ">", bits + ">")
    it = ttype.replace(etype + ">", "i32>")
    ft = ttype.replace(etype + ">", "f32>")
    b, e, f, u = fresh(), fresh(), fresh(), fresh()
    lines.append("%s = arith.bitcast %s : %s to %s" % (b, name, ttype, bt))
    lines.append("%s = arith.extui %s : %s to %s" % (e, b, bt, it))
    lines.append("%s = arith.uitofp %s : %s to %s" % (f, e, it, ft))
    lines.append("%s = tensor.cast %s : %s to tensor<*xf32>" % (u, f, ft))
    lines.append("call @printMemrefF32(%s) : (tensor<*xf32>) -> ()" % u)


def print_bits(lines, fresh, name, ttype, etype):
    """Prints `name` (a tensor of f32, f16 or bf16) as the integers of its
    bits (printMemrefI32), so that the check reads the values exactly."""
    it = ttype.replace(etype + ">", "i32>")
    u = fresh()
    if etype == "f32":
        b = fresh()
        lines.append("%s = arith.bitcast %s : %s to %s" % (b, name, ttype, it))
    else:
        ht = ttype.replace(etype + ">", "i16>")
        h, b = fresh(), fresh()
        lines.append("%s = arith.bitcast %s : %s to %s" % (h, name, ttype, ht))
        lines.append("%s = arith.extui %s : %s to %s" % (b, h, ht, it))
    lines.append("%s = tensor.cast %s : %s to tensor<*xi32>" % (u, b, it))
    lines.append("call @printMemrefI32(%s) : (tensor<*xi32>) -> ()" % u)


def constant(lines, fresh, array, static_type, arg_type):
    """An arith.constant of `array`, cast to the argument type."""
    v = fresh()
    lines.append('%s = arith.constant dense<"0x%s"> : %s' % (
        v, np.ascontiguousarray(array).tobytes().hex().upper(), static_type))
    if arg_type != static_type:
        c = fresh()
        lines.append("%s = tensor.cast %s : %s to %s" % (
            c, v, static_type, arg_type))
        v = c
    return v


def gen(suite, out_mlir, out_npz):
    cases = build_suite(suite)
    counter = [0]

    def fresh():
        counter[0] += 1
        return "%%v%d" % counter[0]

    funcs, body, refs, descs = [], [], {}, []
    for k, case in enumerate(cases):
        rng = np.random.default_rng([SEED, zlib.crc32(suite.encode()), k])
        case.fill(rng)
        funcs.append(case.emit_func(k))
        y = constant(body, fresh, case.y, case.static_type(),
                     case.arg_type())
        args, types = [y], [case.arg_type()]
        if case.norm:
            # x is the case's input; w (and r) follow it.
            args.append(constant(body, fresh, case.w, case.w_type(),
                                 case.w_type()))
            types.append(case.w_type())
            if case.norm == "add_rms":
                args.append(constant(body, fresh, case.r,
                                     case.static_type(), case.arg_type()))
                types.append(case.arg_type())
            ny = fresh()
            body.append("%s = call @norm_%d(%s) : (%s) -> %s" % (
                ny, k, ", ".join(args), ", ".join(types), case.arg_type()))
            print_bits(body, fresh, ny, case.arg_type(), case.T)
        if case.form == "nvfp4":
            g = fresh()
            body.append("%s = arith.constant dense<%s> : tensor<f32>" % (
                g, np.format_float_scientific(case.g, unique=True)))
            args.append(g)
            types.append("tensor<f32>")
        q, s = fresh(), fresh()
        body.append("%s, %s = call @case_%d(%s) : (%s) -> (%s, %s)" % (
            q, s, k, ", ".join(args), ", ".join(types), case.q_type(),
            case.s_type()))
        print_codes(body, fresh, q, case.q_type(), case.qtype)
        print_codes(body, fresh, s, case.s_type(), case.stype)
        if case.norm:
            # The reference comes from the printed y (`check`).
            refs["g_%d" % k] = np.float32(case.g)
            refs["form_%d" % k] = np.array(case.form)
            refs["rounding_%d" % k] = np.array(case.rounding)
            refs["layout_%d" % k] = np.array(case.layout)
            refs["shape_%d" % k] = np.array(case.shape)
            refs["T_%d" % k] = np.array(case.T)
        else:
            rq, rs = case.reference()
            refs["q_%d" % k] = rq
            refs["s_%d" % k] = rs
        refs["qtype_%d" % k] = np.array(case.qtype)
        refs["stype_%d" % k] = np.array(case.stype)
        descs.append(case.describe())
    refs["descs"] = np.array(descs)
    with open(out_mlir, "w") as f:
        f.write("// Generated by blockscale_exec.py gen %s (seed %d): %d "
                "cases.\n" % (suite, SEED, len(cases)))
        f.write("module {\n")
        f.write("func.func private @printMemrefF32(tensor<*xf32>) "
                "attributes {llvm.emit_c_interface}\n")
        f.write("func.func private @printMemrefI32(tensor<*xi32>) "
                "attributes {llvm.emit_c_interface}\n")
        for fn in funcs:
            f.write(fn)
        f.write("func.func @main() {\n")
        for line in body:
            f.write("  " + line + "\n")
        f.write("  return\n}\n}\n")
    np.savez(out_npz, **refs)


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------

_NUMBER = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)")


def parse_output(text):
    """The printed memrefs, as flat float arrays, in order."""
    arrays = []
    for chunk in text.split("Unranked Memref")[1:]:
        data = chunk.split("data =", 1)[1]
        arrays.append(np.array([float(v) for v in _NUMBER.findall(data)]))
    return arrays


def same_codes(got, ref, etype):
    got = got.astype(np.int64).reshape(-1)
    ref = np.asarray(ref).astype(np.int64).reshape(-1)
    if got.shape != ref.shape:
        return False, "%d codes, expected %d" % (got.size, ref.size)
    equal = got == ref
    if etype == "f8E4M3FN":
        # Every NaN encoding (0x7F, 0xFF) is as good as another.
        equal |= ((got & 0x7F) == 0x7F) & ((ref & 0x7F) == 0x7F)
    if equal.all():
        return True, ""
    i = int(np.flatnonzero(~equal)[0])
    return False, "%d mismatches, first at %d: 0x%02X, expected 0x%02X" % (
        int((~equal).sum()), i, got[i], ref[i])


def fused_reference(refs, k, bits):
    """q and the scales of a fused case, from the y its norm printed."""
    T = str(refs["T_%d" % k])
    shape = tuple(int(d) for d in refs["shape_%d" % k])
    case = Case(str(refs["form_%d" % k]), T, shape,
                layout=str(refs["layout_%d" % k]),
                rounding=str(refs["rounding_%d" % k]))
    case.g = np.float32(refs["g_%d" % k])
    raw = bits.astype(np.int64).astype(np.uint32)
    if T == "f32":
        y = raw.view(np.float32)
    else:
        y = raw.astype(np.uint16).view(np_dtype(T))
    if y.size != int(np.prod(shape)):
        raise ValueError("%d values of y, expected %d" % (
            y.size, int(np.prod(shape))))
    return case.reference(y.reshape(shape))


def check(ref_npz, output):
    refs = np.load(ref_npz)
    descs = list(refs["descs"])
    with open(output) as f:
        arrays = parse_output(f.read())
    failed = 0
    at = 0
    for k, desc in enumerate(descs):
        problems = []
        fused = ("form_%d" % k) in refs.files
        count = 3 if fused else 2
        if at + count > len(arrays):
            problems.append("no output")
        else:
            printed = arrays[at:at + count]
            if fused:
                try:
                    rq, rs = fused_reference(refs, k, printed[0])
                except ValueError as e:
                    rq = rs = None
                    problems.append("y: %s" % e)
                printed = printed[1:]
            else:
                rq, rs = refs["q_%d" % k], refs["s_%d" % k]
            for name, got, ref, etype in (
                    ("q", printed[0], rq, str(refs["qtype_%d" % k])),
                    ("scales", printed[1], rs, str(refs["stype_%d" % k]))):
                if ref is None:
                    continue
                ok, why = same_codes(got, ref, etype)
                if not ok:
                    problems.append("%s: %s" % (name, why))
        at += count
        if problems:
            failed += 1
            print("FAIL: case_%d: %s; %s" % (k, desc, "; ".join(problems)))
        else:
            print("PASS: case_%d: %s;" % (k, desc))
    if failed:
        print("%d of %d cases failed" % (failed, len(descs)))
        return 1
    print("all %d cases passed" % len(descs))
    return 0


def names(suite):
    lines = []
    for k, case in enumerate(build_suite(suite)):
        prefix = "CHECK:     " if k == 0 else "CHECK-NEXT:"
        lines.append("%s PASS: case_%d: %s;" % (prefix, k, case.describe()))
    lines.append("CHECK-NEXT: all %d cases passed" % len(build_suite(suite)))
    return lines


def main(argv):
    if len(argv) >= 2 and argv[1] == "names" and len(argv) == 3:
        print("\n".join(names(argv[2])))
        return 0
    if len(argv) >= 5 and argv[1] == "gen":
        expect = [a.split("=", 1)[1] for a in argv[5:]
                  if a.startswith("--expect-cases=")]
        gen(argv[2], argv[3], argv[4])
        if expect:
            with open(expect[0]) as f:
                listed = [l.rstrip() for l in f if l.startswith("CHECK")]
            if listed != names(argv[2]):
                raise SystemExit("%s does not list the cases of %s: run "
                                 "`blockscale_exec.py names %s`" %
                                 (expect[0], argv[2], argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
