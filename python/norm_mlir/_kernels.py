"""MLIR source of single-op norm kernels in destination-passing style.

A kernel is a function whose arguments are memrefs: the inputs (x, alpha,
weight, bias, residual) and then the outputs (y, residual_out) that the
caller allocates. The body turns the inputs into tensors with
`bufferization.to_tensor`, applies one norm op and writes its results into
the outputs with `bufferization.materialize_in_destination`, so that after
norm-cpu-pipeline the kernel writes straight into the caller's buffers.
The function has `llvm.emit_c_interface`: from C it is
`_mlir_ciface_<name>(desc *x, ..., desc *y)` with strided memref
descriptors.

This module only needs the standard library: the JIT (norm_mlir) and the
ahead-of-time tool (norm-aot) both use it.
"""

import math

OPS = ("layer_norm", "rms_norm", "dyt", "quantize")
DTYPES = ("f16", "bf16", "f32", "f64")
QUANT_DTYPES = ("f8E4M3FN", "i8", "f4E2M1FN")
SCALES_DTYPES = ("f32", "f8E8M0FNU", "f8E4M3FN")
# The block-scaled forms of norm.quantize (docs/Ops.md): (q element type,
# scales element type) -> the group sizes allowed.
BLOCK_FORMS = {("f8E4M3FN", "f8E8M0FNU"): (32, 128),
               ("f4E2M1FN", "f8E8M0FNU"): (32,),
               ("f4E2M1FN", "f8E4M3FN"): (16,)}
# The named quantization formats of the ready-made ops and norm-aot: q's
# element type, the scales' (f32: FP8/int8 with per-token scales, or groups
# of group_size), the default group size and scale_rounding.
QUANT_FORMATS = {
    "fp8": ("f8E4M3FN", "f32", 0, None),
    "int8": ("i8", "f32", 0, None),
    "mxfp8": ("f8E4M3FN", "f8E8M0FNU", 32, "floor"),
    "fp8_1x128": ("f8E4M3FN", "f8E8M0FNU", 128, "up"),
    "mxfp4": ("f4E2M1FN", "f8E8M0FNU", 32, "floor"),
    "nvfp4": ("f4E2M1FN", "f8E4M3FN", 16, None),
}
SCALE_ROUNDINGS = ("floor", "up")
SCALE_LAYOUTS = ("row_major", "swizzled_128x4")
EPSILON_MODES = ("inside_sqrt", "outside_sqrt", "clamp")
CAST_MODES = ("final", "before_weight")


