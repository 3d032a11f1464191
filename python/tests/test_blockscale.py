"""The block-scaled forms of norm.quantize (MXFP8, MXFP4, FP8 1x128, NVFP4;
row-major and swizzled_128x4 scales) through norm-cpu-pipeline against the
bit-exact reference of test/tools/blockscale.py: f32, bf16 and f16 inputs,
static and dynamic rows, both CPU lowerings, random rows over a wide range
of magnitudes and edge groups (all zero, NaN, +-inf, -0, every e2m1 and
e4m3 tie at the group's scale, saturating values, subnormal inputs).

The functions return the codes as i8 (q unpacked, one code per element),
so that the test sees exactly the bits the lowering computed.

Fused after a norm (test_fused: rms_norm with a weight, and with a
residual; norm-lower-cpu builds one row loop from x to q and the scales):
the reference quantizes the norm's y rounded to its element type
(normref.reference), as test/Integration/CPU/quant_exec.py does. y may
differ from that reference by an ulp of its type (its bound,
normref.BOUNDS), which moves a group's amax and thus its scale and every
element; so each module also returns the lowering's own y (the norm alone,
same lowering), which must be within the bound of the reference, and a
group whose y values are not all the reference's bits is checked against
the quantization of the lowering's y instead. Every q and scale is exact."""

import ml_dtypes
import numpy as np
import pytest

import blockscale
import norm_mlir
import normref

TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}

# (name, q element type, scales element type, group size)
FORMS = {
    "mxfp8": ("f8E4M3FN", "f8E8M0FNU", 32),
    "fp8_1x128": ("f8E4M3FN", "f8E8M0FNU", 128),
    "mxfp4": ("f4E2M1FN", "f8E8M0FNU", 32),
    "nvfp4": ("f4E2M1FN", "f8E4M3FN", 16),
}


def module_source(form, dtype, rows, n, rounding, layout, name="quant"):
    qtype, stype, group = FORMS[form]
    m = "?" if rows is None else str(rows)
    k = n // group
    if layout == "swizzled_128x4":
        count = "?" if rows is None else str(
            blockscale.swizzled_size(rows, k))
        scales = f"tensor<{count}x{stype}>"
        scales_i8 = f"tensor<{count}xi8>"
    else:
        scales = f"tensor<{m}x{k}x{stype}>"
        scales_i8 = f"tensor<{m}x{k}xi8>"
    attrs = [f"group_size = {group} : i64"]
    if rounding != "floor":
        attrs.append(f"scale_rounding = #norm<scale_rounding {rounding}>")
    if layout != "row_major":
        attrs.append(f"scale_layout = #norm<scale_layout {layout}>")
    y = f"tensor<{m}x{n}x{dtype}>"
    q = f"tensor<{m}x{n}x{qtype}>"
    q_i8 = f"tensor<{m}x{n}xi8>"
    args = f"%y: {y}"
    operands = f"({y})"
    global_scale = ""
    if form == "nvfp4":
        args += ", %g: tensor<f32>"
        operands = f"({y}, tensor<f32>)"
        global_scale = " global_scale(%g)"
    if qtype == "f4E2M1FN":
        q_codes = f"""%q4 = arith.bitcast %q : {q} to tensor<{m}x{n}xi4>
  %qc = arith.extui %q4 : tensor<{m}x{n}xi4> to {q_i8}"""
    else:
        q_codes = f"%qc = arith.bitcast %q : {q} to {q_i8}"
    return f"""
func.func @{name}({args}) -> ({q_i8}, {scales_i8}) {{
  %q, %s = norm.quantize %y{global_scale} {{{", ".join(attrs)}}}
      : {operands} -> ({q}, {scales})
  {q_codes}
  %sc = arith.bitcast %s : {scales} to {scales_i8}
  return %qc, %sc : {q_i8}, {scales_i8}
}}"""


