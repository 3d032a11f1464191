"""norm_mlir.layer_norm_grad / rms_norm_grad / dyt_grad against the f64
reference of the gradient execution tests (itself checked against finite
differences there), and against torch.autograd on the CPU when PyTorch is
installed."""

import os
import sys

import numpy as np
import pytest

import norm_mlir
import normref as ref

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "Integration", "CPU"))
import grad_exec  # noqa: E402

DTYPES = ["f32", "f64", "f16", "bf16"]


def make(rng, dtype, shape, scale=1.0, offset=0.0):
    return (offset + scale * rng.standard_normal(shape)).astype(
        ref.np_dtype(dtype))


def compute(dtype):
    return np.float64 if dtype == "f64" else np.float32


def stats(x, op, eps):
    x64 = x.astype(np.float64).reshape(-1, x.shape[-1])
    mean = x64.mean(axis=1)
    if op == "layer_norm":
        rstd = 1 / np.sqrt(((x64 - mean[:, None]) ** 2).mean(axis=1) + eps)
    else:
        rstd = 1 / np.sqrt((x64 * x64).mean(axis=1) + eps)
    return mean, rstd


def check(got, want, dtype):
    assert got.dtype == ref.np_dtype(dtype) or dtype is None
    err = ref.error(got.astype(np.float64), ref.rnd(want, dtype))
    assert ref.within(err, ref.BOUNDS[dtype]), err


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("params", ["wb", "w", "none"])
def test_layer_norm_grad(dtype, params, rng):
    x = make(rng, dtype, (2, 3, 64))
    dy = make(rng, dtype, (2, 3, 64))
    w = make(rng, dtype, (64,), 0.25, 1.0) if params != "none" else None
    mean, rstd = stats(x, "layer_norm", 1e-5)
    m = mean.astype(compute(dtype)).reshape(2, 3)
    r = rstd.astype(compute(dtype)).reshape(2, 3)
    dx, dw, db = norm_mlir.layer_norm_grad(dy, x, m, r, (64,), w,
                                           has_bias=params == "wb")
    want = grad_exec.reference(
        "layer_norm", dy.astype(np.float64).reshape(6, 64),
        x.astype(np.float64).reshape(6, 64),
        (m.astype(np.float64).reshape(-1), r.astype(np.float64).reshape(-1)),
        None if w is None else w.astype(np.float64), 0.0, 0.0,
        params == "wb")
    check(dx, want[0].reshape(x.shape), dtype)
    assert (dw is None) == (w is None) and (db is None) == (params != "wb")
    if w is not None:
        check(dw, want[1], dtype)
    if db is not None:
        check(db, want[2], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weight", ["row", "scalar", "none"])
def test_rms_norm_grad(dtype, weight, rng):
    x = make(rng, dtype, (5, 48))
    dy = make(rng, dtype, (5, 48))
    w = {"row": make(rng, dtype, (48,), 0.25, 1.0),
         "scalar": make(rng, dtype, (1,), 0.25, 1.0), "none": None}[weight]
    offset = 1.0 if weight == "row" else 0.0
    _, rstd = stats(x, "rms_norm", 1e-6)
    r = rstd.astype(compute(dtype))
    dx, dw = norm_mlir.rms_norm_grad(dy, x, r, (48,), w,
                                     weight_offset=offset)
    want = grad_exec.reference(
        "rms_norm", dy.astype(np.float64), x.astype(np.float64),
        (r.astype(np.float64),), None if w is None else w.astype(np.float64),
        offset, 0.0, False)
    check(dx, want[0], dtype)
    if w is not None:
        assert dw.shape == w.shape
        check(dw, want[1], dtype)
    else:
        assert dw is None


@pytest.mark.parametrize("dtype", DTYPES)
def test_dyt_grad(dtype, rng):
    x = make(rng, dtype, (6, 32))
    dy = make(rng, dtype, (6, 32))
    w = make(rng, dtype, (32,), 0.25, 1.0)
    dx, dw, db, da = norm_mlir.dyt_grad(dy, x, 0.75, w, has_bias=True)
    a_type = "f32" if dtype in ("f16", "bf16") else dtype
    want = grad_exec.reference("dyt", dy.astype(np.float64),
                               x.astype(np.float64), (),
                               w.astype(np.float64), 0.0, 0.75, True)
    check(dx, want[0], dtype)
    check(dw, want[1], dtype)
    check(db, want[2], dtype)
    assert da.shape == () and da.dtype == ref.np_dtype(a_type)
    check(da, np.asarray(want[3]), a_type)


def test_grad_errors(rng):
    x = make(rng, "f32", (4, 8))
    with pytest.raises(TypeError, match="dy must be an array"):
        norm_mlir.rms_norm_grad(x.astype(np.float64), x,
                                np.ones(4, np.float32), (8,))
    with pytest.raises(TypeError, match="rstd must be a float32 array"):
        norm_mlir.rms_norm_grad(x, x, np.ones(3, np.float32), (8,))
    with pytest.raises(ValueError, match="weight_offset needs a weight"):
        norm_mlir.rms_norm_grad(x, x, np.ones(4, np.float32), (8,),
                                weight_offset=1.0)


def test_grads_match_torch_autograd(rng):
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: comparison against "
                        "torch.autograd skipped")
    x = make(rng, "f32", (4, 64))
    dy = make(rng, "f32", (4, 64))
    w = make(rng, "f32", (64,), 0.25, 1.0)
    b = make(rng, "f32", (64,), 0.1)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    y = torch.nn.functional.layer_norm(tx, (64,), tw, tb, 1e-5)
    y.backward(torch.tensor(dy))
    mean, rstd = stats(x, "layer_norm", 1e-5)
    dx, dw, db = norm_mlir.layer_norm_grad(
        dy, x, mean.astype(np.float32), rstd.astype(np.float32), (64,), w,
        has_bias=True)
    for got, want in ((dx, tx.grad), (dw, tw.grad), (db, tb.grad)):
        assert ref.within(ref.error(got, want.numpy().astype(np.float64)),
                          1e-5)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    y = torch.nn.functional.rms_norm(tx, (64,), tw, 1e-6)
    y.backward(torch.tensor(dy))
    _, rstd = stats(x, "rms_norm", 1e-6)
    dx, dw = norm_mlir.rms_norm_grad(dy, x, rstd.astype(np.float32), (64,), w)
    for got, want in ((dx, tx.grad), (dw, tw.grad)):
        assert ref.within(ref.error(got, want.numpy().astype(np.float64)),
                          1e-5)
    # DyT, also with tanh mostly saturated (alpha x beyond 4), where
    # torch.autograd's own f32 1 - t * t is inexact: checked against
    # autograd in float64 (and in float32 when not saturated).
    for alpha, shift in ((0.8, 0.0), (4.0, 2.0)):
        xs = (x + shift).astype(np.float32)
        grads = []
        for dtype in (torch.float32, torch.float64):
            tx = torch.tensor(xs, dtype=dtype, requires_grad=True)
            ta = torch.tensor([alpha], dtype=dtype, requires_grad=True)
            tw = torch.tensor(w, dtype=dtype, requires_grad=True)
            tb = torch.tensor(b, dtype=dtype, requires_grad=True)
            y = torch.tanh(ta * tx) * tw + tb
            y.backward(torch.tensor(dy, dtype=dtype))
            grads.append([t.grad.numpy().astype(np.float64).reshape(-1)
                          for t in (tx, tw, tb, ta)])
        got = norm_mlir.dyt_grad(dy, xs, np.float32(alpha), w, has_bias=True)
        for g, want32, want64 in zip(got, *grads):
            g = np.asarray(g, np.float64).reshape(-1)
            assert ref.within(ref.error(g, want64), 1e-5)
            if shift == 0.0:
                assert ref.within(ref.error(g, want32), 1e-5)


