"""Constant folding of the block-scaled forms of norm.quantize (MXFP8, FP8
1x128, MXFP4, NVFP4; both scale roundings, both scale layouts) by
`canonicalize`, against the bit-exact reference of test/tools/blockscale.py:
random groups over a wide range of magnitudes and edge groups (all zero,
-0, NaN, +-inf, every e2m1 and e4m3 tie at the group's scale, amax just
above a power-of-two boundary, subnormal inputs), f32, bf16 and f16 inputs.

MLIR 22 prints dense f8E4M3FN, f4E2M1FN and f8E8M0FNU attributes of up to
100 elements as decimal floats (e.g. 5.877470e-39 for the E8M0 2^-127, -0.0
as -0.000000e+00) with NaN as its hex bit pattern (0x7F, 0xFF), and larger
ones as a hex blob of one byte per element (an f4E2M1FN code in the low
nibble); the test reads the codes back from either form."""

import re

import ml_dtypes
import numpy as np
import pytest

import blockscale
import norm_mlir

TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}

# form: (q element type, scales element type, group size)
FORMS = {
    "mxfp8": ("f8E4M3FN", "f8E8M0FNU", 32),
    "fp8_1x128": ("f8E4M3FN", "f8E8M0FNU", 128),
    "mxfp4": ("f4E2M1FN", "f8E8M0FNU", 32),
    "nvfp4": ("f4E2M1FN", "f8E4M3FN", 16),
}


def dense_hex(y):
    """`dense<"0x...">` of the array y: its raw little-endian bytes, every
    element exact."""
    return 'dense<"0x%s">' % np.ascontiguousarray(y).tobytes().hex().upper()


def module_source(form, y, dtype, rounding, layout, g):
    qtype, stype, group = FORMS[form]
    shape = "x".join(str(d) for d in y.shape)
    rows = int(np.prod(y.shape[:-1]))
    k = y.shape[-1] // group
    if layout == "swizzled_128x4":
        scales = f"tensor<{blockscale.swizzled_size(rows, k)}x{stype}>"
    else:
        scales = "tensor<%sx%dx%s>" % ("x".join(str(d) for d in y.shape[:-1]),
                                       k, stype)
    attrs = [f"group_size = {group} : i64"]
    if rounding != "floor":
        attrs.append(f"scale_rounding = #norm<scale_rounding {rounding}>")
    if layout != "row_major":
        attrs.append(f"scale_layout = #norm<scale_layout {layout}>")
    ytype = f"tensor<{shape}x{dtype}>"
    qtype = f"tensor<{shape}x{qtype}>"
    gdef, goperand, gtype = "", "", ""
    if g is not None:
        gdef = "%%g = arith.constant dense<0x%08X> : tensor<f32>" % (
            np.float32(g).view(np.uint32))
        goperand, gtype = " global_scale(%g)", ", tensor<f32>"
    return f"""
func.func @quant() -> ({qtype}, {scales}) {{
  %y = arith.constant {dense_hex(y)} : {ytype}
  {gdef}
  %q, %s = norm.quantize %y{goperand} {{{", ".join(attrs)}}}
      : ({ytype}{gtype}) -> ({qtype}, {scales})
  return %q, %s : {qtype}, {scales}
}}"""


def codes_of(text, element_type):
    """The codes of the elements of a printed dense attribute body (nested
    lists or a splat) of f8E4M3FN, f4E2M1FN or f8E8M0FNU, or of its hex
    form (one byte per element)."""
    if text.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(text[3:-1]), dtype=np.uint8)
    tokens = text.replace("[", " ").replace("]", " ").replace(",", " ")
    codes = []
    for token in tokens.split():
        if token.startswith("0x"):
            codes.append(int(token, 16))
            continue
        value = float(token)
        if element_type == "f8E8M0FNU":
            codes.append(int(round(np.log2(value))) + 127)
            continue
        if element_type == "f8E4M3FN":
            mags, sign = blockscale.E4M3_MAGNITUDES, 0x80
        else:
            mags, sign = blockscale.E2M1_MAGNITUDES, 0x8
        code = int(np.argmin(np.abs(mags - abs(value))))
        assert mags[code] == 0 or abs(mags[code] - abs(value)) <= (
            1e-5 * mags[code]), token
        codes.append(code | (sign if np.signbit(value) else 0))
    return np.array(codes, dtype=np.uint8)


def folded_constants(source):
    """{type string: codes} of the constants of the canonicalized source;
    fails if a norm.quantize is left."""
    text = norm_mlir.compile(source, "canonicalize")
    assert "norm.quantize" not in text, text
    constants = {}
    for body, ttype in re.findall(
            r"arith\.constant dense<(.*?)> : (tensor<[^>]*>)", text):
        element = ttype[:-1].split("x")[-1]
        codes = codes_of(body, element)
        size = int(np.prod([int(d) for d in ttype[7:-1].split("x")[:-1]]))
        if codes.size == 1:
            codes = np.full(size, codes[0], dtype=np.uint8)
        assert codes.size == size, ttype
        constants[ttype] = codes
    return constants


