#!/usr/bin/env python3
"""Makes a runnable module out of frontend IR: merges the `// -----` chunks
of a file into one module and adds a @main that calls every public function
on deterministic constant inputs and prints every result.

    wrap-main.py <input.mlir> -o <output.mlir> --manifest <manifest.txt>
                 [--scale FUNCTION=FACTOR]... [--random SEED [--calls N]]

Scalar float arguments get the value 1e-5. Each chunk may carry its own `{-# dialect_resources #-}` section (as
torch-mlir prints it) and its own `#map` aliases; both are renamed per chunk
so that the chunks can share one module. Inputs are tensors of the
function's argument types (dynamic dims get size 3, or the size given
with --dynamic-size, behind a tensor.cast); values are a smooth pseudo-random pattern, with an offset on some rows
(times FACTOR for a function given with --scale: a deep graph whose values
would otherwise overflow f32).
Results are converted to f32 (quantized ones too: f8E4M3FN by extf, i8 by
sitofp) and printed with printMemrefF32; the manifest
gets one line `<function> <result#> <element type>` per printed result, in
order, for compare-outputs.py.

With --random SEED the inputs are pseudo-random instead (Python's `random`
seeded with SEED, the function's name, the argument's index and the call's,
so that a function gets the same inputs in any module): values of both
signs, each row (the last dim) with its own magnitude, 10^k for k drawn
from -3..3 (-2..1 for f16, whose range is small), and some rows offset
from zero by a few times their magnitude; integer tensors get integers in
[-100, 100]; scalar float arguments a positive value between 1e-5 and 10.
--calls N calls every function N times, each on other random inputs; the
manifest then names the k-th call's results `<function>/<k>`. Without
--random the inputs are exactly as described above.
"""

import argparse
import math
import random
import re
import sys

SEPARATOR = "// -----"
DYNAMIC_SIZE = 3


def split_chunks(text):
    chunks, current = [], []
    for line in text.splitlines():
        if line.strip() == SEPARATOR:
            chunks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    chunks.append("\n".join(current))
    return [c for c in chunks if "func.func" in c]


def parse_chunk(chunk, index):
    """Returns (alias lines, body lines, resource entries) of a chunk, with
    aliases and resource keys made unique."""
    main, _, resources = chunk.partition("{-#")
    aliases = re.findall(r"^(#[\w$.]+)\s*=", main, re.M)
    keys = re.findall(r"dense_resource<([^>]+)>", main)
    for alias in sorted(set(aliases), key=len, reverse=True):
        main = re.sub(re.escape(alias) + r"(?![\w$.])",
                      "#c{}_{}".format(index, alias[1:]), main)
    entries = []
    for key in sorted(set(keys), key=len, reverse=True):
        new = "c{}_{}".format(index, key)
        main = main.replace("dense_resource<{}>".format(key),
                            "dense_resource<{}>".format(new))
        match = re.search(re.escape(key) + r'\s*:\s*("0x[0-9A-Fa-f]*")',
                          resources)
        if match:
            entries.append('{}: {}'.format(new, match.group(1)))
    lines = [l for l in main.splitlines() if not l.lstrip().startswith("//")]
    starts = [i for i, l in enumerate(lines) if l.startswith("module")]
    if starts:
        module_end = max(i for i, l in enumerate(lines) if l.startswith("}"))
        body = lines[starts[0] + 1:module_end]
        prefix = lines[:starts[0]]
    else:  # A chunk without an explicit module.
        body = [l for l in lines if not l.startswith("#")]
        prefix = lines
    alias_lines = [l for l in prefix if l.startswith("#")]
    return alias_lines, body, entries


def parse_type(text):
    """`tensor<2x?x32xbf16>` -> ([2, None, 32], 'bf16')."""
    match = re.fullmatch(r"tensor<(.*)>", text.strip())
    parts = match.group(1).split("x")
    shape = [None if p == "?" else int(p) for p in parts[:-1]]
    return shape, parts[-1]


def split_top_level(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts]


