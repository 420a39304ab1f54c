"""Batching rules of reductions, cumulative and window reductions (transforms/batching/rules/reduce.py): vmap
of each spec row at every batch-axis position and on random configurations against a loop over slices, the
shape of the batched programs (unbatched init values stay scalars), 12 operands and the limits of the
variadic rules, then the `reduce` oracle family against JAX."""

from __future__ import annotations

import re

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import lax, make_jaxpr
from ir.errors import UnsupportedPrimitive
from ir.params import Symbol
from ir.tracing import bind
from tests.transforms import test_ad_reduce
from tests.transforms.ad_helpers import Dom, Spec
from tests.transforms.vmap_helpers import Config, assert_oracle, batched_program, check_config, vmap_spec_tests

INF, NAN = float("inf"), float("nan")
I32 = dict(dtype="int32", values=(-3, 0, 1, 7, 7))
U32 = dict(dtype="uint32", values=(0, 1, 6, 2**31 + 5))
BOOL = dict(dtype="bool", values=(False, True))
TIES = dict(values=(-1.0, 0.5, 2.0, 2.0))


def fold(a, b):
    """A reducer that is neither associative nor commutative: the fold order and the init's place count."""
    return lax.sub(lax.mul(a, 0.5), b)


def fold_pair(a, b):
    return fold(a[0], b[0]), lax.max(a[1], b[1])


def fold_triple(a, b):
    return fold(a[0], b[0]), lax.add(a[1], b[1]), lax.bitwise_or(a[2], b[2])


def window(op, init, dims, strides, padding, base=None, wdil=None):
    return lambda x: lax.reduce_window(x, init, op, dims, strides, padding, base, wdil)


def select_and_gather_add(t, x):
    """The tangent at each window's max (JVP of a max pool), with dilations."""
    return bind("select_and_gather_add", t, x, select_prim=Symbol("ge"), window_dimensions=(2, 2),
                window_strides=(1, 2), padding=((1, 0), (0, 1)), base_dilation=(1, 2), window_dilation=(2, 1))


def select_and_scatter_add(source, x):
    """Each window's source value added at the window's min (VJP of a min pool)."""
    return bind("select_and_scatter_add", source, x, select_prim=Symbol("le"), window_dimensions=(2, 3),
                window_strides=(2, 1), padding=((1, 0), (1, 1)))


# Rows of the AD table whose variants differ only in values (zeros in products) or in the derivative
# programs they test; select_and_{gather,scatter}_add are bound directly here (small programs).
AD_ONLY = {"reduce_prod/zeros", "cumprod/zeros", "cumprod/zeros-reverse", "reduce_window_sum/stride-pad",
           "select_and_gather_add", "select_and_scatter_add"}


