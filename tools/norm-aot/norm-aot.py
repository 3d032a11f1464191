#!/usr/bin/env python3
"""norm-aot: compile one norm op signature ahead of time for a CPU.

    norm-aot --op rms_norm --shape '?x4096' --dtype bf16 --weight f32 \\
             --residual --eps 1e-6 --name rms_norm_4096 -o out/rms_norm_4096 \\
             --shared

writes out/rms_norm_4096.h (memref descriptor types, the entry point
`_mlir_ciface_rms_norm_4096` and an inline wrapper `rms_norm_4096(...)` over
contiguous buffers), out/rms_norm_4096.o and, with --shared,
out/librms_norm_4096.so, for runtimes that do not JIT. The steps are the
documented command sequence (printed with -v):

    norm-opt kernel.mlir --norm-cpu-pipeline -o kernel.llvm.mlir
    mlir-translate --mlir-to-llvmir kernel.llvm.mlir -o kernel.ll
    (target triple and data layout of the host, or of --mtriple, added to
     kernel.ll; taken from `opt -mtriple=T` on an empty module)
    opt -O3 -mtriple=T -mcpu=C kernel.ll -o kernel.opt.bc
    llc -O3 -filetype=obj -relocation-model=pic -mtriple=T -mcpu=C \
        kernel.opt.bc -o k.o
    llvm-objcopy --keep-global-symbol=k --keep-global-symbol=_mlir_ciface_k k.o
    cc -shared k.o -o libk.so -lm

C is --mcpu (alias --target-cpu; default native, the host). Another CPU
(x86-64-v3, skylake-avx512, znver4, neoverse-v1 with an aarch64 --mtriple,
...) is also the pipeline's target-cpu: the vector width and native bf16
follow that CPU, not the host, and every function of the kernel carries
its target-cpu and target-features. A target-cpu in --pipeline-options
counts as --mcpu. A CPU that LLVM does not know for the triple is an
error (llc would only warn and compile for a generic CPU).

Every symbol of the object but the two entry points is local, so that
kernels compiled separately link into one program. opt runs LLVM's -O3
pipeline, as the JIT does. A kernel compiled with threads > 1 calls the
OpenMP runtime (libomp): the shared library is linked with it, and the
header says so for objects.

The kernel (kernel.mlir, kept with --keep) takes memrefs: the inputs x,
[alpha], [weight], [bias], [residual] and then the outputs y,
[residual_out], which the caller allocates; see norm_mlir/_kernels.py.

With --quant FORMAT, a norm.quantize of y follows in the same kernel (or,
with --op quantize, is the kernel) and the outputs q and scales replace y:
fp8 or int8 with f32 scales per row (or per --group-size elements), or a
block-scaled format: mxfp8, fp8_1x128, mxfp4, nvfp4 (--scale-rounding,
--scale-layout; nvfp4 takes the input global_scale, one f32). In the
header, f4E2M1FN values are bytes, two per byte (element 2k in the low
nibble), N/2 per row, and 1-byte scales are uint8_t codes.
"""

import argparse
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# Where configure put LLVM's tools (llc, mlir-translate).
LLVM_TOOLS_DIR = "@LLVM_TOOLS_BINARY_DIR@"
# Where MLIR's runtime libraries are: libmlir_float16_utils.so defines the
# bf16 conversions (__truncsfbf2) that LLVM calls on CPUs without native
# ones and that libgcc 12 lacks.
LLVM_LIBRARY_DIR = "@LLVM_LIBRARY_DIR@"
FLOAT16_UTILS = "libmlir_float16_utils.so"

# f4E2M1FN buffers are packed two elements per byte (norm-pack-fp4).
C_TYPES = {"f16": "uint16_t", "bf16": "uint16_t", "f32": "float",
           "f64": "double", "i8": "int8_t", "f8E4M3FN": "uint8_t",
           "f8E8M0FNU": "uint8_t", "f4E2M1FN": "uint8_t"}

