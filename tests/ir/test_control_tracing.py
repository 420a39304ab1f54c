"""Control flow in the tracing API (ir.control: scan, map, while_loop, fori_loop, cond, switch).

`SAME_TEXT` re-expresses fixture cases; the traced jaxpr must print exactly as JAX printed it and
evaluate to the fixture's outputs. The fixtures' initial carries are strong f64 zeros (their bodies
have no conversion of the carry), written here as `np.float64(0.0)`. `LOOPS` rows evaluate traced
programs against plain Python/NumPy loops computing the same thing. Then the loop-invariant
forwarding JAX does, weak-type promotion of carries, and the errors.
"""

import re

import numpy as np
import pytest

import ir.numpy as jnp
from eval.interpreter import eval_jaxpr
from eval.oracle import compare_lists, load_fixtures
from ir import lax
from ir.control import map as lax_map
from ir.text import parse_jaxpr
from ir.tracing import TracingError, make_jaxpr
from tests.oracle_paths import ORACLE

CASES = {c.id: c for c in load_fixtures([ORACLE], families=("control_flow", "programs"))}
ZERO = np.float64(0.0)  # a strong f64 zero, as the fixtures' initial carries


def _multi_carry(a, b):
    def body(carry, x):
        h, s = carry
        xa, xb = x
        h = h + xa * s
        s = jnp.tanh(s + xb)
        return (h, s), (h * 2.0, s - h)
    return lax.scan(body, (jnp.zeros_like(a[0]), jnp.ones_like(a[0])), (a, b))


def _nested_scan(a):
    def row(c, r):
        c, _ = lax.scan(lambda ci, x: (ci * x + 1.0, ci), c, r)
        return c, c * 2.0
    return lax.scan(row, ZERO, a)


def _scan_with_cond(a):
    def body(c, x):
        h = lax.cond(x > 0.0, lambda x, c: c + x, lambda x, c: c * 0.5, x, c)
        return h, h
    return lax.scan(body, ZERO, a)


def _rnn(h0, w, u, xs):
    def step(h, x):
        h = jnp.tanh(h @ w + x @ u)
        return h, jnp.sum(h)
    h, ys = lax.scan(step, h0, xs)
    return jnp.sum(h ** 2) + 0.1 * jnp.sum(ys)


def _scan_reverse(xs, w):
    def step(c, x):
        a, b = c
        k = a * w + x
        m = b + jnp.sin(k)
        return (k, m), k * m
    (a, b), ys = lax.scan(step, (ZERO, ZERO), xs, reverse=True)
    return a + b + jnp.sum(ys)


def _pendulum(theta, omega, length):
    def step(i, c):
        theta, omega = c
        omega = omega - 0.05 * length * jnp.sin(theta)
        return theta + 0.05 * omega, omega
    theta, omega = lax.fori_loop(0, 20, step, (theta, omega))
    return jnp.sum(0.5 * omega ** 2 + length * (1.0 - jnp.cos(theta)))


SAME_TEXT = {
    "scan/simple/f64[3,4]": lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, jnp.sum(c)), xs[0], xs),
    "scan/reverse/f64[3,4]": lambda xs: lax.scan(lambda c, x: (jnp.sin(c) + x, c), xs[0], xs, reverse=True),
    "scan/multi_carry/f64[3,4]": _multi_carry,
    "scan/consts/f64[3,4],f64[4]": lambda a, w: lax.scan(lambda c, x: (c * w + x, c * w), jnp.zeros(4), a),
    "scan/no_xs/f64[6]": lambda a: lax.scan(lambda c, _: (jnp.cos(c) * 1.1, c), a, None, length=4),
    "scan/nested/f64[3,4]": _nested_scan,
    "scan/with_cond/f64[6]": _scan_with_cond,
    "scan/unroll2/f64[6]": lambda a: lax.scan(lambda c, x: (c + x * x, c), ZERO, a, unroll=2),
    "map/f64[3,4]": lambda a: lax_map(lambda r: jnp.sum(jnp.sin(r)), a),
    "while/simple/f64[3,4]": lambda a: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1 + 0.1),
                                                      (0, a)),
    "while/consts/f64[3,4]": lambda a, b: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * b), (0, a)),
    "while/data_dependent/f64[6]": lambda a: lax.while_loop(lambda c: jnp.max(c) < 10.0, lambda c: c * 1.5 + 0.25, a),
    "fori_loop/static/f64[3,4]": lambda a: lax.fori_loop(0, 4, lambda i, x: x * 0.9 + jnp.sin(x) * i, a),
    "fori_loop/dynamic/f64[3,4],i32[]": lambda a, n: lax.fori_loop(0, n, lambda i, x: x * 0.9 + 0.1, a),
    "cond/bool/bool[],f64[3,4]": lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x),
    "cond/multi_operand/bool[],f64[3,4]": lambda p, x, y: lax.cond(
        p, lambda a, b: (a + b, a * b), lambda a, b: (a - b, a / b), x, y),
    "cond/closure/bool[],f64[3,4]": lambda p, x, y: lax.cond(p, lambda a: a * y, lambda a: a + y, x),
    "switch/clamped_index/i32[],f64[3,4]": lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * a], x),
    "cond/int_index/i32[],f64[3,4]": lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * a], x),
    "program/cond_piecewise": lambda x: lax.cond(x > 0.5, lambda a: jnp.sin(a) * a, lambda a: a ** 3 - a, x),
    "program/rnn_scan": _rnn,
    "program/scan_reverse": _scan_reverse,
    "program/pendulum_fori": _pendulum,
}


