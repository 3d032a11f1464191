"""The bit-exact reference of the block-scaled forms of norm.quantize.

DESIGN.md section 2d: MXFP8 (f8E4M3FN elements, G = 32, UE8M0 scales),
MXFP4 (f4E2M1FN, G = 32, UE8M0), FP8 1x128 (f8E4M3FN, G = 128, UE8M0: the
MX rule with another G) and NVFP4 (f4E2M1FN, G = 16, f8E4M3FN scales and a
global scale), plus the packed f4 byte layout and the swizzled 128x4 scale
layout. Everything here works on uint8 codes: one code per element
(unpacked) for q, one code per group for the scales; `pack_fp4` gives the
byte buffer of the function boundaries. python/tests/
test_blockscale_reference.py proves this module against brute-force
searches over the value tables, exact rational arithmetic and ml_dtypes.

Inputs y: f32, f16 or bf16 (ml_dtypes.bfloat16) arrays, rank >= 1,
quantized along the last dim N in groups of G (N % G == 0); they are
converted to f32 first (exact). M = the product of the leading dims.

Element conversions (`e2m1_codes`, `e4m3_codes`): one rounding of the
exact value to the nearest value of the format, ties to the even code,
saturating to +-QMAX (6 for e2m1, 448 for e4m3; +-inf too), the sign of
zero kept (-0 and negatives that round to zero give the negative zero code
0x8 / 0x80). NaN: e4m3 0x7F | sign (DESIGN 2a); e2m1 (no NaN code) 0x0.

MX, per group (`quantize_mx`): amax = max |y| (f32, NaN propagates), the
scale exponent X (`mx_scale_exponent`):
  floor: X = floor(log2(amax)) - emax (emax 8 for e4m3, 2 for e2m1);
  up:    the smallest X with 2^X >= amax / QMAX (the exact quotient, not
         its f32 rounding: see `mx_scale_exponent`);
clamped to [-127, 127] (amax 0 and +inf land on the bounds); the UE8M0
scale code is X + 127, and a NaN amax gives the code 0xFF (X = 128 here,
so that code = X + 127 always holds). Elements: v = y / 2^X, taken as the
exact real quotient (computed as y * 2^-X in float64, which is exact for
every f32 y and |X| <= 127) and rounded once to the element format. This
equals converting the IEEE f32 quotient y / f32(2^X) or the f32 product
y * f32(2^-X) (f32(2^-127) being the subnormal, not a flushed 0): both are
exact unless |v| < 2^-126, and there every rounding gives a zero of v's
sign. A NaN group: scale 0xFF, e4m3 elements 0x7F (NaN; any NaN encoding
is as good), e2m1 elements 0x0.

NVFP4, per group (`quantize_nvfp4`), in IEEE f32 operations in this order:
  sf  = e4m3_rn_satfinite(g * (amax / 6))
  out = 0 if f32(sf) == 0 else g / f32(sf)
  q   = e2m1_rn_satfinite(y * out)
A NaN sf (a NaN in the group, or from g) is encoded 0x7F and the formula
makes every q of the group 0x0 (y * NaN is NaN).

Dequantization (`dequantize`): MX f32(q) * 2^X (scale 0xFF: NaN), NVFP4
(f32(q) * f32(sf)) / g in f32.
"""

import numpy as np

FORMATS = ("f8E4M3FN", "f4E2M1FN")
QMAX = {"f8E4M3FN": 448.0, "f4E2M1FN": 6.0}
EMAX = {"f8E4M3FN": 8, "f4E2M1FN": 2}
# The group size of each form (the FP8 1x128 form is MX with G = 128).
GROUP = {"mxfp8": 32, "mxfp4": 32, "nvfp4": 16, "fp8_1x128": 128}
E8M0_NAN = 0xFF
E4M3_NAN = 0x7F
X_MIN, X_MAX = -127, 127


def _e2m1_magnitudes():
    """The 8 non-negative f4E2M1FN values by code 0..7 (1 sign, 2 exponent
    bits with bias 1, 1 mantissa bit, subnormals at exponent 0)."""
    mags = []
    for c in range(8):
        e, m = c >> 1, c & 1
        mags.append(m * 0.5 if e == 0 else (1 + m / 2.0) * 2.0 ** (e - 1))
    return np.array(mags, dtype=np.float64)


def _e4m3_magnitudes():
    """The 127 finite non-negative f8E4M3FN values by code 0..126 (4
    exponent bits with bias 7, 3 mantissa bits; code 127 is NaN)."""
    mags = []
    for c in range(127):
        e, m = c >> 3, c & 7
        mags.append(m * 2.0 ** -9 if e == 0
                    else (1 + m / 8.0) * 2.0 ** (e - 7))
    return np.array(mags, dtype=np.float64)


