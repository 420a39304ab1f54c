"""AD rules of reductions, cumulative reductions and window reductions (transforms/ad/rules/reduce.py):
JVP vs central differences and the transpose identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ on a table of param variants
and on random configurations, exact references where JAX's rule has a closed form (zeros in products, ties
in cumulative max), then the `reduce` oracle family against JAX."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir import dtypes, lax
from ir.core import ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.tracing import bind, literal, trace_flat
from tests.transforms.ad_helpers import (
    CONFIG_EXAMPLES,
    SPEC_EXAMPLES,
    Dom,
    Spec,
    assert_oracle,
    check_fd,
    check_spec,
    jvp_eval,
    program_of,
    spec_test,
    vjp_eval,
)
from transforms.ad import api

INF = float("inf")
WITH_ZEROS = (0.0, 0.0, 0.5, -1.5, 2.0, 1.25)  # products with zero, one and several zeros among the draws


def _sum_and_prod(a, b):
    return lax.add(a[0], b[0]), lax.mul(a[1], b[1])


def _sums_and_products(a, b):
    """A reducer of six operands (one rule serves any count; there were rules for up to 4)."""
    return tuple(lax.add(a[k], b[k]) if k % 2 == 0 else lax.mul(a[k], b[k]) for k in range(6))


def _reduce_window_of_six(xs):
    """A variadic reduce_window of six operands, 2x2 windows (ir.lax.reduce_window takes one operand)."""
    jaxpr, _ = trace_flat(lambda *v: list(_sums_and_products(v[:6], v[6:])), [ShapedArray((), dtypes.float64)] * 12)
    inits = [literal(v, dtypes.float64) for v in (0.0, 1.0) * 3]
    return bind("reduce_window", *xs, *inits, base_dilation=(1, 1), consts=(), jaxpr=jaxpr, padding=((0, 0), (0, 0)),
                window_dilation=(1, 1), window_dimensions=(2, 2), window_strides=(1, 1))


def _window_max(x):
    return lax.reduce_window(x, -INF, lax.max, (2, 2), (1, 2), ((1, 0), (0, 1)))


def _max_with_index(a, b):
    """The (value, index) pair of the larger value, as jnp.argmax's variadic reduce (no nan handling)."""
    pick = lax.gt(b[0], a[0])
    return lax.select(pick, b[0], a[0]), lax.select(pick, b[1], a[1])


