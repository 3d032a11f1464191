#!/usr/bin/env python3
"""Generates the frontend IR that the norm-raise and norm-fuse-residual tests
run on, with the real torch-mlir, from real PyTorch modules.

    pip install torch torch-mlir packaging ml_dtypes
    python3 utils/gen-frontend-ir.py [--out test/Transforms/Inputs]

Writes, for the linalg-on-tensors and the TOSA output of torch-mlir:
  torch-<kind>.mlir        one case per `// -----` split, function @<case>
  torch-block-<kind>.mlir  two pre-norm transformer blocks and a final norm
  torch-quant-<kind>.mlir  a norm then a quantization to FP8 or int8
                           (static, per-token), as serving stacks write it
  torch-train-<kind>.mlir  training steps: the forward and its gradients
                           (dx and the parameters'), traced through autograd
                           with make_fx (as aot_autograd does) and imported

The test suite does not run this script (PyTorch is large); its output is
committed. Parameters are drawn from a fixed seed, so reruns with the same
torch and torch-mlir versions give the same files.
"""

import argparse
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_mlir import fx

D = 32
SHAPE = (2, 4, D)

# ---------------------------------------------------------------------------
# Modules, as model code writes them.
# ---------------------------------------------------------------------------


class HFRMSNorm(nn.Module):
    """Hugging Face LlamaRMSNorm."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class T5StyleRMSNorm(nn.Module):
    """x*x, the mean without keepdim then unsqueeze, rsqrt on the left."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        ms = (x * x).mean(-1).unsqueeze(-1)
        return (torch.rsqrt(ms + self.eps) * x) * self.weight


class SumTimesInverseNRMSNorm(nn.Module):
    """The mean as a sum times 1/N, 1/sqrt as a division, weight first."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        ms = x.pow(2).sum(-1, keepdim=True) * (1.0 / x.shape[-1])
        return self.weight * (x / torch.sqrt(ms + self.eps))


class GemmaRMSNorm(nn.Module):
    """Gemma: (1 + w), computed in float32."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(d))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


class OutsideSqrtRMSNorm(nn.Module):
    """Epsilon added to the root: x / (rms(x) + eps)."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True))
        return x / (rms + self.eps) * self.weight


class ClampRMSNorm(nn.Module):
    """The root mean square clamped from below."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        rms = x.pow(2).mean(-1, keepdim=True).sqrt().clamp(min=self.eps)
        return x / rms * self.weight


class ScaleNorm(nn.Module):
    """ScaleNorm (Nguyen & Salazar): g * x / max(||x||, eps)."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.tensor(d**0.5))

    def forward(self, x):
        norm = torch.norm(x, dim=-1, keepdim=True).clamp(min=self.eps)
        return x / norm * self.g


class DyT(nn.Module):
    """Dynamic Tanh (Zhu et al., CVPR 2025)."""

    def __init__(self, d, alpha_init=0.5):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1) * alpha_init)
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return torch.tanh(self.alpha * x) * self.weight + self.bias


class NativeLayerNorm(nn.Module):
    """aten.native_layer_norm; with `stats`, mean and rstd are returned."""

    def __init__(self, d, stats):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.stats = stats

    def forward(self, x):
        y, mean, rstd = torch.ops.aten.native_layer_norm(
            x, [x.shape[-1]], self.weight, self.bias, 1e-5)
        return (y, mean, rstd) if self.stats else y


class WeightlessRMSNorm(nn.Module):
    """x * rsqrt(mean(x^2) + eps), no parameter (any row length)."""

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class WeightlessLayerNorm(nn.Module):
    """F.layer_norm over the last dim, whatever its size."""

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],))


class UnbiasedLayerNorm(nn.Module):
    """Normalizes by the unbiased variance (not a LayerNorm)."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=True)
        return (x - mean) / torch.sqrt(var + 1e-5)


class OtherDimRMSNorm(nn.Module):
    """The mean square over dim 1 (not the trailing dim)."""

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6)


class RMSNormReturningVariance(nn.Module):
    """An RMSNorm whose mean square is also returned."""

    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + 1e-6)), variance


class TwoEpsilonRMSNorm(nn.Module):
    """Epsilon inside and outside the root (matches no epsilon mode)."""

    def forward(self, x):
        ms = x.pow(2).mean(-1, keepdim=True)
        return x / (torch.sqrt(ms + 1e-6) + 1e-5)