@pytest.mark.parametrize("case_id", sorted(SAME_TEXT))
def test_traced_text_equals_jax(case_id):
    case = CASES[case_id]
    args = case.arrays("args")
    closed = make_jaxpr(SAME_TEXT[case_id])(*args)
    assert str(closed) == case.jaxpr_text
    compare_lists(case_id, eval_jaxpr(closed, *args), case.arrays("out"), case.rtol, case.atol)


def _newton_sqrt(a):
    def cond_fun(c):
        x, x_prev, k = c
        return (jnp.abs(x - x_prev) > 1e-15 * x) & (k < 60)

    def body_fun(c):
        x, _, k = c
        return 0.5 * (x + a / x), x, k + 1

    x, _, _ = lax.while_loop(cond_fun, body_fun, (a, a + 1.0, 0))
    return x


def test_newton_while_matches_jax_up_to_a_weak_bool_conversion():
    # JAX wraps this while in a custom_jvp_call; its call_jaxpr is compared. JAX's `k < 60` on a
    # weak i64 carry is a weak bool, converted to a strong one before `and`; eqjax's comparisons
    # give strong bools, so the cond jaxpr lacks that one convert_element_type.
    case = CASES["program/newton_sqrt_while"]
    want = parse_jaxpr(case.jaxpr_text).eqns[0].params["call_jaxpr"]
    got = make_jaxpr(_newton_sqrt)(np.float64(2.0))
    (got_while,), (want_while,) = ([e for e in j.eqns if e.primitive == "while"] for j in (got, want))
    assert str(got_while.params["body_jaxpr"]) == str(want_while.params["body_jaxpr"])
    assert [got_while.params[k] for k in ("body_nconsts", "cond_nconsts")] == [1, 0]
    cond_prims = [e.primitive for e in want_while.params["cond_jaxpr"].eqns if e.primitive != "convert_element_type"]
    assert [e.primitive for e in got_while.params["cond_jaxpr"].eqns] == cond_prims
    assert [str(a) for a in got.out_avals] == [str(a) for a in want.out_avals]
    np.testing.assert_allclose(eval_jaxpr(got, np.float64(2.0))[0], np.sqrt(2.0), rtol=1e-14)


# --- evaluation against Python loops -----------------------------------------------------------

RNG = np.random.default_rng(0)
XS = RNG.normal(size=(5, 3))
V = RNG.normal(size=3)
W = RNG.normal(size=(3, 3))


def _py_scan(f, init, xs, reverse=False):
    carry, ys = init, []
    order = range(len(xs))[::-1] if reverse else range(len(xs))
    for t in order:
        carry, y = f(carry, xs[t])
        ys.append(y)
    return carry, np.stack(ys[::-1] if reverse else ys)


def _closure_scan(xs, v):
    scale = v * 2.0  # an outer tracer, closed over
    return lax.scan(lambda c, x: (c + x * scale + W[0], c * W[1]), jnp.zeros(3), xs)  # and NumPy arrays


def _py_closure_scan(xs, v):
    return _py_scan(lambda c, x: (c + x * v * 2.0 + W[0], c * W[1]), np.zeros(3), xs)