SPECS = [
    Spec("reduce_sum/axis0", lambda x: lax.reduce_sum(x, (0,)), [Dom((3, 4))]),
    Spec("reduce_sum/axes02", lambda x: lax.reduce_sum(x, (0, 2)), [Dom((2, 3, 4))]),
    Spec("reduce_sum/all", lambda x: lax.reduce_sum(x, (0, 1)), [Dom((3, 4))]),
    Spec("reduce_sum/complex", lambda x: lax.reduce_sum(x, (1,)), [Dom((3, 4), dtype="complex128")]),
    Spec("reduce_max/axis1", lambda x: lax.reduce_max(x, (1,)), [Dom((3, 4))]),
    Spec("reduce_max/axes12", lambda x: lax.reduce_max(x, (1, 2)), [Dom((2, 3, 4))]),
    Spec("reduce_min/all", lambda x: lax.reduce_min(x, (0, 1)), [Dom((3, 4))]),
    Spec("reduce_prod/axis1", lambda x: lax.reduce_prod(x, (1,)), [Dom((3, 4))]),
    Spec("reduce_prod/axes02", lambda x: lax.reduce_prod(x, (0, 2)), [Dom((2, 3, 2))]),
    Spec("reduce_prod/zeros", lambda x: lax.reduce_prod(x, (1,)), [Dom((4, 3), values=WITH_ZEROS)]),
    Spec("reduce_prod/complex", lambda x: lax.reduce_prod(x, (0,)), [Dom((3, 2), dtype="complex128")]),
    Spec("cumsum/axis1", lambda x: lax.cumsum(x, 1), [Dom((3, 4))]),
    Spec("cumsum/reverse", lambda x: lax.cumsum(x, 0, reverse=True), [Dom((3, 4))]),
    Spec("cumprod/axis1", lambda x: lax.cumprod(x, 1), [Dom((3, 4))]),
    Spec("cumprod/reverse-3d", lambda x: lax.cumprod(x, 1, reverse=True), [Dom((2, 3, 2))]),
    Spec("cumprod/zeros", lambda x: lax.cumprod(x, 1), [Dom((3, 5), values=WITH_ZEROS)]),
    Spec("cumprod/zeros-reverse", lambda x: lax.cumprod(x, 0, reverse=True), [Dom((5, 2), values=WITH_ZEROS)]),
    Spec("cummax/axis1", lambda x: lax.cummax(x, 1), [Dom((3, 4))]),
    Spec("cummax/reverse", lambda x: lax.cummax(x, 0, reverse=True), [Dom((4, 3))]),
    Spec("cummin/axis0", lambda x: lax.cummin(x, 0), [Dom((4, 3))]),
    Spec("cummin/reverse-3d", lambda x: lax.cummin(x, 2, reverse=True), [Dom((2, 2, 4))]),
    Spec("cumlogsumexp/axis1", lambda x: lax.cumlogsumexp(x, 1), [Dom((3, 4))]),
    Spec("cumlogsumexp/reverse", lambda x: lax.cumlogsumexp(x, 0, reverse=True), [Dom((4, 3), -30, 30)]),
    Spec("reduce_window_sum/2x2", lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID"),
         [Dom((3, 4))]),
    Spec("reduce_window_sum/stride-pad", lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (2, 2), ((1, 0), (0, 1))), [Dom((3, 4))]),
    Spec("reduce_window_sum/dilations", lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (1, 2), ((1, 1), (0, 2)), (2, 1), (1, 2)), [Dom((3, 4))]),
    Spec("reduce_window_max/same", lambda x: lax.reduce_window(x, -INF, lax.max, (3, 1), (1, 1), "SAME"),
         [Dom((3, 4))]),
    Spec("reduce_window_max/stride-pad", lambda x: lax.reduce_window(
        x, -INF, lax.max, (2, 3), (2, 1), ((1, 0), (1, 1))), [Dom((4, 5))]),
    Spec("reduce_window_min/strides", lambda x: lax.reduce_window(x, INF, lax.min, (2, 2), (1, 2), "VALID"),
         [Dom((3, 4))]),
    # The derivative programs of window max hold select_and_gather_add (JVP) and select_and_scatter_add
    # (VJP); differentiating them again needs their rules (grad of grad through max pooling).
    Spec("select_and_gather_add", lambda x, t: api.jvp(_window_max, (x,), (t,))[1], [Dom((3, 4)), Dom((3, 4))]),
    Spec("select_and_scatter_add", lambda x, ct: api.vjp(_window_max, x)[1](ct)[0], [Dom((3, 4)), Dom((3, 2))]),
    Spec("reduce/sum-and-prod", lambda x, y: lax.reduce((x, y), (0.0, 1.0), _sum_and_prod, (1,)),
         [Dom((3, 4)), Dom((3, 4))]),
    Spec("reduce/sum-and-prod-all", lambda x, y: lax.reduce((x, y), (0.0, 1.0), _sum_and_prod, (0, 2)),
         [Dom((2, 3, 2)), Dom((2, 3, 2), values=WITH_ZEROS)]),
    Spec("reduce/one-operand", lambda x: lax.reduce(x, 0.0, lambda a, b: lax.add(a, lax.mul(b, b)), (0,)),
         [Dom((4, 3))]),
    Spec("reduce/6-operands", lambda *xs: lax.reduce(xs, (0.0, 1.0) * 3, _sums_and_products, (1,)),
         [Dom((3, 4))] * 6),
    Spec("reduce/max-with-index", lambda x: lax.reduce((x, lax.broadcasted_iota("int32", (3, 4), 1)),
                                                       (-INF, np.int32(0)), _max_with_index, (1,))[0],
         [Dom((3, 4))]),
]

# Derivative programs are cached per row, so later examples cost only NumPy evaluation.


test_spec = spec_test(SPECS)


GENERIC_WINDOWS = [  # no VJP in JAX: only the JVP is checked
    Spec("reduce_window/mul", lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "VALID"),
         [Dom((3, 4))]),
    Spec("reduce_window/6-operands", lambda *xs: _reduce_window_of_six(xs), [Dom((3, 4))] * 6),
    Spec("reduce_window/max-from-zero", lambda x: lax.reduce_window(x, 0.0, lax.max, (2, 1), (1, 1), "SAME"),
         [Dom((3, 4))]),
]