def parse_functions(body):
    functions = []
    for line in body:
        match = re.match(r"^\s*func\.func (private )?@(\w+)\(", line)
        if not match or match.group(1):
            continue
        name = match.group(2)
        depth, start = 1, match.end()
        end = start
        while depth:
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            end += 1
        args = line[start:end - 1]
        rest = line[end:].strip()
        results = ""
        if rest.startswith("->"):
            results = rest[2:].strip()
            if results.startswith("("):
                results = results[1:results.rindex(")")]
            else:
                results = results.split(" ")[0]
        arg_types = [a.split(":", 1)[1].strip().split(" {")[0]
                     for a in split_top_level(args)]
        result_types = split_top_level(results)
        functions.append((name, arg_types, result_types))
    return functions


def literal(shape, seed, scale=1.0):
    """Nested dense literal of a smooth pattern; every other row of the
    second-to-last dim is offset; all times `scale`."""
    flat = []
    count = 1
    for size in shape:
        count *= size
    inner = shape[-1] if shape else 1
    for i in range(count):
        row = i // inner
        value = 1.5 * math.sin(0.61 * i + 1.3 * seed) + 0.5 * math.cos(
            0.17 * i * (seed + 1))
        if row % 2 == 1:
            value += 3.0
        value *= scale
        text = "{:.6g}".format(value)
        # A float literal needs a dot or an exponent ("4" is an integer).
        if not any(c in text for c in ".en"):
            text += ".0"
        flat.append(text)

    def nest(values, dims):
        if not dims:
            return values[0]
        step = len(values) // dims[0] if dims[0] else 0
        return "[" + ", ".join(
            nest(values[k * step:(k + 1) * step], dims[1:])
            for k in range(dims[0])) + "]"

    return nest(flat, shape)


def random_literal(shape, element, rng):
    """Nested dense literal of random values for --random: per row (the
    last dim) a magnitude 10^k and sometimes an offset of a few times it;
    integers in [-100, 100] for an integer element type."""
    count = 1
    for size in shape:
        count *= size
    inner = shape[-1] if shape else 1
    exponents = (-2, 1) if element == "f16" else (-3, 3)
    flat = []
    for i in range(count):
        if i % inner == 0:
            scale = 10.0 ** rng.randint(*exponents)
            offset = scale * rng.choice((0.0, 0.0, 0.0, 2.0, -3.0))
        if element.startswith("i"):
            flat.append(str(rng.randint(-100, 100)))
            continue
        flat.append("{:.8e}".format(rng.gauss(0.0, 1.0) * scale + offset))

    def nest(values, dims):
        if not dims:
            return values[0]
        step = len(values) // dims[0] if dims[0] else 0
        return "[" + ", ".join(
            nest(values[k * step:(k + 1) * step], dims[1:])
            for k in range(dims[0])) + "]"

    return nest(flat, shape)


def random_generator(args, name, arg_index, call):
    return random.Random("{}/{}/{}/{}".format(args.random, name, arg_index,
                                              call))


def input_literal(args, static, element, fn_index, name, arg_index, scale,
                  call):
    """The literal of one tensor argument: wrap-main's smooth pattern, or
    with --random pseudo-random values."""
    if args.random is None:
        return literal(static, fn_index * 7 + arg_index, scale)
    rng = random_generator(args, name, arg_index, call)
    return random_literal(static, element, rng)