def edge_groups(qtype, group, rng):
    """Groups of one row each that hit the edge cases at several scales."""
    qmax = blockscale.QMAX[qtype]
    table = (blockscale.e2m1_values(np.arange(8, dtype=np.uint8))
             if qtype == "f4E2M1FN" else
             blockscale.e4m3_values(np.arange(127, dtype=np.uint8)))
    table = np.unique(table.astype(np.float64))
    ties = (table[1:] + table[:-1]) / 2
    groups = []
    for exponent in (-130, -20, -3, 0, 5, 40, 120):
        unit = 2.0 ** exponent
        # amax = QMAX * 2^e: the ties of every step, scaled, both signs.
        values = np.concatenate([ties, -ties, [qmax, -0.0]]) * unit
        groups.append(values)
        # Just above a power-of-two boundary of amax (floor vs up differ).
        groups.append(np.concatenate([[qmax * 1.0001 * unit],
                                      ties * unit * 0.999]))
    groups += [
        np.zeros(group), -np.zeros(group),
        np.array([np.nan, 1.0, -2.0]), np.array([1.0, np.inf, -3.0]),
        np.array([-np.inf, 0.5, 2.0]), np.array([1e-45, -1e-45, 3e-39]),
        np.array([3.0e38, -3.4e38, 1.0]), np.array([65504.0, -1.0, 0.25]),
    ]
    rows = []
    for values in groups:
        row = np.resize(np.asarray(values, dtype=np.float64), group)
        rng.shuffle(row)
        rows.append(row)
    return np.array(rows)


def make_input(form, dtype, rows, n, rng):
    qtype, _, group = FORMS[form]
    y = rng.standard_normal((rows, n))
    # Rows over a wide range of magnitudes (every scale exponent region).
    y *= 2.0 ** rng.integers(-40, 40, size=(rows, 1))
    edges = edge_groups(qtype, group, rng).reshape(-1)
    flat = y.reshape(-1)
    flat[:min(edges.size, flat.size)] = edges[:flat.size]
    with np.errstate(over="ignore"):
        return flat.reshape(rows, n).astype(TYPES[dtype])


def reference(form, y, rounding, layout, g):
    qtype, _, group = FORMS[form]
    if form == "nvfp4":
        q, s = blockscale.quantize_nvfp4(y, g, group)
    else:
        q, s = blockscale.quantize_mx(y, qtype, group, rounding)
    if layout == "swizzled_128x4":
        s = blockscale.swizzle_scales(s)
    return q, s


def check(form, got_q, got_s, want_q, want_s):
    qtype = FORMS[form][0]
    got_q = np.asarray(got_q).view(np.uint8).reshape(want_q.shape)
    got_s = np.asarray(got_s).view(np.uint8).reshape(want_s.shape)
    if qtype == "f8E4M3FN":
        # Any NaN encoding of e4m3 is a NaN.
        nan_got = (got_q & 0x7F) == 0x7F
        nan_want = (want_q & 0x7F) == 0x7F
        assert np.array_equal(nan_got, nan_want)
        got_q = np.where(nan_got, 0x7F, got_q)
        want_q = np.where(nan_want, 0x7F, want_q)
    bad = np.argwhere(got_q != want_q)
    assert bad.size == 0, "q differs at %s: got %#x, want %#x" % (
        bad[0], got_q[tuple(bad[0])], want_q[tuple(bad[0])])
    bad = np.argwhere(got_s != want_s)
    assert bad.size == 0, "scales differ at %s: got %#x, want %#x" % (
        bad[0], got_s[tuple(bad[0])], want_s[tuple(bad[0])])


