"""Running norm-opt and the JIT for the differential soundness checker
(utils/norm-soundness.py): one mutant through the pass under test, and a
batch of changed mutants, before and after, executed on random inputs.
"""

import importlib.util
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "test", "tools")
sys.path.insert(0, TOOLS)
import normref  # noqa: E402
import numpy as np  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "wrap_main", os.path.join(TOOLS, "wrap-main.py"))
wrap_main = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wrap_main)

WRAP_MAIN = os.path.join(TOOLS, "wrap-main.py")
# A mutant's norm-opt output with one of these on stderr (or a signal)
# crashed rather than reported an error.
CRASH_MARKERS = ("Stack dump", "Assertion", "LLVM ERROR", "UNREACHABLE",
                 "Segmentation fault", "AddressSanitizer",
                 "UndefinedBehaviorSanitizer", "runtime error:")
# Element types wrap-main can make inputs of and print.
INPUT_ELEMENTS = ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64")
RESULT_ELEMENTS = INPUT_ELEMENTS + ("f8E4M3FN", "f8E5M2", "i1")
NORM_OP = re.compile(r"(?m)^\s*(?:%[^=\n]*= )?norm\.\w+")


class Tools:
    """Paths and options of the executables the checker runs."""

    def __init__(self, norm_opt, mlir_runner, lib_dir, pipeline, timeout):
        self.norm_opt = norm_opt
        self.mlir_runner = mlir_runner
        self.shared_libs = ",".join(
            os.path.join(lib_dir, name) for name in
            ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
        self.pipeline = pipeline
        self.timeout = timeout


def run(cmd, timeout, env=None):
    """(exit code, stdout, stderr); exit code -9 on a timeout. An executable
    that cannot be started (being relinked) is retried for a minute."""
    for attempt in range(60):
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout,
                               env=env, universal_newlines=True,
                               errors="replace")
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return -9, "", "timeout after {} s".format(timeout)
        except OSError:
            if attempt == 59:
                raise
            time.sleep(1.0)


def crashed(rc, stderr):
    return rc < 0 or rc > 128 or any(m in stderr for m in CRASH_MARKERS)


def norm_op_count(text):
    return len(NORM_OP.findall(text))


# --------------------------------------------------------------------------
# Functions: which ones can be driven, renaming
# --------------------------------------------------------------------------

def _element(typ):
    m = re.fullmatch(r"tensor<(?:[\d?]+x)*(\w+)>", typ.strip())
    return m.group(1) if m else None


def drivable(arg_types, result_types):
    """True when wrap-main can make the inputs and print the results."""
    if not result_types or not all(result_types):
        return False
    for t in arg_types:
        if t not in ("f16", "bf16", "f32", "f64") and \
                _element(t) not in INPUT_ELEMENTS:
            return False
    return all(_element(t) in RESULT_ELEMENTS for t in result_types)


def public_functions(text):
    """[(name, drivable)] of the public functions of a module's text."""
    lines = [l for l in text.splitlines() if "func.func" in l]
    return [(name, drivable(args, results))
            for name, args, results in wrap_main.parse_functions(lines)]


def large_dynamic_sizes(text, prefix, size, limit=20000):
    """{`<prefix><name>`: size} for the public functions of `text` with a
    dynamic dim whose arguments stay under `limit` elements each when every
    dynamic dim is `size` (a count of 264 wraps to 8 in i8)."""
    sizes = {}
    lines = [l for l in text.splitlines() if "func.func" in l]
    for name, args, _ in wrap_main.parse_functions(lines):
        counts = []
        for t in args:
            dims = re.findall(r"([\d?]+)x", t)
            count = 1
            for d in dims:
                count *= size if d == "?" else int(d)
            counts.append((count, "?" in dims))
        if any(dyn for _, dyn in counts) and \
                all(count <= limit for count, _ in counts):
            sizes[prefix + name] = size
    return sizes


def prepare(text, prefix, keep):
    """The module text with every function renamed `<prefix><name>` and the
    public functions not in `keep` made private (wrap-main calls every public
    function)."""
    names = re.findall(r"func\.func (?:private )?@([\w$.]+)", text)
    for name in sorted(set(names), key=len, reverse=True):
        text = re.sub(r"@" + re.escape(name) + r"(?![\w$.])",
                      "@" + prefix + name, text)
    for name in set(names) - set(keep):
        text = re.sub(r"func\.func @" + re.escape(prefix + name) +
                      r"(?![\w$.])", "func.func private @" + prefix + name,
                      text)
    return text


# Named linalg ops that read their init (accumulate into it).
ACCUMULATING = re.compile(
    r"linalg\.(?:matmul|batch_matmul|batch_reduce_matmul|matvec|vecmat|"
    r"batch_matvec|dot|contract|reduce|conv\w*|pooling\w*)\b")


