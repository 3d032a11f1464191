"""Decomposed block-scaled quantizations as a frontend writes them (DESIGN
section 2d): y [M, N] reshaped to [M, N/G, G], amax = max |y| per group by
a linalg reduction, the exponent or the NVFP4 scale computed by elementwise
linalg.generic ops, the conversion, and the reshape back. norm-raise turns
the exact forms into norm.quantize (test_blockscale_raise.py, and
test/Transforms/raise-quantize-block.mlir, whose inputs come from here).

`chain_source(form, dtype, rows, n, rounding, variant)` returns one
function `@<name>(%y[, %g]) -> (q codes as i8, scale codes as i8)`; `rows`
None makes the leading dim dynamic; `group` overrides the form's group
size (a near miss). `variant` names a near miss (see
VARIANTS) that norm-raise must decline; "exact" is the raised form.

`emulate(form, y, rounding, g)` computes what the exact chain computes,
op by op in numpy (f64 log2, f32 division, round-to-nearest-even
conversions), for the comparison with the raised program."""

import numpy as np

import blockscale

# (q element type, scales element type, group size)
FORMS = {
    "mxfp8": ("f8E4M3FN", "f8E8M0FNU", 32),
    "fp8_1x128": ("f8E4M3FN", "f8E8M0FNU", 128),
    "mxfp4": ("f4E2M1FN", "f8E8M0FNU", 32),
    "nvfp4": ("f4E2M1FN", "f8E4M3FN", 16),
}

# Near misses and what is wrong with them.
VARIANTS = {
    "exact": "the exact form",
    "log2_f32": "log2 in f32 (rounds up just below a power of two)",
    "emax": "floor(log2(amax)) - emax with the wrong emax",
    "clamp_q": "the elements clamped to a bound other than QMAX",
    "clamp_x_below": "the exponent clamped from below only",
    "maxnum_x": "the exponent clamped with maxnumf (drops a NaN)",
    "nv_order": "NVFP4 scale as (g * amax) / 6",
    "nv_no_select": "NVFP4 multiplier g / sf without the zero test",
    "nv_select_one": "NVFP4 zero test with cmpf one (true on NaN is false)",
}