# What the header says of each quantized element type.
ENCODINGS = {
    "i8": "int8_t values",
    "f8E4M3FN": "FP8 e4m3fn codes (1 sign, 4 exponent bits of bias 7, 3 "
                "mantissa bits; 0x7F and 0xFF are NaN)",
    "f8E8M0FNU": "UE8M0 codes, each the power of two 2^(code - 127) (0xFF "
                 "is NaN)",
    "f4E2M1FN": "FP4 e2m1 codes (1 sign, 2 exponent, 1 mantissa bit: 0, "
                "0.5, 1, 1.5, 2, 3, 4, 6) packed two per byte, element 2k in "
                "the low nibble of byte k and 2k+1 in the high one, N/2 "
                "bytes per row",
}


def load_kernels():
    """Loads norm_mlir/_kernels.py without importing the norm_mlir package
    (which needs the native extension and NumPy)."""
    for root in (os.path.join(HERE, "..", "python"),
                 os.path.join(HERE, "..", "..", "python")):
        path = os.path.join(root, "norm_mlir", "_kernels.py")
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("norm_kernels", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    sys.exit("norm-aot: cannot find norm_mlir/_kernels.py next to " + HERE)


def find_tool(name, extra_dirs):
    for directory in extra_dirs:
        path = os.path.join(directory, name)
        if directory and os.access(path, os.X_OK):
            return path
    path = shutil.which(name)
    if not path:
        sys.exit(f"norm-aot: cannot find '{name}'")
    return path


def parse_shape(text):
    dims = []
    for dim in text.split("x"):
        if dim == "?":
            dims.append(None)
        elif dim.isdigit():
            dims.append(int(dim))
        else:
            raise argparse.ArgumentTypeError(
                f"invalid shape '{text}' (expected e.g. '?x4096' or '8x768')")
    return tuple(dims)


# The options each op takes (the rest are rejected with a message).
OP_OPTIONS = {
    "quantize": set(),
    "layer_norm": {"weight", "bias", "residual", "eps", "cast_mode",
                   "compute_type"},
    "rms_norm": {"weight", "residual", "eps", "epsilon_mode",
                 "weight_offset", "cast_mode", "compute_type"},
    "dyt": {"alpha", "weight", "bias", "residual", "cast_mode",
            "compute_type"},
}


QUANT_OPTIONS = ("group_size", "scale_rounding", "scale_layout")


def check_op_options(args):
    """Rejects options the op does not take, naming them."""
    if args.op == "quantize" and args.quant is None:
        sys.exit("norm-aot: --op quantize needs --quant")
    quant_given = [key for key in QUANT_OPTIONS
                   if getattr(args, key) is not None]
    if quant_given and args.quant is None:
        names = ", ".join("--" + key.replace("_", "-") for key in quant_given)
        verb = "needs" if len(quant_given) == 1 else "need"
        sys.exit(f"norm-aot: {names} {verb} --quant")
    given = {key for key in ("weight", "bias", "alpha", "eps", "epsilon_mode",
                             "weight_offset", "cast_mode", "compute_type")
             if getattr(args, key) is not None}
    if args.residual:
        given.add("residual")
    rejected = sorted(given - OP_OPTIONS[args.op])
    if rejected:
        names = ", ".join("--" + key.replace("_", "-") for key in rejected)
        sys.exit(f"norm-aot: --op {args.op} does not take {names}")
    if args.weight_offset is not None and args.weight is None:
        sys.exit("norm-aot: --weight-offset needs --weight")


def target_data_layout(opt, triple):
    """The data layout LLVM uses for `triple`, from opt on an empty
    module."""
    result = subprocess.run([opt, f"-mtriple={triple}", "-S", "-"],
                            input="", capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if line.startswith("target datalayout"):
            return line.split("=", 1)[1].strip().strip('"')
    sys.exit(f"norm-aot: cannot get the data layout of '{triple}' from opt")


def host_triple(llc):
    """The default target triple of llc (the host's)."""
    result = subprocess.run([llc, "--version"], capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if "Default target:" in line:
            return line.split(":", 1)[1].strip()
    sys.exit("norm-aot: cannot get the host triple from llc --version")


def check_cpu(llc, triple, cpu):
    """Exits with a message unless LLVM knows `cpu` for `triple` (llc and
    opt would only warn and compile for a generic CPU of the triple)."""
    result = subprocess.run([llc, f"-mtriple={triple}", f"-mcpu={cpu}",
                             "-o", os.devnull, "-"],
                            input="", capture_output=True, text=True)
    if "not a recognized processor" in result.stderr:
        hint = ""
        if not triple.startswith("aarch64"):
            hint = " (an AArch64 CPU needs --mtriple aarch64-unknown-linux-gnu)"
        sys.exit(f"norm-aot: LLVM does not know the CPU '{cpu}' for "
                 f"{triple}{hint}")


def set_target(llvm_ir, triple, data_layout):
    """Adds the target triple and data layout to a .ll file that has none
    (mlir-translate writes neither): without them LLVM does not know the
    target's memcpy or vector widths."""
    with open(llvm_ir) as f:
        lines = f.read().split("\n")
    lines = [line for line in lines
             if not line.startswith(("target triple", "target datalayout"))]
    at = next((i + 1 for i, line in enumerate(lines)
               if line.startswith("source_filename")), 0)
    lines[at:at] = [f'target datalayout = "{data_layout}"',
                    f'target triple = "{triple}"']
    with open(llvm_ir, "w") as f:
        f.write("\n".join(lines))


def find_openmp_runtime():
    """LLVM's OpenMP runtime, which kernels compiled with threads > 1 call
    (the one the JIT loads)."""
    for path in (os.path.join(LLVM_LIBRARY_DIR, "libomp.so"),
                 "/usr/lib/x86_64-linux-gnu/libomp.so.5"):
        if os.path.exists(path):
            return path
    sys.exit("norm-aot: the kernel needs the OpenMP runtime (libomp), which "
             "is not installed")


def descriptor_type(name, ctype, rank):
    """(typedef name, C typedef) of a memref descriptor."""
    short = {"uint16_t": "u16", "float": "f32", "double": "f64",
             "uint8_t": "u8", "int8_t": "i8"}[ctype]
    tname = f"{name}_memref_{short}_{rank}d_t"
    fields = f"  {ctype} *allocated;\n  {ctype} *aligned;\n  int64_t offset;\n"
    if rank:
        fields += f"  int64_t sizes[{rank}];\n  int64_t strides[{rank}];\n"
    return tname, f"typedef struct {{\n{fields}}} {tname};\n"


def undefined_symbols(nm, obj):
    out = subprocess.run([nm, "-u", "--format=just-symbols", obj],
                         capture_output=True, text=True)
    return sorted(set(out.stdout.split())) if out.returncode == 0 else []


def needs_float16_utils(symbols):
    """Whether the object calls a conversion helper libc and libgcc lack."""
    return any(s.startswith(("__trunc", "__extend")) and "bf" in s
               for s in symbols)


def wrap_comment(paragraphs):
    """C comment lines (" * ...") of paragraphs, a blank line before each."""
    out = []
    for paragraph in paragraphs:
        line = ""
        out.append(" *")
        for word in paragraph.split():
            if line and len(line) + len(word) + 1 > 73:
                out.append(" * " + line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        out.append(" * " + line)
    return "\n".join(out)


def quant_comment(spec):
    """The header's paragraphs on the quantized outputs, or ''."""
    if spec.quant is None:
        return ""
    q = spec.quant
    paragraphs = [f"q: {ENCODINGS[q['dtype']]}."]
    if q.get("static"):
        paragraphs.append("scale: the f32 scale (q = sat(round(y / "
                          "scale))).")
    else:
        group = q.get("group_size") or 0
        per = f"one per group of {group} elements" if group else \
            "one per row"
        stype = spec.scales_dtype
        encoding = "f32 values" if stype == "f32" else ENCODINGS[stype]
        scales = f"scales: {encoding}, {per}"
        if q.get("scale_rounding"):
            scales += f", scale_rounding {q['scale_rounding']}"
        if spec.swizzled:
            scales += (
                "; in the swizzled_128x4 layout: a flat array of "
                "roundup(M, 128) * roundup(K, 4) codes (M rows, K = N / G "
                "scales per row), scale (m, k) at (m / 128) * (K4 * 512) + "
                "(k / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + "
                "k % 4 with K4 = roundup(K, 4) / 4, padding entries 0")
        paragraphs.append(scales + ".")
    if q.get("global_scale"):
        paragraphs.append("global_scale: NVFP4's f32 global scale g; each "
                          "scale is sf = e4m3(g * (amax / 6)) and the "
                          "values dequantize to q * sf / g.")
    return "\n" + wrap_comment(paragraphs)


def buffer_sizes(spec, arg, shape, dtype):
    """C expressions of the sizes of an argument's buffer: x's dynamic
    dims are the wrapper's parameters dimK; the dims of weight and bias are
    the trailing dims of x; f4E2M1FN's last dim is halved (packed);
    swizzled scales hold roundup(M, 128) * roundup(K, 4) codes."""
    if arg == "scales" and spec.swizzled and shape[0] is None:
        lead = [str(d) if d is not None else f"dim{i}"
                for i, d in enumerate(spec.shape[:-1])]
        rows = " * ".join(lead)
        groups = spec.shape[-1] // spec.quant["group_size"]
        padded = (groups + 3) // 4 * 4
        return [f"(({rows}) + 127) / 128 * 128 * {padded}"]
    first = len(spec.shape) - len(shape)
    sizes = [str(d) if d is not None else f"dim{first + i}"
             for i, d in enumerate(shape)]
    if dtype == "f4E2M1FN":
        sizes[-1] = str(shape[-1] // 2)
    return sizes


def write_header(spec, path, description, link):
    guard = f"NORM_AOT_{spec.name.upper()}_H"
    typedefs, params, inits, raw_params = {}, [], [], []
    dynamic = [i for i, d in enumerate(spec.shape) if d is None]
    for arg, shape, dtype, is_output in spec.arguments():
        ctype = C_TYPES[dtype]
        tname, typedef = descriptor_type(spec.name, ctype, len(shape))
        typedefs[tname] = typedef
        params.append(f"{tname} *{arg}")
        const = "" if is_output else "const "
        raw_params.append(f"{const}{ctype} *{arg}")
        sizes = buffer_sizes(spec, arg, shape, dtype)
        strides = []
        for i in range(len(shape)):
            strides.append(" * ".join(sizes[i + 1:]) or "1")
        init = f"  {tname} {arg}_d = {{({ctype} *){arg}, ({ctype} *){arg}, 0"
        if shape:
            init += f", {{{', '.join(sizes)}}}, {{{', '.join(strides)}}}"
        inits.append(init + "};")
    dims = [f"int64_t dim{i}" for i in dynamic]
    call_args = ", ".join(f"&{arg}_d" for arg, *_ in spec.arguments())
    text = f"""/* Generated by norm-aot: {description}.
 *
 * Link with {spec.name}.o (or -l{spec.name}){link}. Buffers are
 * row-major; outputs are written, inputs only read.{quant_comment(spec)}
 */
#ifndef {guard}
#define {guard}

#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

{''.join(typedefs.values())}
/* The compiled entry point: strided memref descriptors, inputs first. */
void _mlir_ciface_{spec.name}({', '.join(params)});

/* Contiguous buffers{'; dimK: the dynamic sizes of x' if dims else ''}. */
static inline void {spec.name}({', '.join(raw_params + dims)}) {{
{chr(10).join(inits)}
  _mlir_ciface_{spec.name}({call_args});
}}

#ifdef __cplusplus
}}
#endif

#endif /* {guard} */
"""
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    kernels = load_kernels()
    parser = argparse.ArgumentParser(
        prog="norm-aot", description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[1:]))
    parser.add_argument("--op", required=True, choices=kernels.OPS)
    parser.add_argument("--shape", required=True, type=parse_shape,
                        help="shape of x, '?' for a dynamic dim: '?x4096'")
    parser.add_argument("--dtype", required=True, choices=kernels.DTYPES)
    parser.add_argument("--axis", type=int, default=-1,
                        help="first normalized dim (default -1)")
    parser.add_argument("--weight", nargs="?", const="", metavar="DTYPE",
                        help="take a weight (of x's dtype or DTYPE)")
    parser.add_argument("--bias", nargs="?", const="", metavar="DTYPE",
                        help="take a bias (of x's dtype or DTYPE)")
    parser.add_argument("--alpha", metavar="DTYPE",
                        help="dyt: dtype of alpha (default: x's)")
    parser.add_argument("--residual", action="store_true",
                        help="take a residual and return residual_out")
    parser.add_argument("--eps", type=float, help="epsilon")
    parser.add_argument("--epsilon-mode", choices=kernels.EPSILON_MODES)
    parser.add_argument("--weight-offset", type=float)
    parser.add_argument("--cast-mode", choices=kernels.CAST_MODES)
    parser.add_argument("--compute-type", choices=kernels.DTYPES)
    parser.add_argument("--quant", choices=kernels.QUANT_FORMATS,
                        help="quantize the output in the same kernel: fp8 "
                             "or int8 (f32 scales per row or --group-size), "
                             "mxfp8, fp8_1x128, mxfp4 or nvfp4 (block "
                             "scales; nvfp4 takes global_scale)")
    parser.add_argument("--group-size", type=int,
                        help="--quant: elements per scale (fp8 and int8: "
                             "default 0, per row; the block-scaled formats: "
                             "their own)")
    parser.add_argument("--scale-rounding", choices=kernels.SCALE_ROUNDINGS,
                        help="--quant mxfp8, fp8_1x128, mxfp4: how the "
                             "power-of-two scales round (default floor; "
                             "fp8_1x128: up)")
    parser.add_argument("--scale-layout", choices=kernels.SCALE_LAYOUTS,
                        help="--quant with block scales: row_major "
                             "(default) or swizzled_128x4")
    parser.add_argument("--name", default=None,
                        help="entry point name (default: the output name)")
    parser.add_argument("--pipeline-options", default="",
                        help="norm-cpu-pipeline options, e.g. "
                             "'vector-width=256'")
    parser.add_argument("--mcpu", "--target-cpu", dest="mcpu", default=None,
                        help="the CPU to compile for, as LLVM names it "
                             "(x86-64-v3, skylake-avx512, znver4, ...; "
                             "default: native, the host): opt/llc -mcpu "
                             "and the pipeline's target-cpu")
    parser.add_argument("--mtriple", default=None,
                        help="target triple (default: the host's)")
    parser.add_argument("--shared", action="store_true",
                        help="also link lib<name>.so")
    parser.add_argument("--keep", action="store_true",
                        help="keep the .mlir and .ll intermediates")
    parser.add_argument("-o", "--output", required=True,
                        help="output path without extension, e.g. out/k")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print the commands")
    args = parser.parse_args(argv)
    check_op_options(args)
    # A target-cpu among the pipeline options is the CPU too.
    pipeline_cpu = next((option.split("=", 1)[1]
                         for option in args.pipeline_options.split()
                         if option.startswith("target-cpu=")), None)
    if pipeline_cpu is not None and args.mcpu not in (None, pipeline_cpu):
        sys.exit(f"norm-aot: --mcpu {args.mcpu} and --pipeline-options "
                 f"target-cpu={pipeline_cpu} name different CPUs")
    mcpu = args.mcpu or pipeline_cpu or "native"

    out_dir, base = os.path.split(os.path.abspath(args.output))
    name = args.name or base.replace("-", "_")
    def dtype_or_x(value):
        if value is None:
            return None
        return value or args.dtype
    quant = None
    if args.quant is not None:
        qtype, stype, group, rounding = kernels.QUANT_FORMATS[args.quant]
        quant = {"dtype": qtype, "static": False,
                 "group_size": group if args.group_size is None
                 else args.group_size}
        if stype != "f32":
            quant.update(scales_dtype=stype,
                         scale_rounding=args.scale_rounding or rounding,
                         scale_layout=args.scale_layout,
                         global_scale=args.quant == "nvfp4")
        else:
            quant.update(scale_rounding=args.scale_rounding,
                         scale_layout=args.scale_layout)
    try:
        spec = kernels.KernelSpec(
            args.op, args.shape, args.dtype, axis=args.axis,
            weight=dtype_or_x(args.weight), bias=dtype_or_x(args.bias),
            alpha=(args.alpha or args.dtype) if args.op == "dyt" else None,
            residual=args.residual, name=name, quant=quant,
            attrs={key: value for key, value in (
                ("epsilon", args.eps), ("epsilon_mode", args.epsilon_mode),
                ("weight_offset", args.weight_offset),
                ("cast_mode", args.cast_mode),
                ("compute_type", args.compute_type)) if value is not None})
        source = spec.source()
    except ValueError as error:
        sys.exit(f"norm-aot: {error}")

    os.makedirs(out_dir, exist_ok=True)
    prefix = os.path.join(out_dir, base)
    norm_opt = find_tool("norm-opt", [HERE])
    translate = find_tool("mlir-translate", [LLVM_TOOLS_DIR])
    llc = find_tool("llc", [LLVM_TOOLS_DIR])
    opt = find_tool("opt", [LLVM_TOOLS_DIR])
    objcopy = find_tool("llvm-objcopy", [LLVM_TOOLS_DIR])
    triple = args.mtriple or host_triple(llc)
    if mcpu != "native":
        check_cpu(llc, triple, mcpu)
    data_layout = target_data_layout(opt, triple)
    cc = os.environ.get("CC") or shutil.which("cc") or "cc"

    def run(cmd):
        if args.verbose:
            print(" ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        result = subprocess.run(cmd)
        if result.returncode != 0:
            sys.exit(f"norm-aot: '{os.path.basename(cmd[0])}' failed "
                     f"(exit code {result.returncode})")

    with tempfile.TemporaryDirectory() as tmp:
        work = out_dir if args.keep else tmp
        kernel = os.path.join(work, base + ".mlir")
        lowered = os.path.join(work, base + ".llvm.mlir")
        llvm_ir = os.path.join(work, base + ".ll")
        with open(kernel, "w") as f:
            f.write(source)
        options = [args.pipeline_options] if args.pipeline_options else []
        # The pipeline's vector-width and native-bf16 defaults describe the
        # host; for another CPU they follow that CPU (target-cpu), and the
        # functions carry its features, whatever llc's defaults.
        if mcpu != "native" and pipeline_cpu is None:
            options.append(f"target-cpu={mcpu}")
        pipeline = "--norm-cpu-pipeline"
        if options:
            pipeline += "=" + " ".join(options)
        run([norm_opt, kernel, pipeline, "-o", lowered])
        run([translate, "--mlir-to-llvmir", lowered, "-o", llvm_ir])
        set_target(llvm_ir, triple, data_layout)
        optimized = os.path.join(work, base + ".opt.bc")
        run([opt, "-O3", f"-mtriple={triple}", f"-mcpu={mcpu}",
             llvm_ir, "-o", optimized])
        run([llc, "-O3", "-filetype=obj", "-relocation-model=pic",
             f"-mtriple={triple}", f"-mcpu={mcpu}", optimized,
             "-o", prefix + ".o"])
        run([objcopy, f"--keep-global-symbol={name}",
             f"--keep-global-symbol=_mlir_ciface_{name}", prefix + ".o"])
    link = " and -lm"
    runtime = []
    symbols = undefined_symbols(find_tool("llvm-nm", [LLVM_TOOLS_DIR]),
                                prefix + ".o")
    if needs_float16_utils(symbols):
        utils = os.path.join(LLVM_LIBRARY_DIR, FLOAT16_UTILS)
        runtime = [utils, f"-Wl,-rpath,{LLVM_LIBRARY_DIR}"]
        link = f", -lm and {utils}"
    if any(s.startswith("__kmpc_") for s in symbols):
        omp = find_openmp_runtime()
        runtime += [omp, f"-Wl,-rpath,{os.path.dirname(omp)}"]
        link += f" and the OpenMP runtime {omp}"
    if args.shared:
        run([cc, "-shared", prefix + ".o", "-o",
             os.path.join(out_dir, f"lib{base}.so"), "-lm"] + runtime)

    shape = "x".join("?" if d is None else str(d) for d in spec.shape)
    parts = [f"{spec.op} on {shape}x{spec.dtype}"]
    for key in ("weight", "bias", "alpha"):
        if getattr(spec, key):
            parts.append(f"{key} {getattr(spec, key)}")
    if spec.residual:
        parts.append("residual")
    parts += [f"{k} {v}" for k, v in sorted(spec.attrs.items())
              if v is not None]
    if args.quant is not None:
        parts.append(f"quantized to {args.quant}")
        for key in QUANT_OPTIONS:
            if getattr(args, key) is not None:
                parts.append(f"{key} {getattr(args, key)}")
    write_header(spec, prefix + ".h", ", ".join(parts), link)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
