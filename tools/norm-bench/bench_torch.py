#!/usr/bin/env python3
"""PyTorch CPU baselines for norm-bench, written as Google Benchmark JSON.

Measures eager PyTorch (default allocator) on the cases and shapes of
norm-bench: F.layer_norm, F.rms_norm, the Hugging Face LLaMA RMSNorm, DyT in
eager ops, and a residual add followed by RMSNorm. Each benchmark reports the
median of its repetitions under the name <case>/torch/<M>x<N>/<dtype> with
bytes_per_second, so `norm-bench --merge=FILE` adds it to its table.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
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