def chain_source(form, dtype, rows, n, rounding="floor", variant="exact",
                 name="chain", group=None):
    qtype, stype, form_group = FORMS[form]
    group = group or form_group
    fp4 = qtype == "f4E2M1FN"
    qmax = 6.0 if fp4 else 448.0
    emax = 2 if fp4 else 8
    k = n // group
    m = "?" if rows is None else str(rows)
    y_t = f"tensor<{m}x{n}x{dtype}>"
    y3_t = f"tensor<{m}x{k}x{group}x{dtype}>"
    f32_2 = f"tensor<{m}x{k}xf32>"
    q3_t = f"tensor<{m}x{k}x{group}x{qtype}>"
    q_t = f"tensor<{m}x{n}x{qtype}>"
    s_t = f"tensor<{m}x{k}x{stype}>"
    q_i8 = f"tensor<{m}x{n}xi8>"
    s_i8 = f"tensor<{m}x{k}xi8>"
    dyn = rows is None
    lines = []
    a = lines.append
    args = f"%y: {y_t}" + (", %g: tensor<f32>" if form == "nvfp4" else "")
    a(f"func.func @{name}({args}) -> ({q_i8}, {s_i8}) {{")
    if dyn:
        a("  %c0 = arith.constant 0 : index")
        a(f"  %m = tensor.dim %y, %c0 : {y_t}")
        shape = f"[%m, {k}, {group}]"
        empty = "(%m)"
    else:
        shape = f"[{rows}, {k}, {group}]"
        empty = "()"
    a(f"  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape {shape} "
      f": {y_t} into {y3_t}")
    ext = "" if dtype == "f32" else f"\n    %x = arith.extf %in : {dtype} to f32"
    xv = "%in" if dtype == "f32" else "%x"
    a("  %zero = arith.constant 0.0 : f32")
    a(f"  %e2 = tensor.empty{empty} : {f32_2}")
    a(f"  %init = linalg.fill ins(%zero : f32) outs(%e2 : {f32_2}) -> {f32_2}")
    a(f"  %amax = linalg.generic {{indexing_maps = [#id3, #row3], "
      f"iterator_types = [\"parallel\", \"parallel\", \"reduction\"]}} "
      f"ins(%y3 : {y3_t}) outs(%init : {f32_2}) {{")
    a(f"  ^bb0(%in: {dtype}, %acc: f32):{ext}")
    a(f"    %a = math.absf {xv} : f32")
    a("    %r = arith.maximumf %acc, %a : f32")
    a("    linalg.yield %r : f32")
    a(f"  }} -> {f32_2}")
    if form == "nvfp4":
        _nvfp4_scale(lines, variant, f32_2, empty)
    else:
        _mx_scale(lines, variant, rounding, qmax, emax, f32_2, empty, stype)
    # The elements.
    a(f"  %q0 = tensor.empty{empty} : {q3_t}")
    a(f"  %q3 = linalg.generic {{indexing_maps = [#id3, #row3, #id3], "
      f"iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} "
      f"ins(%y3, %mult : {y3_t}, {f32_2}) outs(%q0 : {q3_t}) {{")
    a(f"  ^bb0(%in: {dtype}, %f: f32, %out: {qtype}):{ext}")
    if form == "nvfp4" or rounding == "up":
        a(f"    %v = arith.mulf {xv}, %f : f32")
    else:
        a(f"    %v = arith.divf {xv}, %f : f32")
    lo = -qmax
    if variant == "clamp_q":
        lo = -qmax / 2
    a(f"    %lo = arith.constant {lo!r} : f32")
    a(f"    %hi = arith.constant {qmax!r} : f32")
    a("    %v1 = arith.maximumf %v, %lo : f32")
    a("    %v2 = arith.minimumf %v1, %hi : f32")
    a(f"    %t = arith.truncf %v2 : f32 to {qtype}")
    a(f"    linalg.yield %t : {qtype}")
    a(f"  }} -> {q3_t}")
    a(f"  %q = tensor.collapse_shape %q3 [[0], [1, 2]] : {q3_t} into {q_t}")
    if fp4:
        a(f"  %q4 = arith.bitcast %q : {q_t} to tensor<{m}x{n}xi4>")
        a(f"  %qc = arith.extui %q4 : tensor<{m}x{n}xi4> to {q_i8}")
    else:
        a(f"  %qc = arith.bitcast %q : {q_t} to {q_i8}")
    a(f"  %sc = arith.bitcast %s : {s_t} to {s_i8}")
    a(f"  return %qc, %sc : {q_i8}, {s_i8}")
    a("}")
    return "\n".join(lines) + "\n"


def _unary_generic(lines, result, operand, f32_2, empty, body,
                   out_type="f32"):
    """`%result = elementwise(body)(%operand)` on [M, K] tensors."""
    out_t = f32_2.replace("xf32>", f"x{out_type}>")
    lines.append(f"  %{result}_e = tensor.empty{empty} : {out_t}")
    lines.append(
        f"  %{result} = linalg.generic {{indexing_maps = [#id2, #id2], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} "
        f"ins(%{operand} : {f32_2}) outs(%{result}_e : {out_t}) {{")
    lines.append(f"  ^bb0(%in: f32, %out: {out_type}):")
    lines += ["    " + line for line in body]
    lines.append(f"  }} -> {out_t}")


