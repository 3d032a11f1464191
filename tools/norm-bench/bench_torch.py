#!/usr/bin/env python3
"""PyTorch CPU baselines for norm-bench, written as Google Benchmark JSON.

Measures eager PyTorch (default allocator) on the cases and shapes of
norm-bench: F.layer_norm, F.rms_norm, the Hugging Face LLaMA RMSNorm, DyT in
eager ops, and a residual add followed by RMSNorm. Each benchmark reports the
median of its repetitions under the name <case>/torch/<M>x<N>/<dtype> with
bytes_per_second, so `norm-bench --merge=FILE` adds it to its table.

--grad adds the backward of LayerNorm, RMSNorm and DyT (eager autograd: the time
of forward + backward less that of the forward alone, over the bytes
norm-bench counts for the gradient ops), --quant the norm + quantization
cases (eager: the norm, then the scale, clamp and `.to(float8_e4m3fn)` or
round and `.to(int8)`, and the block-scaled forms of DESIGN 2d written in
eager ops as block_quantize() does: group amax, scale, `.to(float8_e4m3fn)`
or FP4 codes by a bucketize over the e2m1 grid packed two per byte; its
results equal the project's bit-exact reference; over the bytes norm-bench
counts for the fused op).
"""

import argparse
import json
import statistics
import sys
import time

SHAPES = [(8192, 4096), (4096, 768), (32, 8192), (1, 4096)]
QUICK_SHAPES = [(4096, 4096), (32, 8192)]


def hf_rms_norm(x, w, eps):
    import torch
    dtype = x.dtype
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return w * h.to(dtype)


def cases(torch, F):
    eps = 1e-5
    return {
        "layer_norm": lambda x, r, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps),
        "rms_norm": lambda x, r, w, b: F.rms_norm(x, (x.shape[-1],), w, eps),
        "hf_rms_norm": lambda x, r, w, b: hf_rms_norm(x, w, eps),
        "dyt": lambda x, r, w, b: torch.tanh(0.5 * x) * w + b,
        "add_rms_norm": lambda x, r, w, b: F.rms_norm(x + r, (x.shape[-1],), w, eps),
    }


def timed(fn, repetitions):
    """Median seconds per call of fn (enough calls per repetition for
    ~50 ms)."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    iters = max(1, int(0.05 / once))
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - start) / iters)
    return statistics.median(times)


def result(name, nbytes, seconds):
    print(f"{name:40s} {nbytes / seconds / 1e9:8.2f} GB/s")
    return {"name": name + "_median", "run_name": name,
            "run_type": "aggregate", "aggregate_name": "median",
            "bytes_per_second": nbytes / seconds}


def grad_results(torch, F, shape, repetitions):
    """Backward of LayerNorm and RMSNorm, f32 and bf16: forward + backward
    less forward, bytes as norm-bench's gradient table counts them."""
    rows, cols = shape
    out = []
    for dtype_name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        e = 4 if dtype == torch.float32 else 2
        for op in ("layer_norm", "rms_norm", "dyt"):
            x = torch.randn(rows, cols).to(dtype).requires_grad_(True)
            w = (torch.randn(cols) * 0.2 + 1).to(dtype).requires_grad_(True)
            b = (torch.randn(cols) * 0.1).to(dtype).requires_grad_(True)
            dy = torch.randn(rows, cols).to(dtype)
            a = torch.tensor(0.5).to(dtype).requires_grad_(True)
            if op == "layer_norm":
                params = (x, w, b)
                forward = lambda: F.layer_norm(x, (cols,), w, b, 1e-5)
            elif op == "dyt":
                params = (x, a, w, b)
                forward = lambda: torch.tanh(a * x) * w + b
            else:
                params = (x, w)
                forward = lambda: F.rms_norm(x, (cols,), w, 1e-5)
            both = lambda: torch.autograd.grad(forward(), params, dy)
            t = timed(both, repetitions) - timed(forward, repetitions)
            stats = (2 if op == "layer_norm" else 1) * 4 * rows
            nparams = (3 if op == "layer_norm" else 2) * e * cols
            nbytes = 3 * e * rows * cols + stats + nparams
            if op == "dyt":
                nbytes = 3 * e * rows * cols + 3 * e * cols + 2 * e
            out.append(result(f"{op}_grad/torch/{rows}x{cols}/{dtype_name}",
                              nbytes, max(t, 1e-9)))
    return out