# The AD table's rows (param variants of every primitive here, variadic reduce), and what AD does not cover:
# integers, booleans, ties, nan, indices, dilated max windows, init values computed from the batch, several
# operands.
SPECS = [*(s for s in test_ad_reduce.SPECS if s.name not in AD_ONLY), *test_ad_reduce.GENERIC_WINDOWS,
         Spec("select_and_gather_add", select_and_gather_add, [Dom((3, 4)), Dom((3, 4), **TIES)]),
         Spec("select_and_scatter_add", select_and_scatter_add, [Dom((2, 4)), Dom((4, 4), **TIES)]),
         Spec("reduce_max/int", lambda x: lax.reduce_max(x, (0, 1)), [Dom((3, 4), **I32)]),
         Spec("reduce_min/bool", lambda x: lax.reduce_min(x, (1,)), [Dom((2, 3), **BOOL)]),
         Spec("reduce_and/bool", lambda x: lax.reduce_and(x, (1,)), [Dom((3, 4), **BOOL)]),
         Spec("reduce_or/uint", lambda x: lax.reduce_or(x, (0,)), [Dom((3, 4), **U32)]),
         Spec("reduce_xor/int-all", lambda x: lax.reduce_xor(x, (0, 1)), [Dom((2, 3), **I32)]),
         Spec("reduce_prod/int", lambda x: lax.reduce_prod(x, (1,)), [Dom((2, 3), **I32)]),
         Spec("reduce_sum/empty-axes", lambda x: lax.reduce_sum(x, ()), [Dom((2, 3))]),
         Spec("argmax/ties", lambda x: lax.argmax(x, 1, "int64"), [Dom((3, 4), **TIES)]),
         Spec("argmax/nan", lambda x: lax.argmax(x, 0, "int32"), [Dom((3, 4), values=(NAN, 1.0, 2.0))]),
         Spec("argmin/int", lambda x: lax.argmin(x, 2, "int32"), [Dom((2, 2, 3), **I32)]),
         Spec("cumsum/int", lambda x: lax.cumsum(x, 1), [Dom((3, 4), **I32)]),
         Spec("cummax/int-reverse", lambda x: lax.cummax(x, 0, reverse=True), [Dom((3, 4), **I32)]),
         Spec("cumlogsumexp/f32", lambda x: lax.cumlogsumexp(x, 1), [Dom((2, 3), dtype="float32")]),
         Spec("reduce_window_max/dilated", window(lax.max, -INF, (2, 2), (1, 2), ((1, 1), (0, 2)), (2, 1), (1, 2)),
              [Dom((3, 4))]),
         Spec("reduce_window_min/int", window(lax.min, np.iinfo(np.int32).max, (2,), (1,), "SAME"),
              [Dom((5,), **I32)]),
         Spec("reduce_window_sum/int", window(lax.add, 0, (1, 2), (1, 1), "VALID"), [Dom((2, 3), **I32)]),
         Spec("reduce_window/fold", window(fold, 0.5, (2, 2), (1, 1), ((1, 0), (0, 1))), [Dom((3, 3))]),
         Spec("reduce/init", lambda x, i: lax.reduce(x, i, fold, (1,)), [Dom((3, 4)), Dom(())]),
         Spec("reduce/init-all-axes", lambda x, i: lax.reduce(x, i, fold, (0, 2)), [Dom((2, 3, 2)), Dom(())]),
         Spec("reduce/init-no-axes", lambda x, i: lax.reduce(x, i, fold, ()), [Dom((2, 3)), Dom(())]),
         Spec("reduce/init-empty-axis", lambda x, i: lax.reduce(x, i, fold, (1,)), [Dom((2, 0)), Dom(())]),
         Spec("reduce/pair-inits", lambda x, y, i, j: lax.reduce((x, y), (i, j), fold_pair, (0,)),
              [Dom((3, 2)), Dom((3, 2), **I32), Dom(()), Dom((), **I32)]),
         Spec("reduce/triple", lambda x, y, z: lax.reduce((x, y, z), (1.0, 0.0, np.int32(0)), fold_triple, (1,)),
              [Dom((2, 3)), Dom((2, 3)), Dom((2, 3), **I32)]),
         ]

test_axes, test_random = vmap_spec_tests(SPECS)


# --- the batched programs ----------------------------------------------------------------------------------


def _program(fn, args, config):
    closed = make_jaxpr(fn)(*args)
    return batched_program(closed, config)


def test_reductions_are_the_op_itself():
    """With the batch axis first, a reduction's batched program is the same primitive on shifted axes."""
    x = np.zeros((3, 4))
    for fn, prim, param in [(lambda v: lax.reduce_sum(v, (1,)), "reduce_sum", "axes=(2,)"),
                            (lambda v: lax.argmin(v, 0, "int32"), "argmin", "axes=(1,)"),
                            (lambda v: lax.cumprod(v, 1, reverse=True), "cumprod", "axis=2"),
                            (window(lax.max, -INF, (2, 2), (1, 2), "SAME"), "reduce_window_max",
                             "window_dimensions=(1, 2, 2)")]:
        program = _program(fn, [x], Config((0,), (0,), 3))
        assert [e.primitive for e in program.jaxpr.eqns] == [prim]
        assert param in str(program)