def call_function(args, main_lines, manifest, counter, fn_index, call, name,
                  arg_types, result_types, dynamic_sizes, scales):
    """Appends to main_lines the call of one function on its inputs (the
    call-th set with --calls) and the printing of its results; returns the
    next free value number."""
    operands = []
    for arg_index, arg_type in enumerate(arg_types):
        if not arg_type.startswith("tensor<"):
            value = "%in{}".format(counter)
            counter += 1
            scalar = "1.0e-05"
            if args.random is not None:
                rng = random_generator(args, name, arg_index, call)
                scalar = "{:.6e}".format(10.0 ** rng.uniform(-5.0, 1.0))
            main_lines.append("    {} = arith.constant {} : {}"
                              .format(value, scalar, arg_type))
            operands.append(value)
            continue
        shape, element = parse_type(arg_type)
        size = dynamic_sizes.get(name, DYNAMIC_SIZE)
        static = [size if s is None else s for s in shape]
        static_type = "tensor<{}>".format(
            "x".join([str(s) for s in static] + [element]))
        value = "%in{}".format(counter)
        counter += 1
        main_lines.append("    {} = arith.constant dense<{}> : {}".format(
            value, input_literal(args, static, element, fn_index, name,
                                 arg_index, scales.get(name, 1.0), call),
            static_type))
        if static_type != arg_type:
            cast = "%in{}".format(counter)
            counter += 1
            main_lines.append("    {} = tensor.cast {} : {} to {}".format(
                cast, value, static_type, arg_type))
            value = cast
        operands.append(value)
    results = "%r{}".format(fn_index) if args.calls == 1 else \
        "%r{}_{}".format(fn_index, call)
    arity = ":{}".format(len(result_types)) if len(result_types) > 1 else ""
    main_lines.append(
        "    {}{} = func.call @{}({}) : ({}) -> ({})".format(
            results, arity, name, ", ".join(operands),
            ", ".join(arg_types), ", ".join(result_types)))
    for result_index, result_type in enumerate(result_types):
        shape, element = parse_type(result_type)
        value = results + ("#{}".format(result_index)
                           if len(result_types) > 1 else "")
        f32_type = result_type.rsplit("x", 1)[0] + "xf32>" if shape else \
            "tensor<f32>"
        if element != "f32":
            op = ("arith.truncf" if element == "f64" else
                  "arith.sitofp" if element.startswith("i") else
                  "arith.extf")
            converted = "%c{}".format(counter)
            counter += 1
            main_lines.append("    {} = {} {} : {} to {}".format(
                converted, op, value, result_type, f32_type))
            value = converted
        unranked = "%u{}".format(counter)
        counter += 1
        main_lines.append("    {} = tensor.cast {} : {} to tensor<*xf32>"
                          .format(unranked, value, f32_type))
        main_lines.append("    func.call @printMemrefF32({}) : "
                          "(tensor<*xf32>) -> ()".format(unranked))
        label = name if args.calls == 1 else "{}/{}".format(name, call)
        manifest.append("{} {} {}".format(label, result_index, element))
    return counter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--scale", action="append", default=[],
                        metavar="FUNCTION=FACTOR",
                        help="multiply the inputs of FUNCTION by FACTOR")
    parser.add_argument("--dynamic-size", action="append", default=[],
                        metavar="FUNCTION=SIZE",
                        help="give the dynamic dims of FUNCTION's arguments "
                        "SIZE (instead of %d)" % DYNAMIC_SIZE)
    parser.add_argument("--random", type=int, metavar="SEED",
                        help="pseudo-random inputs of both signs and many "
                        "magnitudes, seeded with SEED")
    parser.add_argument("--calls", type=int, default=1, metavar="N",
                        help="with --random: call every function N times on "
                        "other inputs")
    args = parser.parse_args()
    if args.calls != 1 and args.random is None:
        parser.error("--calls needs --random")
    dynamic_sizes = {}
    for item in args.dynamic_size:
        name, _, size = item.partition("=")
        dynamic_sizes[name] = int(size)
    scales = {}
    for item in args.scale:
        name, _, factor = item.partition("=")
        scales[name] = float(factor)

    with open(args.input) as f:
        chunks = split_chunks(f.read())
    all_aliases, all_bodies, all_resources, functions = [], [], [], []
    for index, chunk in enumerate(chunks):
        aliases, body, resources = parse_chunk(chunk, index)
        all_aliases += aliases
        all_bodies += body
        all_resources += resources
        functions += parse_functions(body)

    main_lines, manifest = ["  func.func @main() {"], []
    counter = 0
    for fn_index, (name, arg_types, result_types) in enumerate(functions):
        for call in range(args.calls):
            counter = call_function(args, main_lines, manifest, counter,
                                    fn_index, call, name, arg_types,
                                    result_types, dynamic_sizes, scales)
    main_lines += ["    return", "  }",
                   "  func.func private @printMemrefF32(tensor<*xf32>) "
                   "attributes {llvm.emit_c_interface}"]

    with open(args.output, "w") as f:
        f.write("\n".join(all_aliases) + "\n")
        f.write("module {\n")
        f.write("\n".join(all_bodies) + "\n")
        f.write("\n".join(main_lines) + "\n}\n")
        if all_resources:
            f.write("{-#\n  dialect_resources: {\n    builtin: {\n      ")
            f.write(",\n      ".join(all_resources))
            f.write("\n    }\n  }\n#-}\n")
    with open(args.manifest, "w") as f:
        f.write("\n".join(manifest) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