CASES = [
    # form, rounding, layout
    ("mxfp8", "floor", "row_major"),
    ("mxfp8", "up", "swizzled_128x4"),
    ("fp8_1x128", "up", "row_major"),
    ("fp8_1x128", "floor", "swizzled_128x4"),
    ("mxfp4", "floor", "row_major"),
    ("mxfp4", "up", "row_major"),
    ("mxfp4", "floor", "swizzled_128x4"),
    ("nvfp4", "floor", "row_major"),
    ("nvfp4", "floor", "swizzled_128x4"),
]


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("form,rounding,layout", CASES)
def test_block_scaled(form, rounding, layout, dtype, lowering, rng):
    n = 256
    rows = 45
    y = make_input(form, dtype, rows, n, rng)
    g = np.float32(448.0 * 6.0 / 7.5) if form == "nvfp4" else None
    want_q, want_s = reference(form, y, rounding, layout, g)
    # Static rows (@quant_s) and dynamic rows (@quant_d) in one module.
    module = norm_mlir.jit(
        module_source(form, dtype, rows, n, rounding, layout, "quant_s") +
        module_source(form, dtype, None, n, rounding, layout, "quant_d"),
        pipeline=f"norm-cpu-pipeline{{lowering={lowering}}}")
    args = (y,) if g is None else (y, np.array(g, dtype=np.float32))
    for name in ("quant_s", "quant_d"):
        got_q, got_s = getattr(module, name)(*args)
        check(form, got_q, got_s, want_q, want_s)


@pytest.mark.parametrize("g", [1.0, 448.0 * 6.0 / 3.0e-3, 1e-30, 0.0,
                               -2.0, np.inf, np.nan])
def test_nvfp4_global_scales(g, rng):
    """NVFP4 with global scales that push sf to saturation, to zero and to
    NaN."""
    y = make_input("nvfp4", "f32", 8, 64, rng)
    g = np.float32(g)
    want_q, want_s = reference("nvfp4", y, "floor", "row_major", g)
    module = norm_mlir.jit(module_source("nvfp4", "f32", 8, 64, "floor",
                                         "row_major"),
                           pipeline="norm-cpu-pipeline")
    got_q, got_s = module.quant(y, np.array(g, dtype=np.float32))
    check("nvfp4", got_q, got_s, want_q, want_s)


def test_rank3_and_one_row(rng):
    """Leading dims are flattened into the swizzled rows; one row pads to
    128."""
    y = rng.standard_normal((3, 5, 64)).astype(np.float32)
    want_q, want_s = blockscale.quantize_mx(y, "f4E2M1FN", 32, "up")
    want_s = blockscale.swizzle_scales(want_s)
    src = f"""
func.func @quant(%y: tensor<3x5x64xf32>) -> (tensor<3x5x64xi8>, tensor<{want_s.size}xi8>) {{
  %q, %s = norm.quantize %y {{group_size = 32 : i64, scale_rounding = #norm<scale_rounding up>, scale_layout = #norm<scale_layout swizzled_128x4>}}
      : (tensor<3x5x64xf32>) -> (tensor<3x5x64xf4E2M1FN>, tensor<{want_s.size}xf8E8M0FNU>)
  %q4 = arith.bitcast %q : tensor<3x5x64xf4E2M1FN> to tensor<3x5x64xi4>
  %qc = arith.extui %q4 : tensor<3x5x64xi4> to tensor<3x5x64xi8>
  %sc = arith.bitcast %s : tensor<{want_s.size}xf8E8M0FNU> to tensor<{want_s.size}xi8>
  return %qc, %sc : tensor<3x5x64xi8>, tensor<{want_s.size}xi8>
}}"""
    for lowering in ("direct", "linalg"):
        module = norm_mlir.jit(
            src, pipeline=f"norm-cpu-pipeline{{lowering={lowering}}}")
        got_q, got_s = module.quant(y)
        check("mxfp4", got_q, got_s, want_q, want_s)