def reads_uninitialized(text):
    """True when an op of the (norm-opt printed) module reads a
    `tensor.empty` (undefined contents, which the checker cannot compare):
    as an input of a linalg op (of a linalg.generic whose body uses its
    block argument) or as the init of an accumulating named op or of a
    linalg.generic whose body uses the init's block argument. Bufferization
    may place an empty tensor in a buffer another op writes first, so such
    a read can be stable under poisoned heap memory and still undefined."""
    functions = re.split(r"(?m)^(?=\s*func\.func )", text)
    return any(_function_reads_uninitialized(f) for f in functions)


def _operand_list(line, keyword):
    """The SSA names of `keyword(%a, %b : ...)` on a line ([] if none)."""
    m = re.search(r"\b" + keyword + r"\(([^:()]*) :", line)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def _function_reads_uninitialized(text):
    empties = set(re.findall(r"(%[\w$.\-]+) = tensor\.empty", text))
    if not empties:
        return False
    lines = text.splitlines()
    for n, line in enumerate(lines):
        ins = _operand_list(line, "ins")
        inits = _operand_list(line, "outs")
        read_ins = [i for i, v in enumerate(ins) if v in empties]
        read_inits = [i for i, v in enumerate(inits) if v in empties]
        if not read_ins and not read_inits:
            continue
        if "linalg.generic" not in line:
            if read_ins or ACCUMULATING.search(line):
                return True
            continue
        if n + 1 >= len(lines):
            continue
        args = re.findall(r"(%[\w$.\-]+):", lines[n + 1])
        args = args[len(args) - len(ins) - len(inits):]
        used = read_ins + [len(ins) + i for i in read_inits]
        body = []
        for later in lines[n + 2:]:
            if later.lstrip().startswith("} ->"):
                break
            body.append(later)
        body = "\n".join(body)
        if any(re.search(re.escape(args[i]) + r"(?![\w$.\-])", body)
               for i in used if i < len(args)):
            return True
    return False


# --------------------------------------------------------------------------
# The f32 evaluation of f16 and bf16 functions
# --------------------------------------------------------------------------

NARROW = r"(?<![A-Za-wyz0-9_.$%])b?f16\b"
# f32 as an element or scalar type (promoted to f64 by promote(wide="f64")).
SINGLE = r"(?<![A-Za-wyz0-9_.$%])f32\b"
# A hexadecimal f32 literal of a constant typed f32 (or a tensor of f32):
# its bits are rewritten as an f64 literal when f32 is promoted.
HEX_F32 = re.compile(r"\b0x([0-9A-Fa-f]{8})\b(?=[^\n]*(?::\s*f32\b|xf32>))")
SAME_TYPE_CAST = re.compile(
    r"arith\.(?:extf|truncf) (" + r"%[\w$.\-]+(?:#\d+)?" +
    r") : (\S+) to \2(?=$|\s)", re.M)


def promote(text, wide="f32"):
    """The module with every f16 and bf16 function computing in f32
    (`wide` "f32"), or every f32 function computing in f64 (`wide` "f64";
    its f16 and bf16 types stay, so that a rounding the chain makes on
    purpose, a truncf to bf16 and back, is still made): the same signature,
    its arguments extended on entry, every such type in the body `wide`,
    the results truncated back on return. None when there is nothing to
    promote. (Not every module promotes into valid IR, e.g. dense_resource
    blobs keep their size; the caller verifies.)"""
    narrow = SINGLE if wide == "f64" else NARROW
    lines = text.splitlines()
    out, changed, n = [], False, 0
    while n < len(lines):
        line = lines[n]
        sig = re.match(r"^(\s*)func\.func (?:private )?@[\w$.]+\((.*)\)"
                       r"(?: -> (.*?))?(?: attributes .*)? \{$", line)
        if not sig or not re.search(narrow, line):
            out.append(line)
            n += 1
            continue
        end = n + 1
        while end < len(lines) and lines[end] != sig.group(1) + "}":
            end += 1
        out += _promote_function(line, lines[n + 1:end], sig.group(1) + "  ",
                                 narrow, wide)
        changed = True
        n = end
    return "\n".join(out) + "\n" if changed else None


def _hex_f32_as_f64(match):
    value = np.frombuffer(bytes.fromhex(match.group(1))[::-1],
                          dtype=np.float32)[0]
    return "0x{:016X}".format(
        int(np.array(value, dtype=np.float64).view(np.uint64)))


