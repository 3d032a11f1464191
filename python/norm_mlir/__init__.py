"""norm_mlir: the norm dialect of norm-mlir from Python.

    import numpy as np, norm_mlir
    y = norm_mlir.rms_norm(x, (4096,), weight=w)        # ready-made ops
    text = norm_mlir.compile(src, pipeline="canonicalize,norm-to-linalg")
    mod = norm_mlir.jit(src)                             # norm-cpu-pipeline
    out = mod.main(a, b)                                 # NumPy in and out

Parse, verify and transform modules given as text (`compile`, `verify`),
JIT-compile a module for the host CPU and call its public functions on
NumPy arrays (`jit`), and call `layer_norm`, `rms_norm`, `dyt` and
`quantize` directly (compiled once per signature and cached); the norms
take `quant=` to return their output quantized in the same kernel, to FP8
or int8 or to a block-scaled format ("mxfp8", "fp8_1x128", "mxfp4",
"nvfp4").
Element types: f32, f64, f16 and bf16 (`ml_dtypes.bfloat16`); quantized
results are int8 or `ml_dtypes.float8_e4m3fn`, block scales
`ml_dtypes.float8_e8m0fnu` or `ml_dtypes.float8_e4m3fn`, and f4E2M1FN
tensors travel packed: a uint8 array with the last dim halved, element 2k
in the low nibble of byte k (PyTorch's float4_e2m1fn_x2). Every MLIR
diagnostic is raised as `MLIRError` (a `ValueError`) carrying its text; bad
dtypes raise `TypeError` and bad shapes `ValueError`.
"""

import functools
import math
import re
import threading

import numpy as np

from . import _norm_mlir
from ._kernels import (QUANT_FORMATS, KernelSpec, check_quant,
                       swizzled_scales_size)
from ._norm_mlir import MLIRError

__all__ = ["MLIRError", "Module", "compile", "dyt", "dyt_grad", "jit",
           "layer_norm", "layer_norm_grad", "quantize", "rms_norm",
           "rms_norm_grad", "verify"]

#===----------------------------------------------------------------------===#
# Element types
#===----------------------------------------------------------------------===#


@functools.lru_cache(maxsize=None)
def _bfloat16():
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


@functools.lru_cache(maxsize=None)
def _float8_e4m3fn():
    import ml_dtypes
    return np.dtype(ml_dtypes.float8_e4m3fn)


@functools.lru_cache(maxsize=None)
def _float8_e8m0fnu():
    import ml_dtypes
    return np.dtype(ml_dtypes.float8_e8m0fnu)


def _numpy_dtype(name):
    """The NumPy dtype of an MLIR element type name (f4E2M1FN: the packed
    bytes, two elements per uint8)."""
    if name == "bf16":
        return _bfloat16()
    if name == "f8E4M3FN":
        return _float8_e4m3fn()
    if name == "f8E8M0FNU":
        return _float8_e8m0fnu()
    if name == "f4E2M1FN":
        return np.dtype(np.uint8)
    return np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64,
                     "i1": np.bool_, "i8": np.int8, "i16": np.int16,
                     "i32": np.int32, "i64": np.int64,
                     "index": np.int64}[name])


def _float_type_name(dtype):
    """'f16', 'bf16', 'f32' or 'f64' for a NumPy float dtype, else None."""
    dtype = np.dtype(dtype)
    for name in ("f32", "f64", "f16"):
        if dtype == _numpy_dtype(name):
            return name
    if dtype.name == "bfloat16":
        return "bf16"
    return None


def _contiguous(array):
    """A C-contiguous version of `array` (unlike np.ascontiguousarray,
    keeps 0-d arrays 0-d)."""
    return array if array.flags.c_contiguous else array.copy(order="C")


def _to_native(array, name):
    """How an array of element type `name` crosses into the extension:
    bf16 travels as its uint16 bit pattern, f8E4M3FN as its uint8 one."""
    if name == "bf16":
        return array.view(np.uint16)
    if name in ("f8E4M3FN", "f8E8M0FNU"):
        return array.view(np.uint8)
    return array


def _from_native(array, name):
    if name == "bf16":
        return array.view(_bfloat16())
    if name == "f8E4M3FN":
        return array.view(_float8_e4m3fn())
    if name == "f8E8M0FNU":
        return array.view(_float8_e8m0fnu())
    return array


#===----------------------------------------------------------------------===#
# Modules
#===----------------------------------------------------------------------===#


