"""Proofs of test/tools/blockscale.py, the reference of the block-scaled
forms of norm.quantize (DESIGN.md section 2d), independent of the built
norm_mlir package.

- e2m1_codes and e4m3_codes against a brute-force nearest-value search over
  the full table of each format's finite values (decoded by ml_dtypes), on
  every value, every midpoint and one f32 ulp around it, signed zeros,
  infinities, NaN payloads, f32 denormals and random bit patterns; then
  against ml_dtypes' conversions, asserting where they differ from the
  contract (ml_dtypes float4_e2m1fn: NaN -> a zero of the opposite sign;
  float8_e4m3fn: NaN above 464 instead of saturating; float8_e8m0fnu: 0 ->
  NaN).
- mx_scale_exponent against a search over integer X (exact float64
  comparisons with powers of two), both roundings, both element types.
- quantize_mx, quantize_nvfp4 and dequantize against slow per-element
  implementations in Python floats and Fractions (IEEE f32 operations
  emulated by exact rational arithmetic and one rounding), on random and
  edge groups, and on NVFP4 groups built near rounding boundaries where
  another order of the f32 operations (g * amax / 6, a reciprocal of 6 or
  of sf) gives other codes.
- The swizzled_128x4 layout: a bijection of the padded grid, zero padding,
  round trips, and the reshape/transpose formulation of the same layout.
"""

import math
from bisect import bisect_left
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import blockscale as bs

F4 = np.dtype(ml_dtypes.float4_e2m1fn)
F8 = np.dtype(ml_dtypes.float8_e4m3fn)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
BF16 = np.dtype(ml_dtypes.bfloat16)

FMT = {
    "f4E2M1FN": dict(dtype=F4, ncodes=16, sign=0x8, max=6.0,
                     codes=bs.e2m1_codes, values=bs.e2m1_values),
    "f8E4M3FN": dict(dtype=F8, ncodes=256, sign=0x80, max=448.0,
                     codes=bs.e4m3_codes, values=bs.e4m3_values),
}


def f32(*vals):
    return np.array(vals, dtype=np.float32)