class ChannelScaledLayerNorm(nn.Module):
    """A LayerNorm scaled along dim 1, not along the normalized dim."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(SHAPE[1], 1))

    def forward(self, x):
        return F.layer_norm(x, [x.shape[-1]]) * self.scale


class TanhGELU(nn.Module):
    """tanh-approximated GELU: a tanh of a scaled value, not DyT."""

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


class Block(nn.Module):
    """A pre-norm transformer block: RMSNorm, a token-wise mixing layer and
    a SiLU MLP, each added to the residual stream."""

    def __init__(self, d, hidden):
        super().__init__()
        self.norm1 = nn.RMSNorm(d, eps=1e-6)
        self.mix = nn.Linear(d, d, bias=False)
        self.norm2 = nn.RMSNorm(d, eps=1e-6)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        h = x + self.mix(self.norm1(x))
        return h + self.down(F.silu(self.up(self.norm2(h))))


class LayerNormBlockModel(nn.Module):
    """A GPT-2 style block (nn.LayerNorm, linear layers with biases, GELU)
    and a final nn.LayerNorm."""

    def __init__(self, d, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.mix = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = x + self.mix(self.norm1(x))
        h = h + self.down(F.gelu(self.up(self.norm2(h))))
        return self.norm(h)


class PreNormModel(nn.Module):
    def __init__(self, d, hidden, layers=2):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d, hidden) for _ in range(layers))
        self.norm = nn.RMSNorm(d, eps=1e-6)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


# ---------------------------------------------------------------------------
# Cases: (name, module, dtype, what the test expects).
# ---------------------------------------------------------------------------

BF16 = torch.bfloat16
F32 = torch.float32

CASES = [
    ("layer_norm", lambda: nn.LayerNorm(D), F32,
     "nn.LayerNorm (aten.layer_norm)"),
    ("layer_norm_bf16", lambda: nn.LayerNorm(D), BF16,
     "nn.LayerNorm on bf16: extf, f32 statistics, truncf"),
    ("layer_norm_2d", lambda: nn.LayerNorm((SHAPE[1], D)), F32,
     "nn.LayerNorm over the last two dims"),
    ("layer_norm_no_affine",
     lambda: nn.LayerNorm(D, elementwise_affine=False), F32,
     "nn.LayerNorm without weight and bias"),
    ("native_layer_norm", lambda: NativeLayerNorm(D, stats=False), F32,
     "aten.native_layer_norm, mean and rstd dead"),
    ("rms_norm", lambda: nn.RMSNorm(D, eps=1e-6), F32,
     "nn.RMSNorm (aten.rms_norm)"),
    ("rms_norm_bf16", lambda: nn.RMSNorm(D, eps=1e-6), BF16,
     "nn.RMSNorm on bf16: arithmetic in bf16"),
    ("layer_norm_dynamic", lambda: nn.LayerNorm(D), F32,
     "nn.LayerNorm with a dynamic batch dim"),
    ("rms_norm_dynamic", lambda: HFRMSNorm(D), F32,
     "LlamaRMSNorm with a dynamic batch dim"),
    ("rms_norm_no_eps", lambda: nn.RMSNorm(D), F32,
     "nn.RMSNorm with eps=None: torch-mlir adds no epsilon"),
    ("hf_rms_norm", lambda: HFRMSNorm(D), F32,
     "Hugging Face LlamaRMSNorm: pow(x, 2), rsqrt, weight on the left"),
    ("hf_rms_norm_bf16", lambda: HFRMSNorm(D), BF16,
     "LlamaRMSNorm on bf16: weight * x.to(bf16) (before_weight)"),
    ("t5_rms_norm", lambda: T5StyleRMSNorm(D), F32,
     "x * x, mean without keepdim + unsqueeze, rsqrt * x"),
    ("rms_norm_sum_div", lambda: SumTimesInverseNRMSNorm(D), F32,
     "sum * (1/N), x / sqrt(ms + eps), w * (...)"),
    ("gemma_rms_norm_bf16", lambda: GemmaRMSNorm(D), BF16,
     "Gemma RMSNorm: (1 + w) in f32"),
    ("rms_norm_outside_sqrt", lambda: OutsideSqrtRMSNorm(D), F32,
     "x / (sqrt(mean(x^2)) + eps)"),
    ("rms_norm_clamp", lambda: ClampRMSNorm(D), F32,
     "x / sqrt(mean(x^2)).clamp(min=eps)"),
    ("scale_norm", lambda: ScaleNorm(D), F32,
     "ScaleNorm: g * x / norm(x).clamp(min=eps)"),
    ("dyt", lambda: DyT(D), F32, "DyT"),
    ("layer_norm_channel_scale", lambda: ChannelScaledLayerNorm(), F32,
     "LayerNorm then a scale along dim 1, which stays outside the op"),
    ("dyt_bf16", lambda: DyT(D), BF16, "DyT on bf16"),
    ("native_layer_norm_stats", lambda: NativeLayerNorm(D, stats=True),
     F32, "native_layer_norm whose mean and rstd are returned"),
    # Not raised.
    ("neg_unbiased_variance", lambda: UnbiasedLayerNorm(), F32,
     "normalization by the unbiased variance"),
    ("neg_other_dim", lambda: OtherDimRMSNorm(), F32,
     "the mean square over dim 1"),
    ("neg_variance_used", lambda: RMSNormReturningVariance(D), F32,
     "the mean square is also returned"),
    ("neg_two_epsilons", lambda: TwoEpsilonRMSNorm(), F32,
     "epsilon inside and outside the root"),
    ("neg_tanh_gelu", lambda: TanhGELU(), F32,
     "tanh-approximated GELU (not a candidate)"),
    # Normalized dims of dynamic size: torch-mlir divides by
    # sitofp(tensor.dim).
    ("rms_norm_dynamic_hidden", lambda: WeightlessRMSNorm(), F32,
     "an RMSNorm without parameters, batch and hidden dims dynamic"),
    ("layer_norm_dynamic_hidden", lambda: WeightlessLayerNorm(), F32,
     "F.layer_norm over the last dim, batch and hidden dims dynamic"),
]


# ---------------------------------------------------------------------------
# Quantization cases: (name, module, dtype, what), a norm then a
# quantization as vLLM's reference implementations write it.
# ---------------------------------------------------------------------------

FP8 = torch.float8_e4m3fn


class NormThenQuant(nn.Module):
    """`norm(x)` in f32, then a static scale or a per-token one, clamped to
    the type's range and converted (FP8), or rounded and converted (int8);
    the dynamic forms also return their scales."""

    def __init__(self, norm, mode):
        super().__init__()
        self.norm = norm
        self.mode = mode

    def forward(self, x):
        y = self.norm(x).float()
        if self.mode == "fp8_static":
            return (y / 0.05).clamp(-448.0, 448.0).to(FP8)
        qmax = 127.0 if self.mode == "i8_token" else 448.0
        s = (y.abs().amax(-1, keepdim=True) / qmax).clamp(min=1e-12)
        if self.mode == "i8_token":
            return (y / s).round().clamp(-128.0, 127.0).to(torch.int8), s
        return (y / s).clamp(-448.0, 448.0).to(FP8), s


QUANT_CASES = [
    ("rms_norm_fp8_static", lambda: NormThenQuant(HFRMSNorm(D), "fp8_static"),
     BF16, "LlamaRMSNorm, then y / s clamped to +-448 and .to(float8_e4m3fn)"),
    ("rms_norm_fp8_token", lambda: NormThenQuant(HFRMSNorm(D), "fp8_token"),
     BF16, "LlamaRMSNorm, per-token scale amax / 448 (floor 1e-12)"),
    ("rms_norm_i8_token", lambda: NormThenQuant(HFRMSNorm(D), "i8_token"),
     BF16, "LlamaRMSNorm, per-token int8: round, clamp, .to(int8)"),
    ("layer_norm_fp8_static",
     lambda: NormThenQuant(nn.LayerNorm(D), "fp8_static"), BF16,
     "nn.LayerNorm, static FP8"),
    ("layer_norm_fp8_token_f32",
     lambda: NormThenQuant(nn.LayerNorm(D), "fp8_token"), F32,
     "nn.LayerNorm on f32, per-token FP8"),
]


# ---------------------------------------------------------------------------
# Training cases: (name, module, dtype, what). Each is traced as one
# training step, `y = module(x)` then `torch.autograd.grad(y, (x, *params),
# dy)`, with make_fx and torch-mlir's decomposition table (what
# aot_autograd hands a backend), so the backward is autograd's and
# `torch._decomp`'s own.
# ---------------------------------------------------------------------------


class ResidualRMSNorm(nn.Module):
    """A residual around the norm: x's gradient is dy plus the norm's."""

    def __init__(self, d):
        super().__init__()
        self.norm = HFRMSNorm(d)

    def forward(self, x):
        return x + self.norm(x)


class ResidualSumLayerNorm(nn.Module):
    """The norm of a residual sum computed in the step (`x + h`, h the
    residual stream, a parameter here so that it gets a gradient)."""

    def __init__(self, d):
        super().__init__()
        self.h = nn.Parameter(torch.zeros(*SHAPE))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.h)


TRAIN_CASES = [
    ("layer_norm_train", lambda: nn.LayerNorm(D), F32,
     "nn.LayerNorm: native_layer_norm_backward decomposed"),
    ("layer_norm_train_bf16", lambda: nn.LayerNorm(D), BF16,
     "nn.LayerNorm on bf16"),
    ("layer_norm_train_no_affine",
     lambda: nn.LayerNorm(D, elementwise_affine=False), F32,
     "nn.LayerNorm without weight and bias"),
    ("rms_norm_train", lambda: HFRMSNorm(D), F32,
     "LlamaRMSNorm: autograd of pow, mean, rsqrt (pow(r, 3), pow(x, 1))"),
    ("rms_norm_train_bf16", lambda: HFRMSNorm(D), BF16,
     "LlamaRMSNorm on bf16 (f32 statistics, dy * w in bf16)"),
    ("rms_norm_residual_train", lambda: ResidualRMSNorm(D), F32,
     "x + LlamaRMSNorm(x): dx is dy plus the norm's gradient"),
    ("layer_norm_residual_sum_train", lambda: ResidualSumLayerNorm(D), F32,
     "nn.LayerNorm(x + h): the normalized input is computed in the step"),
    ("dyt_train", lambda: DyT(D), F32,
     "DyT: 1 - t * t with an integer 1, dalpha summed over both dims"),
    ("rms_norm_train_aten", lambda: nn.RMSNorm(D, eps=1e-6), F32,
     "nn.RMSNorm (aten.rms_norm) and its backward"),
    ("rms_norm_train_aten_bf16", lambda: nn.RMSNorm(D, eps=1e-6), BF16,
     "nn.RMSNorm on bf16"),
    ("rms_norm_train_aten_no_weight",
     lambda: nn.RMSNorm(D, eps=1e-6, elementwise_affine=False), F32,
     "nn.RMSNorm without a weight"),
    ("gemma_rms_norm_train", lambda: GemmaRMSNorm(D), F32,
     "Gemma RMSNorm: (1 + w), the weight's gradient through the offset"),
    ("gemma_rms_norm_train_bf16", lambda: GemmaRMSNorm(D), BF16,
     "Gemma RMSNorm on bf16, computed in f32"),
    ("t5_rms_norm_train", lambda: T5StyleRMSNorm(D), F32,
     "x * x, mean without keepdim, rsqrt on the left"),
    ("layer_norm_train_weight_only", lambda: nn.LayerNorm(D, bias=False),
     F32, "nn.LayerNorm with a weight and no bias"),
    ("layer_norm_train_2d", lambda: nn.LayerNorm((SHAPE[1], D)), F32,
     "nn.LayerNorm over the last two dims"),
    ("dyt_train_bf16", lambda: DyT(D), BF16, "DyT on bf16"),
]


def export_train(module, dtype, name, output_type, symbolic=False):
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    module = module.to(dtype)
    names = [n for n, _ in module.named_parameters()]

    def step(x, dy, *params):
        y = torch.func.functional_call(module, dict(zip(names, params)), (x,))
        return (y,) + torch.autograd.grad(y, (x,) + params, dy)

    gen = torch.Generator().manual_seed(7)
    x = torch.randn(*SHAPE, generator=gen).to(dtype).requires_grad_(True)
    dy = torch.randn(*SHAPE, generator=gen).to(dtype)
    params = tuple(p.detach().clone().requires_grad_(True)
                   for p in module.parameters())
    mode = "symbolic" if symbolic else "real"
    gm = make_fx(step, decomposition_table=get_decomposition_table(),
                 tracing_mode=mode)(x, dy, *params)
    # The traced step may update values in place (nn.RMSNorm's backward
    # does): functionalized, as aot_autograd hands graphs to a backend.
    if any(str(n.target).split(".")[-2].endswith("_")
           for n in gm.graph.nodes if n.op == "call_function"
           and str(n.target).count(".") >= 2):
        gm = make_fx(torch.func.functionalize(gm),
                     decomposition_table=get_decomposition_table(),
                     tracing_mode=mode)(
            x.detach(), dy, *(p.detach() for p in params))
    return str(fx.stateless_fx_import(gm, output_type=output_type,
                                      model_name=name))


# The step traced with every size symbolic (make_fx's symbolic tracing, as
# torch.compile's dynamic=True does): every dim of x and the parameters is
# dynamic, the results keep the sizes the parameters' uses fixed, and
# torch-mlir broadcasts some row values through tensor.extract at
# linalg.index coordinates selected on the sizes.
SYMBOLIC_TRAIN_CASES = [
    ("layer_norm_train_symbolic", lambda: nn.LayerNorm(D), F32,
     "nn.LayerNorm, every size symbolic"),
    ("rms_norm_train_symbolic", lambda: HFRMSNorm(D), F32,
     "LlamaRMSNorm, every size symbolic"),
]


def export_train_symbolic(module, dtype, name, output_type):
    return export_train(module, dtype, name, output_type, symbolic=True)


def export_layer_norm_backward(output_type):
    """native_layer_norm_backward on its own: mean and rstd as arguments."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    table = get_decomposition_table()
    table.update(torch._decomp.get_decompositions(
        [torch.ops.aten.native_layer_norm_backward]))

    def backward(dy, x, mean, rstd, weight, bias):
        return torch.ops.aten.native_layer_norm_backward(
            dy, x, [D], mean, rstd, weight, bias, [True, True, True])

    args = (torch.randn(*SHAPE), torch.randn(*SHAPE),
            torch.randn(SHAPE[0], SHAPE[1], 1),
            torch.rand(SHAPE[0], SHAPE[1], 1) + 0.5, torch.randn(D),
            torch.randn(D))
    gm = make_fx(backward, decomposition_table=table)(*args)
    return str(fx.stateless_fx_import(gm, output_type=output_type,
                                      model_name="layer_norm_backward_only"))