def compile(source, pipeline=""):
    """Parses and verifies `source`, runs the textual pass `pipeline` on it
    (e.g. "canonicalize,norm-to-linalg" or "builtin.module(norm-cpu-pipeline)")
    and returns the printed result. Raises MLIRError with the diagnostics."""
    return _norm_mlir.compile(source, pipeline)


def verify(source):
    """Parses and verifies `source`; raises MLIRError with the diagnostics."""
    _norm_mlir.verify(source)


def _threads(pipeline):
    found = re.findall(r"threads\s*=\s*(\d+)", pipeline)
    return max((int(t) for t in found), default=1)


class Module:
    """A module lowered by `pipeline` (default norm-cpu-pipeline) and
    JIT-compiled for the host CPU.

    Every public function is callable as an attribute (`mod.main(a, b)`) or
    with `mod.invoke("main", a, b)`. Tensor and memref arguments take NumPy
    arrays of exactly the declared element type and of the declared rank
    and static sizes (dynamic sizes are free); scalar arguments take Python
    numbers. MLIR's runner utilities (memrefCopy, printMemref*) and, for
    threads > 1, the OpenMP runtime are loaded first. Tensor arguments are
    never written; a memref argument is
    passed by reference (it must be a writable C-contiguous array). Tensor
    results come back as new arrays; one result is returned as is, several
    as a tuple, none as None.
    """

    def __init__(self, source, pipeline="norm-cpu-pipeline", *,
                 shared_libs=()):
        libs = list(_norm_mlir.runner_utils())
        if _threads(pipeline) > 1:
            runtime = _norm_mlir.openmp_runtime()
            if not runtime:
                raise MLIRError("threads > 1 needs the OpenMP runtime "
                                "(libomp), which is not installed")
            libs.append(runtime)
        libs += [str(lib) for lib in shared_libs]
        self._compiled = _norm_mlir.CompiledModule(source, pipeline, libs)

    @property
    def functions(self):
        """Names of the public functions."""
        return tuple(self._compiled.function_names())

    def __getattr__(self, name):
        if name.startswith("_") or name not in self.functions:
            raise AttributeError(f"the module has no public function '{name}'")
        return functools.partial(self.invoke, name)

    def signature(self, name):
        """((kind, dtype, shape), ...) of the arguments and of the results
        of `name`; kind is 'tensor', 'memref' or 'scalar', a dynamic size is
        None."""
        return self._compiled.signature(name)

    def invoke(self, name, *args):
        inputs, results = self._compiled.signature(name)
        if len(args) != len(inputs):
            raise TypeError(f"@{name} takes {len(inputs)} arguments, "
                            f"got {len(args)}")
        native = []
        for index, (arg, (kind, dtype, shape)) in enumerate(zip(args, inputs)):
            if kind == "scalar":
                native.append(arg)
                continue
            expected = _numpy_dtype(dtype)
            array = arg if isinstance(arg, np.ndarray) else np.asarray(arg)
            if array.dtype != expected:
                raise TypeError(f"argument {index} of @{name}: expected an "
                                f"array of {dtype} ({expected}), got "
                                f"{array.dtype}")
            if kind == "memref":
                if not (array.flags.c_contiguous and array.flags.writeable):
                    raise ValueError(
                        f"argument {index} of @{name}: a memref argument "
                        "must be a writable C-contiguous array")
            else:
                array = _contiguous(array)
            native.append(_to_native(array, dtype))
        outputs = self._compiled.invoke(name, native)
        outputs = [out if kind == "scalar" else _from_native(out, dtype)
                   for out, (kind, dtype, _) in zip(outputs, results)]
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def jit(source, pipeline="norm-cpu-pipeline", **kwargs):
    """Compiles `source` for the host CPU; see `Module`."""
    return Module(source, pipeline, **kwargs)


#===----------------------------------------------------------------------===#
# Ready-made ops
#===----------------------------------------------------------------------===#

# Compiled kernels by signature (op, dtypes, normalized size, operands and
# attributes); the number of rows is a dynamic dim, so one kernel serves
# every batch size.
_kernel_cache = {}
_kernel_lock = threading.Lock()


def _kernel(spec):
    source = spec.source()
    with _kernel_lock:
        module = _kernel_cache.get(source)
        if module is None:
            module = Module(source)
            _kernel_cache[source] = module
    return module