def test_packed_boundary(rng):
    """f4E2M1FN results and arguments cross the function boundary packed
    (uint8, the last dim halved, element 2k in the low nibble), the E8M0
    scales as ml_dtypes.float8_e8m0fnu; the signature says so."""
    y = rng.standard_normal((6, 64)).astype(np.float32)
    src = """
func.func @quant(%y: tensor<?x64xf32>) -> (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>) {
  %q, %s = norm.quantize %y {group_size = 32 : i64}
      : (tensor<?x64xf32>) -> (tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>)
  return %q, %s : tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>
}
func.func @codes(%q: tensor<3x64xf4E2M1FN>) -> tensor<3x64xi8> {
  %c = arith.bitcast %q : tensor<3x64xf4E2M1FN> to tensor<3x64xi4>
  %e = arith.extui %c : tensor<3x64xi4> to tensor<3x64xi8>
  return %e : tensor<3x64xi8>
}"""
    want_q, want_s = blockscale.quantize_mx(y, "f4E2M1FN", 32)
    for lowering in ("direct", "linalg"):
        module = norm_mlir.jit(
            src, pipeline=f"norm-cpu-pipeline{{lowering={lowering}}}")
        assert module.signature("quant") == (
            (("tensor", "f32", (None, 64)),),
            (("tensor", "f4E2M1FN", (None, 32)),
             ("tensor", "f8E8M0FNU", (None, 2))))
        q, s = module.quant(y)
        assert q.dtype == np.uint8 and q.shape == (6, 32)
        assert s.dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
        assert np.array_equal(q, blockscale.pack_fp4(want_q))
        assert np.array_equal(s.view(np.uint8), want_s)
        # Dequantized, as docs/Numerics.md shows.
        values = blockscale.e2m1_values(blockscale.unpack_fp4(q))
        scales = s.astype(np.float32)
        dequantized = values.reshape(6, 2, 32) * scales[..., None]
        assert np.allclose(dequantized.reshape(6, 64), y, rtol=0.25,
                           atol=0.1 * np.abs(y).max())
        # Packed arguments: three rows of the packed q back to codes.
        codes = module.codes(np.ascontiguousarray(q[:3]))
        assert np.array_equal(codes.view(np.uint8), want_q[:3])


#===----------------------------------------------------------------------===#
# Fused after rms_norm
#===----------------------------------------------------------------------===#

# The lowerings of the fused tests: the direct row loops at both vector
# widths (256: the AVX2 path; 512: AVX-512's, for one input type per form),
# and the linalg decomposition (unfused). test_fused_threads takes the
# host's width.
PIPELINES = {
    "direct-256": "norm-cpu-pipeline{lowering=direct vector-width=256}",
    "direct-512": "norm-cpu-pipeline{lowering=direct vector-width=512}",
    "linalg": "norm-cpu-pipeline{lowering=linalg}",
}

# Per form: the row length (not a multiple of 64 columns, except 1x128's:
# the rows end with a chunk of fewer groups than a vector holds), and the
# (scale_rounding, scale_layout) of each input type, in TYPES order.
FUSED = {
    "mxfp8": (288, [("floor", "row_major"), ("up", "swizzled_128x4"),
                    ("up", "row_major")]),
    "fp8_1x128": (384, [("up", "swizzled_128x4"), ("floor", "row_major"),
                        ("floor", "swizzled_128x4")]),
    "mxfp4": (288, [("up", "row_major"), ("floor", "swizzled_128x4"),
                    ("floor", "row_major")]),
    "nvfp4": (304, [("floor", "swizzled_128x4"), ("floor", "row_major"),
                    ("floor", "swizzled_128x4")]),
}
FUSED_ROWS = 37
NVFP4_GLOBAL_SCALE = np.float32(448.0 * 6.0 / 7.5)