# The block-scaled forms of DESIGN 2d and their group sizes.
BLOCK_SCALED = {"mxfp8": 32, "fp8_1x128": 128, "mxfp4": 32, "nvfp4": 16}
NVFP4_GLOBAL_SCALE = 448.0 * 6.0 / 4.0  # as norm-bench


def e2m1_bounds(torch):
    """Where |v| moves to the next e2m1 code under round to nearest even:
    the midpoints between codes, less one ulp where the tie goes up (to an
    even code), for torch.bucketize(right=False)."""
    mids = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    bounds = torch.tensor(mids, dtype=torch.float32)
    up = torch.tensor([False, True, False, True, False, True, False])
    below = torch.nextafter(bounds, torch.zeros_like(bounds))
    return torch.where(up, below, bounds)


def block_quantize(torch, y, variant, group, bounds):
    """DESIGN 2d in eager PyTorch, as a user writes it without a fused
    kernel: group amax, the scale, the scaled values converted (FP4 by a
    bucketize over the e2m1 grid and packed two codes per byte)."""
    rows, cols = y.shape
    g = y.float().view(rows, cols // group, group)
    amax = g.abs().amax(-1, keepdim=True)
    fp4 = variant in ("mxfp4", "nvfp4")
    if variant == "nvfp4":
        sf = (NVFP4_GLOBAL_SCALE * (amax / 6)).clamp(max=448).to(
            torch.float8_e4m3fn)
        sf32 = sf.float()
        v = g * torch.where(sf32 == 0, 0.0, NVFP4_GLOBAL_SCALE / sf32)
        scales = sf
    else:
        if variant == "fp8_1x128":
            exponent = torch.ceil(torch.log2(amax / 448))
        else:
            exponent = torch.floor(torch.log2(amax)) - (2 if fp4 else 8)
        exponent = exponent.clamp(-127, 127)
        v = g * torch.exp2(-exponent)
        scales = (exponent + 127).to(torch.uint8)
    if not fp4:
        return v.clamp(-448, 448).to(torch.float8_e4m3fn), scales
    codes = torch.bucketize(v.abs(), bounds).to(torch.uint8)
    codes |= torch.signbit(v).to(torch.uint8) << 3
    codes = codes.view(rows, cols // 2, 2)
    return codes[..., 0] | (codes[..., 1] << 4), scales


def quant_results(torch, F, shape, repetitions):
    """RMSNorm (and residual add + RMSNorm) then quantization, bf16 in."""
    rows, cols = shape
    x = torch.randn(rows, cols).to(torch.bfloat16)
    r = torch.randn(rows, cols).to(torch.bfloat16)
    w = (torch.randn(cols) * 0.2 + 1).to(torch.bfloat16)
    fp8 = torch.float8_e4m3fn
    bounds = e2m1_bounds(torch)

    def quantize(y, variant):
        y = y.float()
        if variant == "fp8_static":
            return (y * (1.0 / 0.05)).clamp(-448, 448).to(fp8), None
        if variant == "fp8_g128":
            g = y.view(rows, cols // 128, 128)
            s = (g.abs().amax(-1, keepdim=True) / 448).clamp(min=1e-12)
            return (g / s).clamp(-448, 448).to(fp8).view(rows, cols), s
        qmax = 448.0 if variant == "fp8_token" else 127.0
        s = (y.abs().amax(-1, keepdim=True) / qmax).clamp(min=1e-12)
        v = (y / s).clamp(-qmax, qmax)
        return (v.to(fp8) if variant == "fp8_token"
                else v.round().to(torch.int8)), s

    out = []
    for residual in (False, True):
        for variant in ("fp8_static", "fp8_token", "i8_token", "fp8_g128"):
            def step():
                h = x + r if residual else x
                return quantize(F.rms_norm(h, (cols,), w, 1e-5), variant)
            groups = cols // 128 if variant == "fp8_g128" else 1
            nbytes = 2 * rows * cols * (3 if residual else 1) + rows * cols
            if variant != "fp8_static":
                nbytes += 4 * rows * groups
            name = "{}rms_norm_quant_{}/torch/{}x{}/bf16".format(
                "add_" if residual else "", variant, rows, cols)
            out.append(result(name, nbytes, timed(step, repetitions)))
        for variant, group in BLOCK_SCALED.items():
            def step():
                h = x + r if residual else x
                return block_quantize(torch, F.rms_norm(h, (cols,), w, 1e-5),
                                      variant, group, bounds)
            fp4 = variant in ("mxfp4", "nvfp4")
            nbytes = (2 * rows * cols * (3 if residual else 1) +
                      rows * cols // (2 if fp4 else 1) + rows * cols // group)
            name = "{}rms_norm_quant_{}/torch/{}x{}/bf16".format(
                "add_" if residual else "", variant, rows, cols)
            out.append(result(name, nbytes, timed(step, repetitions)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--grad", action="store_true",
                        help="add the backward cases (8192x4096)")
    parser.add_argument("--quant", action="store_true",
                        help="add the norm + quantization cases")
    parser.add_argument("--only-extra", action="store_true",
                        help="only the --grad/--quant cases")
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("bench_torch: PyTorch is not installed; no torch results",
              file=sys.stderr)
        json.dump({"benchmarks": []}, open(args.out, "w"))
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    results = []
    shapes = QUICK_SHAPES if args.quick else SHAPES
    if args.grad:
        results += grad_results(torch, F, (4096, 4096) if args.quick
                                else (8192, 4096), args.repetitions)
    if args.quant:
        for shape in ([(4096, 4096), (32, 8192)] if args.quick
                      else [(8192, 4096), (32, 8192)]):
            results += quant_results(torch, F, shape, args.repetitions)
    if args.only_extra:
        shapes = []
    for rows, cols in shapes:
        for dtype_name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
            x = (torch.randn(rows, cols) * 1.5 + 0.5).to(dtype)
            r = torch.randn(rows, cols).to(dtype)
            w = (torch.randn(cols) * 0.2 + 1).to(dtype)
            b = (torch.randn(cols) * 0.1).to(dtype)
            element = x.element_size()
            for name, fn in cases(torch, F).items():
                streams = 4 if name == "add_rms_norm" else 2
                nbytes = streams * rows * cols * element
                fn(x, r, w, b)  # warm-up
                # Enough iterations per repetition for ~50 ms.
                start = time.perf_counter()
                fn(x, r, w, b)
                once = max(time.perf_counter() - start, 1e-6)
                iters = max(1, int(0.05 / once))
                rates = []
                for _ in range(args.repetitions):
                    start = time.perf_counter()
                    for _ in range(iters):
                        fn(x, r, w, b)
                    elapsed = time.perf_counter() - start
                    rates.append(nbytes * iters / elapsed)
                bench = f"{name}/torch/{rows}x{cols}/{dtype_name}"
                results.append({
                    "name": bench + "_median",
                    "run_name": bench,
                    "run_type": "aggregate",
                    "aggregate_name": "median",
                    "bytes_per_second": statistics.median(rates),
                })
                print(f"{bench:40s} {statistics.median(rates) / 1e9:8.2f} GB/s")
    json.dump({"context": {"library": "torch " + torch.__version__},
               "benchmarks": results}, open(args.out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