# The same modules through aot_autograd with the partitioner torch.compile
# uses for training (min-cut rematerialization): a forward graph that
# returns what the backward saves (for the norms, x and the statistics),
# and a backward graph of its own that takes them as arguments. Each graph
# is one case (`<name>_fw`, `<name>_bw`).
AOT_MODULES = [
    ("layer_norm_aot", lambda: nn.LayerNorm(D), F32, "nn.LayerNorm"),
    ("rms_norm_aot", lambda: HFRMSNorm(D), F32, "LlamaRMSNorm"),
    ("rms_norm_aot_aten_bf16", lambda: nn.RMSNorm(D, eps=1e-6), BF16,
     "nn.RMSNorm on bf16"),
    ("dyt_aot", lambda: DyT(D), F32, "DyT (tanh recomputed in the backward)"),
    ("blocks_aot", lambda: PreNormModel(D, 2 * D, layers=4), F32,
     "four pre-norm blocks (nn.RMSNorm, nn.Linear, SiLU, residual adds) and "
     "a final nn.RMSNorm: nine norm backwards, x's gradient accumulated "
     "through the residual stream"),
    ("layer_norm_block_aot", lambda: LayerNormBlockModel(D, 2 * D), F32,
     "a GPT-2 style block and a final nn.LayerNorm: the backward recomputes "
     "the block's residual sums, biases included"),
    # aot_autograd's default partitioner (a custom backend's default) saves
    # the normalized input instead of x and the mean.
    ("layer_norm_aot_default", lambda: nn.LayerNorm(D), F32,
     "nn.LayerNorm, aot_autograd's default partitioner (the backward reads "
     "the saved normalized input and rstd)"),
    ("rms_norm_aot_default", lambda: HFRMSNorm(D), F32,
     "LlamaRMSNorm, aot_autograd's default partitioner"),
]
AOT_CASES = [(name + "_" + part, make, dtype,
              "{}, aot_autograd's {} graph".format(what, title))
             for name, make, dtype, what in AOT_MODULES
             for part, title in (("fw", "forward"), ("bw", "backward"))]


