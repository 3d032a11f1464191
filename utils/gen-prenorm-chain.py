#!/usr/bin/env python3
"""Generates a chain of pre-norm blocks in the form torch-mlir's
linalg-on-tensors export gives, for compile-time measurements.

    python3 utils/gen-prenorm-chain.py --blocks 400 [--hidden 64] > chain.mlir

Each block is `x = x + nn.Linear(HFRMSNorm(x))` on a [2, 4, hidden] f32
tensor, spelled exactly as torch-mlir spells Hugging Face's LlamaRMSNorm
(see the `hf_rms_norm` case of test/Transforms/Inputs/torch-linalg.mlir and
test/Transforms/Inputs/torch-block-linalg.mlir): `math.fpowi` by an i64 2,
a row sum into a zero-filled keepdim [2, 4, 1] tensor, the division by N,
the f64 epsilon truncated in the body, `math.rsqrt`, the broadcast scale,
the weight on the left; `nn.Linear` as `linalg.transpose` of the constant
weight, `tensor.collapse_shape` to rows, `linalg.matmul` into a zero fill and
`tensor.expand_shape` back; the residual add as an elementwise generic. All
constants come first and `tensor.empty`/`linalg.fill` are shared by every
block, as torch-mlir's output has them after its CSE.

Parameters are drawn from a fixed seed. They are written as hex
`dense<"0x...">` constants by default (quick to parse, and readable by
norm-fold-matmul-weights); `--resources` writes `dense_resource` blobs, as
torch-mlir's fx importer does.
"""

import argparse
import random
import struct
import sys

ROWS = (2, 4)


def hex_f32(values):
    """The hex literal of a little-endian f32 tensor."""
    return "0x" + struct.pack("<%df" % len(values), *values).hex().upper()


class Emitter:
    def __init__(self, hidden, resources, seed):
        self.hidden = hidden
        self.resources = resources
        self.rng = random.Random(seed)
        self.lines = []
        self.blobs = []
        self.next_id = 0

    def fresh(self):
        name = "%{}".format(self.next_id)
        self.next_id += 1
        return name

    def constant(self, name, shape, values):
        """A constant tensor parameter named `name`."""
        type_ = "tensor<{}xf32>".format("x".join(str(d) for d in shape))
        if self.resources:
            key = "param_{}".format(len(self.blobs))
            # A resource blob starts with its alignment (4 bytes, here 4).
            self.blobs.append((key, "0x04000000" + hex_f32(values)[2:]))
            attr = "dense_resource<{}>".format(key)
        else:
            attr = 'dense<"{}">'.format(hex_f32(values))
        self.lines.append("    {} = arith.constant {} : {}".format(
            name, attr, type_))

    def norm_weight(self):
        return [0.5 + self.rng.random() for _ in range(self.hidden)]

    def linear_weight(self):
        scale = 2.0 / self.hidden ** 0.5
        return [(self.rng.random() - 0.5) * scale
                for _ in range(self.hidden * self.hidden)]