def f32_bits(*bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def next_up(a):
    return np.nextafter(a, np.float32(np.inf)).astype(np.float32)


def next_down(a):
    return np.nextafter(a, np.float32(-np.inf)).astype(np.float32)


def finite_table(qtype):
    """(codes, float64 values) of every finite code of the format, decoded
    by ml_dtypes (not by blockscale)."""
    f = FMT[qtype]
    codes = np.arange(f["ncodes"], dtype=np.uint8)
    vals = codes.view(f["dtype"]).astype(np.float64)
    keep = ~np.isnan(vals)
    return codes[keep], vals[keep]


NANS = f32_bits(0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF,
                0xFFFFFFFF, 0x7FA00000, 0xFFA00001)


def coverage(qtype, rng):
    """f32 test values of one element format (see the module docstring)."""
    _, vals = finite_table(qtype)
    mags = np.unique(np.abs(vals))
    signed = np.unique(np.concatenate([mags, -mags]))
    mids = ((signed[1:] + signed[:-1]) / 2).astype(np.float32)  # exact
    pts = np.concatenate([signed.astype(np.float32), mids])
    mx = np.float32(mags[-1])
    special = f32(0.0, -0.0, np.inf, -np.inf, mx * 1.5, mx * 2, -mx * 3,
                  np.finfo(np.float32).max, -np.finfo(np.float32).max,
                  np.finfo(np.float32).tiny, -np.finfo(np.float32).tiny)
    denormals = np.concatenate([
        f32_bits(1, 2, 3, 0x7FFFFF, 0x400000, 0x80000001, 0x807FFFFF),
        f32_bits(*rng.integers(1, 0x800000, 200)),
        -f32_bits(*rng.integers(1, 0x800000, 200))])
    bits = rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    near = (rng.uniform(-1.2, 1.2, 20000) * float(mx)).astype(np.float32)
    logs = (rng.choice([-1.0, 1.0], 20000)
            * np.exp2(rng.uniform(-14, 10, 20000))).astype(np.float32)
    return np.concatenate([pts, next_up(pts), next_down(pts), special,
                           next_up(special[4:7]), next_down(special[4:7]),
                           denormals, NANS, bits, near, logs])


# --------------------------------------------------------------------------
# Brute-force nearest value
# --------------------------------------------------------------------------


def brute_codes(v, qtype):
    """Codes of the f32 values v by a search over the full signed table of
    finite values: the nearest value (float64 distances), ties to the even
    code, then the sign of v (the two zeros); saturation: |v| is first
    clamped to 2 * max, above which max is the nearest value anyway, which
    also handles +-inf. NaN gives the code 0xFF (the caller replaces it).

    The float64 distances are exact for |v| >= 2^-21 (v's lowest bit and
    the table's highest are then within 53 bits); below, the nearest value
    is a zero at distance |v| (exact) and every other one is more than
    2^-10 away, which its rounding keeps."""
    codes, vals = finite_table(qtype)
    f = FMT[qtype]
    with np.errstate(invalid="ignore"):  # signaling NaNs
        v = np.asarray(v, dtype=np.float32).astype(np.float64)
    out = np.full(v.size, 0xFF, dtype=np.uint8)
    ok = ~np.isnan(v)
    vc = np.clip(v[ok], -2 * f["max"], 2 * f["max"])
    neg = np.signbit(v[ok])
    even = (codes & 1) == 0
    tneg = (codes & f["sign"]) != 0
    res = np.empty(vc.size, dtype=np.uint8)
    for s in range(0, vc.size, 4096):
        d = np.abs(vc[s:s + 4096, None] - vals[None, :])
        cand = d == d.min(axis=1, keepdims=True)
        ce = cand & even[None, :]
        cand = np.where(ce.any(axis=1, keepdims=True), ce, cand)
        cs = cand & (tneg[None, :] == neg[s:s + 4096, None])
        cand = np.where(cs.any(axis=1, keepdims=True), cs, cand)
        assert (cand.sum(axis=1) == 1).all()
        res[s:s + 4096] = codes[cand.argmax(axis=1)]
    out[ok] = res
    return out


@pytest.mark.parametrize("qtype", sorted(FMT))
def test_value_tables_match_ml_dtypes(qtype):
    f = FMT[qtype]
    codes = np.arange(f["ncodes"], dtype=np.uint8)
    ref = codes.view(f["dtype"]).astype(np.float32)
    mine = f["values"](codes)
    same = np.isnan(ref) | (mine.view(np.uint32) == ref.view(np.uint32))
    assert same.all() and np.array_equal(np.isnan(mine), np.isnan(ref))
    mags = bs.E2M1_MAGNITUDES if qtype == "f4E2M1FN" else bs.E4M3_MAGNITUDES
    n = len(mags)
    assert np.array_equal(mags, ref[:n].astype(np.float64))


def test_e8m0_values_match_ml_dtypes():
    codes = np.arange(256, dtype=np.uint8)
    ref = codes.view(E8M0).astype(np.float64)
    mine = bs.e8m0_values(codes)
    assert np.array_equal(mine, ref, equal_nan=True)
    assert np.isnan(mine[0xFF]) and mine[0] == 2.0 ** -127
    # Every finite scale is an f32 value (2^-127 a subnormal).
    assert np.array_equal(mine[:255].astype(np.float32), mine[:255])


@pytest.mark.parametrize("qtype", sorted(FMT))
def test_codes_brute_force(qtype, rng):
    f = FMT[qtype]
    v = coverage(qtype, rng)
    exp = brute_codes(v, qtype)
    nan = np.isnan(v)
    if qtype == "f8E4M3FN":
        exp[nan] = 0x7F | np.where(np.signbit(v[nan]), 0x80, 0)
    else:
        exp[nan] = 0x0
    got = f["codes"](v)
    assert got.dtype == np.uint8 and got.shape == v.shape
    bad = np.nonzero(got != exp)[0]
    assert bad.size == 0, [(float(v[i]), hex(v[i:i + 1].view(np.uint32)[0]),
                            int(got[i]), int(exp[i])) for i in bad[:10]]
    # The cases the contract spells out.
    m = f["max"]
    s = f["sign"]
    top = int(f["codes"](f32(m))[0])
    assert list(f["codes"](f32(0.0, -0.0, np.inf, -np.inf, -1e-45))) == [
        0, s, top, top | s, s]
    # f16 and bf16 inputs are their f32 values.
    for t in (np.float16, BF16):
        with np.errstate(all="ignore"):
            w = v.astype(t)
        assert np.array_equal(f["codes"](w), f["codes"](w.astype(np.float32)))


@pytest.mark.parametrize("qtype", sorted(FMT))
def test_codes_every_f16_and_bf16(qtype):
    """Every f16 and bf16 bit pattern against the brute-force search."""
    bits = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)
    for t in (np.float16, BF16):
        w = bits.view(t)
        with np.errstate(invalid="ignore"):
            v = w.astype(np.float32)
        exp = brute_codes(v, qtype)
        nan = np.isnan(v)
        if qtype == "f8E4M3FN":
            exp[nan] = 0x7F | np.where(np.signbit(v[nan]), 0x80, 0)
        else:
            exp[nan] = 0x0
        assert np.array_equal(FMT[qtype]["codes"](w), exp)


def test_e2m1_ties_and_saturation():
    v = f32(0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.5, 1e30, -0.25, -5.0)
    assert list(bs.e2m1_codes(v)) == [0, 2, 2, 4, 4, 6, 6, 7, 7, 8, 14]


def test_e2m1_vs_ml_dtypes(rng):
    """ml_dtypes' float4_e2m1fn conversion is the contract's (nearest even,
    saturation of overflow and +-inf to +-6, the sign of zero kept, tiny
    negatives -> -0) except for NaN, which it turns into a zero of the
    opposite sign (positive NaN -> 0x8, negative NaN -> 0x0); the contract
    says 0x0 for every NaN."""
    v = coverage("f4E2M1FN", rng)
    assert np.isnan(v).sum() > 8
    for t in (np.float32, np.float16, BF16):
        with np.errstate(all="ignore"):
            w = v.astype(t)
        ml = w.astype(F4).view(np.uint8)
        mine = bs.e2m1_codes(w)
        wnan = np.isnan(w.astype(np.float32))
        assert np.array_equal(ml[~wnan], mine[~wnan])
        assert (mine[wnan] == 0x0).all()
        flipped = np.where(np.signbit(w[wnan].astype(np.float32)), 0x0, 0x8)
        assert np.array_equal(ml[wnan], flipped)