def _dict_carry(xs, v):
    def body(c, x):
        return {"sum": c["sum"] + x, "prod": c["prod"] * jnp.cos(x)}, {"max": jnp.max(x), "first": x[0]}
    return lax.scan(body, {"sum": v, "prod": jnp.ones_like(v)}, xs)


def _py_dict_carry(xs, v):
    s, p, ys = v, np.ones(3), []
    for x in xs:
        s, p = s + x, p * np.cos(x)
        ys.append((np.max(x), x[0]))
    return {"prod": p, "sum": s}, {"first": np.array([y[1] for y in ys]), "max": np.array([y[0] for y in ys])}


def _nested(xs, v):
    def outer(c, row):
        inner, ys = lax.scan(lambda a, x: (a * 0.5 + x, a + c), c[0], row)
        return c + inner, ys
    return lax.scan(outer, v, xs)


def _py_nested(xs, v):
    def outer(c, row):
        inner, ys = _py_scan(lambda a, x: (a * 0.5 + x, a + c), c[0], row)
        return c + inner, ys
    return _py_scan(outer, v, xs)


def _cond_in_scan(xs, v):
    def body(c, x):
        c = lax.cond(jnp.sum(x) > 0.0, lambda a, b: a + b * v, lambda a, b: a - b, c, x)
        return c, jnp.sum(c)
    return lax.scan(body, jnp.zeros(3), xs, reverse=True)


def _py_cond_in_scan(xs, v):
    def body(c, x):
        c = c + x * v if np.sum(x) > 0 else c - x
        return c, np.sum(c)
    return _py_scan(body, np.zeros(3), xs, reverse=True)


def _py_while(cond_fun, body_fun, val):
    while cond_fun(val):
        val = body_fun(val)
    return val


def _collatz_steps(n):
    return lax.while_loop(lambda c: c[0] != 1, lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1),
                                                          c[1] + 1), (n, 0))


def _py_collatz_steps(n):
    return _py_while(lambda c: c[0] != 1, lambda c: (c[0] // 2 if c[0] % 2 == 0 else 3 * c[0] + 1, c[1] + 1),
                     (int(n), 0))


def _switch_each(i, v):
    return lax.switch(i, [lambda a: a * W[0], jnp.sin, lambda a: a - 1.0], v)


def _py_switch_each(i, v):
    return [lambda a: a * W[0], np.sin, lambda a: a - 1.0][min(max(int(i), 0), 2)](v)


# (name, traced function, the same computation in Python/NumPy, args)
LOOPS = [
    ("scan", lambda xs: lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(3), xs),
     lambda xs: _py_scan(lambda c, x: (c + x, c * x), np.zeros(3), xs), (XS,)),
    ("scan_reverse_cumsum", lambda xs: lax.scan(lambda c, x: (c + x, c + x), jnp.zeros(3), xs, reverse=True),
     lambda xs: _py_scan(lambda c, x: (c + x, c + x), np.zeros(3), xs, reverse=True), (XS,)),
    ("scan_closure_tracer_and_numpy", _closure_scan, _py_closure_scan, (XS, V)),
    ("scan_dict_carry_and_ys", _dict_carry, _py_dict_carry, (XS, V)),
    ("scan_xs_none_length", lambda v: lax.scan(lambda c, _: (c @ W, jnp.sum(c)), v, None, length=4),
     lambda v: _py_scan(lambda c, _: (c @ W, np.sum(c)), v, [None] * 4), (V,)),
    ("scan_tuple_xs", lambda xs, v: lax.scan(lambda c, x: (c + x[0] * x[1], x[1]), v, (xs, xs[::-1])),
     lambda xs, v: _py_scan(lambda c, x: (c + x[0] * x[1], x[1]), v, list(zip(xs, xs[::-1], strict=True))),
     (XS, V)),
    ("scan_nested", _nested, _py_nested, (XS, V)),
    ("scan_cond_inside_reverse", _cond_in_scan, _py_cond_in_scan, (XS, V)),
    ("scan_zero_length", lambda v: lax.scan(lambda c, x: (c + x, x), v, jnp.zeros((0, 3))),
     lambda v: (v, np.zeros((0, 3))), (V,)),
    ("map", lambda xs: lax_map(lambda x: (jnp.sum(x), x * 2.0), xs),
     lambda xs: (xs.sum(axis=1), xs * 2.0), (XS,)),
    ("fori_static", lambda v: lax.fori_loop(2, 7, lambda i, x: x * 0.5 + i, v),
     lambda v: _py_while(lambda c: c[0] < 7, lambda c: (c[0] + 1, c[1] * 0.5 + c[0]), (2, v))[1], (V,)),
    ("fori_dynamic", lambda v, n: lax.fori_loop(1, n, lambda i, x: x + i * x, v),
     lambda v, n: _py_while(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + c[0] * c[1]), (1, v))[1],
     (V, np.int32(4))),
    ("fori_dynamic_empty", lambda v, n: lax.fori_loop(1, n, lambda i, x: x + i * x, v), lambda v, n: v,
     (V, np.int32(-3))),
    ("while_collatz", _collatz_steps, _py_collatz_steps, (np.int64(27),)),
    ("cond_true", lambda p, v: lax.cond(p, lambda a: a @ W, jnp.cos, v), lambda p, v: v @ W if p else np.cos(v),
     (np.bool_(True), V)),
    ("cond_false", lambda p, v: lax.cond(p, lambda a: a @ W, jnp.cos, v), lambda p, v: v @ W if p else np.cos(v),
     (np.bool_(False), V)),
    ("cond_float_pred", lambda p, v: lax.cond(p, lambda a: a + 1.0, lambda a: a - 1.0, v),
     lambda p, v: v + 1.0 if p != 0 else v - 1.0, (np.float64(0.0), V)),
    ("cond_pytree_operands", lambda p, v: lax.cond(p, lambda d: {"a": d["a"] * 2.0, "b": d["b"]},
                                                   lambda d: {"a": -d["a"], "b": d["b"] + 1.0}, {"a": v, "b": v}),
     lambda p, v: {"a": v * 2.0, "b": v} if p else {"a": -v, "b": v + 1.0}, (np.bool_(True), V)),
] + [(f"switch_index_{i}", _switch_each, _py_switch_each, (np.int32(i), V)) for i in (-2, 0, 1, 2, 9)]