def fused_source(form, dtype, rows, n, rounding, layout):
    """@rms_{s,d} (rms_norm with a weight, then norm.quantize), @add_{s,d}
    (the same with a residual, also returning residual_out), with static
    (s) and dynamic (d) rows, and @y_rms, @y_add: the norms alone (dynamic
    rows). q and the scales are returned as they are (f4E2M1FN packed)."""
    qtype, stype, group = FORMS[form]
    k = n // group
    attrs = [f"group_size = {group} : i64"]
    if rounding != "floor":
        attrs.append(f"scale_rounding = #norm<scale_rounding {rounding}>")
    if layout != "row_major":
        attrs.append(f"scale_layout = #norm<scale_layout {layout}>")
    attrs = ", ".join(attrs)
    nvfp4 = form == "nvfp4"
    w = f"tensor<{n}x{dtype}>"
    funcs = []
    for name, count in (("s", rows), ("d", None)):
        m = "?" if count is None else str(count)
        x = f"tensor<{m}x{n}x{dtype}>"
        q = f"tensor<{m}x{n}x{qtype}>"
        if layout == "swizzled_128x4":
            size = "?" if count is None else blockscale.swizzled_size(count,
                                                                      k)
            scales = f"tensor<{size}x{stype}>"
        else:
            scales = f"tensor<{m}x{k}x{stype}>"
        g_arg = ", %g: tensor<f32>" if nvfp4 else ""
        g_use = " global_scale(%g)" if nvfp4 else ""
        g_type = ", tensor<f32>" if nvfp4 else ""
        funcs.append(f"""
func.func @rms_{name}(%x: {x}, %w: {w}{g_arg}) -> ({q}, {scales}) {{
  %y = norm.rms_norm %x weight(%w) : ({x}, {w}) -> {x}
  %q, %s = norm.quantize %y{g_use} {{{attrs}}}
      : ({x}{g_type}) -> ({q}, {scales})
  return %q, %s : {q}, {scales}
}}
func.func @add_{name}(%x: {x}, %w: {w}, %r: {x}{g_arg}) -> ({q}, {scales}, {x}) {{
  %y, %sum = norm.rms_norm %x weight(%w) residual(%r)
      : ({x}, {w}, {x}) -> ({x}, {x})
  %q, %s = norm.quantize %y{g_use} {{{attrs}}}
      : ({x}{g_type}) -> ({q}, {scales})
  return %q, %s, %sum : {q}, {scales}, {x}
}}""")
    x = f"tensor<?x{n}x{dtype}>"
    funcs.append(f"""
func.func @y_rms(%x: {x}, %w: {w}) -> {x} {{
  %y = norm.rms_norm %x weight(%w) : ({x}, {w}) -> {x}
  return %y : {x}
}}
func.func @y_add(%x: {x}, %w: {w}, %r: {x}) -> {x} {{
  %y, %sum = norm.rms_norm %x weight(%w) residual(%r)
      : ({x}, {w}, {x}) -> ({x}, {x})
  return %y : {x}
}}""")
    return "".join(funcs)