@pytest.mark.parametrize("spec", GENERIC_WINDOWS, ids=lambda s: s.name)
@SPEC_EXAMPLES
@given(st.integers(0, 2**31 - 1))
def test_generic_reduce_window_jvp(spec, seed):
    args = spec.draw(seed)
    with np.errstate(all="ignore"):
        check_fd(program_of(spec, args), args, seed)


# --- exact references -----------------------------------------------------------------------------------


def _jvp(fn, x, t):
    spec = Spec("", fn, [Dom(x.shape)])
    return jvp_eval(program_of(spec, [x]), [x], [t])[0]


def _vjp(fn, x, ct):
    spec = Spec("", fn, [Dom(x.shape)])
    return vjp_eval(program_of(spec, [x]), [x], [ct])[0]


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, -1.5], [0.0, 4.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]],
                         ids=["one-zero", "two-zeros", "all-zeros"])
def test_products_with_zeros_are_exact(x):
    """d prod(x) = sum_i dx_i prod_{j != i} x_j, which JAX's multiplication tree gives without division."""
    x, t = np.array(x), np.array([0.5, -1.0, 2.0, 0.25])
    others = np.array([math.prod(np.delete(x, i)) for i in range(4)])
    np.testing.assert_array_equal(_jvp(lambda v: lax.reduce_prod(v, (0,)), x, t), others @ t)
    np.testing.assert_array_equal(_vjp(lambda v: lax.reduce_prod(v, (0,)), x, np.array(3.0)), 3.0 * others)
    prefix = [sum(t[j] * math.prod(np.delete(x[:i + 1], j)) for j in range(i + 1)) for i in range(4)]
    np.testing.assert_allclose(_jvp(lambda v: lax.cumprod(v, 0), x, t), prefix, rtol=1e-15)


def _scan_jvp(combine, x, t):
    """JAX's `associative_scan` (lax/control_flow/loops.py) on (value, tangent) pairs, 1-D."""
    if len(x) < 2:
        return x, t
    odd_x, odd_t = _scan_jvp(combine, *combine(x[0:-1:2], t[0:-1:2], x[1::2], t[1::2]))
    if len(x) % 2 == 0:
        even_x, even_t = combine(odd_x[:-1], odd_t[:-1], x[2::2], t[2::2])
    else:
        even_x, even_t = combine(odd_x, odd_t, x[2::2], t[2::2])
    even_x, even_t = np.concatenate([x[:1], even_x]), np.concatenate([t[:1], even_t])
    out_x, out_t = np.empty_like(x), np.empty_like(t)
    out_x[0::2], out_x[1::2], out_t[0::2], out_t[1::2] = even_x, odd_x, even_t, odd_t
    return out_x, out_t


def _max_jvp(a, ta, b, tb):
    """lax.max's JVP: `_balanced_eq` gives each side 1, 1/2 on ties, or 0."""
    m = np.maximum(a, b)
    return m, ta * (a == m) / (1.0 + (b == m)) + tb * (b == m) / (1.0 + (a == m))


@pytest.mark.parametrize("x", [[1.0, 3.0, 3.0, 2.0, 0.5], [2.0, 0.5, 2.0, 1.0, 2.5, 2.5], [1.0, 1.0],
                               [0.5, 4.0, 1.0, 2.0, 4.0, 3.0, 0.0]], ids=lambda x: f"n{len(x)}")
def test_cummax_two_way_ties_match_jax_scan(x):
    """Two tied maxima get half the tangent each in JAX's scan, as in the rule (ties of three or more
    get tree-dependent weights in JAX, equal ones here)."""
    x = np.array(x)
    t = np.random.default_rng(0).standard_normal(len(x))
    np.testing.assert_allclose(_jvp(lambda v: lax.cummax(v, 0), x, t), _scan_jvp(_max_jvp, x, t)[1], rtol=1e-15)


def test_cumlogsumexp_is_stable_across_a_wide_range():
    """Weights exp(x_j - y_i) are formed per pair, so inputs 1000 apart neither overflow nor vanish."""
    x, t = np.array([-1000.0, 0.0, -999.0]), np.array([1.0, 2.0, 3.0])
    y = np.logaddexp.accumulate(x)
    want = [sum(t[j] * np.exp(x[j] - y[i]) for j in range(i + 1)) for i in range(3)]
    np.testing.assert_allclose(_jvp(lambda v: lax.cumlogsumexp(v, 0), x, t), want, rtol=1e-14)


