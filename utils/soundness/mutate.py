"""Text-level mutations of MLIR for the differential soundness checker
(utils/norm-soundness.py).

Every mutator takes the text of one module (or `// -----` chunk) and a
`random.Random` and returns `(new_text, description)`, or None when the
text has no site for it. Mutants are not guaranteed to verify: the checker
runs norm-opt on each and skips (counts) those that do not. A mutator picks
its site with the generator it is given, so that a mutant depends only on
the text and the generator's state.
"""

import re

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
FLOAT = r"-?(?:\d+\.\d*|\d*\.\d+|\d+)(?:[eE][-+]?\d+)?"
VALUE = r"%[\w$.\-]+(?:#\d+)?"

# Ops swapped for each other (both directions are listed).
SWAPS = {}
for _pair in (("arith.addf", "arith.subf"), ("arith.mulf", "arith.divf"),
              ("arith.maximumf", "arith.minimumf"),
              ("arith.maxnumf", "arith.minnumf"),
              ("arith.addi", "arith.subi"), ("arith.muli", "arith.divsi"),
              ("arith.maxsi", "arith.minsi"), ("math.rsqrt", "math.sqrt"),
              ("math.exp", "math.tanh"), ("linalg.add", "linalg.sub"),
              ("linalg.mul", "linalg.div"), ("linalg.max", "linalg.min"),
              ("linalg.rsqrt", "linalg.sqrt"), ("tosa.add", "tosa.sub"),
              ("tosa.maximum", "tosa.minimum"),
              ("tosa.reduce_sum", "tosa.reduce_max"),
              ("arith.extf", "arith.truncf"),
              ("arith.fptosi", "arith.fptoui"),
              ("arith.sitofp", "arith.uitofp")):
    SWAPS[_pair[0]] = _pair[1]
    SWAPS[_pair[1]] = _pair[0]
SWAP_RE = re.compile(r"\b(" + "|".join(re.escape(k) for k in sorted(
    SWAPS, key=len, reverse=True)) + r")\b(?![\w.])")
CMP_PREDICATES = ("ogt", "oge", "olt", "ole", "oeq", "one", "ugt", "ult")

BINARY_FLOAT_OPS = ("addf", "subf", "mulf", "divf", "maximumf", "minimumf",
                    "maxnumf", "minnumf")
# `%r = arith.addf %a, %b : T` (and the unary math ops).
ELEMENTWISE_LINE = re.compile(
    r"^(?P<indent>\s*)(?P<res>%[\w$.\-]+) = (?P<op>arith\.(?:" +
    "|".join(BINARY_FLOAT_OPS) + r")|math\.(?:rsqrt|sqrt|tanh|exp))"
    r"(?P<fm> fastmath<\w+>)? (?P<ops>" + VALUE + r"(?:, " + VALUE +
    r")?) : (?P<type>\S+)$", re.M)
AFFINE_MAP = re.compile(
    r"affine_map<\((?P<dims>[^)]*)\)(?P<syms>\[[^\]]*\])?\s*->\s*"
    r"\((?P<results>[^)]*)\)>")
ALIAS_DEF = re.compile(r"^(?P<name>#[\w$.]+)\s*=\s*(?P<map>affine_map<.*>)\s*$",
                       re.M)


def _sites(pattern, text):
    return list(re.finditer(pattern, text))


def _replace(text, start, end, new):
    return text[:start] + new + text[end:]


def _fresh(text, stem):
    """A value name not used in `text`."""
    k = 0
    while "%{}{}".format(stem, k) in text:
        k += 1
    return "%{}{}".format(stem, k)


def _split_list(text):
    return [p.strip() for p in text.split(",")] if text.strip() else []


# --------------------------------------------------------------------------
# Affine maps, iterator types, dimensions
# --------------------------------------------------------------------------