@pytest.mark.parametrize("op", ["layer_norm", "rms_norm", "dyt"])
def test_grads_deterministic_across_threads_and_runs(op, rng):
    """The same bits on every run and for 1 and 2 threads: the row loops sum
    the parameter gradients over blocks of rows whose size does not depend
    on the thread count, then over the blocks in order (1000 rows: 16
    blocks, the last one partial); the linalg decomposition (dyt) sums in
    one sequential loop."""
    if _openmp_missing():
        pytest.skip("the OpenMP runtime (libomp) is not installed")
    m, n = 1000, 256
    saved = {"layer_norm": "mean(%s) rstd(%r)", "rms_norm": "rstd(%r)",
             "dyt": "alpha(%a)"}[op]
    args = {"layer_norm": "%s: tensor<1000xf32>, %r: tensor<1000xf32>",
            "rms_norm": "%r: tensor<1000xf32>", "dyt": "%a: tensor<f32>"}[op]
    types = {"layer_norm": "tensor<1000xf32>, tensor<1000xf32>",
             "rms_norm": "tensor<1000xf32>", "dyt": "tensor<f32>"}[op]
    results = "tensor<1000x256xf32>, tensor<256xf32>" + (
        ", tensor<f32>" if op == "dyt" else "")
    names = "%dx, %dw" + (", %da" if op == "dyt" else "")
    source = f"""
func.func @main(%dy: tensor<1000x256xf32>, %x: tensor<1000x256xf32>, {args},
                %w: tensor<256xf32>) -> ({results}) {{
  {names} = norm.{op}_grad %dy, %x {saved} weight(%w)
      : (tensor<1000x256xf32>, tensor<1000x256xf32>, {types}, tensor<256xf32>)
        -> ({results})
  return {names} : {results}
}}"""
    x = make(rng, "f32", (m, n))
    dy = make(rng, "f32", (m, n))
    w = make(rng, "f32", (n,), 0.25, 1.0)
    mean, rstd = stats(x, "layer_norm" if op == "layer_norm" else "rms_norm",
                       1e-5)
    saved_args = {"layer_norm": [mean.astype(np.float32),
                                 rstd.astype(np.float32)],
                  "rms_norm": [rstd.astype(np.float32)],
                  "dyt": [np.array(0.5, np.float32)]}[op]
    outputs = []
    for threads in (1, 2, 2):
        module = norm_mlir.jit(source,
                               f"norm-cpu-pipeline{{threads={threads}}}")
        outputs.append(module.main(dy, x, *saved_args, w))
    for other in outputs[1:]:
        for a, b in zip(outputs[0], other):
            assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def _openmp_missing():
    import norm_mlir._norm_mlir as native
    return not native.openmp_runtime()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize("residual", [False, True])