def _mx_scale(lines, variant, rounding, qmax, emax, f32_2, empty, stype):
    """X (as f32), the f8E8M0FNU scales %s = truncf(2^X) and the multiplier
    %mult of the elements: 2^X (floor chains divide by it) or 2^-X (up
    chains multiply by it)."""
    wide = "f32" if variant == "log2_f32" else "f64"
    body = []
    d = "%in"
    if wide == "f64":
        body.append("%d = arith.extf %in : f32 to f64")
        d = "%d"
    if rounding == "up":
        body += [f"%qm = arith.constant {qmax!r} : {wide}",
                 f"%dq = arith.divf {d}, %qm : {wide}",
                 f"%l = math.log2 %dq : {wide}",
                 f"%xe = math.ceil %l : {wide}"]
    else:
        offset = emax - 1 if variant == "emax" else emax
        body += [f"%l = math.log2 {d} : {wide}",
                 f"%fl = math.floor %l : {wide}",
                 f"%em = arith.constant {float(offset)!r} : {wide}",
                 f"%xe = arith.subf %fl, %em : {wide}"]
    maxop = "arith.maxnumf" if variant == "maxnum_x" else "arith.maximumf"
    body += [f"%xlo = arith.constant -127.0 : {wide}",
             f"%xhi = arith.constant 127.0 : {wide}",
             f"%x1 = {maxop} %xe, %xlo : {wide}"]
    x = "%x1"
    if variant != "clamp_x_below":
        body.append(f"%x2 = arith.minimumf %x1, %xhi : {wide}")
        x = "%x2"
    if wide == "f64":
        body.append(f"%x32 = arith.truncf {x} : f64 to f32")
        x = "%x32"
    body.append(f"linalg.yield {x} : f32")
    _unary_generic(lines, "xs", "amax", f32_2, empty, body)
    _unary_generic(lines, "pow", "xs", f32_2, empty,
                   ["%p = math.exp2 %in : f32", "linalg.yield %p : f32"])
    if rounding == "up":
        _unary_generic(lines, "mult", "xs", f32_2, empty,
                       ["%n = arith.negf %in : f32",
                        "%p = math.exp2 %n : f32", "linalg.yield %p : f32"])
    else:
        # Through the [M, K, 1] keepdim form frontends reshape scales to.
        keep_t = f32_2.replace("xf32>", "x1xf32>")
        dims = f32_2[len("tensor<"):-len("xf32>")].split("x")
        m = "%m" if dims[0] == "?" else dims[0]
        lines.append(f"  %pow_k = tensor.expand_shape %pow [[0], [1, 2]] "
                     f"output_shape [{m}, {dims[1]}, 1] : {f32_2} into "
                     f"{keep_t}")
        lines.append(f"  %mult = tensor.collapse_shape %pow_k [[0], [1, 2]] "
                     f": {keep_t} into {f32_2}")
    _unary_generic(lines, "s", "pow", f32_2, empty,
                   [f"%t = arith.truncf %in : f32 to {stype}",
                    f"linalg.yield %t : {stype}"], out_type=stype)