def _promote_function(signature, body, indent, narrow, wide):
    sig_args = re.search(r"@[\w$.]+\((.*?)\)(?: -> |(?: attributes .*)? \{$)",
                         signature).group(1)
    args = [a.split(":", 1) for a in wrap_main.split_top_level(sig_args)]
    args = [(a[0].strip(), a[1].split(" {")[0].strip()) for a in args]
    entry = []
    renames = {}
    for name, typ in args:
        if re.search(narrow, typ):
            promoted = re.sub(narrow, wide, typ)
            renames[name] = name + "_p"
            entry.append("{}{}_p = arith.extf {} : {} to {}".format(
                indent, name, name, typ.strip(), promoted.strip()))
    text = "\n".join(body)
    for name in sorted(renames, key=len, reverse=True):
        text = re.sub(re.escape(name) + r"(?![\w$.\-])", renames[name], text)
    if wide == "f64":
        text = HEX_F32.sub(_hex_f32_as_f64, text)
    text = re.sub(narrow, wide, text)
    text = SAME_TYPE_CAST.sub(r"arith.maximumf \1, \1 : \2", text)
    body = text.splitlines()
    results = re.search(r"\) -> \(?(.*?)\)?(?: attributes .*)? \{$",
                        signature)
    result_types = [t.strip() for t in _split_types(results.group(1))] \
        if results else []
    ret = re.match(r"^(\s*)return (.*) : (.*)$", body[-1]) if body else None
    if ret and len(result_types) == len(_split_types(ret.group(2))):
        values = [v.strip() for v in ret.group(2).split(",")]
        fixed = []
        for k, (value, typ) in enumerate(zip(values, result_types)):
            if re.search(narrow, typ):
                entry_free = "%promoted_result{}".format(k)
                body.insert(len(body) - 1, "{}{} = arith.truncf {} : {} to "
                            "{}".format(ret.group(1), entry_free, value,
                                        re.sub(narrow, wide, typ), typ))
                value = entry_free
            fixed.append(value)
        body[-1] = "{}return {} : {}".format(ret.group(1), ", ".join(fixed),
                                              ", ".join(result_types))
    return [signature] + entry + body