def test_unbatched_init_values_stay_scalars():
    """jnp.argmax's variadic reduce: x batched, the iota and both inits unbatched; only the iota is broadcast."""
    spec = next(s for s in SPECS if s.name == "reduce/max-with-index")
    program = _program(spec.fn, [np.zeros((3, 4))], Config((0,), (0,), 5))
    [eqn] = [e for e in program.jaxpr.eqns if e.primitive == "reduce"]
    assert [str(v.aval) for v in eqn.invars] == ["f64[5,3,4]", "i32[5,3,4]", "f64[]", "i32[]"]
    assert eqn.params["dimensions"] == (2,)
    check_config(spec, Config((0,), (0,), 5))


def test_batched_init_keeps_the_fold_order():
    """A batched init value starts each slice's fold, as the unbatched fold does: f(f(f(i, x0), x1), x2)."""
    x, inits = np.array([[1.0, 2.0, 4.0]]), np.array([3.0, -1.0])
    program = _program(lambda v, i: lax.reduce(v, i, fold, (1,)), [x, np.float64(0.0)], Config((None, 0), (0,), 2))
    [got] = eval_jaxpr(program, x, inits)
    want = [((i * 0.5 - 1.0) * 0.5 - 2.0) * 0.5 - 4.0 for i in inits]
    np.testing.assert_array_equal(got, np.array(want)[:, None])


MANY = 12


def _many(*xs):
    """A reduce of 12 operands (unbatched init values), each folded its own way."""
    folds = (lax.add, lax.max, fold) * (MANY // 3)
    return lax.reduce(xs, (0.0,) * MANY, lambda a, b: tuple(f(u, v) for f, u, v in zip(folds, a, b, strict=True)),
                      (1,))


@pytest.mark.parametrize("in_axes", [(0,) * MANY, (1, None, 0, None, None, 2, 0, None, 1, None, 0, 2)],
                         ids=["batched", "mixed"])
def test_reduce_of_many_operands(in_axes):
    """One rule serves any operand count while the init values are unbatched: 12 operands, some unbatched."""
    spec = Spec("reduce/twelve", _many, [Dom((2, 3))] * MANY)
    check_config(spec, Config(in_axes, (0,) * MANY, 3))


# --- limits ------------------------------------------------------------------------------------------------


def _triple_with_init(x, i):
    return lax.reduce((x, x, lax.convert_element_type(x, "int32")), (i, 0.0, np.int32(0)), fold_triple, (0,))[0]


UNSUPPORTED = [
    ("reduce_window", "inits", lambda x, i: lax.reduce_window(x, i, fold, (2,), (1,), "SAME"), (0, 0)),
    ("reduce", "inits", _triple_with_init, (None, 0)),
]


@pytest.mark.parametrize(("prim", "what", "fn", "in_axes"), UNSUPPORTED, ids=[f"{p}-{w}" for p, w, _, _ in UNSUPPORTED])
def test_unsupported_patterns_raise_naming_the_primitive(prim, what, fn, in_axes):
    """Batched init values of reduce_window (JAX refuses them too: its padding holds the init), and of a reduce
    of more operands than the rules take: a clear error at build time."""
    closed = make_jaxpr(fn)(np.zeros(4), np.float64(0.0))
    with pytest.raises(UnsupportedPrimitive, match=prim):
        batched_program(closed, Config(in_axes, (0,), 2))


# --- oracle ------------------------------------------------------------------------------------------------

# Primitives of the reduce fixtures whose batching rules live in other families' modules.
OTHER_FAMILIES = {"add", "mul", "sub", "div", "select_n", "sqrt", "square", "convert_element_type", "gt",
                  "broadcast_in_dim", "iota"}


def test_oracle():
    outcomes = assert_oracle("reduce", ("vmap",))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert skipped <= OTHER_FAMILIES, f"skipped for reduce primitives: {skipped - OTHER_FAMILIES}"
    assert any(o.status == "passed" for o in outcomes)