def test_e4m3_vs_ml_dtypes(rng):
    """ml_dtypes' float8_e4m3fn conversion rounds to nearest even but gives
    NaN (0x7F | sign) for |v| > 464 and +-inf, where the contract
    saturates (satfinite) to +-448; clamped to [-448, 448] first (as
    quant_exec.py does) it is the contract's, NaN sign included."""
    v = coverage("f8E4M3FN", rng)
    mine = bs.e4m3_codes(v)
    with np.errstate(all="ignore"):
        ml = v.astype(F8).view(np.uint8)
        mlc = np.clip(v, np.float32(-448), np.float32(448)).astype(F8).view(
            np.uint8)
    assert np.array_equal(mlc, mine)
    over = ~np.isnan(v) & (np.abs(v) > 464)
    sign = np.where(np.signbit(v), 0x80, 0).astype(np.uint8)
    assert np.array_equal(ml[~over], mine[~over])
    assert np.array_equal(ml[over], 0x7F | sign[over])
    assert np.array_equal(mine[over], 0x7E | sign[over])
    assert over.sum() > 1000


def test_e8m0_vs_ml_dtypes():
    """ml_dtypes' f32 -> float8_e8m0fnu conversion encodes 2^X as X + 127,
    as the scales do, but turns 0 into NaN (0xFF): an amax of 0 gives the
    scale code 0x00 (X = -127) in the contract."""
    x = np.arange(-127, 128)
    p = np.ldexp(1.0, x).astype(np.float32)
    assert np.array_equal(p.astype(E8M0).view(np.uint8), (x + 127).astype(
        np.uint8))
    assert f32(0.0).astype(E8M0).view(np.uint8)[0] == 0xFF
    for q in bs.FORMATS:
        assert bs.mx_scale_codes(f32(0.0), q, "floor")[0] == 0x00
        assert bs.mx_scale_codes(f32(0.0), q, "up")[0] == 0x00


# --------------------------------------------------------------------------
# MX scale exponent
# --------------------------------------------------------------------------