E2M1_MAGNITUDES = _e2m1_magnitudes()
E4M3_MAGNITUDES = _e4m3_magnitudes()


def as_f32(y):
    """y (f32, f16, bf16 or a float64 array of such values) as f32; the
    conversion from f16 and bf16 is exact."""
    y = np.asarray(y)
    if y.dtype == np.float32:
        return y
    with np.errstate(all="ignore"):
        return y.astype(np.float32)


def _as_f64(v):
    """v as float64, exactly (f16, bf16 and f32 are subsets of float64)."""
    v = np.asarray(v)
    if v.dtype != np.float64:
        with np.errstate(invalid="ignore"):  # signaling NaNs
            v = v.astype(np.float32).astype(np.float64)
    return v


def _rne_codes(v, mags, sign_bit, nan_code, nan_signed):
    """Round values v (exactly as float64) once to the format whose
    non-negative values by code are mags (increasing, code = index):
    saturate to mags[-1], round to nearest with ties to the even code, or
    sign_bit into negative results (zeros included). NaN -> nan_code
    (| sign_bit for a negative NaN when nan_signed)."""
    v = _as_f64(v)
    shape = v.shape
    v = v.reshape(-1)
    sign = np.where(np.signbit(v), np.uint8(sign_bit), np.uint8(0))
    nan = np.isnan(v)
    a = np.minimum(np.abs(v), mags[-1])  # saturation (+-inf too)
    a[nan] = 0.0
    top = len(mags) - 1
    hi = np.minimum(np.searchsorted(mags, a, side="left"), top)  # >= a
    lo = np.maximum(hi - 1, 0)
    mid = (mags[lo] + mags[hi]) / 2.0  # exact: both are short dyadics
    code = np.where(a < mid, lo,
                    np.where(a > mid, hi, np.where(lo % 2 == 0, lo, hi)))
    code = np.where(mags[hi] == a, hi, code).astype(np.uint8)
    out = code | sign
    if nan_signed:
        out[nan] = np.uint8(nan_code) | sign[nan]
    else:
        out[nan] = np.uint8(nan_code)
    return out.reshape(shape)


def e2m1_codes(v):
    """f4E2M1FN codes (uint8 0..15, sign bit 0x8) of the values v (f32,
    f16, bf16, or float64 values rounded once from float64): nearest value
    of 0, 0.5, 1, 1.5, 2, 3, 4, 6, ties to the even code, saturating to
    +-6 (+-inf too), the sign of zero kept (-0 and negatives that round to
    zero give 0x8); NaN gives 0x0."""
    return _rne_codes(v, E2M1_MAGNITUDES, 0x8, 0x0, False)


def e4m3_codes(v):
    """f8E4M3FN codes (uint8, sign bit 0x80) of the values v (as for
    e2m1_codes): round to nearest even, saturating to +-448 (satfinite,
    +-inf too), the sign of zero kept; NaN gives 0x7F | sign."""
    return _rne_codes(v, E4M3_MAGNITUDES, 0x80, E4M3_NAN, True)


def e2m1_values(codes):
    """The f32 values of f4E2M1FN codes (the low 4 bits of each code)."""
    c = np.asarray(codes, dtype=np.uint8) & np.uint8(0xF)
    mag = E2M1_MAGNITUDES[c & np.uint8(0x7)]
    return np.where(c & np.uint8(0x8), -mag, mag).astype(np.float32)


def e4m3_values(codes):
    """The f32 values of f8E4M3FN codes (0x7F and 0xFF are NaN)."""
    c = np.asarray(codes, dtype=np.uint8)
    m = c & np.uint8(0x7F)
    mag = np.where(m == 0x7F, np.nan, E4M3_MAGNITUDES[np.minimum(m, 126)])
    return np.where(c & np.uint8(0x80), -mag, mag).astype(np.float32)


def e8m0_values(codes):
    """The float64 values 2^(code - 127) of UE8M0 codes (0xFF is NaN);
    all of them but NaN are f32 values too (2^-127 a subnormal)."""
    c = np.asarray(codes, dtype=np.uint8).astype(np.int64)
    v = np.ldexp(1.0, c - 127)
    return np.where(c == E8M0_NAN, np.nan, v)


def _element_values(codes, qtype):
    return e4m3_values(codes) if qtype == "f8E4M3FN" else e2m1_values(codes)