def _mutate_map(literal, rng):
    """A different affine map of the same dims: one result replaced by 0 or
    another dim, two results swapped, or a result dropped or duplicated."""
    m = AFFINE_MAP.fullmatch(literal)
    dims = _split_list(m.group("dims"))
    results = _split_list(m.group("results"))
    if not dims:
        return None
    choice = rng.choice(("zero", "other-dim", "swap", "drop", "duplicate"))
    new = list(results)
    if choice == "zero" and results:
        i = rng.randrange(len(results))
        new[i] = "0"
    elif choice == "other-dim" and results:
        i = rng.randrange(len(results))
        new[i] = rng.choice(dims)
    elif choice == "swap" and len(results) >= 2:
        i, j = rng.sample(range(len(results)), 2)
        new[i], new[j] = new[j], new[i]
    elif choice == "drop" and results:
        del new[rng.randrange(len(results))]
    elif choice == "duplicate" and results:
        i = rng.randrange(len(results))
        new[rng.randrange(len(results))] = new[i]
    if new == results:
        return None
    return "affine_map<({}){} -> ({})>".format(
        ", ".join(dims), m.group("syms") or "", ", ".join(new)), choice


def mutate_map(text, rng):
    """Changes one affine map: an alias definition (all its uses), a map
    written inline, or one use of an alias (replaced by the changed map)."""
    aliases = {m.group("name"): m.group("map")
               for m in ALIAS_DEF.finditer(text)}
    sites = [(m.start(), m.end(), m.group(0))
             for m in AFFINE_MAP.finditer(text)]
    for lst in re.finditer(r"indexing_maps = \[([^\]]*)\]", text):
        for use in re.finditer(r"#[\w$.]+", lst.group(1)):
            if use.group(0) in aliases:
                start = lst.start(1) + use.start()
                sites.append((start, start + len(use.group(0)),
                              aliases[use.group(0)]))
    if not sites:
        return None
    start, end, literal = rng.choice(sites)
    mutated = _mutate_map(literal, rng)
    if not mutated:
        return None
    new, how = mutated
    return _replace(text, start, end, new), "map {} -> {} ({})".format(
        literal, new, how)


def mutate_iterators(text, rng):
    """Flips one iterator type between parallel and reduction."""
    sites = []
    for lst in re.finditer(r"iterator_types = \[[^\]]*\]", text):
        for s in re.finditer(r"parallel|reduction", lst.group(0)):
            sites.append((lst.start() + s.start(), lst.start() + s.end(),
                          s.group(0)))
    if not sites:
        return None
    start, end, kind = rng.choice(sites)
    new = "reduction" if kind == "parallel" else "parallel"
    return _replace(text, start, end, new), "iterator {} -> {}".format(
        kind, new)


def mutate_dimensions(text, rng):
    """Changes a `dimensions = [...]` list (linalg.reduce, broadcast), a
    `permutation`, or an `axis` attribute (TOSA reductions, norm ops)."""
    sites = _sites(r"(dimensions|permutation) = \[([\d, ]*)\]", text)
    axes = _sites(r"\baxis = (-?\d+) : (i32|i64)", text)
    if not sites and not axes:
        return None
    pick = rng.randrange(len(sites) + len(axes))
    if pick >= len(sites):
        m = axes[pick - len(sites)]
        old = int(m.group(1))
        new = rng.choice([v for v in (-2, -1, 0, 1, 2) if v != old])
        return _replace(text, m.start(1), m.end(1), str(new)), \
            "axis {} -> {}".format(old, new)
    m = sites[pick]
    values = [int(v) for v in _split_list(m.group(2))]
    new = list(values)
    how = rng.choice(("change", "drop", "add", "swap"))
    if how == "change" and values:
        i = rng.randrange(len(values))
        new[i] = rng.choice([v for v in range(4) if v != values[i]])
    elif how == "drop" and values:
        del new[rng.randrange(len(values))]
    elif how == "add":
        extra = [v for v in range(4) if v not in values]
        new = sorted(new + [rng.choice(extra)])
    elif how == "swap" and len(values) >= 2:
        i, j = rng.sample(range(len(values)), 2)
        new[i], new[j] = new[j], new[i]
    if new == values:
        return None
    return _replace(text, m.start(2), m.end(2),
                    ", ".join(str(v) for v in new)), \
        "{} {} -> {}".format(m.group(1), values, new)


# --------------------------------------------------------------------------
# Ops and operands
# --------------------------------------------------------------------------