def amax_values(rng):
    k = np.arange(-149, 128)
    pw = np.ldexp(1.0, k).astype(np.float32)
    base = [pw, (1.5 * pw).astype(np.float32), (1.75 * pw).astype(np.float32)]
    with np.errstate(over="ignore"):
        base += [(q * pw).astype(np.float32) for q in (6.0, 448.0)]
    base = np.concatenate(base)
    base = base[np.isfinite(base) & (base > 0)]
    rand = rng.integers(0, 0x7F800000, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    return np.concatenate([
        base, next_up(base), next_down(base), rand,
        f32(0.0, np.inf, np.finfo(np.float32).max, np.nan,
            *f32_bits(1, 2, 0x7FFFFF, 0x800000)),
        np.abs(NANS)])


def brute_exponent(amax, qtype, rounding):
    """X by search over the integers -300..300: floor, the largest k with
    2^k <= amax, minus emax; up, the smallest X with QMAX * 2^X >= amax
    (300 when there is none: +inf); then clamped; NaN 128. Every
    comparison is exact in float64."""
    with np.errstate(invalid="ignore"):  # signaling NaNs
        a = np.asarray(amax, dtype=np.float32).astype(np.float64)
    ks = np.arange(-300, 301)
    p = np.ldexp(1.0, ks)
    with np.errstate(invalid="ignore"):
        if rounding == "floor":
            ok = p[None, :] <= a[:, None]
            k = np.where(ok.any(axis=1), ks[::-1][ok[:, ::-1].argmax(axis=1)],
                         -300)
            x = k - bs.EMAX[qtype]
        else:
            ok = bs.QMAX[qtype] * p[None, :] >= a[:, None]
            x = np.where(ok.any(axis=1), ks[ok.argmax(axis=1)], 300)
    x = np.clip(x, -127, 127)
    return np.where(np.isnan(a), 128, x)


@pytest.mark.parametrize("rounding", ["floor", "up"])
@pytest.mark.parametrize("qtype", sorted(FMT))
def test_mx_exponent_brute_force(qtype, rounding, rng):
    a = amax_values(rng)
    got = bs.mx_scale_exponent(a, qtype, rounding)
    exp = brute_exponent(a, qtype, rounding)
    bad = np.nonzero(got != exp)[0]
    assert bad.size == 0, [(float(a[i]), int(got[i]), int(exp[i]))
                           for i in bad[:10]]
    codes = bs.mx_scale_codes(a, qtype, rounding)
    assert np.array_equal(codes, (exp + 127).astype(np.uint8))
    assert codes[np.isnan(a)].tolist() == [0xFF] * int(np.isnan(a).sum())
    # The documented bounds: amax 0 -> -127, +inf -> 127.
    assert list(bs.mx_scale_exponent(f32(0.0, np.inf), qtype, rounding)) == [
        -127, 127]
    # up is floor or floor + 1.
    fl = bs.mx_scale_exponent(a, qtype, "floor")
    up = bs.mx_scale_exponent(a, qtype, "up")
    assert np.isin(up - fl, [0, 1]).all()


@pytest.mark.parametrize("qtype", sorted(FMT))
def test_up_exponent_from_an_f32_quotient(qtype, rng):
    """The f32 quotient amax / QMAX rounded up to a power of two gives the
    rule's X on every amax but one, the f32 after QMAX * 2^-127 (the note
    in mx_scale_exponent)."""
    a = amax_values(rng)
    a = a[~np.isnan(a)]
    with np.errstate(all="ignore"):
        quo = (a / np.float32(bs.QMAX[qtype])).astype(np.float64)
    m, e = np.frexp(np.where(np.isfinite(quo) & (quo > 0), quo, 1.0))
    x = np.where(m == 0.5, e - 1, e)
    x = np.where(quo == 0, -127, np.where(np.isinf(quo), 127, x))
    x = np.clip(x, -127, 127)
    rule = bs.mx_scale_exponent(a, qtype, "up")
    odd = next_up(np.float32(bs.QMAX[qtype] * 2.0 ** -127))
    assert set(np.unique(a[x != rule]).tolist()) == {float(odd)}
    assert bs.mx_scale_exponent(f32(odd), qtype, "up")[0] == -126


# --------------------------------------------------------------------------
# Slow per-element implementations (Python floats and Fractions)
# --------------------------------------------------------------------------


def slow_table(qtype):
    """Sorted non-negative values (Fractions) and their codes."""
    codes, vals = finite_table(qtype)
    pos = [(Fraction(float(v)), int(c)) for c, v in zip(codes, vals)
           if not (c & FMT[qtype]["sign"])]
    pos.sort()
    return [p[0] for p in pos], [p[1] for p in pos]


SLOW = {q: slow_table(q) for q in FMT}


def slow_round(x, negative, qtype):
    """Code of the exact value x (a Fraction or a float, finite or +-inf;
    the sign of zero from `negative`): nearest, ties to the even code,
    saturating."""
    mags, codes = SLOW[qtype]
    sign = FMT[qtype]["sign"] if negative else 0
    if isinstance(x, float) and math.isinf(x):
        return codes[-1] | sign
    a = abs(Fraction(x))
    if a >= mags[-1]:
        return codes[-1] | sign
    i = bisect_left(mags, a)
    if mags[i] == a:
        return codes[i] | sign
    lo, hi = i - 1, i
    dl, dh = a - mags[lo], mags[hi] - a
    pick = lo if dl < dh or (dl == dh and codes[lo] % 2 == 0) else hi
    return codes[pick] | sign


def round_f32(x):
    """The f32 value nearest the nonzero Fraction x (ties to even),
    +-inf on overflow, a signed zero on underflow; as a Python float."""
    neg = x < 0
    a = -x if neg else x
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    qe = max(e, -126) - 23
    n = a / Fraction(2) ** qe
    i = n.numerator // n.denominator
    rem = n - i
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and i % 2 == 1):
        i += 1
    r = i * Fraction(2) ** qe
    out = math.inf if r >= 2 ** 128 else float(r)
    return -out if neg else out


def _sgn(a):
    return math.copysign(1.0, a)


