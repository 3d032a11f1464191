"""The block-scaled forms of norm.quantize (MXFP8, MXFP4, FP8 1x128, NVFP4;
row-major and swizzled_128x4 scales) through norm-cpu-pipeline against the
bit-exact reference of test/tools/blockscale.py: f32, bf16 and f16 inputs,
static and dynamic rows, both CPU lowerings, random rows over a wide range
of magnitudes and edge groups (all zero, NaN, +-inf, -0, every e2m1 and
e4m3 tie at the group's scale, saturating values, subnormal inputs).

The functions return the codes as i8 (q unpacked, one code per element),
so that the test sees exactly the bits the lowering computed."""

import ml_dtypes
import numpy as np
import pytest

import blockscale
import norm_mlir

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