def export_aot(module, dtype, name, output_type):
    from functorch.compile import (aot_module, default_partition,
                                   make_boxed_func,
                                   min_cut_rematerialization_partition)
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    graphs = {}

    def capture(part):
        def compiler(gm, inputs):
            graphs[part] = gm
            return make_boxed_func(gm.forward)
        return compiler

    compiled = aot_module(module.to(dtype), fw_compiler=capture("fw"),
                          bw_compiler=capture("bw"),
                          decompositions=get_decomposition_table(),
                          partition_fn=(default_partition
                                        if "_default_" in name else
                                        min_cut_rematerialization_partition))
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(*SHAPE, generator=gen).to(dtype).requires_grad_(True)
    y = compiled(x)
    y.backward(torch.randn(*SHAPE, generator=gen).to(dtype))
    gm = graphs[name.rsplit("_", 1)[1]]
    return str(fx.stateless_fx_import(gm, output_type=output_type,
                                      model_name=name))


def init_parameters(module, seed):
    """Deterministic, non-trivial parameters (weights near 1, biases and
    Gemma-style offsets near 0)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            u = torch.rand(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("bias") or isinstance(module, GemmaRMSNorm):
                p.copy_((u - 0.5) * 0.5)
            elif name.endswith("alpha"):
                p.copy_(0.5 + 0.5 * u)
            elif p.dim() == 2:
                p.copy_((u - 0.5) * (2.0 / p.shape[1] ** 0.5))
            else:
                p.copy_(0.5 + u)


def export(module, dtype, name, output_type):
    module = module.to(dtype).eval()
    example = torch.randn(*SHAPE).to(dtype)
    dynamic = None
    if name.endswith("_dynamic"):
        dynamic = ({0: torch.export.Dim("batch")},)
    elif name.endswith("_dynamic_hidden"):
        dynamic = ({0: torch.export.Dim("batch"),
                    2: torch.export.Dim("hidden")},)
    return str(fx.export_and_import(module, example, output_type=output_type,
                                    func_name=name, dynamic_shapes=dynamic))


def versions():
    import importlib.metadata as md
    return "torch {}, torch-mlir {}".format(md.version("torch").split("+")[0],
                                            md.version("torch-mlir"))


def header(title):
    return ("// {}\n// Generated by utils/gen-frontend-ir.py ({}); do not "
            "edit.\n").format(title, versions())


def export_cases(cases, exporter, seed_base, output_type):
    """The `// Case` chunks of `cases` (name, module maker, dtype, what),
    parameters drawn from seed_base + the case's index; cases the exporter
    fails on are reported and skipped (e.g. TOSA with dynamic shapes)."""
    chunks = []
    for seed, (name, make, dtype, what) in enumerate(cases):
        module = make()
        init_parameters(module, seed_base + seed)
        try:
            text = exporter(module, dtype, name, output_type).rstrip()
        except Exception as error:
            print("skipped {} ({}): {}".format(name, output_type,
                                               str(error).splitlines()[0]),
                  file=sys.stderr)
            continue
        chunks.append("// Case {}: {} ({}).\n{}\n".format(
            name, what, str(dtype).replace("torch.", ""), text))
    return chunks


def write_file(path, title, text):
    with open(path, "w") as f:
        f.write(header(title))
        f.write(text)
    print("wrote", path, file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "test",
        "Transforms", "Inputs"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    for kind, output_type in (("linalg", "linalg-on-tensors"),
                              ("tosa", "tosa")):
        def path(name):
            return os.path.join(args.out, "torch-{}{}.mlir".format(name, kind))

        write_file(path(""), "Normalizations as torch-mlir emits them ({})."
                   .format(output_type),
                   "\n// -----\n\n".join(
                       export_cases(CASES, export, 0, output_type)))
        write_file(path("quant-"), "A norm then a quantization as torch-mlir "
                   "emits them ({}).".format(output_type),
                   "\n// -----\n\n".join(
                       export_cases(QUANT_CASES, export, 200, output_type)))
        chunks = export_cases(TRAIN_CASES, export_train, 100, output_type)
        chunks.append("// Case layer_norm_backward_only: "
                      "native_layer_norm_backward decomposed, the statistics "
                      "as arguments (float32).\n{}\n".format(
                          export_layer_norm_backward(output_type).rstrip()))
        chunks += export_cases(AOT_CASES, export_aot, 300, output_type)
        chunks += export_cases(SYMBOLIC_TRAIN_CASES, export_train_symbolic,
                               400, output_type)
        write_file(path("train-"), "Training steps (forward and gradients) "
                   "as torch-mlir imports them ({}).".format(output_type),
                   "\n// -----\n\n".join(chunks))

        model = PreNormModel(D, 2 * D)
        init_parameters(model, 1000)
        text = export(model, F32, "forward", output_type).rstrip()
        write_file(path("block-"), "Two pre-norm blocks (nn.RMSNorm, "
                   "nn.Linear, residual adds) and a final nn.RMSNorm ({})."
                   .format(output_type), text + "\n")


if __name__ == "__main__":
    main()