def f32_mul(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    s = _sgn(a) * _sgn(b)
    if math.isinf(a) or math.isinf(b):
        return math.nan if a == 0 or b == 0 else s * math.inf
    if a == 0 or b == 0:
        return s * 0.0
    r = round_f32(Fraction(a) * Fraction(b))
    return s * 0.0 if r == 0 else r


def f32_div(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    s = _sgn(a) * _sgn(b)
    if math.isinf(a):
        return math.nan if math.isinf(b) else s * math.inf
    if math.isinf(b):
        return s * 0.0
    if b == 0:
        return math.nan if a == 0 else s * math.inf
    if a == 0:
        return s * 0.0
    r = round_f32(Fraction(a) / Fraction(b))
    return s * 0.0 if r == 0 else r


def slow_mx_exponent(amax, qtype, rounding):
    if math.isnan(amax):
        return 128
    if amax == 0:
        return -127
    if math.isinf(amax):
        return 127
    emax, qmax = bs.EMAX[qtype], bs.QMAX[qtype]
    if rounding == "floor":
        k = max(k for k in range(-200, 200) if 2.0 ** k <= amax)
        x = k - emax
    else:
        x = min(x for x in range(-200, 200) if qmax * 2.0 ** x >= amax)
    return min(max(x, -127), 127)


def slow_mx(y, qtype, group, rounding):
    """(q codes, scale codes) of one row of Python floats (f32 values)."""
    q, s = [], []
    for j in range(0, len(y), group):
        grp = y[j:j + group]
        if any(math.isnan(v) for v in grp):
            q += [0x7F if qtype == "f8E4M3FN" else 0x0] * group
            s.append(0xFF)
            continue
        x = slow_mx_exponent(max(abs(v) for v in grp), qtype, rounding)
        s.append(x + 127)
        for v in grp:
            neg = math.copysign(1.0, v) < 0
            if math.isinf(v):
                q.append(slow_round(v, neg, qtype))
            else:
                q.append(slow_round(Fraction(v) / Fraction(2) ** x, neg,
                                    qtype))
    return q, s


def e4m3_value(code):
    if code & 0x7F == 0x7F:
        return math.nan
    mags, codes = SLOW["f8E4M3FN"]
    v = float(mags[codes.index(code & 0x7F)])
    return -v if code & 0x80 else v


def slow_nvfp4(y, g, group):
    q, s = [], []
    for j in range(0, len(y), group):
        grp = y[j:j + group]
        amax = math.nan if any(math.isnan(v) for v in grp) else max(
            abs(v) for v in grp)
        u = f32_mul(g, f32_div(amax, 6.0))
        if math.isnan(u):
            s.append(0x7F)
            q += [0x0] * group
            continue
        sf = slow_round(u, u < 0 or (u == 0 and _sgn(u) < 0), "f8E4M3FN")
        s.append(sf)
        sfv = e4m3_value(sf)
        out = 0.0 if sfv == 0 else f32_div(g, sfv)
        for v in grp:
            w = f32_mul(v, out)
            if math.isnan(w):
                q.append(0x0)
            else:
                q.append(slow_round(w, _sgn(w) < 0, "f4E2M1FN"))
    return q, s


# --------------------------------------------------------------------------
# Test groups
# --------------------------------------------------------------------------


def tie_values(qtype):
    """Every value of the format, every midpoint and one ulp around it,
    both signs (f32)."""
    _, vals = finite_table(qtype)
    mags = np.unique(np.abs(vals))
    mids = ((mags[1:] + mags[:-1]) / 2).astype(np.float32)
    v = np.concatenate([mags.astype(np.float32), mids, next_up(mids),
                        next_down(mids)])
    return np.concatenate([v, -v])


def rows_of(values, group, lead, rng, fill=0.0):
    """values chunked into groups of group - 1, each group completed with
    `lead` (the element that fixes amax) at a random position."""
    values = np.asarray(values, dtype=np.float32)
    n = -(-values.size // (group - 1))
    pad = np.full(n * (group - 1) - values.size, fill, dtype=np.float32)
    chunks = np.concatenate([values, pad]).reshape(n, group - 1)
    rows = []
    for c in chunks:
        p = rng.integers(0, group)
        rows.append(np.insert(c, p, np.float32(lead)))
    return np.array(rows, dtype=np.float32)


def edge_groups(qtype, group, rng):
    qmax = np.float32(bs.QMAX[qtype])
    g = []
    g.append(np.zeros(group, np.float32))
    g.append(np.full(group, -0.0, np.float32))
    g.append(np.where(rng.random(group) < 0.5, 0.0, -0.0).astype(np.float32))
    r = rng.standard_normal(group).astype(np.float32)
    for special in (np.nan, -np.nan, np.inf, -np.inf):
        w = r.copy()
        w[rng.integers(0, group)] = special
        g.append(w)
    w = r.copy()
    w[0], w[-1] = np.inf, np.nan
    g.append(w)
    w = r.copy()
    w[0], w[1] = np.inf, -np.inf
    g.append(w)
    # Values at every tie, with amax = QMAX (X = 0 for both roundings) and
    # scaled by powers of two (X = k; subnormal values included).
    ties = tie_values("f4E2M1FN")
    if qtype == "f8E4M3FN":
        ties = np.concatenate([ties, tie_values("f8E4M3FN")])
    for k in (0, -20, 37, -127, -131, 110):
        with np.errstate(all="ignore"):
            t = (ties.astype(np.float64) * 2.0 ** k).astype(np.float32)
            lead = np.float32(float(qmax) * 2.0 ** k)
        g.extend(rows_of(t, group, lead, rng))
    # Saturation under floor: amax with a mantissa above QMAX's.
    for m in (1.51, 1.75, 1.76, 1.99, float(next_down(np.float32(2.0)))):
        for k in (0, -125, 100, -140):
            lead = np.float32(m * 2.0 ** (k + bs.EMAX[qtype]))
            w = (rng.uniform(-1, 1, group) * lead).astype(np.float32)
            w[rng.integers(0, group)] = -lead
            g.append(w)
    # Denormal groups, tiny and huge groups.
    g.append(f32_bits(*rng.integers(1, 0x800000, group))
             * np.where(rng.random(group) < 0.5, 1, -1).astype(np.float32))
    g.append(f32_bits(*rng.integers(1, 0x1000, group)))
    w = (rng.standard_normal(group) * 1e38).astype(np.float32)
    w[0] = np.finfo(np.float32).max
    g.append(w)
    # Random groups at random scales.
    for _ in range(24):
        k = int(rng.integers(-135, 125))
        with np.errstate(all="ignore"):
            w = (rng.standard_normal(group) * 2.0 ** k).astype(np.float32)
        g.append(w)
    return np.concatenate([np.asarray(x, np.float32).reshape(-1, group)
                           for x in g])


def as_rows(a):
    return [[float(v) for v in row] for row in a]


# --------------------------------------------------------------------------
# quantize_mx, quantize_nvfp4, dequantize
# --------------------------------------------------------------------------


MX_CASES = [("f8E4M3FN", 32), ("f4E2M1FN", 32), ("f8E4M3FN", 128)]


@pytest.mark.parametrize("rounding", ["floor", "up"])
@pytest.mark.parametrize("qtype,group", MX_CASES)
def test_quantize_mx(qtype, group, rounding, rng):
    groups = edge_groups(qtype, group, rng)
    # Several groups per row, leading dims (rows, 1).
    per = 2
    n = groups.shape[0] // per * per
    y = groups[:n].reshape(-1, 1, per * group)
    q, s = bs.quantize_mx(y, qtype, group, rounding)
    assert q.shape == y.shape and q.dtype == np.uint8
    assert s.shape == y.shape[:-1] + (per,) and s.dtype == np.uint8
    flat = y.reshape(-1, per * group)
    qf, sf = q.reshape(flat.shape), s.reshape(flat.shape[0], per)
    for i, row in enumerate(as_rows(flat)):
        eq, es = slow_mx(row, qtype, group, rounding)
        assert sf[i].tolist() == es, (i, row)
        assert qf[i].tolist() == eq, (i, row)

    # The f32 quotient and the f32 product by 2^-X give the same codes.
    x = s.astype(np.int64) - 127
    nan = s == 0xFF
    x = np.where(nan, 0, x)
    yg = y.reshape(y.shape[:-1] + (per, group))
    conv = FMT[qtype]["codes"]
    with np.errstate(all="ignore"):
        div = yg / np.ldexp(1.0, x).astype(np.float32)[..., None]
        mul = yg * np.ldexp(1.0, -x).astype(np.float32)[..., None]
    assert div.dtype == mul.dtype == np.float32
    qg = q.reshape(yg.shape)
    for v in (div, mul):
        c = conv(v)
        assert np.array_equal(c[~nan], qg[~nan])
    # Under flush-to-zero 2^-127 would be 0: the subnormal is needed.
    assert np.ldexp(1.0, -127).astype(np.float32) != 0

    # Dequantization: f32(q) * 2^X rounded once to f32; NaN for 0xFF.
    d = bs.dequantize(q, s, qtype, group)
    assert d.dtype == np.float32 and d.shape == y.shape
    vals = FMT[qtype]["values"](qf)
    df = d.reshape(flat.shape)
    for i in range(0, flat.shape[0], 3):
        for j in range(0, per * group, 5):
            sc = int(sf[i, j // group])
            qv = float(vals[i, j])
            if sc == 0xFF or math.isnan(qv):
                assert math.isnan(df[i, j])
            elif qv == 0:
                assert df[i, j] == 0 and math.copysign(1, df[i, j]) == \
                    math.copysign(1, qv)
            else:
                assert float(df[i, j]) == round_f32(
                    Fraction(qv) * Fraction(2) ** (sc - 127))


@pytest.mark.parametrize("qtype", sorted(FMT))
def test_quantize_mx_input_types(qtype, rng):
    y = (rng.standard_normal((3, 4, 64)) * 10).astype(np.float32)
    y[0, 0, 3] = np.nan
    y[1, 2, 40] = -np.inf
    for t in (np.float16, BF16):
        w = y.astype(t)
        for rounding in ("floor", "up"):
            a = bs.quantize_mx(w, qtype, 32, rounding)
            b = bs.quantize_mx(w.astype(np.float32), qtype, 32, rounding)
            assert all(np.array_equal(u, v) for u, v in zip(a, b))
    q, s = bs.quantize_mx(y, qtype, 32)
    assert s[0, 0, 0] == 0xFF and s[0, 0, 1] != 0xFF
    assert (q[0, 0, :32] == (0x7F if qtype == "f8E4M3FN" else 0)).all()


def test_mx_documented_examples():
    # MXFP4, floor: amax 6 -> X = 0, 7.9 saturates to 6; up: 7.9 -> X = 1.
    y = np.zeros((1, 32), np.float32)
    y[0, :4] = (7.9, -2.5, 0.25, 5.0)
    q, s = bs.quantize_mx(y, "f4E2M1FN", 32, "floor")
    assert s.tolist() == [[127]] and q[0, :4].tolist() == [7, 12, 0, 6]
    q, s = bs.quantize_mx(y, "f4E2M1FN", 32, "up")
    assert s.tolist() == [[128]]
    # 3.95 -> 4, -1.25 (a tie) -> -1 (even code), 0.125 -> 0, 2.5 (a tie) -> 2
    assert q[0, :4].tolist() == [6, 10, 0, 4]
    # MXFP8: amax 448 -> X = 0 either way; 1e-45 groups -> X = -127.
    y[0, :4] = (448, 1, -0.0, 3)
    for r in ("floor", "up"):
        q, s = bs.quantize_mx(y, "f8E4M3FN", 32, r)
        assert s.tolist() == [[127]] and q[0, :4].tolist() == [
            0x7E, 0x38, 0x80, 0x44]
    z = np.full((1, 32), 1e-45, np.float32)
    q, s = bs.quantize_mx(z, "f8E4M3FN", 32, "floor")
    # 2^-149 / 2^-127 = 2^-22: below half the smallest subnormal, so 0.
    assert s.tolist() == [[0]] and (q == 0).all()


NV_GLOBALS = [1.0, 448.0, 448.0 * 6 / 37.5, 2.0 ** -20, 1e-30, 3e38, -1.0,
              0.0, np.inf, np.nan, 0.5]


@pytest.mark.parametrize("g", NV_GLOBALS)
def test_quantize_nvfp4(g, rng):
    group = 16
    groups = edge_groups("f4E2M1FN", group, rng)
    rows = groups[: groups.shape[0] // 8 * 8].reshape(-1, 4 * group)
    y = rows.reshape(-1, 2, 4 * group)
    g32 = np.float32(g)
    q, s = bs.quantize_nvfp4(y, g32, group)
    assert q.shape == y.shape and q.dtype == np.uint8
    assert s.shape == y.shape[:-1] + (4,) and s.dtype == np.uint8
    qf, sf = q.reshape(rows.shape), s.reshape(rows.shape[0], 4)
    for i, row in enumerate(as_rows(rows)):
        eq, es = slow_nvfp4(row, float(g32), group)
        assert sf[i].tolist() == es, (i, row)
        assert qf[i].tolist() == eq, (i, row)
    # Dequantization: (f32(q) * f32(sf)) / g in f32.
    d = bs.dequantize(q, s, "f4E2M1FN", group, g32).reshape(rows.shape)
    qv = bs.e2m1_values(qf)
    for i in range(0, rows.shape[0], 2):
        for j in range(0, 4 * group, 7):
            e = f32_div(f32_mul(float(qv[i, j]), e4m3_value(int(sf[i, j //
                                                                 group]))),
                        float(g32))
            if math.isnan(e):
                assert math.isnan(d[i, j])
            else:
                assert float(d[i, j]) == e and _sgn(d[i, j]) == _sgn(e)


def test_nvfp4_documented_cases():
    y = np.zeros((1, 16), np.float32)
    y[0, :5] = (6.0, -3.5, 0.25, 1.75, -0.0)
    q, s = bs.quantize_nvfp4(y, np.float32(1.0))
    # sf = e4m3(1 * (6 / 6)) = 1.0 (0x38); q = e2m1(y).
    assert s.tolist() == [[0x38]] and q[0, :5].tolist() == [7, 14, 0, 4, 8]
    y[0, 7] = np.nan
    q, s = bs.quantize_nvfp4(y, np.float32(1.0))
    assert s.tolist() == [[0x7F]] and (q == 0).all()
    # An all-zero group: sf 0, out 0, q keeps the signs of zero.
    z = np.zeros((1, 16), np.float32)
    z[0, 1] = -0.0
    q, s = bs.quantize_nvfp4(z, np.float32(2.0))
    assert s.tolist() == [[0]] and q[0, :2].tolist() == [0, 8]


def near_boundary_groups(rng, group=16):
    """NVFP4 groups on which the order of the f32 operations shows: (a) the
    amax of each group is within a few ulps of where g * (amax / 6) meets
    an e4m3 midpoint, with the sf of (g * amax) / 6 or of
    g * (amax * f32(1 / 6)) different; (b) elements y within a few ulps of
    an e2m1 midpoint / out, with e2m1(y * out) different when out is
    g * f32(1 / sf) instead of g / sf. Returns (rows, g, number of groups
    where each alternative differs)."""
    g = np.float32(rng.uniform(0.5, 3.0) * 2.0 ** int(rng.integers(-8, 9)))
    six = np.float32(6.0)
    e4m3 = bs.E4M3_MAGNITUDES
    mids = (e4m3[1:-1] + e4m3[2:]) / 2
    mids = mids[mids > 2.0 ** -8]
    base = (6.0 * mids / float(g)).astype(np.float32)
    off = np.arange(-6, 7)
    amax = (base.view(np.int32)[:, None] + off[None, :]).reshape(-1).view(
        np.float32)
    amax = amax[np.isfinite(amax) & (amax > 0)]
    with np.errstate(all="ignore"):
        ref = bs.e4m3_codes(g * (amax / six))
        alt1 = bs.e4m3_codes((g * amax) / six)
        alt2 = bs.e4m3_codes(g * (amax * (np.float32(1) / six)))
    pick = (ref != alt1) | (ref != alt2)
    leads = amax[pick]
    n1, n2 = int((ref != alt1)[pick].sum()), int((ref != alt2)[pick].sum())
    # (b): per group, elements near every e2m1 midpoint / out.
    e2m1_mids = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
    rows, n3 = [], 0
    for lead in np.concatenate([leads, (rng.uniform(0.1, 6.0, 200) * 2.0 ** (
            rng.integers(-20, 20, 200)) / float(g)).astype(np.float32)]):
        with np.errstate(all="ignore"):
            sfv = bs.e4m3_values(bs.e4m3_codes(g * (lead / six)))
            if sfv == 0:
                continue
            out = g / sfv
            out2 = g * (np.float32(1) / sfv)
        y0 = (e2m1_mids / float(out)).astype(np.float32)
        ys = (y0.view(np.int32)[:, None] + np.arange(-2, 3)[None, :]).reshape(
            -1).view(np.float32)
        ys = ys[np.abs(ys) <= lead]
        diff = bs.e2m1_codes(ys * out) != bs.e2m1_codes(ys * out2)
        n3 += int(diff.sum())
        keep = np.concatenate([ys[diff], ys[~diff][:3]])
        row = np.resize(rng.uniform(-1, 1, group - 1).astype(np.float32)
                        * lead, group - 1)
        row[:min(keep.size, group - 1)] = keep[:group - 1] * np.where(
            rng.random(min(keep.size, group - 1)) < 0.5, 1, -1)
        rows.append(np.insert(row, rng.integers(0, group), lead))
    return np.array(rows, np.float32), g, (n1, n2, n3)


def test_nvfp4_order_of_operations(rng):
    """quantize_nvfp4 follows g * (amax / 6) and g / sf, in f32, on groups
    where (g * amax) / 6, g * (amax * rcp(6)) or g * rcp(sf) would give
    other codes."""
    for _ in range(3):
        rows, g, (n1, n2, n3) = near_boundary_groups(rng)
        assert n1 + n2 > 0 and n3 > 0, (n1, n2, n3)
        q, s = bs.quantize_nvfp4(rows, g)
        for i, row in enumerate(as_rows(rows)):
            eq, es = slow_nvfp4(row, float(g), 16)
            assert s[i].tolist() == es, (i, row)
            assert q[i].tolist() == eq, (i, row)


# --------------------------------------------------------------------------
# Packing and the swizzled layout
# --------------------------------------------------------------------------


def test_pack_fp4(rng):
    c = rng.integers(0, 16, (3, 5, 64)).astype(np.uint8)
    p = bs.pack_fp4(c)
    assert p.shape == (3, 5, 32) and p.dtype == np.uint8
    assert np.array_equal(bs.unpack_fp4(p), c)
    assert bs.pack_fp4(np.array([1, 2, 0xF, 0x8], np.uint8)).tolist() == [
        0x21, 0x8F]
    assert np.array_equal(p & 0xF, c[..., 0::2])
    assert np.array_equal(p >> 4, c[..., 1::2])
    with pytest.raises(ValueError):
        bs.pack_fp4(np.zeros(3, np.uint8))


def to_blocked(s):
    """The same layout as reshapes and transposes (the torchao/cuBLAS
    `to_blocked` formulation): pad to (128 i, 4 j), split the row blocks
    into 4 x 32 rows and interleave them."""
    M, K = s.shape
    Mp, Kp = -(-M // 128) * 128, -(-K // 4) * 4
    p = np.zeros((Mp, Kp), s.dtype)
    p[:M, :K] = s
    blocks = p.reshape(Mp // 128, 128, Kp // 4, 4).transpose(0, 2, 1, 3)
    r = blocks.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3)
    return r.reshape(-1)


SHAPES = [(1, 1), (5, 3), (127, 4), (128, 4), (129, 5), (256, 8), (300, 7),
          (33, 130), (1000, 1)]


@pytest.mark.parametrize("M,K", SHAPES)
def test_swizzle(M, K, rng):
    Mp, Kp = -(-M // 128) * 128, -(-K // 4) * 4
    total = bs.swizzled_size(M, K)
    assert total == Mp * Kp
    m, k = np.meshgrid(np.arange(Mp), np.arange(Kp), indexing="ij")
    off = bs.swizzle_offset(m, k, K)
    assert np.array_equal(np.sort(off.reshape(-1)), np.arange(total))
    assert bs.swizzle_offset(M - 1, K - 1, K) == off[M - 1, K - 1]
    s = rng.integers(1, 256, (M, K)).astype(np.uint8)
    flat = bs.swizzle_scales(s)
    assert flat.shape == (total,) and flat.dtype == np.uint8
    assert np.array_equal(flat, to_blocked(s))
    real = np.zeros(total, bool)
    real[off[:M, :K].reshape(-1)] = True
    assert (flat[~real] == 0).all() and (flat[real] != 0).all()
    assert np.array_equal(bs.unswizzle_scales(flat, M, K), s)
    # Leading dims: M is their product.
    if M % 5 == 0:
        lead = s.reshape(5, M // 5, K)
        assert np.array_equal(bs.swizzle_scales(lead), flat)
        assert np.array_equal(bs.swizzle_scales(lead, M, K), flat)


def test_swizzle_formula_points():
    # (m, k) -> (m/128)*K4*512 + (k/4)*512 + (m%32)*16 + ((m%128)/32)*4 + k%4
    K = 10  # K4 = 3
    assert bs.swizzle_offset(0, 0, K) == 0
    assert bs.swizzle_offset(0, 1, K) == 1
    assert bs.swizzle_offset(1, 0, K) == 16
    assert bs.swizzle_offset(32, 0, K) == 4
    assert bs.swizzle_offset(0, 4, K) == 512
    assert bs.swizzle_offset(128, 0, K) == 3 * 512
    assert bs.swizzle_offset(200, 9, K) == (3 * 512 + 2 * 512 + 8 * 16
                                            + 2 * 4 + 1)