@pytest.mark.parametrize("name, fn, reference, args", LOOPS, ids=[row[0] for row in LOOPS])
def test_traced_loop_evaluates_like_python(name, fn, reference, args):
    from ir.tree import tree_leaves
    closed = make_jaxpr(fn)(*args)
    got = eval_jaxpr(closed, *args)
    want = [np.asarray(x) for x in tree_leaves(reference(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


# --- loop-invariant forwarding, as JAX does it ---------------------------------------------------

def _only_eqn(closed, primitive):
    (eqn,) = [e for e in closed.eqns if e.primitive == primitive]
    return eqn


def test_scan_carry_passed_through_becomes_a_const():
    f = lambda xs, w: lax.scan(lambda c, x: ((c[0] + x, c[1]), x * c[1]), (jnp.zeros(3), w), xs)
    closed = make_jaxpr(f)(XS, V)
    eqn = _only_eqn(closed, "scan")
    assert (eqn.params["num_consts"], eqn.params["num_carry"]) == (1, 1)
    assert eqn.invars[0] is closed.jaxpr.invars[1]  # w is the const
    assert closed.jaxpr.outvars[1] is closed.jaxpr.invars[1]  # and is the final carry component
    (s, w_out), ys = _py_scan(lambda c, x: ((c[0] + x, c[1]), x * c[1]), (np.zeros(3), V), XS)
    for g, w in zip(eval_jaxpr(closed, XS, V), [s, w_out, ys], strict=True):
        np.testing.assert_allclose(g, w)


def test_scan_output_forwarded_from_xs_is_the_input():
    closed = make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, x), jnp.zeros(3), xs))(XS)
    assert len(_only_eqn(closed, "scan").outvars) == 1
    assert closed.jaxpr.outvars[1] is closed.jaxpr.invars[0]


def test_while_carry_unread_by_cond_becomes_a_body_const():
    f = lambda x, y: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[2], c[2]), (0, x, y))
    closed = make_jaxpr(f)(V, V + 1.0)
    eqn = _only_eqn(closed, "while")
    assert (eqn.params["body_nconsts"], len(eqn.outvars)) == (1, 2)
    assert closed.jaxpr.outvars[2] is closed.jaxpr.invars[1]
    np.testing.assert_allclose(eval_jaxpr(closed, V, V + 1.0)[1], V * (V + 1.0) ** 3)


