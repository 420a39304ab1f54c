"""ir.numpy numerically: evaluating a traced function must equal running it with real NumPy.

Each function is traced with `make_jaxpr`, evaluated with `eval.eval_jaxpr`, and compared with
the same NumPy function on the same inputs. Shapes, broadcasting and indices come from
hypothesis. Dtypes follow JAX (x64), so results are compared by value after NumPy's own result
is cast to the traced result's dtype where the two promotion rules differ.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from ir import lax
from ir.tracing import make_jaxpr


def run(fn, *args, **kwargs):
    """Trace `fn` on `args` and evaluate the jaxpr on them; a list of outputs."""
    closed = make_jaxpr(fn, **kwargs)(*args)
    return eval_jaxpr(closed, *args)


def run1(fn, *args):
    (out,) = run(fn, *args)
    return out


def assert_close(got, want, rtol=1e-12, atol=1e-12):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want.astype(got.dtype) if want.dtype != got.dtype else want,
                               rtol=rtol, atol=atol, equal_nan=True)


RNG = np.random.default_rng(0)


def _uniform(lo, hi, shape=(3, 4)):
    return RNG.uniform(lo, hi, size=shape)


# name -> (ir.numpy function, numpy function, input sampler)
UNARY = {
    "sin": (jnp.sin, np.sin, lambda: _uniform(-3, 3)),
    "cos": (jnp.cos, np.cos, lambda: _uniform(-3, 3)),
    "tan": (jnp.tan, np.tan, lambda: _uniform(-1.2, 1.2)),
    "arcsin": (jnp.arcsin, np.arcsin, lambda: _uniform(-0.9, 0.9)),
    "arccos": (jnp.arccos, np.arccos, lambda: _uniform(-0.9, 0.9)),
    "arctan": (jnp.arctan, np.arctan, lambda: _uniform(-3, 3)),
    "sinh": (jnp.sinh, np.sinh, lambda: _uniform(-3, 3)),
    "cosh": (jnp.cosh, np.cosh, lambda: _uniform(-3, 3)),
    "tanh": (jnp.tanh, np.tanh, lambda: _uniform(-3, 3)),
    "arcsinh": (jnp.arcsinh, np.arcsinh, lambda: _uniform(-3, 3)),
    "arccosh": (jnp.arccosh, np.arccosh, lambda: _uniform(1.1, 4)),
    "arctanh": (jnp.arctanh, np.arctanh, lambda: _uniform(-0.9, 0.9)),
    "exp": (jnp.exp, np.exp, lambda: _uniform(-3, 3)),
    "exp2": (jnp.exp2, np.exp2, lambda: _uniform(-3, 3)),
    "expm1": (jnp.expm1, np.expm1, lambda: _uniform(-3, 3)),
    "log": (jnp.log, np.log, lambda: _uniform(0.1, 5)),
    "log1p": (jnp.log1p, np.log1p, lambda: _uniform(-0.5, 5)),
    "log2": (jnp.log2, np.log2, lambda: _uniform(0.1, 5)),
    "log10": (jnp.log10, np.log10, lambda: _uniform(0.1, 5)),
    "sqrt": (jnp.sqrt, np.sqrt, lambda: _uniform(0, 5)),
    "cbrt": (jnp.cbrt, np.cbrt, lambda: _uniform(-5, 5)),
    "abs": (jnp.abs, np.abs, lambda: _uniform(-5, 5)),
    "abs_int": (jnp.abs, np.abs, lambda: RNG.integers(-9, 9, (3, 4)).astype(np.int32)),
    "negative": (jnp.negative, np.negative, lambda: _uniform(-5, 5)),
    "sign": (jnp.sign, np.sign, lambda: np.array([-2.0, 0.0, 3.0, -0.0])),
    "floor": (jnp.floor, np.floor, lambda: _uniform(-5, 5)),
    "ceil": (jnp.ceil, np.ceil, lambda: _uniform(-5, 5)),
    "floor_int": (jnp.floor, np.floor, lambda: RNG.integers(-9, 9, (4,))),
    "round_half_even": (jnp.round, np.round, lambda: np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4])),
    "round_decimals": (lambda x: jnp.round(x, 2), lambda x: np.round(x, 2), lambda: _uniform(-5, 5)),
    "square": (jnp.square, np.square, lambda: _uniform(-5, 5)),
    "square_int": (jnp.square, np.square, lambda: RNG.integers(-9, 9, (4,))),
    "isfinite": (jnp.isfinite, np.isfinite, lambda: np.array([1.0, np.inf, -np.inf, np.nan])),
    "isnan": (jnp.isnan, np.isnan, lambda: np.array([1.0, np.inf, -np.inf, np.nan])),
    "isinf": (jnp.isinf, np.isinf, lambda: np.array([1.0, np.inf, -np.inf, np.nan])),
    "logical_not": (jnp.logical_not, np.logical_not, lambda: np.array([0.0, 2.0, -1.0])),
    "invert": (jnp.invert, np.invert, lambda: RNG.integers(-9, 9, (4,)).astype(np.int32)),
    "real": (jnp.real, np.real, lambda: _uniform(-1, 1) + 1j * _uniform(-1, 1)),
    "imag": (jnp.imag, np.imag, lambda: _uniform(-1, 1) + 1j * _uniform(-1, 1)),
    "conj": (jnp.conj, np.conj, lambda: _uniform(-1, 1) + 1j * _uniform(-1, 1)),
    "int_to_float_sin": (jnp.sin, np.sin, lambda: RNG.integers(-3, 3, (4,)).astype(np.int32)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name):
    fn, np_fn, sample = UNARY[name]
    x = sample()
    got = run1(fn, x)
    want = np_fn(x)
    if name == "int_to_float_sin":  # JAX promotes int32 to the default float, float64
        assert got.dtype == np.float64
    assert_close(got, want)


def _pos(x):
    return np.abs(x) + 0.5


# name -> (ir.numpy function, numpy function, transform applied to the second operand)
BINARY = {
    "add": (jnp.add, np.add, None),
    "subtract": (jnp.subtract, np.subtract, None),
    "multiply": (jnp.multiply, np.multiply, None),
    "true_divide": (jnp.true_divide, np.true_divide, _pos),
    "maximum": (jnp.maximum, np.maximum, None),
    "minimum": (jnp.minimum, np.minimum, None),
    "arctan2": (jnp.arctan2, np.arctan2, None),
    "power": (lambda a, b: jnp.power(jnp.abs(a) + 0.5, b), lambda a, b: np.power(np.abs(a) + 0.5, b), None),
    "floor_divide": (jnp.floor_divide, np.floor_divide, _pos),
    "remainder": (jnp.remainder, np.remainder, _pos),
    "fmod": (jnp.fmod, np.fmod, _pos),
    "logaddexp": (jnp.logaddexp, np.logaddexp, None),
    "less": (jnp.less, np.less, None),
    "greater_equal": (jnp.greater_equal, np.greater_equal, None),
    "not_equal": (jnp.not_equal, np.not_equal, None),
    "logical_and": (jnp.logical_and, np.logical_and, None),
    "where": (lambda a, b: jnp.where(a > b, a, b), lambda a, b: np.where(a > b, a, b), None),
    "operators": (lambda a, b: (a + b) * a - b / (b * b + 1.0) - (-a) ** 2,
                  lambda a, b: (a + b) * a - b / (b * b + 1.0) - (-a) ** 2, None),
}

shapes_pair = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)


@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=shapes_pair, seed=st.integers(0, 2**16))
def test_binary_broadcasting_matches_numpy(name, shapes, seed):
    fn, np_fn, second = BINARY[name]
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, shapes.input_shapes[0])
    b = rng.uniform(-3, 3, shapes.input_shapes[1])
    if second is not None:
        b = second(b)
    got = run1(fn, a, b)
    assert_close(got, np_fn(a, b), rtol=1e-10, atol=1e-10)
    assert got.shape == shapes.result_shape


INT_BINARY = {
    "floor_divide": (jnp.floor_divide, np.floor_divide),
    "remainder": (jnp.remainder, np.remainder),
    "bitwise_and": (jnp.bitwise_and, np.bitwise_and),
    "bitwise_or": (lambda a, b: a | b, np.bitwise_or),
    "bitwise_xor": (lambda a, b: a ^ b, np.bitwise_xor),
    "left_shift": (lambda a, b: a << (b % 8), lambda a, b: a << (b % 8)),
    "right_shift": (lambda a, b: a >> (b % 8), lambda a, b: a >> (b % 8)),
    "mul_scalar": (lambda a, b: a * 3 - b, lambda a, b: a * 3 - b),
}


@pytest.mark.parametrize("name", sorted(INT_BINARY))
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_binary_matches_numpy(name, dtype):
    fn, np_fn = INT_BINARY[name]
    a = np.array([-7, -6, -1, 0, 1, 5, 7, 9], dtype)
    b = np.array([2, -3, 3, -4, 5, 2, -2, 4], dtype)
    got = run1(fn, a, b)
    want = np_fn(a, b)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_integer_remainder_by_zero_is_not_an_error():
    got = run1(jnp.remainder, np.array([5, -5], np.int32), np.array([0, 0], np.int32))
    assert got.dtype == np.int32  # JAX makes the divisor 1 where it is 0


# --- reductions --------------------------------------------------------------------------------

REDUCTIONS = {
    "sum": (jnp.sum, np.sum),
    "prod": (jnp.prod, np.prod),
    "max": (jnp.max, np.max),
    "min": (jnp.min, np.min),
    "mean": (jnp.mean, np.mean),
    "var": (jnp.var, np.var),
    "std": (jnp.std, np.std),
    "all": (lambda x, axis, keepdims: jnp.all(x > 0, axis, keepdims),
            lambda x, axis, keepdims: np.all(x > 0, axis, keepdims=keepdims)),
    "any": (lambda x, axis, keepdims: jnp.any(x > 0.5, axis, keepdims),
            lambda x, axis, keepdims: np.any(x > 0.5, axis, keepdims=keepdims)),
}


@st.composite
def array_and_axis(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                          st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1).map(tuple)))
    seed = draw(st.integers(0, 2**16))
    return np.random.default_rng(seed).uniform(-1, 1.5, shape), axis


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@given(data=array_and_axis(), keepdims=st.booleans())
def test_reductions_match_numpy(name, data, keepdims):
    fn, np_fn = REDUCTIONS[name]
    x, axis = data
    got = run1(lambda a: fn(a, axis, keepdims=keepdims), x)
    assert_close(got, np_fn(x, axis, keepdims=keepdims), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn,np_fn", [(jnp.argmax, np.argmax), (jnp.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_arg_reductions(fn, np_fn, axis):
    x = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.0, 5.0], [0.0, 9.0, 1.0, 1.0]])
    got = run1(lambda a: fn(a, axis), x)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np_fn(x, axis))
    got_keep = run1(lambda a: fn(a, axis, keepdims=True), x)
    np.testing.assert_array_equal(got_keep, np_fn(x, axis, keepdims=True))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumulative(axis):
    x = RNG.uniform(0.5, 1.5, (3, 4))
    assert_close(run1(lambda a: jnp.cumsum(a, axis), x), np.cumsum(x, axis))
    assert_close(run1(lambda a: jnp.cumprod(a, axis), x), np.cumprod(x, axis))
    i = RNG.integers(-5, 5, (3, 4)).astype(np.int32)
    got = run1(lambda a: jnp.cumsum(a, axis), i)
    assert got.dtype == np.int64  # integer accumulations promote to the default int, like jnp.sum
    np.testing.assert_array_equal(got, np.cumsum(i, axis))


def test_integer_and_half_sums_promote_as_jax():
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = run1(jnp.sum, i)
    assert got.dtype == np.int64 and got == 66
    h = np.linspace(0, 1, 6).astype(np.float16)
    got = run1(jnp.sum, h)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, h.astype(np.float32).sum(), rtol=1e-3)
    assert run1(jnp.mean, i).dtype == np.float64


# --- shapes ------------------------------------------------------------------------------------

X = np.arange(24.0).reshape(2, 3, 4)
SHAPE_OPS = {
    "reshape": (lambda a: jnp.reshape(a, (4, -1)), lambda a: np.reshape(a, (4, -1))),
    "reshape_F": (lambda a: jnp.reshape(a, (4, 6), order="F"), lambda a: np.reshape(a, (4, 6), order="F")),
    "method_reshape": (lambda a: a.reshape(6, 4), lambda a: a.reshape(6, 4)),
    "ravel": (jnp.ravel, np.ravel),
    "transpose": (jnp.transpose, np.transpose),
    "transpose_axes": (lambda a: jnp.transpose(a, (1, 0, 2)), lambda a: np.transpose(a, (1, 0, 2))),
    "T": (lambda a: a.T, lambda a: a.T),
    "swapaxes": (lambda a: jnp.swapaxes(a, 0, -1), lambda a: np.swapaxes(a, 0, -1)),
    "moveaxis": (lambda a: jnp.moveaxis(a, 0, 2), lambda a: np.moveaxis(a, 0, 2)),
    "expand_dims": (lambda a: jnp.expand_dims(a, (0, 2)), lambda a: np.expand_dims(a, (0, 2))),
    "squeeze": (lambda a: jnp.squeeze(a[:, :1]), lambda a: np.squeeze(a[:, :1])),
    "concatenate": (lambda a: jnp.concatenate([a, a * 2], axis=1),
                    lambda a: np.concatenate([a, a * 2], axis=1)),
    "stack": (lambda a: jnp.stack([a, -a], axis=-1), lambda a: np.stack([a, -a], axis=-1)),
    "vstack": (lambda a: jnp.vstack([a[0], a[1]]), lambda a: np.vstack([a[0], a[1]])),
    "hstack": (lambda a: jnp.hstack([a[0], a[1]]), lambda a: np.hstack([a[0], a[1]])),
    "tile": (lambda a: jnp.tile(a, (2, 1, 1)), lambda a: np.tile(a, (2, 1, 1))),
    "tile_more_reps": (lambda a: jnp.tile(a[0], (2, 1, 2)), lambda a: np.tile(a[0], (2, 1, 2))),
    "repeat": (lambda a: jnp.repeat(a, 2, axis=1), lambda a: np.repeat(a, 2, axis=1)),
    "repeat_flat": (lambda a: jnp.repeat(a, 3), lambda a: np.repeat(a, 3)),
    "flip": (lambda a: jnp.flip(a, 1), lambda a: np.flip(a, 1)),
    "pad": (lambda a: jnp.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=-1.0),
            lambda a: np.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=-1.0)),
    "split": (lambda a: jnp.split(a, [1, 3], axis=2), lambda a: np.split(a, [1, 3], axis=2)),
    "broadcast_to": (lambda a: jnp.broadcast_to(a[:, :1], (5, 2, 3, 4)),
                     lambda a: np.broadcast_to(a[:, :1], (5, 2, 3, 4))),
    "clip": (lambda a: jnp.clip(a, 3.0, 17.5), lambda a: np.clip(a, 3.0, 17.5)),
    "sort": (lambda a: jnp.sort(-a, axis=1), lambda a: np.sort(-a, axis=1)),
    "argsort": (lambda a: jnp.argsort(-a, axis=-1), lambda a: np.argsort(-a, axis=-1, kind="stable")),
    "tril": (lambda a: jnp.tril(a[0], 1), lambda a: np.tril(a[0], 1)),
    "triu": (lambda a: jnp.triu(a, -1), lambda a: np.triu(a, -1)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_ops_match_numpy(name):
    fn, np_fn = SHAPE_OPS[name]
    got = run(lambda a: fn(a), X)
    want = np_fn(X)
    want = list(want) if isinstance(want, list) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


CONSTRUCTORS = {
    "zeros": (lambda: jnp.zeros((2, 3)), lambda: np.zeros((2, 3))),
    "ones_int": (lambda: jnp.ones(4, dtype=jnp.int32), lambda: np.ones(4, np.int32)),
    "full": (lambda: jnp.full((2, 2), 7.5), lambda: np.full((2, 2), 7.5)),
    "arange": (lambda: jnp.arange(5), lambda: np.arange(5)),
    "arange_step": (lambda: jnp.arange(1, 10, 3), lambda: np.arange(1, 10, 3)),
    "arange_float": (lambda: jnp.arange(4.0), lambda: np.arange(4.0)),
    "eye": (lambda: jnp.eye(3, 4, k=1), lambda: np.eye(3, 4, k=1)),
    "identity": (lambda: jnp.identity(3), lambda: np.identity(3)),
    "tri": (lambda: jnp.tri(3, 5, -1), lambda: np.tri(3, 5, -1)),
    "linspace": (lambda: jnp.linspace(0.0, 1.0, 5), lambda: np.linspace(0.0, 1.0, 5)),
    "asarray_list": (lambda: jnp.asarray([[1.0, 2.0], [3.0, 4.0]]) * 2,
                     lambda: np.array([[2.0, 4.0], [6.0, 8.0]])),
    "scalar_arith": (lambda: jnp.asarray(3.0) * 2 + 1, lambda: np.float64(7.0)),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_constructors_match_numpy(name):
    fn, np_fn = CONSTRUCTORS[name]
    got = run1(fn)
    want = np_fn()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# --- indexing ----------------------------------------------------------------------------------

@st.composite
def basic_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    idx = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return shape, idx


@given(basic_index())
def test_basic_indexing_matches_numpy(data):
    shape, idx = data
    x = np.arange(float(np.prod(shape))).reshape(shape)
    got = run1(lambda a: a[idx], x)
    np.testing.assert_array_equal(got, x[idx])


@pytest.mark.parametrize("i", [-3, -1, 0, 2])
def test_traced_integer_index(i):
    x = np.arange(12.0).reshape(3, 4)
    idx = np.int32(i)
    np.testing.assert_array_equal(run1(lambda a, k: a[k], x, idx), x[i])
    np.testing.assert_array_equal(run1(lambda a, k: a[1:, k], x, idx), x[1:, i])
    np.testing.assert_array_equal(run1(lambda a, k: a[k, None, ::-1], x, idx), x[i, None, ::-1])


def test_dynamic_slice_and_update_clamp_like_jax():
    x = np.arange(12.0).reshape(3, 4)
    got = run1(lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 2)), x, np.int32(5))
    np.testing.assert_array_equal(got, x[1:3, 1:3])  # start clamped to 3 - 2
    got = run1(lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 0)), x, np.ones((1, 4)), np.int32(-1))
    want = x.copy()
    want[2] = 1.0
    np.testing.assert_array_equal(got, want)


# --- contractions ------------------------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((2, 3), (6, 3, 1))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_matches_numpy(sa, sb):
    a, b = RNG.normal(size=sa), RNG.normal(size=sb)
    assert_close(run1(lambda x, y: x @ y, a, b), a @ b, rtol=1e-10, atol=1e-12)


DOT_SHAPES = [((3,), (3,)), ((2, 3), (3, 4)), ((2, 3), (3,)), ((4, 2, 3), (5, 3, 2)), ((), (3,))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES)
def test_dot_matches_numpy(sa, sb):
    a, b = RNG.normal(size=sa), RNG.normal(size=sb)
    assert_close(run1(jnp.dot, a, b), np.dot(a, b), rtol=1e-10, atol=1e-12)


EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
           ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii->", [(4, 4)]), ("ii->i", [(3, 3)]),
           ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
           ("ij,ij->i", [(2, 3), (2, 3)]),
           ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
           ("ij,kj->ik", [(2, 3), (4, 3)]), ("i,i->", [(5,), (5,)])]


@pytest.mark.parametrize("spec,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_matches_numpy(spec, shapes):
    ops = [RNG.normal(size=s) for s in shapes]
    assert_close(run1(lambda *xs: jnp.einsum(spec, *xs), *ops), np.einsum(spec, *ops), rtol=1e-10, atol=1e-12)


def test_other_contractions():
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(3, 4, 5))
    assert_close(run1(jnp.tensordot, a, b), np.tensordot(a, b), rtol=1e-10, atol=1e-12)
    assert_close(run1(lambda x, y: jnp.tensordot(x, y, axes=([1], [0])), a, b),
                 np.tensordot(a, b, axes=([1], [0])), rtol=1e-10, atol=1e-12)
    u, v = RNG.normal(size=3), RNG.normal(size=4)
    assert_close(run1(jnp.outer, u, v), np.outer(u, v))
    assert_close(run1(jnp.inner, u, u), np.inner(u, u))


# --- mixed dtypes ------------------------------------------------------------------------------

def test_mixed_dtype_arithmetic_follows_jax_promotion():
    i = np.array([1, 2, 3], np.int32)
    f = np.array([0.5, 1.5, 2.5], np.float32)
    got = run1(lambda a, b: a * b + 1, i, f)
    assert got.dtype == np.float32  # NumPy would give float64
    np.testing.assert_allclose(got, i * f + 1)
    got = run1(lambda a: a / 2, i)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, i / 2)
    got = run1(lambda a: a // 2 + a % 2, i)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, i // 2 + i % 2)


def test_constants_in_traced_code():
    table = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = run1(lambda x: x @ table + jnp.asarray([1.0, -1.0]) + np.float32(0.5), np.eye(2))
    np.testing.assert_allclose(got, table + np.array([1.0, -1.0]) + 0.5)


MISC = {
    "var_ddof": (lambda a: jnp.var(a, axis=0, ddof=1), lambda a: np.var(a, axis=0, ddof=1)),
    "std_keepdims": (lambda a: jnp.std(a, axis=1, keepdims=True), lambda a: np.std(a, axis=1, keepdims=True)),
    "heaviside": (lambda a: jnp.heaviside(a - 1.0, 0.5), lambda a: np.heaviside(a - 1.0, 0.5)),
    "select": (lambda a: jnp.select([a < 0.5, a > 1.5], [a, -a], 7.0),
               lambda a: np.select([a < 0.5, a > 1.5], [a, -a], 7.0)),
    "divmod": (lambda a: jnp.divmod(a * 3, 0.7), lambda a: np.divmod(a * 3, 0.7)),
    "float_power": (lambda a: jnp.float_power(a + 1, 1.5), lambda a: np.float_power(a + 1, 1.5)),
    "logical_xor": (lambda a: jnp.logical_xor(a > 0.5, a > 1.0), lambda a: np.logical_xor(a > 0.5, a > 1.0)),
    "atleast_2d": (lambda a: jnp.atleast_2d(a[0]), lambda a: np.atleast_2d(a[0])),
    "asarray_of_tracers": (lambda a: jnp.asarray([a[0, 0], a[1, 1], 2.0]),
                           lambda a: np.array([a[0, 0], a[1, 1], 2.0])),
    "iterate_rows": (lambda a: sum(row for row in a), lambda a: sum(row for row in a)),
    "methods": (lambda a: a.sum(0) + a.prod(1).mean() + a.min() * a.max() + a.cumsum(1)[:, -1].sum(),
                lambda a: a.sum(0) + a.prod(1).mean() + a.min() * a.max() + a.cumsum(1)[:, -1].sum()),
}


@pytest.mark.parametrize("name", sorted(MISC))
def test_misc_functions_match_numpy(name):
    fn, np_fn = MISC[name]
    x = np.abs(RNG.normal(size=(3, 4))) + 0.1
    got = run(fn, x)
    want = np_fn(x)
    want = list(want) if isinstance(want, tuple) else [want]
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, rtol=1e-10, atol=1e-12)
