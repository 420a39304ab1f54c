"""Live JAX in: `ir.from_jax` converts JAX's jaxpr objects to the program the text route parses.

Two sources of live JAX objects, each compared structurally (`tests/ir/jax_compare.py`: binders, avals,
literal bits, primitives, params of the same types and values, nested programs, constants) with
`parse_jaxpr` of the same program's text:

- every oracle case: the oracle holds text, not Python, so the live object is what JAX's own tracer makes of
  the case's program rebuilt with JAX's primitives, `jax.make_jaxpr(eval.to_jax(parse_case(case)))(*args)`;
  it prints the case's text exactly (asserted), so it is a live object of that very program; the same for
  the gradient programs JAX printed for the fixture programs (`grad`, `grad_grad`);
- functions written with JAX (`CORPUS`, every primitive family of the fixtures, with JAX's real custom_jvp
  rules, shared sub-jaxprs, constants, flax and optax), traced by `jax.make_jaxpr`; their converted programs
  also compute JAX's values.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from eval.oracle import load_fixtures, parse_case
from ir.core import ClosedJaxpr
from ir.errors import UnsupportedPrimitive
from ir.text import parse_jaxpr
from tests.ir.jax_compare import difference, random_params
from tests.oracle_paths import ORACLE

jax = pytest.importorskip("jax", reason="live JAX in needs the jax extra (installed by the dev extra)")
jnp, lax = jax.numpy, jax.lax
jax.config.update("jax_enable_x64", True)

import ir  # noqa: E402
from ir.jax_convert import convert  # noqa: E402

CASES = load_fixtures([ORACLE])
FAMILIES = sorted({c.family for c in CASES})


@pytest.mark.parametrize("family", FAMILIES)
def test_every_oracle_case_converts_to_the_program_its_text_parses_to(family):
    import eval.xla as xla

    problems = []
    cases = [c for c in CASES if c.family == family]
    for case in cases:
        text_route = parse_case(case)
        live = jax.make_jaxpr(xla.to_jax(text_route))(*case.arrays("args"))
        if str(live) != case.jaxpr_text:
            problems.append(f"{case.id}: the live object does not print the case's text")
            continue
        problem = difference(convert(live), text_route)
        if problem:
            problems.append(f"{case.id}: {problem}")
    assert cases and not problems, "\n".join(problems[:5])


def test_jax_gradient_programs_of_the_fixtures_convert_as_their_text_parses():
    """The `grad` and `grad_grad` jaxprs JAX printed for the fixture programs, by the same route."""
    import eval.xla as xla

    problems, compared = [], 0
    for case in CASES:
        for key in ("grad", "grad_grad"):
            if "jaxpr" not in case.raw.get(key, {}):
                continue
            text_route = parse_jaxpr(case.raw[key]["jaxpr"])
            args = case.arrays("args")[:len(text_route.in_avals)]
            live = jax.make_jaxpr(xla.to_jax(text_route))(*args)
            compared += 1
            problem = difference(convert(live), text_route)
            if str(live) != case.raw[key]["jaxpr"]:
                problem = problem or "the live object does not print the text"
            if problem:
                problems.append(f"{case.id} {key}: {problem}")
    assert compared >= 45 and not problems, "\n".join(problems[:5])


def _rng(seed=0):
    return np.random.default_rng(seed)


X = _rng().normal(size=(3, 4))
Y = _rng(1).normal(size=(4, 5))
V = _rng(2).normal(size=(4,))
I32 = np.array([3, -1, 7, 0], np.int32)
KEY = np.array([0, 42], np.uint32)


@jax.custom_vjp
def _clip_gradient(x):
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))


def _flax_mlp():
    nn = pytest.importorskip("flax.linen", reason="flax is in the dev extra")

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(jax.nn.gelu(nn.Dense(8)(x)))

    model = MLP()
    params = random_params(model, X)
    return lambda p, x: model.apply(p, x), (params, X)


def _optax_adam():
    optax = pytest.importorskip("optax", reason="optax is in the dev extra")
    tx = optax.adam(1e-2)
    params = {"w": Y, "b": V}
    state = tx.init(params)

    def step(params, state, grads):
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state

    return step, (params, state, jax.tree_util.tree_map(np.ones_like, params))


def _shared(x):
    f = jax.jit(lambda a: jnp.sin(a) * 2)
    return f(x) + f(x + 1)


# name -> (function, args): one or more programs of every fixture family, written with JAX.
CORPUS = {
    "unary": (lambda x: (jnp.sin(x), jnp.exp(x), jnp.log1p(jnp.abs(x)), jnp.tanh(x), jax.nn.sigmoid(x),
                         lax.erf(x), lax.lgamma(jnp.abs(x) + 1), jnp.sqrt(jnp.abs(x)), jnp.round(x)), (X,)),
    "unary/f32_complex": (lambda x: (jnp.cos(x.astype(jnp.float32)), jnp.exp(x * 1j)), (X,)),
    "binary": (lambda x, y: (x ** 2 + jnp.arctan2(x, y[:3, :4]), jnp.maximum(x, 0.5), x % 0.7,
                             jnp.nextafter(x, 0.0)), (X, Y)),
    "compare_bitwise": (lambda i: ((i > 0) & (i < 5), i >> 1, jnp.where(i == 3, i, -i), ~i,
                                   lax.population_count(i)), (I32,)),
    "reduce": (lambda x: (x.sum(0), x.max(1), jnp.argmax(x, 1), jnp.cumsum(x, 1), x.prod(),
                          jax.scipy.special.logsumexp(x, axis=1)), (X,)),
    "reduce/window": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID"), (X,)),
    "shape": (lambda x: (x.reshape(4, 3).T, jnp.concatenate([x, x]), jnp.pad(x, ((1, 0), (0, 2))),
                         jnp.flip(x, 1), jnp.expand_dims(x, 0), jnp.tile(x, (1, 2)), jnp.stack([x, x], 1)), (X,)),
    "indexing": (lambda x, i: (x[1:, ::2], x[:, i % 4], x.at[0, i % 4].add(1.0), jnp.sort(x, 1),
                               jnp.argsort(x[0]), lax.top_k(x, 2)[0],
                               lax.dynamic_slice(x, (i[0] % 2, i[3]), (2, 2))), (X, I32)),
    "dot_conv": (lambda x, y: (x @ y, jnp.einsum("ij,jk->ik", x, y), jnp.outer(x[0], y[0]),
                               lax.conv(x[None, None], y[None, None, :2, :2], (1, 1), "SAME")), (X, Y)),
    "dtype": (lambda x, i: (x.astype(jnp.int32), i.astype(jnp.float32), lax.bitcast_convert_type(x, jnp.int64),
                            i + 2, x * 2, x.astype(jnp.bfloat16)), (X, I32)),
    "control/cond_switch": (lambda x: (lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x),
                                       lax.switch(2, [jnp.sin, jnp.cos, jnp.tanh], x)), (X,)),
    "control/scan_while_fori": (lambda x: (lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(4), x),
                                           lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5),
                                                          (0, x)),
                                           lax.fori_loop(0, 3, lambda i, c: c + i, x)), (X,)),
    "control/custom_rules_checkpoint": (lambda x: (jax.nn.relu(x), jax.nn.softplus(x), _clip_gradient(x),
                                                   jax.checkpoint(lambda a: jnp.sin(a) ** 2)(x)), (X,)),
    "control/shared_jit": (_shared, (X,)),
    "constants": (lambda x: x * np.arange(4.0) + jnp.asarray(X), (X,)),
    "linalg": (lambda x: (jnp.linalg.cholesky(x @ x.T + 3 * jnp.eye(3)), jnp.linalg.qr(x)[1],
                          jnp.linalg.eigh(x @ x.T)[0], jnp.linalg.solve(x @ x.T + jnp.eye(3), x[:, 0]),
                          jnp.linalg.slogdet(x @ x.T + jnp.eye(3))[1], jnp.linalg.svd(x, compute_uv=False)), (X,)),
    "fft": (lambda x: (jnp.fft.fft(x), jnp.fft.rfft(x, norm="ortho"), jnp.fft.irfft(jnp.fft.rfft(x))), (X,)),
    "random": (lambda k: (jax.random.uniform(k, (3,)), jax.random.normal(jax.random.split(k)[1], (2,)),
                          jax.random.bernoulli(jax.random.fold_in(k, 3), 0.5, (4,))), (KEY,)),
    "random/typed_keys": (lambda s: jax.random.key_data(jax.random.split(jax.random.key(s))), (np.int32(7),)),
    "nn": (lambda x, i: (jax.nn.softmax(x), jax.nn.log_softmax(x, 1), jax.nn.gelu(x), jax.nn.one_hot(i % 4, 4),
                         jax.nn.silu(x), jax.nn.logsumexp(x)), (X, I32)),
    "scipy": (lambda x: (jax.scipy.special.xlogy(x, jnp.abs(x) + 1), jax.scipy.special.erf(x),
                         jax.scipy.stats.norm.logpdf(x)), (X,)),
}
LIBRARIES = {"flax/mlp": _flax_mlp, "optax/adam": _optax_adam}


def _both_routes(fun, args):
    live = jax.make_jaxpr(fun)(*args)
    text_route = parse_jaxpr(str(live))
    if live.consts:  # the text shows constvars, not their values
        text_route = ClosedJaxpr(text_route.jaxpr, convert(live).consts)
    return live, ir.from_jax(fun)(*args), text_route


def _key_data(x):
    return jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x


def _check_values(fun, program, args):
    """The converted program, run by eqjax's interpreter, computes what JAX computes."""
    from eval.interpreter import eval_jaxpr

    leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(args)]
    got = eval_jaxpr(program, *leaves)
    outs = jax.jit(fun)(*args)  # one compile, not one per operation
    want = [np.asarray(_key_data(w)) for w in jax.tree_util.tree_leaves(outs)]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        wide = np.complex128 if w.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(np.asarray(g, wide), np.asarray(w, wide),
                                   rtol=1e-2 if w.dtype.itemsize <= 2 else 1e-5, atol=1e-6)