def kernel_cache_size():
    """How many kernels the ready-made ops have compiled so far."""
    return len(_kernel_cache)


def _check_input(x, what="input"):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what} must be a NumPy array, got "
                        f"{type(x).__name__}")
    name = _float_type_name(x.dtype)
    if name is None:
        raise TypeError(f"{what} must be float16, bfloat16, float32 or "
                        f"float64, got {x.dtype}")
    if x.ndim < 1:
        raise ValueError(f"{what} must have rank >= 1")
    return name


def _normalized_shape(x, normalized_shape):
    if isinstance(normalized_shape, (int, np.integer)):
        normalized_shape = (int(normalized_shape),)
    normalized_shape = tuple(int(d) for d in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or k > x.ndim or tuple(x.shape[x.ndim - k:]) != normalized_shape:
        raise ValueError(
            f"Given normalized_shape={list(normalized_shape)}, expected input "
            f"with shape [*, {', '.join(map(str, normalized_shape))}], but "
            f"got input of size {list(x.shape)}")
    return normalized_shape


def _check_param(value, what, x_type, shape):
    """Checks weight/bias: x's dtype or float32, the normalized shape."""
    if value is None:
        return None
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{what} must be a NumPy array, got "
                        f"{type(value).__name__}")
    name = _float_type_name(value.dtype)
    if name not in (x_type, "f32"):
        raise TypeError(f"{what} must have the input's dtype "
                        f"({_numpy_dtype(x_type)}) or float32, got "
                        f"{value.dtype}")
    if tuple(value.shape) != tuple(shape):
        raise ValueError(f"{what} must have shape {tuple(shape)}, got "
                         f"{tuple(value.shape)}")
    return name


def _check_residual(residual, x, x_type):
    if residual is None:
        return
    if not isinstance(residual, np.ndarray) or residual.dtype != x.dtype:
        raise TypeError(f"residual must be a NumPy array of the input's "
                        f"dtype ({x.dtype})")
    if residual.shape != x.shape:
        raise ValueError(f"residual must have the input's shape "
                         f"{tuple(x.shape)}, got {tuple(residual.shape)}")


def _check_eps(eps):
    eps = float(eps)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be finite and >= 0, got {eps}")
    return eps


def _compute_type(compute_dtype):
    if compute_dtype is None:
        return None
    name = _float_type_name(compute_dtype)
    if name is None:
        raise TypeError(f"compute_dtype must be a float dtype, got "
                        f"{compute_dtype}")
    return name


def _run(spec, x, normalized_size, operands, residual, scale=None):
    """Runs the kernel of `spec` on x seen as [rows, normalized_size]:
    returns y (or q and the scales) and residual_out, as the ready-made ops
    do."""
    rows = x.size // normalized_size if normalized_size else 0
    out_dtype = (x.dtype if spec.quant is None
                 else _numpy_dtype(spec.quant["dtype"]))
    # f4E2M1FN travels packed: two elements per byte (quantization is
    # along the last dim, the only normalized one).
    out_size, out_shape = normalized_size, x.shape
    if spec.quant is not None and spec.quant["dtype"] == "f4E2M1FN":
        out_size //= 2
        out_shape = x.shape[:-1] + (out_size,)
    out = np.empty(out_shape, out_dtype)
    scales = None
    if spec.quant is not None and not spec.quant.get("static"):
        group = spec.quant.get("group_size") or normalized_size
        groups = normalized_size // group if normalized_size else 1
        scales_dtype = _numpy_dtype(spec.scales_dtype)
        if spec.swizzled:
            scales = np.empty(swizzled_scales_size(rows, groups),
                              scales_dtype)
        else:
            scales = np.empty(x.shape[:-1] + (groups,), scales_dtype)
    residual_out = np.empty(x.shape, x.dtype) if residual is not None else None
    lead = x.shape[:x.ndim - len(spec.normalized_shape)]
    stats = [np.empty(lead, _numpy_dtype(spec.compute_type))
             for _ in spec.stats_names]
    if x.size:
        def flat(a, size=normalized_size):
            return _contiguous(a).reshape(rows, size)
        args = [flat(x)]
        args += [_contiguous(a) for a in operands]
        if residual is not None:
            args.append(flat(residual))
        if scale is not None:
            args.append(scale)
        args.append(out.reshape(rows, out_size))
        if scales is not None:
            args.append(scales if spec.swizzled
                        else scales.reshape(rows, scales.shape[-1]))
        if residual is not None:
            args.append(residual_out.reshape(rows, normalized_size))
        args += [stat.reshape(rows) for stat in stats]
        _kernel(spec).invoke(spec.name, *args)
    results = [out]
    if spec.quant is not None:
        results.append(scales)
    if residual is not None:
        results.append(residual_out)
    results += stats
    return tuple(results) if len(results) > 1 else out


