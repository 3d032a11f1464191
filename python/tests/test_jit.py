"""norm_mlir.jit: compile a module and call its functions on NumPy arrays."""

import numpy as np
import pytest

import norm_mlir
import normref as ref

ADD_RMS = """
func.func @add_rms(%x: tensor<?x?xT>, %r: tensor<?x?xT>, %w: tensor<?xT>)
    -> (tensor<?x?xT>, tensor<?x?xT>) {
  %y, %s = norm.rms_norm %x weight(%w) residual(%r)
      : (tensor<?x?xT>, tensor<?xT>, tensor<?x?xT>) -> (tensor<?x?xT>, tensor<?x?xT>)
  return %y, %s : tensor<?x?xT>, tensor<?x?xT>
}
"""


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
def test_dynamic_shapes(dtype, rng):
    module = norm_mlir.jit(ADD_RMS.replace("xT>", f"x{dtype}>"))
    np_type = ref.np_dtype(dtype)
    for rows, cols in [(3, 64), (1, 7), (5, 300)]:
        x = rng.standard_normal((rows, cols)).astype(np_type)
        r = rng.standard_normal((rows, cols)).astype(np_type)
        w = (1 + 0.1 * rng.standard_normal(cols)).astype(np_type)
        x_before = x.copy()
        y, s = module.add_rms(x, r, w)
        assert y.dtype == np_type and s.dtype == np_type
        assert y.shape == (rows, cols)
        y_ref, s_ref = ref.rms_norm(x, 1, w, 1e-6, residual=r)
        np.testing.assert_array_equal(s.astype(np.float64), s_ref)
        assert ref.error(y, y_ref) <= ref.BOUNDS[dtype]
        np.testing.assert_array_equal(x, x_before)  # inputs are not written


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_dynamic_rows(dtype, rng):
    source = ADD_RMS.replace("?x?xT>", f"?x96x{dtype}>").replace(
        "?xT>", f"96x{dtype}>")
    module = norm_mlir.jit(source)
    np_type = ref.np_dtype(dtype)
    for rows in (1, 4, 33):
        x = rng.standard_normal((rows, 96)).astype(np_type)
        r = rng.standard_normal((rows, 96)).astype(np_type)
        w = (1 + 0.1 * rng.standard_normal(96)).astype(np_type)
        y, s = module.add_rms(x, r, w)
        y_ref, s_ref = ref.rms_norm(x, 1, w, 1e-6, residual=r)
        np.testing.assert_array_equal(s.astype(np.float64), s_ref)
        assert ref.error(y, y_ref) <= ref.BOUNDS[dtype]


def test_signature_and_functions():
    module = norm_mlir.jit(ADD_RMS.replace("xT>", "xf32>"))
    assert module.functions == ("add_rms",)
    inputs, results = module.signature("add_rms")
    assert inputs[0] == ("tensor", "f32", (None, None))
    assert inputs[2] == ("tensor", "f32", (None,))
    assert len(results) == 2


SCALARS = """
func.func @scale(%x: tensor<4xf64>, %a: f64, %n: index) -> (tensor<4xf64>, index) {
  %t = tensor.splat %a : tensor<4xf64>
  %y = arith.mulf %x, %t : tensor<4xf64>
  %c1 = arith.constant 1 : index
  %m = arith.addi %n, %c1 : index
  return %y, %m : tensor<4xf64>, index
}
func.func @nothing() {
  return
}
"""


def test_scalar_arguments_and_results():
    module = norm_mlir.jit(SCALARS)
    y, m = module.scale(np.arange(4.0), 2.5, 41)
    np.testing.assert_array_equal(y, np.arange(4.0) * 2.5)
    assert m == 42
    assert module.invoke("nothing") is None


def test_non_contiguous_input(rng):
    module = norm_mlir.jit(ADD_RMS.replace("xT>", "xf32>"))
    x = rng.standard_normal((64, 6)).astype(np.float32).T  # strided view
    r = np.zeros((6, 64), np.float32)
    w = np.ones(64, np.float32)
    y, _ = module.add_rms(x, r, w)
    y_ref, _ = ref.rms_norm(np.ascontiguousarray(x), 1, w, 1e-6, residual=r)
    assert ref.error(y, y_ref) <= 1e-5


MEMREF = """
func.func @fill(%m: memref<?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %v, %m[%i] : memref<?xf32>
  }
  return
}
"""


def test_memref_arguments_are_written_in_place():
    module = norm_mlir.jit(MEMREF)
    a = np.zeros(5, np.float32)
    module.fill(a, 3.0)
    np.testing.assert_array_equal(a, np.full(5, 3.0, np.float32))
    with pytest.raises(ValueError, match="writable C-contiguous"):
        module.fill(np.zeros(10, np.float32)[::2], 1.0)


def test_wrong_dtype_raises_type_error():
    module = norm_mlir.jit(ADD_RMS.replace("xT>", "xf32>"))
    x = np.ones((2, 8), np.float64)
    with pytest.raises(TypeError, match="argument 0 of @add_rms: expected "
                                        "an array of f32"):
        module.add_rms(x, x, np.ones(8))


def test_wrong_rank_and_static_size_raise_value_error():
    module = norm_mlir.jit(ADD_RMS.replace("xT>", "xf32>"))
    x = np.ones((2, 8), np.float32)
    with pytest.raises(ValueError, match="rank 2"):
        module.add_rms(x.reshape(16), x, np.ones(8, np.float32))
    static = norm_mlir.jit(SCALARS)
    with pytest.raises(ValueError, match="dimension 0 must be 4, got 5"):
        static.scale(np.ones(5), 1.0, 0)


def test_wrong_arguments_raise():
    module = norm_mlir.jit(SCALARS)
    with pytest.raises(TypeError, match="takes 3 arguments, got 1"):
        module.scale(np.ones(4))
    with pytest.raises(TypeError, match="Python scalar of type f64"):
        module.scale(np.ones(4), "two", 1)
    with pytest.raises(AttributeError, match="no public function 'missing'"):
        module.missing
    with pytest.raises(AttributeError):
        module.invoke("missing")


def test_unsupported_signature_raises_type_error():
    module = norm_mlir.jit("""
func.func @f(%x: i128) -> i128 {
  return %x : i128
}""")
    with pytest.raises(TypeError, match="argument #0 has type i128"):
        module.f(3)


def test_linalg_lowering_and_threads(rng):
    source = ADD_RMS.replace("xT>", "xf32>")
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = np.ones(32, np.float32)
    y_ref, _ = ref.rms_norm(x, 1, w, 1e-6, residual=np.zeros_like(x))
    linalg = norm_mlir.jit(source, "norm-cpu-pipeline{lowering=linalg}")
    y, _ = linalg.add_rms(x, np.zeros_like(x), w)
    assert ref.error(y, y_ref) <= 1e-5
    if not norm_mlir._norm_mlir.openmp_runtime():
        pytest.skip("the OpenMP runtime (libomp) is not installed")
    threaded = norm_mlir.jit(source, "norm-cpu-pipeline{threads=2}")
    y, _ = threaded.add_rms(x, np.zeros_like(x), w)
    assert ref.error(y, y_ref) <= 1e-5