def test_while_carry_read_by_cond_stays_a_carry():
    f = lambda x, n: lax.while_loop(lambda c: c[0] < c[2], lambda c: (c[0] + 1, c[1] * 2.0, c[2]), (0, x, n))
    eqn = _only_eqn(make_jaxpr(f)(V, 3), "while")
    assert (eqn.params["body_nconsts"], len(eqn.outvars)) == (0, 3)


def test_cond_output_both_branches_forward_is_the_operand():
    f = lambda p, x, y: lax.cond(p, lambda a, b: (a + b, b), lambda a, b: (a - b, b), x, y)
    closed = make_jaxpr(f)(True, V, W[0])
    assert len(_only_eqn(closed, "cond").outvars) == 1
    assert closed.jaxpr.outvars[1] is closed.jaxpr.invars[2]
    np.testing.assert_allclose(eval_jaxpr(closed, np.bool_(False), V, W[0])[0], V - W[0])


def test_cond_branches_share_the_closed_over_operands():
    y, z = V * 3.0, W[1]
    closed = make_jaxpr(lambda p, x: lax.cond(p, lambda a: a * z, lambda a: a + y, x))(True, V)
    branches = _only_eqn(closed, "cond").params["branches"]
    assert [len(b.jaxpr.invars) for b in branches] == [3, 3]  # z, y, then the operand
    for p, want in ((True, V * z), (False, V + y)):
        np.testing.assert_allclose(eval_jaxpr(closed, np.bool_(p), V)[0], want)


def test_nested_traced_jaxprs_keep_unread_results_named():
    # JAX prints `_` only for the unread results of the top-level jaxpr.
    def body(c, x):
        jnp.sin(x)
        return c + jnp.sum(x), c

    closed = make_jaxpr(lambda xs: lax.scan(body, ZERO, xs))(XS)
    assert re.search(r"\n +[a-z]+:f64\[3\] = sin", str(closed))


def test_concrete_switch_index_is_clamped_at_trace_time():
    closed = make_jaxpr(lambda x: lax.switch(7, [jnp.sin, jnp.cos], x))(V)
    eqn = _only_eqn(closed, "cond")
    assert [e.primitive for e in closed.eqns] == ["cond"] and int(eqn.invars[0].value) == 1
    assert make_jaxpr(lambda x: lax.switch(0, [jnp.sin], x))(V).eqns[0].primitive == "sin"  # one branch: inlined


# --- carry weak types --------------------------------------------------------------------------

def test_weak_int_carry_is_promoted_to_the_body_dtype():
    closed = make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + jnp.sum(x), c), 0, xs))(XS)
    eqn = _only_eqn(closed, "scan")
    init = eqn.invars[0]
    assert str(init.aval) == "f64[]" and not init.aval.weak_type and init.value == 0.0
    carry, ys = _py_scan(lambda c, x: (c + np.sum(x), c), 0.0, XS)
    np.testing.assert_allclose(eval_jaxpr(closed, XS)[0], carry)


def test_weak_traced_carry_is_converted_before_the_loop():
    f = lambda n, v: lax.while_loop(lambda c: c[0] < 3.5, lambda c: (c[0] + jnp.sum(c[1]), c[1]), (n, v))
    closed = make_jaxpr(f)(1, V)  # a Python int argument is a weak i64 input
    assert [e.primitive for e in closed.eqns] == ["convert_element_type", "while"]
    assert closed.eqns[0].params["new_dtype"].name == "float64"


def test_weak_carry_of_the_same_dtype_is_kept():
    # JAX compares carry types ignoring weak_type: a weak f64 carry the body makes strong stays weak.
    closed = make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x[0], c), 0.0, xs))(XS)
    assert _only_eqn(closed, "scan").params["jaxpr"].jaxpr.invars[0].aval.weak_type


# --- errors ------------------------------------------------------------------------------------

def _carry_dtype_changes(xs):
    def body(c, x):
        return c * 0.5, x
    return lax.scan(body, jnp.zeros(3, dtype=jnp.int32), xs)