def edge_groups(qtype, group):
    """One group per row that hits the edge cases at several scales."""
    qmax = blockscale.QMAX[qtype]
    table = (blockscale.E2M1_MAGNITUDES if qtype == "f4E2M1FN" else
             blockscale.E4M3_MAGNITUDES)
    ties = (table[1:] + table[:-1]) / 2
    groups = []
    for exponent in (-135, -126, -20, 0, 7, 100, 120):
        unit = 2.0 ** exponent
        groups.append(np.concatenate([ties, -ties, [qmax, -0.0]]) * unit)
        # Just above a power-of-two boundary of amax: floor and up differ.
        groups.append(np.concatenate([[qmax * 1.0001 * unit],
                                      ties * unit * 0.999]))
    groups += [
        np.zeros(group), -np.zeros(group),
        np.array([np.nan, 1.0, -2.0]), np.array([1.0, np.inf, -3.0]),
        np.array([-np.inf, 0.5, 2.0]), np.array([1e-45, -1e-45, 3e-39]),
        np.array([3.0e38, -3.4e38, 1.0]), np.array([65504.0, -1.0, 0.25]),
    ]
    return [np.resize(np.asarray(v, dtype=np.float64), group) for v in groups]


def make_input(form, dtype, shape, rng):
    qtype, _, group = FORMS[form]
    y = rng.standard_normal(shape)
    flat = y.reshape(-1, group)
    # Groups over a wide range of magnitudes.
    flat *= 2.0 ** rng.integers(-45, 45, size=(flat.shape[0], 1))
    edges = edge_groups(qtype, group)
    rows = rng.choice(flat.shape[0], size=min(len(edges), flat.shape[0]),
                      replace=False)
    for row, values in zip(rows, edges):
        flat[row] = rng.permutation(values)
    with np.errstate(over="ignore"):
        return flat.reshape(shape).astype(TYPES[dtype])


CASES = [
    # form, rounding, layout, shape
    ("mxfp8", "floor", "row_major", (8, 256)),
    ("mxfp8", "up", "row_major", (2, 4, 256)),
    ("mxfp8", "up", "swizzled_128x4", (40, 64)),
    ("fp8_1x128", "up", "row_major", (12, 256)),
    ("fp8_1x128", "floor", "swizzled_128x4", (31, 128)),
    ("mxfp4", "floor", "row_major", (16, 128)),
    ("mxfp4", "up", "row_major", (16, 128)),
    ("mxfp4", "up", "swizzled_128x4", (3, 13, 64)),
    ("nvfp4", "floor", "row_major", (16, 128)),
    ("nvfp4", "floor", "swizzled_128x4", (36, 80)),
]


def check_fold(form, y, dtype, rounding, layout, g=None):
    qtype, stype, group = FORMS[form]
    if form == "nvfp4":
        want_q, want_s = blockscale.quantize_nvfp4(y, g, group)
    else:
        want_q, want_s = blockscale.quantize_mx(y, qtype, group, rounding)
    if layout == "swizzled_128x4":
        want_s = blockscale.swizzle_scales(want_s)
    constants = folded_constants(
        module_source(form, y, dtype, rounding, layout, g))
    shape = "x".join(str(d) for d in y.shape)
    got_q = constants.pop(f"tensor<{shape}x{qtype}>")
    (got_s,) = constants.values()
    want_q, want_s = want_q.reshape(-1), want_s.reshape(-1)
    bad = np.flatnonzero(got_q != want_q)
    assert bad.size == 0, "q differs at %d (y = %r): got %#x, want %#x" % (
        bad[0], y.reshape(-1)[bad[0]], got_q[bad[0]], want_q[bad[0]])
    bad = np.flatnonzero(got_s != want_s)
    assert bad.size == 0, "scales differ at %d: got %#x, want %#x" % (
        bad[0], got_s[bad[0]], want_s[bad[0]])


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("form,rounding,layout,shape", CASES)
def test_fold_block_scaled(form, rounding, layout, shape, dtype, rng):
    y = make_input(form, dtype, shape, rng)
    g = np.float32(448.0 * 6.0 / 7.5) if form == "nvfp4" else None
    check_fold(form, y, dtype, rounding, layout, g)


@pytest.mark.parametrize("g", [1.0, 448.0 * 6.0 / 3.0e-3, 1e-30, 0.0, -2.0,
                               np.inf, np.nan])
def test_fold_nvfp4_global_scales(g, rng):
    """Global scales that push sf to saturation, to zero and to NaN."""
    y = make_input("nvfp4", "f32", (8, 64), rng)
    check_fold("nvfp4", y, "f32", "floor", "row_major", np.float32(g))