@pytest.mark.parametrize("name", [*CORPUS, *LIBRARIES])
def test_jax_functions_convert_as_their_text_parses_and_compute_jax_values(name):
    fun, args = CORPUS[name] if name in CORPUS else LIBRARIES[name]()
    _, live_route, text_route = _both_routes(fun, args)
    problem = difference(live_route, text_route)
    assert problem is None, problem
    _check_values(fun, live_route, args)


def test_a_sub_jaxpr_jax_shares_is_one_program_as_in_the_text():
    program = ir.from_jax(_shared)(X)
    bodies = [e.params["jaxpr"] for e in program.eqns if e.primitive == "jit"]
    assert len(bodies) == 2 and bodies[0] is bodies[1]
    text_route = parse_jaxpr(str(jax.make_jaxpr(_shared)(X)))
    text_bodies = [e.params["jaxpr"] for e in text_route.eqns if e.primitive == "jit"]
    assert text_bodies[0] is text_bodies[1]


def test_parse_jaxpr_and_optimize_take_a_live_jaxpr():
    from eval.interpreter import eval_jaxpr
    from rewrites.engine import optimize

    live = jax.make_jaxpr(lambda x: jnp.sum(jnp.tanh(x.T.T) * 1.0))(X)
    assert difference(parse_jaxpr(live), parse_jaxpr(str(live))) is None
    better, report = optimize(live)
    assert report.cost_after < report.cost_before
    np.testing.assert_allclose(eval_jaxpr(better, X)[0], float(jnp.sum(jnp.tanh(X))), rtol=1e-12)