ERRORS = [
    ("scan carry dtype", _carry_dtype_changes, (XS,), TypeError,
     r"(?s)carry input and carry output must have equal types.*input carry c has type int32\[3\].*float64\[3\]"
     r", so the dtypes do not match"),
    ("scan carry shape", lambda xs: lax.scan(lambda c, x: (c + x, x), ZERO, xs), (XS,), TypeError,
     "the shapes do not match"),
    ("scan carry structure", lambda xs: lax.scan(lambda c, x: ((c, c), x), ZERO, xs), (XS,), TypeError,
     "same pytree structure"),
    ("scan carry component path", lambda xs: lax.scan(lambda c, x: ({"a": c["a"], "b": x}, x),
                                                       {"a": ZERO, "b": ZERO}, xs), (XS,),
     TypeError, r"input carry component c\['b'\] has type float64\[\]"),
    ("scan body not a pair", lambda xs: lax.scan(lambda c, x: c, ZERO, xs), (XS,), TypeError, "must be a pair"),
    ("scan no xs no length", lambda v: lax.scan(lambda c, x: (c, x), v, None), (V,), ValueError,
     "no values to scan over"),
    ("scan lengths differ", lambda xs: lax.scan(lambda c, x: (c, x), ZERO, (xs, xs[:2])), (XS,), ValueError,
     "different leading axis sizes: 5, 2"),
    ("scan length disagrees", lambda xs: lax.scan(lambda c, x: (c, x), ZERO, xs, length=3), (XS,), ValueError,
     "disagrees with leading axis sizes"),
    ("scan scalar xs", lambda v: lax.scan(lambda c, x: (c, x), ZERO, v[0]), (V,), ValueError, "no leading axis"),
    ("scan traced length", lambda n: lax.scan(lambda c, x: (c, x), ZERO, None, length=n), (np.int32(3),),
     TracingError, "concrete `int`"),
    ("while carry dtype", lambda v: lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] > 0), (0, v)),
     (V,), TypeError, r"while_loop body function carry input.*\n\nThe input carry component c\[1\] has type "
     r"float64\[3\] but the corresponding output carry component has type bool\[3\]"),
    ("while cond not scalar", lambda v: lax.while_loop(lambda c: c > 0, lambda c: c - 1.0, v), (V,), TypeError,
     r"cond_fun must return a boolean scalar, but got output type\(s\) \[bool\[3\]\]"),
    ("while cond not bool", lambda v: lax.while_loop(lambda c: jnp.sum(c), lambda c: c - 1.0, v), (V,), TypeError,
     "boolean scalar"),
    ("cond branch dtypes", lambda p, v: lax.cond(p, lambda a: a, lambda a: a.astype(jnp.float32), v),
     (True, V), TypeError,
     r"true_fun output and false_fun output must have identical types, got\nDIFFERENT f64\[3\] vs\. f32\[3\]\."),
    ("cond branch structure", lambda p, v: lax.cond(p, lambda a: (a, a), lambda a: a, v), (True, V), TypeError,
     "true_fun output must have same type structure as false_fun output"),
    ("cond predicate not scalar", lambda p, v: lax.cond(p, jnp.sin, jnp.cos, v), (np.array([True, False]), V),
     TypeError, r"Pred must be a scalar, got .* of shape \(2,\)"),
    ("cond predicate complex", lambda p, v: lax.cond(p, jnp.sin, jnp.cos, v), (np.complex128(1.0), V),
     TypeError, "Pred type must be either boolean or number, got complex128"),
    ("switch branch shapes", lambda i, v: lax.switch(i, [jnp.sin, jnp.sum], v), (np.int32(0), V), TypeError,
     r"branch 0 output and branch 1 output must have identical types"),
    ("switch float index", lambda i, v: lax.switch(i, [jnp.sin, jnp.cos], v), (np.float64(0), V), TypeError,
     "Index type must be an integer"),
    ("switch empty", lambda i, v: lax.switch(i, [], v), (np.int32(0), V), ValueError, "Empty branch sequence"),
    ("fori bound dtypes", lambda n, v: lax.fori_loop(np.uint32(0), n, lambda i, x: x, v), (np.int32(3), V),
     TypeError, "must have equal types, got uint32 and int32"),
    ("fori dynamic unroll", lambda n, v: lax.fori_loop(0, n, lambda i, x: x, v, unroll=2), (np.int32(3), V),
     ValueError, "statically known"),
]


@pytest.mark.parametrize("name, fn, args, error, match", ERRORS, ids=[row[0] for row in ERRORS])
def test_errors_are_clear(name, fn, args, error, match):
    with pytest.raises(error, match=match):
        make_jaxpr(fn)(*args)


def test_map_with_batch_size_is_refused():
    with pytest.raises(NotImplementedError, match="batch_size"):
        make_jaxpr(lambda xs: lax_map(jnp.sin, xs, batch_size=2))(XS)