# --- random configurations --------------------------------------------------------------------------


@st.composite
def reduction_specs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    name = draw(st.sampled_from(["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"]))
    return Spec(f"{name}{shape, axes}", lambda x: getattr(lax, name)(x, axes), [Dom(shape)])


@st.composite
def cumulative_specs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axis, reverse = draw(st.integers(0, len(shape) - 1)), draw(st.booleans())
    name = draw(st.sampled_from(["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]))
    return Spec(f"{name}{shape, axis, reverse}", lambda x: getattr(lax, name)(x, axis, reverse), [Dom(shape)])


WINDOW_OPS = {"sum": (lax.add, 0.0), "max": (lax.max, -INF), "min": (lax.min, INF)}


@st.composite
def window_specs(draw):
    rank = draw(st.integers(1, 3))
    name = draw(st.sampled_from(sorted(WINDOW_OPS)))
    dilated = name == "sum"  # JAX's max/min VJP takes no dilation
    shape, dims, strides, pads, base, wdil = [], [], [], [], [], []
    for _ in range(rank):
        base.append(draw(st.integers(1, 2)) if dilated else 1)
        wdil.append(draw(st.integers(1, 2)) if dilated else 1)
        n, w = draw(st.integers(1, 4)), draw(st.integers(1, 3))
        span, extent = (w - 1) * wdil[-1] + 1, (n - 1) * base[-1] + 1
        lo, hi = draw(st.integers(0, span - 1)), draw(st.integers(0, span - 1))  # no window all padding
        shape.append(n), dims.append(w), strides.append(draw(st.integers(1, 2)))
        pads.append((lo, max(hi, span - extent - lo)))  # at least one window
    op, init = WINDOW_OPS[name]
    return Spec(f"reduce_window_{name}{shape, dims, strides, pads, base, wdil}",
                lambda x: lax.reduce_window(x, init, op, dims, strides, pads, base, wdil), [Dom(tuple(shape))])


@pytest.mark.parametrize("specs", [reduction_specs(), cumulative_specs(), window_specs()],
                         ids=["reductions", "cumulative", "windows"])
@CONFIG_EXAMPLES
@given(data=st.data())
def test_random_configs(specs, data):
    check_spec(data.draw(specs), data.draw(st.integers(0, 2**31 - 1)))


# --- limits -------------------------------------------------------------------------------------------


UNSUPPORTED = [
    ("reduce_window_max", "vjp", lambda x: lax.reduce_window(x, -INF, lax.max, (2,), (1,), "VALID", (2,))),
    ("reduce_window", "vjp", lambda x: lax.reduce_window(x, 1.0, lax.mul, (2,), (1,), "VALID")),
    ("sin", "jvp", lambda x: lax.reduce(x, 0.0, lambda a, b: lax.add(a, lax.sin(b)), (0,))),
]


@pytest.mark.parametrize(("name", "mode", "fn"), UNSUPPORTED, ids=[f"{n}-{m}" for n, m, _ in UNSUPPORTED])
def test_unsupported_cases_raise_naming_the_primitive(name, mode, fn):
    """Dilated max windows in reverse mode (JAX too), generic reduce_window VJP (JAX has none), reducers
    outside the tangent table: a clear error at build time, not a wrong answer."""
    x = np.arange(4.0)
    closed = program_of(Spec("", fn, [Dom((4,))]), [x])
    with pytest.raises(UnsupportedPrimitive, match=name):
        if mode == "jvp":
            jvp_eval(closed, [x], [x])
        else:
            vjp_eval(closed, [x], [np.ones(closed.jaxpr.outvars[0].aval.shape)])


# --- oracle -------------------------------------------------------------------------------------------

# Primitives of the reduce fixtures whose rules live in other families' modules.
OTHER_FAMILIES = {"add", "mul", "sub", "div", "select_n", "sqrt", "square", "convert_element_type", "gt",
                  "broadcast_in_dim"}


def test_oracle():
    outcomes = assert_oracle("reduce", ("jvp", "vjp"))
    skipped = {re.search(r"primitive '([^']+)'", o.reason).group(1) for o in outcomes if o.status == "skipped"}
    assert skipped <= OTHER_FAMILIES, f"skipped for reduce primitives: {skipped - OTHER_FAMILIES}"
    assert any(o.status == "passed" for o in outcomes)