_QUANT_NAMES = {"fp8": "f8E4M3FN", "float8_e4m3fn": "f8E4M3FN",
                "f8e4m3fn": "f8E4M3FN", "int8": "i8", "i8": "i8"}

# The block-scaled formats (docs/Ops.md, "Block-scaled forms"): q's element
# type, the scales', the default group size and scale_rounding.
_BLOCK_FORMATS = {name: form for name, form in QUANT_FORMATS.items()
                  if form[1] != "f32"}


def _quant_dtype(dtype):
    """'f8E4M3FN' or 'i8' for a quantized dtype given by name or dtype."""
    if isinstance(dtype, str):
        name = _QUANT_NAMES.get(dtype.lower())
    else:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            dtype = None
        name = ("i8" if dtype == np.int8 else
                "f8E4M3FN" if dtype is not None
                and dtype.name == "float8_e4m3fn" else None)
    if name is None:
        raise TypeError(f"the quantized dtype must be 'fp8' "
                        f"(ml_dtypes.float8_e4m3fn), 'int8' or a "
                        f"block-scaled format ({', '.join(_BLOCK_FORMATS)}), "
                        f"got {dtype!r}")
    return name


def _block_quant_spec(size, form, group_size, scale_rounding, scale_layout,
                      global_scale, **rest):
    """The `quant` of a block-scaled format and its 0-d f32 global scale
    (NVFP4; default 1.0)."""
    given = [key for key, value in rest.items() if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not for the block-scaled "
                         f"format '{form}' (its scales are dynamic)")
    qtype, stype, default_group, default_rounding = _BLOCK_FORMATS[form]
    group_size = int(group_size) or default_group
    if size % group_size:
        raise ValueError(f"{form} needs a last dim that group_size "
                         f"{group_size} divides, got {size}")
    if scale_layout not in (None, "row_major", "swizzled_128x4"):
        raise ValueError(f"scale_layout must be 'row_major' or "
                         f"'swizzled_128x4', got {scale_layout!r}")
    if scale_rounding not in (None, "floor", "up"):
        raise ValueError(f"scale_rounding must be 'floor' or 'up', got "
                         f"{scale_rounding!r}")
    if form == "nvfp4":
        if scale_rounding is not None:
            raise ValueError("scale_rounding is for the power-of-two scales "
                             "of mxfp8, fp8_1x128 and mxfp4, not nvfp4")
        global_scale = 1.0 if global_scale is None else global_scale
        scale_array = np.asarray(global_scale, dtype=np.float32)
        if scale_array.size != 1:
            raise ValueError(f"global_scale must be one number, got shape "
                             f"{scale_array.shape}")
        scale_array = scale_array.reshape(())
    elif global_scale is not None:
        raise ValueError(f"global_scale is for nvfp4, not {form}")
    else:
        scale_array = None
    quant = {"dtype": qtype, "static": False, "group_size": group_size,
             "scales_dtype": stype,
             "scale_rounding": scale_rounding or default_rounding,
             "scale_layout": scale_layout,
             "global_scale": form == "nvfp4"}
    try:
        check_quant(quant, (None, size))
    except ValueError as error:
        raise ValueError(f"{form}: {error}") from None
    return quant, scale_array