def _nvfp4_scale(lines, variant, f32_2, empty):
    """The f8E4M3FN scales %s = e4m3(clamp(g * (amax / 6))) and the
    multiplier %mult = (sf == 0) ? 0 : g / sf."""
    f8_2 = f32_2.replace("xf32>", "xf8E4M3FN>")
    lines += [
        f"  %gb_e = tensor.empty{empty} : {f32_2}",
        f"  %gb = linalg.generic {{indexing_maps = [#scalar2, #id2], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} "
        f"ins(%g : tensor<f32>) outs(%gb_e : {f32_2}) {{",
        "  ^bb0(%in: f32, %out: f32):",
        "    linalg.yield %in : f32",
        f"  }} -> {f32_2}",
        f"  %sf_e = tensor.empty{empty} : {f8_2}",
        f"  %s = linalg.generic {{indexing_maps = [#id2, #id2, #id2], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} "
        f"ins(%amax, %gb : {f32_2}, {f32_2}) outs(%sf_e : {f8_2}) {{",
        "  ^bb0(%in: f32, %gv: f32, %out: f8E4M3FN):",
        "    %six = arith.constant 6.0 : f32"]
    if variant == "nv_order":
        lines += ["    %ga = arith.mulf %gv, %in : f32",
                  "    %p = arith.divf %ga, %six : f32"]
    else:
        lines += ["    %d = arith.divf %in, %six : f32",
                  "    %p = arith.mulf %gv, %d : f32"]
    lines += [
        "    %lo = arith.constant -448.0 : f32",
        "    %hi = arith.constant 448.0 : f32",
        "    %p1 = arith.maximumf %p, %lo : f32",
        "    %p2 = arith.minimumf %p1, %hi : f32",
        "    %t = arith.truncf %p2 : f32 to f8E4M3FN",
        "    linalg.yield %t : f8E4M3FN",
        f"  }} -> {f8_2}",
        f"  %mult_e = tensor.empty{empty} : {f32_2}",
        f"  %mult = linalg.generic {{indexing_maps = [#id2, #id2, #id2], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} "
        f"ins(%s, %gb : {f8_2}, {f32_2}) outs(%mult_e : {f32_2}) {{",
        "  ^bb0(%in: f8E4M3FN, %gv: f32, %out: f32):",
        "    %sf = arith.extf %in : f8E4M3FN to f32",
        "    %z = arith.constant 0.0 : f32",
        "    %o = arith.divf %gv, %sf : f32"]
    if variant == "nv_no_select":
        lines.append("    linalg.yield %o : f32")
    elif variant == "nv_select_one":
        lines += ["    %nz = arith.cmpf one, %sf, %z : f32",
                  "    %r = arith.select %nz, %o, %z : f32",
                  "    linalg.yield %r : f32"]
    else:
        lines += ["    %isz = arith.cmpf oeq, %sf, %z : f32",
                  "    %r = arith.select %isz, %z, %o : f32",
                  "    linalg.yield %r : f32"]
    lines.append(f"  }} -> {f32_2}")


HEADER = """#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
"""


def module(functions):
    """A module of chain_source texts with the maps they use."""
    return HEADER + "\n".join(functions)


def emulate(form, y, rounding="floor", g=None):
    """The exact chain's q codes (one per element, uint8) and scale codes,
    op by op: amax in f32 (NaN propagates), the exponent with f64 log2, the
    scaling in f32, clamps that propagate NaN, conversions rounding to
    nearest even (blockscale's code tables)."""
    qtype, _, group = FORMS[form]
    y32 = blockscale.as_f32(y)
    rows = y32.reshape(-1, y32.shape[-1] // group, group)
    with np.errstate(all="ignore"):
        amax = np.max(np.abs(rows), axis=-1)  # NaN propagates
        if form == "nvfp4":
            g = np.float32(g)
            p = np.float32(g) * (amax / np.float32(6.0))
            p = np.minimum(np.maximum(p, np.float32(-448.0)),
                           np.float32(448.0))
            sf_codes = blockscale.e4m3_codes(p)
            sf = blockscale.e4m3_values(sf_codes).astype(np.float32)
            mult = np.where(sf == 0, np.float32(0.0), g / sf)
            v = rows * mult[..., None]
            v = np.minimum(np.maximum(v, np.float32(-6.0)), np.float32(6.0))
            q = blockscale.e2m1_codes(v)
            s = sf_codes
        else:
            fp4 = qtype == "f4E2M1FN"
            qmax, emax = (6.0, 2) if fp4 else (448.0, 8)
            d = amax.astype(np.float64)
            if rounding == "up":
                x = np.ceil(np.log2(d / qmax))
            else:
                x = np.floor(np.log2(d)) - emax
            x = np.minimum(np.maximum(x, -127.0), 127.0)
            x32 = x.astype(np.float32)
            if rounding == "up":
                v = rows * np.exp2(-x32.astype(np.float64)).astype(
                    np.float32)[..., None]
            else:
                v = rows / np.exp2(x32.astype(np.float64)).astype(
                    np.float32)[..., None]
            v = np.minimum(np.maximum(v, np.float32(-qmax)),
                           np.float32(qmax))
            q = (blockscale.e2m1_codes(v) if fp4 else
                 blockscale.e4m3_codes(v))
            s = np.where(np.isnan(x), 0xFF,
                         np.nan_to_num(x) + 127).astype(np.uint8)
    return q.reshape(y32.shape), s.reshape(y32.shape[:-1] + (-1,))