def test_forward_return_stats(dtype, op, residual, rng):
    """The forward with return_stats: y (and s) as without it, and the
    statistics of s in the compute type, against the f64 reference."""
    x = make(rng, dtype, (2, 3, 80), offset=3.0)
    r = make(rng, dtype, (2, 3, 80)) if residual else None
    w = make(rng, dtype, (80,), 0.25, 1.0)
    eps = 1e-5
    kwargs = {"residual": r}
    if op == "layer_norm":
        out = norm_mlir.layer_norm(x, (80,), w, None, eps,
                                   return_stats=True, **kwargs)
        plain = norm_mlir.layer_norm(x, (80,), w, None, eps, **kwargs)
    else:
        out = norm_mlir.rms_norm(x, (80,), w, eps, return_stats=True,
                                 **kwargs)
        plain = norm_mlir.rms_norm(x, (80,), w, eps, **kwargs)
    plain = plain if isinstance(plain, tuple) else (plain,)
    # y and residual_out are bit-identical to the op without statistics.
    for got, want in zip(out, plain):
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    nstats = 2 if op == "layer_norm" else 1
    assert len(out) == len(plain) + nstats
    s = out[1] if residual else x
    mean, rstd = stats(s, op, eps)
    want = (mean, rstd) if op == "layer_norm" else (rstd,)
    for got, value in zip(out[len(plain):], want):
        assert got.shape == (2, 3) and got.dtype == compute(dtype)
        check(got, value.reshape(2, 3), "f64" if dtype == "f64" else "f32")


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_training_step(dtype, rng):
    """Forward statistics straight into the gradient op: the same gradients
    as from statistics computed here."""
    x = make(rng, dtype, (7, 96), offset=2.0)
    dy = make(rng, dtype, (7, 96))
    w = make(rng, dtype, (96,), 0.25, 1.0)
    b = make(rng, dtype, (96,), 0.1)
    _, mean, rstd = norm_mlir.layer_norm(x, (96,), w, b, return_stats=True)
    dx, dw, db = norm_mlir.layer_norm_grad(dy, x, mean, rstd, (96,), w,
                                           has_bias=True)
    m64, r64 = stats(x, "layer_norm", 1e-5)
    want = grad_exec.reference(
        "layer_norm", dy.astype(np.float64), x.astype(np.float64),
        (m64, r64), w.astype(np.float64), 0.0, 0.0, True)
    check(dx, want[0], dtype)
    check(dw, want[1], dtype)
    check(db, want[2], dtype)


@pytest.mark.parametrize("quant", ["fp8", {"dtype": "int8", "group_size": 32}])
def test_return_stats_with_fused_quantization(quant, rng):
    """A quantized training forward: q, scales, residual_out and the
    statistics of the fused kernel equal those of the norm with statistics
    followed by a separate quantization."""
    x = make(rng, "bf16", (5, 128))
    r = make(rng, "bf16", (5, 128))
    w = make(rng, "bf16", (128,), 0.25, 1.0)
    q, scales, s, rstd = norm_mlir.rms_norm(x, (128,), w, 1e-6, residual=r,
                                            quant=quant, return_stats=True)
    y, s2, rstd2 = norm_mlir.rms_norm(x, (128,), w, 1e-6, residual=r,
                                      return_stats=True)
    kwargs = dict(quant) if isinstance(quant, dict) else {"dtype": quant}
    q2, scales2 = norm_mlir.quantize(y, **kwargs)
    for got, want in ((q, q2), (scales, scales2), (s, s2), (rstd, rstd2)):
        assert np.array_equal(np.asarray(got).view(np.uint8),
                              np.asarray(want).view(np.uint8))