def float_literal(value):
    """An MLIR float literal (always with a '.', exact for an f64)."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value}")
    return "%.17e" % value


def _roundup(value, multiple):
    return (value + multiple - 1) // multiple * multiple


def swizzled_scales_size(rows, groups):
    """Scales of the swizzled_128x4 layout for `rows` rows (the product of
    the leading dims) of `groups` groups: roundup(rows, 128) *
    roundup(groups, 4)."""
    return _roundup(rows, 128) * _roundup(groups, 4)


def check_quant(quant, shape):
    """Checks the combination of a block-scaled `quant` (ValueError)."""
    qtype = quant["dtype"]
    stype = quant.get("scales_dtype") or "f32"
    if stype not in SCALES_DTYPES:
        raise ValueError(f"unsupported scales dtype '{stype}' (expected one "
                         f"of {SCALES_DTYPES})")
    rounding, layout = quant.get("scale_rounding"), quant.get("scale_layout")
    if rounding is not None and rounding not in SCALE_ROUNDINGS:
        raise ValueError(f"unknown scale_rounding '{rounding}' (expected one "
                         f"of {SCALE_ROUNDINGS})")
    if layout is not None and layout not in SCALE_LAYOUTS:
        raise ValueError(f"unknown scale_layout '{layout}' (expected one of "
                         f"{SCALE_LAYOUTS})")
    if stype == "f32":
        if qtype == "f4E2M1FN":
            raise ValueError("f4E2M1FN needs block scales (scales_dtype "
                             "f8E8M0FNU or f8E4M3FN)")
        for key in ("scale_rounding", "scale_layout", "global_scale"):
            if quant.get(key):
                raise ValueError(f"{key} is for block scales (scales_dtype "
                                 f"f8E8M0FNU or f8E4M3FN)")
        return
    groups = BLOCK_FORMS.get((qtype, stype))
    if groups is None:
        raise ValueError(f"no block-scaled form has {qtype} values with "
                         f"{stype} scales (MXFP8, FP8 1x128: f8E4M3FN with "
                         f"f8E8M0FNU; MXFP4: f4E2M1FN with f8E8M0FNU; NVFP4: "
                         f"f4E2M1FN with f8E4M3FN)")
    if quant.get("static"):
        raise ValueError("block scales are dynamic (no static scale)")
    for key in ("scale_ub", "min_scale"):
        if quant.get(key) is not None:
            raise ValueError(f"{key} does not apply to block scales")
    group = int(quant.get("group_size") or 0)
    if group not in groups:
        raise ValueError(f"{qtype} with {stype} scales needs group_size "
                         f"{' or '.join(map(str, groups))}, got {group}")
    last = shape[-1]
    if last is None or last % group:
        raise ValueError(f"block scales need a static last dim that "
                         f"group_size {group} divides, got "
                         f"{'?' if last is None else last}")
    nvfp4 = stype == "f8E4M3FN"
    if nvfp4 and not quant.get("global_scale"):
        raise ValueError("NVFP4 (f8E4M3FN scales) needs global_scale")
    if not nvfp4 and quant.get("global_scale"):
        raise ValueError("global_scale is for NVFP4 (f8E4M3FN scales)")
    if nvfp4 and rounding is not None:
        raise ValueError("scale_rounding is for f8E8M0FNU scales")


def _type(shape, dtype, kind):
    dims = "".join(("?" if d is None else str(int(d))) + "x" for d in shape)
    return f"{kind}<{dims}{dtype}>"


class KernelSpec:
    """The signature of one kernel.

    op: "layer_norm", "rms_norm" or "dyt".
    shape: shape of x, an int per static dim and None per dynamic one.
    dtype: element type of x ("f16", "bf16", "f32", "f64").
    axis: first normalized dim (negative counts from the end).
    weight, bias: element type of the operand, or None when absent.
    alpha: element type of dyt's scalar alpha (a 0-d memref).
    residual: whether the op takes a residual (and returns residual_out).
    attrs: op attributes, {name: python value}: epsilon (float),
      epsilon_mode, cast_mode (str), weight_offset (float), compute_type
      (str).
    quant: None, or how y is quantized by a norm.quantize in the same
      kernel (op "quantize": the kernel is that op alone): {"dtype":
      "f8E4M3FN", "i8" or "f4E2M1FN", "static": bool (a 0-d f32 `scale`
      input; else the `scales` output), "group_size": int, "scale_ub",
      "min_scale": float or None}. The outputs are then q (and the scales)
      instead of y. The block-scaled forms (MXFP8, FP8 1x128, MXFP4,
      NVFP4) add "scales_dtype": "f8E8M0FNU" or "f8E4M3FN" (default
      "f32", the FP8/int8 forms), "scale_rounding": "floor" or "up" (E8M0
      scales), "scale_layout": "row_major" or "swizzled_128x4" (the scales
      then a flat 1-D output of roundup(M, 128) * roundup(N / G, 4), M the
      product of the leading dims) and "global_scale": True (NVFP4: a 0-d
      f32 `global_scale` input). An f4E2M1FN output is a byte buffer of
      N / 2 per row once compiled (norm-pack-fp4).
    stats: the op returns its row statistics (`return_stats`): the outputs
      mean (layer_norm) and rstd, of the leading dims of x in the compute
      type, after residual_out.
    """

    def __init__(self, op, shape, dtype, *, axis=-1, weight=None, bias=None,
                 alpha=None, residual=False, attrs=None, name="kernel",
                 quant=None, stats=False):
        if op not in OPS:
            raise ValueError(f"unknown op '{op}' (expected one of {OPS})")
        if dtype not in DTYPES:
            raise ValueError(f"unsupported dtype '{dtype}' "
                             f"(expected one of {DTYPES})")
        shape = tuple(None if d is None else int(d) for d in shape)
        if not shape:
            raise ValueError("x must have rank >= 1")
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"axis {axis} out of range for rank {len(shape)}")
        if op == "dyt" and alpha is None:
            raise ValueError("dyt needs the element type of alpha")
        if op != "dyt" and alpha is not None:
            raise ValueError(f"{op} takes no alpha")
        if op == "rms_norm" and bias is not None:
            raise ValueError("rms_norm takes no bias")
        if not name.isidentifier():
            raise ValueError(f"invalid function name '{name}'")
        if op == "quantize" and (quant is None or residual or weight or bias
                                 or attrs):
            raise ValueError("quantize takes only its input and quant")
        if quant is not None:
            quant = dict(quant)
            if quant.get("dtype") not in QUANT_DTYPES:
                raise ValueError(f"unsupported quantized dtype "
                                 f"'{quant.get('dtype')}' (expected one of "
                                 f"{QUANT_DTYPES})")
            if dtype == "f64":
                raise ValueError("f64 cannot be quantized (f16, bf16, f32)")
            if axis % len(shape) != len(shape) - 1:
                raise ValueError("quantization needs the last dim normalized")
            check_quant(quant, shape)
        if stats and op not in ("layer_norm", "rms_norm"):
            raise ValueError(f"{op} has no statistics")
        self.stats = bool(stats)
        self.quant = quant
        self.op, self.shape, self.dtype, self.axis = op, shape, dtype, axis
        self.weight, self.bias, self.alpha = weight, bias, alpha
        self.residual = bool(residual)
        self.attrs = dict(attrs or {})
        self.name = name

    @property
    def normalized_shape(self):
        return self.shape[self.axis % len(self.shape):]

    @property
    def stats_names(self):
        """The statistics outputs: (mean,) rstd, or none."""
        if not self.stats:
            return ()
        return ("mean", "rstd") if self.op == "layer_norm" else ("rstd",)

    @property
    def compute_type(self):
        """The element type of the statistics."""
        explicit = self.attrs.get("compute_type")
        if explicit:
            return explicit
        return "f64" if self.dtype == "f64" else "f32"

    @property
    def scales_dtype(self):
        """The element type of the dynamic form's scales."""
        return self.quant.get("scales_dtype") or "f32"

    @property
    def swizzled(self):
        """Whether the scales are in the swizzled_128x4 layout (flat)."""
        return self.quant.get("scale_layout") == "swizzled_128x4"

    @property
    def scales_shape(self):
        """Shape of the dynamic form's scales: x's with the last dim N / G,
        or (roundup(M, 128) * roundup(N / G, 4),) when swizzled (dynamic
        when a leading dim is)."""
        group = int(self.quant.get("group_size") or 0)
        last = self.shape[-1]
        if group == 0:
            groups = 1
        elif last is None:
            raise ValueError("group_size needs a static last dim")
        else:
            groups = last // group
        if self.swizzled:
            lead = self.shape[:-1]
            if any(d is None for d in lead):
                return (None,)
            return (swizzled_scales_size(math.prod(lead), groups),)
        return self.shape[:-1] + (groups,)

    def _quant_attribute_dict(self):
        parts = []
        group = int(self.quant.get("group_size") or 0)
        if group:
            parts.append(f"group_size = {group} : i64")
        for key in ("scale_ub", "min_scale"):
            value = self.quant.get(key)
            if value is not None:
                parts.append(f"{key} = {float_literal(value)} : f32")
        rounding = self.quant.get("scale_rounding")
        if rounding not in (None, "floor"):
            parts.append(f"scale_rounding = #norm<scale_rounding {rounding}>")
        if self.swizzled:
            parts.append("scale_layout = #norm<scale_layout swizzled_128x4>")
        return " {" + ", ".join(parts) + "}" if parts else ""

    def arguments(self):
        """[(name, shape, dtype, is_output)] in call order."""
        args = [("x", self.shape, self.dtype, False)]
        if self.alpha is not None:
            args.append(("alpha", (), self.alpha, False))
        if self.weight is not None:
            args.append(("weight", self.normalized_shape, self.weight, False))
        if self.bias is not None:
            args.append(("bias", self.normalized_shape, self.bias, False))
        if self.residual:
            args.append(("residual", self.shape, self.dtype, False))
        if self.quant is None:
            args.append(("y", self.shape, self.dtype, True))
        else:
            if self.quant.get("static"):
                args.append(("scale", (), "f32", False))
            if self.quant.get("global_scale"):
                args.append(("global_scale", (), "f32", False))
            args.append(("q", self.shape, self.quant["dtype"], True))
            if not self.quant.get("static"):
                args.append(("scales", self.scales_shape, self.scales_dtype,
                             True))
        if self.residual:
            args.append(("residual_out", self.shape, self.dtype, True))
        lead = self.shape[:self.axis % len(self.shape)]
        for name in self.stats_names:
            args.append((name, lead, self.compute_type, True))
        return args

    def _attribute_dict(self):
        parts = []
        if self.axis != -1:
            parts.append(f"axis = {self.axis} : i64")
        if self.stats:
            parts.append("return_stats")
        for key, value in sorted(self.attrs.items()):
            if value is None:
                continue
            if key == "epsilon":
                parts.append(f"epsilon = {float_literal(value)} : f64")
            elif key == "weight_offset":
                parts.append(f"weight_offset = {float_literal(value)} : f32")
            elif key == "epsilon_mode":
                if value not in EPSILON_MODES:
                    raise ValueError(f"unknown epsilon_mode '{value}'")
                parts.append(f"epsilon_mode = #norm<epsilon_mode {value}>")
            elif key == "cast_mode":
                if value not in CAST_MODES:
                    raise ValueError(f"unknown cast_mode '{value}'")
                parts.append(f"cast_mode = #norm<cast_mode {value}>")
            elif key == "compute_type":
                if value not in DTYPES:
                    raise ValueError(f"unknown compute_type '{value}'")
                parts.append(f"compute_type = {value}")
            else:
                raise ValueError(f"unknown attribute '{key}'")
        return " {" + ", ".join(parts) + "}" if parts else ""

    def source(self):
        """The MLIR module text of the kernel."""
        args = self.arguments()
        params, body, tensors = [], [], {}
        for name, shape, dtype, is_output in args:
            memref = _type(shape, dtype, "memref")
            params.append(f"%{name}_m: {memref}")
            if not is_output:
                tensor = _type(shape, dtype, "tensor")
                tensors[name] = tensor
                body.append(f"    %{name} = bufferization.to_tensor %{name}_m "
                            f"restrict : {memref} to {tensor}")
        operands = ["%x"]
        for keyword in ("alpha", "weight", "bias", "residual"):
            if keyword in tensors:
                operands.append(f"{keyword}(%{keyword})")
        operand_types = [tensors[n] for n, _, _, out in args
                         if not out and n not in ("scale", "global_scale")]
        x_tensor = tensors["x"]
        source = "%x" if self.op == "quantize" else "%y"
        outputs = {name: _type(shape, dtype, "tensor")
                   for name, shape, dtype, out in args if out}
        if self.op != "quantize":
            names = ["y"] + (["residual_out"] if self.residual else [])
            names += list(self.stats_names)
            types = [x_tensor] * (2 if self.residual else 1)
            types += [outputs[name] for name in self.stats_names]
            results = ", ".join(f"%{name}" for name in names)
            result_types = (types[0] if len(types) == 1
                            else f"({', '.join(types)})")
            body.append(f"    {results} = norm.{self.op} {' '.join(operands)}"
                        f"{self._attribute_dict()} : "
                        f"({', '.join(operand_types)}) -> {result_types}")
        if self.quant is not None:
            if self.quant.get("static"):
                quantize = (f"    %q = norm.quantize {source} scale(%scale)"
                            f"{self._quant_attribute_dict()} : ({x_tensor}, "
                            f"{tensors['scale']}) -> {outputs['q']}")
            elif self.quant.get("global_scale"):
                quantize = (f"    %q, %scales = norm.quantize {source} "
                            f"global_scale(%global_scale)"
                            f"{self._quant_attribute_dict()} : ({x_tensor}, "
                            f"{tensors['global_scale']}) -> ({outputs['q']}, "
                            f"{outputs['scales']})")
            else:
                quantize = (f"    %q, %scales = norm.quantize {source}"
                            f"{self._quant_attribute_dict()} : ({x_tensor}) "
                            f"-> ({outputs['q']}, {outputs['scales']})")
            body.append(quantize)
        for name, shape, dtype, is_output in args:
            if is_output:
                body.append(
                    f"    bufferization.materialize_in_destination %{name} in "
                    f"restrict writable %{name}_m : ({outputs[name]}, "
                    f"{_type(shape, dtype, 'memref')}) -> ()")
        return (f"module {{\n  func.func @{self.name}({', '.join(params)}) "
                f"attributes {{llvm.emit_c_interface}} {{\n"
                + "\n".join(body) + "\n    return\n  }\n}\n")