def _quant_spec(x_type, size, dtype="fp8", scale=None, group_size=0,
                scale_ub=None, min_scale=None, scale_rounding=None,
                scale_layout=None, global_scale=None):
    """The `quant` of a KernelSpec and the 0-d f32 scale array (static, or
    NVFP4's global scale)."""
    if x_type == "f64":
        raise TypeError("float64 input cannot be quantized (float16, "
                        "bfloat16 or float32)")
    if isinstance(dtype, str) and dtype.lower() in _BLOCK_FORMATS:
        return _block_quant_spec(size, dtype.lower(), group_size,
                                 scale_rounding, scale_layout, global_scale,
                                 scale=scale, scale_ub=scale_ub,
                                 min_scale=min_scale)
    name = _quant_dtype(dtype)
    given = [key for key, value in (("scale_rounding", scale_rounding),
                                    ("scale_layout", scale_layout),
                                    ("global_scale", global_scale))
             if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)} are for the block-scaled "
                         f"formats ({', '.join(_BLOCK_FORMATS)})")
    group_size = int(group_size)
    if group_size < 0 or (group_size and size % group_size):
        raise ValueError(f"group_size {group_size} must be >= 0 and divide "
                         f"the last dim {size}")
    scale_array = None
    if scale is not None:
        if group_size or scale_ub is not None or min_scale is not None:
            raise ValueError("group_size, scale_ub and min_scale are for "
                             "dynamic scales (scale=None)")
        scale_array = np.asarray(scale, dtype=np.float32)
        if scale_array.size != 1:
            raise ValueError(f"scale must be one number, got shape "
                             f"{scale_array.shape}")
        scale_array = scale_array.reshape(())
    if scale_ub is not None and not float(scale_ub) > 0:
        raise ValueError(f"scale_ub must be > 0, got {scale_ub}")
    if min_scale is not None and not (math.isfinite(float(min_scale))
                                      and float(min_scale) > 0):
        raise ValueError(f"min_scale must be finite and > 0, got "
                         f"{min_scale}")
    quant = {"dtype": name, "static": scale is not None,
             "group_size": group_size,
             "scale_ub": None if scale_ub is None else float(scale_ub),
             "min_scale": None if min_scale is None else float(min_scale)}
    return quant, scale_array


def _quant_arg(quant, x_type, shape):
    """Reads the `quant=` argument of the norms: None, a dtype ('fp8',
    'int8': dynamic per-token scales), a block-scaled format ('mxfp8',
    'fp8_1x128', 'mxfp4', 'nvfp4') or a dict of quantize()'s keywords."""
    if quant is None:
        return None, None
    if len(shape) != 1:
        raise ValueError("quant= needs the norm over the last dim only")
    if isinstance(quant, dict):
        unknown = set(quant) - {"dtype", "scale", "group_size", "scale_ub",
                                "min_scale", "scale_rounding",
                                "scale_layout", "global_scale"}
        if unknown:
            raise TypeError(f"unknown quant keys {sorted(unknown)}")
        return _quant_spec(x_type, shape[0], **quant)
    return _quant_spec(x_type, shape[0], quant)


def quantize(input, dtype="fp8", *, scale=None, group_size=0, scale_ub=None,
             min_scale=None, scale_rounding=None, scale_layout=None,
             global_scale=None):
    """Quantizes `input` (float16, bfloat16 or float32) along its last dim
    to FP8 e4m3fn (`ml_dtypes.float8_e4m3fn`) or int8, as norm.quantize
    (docs/Ops.md): with `scale` (a number), returns q = sat(round(x /
    scale)); without, returns (q, scales) with one float32 scale per group
    of `group_size` elements (0: per row), s = max(min(amax, scale_ub) /
    QMAX, min_scale).

    `dtype` may also name a block-scaled format, which returns (q, scales):
    "mxfp8" (float8_e4m3fn values, `ml_dtypes.float8_e8m0fnu` power-of-two
    scales, groups of 32), "fp8_1x128" (the same with groups of 128 and
    `scale_rounding` "up" by default), "mxfp4" (FP4 e2m1 values, E8M0
    scales, groups of 32) and "nvfp4" (FP4 values, float8_e4m3fn scales,
    groups of 16, `global_scale` a number, default 1.0). FP4 values come
    packed: a uint8 array with the last dim halved, element 2k in the low
    nibble of byte k. `scale_rounding` "floor" (OCP MX, the default) or
    "up" picks the E8M0 exponents; `scale_layout` "swizzled_128x4" returns
    the scales as a flat array of roundup(M, 128) * roundup(N / G, 4)
    (M: the rows, the product of the leading dims) in the tile layout of
    the block-scaled matmuls, instead of "row_major" (leading dims +
    (N / G,))."""
    x_type = _check_input(input)
    size = input.shape[-1]
    quant, scale_array = _quant_spec(x_type, size, dtype, scale, group_size,
                                     scale_ub, min_scale, scale_rounding,
                                     scale_layout, global_scale)
    spec = _spec("quantize", x_type, size, quant=quant)
    result = _run(spec, input, size, [], None, scale_array)
    return result[0] if quant["static"] else result