def _element_codes(v, qtype):
    return e4m3_codes(v) if qtype == "f8E4M3FN" else e2m1_codes(v)


def _check_qtype(qtype):
    if qtype not in FORMATS:
        raise ValueError("unknown element type %r (expected one of %s)"
                         % (qtype, ", ".join(FORMATS)))


def _groups(y32, group):
    n = y32.shape[-1]
    if group <= 0 or n % group:
        raise ValueError("last dim %d is not a multiple of the group size %d"
                         % (n, group))
    return y32.reshape(y32.shape[:-1] + (n // group, group))


def group_amax(y, group):
    """max |y| per group of `group` elements along the last dim (f32, NaN
    propagates); shape y.shape[:-1] + (N / group,)."""
    with np.errstate(all="ignore"):
        return np.max(np.abs(_groups(as_f32(y), group)), axis=-1)


def mx_scale_exponent(amax, qtype, rounding="floor"):
    """The scale exponent X (int64 array shaped like amax) of MX groups
    with maxima amax (f32 values, >= 0 or NaN).

    floor: X = floor(log2(amax)) - emax; up: the smallest X with
    2^X >= amax / QMAX for the exact quotient. With amax = s * 2^f, s in
    [1, 2), and QMAX = r * 2^emax (r = 1.75 for 448, 1.5 for 6), up is
    X = f - emax + (1 if s > r else 0): floor and up differ by 0 or 1. Both
    are computed exactly from frexp; X is clamped to [-127, 127], so amax 0
    gives -127 and +inf 127. NaN gives X = 128 (UE8M0 code 0xFF).

    (The IEEE f32 quotient amax / QMAX gives the same X everywhere but at
    one amax per format, the f32 after QMAX * 2^-127: its exact quotient is
    above 2^-127 by less than half an ulp of the subnormal, so the f32
    quotient is 2^-127 and X = -127 where the rule gives -126.)
    """
    _check_qtype(qtype)
    if rounding not in ("floor", "up"):
        raise ValueError("unknown scale rounding %r" % rounding)
    with np.errstate(invalid="ignore"):  # signaling NaNs
        a = np.asarray(amax, dtype=np.float32).astype(np.float64)
    nan = np.isnan(a)
    zero = a == 0
    inf = np.isinf(a)
    safe = np.where(nan | zero | inf, 1.0, a)
    m, e = np.frexp(safe)  # safe = m * 2^e, m in [0.5, 1): exact
    f = e.astype(np.int64) - 1  # floor(log2(amax)); s = 2 * m
    x = f - EMAX[qtype]
    if rounding == "up":
        r = QMAX[qtype] / 2.0 ** EMAX[qtype]
        x = x + (2.0 * m > r).astype(np.int64)
    x = np.clip(x, X_MIN, X_MAX)
    x = np.where(zero, X_MIN, x)
    x = np.where(inf, X_MAX, x)
    x = np.where(nan, X_MAX + 1, x)
    return x.astype(np.int64)


def mx_scale_codes(amax, qtype, rounding="floor"):
    """UE8M0 codes X + 127 of `mx_scale_exponent` (0xFF for NaN)."""
    return (mx_scale_exponent(amax, qtype, rounding) + 127).astype(np.uint8)


def quantize_mx(y, qtype, group=32, rounding="floor"):
    """MX quantization (MXFP8, MXFP4, and FP8 1x128 with group=128):
    (q, scales), q the element codes (uint8, shaped like y, one per
    element), scales the UE8M0 codes (uint8, y.shape[:-1] + (N / group,)).
    v = y / 2^X exactly (y * 2^-X in float64), rounded once; a NaN group
    has scale 0xFF and elements 0x7F (e4m3) or 0x0 (e2m1)."""
    _check_qtype(qtype)
    y32 = as_f32(y)
    yg = _groups(y32, group)
    amax = group_amax(y32, group)
    x = mx_scale_exponent(amax, qtype, rounding)
    nan = x == X_MAX + 1
    inv = np.ldexp(1.0, -np.where(nan, 0, x))  # 2^-X, exact in float64
    with np.errstate(all="ignore"):
        v = yg.astype(np.float64) * inv[..., None]  # exact
    q = _element_codes(v, qtype)
    q[nan] = E4M3_NAN if qtype == "f8E4M3FN" else 0x0
    return q.reshape(y32.shape), (x + 127).astype(np.uint8)


def quantize_nvfp4(y, g, group=16):
    """NVFP4 quantization with the global scale g (an f32 scalar):
    (q, sf), q the f4E2M1FN codes (uint8, shaped like y, one per element),
    sf the f8E4M3FN codes (uint8, y.shape[:-1] + (N / group,)); f32
    operations in the order of the module docstring; a NaN sf is 0x7F."""
    y32 = as_f32(y)
    yg = _groups(y32, group)
    g = np.float32(g)
    with np.errstate(all="ignore"):
        amax = group_amax(y32, group)
        u = g * (amax / np.float32(6.0))
        assert u.dtype == np.float32
        sf = e4m3_codes(u)
        sf[np.isnan(u)] = E4M3_NAN
        sfv = e4m3_values(sf)
        out = np.where(sfv == 0, np.float32(0.0), g / sfv).astype(np.float32)
        v = yg * out[..., None]
        assert v.dtype == np.float32
    return e2m1_codes(v).reshape(y32.shape), sf


def dequantize(q, scales, qtype, group, global_scale=None):
    """f32 values of quantized codes (unpacked q, row-major scale codes):
    MX (global_scale None; scales UE8M0) f32(q) * 2^X, NaN for a scale
    0xFF; NVFP4 (qtype f4E2M1FN, scales e4m3 codes) (f32(q) * f32(sf)) / g
    in f32."""
    _check_qtype(qtype)
    qv = _element_values(q, qtype)
    qg = _groups(qv, group)
    with np.errstate(all="ignore"):
        if global_scale is None:
            s = e8m0_values(scales)[..., None]
            # Exact in float64, then one f32 rounding (= the f32 product).
            out = (qg.astype(np.float64) * s).astype(np.float32)
        else:
            sfv = e4m3_values(scales)[..., None]
            out = (qg * sfv) / np.float32(global_scale)
    assert out.dtype == np.float32
    return out.reshape(qv.shape)


def pack_fp4(codes):
    """f4E2M1FN codes (last dim N, even) -> bytes (last dim N / 2), element
    2k in the low nibble, 2k + 1 in the high nibble."""
    c = np.asarray(codes, dtype=np.uint8) & np.uint8(0xF)
    if c.shape[-1] % 2:
        raise ValueError("an odd last dim %d does not pack" % c.shape[-1])
    return (c[..., 0::2] | (c[..., 1::2] << np.uint8(4))).astype(np.uint8)


def unpack_fp4(packed):
    """The inverse of pack_fp4: bytes (last dim B) -> codes (last dim 2B)."""
    p = np.asarray(packed, dtype=np.uint8)
    out = np.empty(p.shape[:-1] + (2 * p.shape[-1],), dtype=np.uint8)
    out[..., 0::2] = p & np.uint8(0xF)
    out[..., 1::2] = p >> np.uint8(4)
    return out


def _roundup(a, b):
    return (a + b - 1) // b * b


def swizzled_size(M, K):
    """Elements of the swizzled_128x4 scale tensor of M rows and K scale
    columns: roundup(M, 128) * roundup(K, 4)."""
    return _roundup(M, 128) * _roundup(K, 4)


def swizzle_offset(m, k, K):
    """Offset of scale (m, k) in the swizzled_128x4 layout with K scale
    columns (numbers or integer arrays): (m / 128) * (K4 * 512) +
    (k / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + (k % 4), K4 =
    roundup(K, 4) / 4."""
    m = np.asarray(m, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    k4 = _roundup(K, 4) // 4
    return ((m // 128) * (k4 * 512) + (k // 4) * 512 + (m % 32) * 16
            + ((m % 128) // 32) * 4 + (k % 4))


def swizzle_scales(scales, M=None, K=None):
    """Row-major scales (shape leading dims + (K,), M = product of the
    leading dims) -> the flat swizzled_128x4 array (same dtype) of
    swizzled_size(M, K) elements, padding 0."""
    s = np.asarray(scales)
    K = s.shape[-1] if K is None else K
    M = s.size // K if M is None else M
    if s.size != M * K:
        raise ValueError("%d scales are not %d x %d" % (s.size, M, K))
    s = s.reshape(M, K)
    out = np.zeros(swizzled_size(M, K), dtype=s.dtype)
    m, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    out[swizzle_offset(m, k, K)] = s
    return out


def unswizzle_scales(flat, M, K):
    """The inverse of swizzle_scales: the (M, K) row-major scales."""
    flat = np.asarray(flat).reshape(-1)
    if flat.size != swizzled_size(M, K):
        raise ValueError("%d elements are not the swizzled size of %d x %d"
                         % (flat.size, M, K))
    m, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    return flat[swizzle_offset(m, k, K)]
