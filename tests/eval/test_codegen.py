"""Generated NumPy (`eval.compile_numpy`) against the interpreter, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given

import ir
import ir.lax as lax
import ir.numpy as jnp
from eval.codegen import compile_numpy
from eval.codegen.inline import RULES
from eval.interpreter import eval_jaxpr
from eval.oracle import DEFAULT_ORACLE, load_fixtures, parse_case
from ir.errors import JaxprTypeError
from ir.strategies import programs
from ir.tracing import bind

CASES = load_fixtures([DEFAULT_ORACLE])
FAMILIES = sorted({c.family for c in CASES})


def same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def assert_same_as_interpreter(closed, args) -> list:
    want = eval_jaxpr(closed, *args)
    got = compile_numpy(closed)(*args)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert type(g) is np.ndarray, f"output {k} is a {type(g).__name__}"
        assert same_bits(g, w), f"output {k}: {g!r} != {w!r}"
    return got


@pytest.mark.parametrize("family", FAMILIES)
def test_every_oracle_case_equals_the_interpreter_bit_for_bit(family):
    differ = []
    for case in (c for c in CASES if c.family == family):
        closed, args = parse_case(case), case.arrays("args")
        try:
            assert_same_as_interpreter(closed, args)
        except AssertionError as e:
            differ.append(f"{case.id}: {e}")
    assert not differ, "\n".join(differ)


@given(programs(special_values=True, dtypes=("float64", "float32")))
def test_random_programs_equal_the_interpreter(p):
    assert_same_as_interpreter(p.closed, p.args)


@given(programs(special_values=True, dtypes=("bfloat16", "float16", "float32"),
                shapes=((), (4,), (2, 1, 3), (2, 2, 3))))
def test_random_narrow_and_rank3_programs_equal_the_interpreter(p):
    assert_same_as_interpreter(p.closed, p.args)


SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e308, -1e-310])


def test_every_inline_rule_meets_an_oracle_case():
    """Each primitive written inline is exercised, on its special values, by the oracle cases above
    (add_any, which JAX prints only in derivative programs, by the test below)."""
    covered = {p for c in CASES for p in c.primitives} | {"add_any"}
    assert set(RULES) - covered == set()


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int32"])
def test_add_any_on_special_values(dtype):
    with np.errstate(over="ignore"):
        x = SPECIAL.astype(dtype) if dtype != "int32" else np.array([0, -1, 2**31 - 1, -2**31], np.int32)
    y = np.roll(x, 1)
    closed = ir.make_jaxpr(lambda a, b: bind("add_any", a, b))(x, y)
    assert closed.eqns[0].primitive == "add_any"
    assert_same_as_interpreter(closed, [x, y])


def _chain(x):
    return jnp.tanh(jnp.exp(x * 2.0) + 1.0) - x


def test_dead_buffers_are_reused_and_inputs_never_written():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    closed = ir.make_jaxpr(_chain)(x)
    compiled = compile_numpy(closed)
    assert "out=" in compiled.source
    before = x.copy()
    assert_same_as_interpreter(closed, [x])
    assert same_bits(x, before)


def test_a_value_read_later_keeps_its_buffer():
    def f(x):
        y = jnp.exp(x)
        z = jnp.sin(y)  # y is read again below: sin must not write into it
        return z + y, y

    x = np.linspace(0, 1, 6)
    closed = ir.make_jaxpr(f)(x)
    got = assert_same_as_interpreter(closed, [x])
    assert same_bits(got[1], np.exp(x))


def test_an_output_is_never_overwritten():
    def f(x):
        y = jnp.exp(x)
        return y, jnp.sin(y)

    x = np.linspace(0, 1, 6)
    got = assert_same_as_interpreter(ir.make_jaxpr(f)(x), [x])
    assert same_bits(got[0], np.exp(x))


def test_views_block_reuse():
    def f(x):
        y = jnp.exp(x)
        t = y.T  # a view of y's buffer: y may not be overwritten while t lives
        z = jnp.sin(y)
        return t * 2.0, z

    x = np.linspace(0, 1, 6).reshape(2, 3)
    assert_same_as_interpreter(ir.make_jaxpr(f)(x), [x])


def test_non_contiguous_inputs_are_taken_in_c_order():
    x = np.arange(12.0).reshape(3, 4)
    closed = ir.make_jaxpr(lambda a: jnp.sum(jnp.sin(a) * a, axis=0))(x)
    transposed = np.asfortranarray(x)
    got = compile_numpy(closed)(transposed)
    assert same_bits(got[0], eval_jaxpr(closed, x)[0])


def test_control_flow_becomes_loops_and_branches():
    def f(x):
        def step(c, xi):
            return c * 0.5 + jnp.sin(xi), c
        c, ys = lax.scan(step, x[0], x)
        w = lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + 1.0, c)
        return lax.cond(w > 20.0, lambda v: v - 1.0, lambda v: v + 1.0, w), ys

    x = np.linspace(0, 1, 5)
    closed = ir.make_jaxpr(f)(x)
    source = compile_numpy(closed).source
    assert "for _t" in source and "while _while_cond" in source and "if _branch" in source
    assert_same_as_interpreter(closed, [x])


def test_one_source_line_per_equation():
    x = np.ones((2, 3))
    closed = ir.make_jaxpr(_chain)(x)
    source = compile_numpy(closed).source
    comments = [line for line in source.splitlines() if "  # " in line]
    assert len(comments) == len(closed.eqns)
    assert "= tanh" not in source and "# tanh" in source


def test_compiled_programs_are_cached_per_fingerprint():
    x = np.ones(3)
    a = compile_numpy(ir.make_jaxpr(_chain)(x))
    b = compile_numpy(ir.make_jaxpr(_chain)(x))
    c = compile_numpy(ir.make_jaxpr(lambda v: _chain(v) * 3.0)(x))
    assert a is b and c is not a


def test_bad_arguments_are_typed_errors():
    compiled = compile_numpy(ir.make_jaxpr(_chain)(np.ones(3)))
    with pytest.raises(JaxprTypeError, match="takes 1 arguments, got 2"):
        compiled(np.ones(3), np.ones(3))
    with pytest.raises(JaxprTypeError, match="shape"):
        compiled(np.ones(4))
    with pytest.raises(JaxprTypeError, match="dtype"):
        compiled(np.ones(3, np.float32))
    assert same_bits(compiled(2.0 * np.ones(3))[0], compiled([2.0, 2.0, 2.0])[0])
    scalar = compile_numpy(ir.make_jaxpr(_chain)(1.5))
    assert same_bits(scalar(1.5)[0], scalar(np.float64(1.5))[0]) and scalar(1.5)[0].shape == ()


# --- fusion (fuse=True) ---------------------------------------------------------------------------------

BIG = np.linspace(-3.0, 3.0, 1 << 15)


def _arith_chain(x, y):
    z = (x * 2.0 + y) / (1.0 + x * x) - jnp.sqrt(jnp.abs(y))
    return jnp.where(z > 0.0, z, -z * 0.5) + jnp.maximum(x, 0.0) ** 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_arithmetic_is_bit_identical(dtype):
    x, y = BIG.astype(dtype), np.cos(BIG).astype(dtype)
    closed = ir.make_jaxpr(_arith_chain)(x, y)
    compiled = compile_numpy(closed, fuse=True)
    assert compiled.source.count("numexpr:") >= 1
    assert len([line for line in compiled.source.splitlines() if "  # " in line]) < len(closed.eqns)
    got, want = compiled(x, y)[0], eval_jaxpr(closed, x, y)[0]
    assert same_bits(got, want)


def test_fused_transcendentals_are_within_a_few_ulp():
    """numexpr's exp and sin may differ from NumPy's by an ulp; where exp(-x²) + sin(x) cancels (x ≈ -0.68) that
    ulp of the terms (≤ 1 in magnitude) is many ulps of the result, so the bound is a few ulps of the result
    plus a few ulps of 1 carried through tanh (slope ≤ 1) and the factor log1p(x²)."""
    closed = ir.make_jaxpr(lambda x: jnp.tanh(jnp.exp(-x * x) + jnp.sin(x)) * jnp.log1p(x * x))(BIG)
    compiled = compile_numpy(closed, fuse=True)
    assert "numexpr:" in compiled.source
    got, want = compiled(BIG)[0], eval_jaxpr(closed, BIG)[0]
    bound = 8 * np.spacing(np.abs(want)) + 8 * np.finfo(np.float64).eps * np.log1p(BIG * BIG)
    assert got.dtype == want.dtype and np.all(np.abs(got - want) <= bound)


def test_fusion_keeps_shared_values_and_outputs_materialized():
    def f(x):
        shared = jnp.exp(x)
        return shared * 2.0 + 1.0, shared - 3.0, shared

    closed = ir.make_jaxpr(f)(BIG)
    compiled = compile_numpy(closed, fuse=True)
    assert "_np.exp" in compiled.source  # read three times: computed once, by NumPy
    for got, want in zip(compiled(BIG), eval_jaxpr(closed, BIG), strict=True):
        assert same_bits(got, want)


def test_small_arrays_are_not_fused():
    x = BIG[:100]
    compiled = compile_numpy(ir.make_jaxpr(_arith_chain)(x, x), fuse=True)
    assert "numexpr" not in compiled.source


def test_fused_oracle_programs_agree_with_the_interpreter(monkeypatch):
    """With fusion at any size (the oracle's arrays are small), every case agrees to the last bits."""
    import eval.codegen as codegen
    from eval.codegen import fuse

    monkeypatch.setattr(fuse, "MIN_SIZE", 1)
    monkeypatch.setattr(codegen, "_CACHE", type(codegen._CACHE)())
    fused = 0
    for case in (c for c in CASES if c.family == "programs"):
        closed, args = parse_case(case), case.arrays("args")
        compiled = compile_numpy(closed, fuse=True)
        fused += "numexpr:" in compiled.source
        for got, want in zip(compiled(*args), eval_jaxpr(closed, *args), strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape, case.id
            np.testing.assert_allclose(got, want, rtol=1e-12 if got.dtype == np.float64 else 1e-5, atol=0,
                                       err_msg=case.id)
    assert fused >= 10


def test_rounding_differences_are_measured():
    from eval.codegen.fuse import ROUNDS_DIFFERENTLY, rounding_differences

    report = rounding_differences(n=2000)
    assert {k.split()[0] for k in report} == set(ROUNDS_DIFFERENTLY)
    assert all(0.0 <= r["differ"] <= 1.0 and r["max_ulp"] < 64 for r in report.values())


def test_a_product_checks_layouts_it_cannot_know_when_it_runs():
    """A scan body's carry is C order on the first step and a transpose (dense) after: the inline product
    runs on both; a strided slice (an implementation's result, not dense) goes to the implementation."""
    def f(c0, w):
        def step(c, _):
            strided = lax.slice(jnp.concatenate([c, c], axis=1), (0, 0), (3, 6), (1, 2))
            return jnp.transpose(jnp.tanh(c @ w + strided @ w)), None
        return lax.scan(step, c0, None, length=4)[0]

    c0, w = np.linspace(-1, 1, 9).reshape(3, 3), np.linspace(0.5, 1.5, 9).reshape(3, 3)
    closed = ir.make_jaxpr(f)(c0, w)
    source = compile_numpy(closed).source
    assert "_dense(d)" in source and source.count(" else _impl_dot_general") == 2
    assert_same_as_interpreter(closed, [c0, w])


def test_profile_times_each_top_level_equation():
    x = np.linspace(0, 1, 1000)
    closed = ir.make_jaxpr(_chain)(x)
    compiled = compile_numpy(closed, profile=True)
    assert compile_numpy(closed) is not compiled
    assert_same_as_interpreter(closed, [x])
    compiled(x)
    rows = compiled.profile()
    assert [r[1] for r in rows] == [e.primitive for e in closed.eqns] and all(r[2] > 0 for r in rows)
    compiled.reset_profile()
    assert all(r[2] == 0.0 for r in compiled.profile())


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_elementwise_work_split_over_threads_is_bit_identical(threads, monkeypatch):
    from eval.codegen import runtime

    monkeypatch.setattr(runtime, "_threads", None)
    runtime.set_num_threads(threads)
    try:
        rows = np.linspace(-2, 2, 301 * 1000).reshape(301, 1000)  # rows not divisible by the threads
        col, row = np.linspace(0, 1, 301).reshape(301, 1), np.linspace(1, 2, 1000)

        def f(x, c, r):
            y = jnp.exp(x - c) * r + 2.0  # broadcast operands of both kinds, a literal, out= reuse
            return jnp.tanh(y) / (1.0 + jnp.abs(x)), y > 3.0

        closed = ir.make_jaxpr(f)(rows, col, row)
        compiled = compile_numpy(closed)
        assert "_parallel(_np.exp" in compiled.source
        assert_same_as_interpreter(closed, [rows, col, row])
        with warnings.catch_warnings():  # the worker threads ignore floating-point errors too
            warnings.simplefilter("error")
            compiled(rows * 1e3, col, row)
    finally:
        runtime.set_num_threads(None)


@pytest.mark.parametrize("axes", [(1,), (2,), (1, 2)])
@pytest.mark.parametrize("prim", ["sum", "max", "min", "prod"])
def test_large_reductions_split_over_rows_are_bit_identical(axes, prim):
    from eval.codegen import runtime

    runtime.set_num_threads(3)
    try:
        x = np.sin(np.arange(37 * 64 * 60, dtype=np.float64)).reshape(37, 64, 60) + 1.0
        closed = ir.make_jaxpr(lambda a: getattr(jnp, prim)(a, axis=axes))(x)
        assert "_parallel_reduce" in compile_numpy(closed).source
        assert_same_as_interpreter(closed, [x])
    finally:
        runtime.set_num_threads(None)


@pytest.mark.parametrize("shape", [(), (6,)])
def test_pow_on_special_values_equals_the_implementation(shape):
    """NumPy turns a scalar or stride-0 exponent of 0.5 into sqrt (pow(-inf, 0.5) would be nan, not inf):
    the generated code, like the implementation, gives np.power full contiguous operands."""
    bases = np.array([-np.inf, -0.0, 0.0, 2.0, np.nan, -8.0])
    for y in [0.5, -0.5, 2.0, np.inf, -np.inf, np.nan, 1 / 3]:
        for x in (bases if shape == () else [bases]):
            x = np.asarray(x)
            closed = ir.make_jaxpr(lambda a, y=y: lax.pow(a, y))(x)
            assert_same_as_interpreter(closed, [x])
            closed = ir.make_jaxpr(lambda a, b: lax.pow(a, b))(x, np.full(shape, y))
            assert_same_as_interpreter(closed, [x, np.full(shape, y)])


def test_constant_equations_are_computed_when_compiled_and_never_written():
    def f(x):
        eye = (lax.broadcasted_iota(np.int64, (3, 3), 0) == lax.broadcasted_iota(np.int64, (3, 3), 1))
        scale = jnp.full((3, 3), 2.0) * 3.0  # a constant the next line must not overwrite
        return x * scale + jnp.where(eye, 1.0, 0.0), scale

    x = np.ones((3, 3))
    closed = ir.make_jaxpr(f)(x)
    compiled = compile_numpy(closed)
    assert "# _const0 = iota  (computed when compiled)" in compiled.source and "_impl_iota" not in compiled.source
    first = assert_same_as_interpreter(closed, [x])
    first[1][...] = -1.0  # the caller writes into a returned constant
    again = assert_same_as_interpreter(closed, [x])
    assert same_bits(again[1], np.full((3, 3), 6.0)) and same_bits(again[0], first[0])


def test_two_nans_of_different_signs_keep_the_ufuncs_choice():
    """sin(inf) is a NaN with its sign bit set; `c + b` adds it to its negation. NumPy's scalar `+` may
    return the other operand's NaN than the ufunc loop does, so rank-0 arithmetic stays a ufunc call."""
    from ir.text import parse_jaxpr

    closed = parse_jaxpr("""{ lambda ; a:f64[]. let
        b:f64[] = sin a
        c:f64[] = neg b
        d:f64[] = add c b
        e:f64[] = sub b c
        f:f64[] = mul c b
        g:f64[] = div b c
      in (d, e, f, g) }""")
    assert_same_as_interpreter(closed, [np.array(np.inf)])