def _spec(op, x_type, normalized_size, **kwargs):
    return KernelSpec(op, (None, normalized_size), x_type, **kwargs)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, *,
               residual=None, compute_dtype=None, cast_mode="final",
               quant=None, return_stats=False):
    """Layer normalization over the trailing `normalized_shape` dims, as
    torch.nn.functional.layer_norm: (x - mean) / sqrt(var + eps) * weight +
    bias (biased variance). With `residual=r`, normalizes s = input + r
    (rounded to the input dtype) and returns (y, s). With `quant` ('fp8',
    'int8', a block-scaled format 'mxfp8', 'fp8_1x128', 'mxfp4' or 'nvfp4',
    or a dict of quantize()'s keywords with its dtype under "dtype"), y is
    quantized in the same kernel and (q, scales) (scales None for a given
    scale) replaces y.
    With `return_stats=True`, the row statistics mean and rstd (shape: the
    leading dims, dtype: the compute type) follow, as layer_norm_grad takes
    them."""
    x_type = _check_input(input)
    shape = _normalized_shape(input, normalized_shape)
    w = _check_param(weight, "weight", x_type, shape)
    b = _check_param(bias, "bias", x_type, shape)
    _check_residual(residual, input, x_type)
    size = math.prod(shape)
    q, scale = _quant_arg(quant, x_type, shape)
    spec = _spec("layer_norm", x_type, size, weight=w, bias=b,
                 residual=residual is not None, quant=q, stats=return_stats,
                 attrs={"epsilon": _check_eps(eps),
                        "compute_type": _compute_type(compute_dtype),
                        "cast_mode": None if cast_mode == "final"
                        else cast_mode})
    operands = [a.reshape(size) for a in (weight, bias) if a is not None]
    return _run(spec, input, size, operands, residual, scale)


def rms_norm(input, normalized_shape, weight=None, eps=None, *,
             residual=None, epsilon_mode="inside_sqrt", weight_offset=0.0,
             compute_dtype=None, cast_mode="final", quant=None,
             return_stats=False):
    """RMS normalization over the trailing `normalized_shape` dims, as
    torch.nn.functional.rms_norm: x / sqrt(mean(x^2) + eps) * weight; `eps`
    None means the machine epsilon of the input dtype (as PyTorch).
    `weight_offset` is added to the weight in the compute type (Gemma's
    1 + w); `epsilon_mode` 'outside_sqrt' and 'clamp' give 1/(rms + eps) and
    1/max(rms, eps). With `residual=r`, normalizes s = input + r and returns
    (y, s). `quant` as for layer_norm. With `return_stats=True`, the row
    factor rstd follows (as rms_norm_grad takes it)."""
    x_type = _check_input(input)
    shape = _normalized_shape(input, normalized_shape)
    w = _check_param(weight, "weight", x_type, shape)
    _check_residual(residual, input, x_type)
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    if weight_offset and weight is None:
        raise ValueError("weight_offset needs a weight")
    size = math.prod(shape)
    q, scale = _quant_arg(quant, x_type, shape)
    spec = _spec("rms_norm", x_type, size, weight=w,
                 residual=residual is not None, quant=q, stats=return_stats,
                 attrs={"epsilon": _check_eps(eps),
                        "epsilon_mode": None if epsilon_mode == "inside_sqrt"
                        else epsilon_mode,
                        "weight_offset": float(weight_offset) or None,
                        "compute_type": _compute_type(compute_dtype),
                        "cast_mode": None if cast_mode == "final"
                        else cast_mode})
    operands = [weight.reshape(size)] if weight is not None else []
    return _run(spec, input, size, operands, residual, scale)


