"""arith.truncf to f8E4M3FN and arith.extf from it through norm-cpu-pipeline
(norm-expand-f8-conversions) against ml_dtypes, bit for bit: every e4m3
value, the ties between neighbours and one f32 ulp around them, overflow
(NaN above 464), infinities, NaN payloads, f32 denormals and random bit
patterns; from f32, f16 and bf16, scalar loops (the linalg lowering) and
vectors (the direct lowering vectorizes the elementwise ops)."""

import ml_dtypes
import numpy as np
import pytest

import norm_mlir

FP8 = np.dtype(ml_dtypes.float8_e4m3fn)
TYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def conversion(op, source, target, n, lowering):
    """The JIT module of `@convert`: `arith.<op>` of a tensor<n x source>
    to tensor<n x target>, through norm-cpu-pipeline with `lowering`."""
    return norm_mlir.jit(f"""
func.func @convert(%x: tensor<{n}x{source}>) -> tensor<{n}x{target}> {{
  %y = arith.{op} %x : tensor<{n}x{source}> to tensor<{n}x{target}>
  return %y : tensor<{n}x{target}>
}}""", pipeline=f"norm-cpu-pipeline{{lowering={lowering}}}")


def coverage(rng):
    codes = np.arange(256, dtype=np.uint8).view(FP8).astype(np.float32)
    finite = np.unique(codes[np.isfinite(codes)])
    ties = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(
        np.float32)
    special = np.array([448, 449, 464, 464.0001, 465, 480, 1e30, -1e30,
                        np.inf, -np.inf, 2.0**-10, 2.0**-11, 1e-40, -1e-40,
                        0.0, -0.0], dtype=np.float32)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF],
                    dtype=np.uint32).view(np.float32)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    return np.concatenate([finite, ties,
                           np.nextafter(ties, np.float32(np.inf)),
                           np.nextafter(ties, np.float32(-np.inf)), special,
                           nans, bits]).astype(np.float32)


def same_bits(a, b):
    """Equal encodings, any NaN matching any NaN of the same sign."""
    a8, b8 = a.view(np.uint8), b.view(np.uint8)
    nan_a = (a8 & 0x7F) == 0x7F
    nan_b = (b8 & 0x7F) == 0x7F
    return np.array_equal(nan_a, nan_b) and np.array_equal(
        a8[~nan_a], b8[~nan_b]) and np.array_equal(a8[nan_a] >> 7,
                                                   b8[nan_b] >> 7)


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("source", ["f32", "f16", "bf16"])
def test_truncf_to_f8(source, lowering, rng):
    v = coverage(rng)
    with np.errstate(over="ignore", invalid="ignore"):
        x = v.astype(TYPES[source])
    n = x.size
    module = conversion("truncf", source, "f8E4M3FN", n, lowering)
    got = np.asarray(module.convert(x))
    want = x.astype(np.float32).astype(FP8)
    assert same_bits(got, want)


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("target", ["f32", "f16", "bf16", "f64"])
def test_extf_from_f8(target, lowering):
    codes = np.arange(256, dtype=np.uint8).view(FP8)
    module = conversion("extf", "f8E4M3FN", target, 256, lowering)
    got = np.asarray(module.convert(codes)).astype(np.float64)
    want = codes.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite], want[finite])
    # -0.0 stays negative.
    assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite]))


FP4 = np.dtype(ml_dtypes.float4_e2m1fn)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)


def narrow_coverage(rng, finite):
    """The values of a narrow format, the ties between neighbours and one
    f32 ulp around them, saturation, specials and random bit patterns."""
    finite = np.unique(finite.astype(np.float32))
    ties = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(
        np.float32)
    special = np.array([6.0, 6.5, 7.0, 1e30, -1e30, np.inf, -np.inf,
                        2.0**-127, 2.0**-128, 1.5 * 2.0**-127,
                        1.49 * 2.0**-127, 2.0**-149, 1.5 * 2.0**127,
                        1.49 * 2.0**127, 3.4e38, 1e-40, -1e-40, 0.0, -0.0],
                       dtype=np.float32)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF],
                    dtype=np.uint32).view(np.float32)
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    return np.concatenate([finite, -finite, ties, -ties,
                           np.nextafter(ties, np.float32(np.inf)),
                           np.nextafter(ties, np.float32(-np.inf)), special,
                           nans, bits]).astype(np.float32)


def e2m1_codes(x):
    """The f4E2M1FN codes of f32 values as the CPU lowering defines them:
    ml_dtypes' conversion, but NaN to +0 (ml_dtypes gives the sign of the
    NaN to its zero)."""
    codes = x.astype(FP4).view(np.uint8) & 0xF
    return np.where(np.isnan(x), 0, codes).astype(np.uint8)


def unpack(packed, n):
    """f4 codes of a packed byte buffer (element 2k in the low nibble)."""
    packed = np.asarray(packed).view(np.uint8).reshape(-1)
    codes = np.empty(packed.size * 2, np.uint8)
    codes[0::2] = packed & 0xF
    codes[1::2] = packed >> 4
    return codes[:n]


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("source", ["f32", "f16", "bf16"])
def test_truncf_to_f4(source, lowering, rng):
    grid = np.arange(16, dtype=np.uint8).view(FP4).astype(np.float32)
    v = narrow_coverage(rng, grid)
    v = v[: v.size - v.size % 2]
    with np.errstate(over="ignore", invalid="ignore"):
        x = v.astype(TYPES[source])
    n = x.size
    module = conversion("truncf", source, "f4E2M1FN", n, lowering)
    got = unpack(module.convert(x), n)
    want = e2m1_codes(x.astype(np.float32))
    assert np.array_equal(got, want), np.flatnonzero(got != want)[:8]


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("source", ["f32", "f16", "bf16"])
def test_truncf_to_e8m0(source, lowering, rng):
    powers = 2.0 ** np.arange(-127, 128, dtype=np.float64)
    v = narrow_coverage(rng, powers)
    with np.errstate(over="ignore", invalid="ignore"):
        x = v.astype(TYPES[source])
    n = x.size
    module = conversion("truncf", source, "f8E8M0FNU", n, lowering)
    got = np.asarray(module.convert(x)).view(np.uint8)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float32).astype(E8M0).view(np.uint8)
    assert np.array_equal(got, want), np.flatnonzero(got != want)[:8]


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("target", ["f32", "f16", "bf16", "f64"])
def test_extf_from_f4(target, lowering):
    codes = np.arange(16, dtype=np.uint8)
    packed = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
    module = conversion("extf", "f4E2M1FN", target, 16, lowering)
    got = np.asarray(module.convert(packed)).astype(np.float64)
    want = codes.view(FP4).astype(np.float64)
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("target", ["f32", "f16", "bf16", "f64"])
def test_extf_from_e8m0(target, lowering):
    codes = np.arange(256, dtype=np.uint8).view(E8M0)
    module = conversion("extf", "f8E8M0FNU", target, 256, lowering)
    got = np.asarray(module.convert(codes)).astype(np.float64)
    with np.errstate(over="ignore"):
        want = codes.astype(np.float32).astype(TYPES.get(
            target, np.float64)).astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite], want[finite])