def test_a_primitive_eqjax_lacks_is_named():
    def with_callback(x):
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    with pytest.raises(UnsupportedPrimitive, match="pure_callback"):
        ir.from_jax(with_callback)(X)


def test_the_names_of_the_api():
    assert ir.from_jax.convert is convert
    assert isinstance(ir.from_jax.function(jnp.sin), ir.jax_convert.JaxFunction)


def test_convert_refuses_what_is_not_a_jax_program():
    with pytest.raises(TypeError, match="jax.core.ClosedJaxpr"):
        convert("{ lambda ; a:f64[]. let  in (a,) }")


def test_without_jax_import_ir_works_and_from_jax_names_the_extra():
    script = textwrap.dedent("""
        import sys
        sys.modules["jax"] = None  # as if JAX were not installed
        import ir, ir.numpy
        from ir.jax_convert import JaxUnavailable
        assert "jax" not in [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
        try:
            ir.from_jax(lambda x: x)(1.0)
        except JaxUnavailable as e:
            print("refused:", e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "eqjax[jax]" in out.stdout


def test_a_nested_jaxpr_keeps_its_constants_which_the_text_cannot_hold():
    from eval.interpreter import eval_jaxpr

    weights = np.arange(4.0)

    def f(x):
        return jnp.sum(jax.jit(lambda a: jnp.sin(a) * weights)(x))

    program = ir.from_jax(f)(V)
    (body,) = [e.params["jaxpr"] for e in program.eqns if e.primitive == "jit"]
    assert len(body.consts) == 1 and np.array_equal(body.consts[0], weights)
    with pytest.raises(ir.JaxprSyntaxError, match="constvars"):
        parse_jaxpr(str(jax.make_jaxpr(f)(V)))
    np.testing.assert_allclose(eval_jaxpr(program, V)[0], f(V), rtol=1e-12)