def mutate_swap_op(text, rng):
    """Replaces one op by its counterpart (addf <-> subf, mulf <-> divf,
    maximumf <-> minimumf, rsqrt <-> sqrt, ...) or changes a cmpf
    predicate."""
    sites = [(m.start(), m.end(), SWAPS[m.group(1)])
             for m in SWAP_RE.finditer(text)]
    sites += [(m.start(1), m.end(1),
               rng.choice([p for p in CMP_PREDICATES if p != m.group(1)]))
              for m in re.finditer(r"arith\.cmpf (\w+),", text)]
    if not sites:
        return None
    start, end, new = rng.choice(sites)
    return _replace(text, start, end, new), "op {} -> {}".format(
        text[start:end], new)


def mutate_swap_operands(text, rng):
    """Swaps the two operands of a binary op: `arith.X %a, %b`, linalg's
    `ins(%a, %b : A, B)` or TOSA's `tosa.X %a, %b : (A, B) -> R`."""
    sites = []
    for m in re.finditer(r"\b(?:arith|math)\.\w+ (" + VALUE + r"), (" +
                         VALUE + r")(?= :)", text):
        sites.append((m.start(1), m.end(2),
                      "{}, {}".format(m.group(2), m.group(1))))
    for m in re.finditer(r"ins\((" + VALUE + r"), (" + VALUE +
                         r") : ([^,()]+(?:<[^>]*>)?), ([^()]+?)\)", text):
        sites.append((m.start(1), m.end(4), "{}, {} : {}, {}".format(
            m.group(2), m.group(1), m.group(4).strip(), m.group(3).strip())))
    for m in re.finditer(r"\btosa\.\w+ (" + VALUE + r"), (" + VALUE +
                         r") : \(([^,()]+), ([^,()]+)\)", text):
        sites.append((m.start(1), m.end(4), "{}, {} : ({}, {}".format(
            m.group(2), m.group(1), m.group(4), m.group(3))))
    if not sites:
        return None
    start, end, new = rng.choice(sites)
    return _replace(text, start, end, new), "operands `{}` -> `{}`".format(
        text[start:end], new)


def _typed_values(text):
    """(name, type, line number, indentation) of the function arguments and
    of the values named in `ins(... : ...)`/`outs(...)` lists."""
    values = []
    lines = text.splitlines()
    for n, line in enumerate(lines):
        sig = re.match(r"^(\s*)func\.func (?:private )?@[\w$.]+\((.*)\)", line)
        if sig:
            for a in re.finditer(r"(%[\w$.\-]+): (tensor<[^>]*>|f16|bf16|f32"
                                 r"|f64)", sig.group(2)):
                values.append((a.group(1), a.group(2), n, None))
            continue
        indent = len(line) - len(line.lstrip())
        for lst in re.finditer(r"(?:ins|outs)\(([^:()]*) : ([^()]*)\)", line):
            names = _split_list(lst.group(1))
            types = _split_list(lst.group(2))
            if len(names) == len(types):
                for name, typ in zip(names, types):
                    values.append((name, typ, n, indent))
    return values


def mutate_replace_operand(text, rng):
    """Replaces one operand of a structured or norm op (an `ins`/`outs`
    entry: operand roles and inits; `weight(`, `bias(`, `residual(`,
    `alpha(`) with another value of the same type that is visible there."""
    values = _typed_values(text)
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    func_starts = [n for n, l in enumerate(lines) if "func.func" in l]
    sites = []
    for name, typ, n, indent in values:
        if indent is None:
            continue
        fstart = max([f for f in func_starts if f <= n], default=0)
        others = {v for v, t, m, i in values
                  if t == typ and v != name and fstart <= m < n and
                  (i is None or i == indent)}
        if not others:
            continue
        for use in re.finditer(re.escape(name) + r"(?![\w$.\-#])", lines[n]):
            sites.append((offsets[n] + use.start(), offsets[n] + use.end(),
                          sorted(others)))
            break
    for m in re.finditer(r"\b(weight|bias|residual|alpha)\((" + VALUE +
                         r")\)", text):
        n = text.count("\n", 0, m.start())
        fstart = max([f for f in func_starts if f <= n], default=0)
        others = sorted({v for v, t, k, i in values
                         if v != m.group(2) and fstart <= k <= n})
        if others:
            sites.append((m.start(2), m.end(2), others))
    if not sites:
        return None
    start, end, others = rng.choice(sites)
    new = rng.choice(others)
    return _replace(text, start, end, new), "operand {} -> {}".format(
        text[start:end], new)