def generate(blocks, hidden, resources=False, seed=0):
    e = Emitter(hidden, resources, seed)
    d = hidden
    full = "tensor<{}x{}x{}xf32>".format(ROWS[0], ROWS[1], d)
    row = "tensor<{}x{}x1xf32>".format(ROWS[0], ROWS[1])
    flat = "tensor<{}x{}xf32>".format(ROWS[0] * ROWS[1], d)
    square = "tensor<{}x{}xf32>".format(d, d)
    par3 = 'iterator_types = ["parallel", "parallel", "parallel"]'
    red3 = 'iterator_types = ["parallel", "parallel", "reduction"]'

    out = e.lines
    out.append("    %c2_i64 = arith.constant 2 : i64")
    out.append("    %cst = arith.constant 0.000000e+00 : f32")
    for i in range(blocks):
        e.constant("%norm_w{}".format(i), [d], e.norm_weight())
        e.constant("%linear_w{}".format(i), [d, d], e.linear_weight())
    out.append("    %eps = arith.constant 9.9999999999999995E-7 : f64")
    out.append("    %n = arith.constant {:e} : f32".format(float(d)))
    empty_full = e.fresh()
    out.append("    {} = tensor.empty() : {}".format(empty_full, full))
    empty_row = e.fresh()
    out.append("    {} = tensor.empty() : {}".format(empty_row, row))
    zero_row = e.fresh()
    out.append("    {} = linalg.fill ins(%cst : f32) outs({} : {}) -> {}"
               .format(zero_row, empty_row, row, row))
    empty_flat = e.fresh()
    out.append("    {} = tensor.empty() : {}".format(empty_flat, flat))
    zero_flat = e.fresh()
    out.append("    {} = linalg.fill ins(%cst : f32) outs({} : {}) -> {}"
               .format(zero_flat, empty_flat, flat, flat))

    def generic(maps, iterators, ins, in_types, init, result_type, body):
        """A linalg.generic with a one-result `body` (lines using %in,
        %in_0 for the block arguments, ending in the yielded value)."""
        result = e.fresh()
        args = ["%in", "%in_0"][:len(ins)] + ["%out"]
        arg_types = ["f32"] * len(args)
        out.append(
            "    {} = linalg.generic {{indexing_maps = [{}], {}}} "
            "ins({} : {}) outs({} : {}) {{".format(
                result, ", ".join(maps), iterators, ", ".join(ins),
                ", ".join(in_types), init, result_type))
        out.append("    ^bb0({}):".format(", ".join(
            "{}: {}".format(a, t) for a, t in zip(args, arg_types))))
        for line in body[:-1]:
            out.append("      " + line)
        out.append("      linalg.yield {} : f32".format(body[-1]))
        out.append("    }} -> {}".format(result_type))
        return result

    x = "%arg0"
    for i in range(blocks):
        # HF LlamaRMSNorm: the weight times x * rsqrt(mean(x^2) + eps).
        sq = generic(["#map", "#map"], par3, [x], [full], empty_full, full,
                     ["%b0 = math.fpowi %in, %c2_i64 : f32, i64", "%b0"])
        sums = generic(["#map", "#map1"], red3, [sq], [full], zero_row, row,
                       ["%b0 = arith.addf %in, %out : f32", "%b0"])
        mean = generic(["#map", "#map"], par3, [sums], [row], empty_row, row,
                       ["%b0 = arith.divf %in, %n : f32", "%b0"])
        var_eps = generic(["#map", "#map"], par3, [mean], [row], empty_row,
                          row, ["%b0 = arith.truncf %eps : f64 to f32",
                                "%b1 = arith.addf %in, %b0 : f32", "%b1"])
        rstd = generic(["#map", "#map"], par3, [var_eps], [row], empty_row,
                       row, ["%b0 = math.rsqrt %in : f32", "%b0"])
        scaled = generic(["#map", "#map1", "#map"], par3, [x, rstd],
                         [full, row], empty_full, full,
                         ["%b0 = arith.mulf %in, %in_0 : f32", "%b0"])
        normed = generic(["#map2", "#map", "#map"], par3,
                         ["%norm_w{}".format(i), scaled],
                         ["tensor<{}xf32>".format(d), full], empty_full, full,
                         ["%b0 = arith.mulf %in, %in_0 : f32", "%b0"])
        # nn.Linear without bias: x @ W^T.
        empty_t = e.fresh()
        out.append("    {} = tensor.empty() : {}".format(empty_t, square))
        transposed = e.fresh()
        out.append("    {} = linalg.transpose ins(%linear_w{} : {}) outs({} : "
                   "{}) permutation = [1, 0] ".format(
                       transposed, i, square, empty_t, square))
        collapsed = e.fresh()
        out.append("    {} = tensor.collapse_shape {} [[0, 1], [2]] : {} into "
                   "{}".format(collapsed, normed, full, flat))
        product = e.fresh()
        out.append("    {} = linalg.matmul ins({}, {} : {}, {}) outs({} : {}) "
                   "-> {}".format(product, collapsed, transposed, flat, square,
                                  zero_flat, flat, flat))
        expanded = e.fresh()
        out.append("    {} = tensor.expand_shape {} [[0, 1], [2]] output_shape "
                   "[{}, {}, {}] : {} into {}".format(
                       expanded, product, ROWS[0], ROWS[1], d, flat, full))
        # The residual add.
        x = generic(["#map", "#map", "#map"], par3, [x, expanded],
                    [full, full], empty_full, full,
                    ["%b0 = arith.addf %in, %in_0 : f32", "%b0"])
    out.append("    return {} : {}".format(x, full))

    text = [
        "// {} pre-norm blocks (HF RMSNorm, nn.Linear, residual add), hidden "
        "{},".format(blocks, d),
        "// as torch-mlir's linalg-on-tensors export spells them.",
        "// Generated by utils/gen-prenorm-chain.py; do not edit.",
        "#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
        "#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>",
        "#map2 = affine_map<(d0, d1, d2) -> (d2)>",
        "module {",
        "  func.func @forward(%arg0: {}) -> {} {{".format(full, full),
    ]
    text += out
    text += ["  }", "}"]
    if e.blobs:
        text += ["", "{-#", "  dialect_resources: {", "    builtin: {"]
        text += ['      {}: "{}",'.format(k, v) for k, v in e.blobs]
        text[-1] = text[-1].rstrip(",")
        text += ["    }", "  }", "#-}"]
    return "\n".join(text) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=4,
                        help="number of pre-norm blocks (default 4)")
    parser.add_argument("--hidden", type=int, default=64,
                        help="hidden size (default 64)")
    parser.add_argument("--resources", action="store_true",
                        help="write parameters as dense_resource blobs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", default="-",
                        help="output file (default: stdout)")
    args = parser.parse_args()
    if args.blocks < 1 or args.hidden < 1:
        parser.error("--blocks and --hidden must be positive")
    text = generate(args.blocks, args.hidden, args.resources, args.seed)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