def make_norm_inputs(dtype, rows, n, rng):
    """x, residual and weight of an rms_norm: rows of random magnitudes, a
    weight whose magnitude changes every 16 columns over (nearly) the whole
    range of the type, so that the groups' scales do; an all-zero row, a
    row with a NaN and one with an infinity; a group of zero weights."""
    T = TYPES[dtype]
    low, high = (-20, 12) if dtype == "f16" else (-135, 110)
    x = rng.standard_normal((rows, n)) * 2.0 ** rng.integers(
        -12, 12, size=(rows, 1))
    r = rng.standard_normal((rows, n)) * 2.0 ** rng.integers(
        -12, 12, size=(rows, 1))
    w = rng.standard_normal(n) * np.repeat(
        2.0 ** rng.integers(low, high, size=n // 16), 16)
    if rows >= 3:
        x[0] = 0.0
        r[0] = 0.0
        x[1, 5] = np.nan
        x[2, 7] = np.inf
    w[16:32] = 0.0
    with np.errstate(over="ignore"):
        return x.astype(T), r.astype(T), w.astype(T)


def same_bits(a, b):
    """Per element: the same encoding, or both NaN."""
    a, b = np.asarray(a), np.asarray(b)
    bits = np.dtype("u%d" % a.dtype.itemsize)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
    return (a.view(bits) == b.view(bits)) | nan


def fused_reference(form, y_ref, y_low, rounding, layout, g):
    """(q codes, scale codes, groups taken from y_low): the quantization of
    y_ref, except in the groups where y_low (the lowering's y) is not
    y_ref's bits, which take y_low's quantization."""
    _, _, group = FORMS[form]
    want_q, want_s = reference(form, y_ref, rounding, "row_major", g)
    low_q, low_s = reference(form, y_low, rounding, "row_major", g)
    rows, n = y_ref.shape
    moved = ~same_bits(y_ref, y_low).reshape(rows, n // group, group).all(-1)
    want_q = want_q.reshape(rows, n // group, group)
    want_q[moved] = low_q.reshape(rows, n // group, group)[moved]
    want_s[moved] = low_s[moved]
    if layout == "swizzled_128x4":
        want_s = blockscale.swizzle_scales(want_s)
    return want_q.reshape(rows, n), want_s, moved


def check_fused(form, got_q, got_s, want_q, want_s):
    """check() on results returned as they are (f4E2M1FN packed)."""
    got_q = np.asarray(got_q)
    if FORMS[form][0] == "f4E2M1FN":
        got_q = blockscale.unpack_fp4(got_q.view(np.uint8))
    check(form, got_q.view(np.uint8), np.asarray(got_s).view(np.uint8),
          want_q, want_s)


def run_fused(form, dtype, pipeline, rounding, layout, rows, rng):
    """Compiles fused_source with `pipeline` and checks every function."""
    n = FUSED[form][0]
    T = TYPES[dtype]
    module = norm_mlir.jit(fused_source(form, dtype, rows, n, rounding,
                                        layout), pipeline=pipeline)
    x, r, w = make_norm_inputs(dtype, rows, n, rng)
    g = NVFP4_GLOBAL_SCALE if form == "nvfp4" else None
    g_args = () if g is None else (np.array(g, dtype=np.float32),)
    bound = normref.BOUNDS[dtype]
    for norm, residual in (("rms", None), ("add", r)):
        operands = (x, w) if residual is None else (x, w, residual)
        y_ref, sum_ref = normref.rms_norm(x, 1, weight=w, residual=residual)
        y_ref = y_ref.astype(T)
        y_low = getattr(module, "y_" + norm)(*operands)
        err, why = normref.compare(y_low, y_ref)
        assert normref.within(err, bound), f"{norm}: y {err:.3g}: {why}"
        # Most of y is the reference's bits (f32: about 60%, its
        # normalization rounds twice; f16, bf16: nearly all of the normal
        # values: AVX-512 BF16's vcvtneps2bf16 flushes subnormals to zero,
        # within the bound, and the weights here reach bf16's subnormals).
        normal = ~(np.abs(y_ref.astype(np.float64)) <
                   float(ml_dtypes.finfo(T).smallest_normal))
        same = same_bits(y_ref, y_low)[normal].mean()
        assert same > (0.4 if dtype == "f32" else 0.99), same
        want_q, want_s, _ = fused_reference(form, y_ref, y_low, rounding,
                                            layout, g)
        for name in ("s", "d"):
            results = getattr(module, f"{norm}_{name}")(*operands, *g_args)
            check_fused(form, results[0], results[1], want_q, want_s)
            if residual is not None:
                err, why = normref.compare(results[2], sum_ref)
                assert normref.within(err, bound), f"residual_out: {why}"


def fused_cases():
    """(form, dtype, lowering): every form and type with "direct-256" and
    "linalg", and "direct-512" with one type per form (every type
    appearing; 512-bit vectors are slow to compile for an AVX2 host)."""
    types = list(TYPES)
    cases = []
    for i, form in enumerate(FUSED):
        for dtype in types:
            cases += [(form, dtype, "direct-256"), (form, dtype, "linalg")]
        cases.append((form, types[i % 3], "direct-512"))
    return cases


@pytest.mark.parametrize("form,dtype,lowering", fused_cases())
def test_fused(form, dtype, lowering, rng):
    rounding, layout = FUSED[form][1][list(TYPES).index(dtype)]
    run_fused(form, dtype, PIPELINES[lowering], rounding, layout, FUSED_ROWS,
              rng)


def test_fused_one_row(rng):
    """A single row (decode): no row loop, the swizzled scales one row of a
    zero-filled tile."""
    run_fused("nvfp4", "bf16", "norm-cpu-pipeline{lowering=direct}", "floor",
              "swizzled_128x4", 1, rng)


def test_fused_threads(rng):
    """Rows spread over two threads (enough of them for the parallel loop,
    statically and at run time): 600 rows, five tiles of swizzled scales."""
    run_fused("mxfp4", "bf16", "norm-cpu-pipeline{lowering=direct threads=2}",
              "up", "swizzled_128x4", 600, rng)