def dyt(input, alpha, weight=None, bias=None, *, residual=None,
        compute_dtype=None, cast_mode="final", quant=None):
    """Dynamic Tanh: tanh(alpha * x) * weight + bias, with weight and bias
    over the trailing dims of their shape (default: the last dim). `alpha`
    is a Python number (used in float32 for 16-bit inputs, else in the
    input dtype) or a one-element array of the input dtype or float32. With
    `residual=r`, applies to s = input + r and returns (y, s). `quant` as
    for layer_norm."""
    x_type = _check_input(input)
    reference = weight if weight is not None else bias
    if reference is not None and isinstance(reference, np.ndarray):
        shape = _normalized_shape(input, reference.shape)
    else:
        shape = (input.shape[-1],)
    w = _check_param(weight, "weight", x_type, shape)
    b = _check_param(bias, "bias", x_type, shape)
    _check_residual(residual, input, x_type)
    if isinstance(alpha, np.ndarray):
        a_type = _float_type_name(alpha.dtype)
        if a_type not in (x_type, "f32") or alpha.size != 1:
            raise TypeError(f"alpha must be a number or a one-element array "
                            f"of the input's dtype or float32, got "
                            f"{alpha.dtype} of shape {alpha.shape}")
        alpha_array = alpha.reshape(())
    else:
        a_type = "f32" if x_type in ("f16", "bf16") else x_type
        alpha_array = np.array(float(alpha), dtype=_numpy_dtype(a_type))
    size = math.prod(shape)
    q, scale = _quant_arg(quant, x_type, shape)
    spec = _spec("dyt", x_type, size, weight=w, bias=b, alpha=a_type,
                 residual=residual is not None, quant=q,
                 attrs={"compute_type": _compute_type(compute_dtype),
                        "cast_mode": None if cast_mode == "final"
                        else cast_mode})
    operands = [alpha_array]
    operands += [a.reshape(size) for a in (weight, bias) if a is not None]
    return _run(spec, input, size, operands, residual, scale)


#===----------------------------------------------------------------------===#
# Gradient ops
#===----------------------------------------------------------------------===#

_GRAD_COMPUTE = {"f16": "f32", "bf16": "f32", "f32": "f32", "f64": "f64"}


class _GradSpec:
    """One gradient kernel: @main(dy, x, saved..., [weight]) on rows x N
    (rows dynamic) calling norm.<op>_grad; the source is the cache key."""

    def __init__(self, op, x_type, size, saved, weight, has_bias,
                 weight_offset):
        self.op, self.x_type, self.size = op, x_type, size
        self.saved, self.weight = saved, weight
        self.has_bias, self.weight_offset = has_bias, weight_offset

    def source(self):
        xt = f"tensor<?x{self.size}x{self.x_type}>"
        args, types, operands = ["%dy", "%x"], [xt, xt], ""
        for name, type_ in self.saved:
            args.append(f"%{name}")
            types.append(type_)
            operands += f" {name}(%{name})"
        results = [xt]
        if self.weight:
            args.append("%w")
            types.append(self.weight)
            operands += " weight(%w)"
            results.append(self.weight)
        if self.has_bias:
            results.append(f"tensor<{self.size}x{self.weight_type()}>")
        if self.op == "dyt":
            results.append(dict(self.saved)["alpha"])
        attrs = []
        if self.has_bias:
            attrs.append("has_bias")
        if self.weight_offset:
            attrs.append(f"weight_offset = {self.weight_offset!r} : f32")
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        signature = ", ".join(f"{a}: {t}" for a, t in zip(args, types))
        names = ", ".join(f"%r{i}" for i in range(len(results)))
        result_types = ", ".join(results)
        return (f"func.func @main({signature}) -> ({result_types}) {{\n"
                f"  {names} = norm.{self.op}_grad %dy, %x{operands}{attr} : "
                f"({', '.join(types)}) -> ({result_types})\n"
                f"  return {names} : {result_types}\n}}\n")

    def weight_type(self):
        if self.weight:
            return self.weight.rsplit("x", 1)[1].rstrip(">")
        return self.x_type


def _grad_inputs(dy, x, normalized_shape):
    x_type = _check_input(x, "x")
    if not isinstance(dy, np.ndarray) or dy.dtype != x.dtype or \
            dy.shape != x.shape:
        raise TypeError("dy must be an array of the dtype and shape of x")
    shape = _normalized_shape(x, normalized_shape)
    size = math.prod(shape)
    return x_type, shape, size, x.shape[:x.ndim - len(shape)]


def _grad_param(value, what, x_type, shape, scalar_ok=False):
    if value is None:
        return None, None
    if scalar_ok and isinstance(value, np.ndarray) and value.size == 1 and \
            math.prod(shape) != 1:
        name = _float_type_name(value.dtype)
        if name not in (x_type, "f32"):
            raise TypeError(f"{what} must have the input's dtype or float32")
        return f"tensor<1x{name}>", value.reshape(1)
    name = _check_param(value, what, x_type, shape)
    return f"tensor<{math.prod(shape)}x{name}>", value.reshape(-1)