# --------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------

def _new_float(old, rng):
    value = float(old)
    choices = [value * 2.0, value * 0.5, -value, 0.0, value + 1.0, 1e-3,
               value * 1.001, 10.0 * value + 1e-2]
    new = rng.choice([c for c in choices if c != value] or [1.0])
    return "{:.6e}".format(new)


def _new_int(old, rng):
    value = int(old)
    choices = [value + 1, value - 1, 2 * value, value + 256, 0, 1, -value]
    return str(rng.choice([c for c in choices if c != value] or [1]))


def mutate_constant(text, rng):
    """Changes one float or integer constant: an `arith.constant`, a splat
    `dense<...>`, or one element of a dense array (also to values that
    change under a cast, e.g. N + 256 through an index_cast to i8)."""
    sites = []
    for m in re.finditer(r"arith\.constant (" + FLOAT + r") : (f16|bf16|f32|"
                         r"f64)", text):
        sites.append((m.start(1), m.end(1), "float"))
    for m in re.finditer(r"arith\.constant (-?\d+) : (index|i\d+)\b", text):
        sites.append((m.start(1), m.end(1), "int"))
    for m in re.finditer(r"dense<(" + FLOAT + r")> : tensor<[^>]*x(f16|bf16|"
                         r"f32|f64)>", text):
        sites.append((m.start(1), m.end(1), "float"))
    for m in re.finditer(r"dense<(-?\d+)> : tensor<[^>]*x(i\d+|index)>",
                         text):
        sites.append((m.start(1), m.end(1), "int"))
    for m in re.finditer(r"dense<(\[[^<>]*\])> : tensor<[^>]*x(f16|bf16|f32|"
                         r"f64)>", text):
        elements = list(re.finditer(FLOAT, m.group(1)))
        if elements:
            e = rng.choice(elements)
            sites.append((m.start(1) + e.start(), m.start(1) + e.end(),
                          "float"))
    if not sites:
        return None
    start, end, kind = rng.choice(sites)
    old = text[start:end]
    new = _new_float(old, rng) if kind == "float" else _new_int(old, rng)
    return _replace(text, start, end, new), "constant {} -> {}".format(
        old, new)


# --------------------------------------------------------------------------
# Inserted ops
# --------------------------------------------------------------------------

def _scalar_or_static(typ):
    if typ in FLOAT_TYPES:
        return True
    m = re.fullmatch(r"tensor<([\dx]*)(f16|bf16|f32|f64)>", typ)
    return bool(m) and "?" not in typ


def _zero(typ):
    return "0.000000e+00 : " + typ if typ in FLOAT_TYPES else \
        "dense<0.000000e+00> : " + typ


def mutate_insert_unary(text, rng):
    """Inserts `math.absf` or `arith.maximumf x, 0` (a ReLU) on an operand
    of an elementwise float op (in a linalg body or at tensor level)."""
    sites = [m for m in ELEMENTWISE_LINE.finditer(text)
             if m.group("type") in FLOAT_TYPES or
             m.group("type").startswith("tensor<")]
    if not sites:
        return None
    m = rng.choice(sites)
    operands = _split_list(m.group("ops"))
    victim = rng.choice(operands)
    typ = m.group("type")
    indent = m.group("indent")
    kind = rng.choice(("absf", "relu"))
    if kind == "relu" and not _scalar_or_static(typ):
        kind = "absf"
    new_value = _fresh(text, "mut")
    if kind == "absf":
        inserted = "{}{} = math.absf {} : {}\n".format(indent, new_value,
                                                       victim, typ)
    else:
        zero = _fresh(text, "mutz")
        inserted = "{0}{1} = arith.constant {2}\n{0}{3} = arith.maximumf " \
            "{4}, {1} : {5}\n".format(indent, zero, _zero(typ), new_value,
                                      victim, typ)
    ops = m.group("ops").replace(victim, new_value, 1)
    line = text[m.start():m.end()]
    line = line.replace(m.group("ops"), ops, 1)
    return text[:m.start()] + inserted + line + text[m.end():], \
        "{} inserted on {} of `{}`".format(kind, victim,
                                            text[m.start():m.end()].strip())