def _split_types(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return parts + [current] if current.strip() else parts


# --------------------------------------------------------------------------
# One mutant through the pass under test
# --------------------------------------------------------------------------

def apply_passes(tools, path, passes):
    """Verifies the mutant at `path` and runs `passes` on it. Returns a dict
    with status: invalid (does not parse or verify), crash (norm-opt crashed),
    error (the pass reported an error), same (nothing changed), undefined
    (changed, but the mutant reads an uninitialized init), undrivable
    (changed, but no function can be executed), signature (functions added,
    lost or reordered), changed; with `before` (the
    verified mutant as norm-opt prints it), `after`, `stderr`."""
    rc, before, err = run([tools.norm_opt, path], tools.timeout)
    if rc != 0:
        return {"status": "crash" if crashed(rc, err) else "invalid",
                "stderr": err, "passes": []}
    rc, after, err = run([tools.norm_opt, path] + passes, tools.timeout)
    result = {"before": before, "after": after, "stderr": err}
    if rc != 0:
        result["status"] = "crash" if crashed(rc, err) else "error"
        return result
    if after == before or ("--norm-raise" in passes and
                           norm_op_count(after) <= norm_op_count(before)):
        result["status"] = "same"
        return result
    if reads_uninitialized(before):
        result["status"] = "undefined"
        return result
    functions = public_functions(before)
    after_functions = public_functions(after)
    keep = [n for n, ok in functions if ok]
    if [n for n, _ in functions] != [n for n, _ in after_functions]:
        result["status"] = "signature"  # Functions added, lost or reordered.
    else:
        result["status"] = "changed" if keep else "undrivable"
    result["keep"] = keep
    return result


# --------------------------------------------------------------------------
# A batch of changed mutants, executed before and after
# --------------------------------------------------------------------------

def execute(tools, module, workdir, stem, seed, calls, env=None, sizes=None,
            checked=False):
    """Wraps `module` (`// -----` chunks) with wrap-main's random inputs
    (`sizes`: {function: size of its dynamic dims}) and runs it; `checked`
    adds upstream's run-time op verification (`--generate-runtime-verification`:
    every linalg op's indexing maps and every dim/extract checked in bounds,
    a failed check aborts the run). Returns
    (ok, manifest [(label, index, element)], outputs [(sizes, values)],
    message)."""
    src = os.path.join(workdir, stem + ".mlir")
    wrapped = os.path.join(workdir, stem + ".main.mlir")
    manifest_path = os.path.join(workdir, stem + ".manifest")
    lowered = os.path.join(workdir, stem + ".llvm.mlir")
    with open(src, "w") as f:
        f.write(module)
    rc, _, err = run([sys.executable, WRAP_MAIN, src, "-o", wrapped,
                      "--manifest", manifest_path, "--random", str(seed),
                      "--calls", str(calls)] + [
                          "--dynamic-size={}={}".format(name, size)
                          for name, size in sorted((sizes or {}).items())],
                     tools.timeout)
    if rc != 0:
        return False, [], [], "wrap-main failed: " + err[-2000:]
    with open(manifest_path) as f:
        manifest = [tuple(l.split()) for l in f if l.strip()]
    verification = ["--generate-runtime-verification"] if checked else []
    rc, _, err = run([tools.norm_opt, wrapped] + verification +
                     [tools.pipeline, "-o", lowered], tools.timeout)
    if rc != 0:
        what = "crashed" if crashed(rc, err) else "failed"
        return False, manifest, [], "lowering {}: {}".format(what, err[-3000:])
    rc, out, err = run([tools.mlir_runner, lowered, "-e", "main",
                        "-entry-point-result=void",
                        "-shared-libs=" + tools.shared_libs],
                       tools.timeout, env=env)
    for name in (wrapped, lowered):
        os.remove(name)
    if rc != 0:
        return False, manifest, [], "mlir-runner exit {}: {}".format(
            rc, err[-3000:])
    outputs = normref.parse_printed(out)
    if len(outputs) != len(manifest):
        return False, manifest, outputs, "printed {} tensors, manifest " \
            "{}".format(len(outputs), len(manifest))
    return True, manifest, outputs, ""


# The square root of each float type's largest value: where an output holds
# values this large, the squares a norm computes overflow or not depending
# on the order of evaluation.
SQUARE_RANGE = {"f16": 256.0, "bf16": 1.8e19, "f32": 1.8e19, "f64": 1.3e154}


def out_of_range(element, ref, y):
    """True when the NaN and inf mismatches of two outputs are explained by
    overflow: an output reaches the range of the type (the chain's or the
    op's intermediate squares overflow, the other's do not), or the outputs
    overflowed at every entry where they differ (inf - inf is NaN in one
    order of evaluation and inf in another)."""
    limit = SQUARE_RANGE.get(element)
    if limit is None:
        return False
    finite = np.concatenate([ref[np.isfinite(ref)], y[np.isfinite(y)]])
    if finite.size and float(np.max(np.abs(finite))) >= limit:
        return True
    differ = ~((ref == y) | (np.isnan(ref) & np.isnan(y)))
    return bool(np.all(~np.isfinite(ref[differ]) & ~np.isfinite(y[differ])))


def signature_types(text, prefix):
    """{`<prefix><name>`: [float element types of its arguments and
    results]} for the functions of a module's text."""
    lines = [l for l in text.splitlines() if "func.func" in l]
    types = {}
    for name, args, results in wrap_main.parse_functions(lines):
        elements = {_element(t) if t.startswith("tensor<") else t
                    for t in args + results}
        types[prefix + name] = sorted(e for e in elements
                                      if e in ("f16", "bf16", "f32", "f64"))
    return types


def errors(manifest, reference, candidate):
    """{label: [normref error]} over the printed tensors of two runs (inf
    for sizes that differ or output that does not parse)."""
    result = {}
    for (label, _, _), (rs, ref), (cs, y) in zip(manifest, reference,
                                                  candidate):
        ok = not isinstance(ref, str) and not isinstance(y, str) and rs == cs
        result.setdefault(label, []).append(
            normref.compare(y, ref)[0] if ok else float("inf"))
    return result


def compare(manifest, reference, candidate, bounds, signatures=None):
    """{label: [(ok, line)]} over the printed tensors of two runs of modules
    with the same manifest. A tensor's bound is the loosest of its element
    type's and those of the float types of its function's signature
    (`signatures`, from signature_types: a function that takes f16 computes
    in f16 however wide its result). A NaN or inf mismatch in a tensor
    whose finite values reach the square root of the type's range is
    skipped."""
    results = {}
    for (label, index, element), (rs, ref), (cs, y) in zip(
            manifest, reference, candidate):
        bound = bounds.get(element, bounds["f32"])
        for t in (signatures or {}).get(label.split("/")[0], ()):
            bound = max(bound, bounds[t])
        if isinstance(ref, str) or isinstance(y, str):
            err, why = float("inf"), "unreadable output"
        elif rs != cs:
            err, why = float("inf"), "sizes {} vs reference {}".format(
                list(cs), list(rs))
        else:
            err, why = normref.compare(y, ref)
        ok = normref.within(err, bound)
        verdict = "PASS" if ok else "FAIL"
        if not ok and why and why.startswith(("NaN mismatch",
                                              "inf mismatch")) and \
                out_of_range(element, ref, y):
            ok, verdict = True, "SKIP"
        line = "{}: {}#{} {}: error {:.3g} (bound {:.3g}){}".format(
            verdict, label, index, element, err, bound,
            "" if verdict == "PASS" or not why else "; " + why)
        results.setdefault(label, []).append((ok, line))
    return results