def _grad_stat(value, what, x_type, leading):
    compute = _GRAD_COMPUTE[x_type]
    expected = _numpy_dtype(compute)
    if not isinstance(value, np.ndarray) or value.dtype != expected or \
            value.size != math.prod(leading):
        raise TypeError(f"{what} must be a {expected} array with one value "
                        f"per row ({math.prod(leading)})")
    return value.reshape(-1), f"tensor<?x{compute}>"


def _grad_run(spec, dy, x, size, operands, leading, shape, weight):
    rows = math.prod(leading)
    flat = [a.reshape(rows, size) for a in (dy, x)]
    outputs = _kernel(spec).main(*flat, *operands)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    dx = outputs[0].reshape(x.shape)
    rest = list(outputs[1:])
    dweight = rest.pop(0).reshape(weight.shape) if weight is not None \
        else None
    dbias = rest.pop(0).reshape(shape) if spec.has_bias else None
    return dx, dweight, dbias, rest


def layer_norm_grad(dy, x, mean, rstd, normalized_shape, weight=None, *,
                    has_bias=False):
    """Gradients of layer_norm: (dx, dweight, dbias), dweight None without
    weight and dbias None unless has_bias. mean and rstd (= rsqrt(var +
    eps)) are the forward's statistics, one per row, in float32 (float64 for
    float64 inputs)."""
    x_type, shape, size, leading = _grad_inputs(dy, x, normalized_shape)
    m, mt = _grad_stat(mean, "mean", x_type, leading)
    r, rt = _grad_stat(rstd, "rstd", x_type, leading)
    wt, w = _grad_param(weight, "weight", x_type, shape)
    spec = _GradSpec("layer_norm", x_type, size, [("mean", mt), ("rstd", rt)],
                     wt, has_bias, 0.0)
    operands = [m, r] + ([w] if w is not None else [])
    dx, dw, db, _ = _grad_run(spec, dy, x, size, operands, leading, shape,
                              weight)
    return dx, dw, db


def rms_norm_grad(dy, x, rstd, normalized_shape, weight=None, *,
                  weight_offset=0.0):
    """Gradients of rms_norm (epsilon_mode inside_sqrt): (dx, dweight),
    dweight None without weight. rstd = rsqrt(mean(x^2) + eps) per row, in
    float32 (float64 for float64 inputs); a one-element weight is a scalar
    gain whose gradient sums over every element."""
    x_type, shape, size, leading = _grad_inputs(dy, x, normalized_shape)
    r, rt = _grad_stat(rstd, "rstd", x_type, leading)
    wt, w = _grad_param(weight, "weight", x_type, shape, scalar_ok=True)
    if weight_offset and weight is None:
        raise ValueError("weight_offset needs a weight")
    spec = _GradSpec("rms_norm", x_type, size, [("rstd", rt)], wt, False,
                     float(weight_offset))
    operands = [r] + ([w] if w is not None else [])
    dx, dw, _, _ = _grad_run(spec, dy, x, size, operands, leading, shape,
                             weight)
    return dx, dw


def dyt_grad(dy, x, alpha, weight=None, *, has_bias=False):
    """Gradients of dyt: (dx, dweight, dbias, dalpha), dweight None without
    weight, dbias None unless has_bias; the normalized dims are those of
    weight (default: the last dim). alpha is a one-element array of the
    input's dtype or float32 (dalpha has its dtype) or a number."""
    x_type = _check_input(x, "x")
    shape = tuple(weight.shape) if isinstance(weight, np.ndarray) \
        else (x.shape[-1],)
    x_type, shape, size, leading = _grad_inputs(dy, x, shape)
    if isinstance(alpha, np.ndarray):
        a_type = _float_type_name(alpha.dtype)
        if a_type not in (x_type, "f32") or alpha.size != 1:
            raise TypeError("alpha must be a number or a one-element array "
                            "of the input's dtype or float32")
        a = alpha.reshape(())
    else:
        a_type = "f32" if x_type in ("f16", "bf16") else x_type
        a = np.array(float(alpha), dtype=_numpy_dtype(a_type))
    wt, w = _grad_param(weight, "weight", x_type, shape)
    spec = _GradSpec("dyt", x_type, size, [("alpha", f"tensor<{a_type}>")],
                     wt, has_bias, 0.0)
    operands = [a] + ([w] if w is not None else [])
    dx, dw, db, rest = _grad_run(spec, dy, x, size, operands, leading, shape,
                                 weight)
    return dx, dw, db, rest[0]