def mutate_yield(text, rng):
    """Changes the value a linalg body yields: adds a constant (a bias term
    in the middle of a chain), or rounds it through a narrower float type
    and back (an inserted cast)."""
    sites = _sites(r"(?m)^(\s*)linalg\.yield (" + VALUE + r") : (f16|bf16|"
                   r"f32|f64)$", text)
    if not sites:
        return None
    m = rng.choice(sites)
    indent, value, typ = m.group(1), m.group(2), m.group(3)
    narrow = {"f64": "f32", "f32": rng.choice(("bf16", "f16")),
              "bf16": None, "f16": None}[typ]
    a, b = _fresh(text, "mut"), _fresh(text, "mutc")
    if narrow and rng.random() < 0.5:
        lines = "{0}{1} = arith.truncf {2} : {3} to {4}\n{0}{5} = arith.extf" \
            " {1} : {4} to {3}\n".format(indent, b, value, typ, narrow, a)
        how = "cast through {}".format(narrow)
    else:
        constant = rng.choice(("2.500000e-01", "-1.000000e+00",
                               "1.000000e-03"))
        lines = "{0}{1} = arith.constant {2} : {3}\n{0}{4} = arith.addf {5}," \
            " {1} : {3}\n".format(indent, b, constant, typ, a, value)
        how = "{} added".format(constant)
    new = "{}{}linalg.yield {} : {}".format(lines, indent, a, typ)
    return _replace(text, m.start(), m.end(), new), "yield of {}: {}".format(
        value, how)


def mutate_add_bias(text, rng):
    """Adds a bias over the last dim (`+ b`, a linalg.generic with a
    constant vector) to a returned tensor with a static last dim."""
    sites = _sites(r"(?m)^(\s*)return (" + VALUE + r")(?:, [^:]*)? : "
                   r"(tensor<((?:[\d?]+x)+)(\d+)x(f16|bf16|f32|f64)>)", text)
    if not sites:
        return None
    m = rng.choice(sites)
    indent, value, typ = m.group(1), m.group(2), m.group(3)
    rank = m.group(4).count("x") + 1
    size, element = int(m.group(5)), m.group(6)
    dims = ", ".join("d{}".format(i) for i in range(rank))
    last = "d{}".format(rank - 1)
    bias = ", ".join("{:.4e}".format(rng.uniform(-1.0, 1.0))
                     for _ in range(size))
    b, y = _fresh(text, "mutb"), _fresh(text, "mut")
    lines = (
        "{0}{1} = arith.constant dense<[{2}]> : tensor<{3}x{4}>\n"
        "{0}{5} = linalg.generic {{indexing_maps = [affine_map<({6}) -> ({6})>,"
        " affine_map<({6}) -> ({7})>, affine_map<({6}) -> ({6})>], "
        "iterator_types = [{8}]}} ins({9}, {1} : {10}, tensor<{3}x{4}>) "
        "outs({9} : {10}) {{\n{0}^bb0(%mut_a: {4}, %mut_b: {4}, %mut_o: {4}):\n"
        "{0}  %mut_s = arith.addf %mut_a, %mut_b : {4}\n"
        "{0}  linalg.yield %mut_s : {4}\n{0}}} -> {10}\n").format(
            indent, b, bias, size, element, y, dims, last,
            ", ".join(['"parallel"'] * rank), value, typ)
    ret = text[m.start():m.end()].replace("return " + value, "return " + y, 1)
    return text[:m.start()] + lines + ret + text[m.end():], \
        "bias added to returned {}".format(value)


