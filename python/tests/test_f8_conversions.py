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
    module = norm_mlir.jit(f"""
func.func @trunc(%x: tensor<{n}x{source}>) -> tensor<{n}xf8E4M3FN> {{
  %q = arith.truncf %x : tensor<{n}x{source}> to tensor<{n}xf8E4M3FN>
  return %q : tensor<{n}xf8E4M3FN>
}}""", pipeline=f"norm-cpu-pipeline{{lowering={lowering}}}")
    got = np.asarray(module.trunc(x))
    want = x.astype(np.float32).astype(FP8)
    assert same_bits(got, want)


@pytest.mark.parametrize("lowering", ["direct", "linalg"])
@pytest.mark.parametrize("target", ["f32", "f16", "bf16", "f64"])
def test_extf_from_f8(target, lowering):
    codes = np.arange(256, dtype=np.uint8).view(FP8)
    module = norm_mlir.jit(f"""
func.func @ext(%x: tensor<256xf8E4M3FN>) -> tensor<256x{target}> {{
  %y = arith.extf %x : tensor<256xf8E4M3FN> to tensor<256x{target}>
  return %y : tensor<256x{target}>
}}""", pipeline=f"norm-cpu-pipeline{{lowering={lowering}}}")
    got = np.asarray(module.ext(codes)).astype(np.float64)
    want = codes.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite], want[finite])
    # -0.0 stays negative.
    assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