def mutate_dim(text, rng):
    """Changes a `tensor.dim`: its source (another function argument of the
    same rank) or its index (another index constant)."""
    sites = _sites(r"tensor\.dim (" + VALUE + r"), (" + VALUE +
                   r") : (tensor<[^>]*>)", text)
    if not sites:
        return None
    m = rng.choice(sites)
    rank = m.group(3).count("x")
    if rng.random() < 0.5:
        consts = [c.group(1) for c in re.finditer(
            r"(" + VALUE + r") = arith\.constant \d+ : index", text)
            if c.group(1) != m.group(2)]
        if consts:
            new = rng.choice(consts)
            return _replace(text, m.start(2), m.end(2), new), \
                "tensor.dim index {} -> {}".format(m.group(2), new)
    args = [(a.group(1), a.group(2)) for a in re.finditer(
        r"(%[\w$.\-]+): (tensor<[^>]*>)", text)
        if a.group(1) != m.group(1) and a.group(2).count("x") == rank]
    if not args:
        return None
    name, typ = rng.choice(args)
    return _replace(text, m.start(1), m.end(3), "{}, {} : {}".format(
        name, m.group(2), typ)), "tensor.dim source {} -> {}".format(
            m.group(1), name)


def mutate_int_width(text, rng):
    """Narrows or widens the integer an `index_cast` gives (e.g. an element
    count through i8, where 264 wraps to 8), with the casts that read it."""
    sites = _sites(r"(" + VALUE + r") = arith\.index_cast(?:ui)? " + VALUE +
                   r" : index to (i\d+)", text)
    if not sites:
        return None
    m = rng.choice(sites)
    old = m.group(2)
    new = rng.choice([t for t in ("i8", "i16", "i32", "i64") if t != old])
    tail = re.sub(r"(\barith\.(?:sitofp|uitofp|extsi|extui|trunci) " +
                  re.escape(m.group(1)) + r" : )" + old + r"\b",
                  r"\g<1>" + new, text[m.end():])
    head = text[:m.start(2)] + new
    return head + tail, "index_cast of {} to {} instead of {}".format(
        m.group(1), new, old)


def mutate_element_type(text, rng):
    """Changes one float element type everywhere in the text (f32 to bf16,
    f16 or f64, or back)."""
    present = [t for t in FLOAT_TYPES if re.search(r"\b{}\b".format(t), text)]
    if not present:
        return None
    old = rng.choice(present)
    new = rng.choice([t for t in FLOAT_TYPES if t != old])
    # The type's name alone or after a tensor shape's `x`.
    mutated = re.sub(r"(?<![A-Za-wyz0-9_.$%])" + old + r"\b", new, text)
    return mutated, "element type {} -> {}".format(old, new)


MUTATORS = {
    "map": mutate_map,
    "iterators": mutate_iterators,
    "dimensions": mutate_dimensions,
    "swap-op": mutate_swap_op,
    "swap-operands": mutate_swap_operands,
    "replace-operand": mutate_replace_operand,
    "constant": mutate_constant,
    "insert-unary": mutate_insert_unary,
    "yield": mutate_yield,
    "add-bias": mutate_add_bias,
    "tensor-dim": mutate_dim,
    "element-type": mutate_element_type,
    "int-width": mutate_int_width,
}

# How often each mutator is tried, per kind of pass under test.
WEIGHTS = {
    "raise": {"map": 4, "iterators": 2, "dimensions": 2, "swap-op": 4,
              "swap-operands": 3, "replace-operand": 2, "constant": 4,
              "insert-unary": 3, "yield": 3, "add-bias": 3, "tensor-dim": 2,
              "element-type": 1, "int-width": 2},
    "fusion": {"map": 1, "iterators": 1, "dimensions": 2, "swap-op": 1,
               "swap-operands": 2, "replace-operand": 5, "constant": 3,
               "insert-unary": 1, "yield": 1, "add-bias": 2,
               "tensor-dim": 1, "element-type": 3, "int-width": 0},
}


def mutate(text, rng, kind, count):
    """Applies `count` mutations, each of a mutator drawn with the weights of
    `kind`; returns (text, [descriptions]) or None when nothing applied."""
    weights = WEIGHTS[kind]
    names = sorted(weights)
    done = []
    for _ in range(count):
        for _attempt in range(8):
            name = rng.choices(names, [weights[n] for n in names])[0]
            result = MUTATORS[name](text, rng)
            if result and result[0] != text:
                text = result[0]
                done.append("{}: {}".format(name, result[1]))
                break
    return (text, done) if done else None
