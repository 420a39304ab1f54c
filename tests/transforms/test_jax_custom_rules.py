"""JAX's own custom derivative rules (transforms/ad/jax_rules), registered by default: each program is
built by real JAX (x64), read through the text route, differentiated by eqjax through the e-graph
(forward mode, and reverse mode: the transposed rule) and compared with `jax.jvp` / `jax.grad` at the
points where the rule differs from differentiating the body (kinks, zeros, infinities) and at ordinary
points. Each row also checks that its program prints the call and rule it is about. The rules JAX prints
that are not written raise `UnsupportedPrimitive` naming them."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir import custom_rules, from_jax, make_jaxpr, parse_jaxpr
from ir import numpy as inp
from ir.core import ClosedJaxpr, Jaxpr, Var
from ir.errors import UnsupportedPrimitive
from ir.tracing import bind_jaxpr
from tests.profile import NIGHTLY, ci_share
from transforms.ad import jax_rules
from transforms.ad.programs import grad_program, jvp_program

jax = pytest.importorskip("jax", reason="the programs are built by JAX (the jax extra)")
jnp = jax.numpy
jss = pytest.importorskip("jax.scipy.special")

INF = np.inf


@dataclass(frozen=True)
class Row:
    call: str  # the custom_jvp_call's name=
    rule: str  # and its jvp=
    fn: Callable  # of JAX arrays
    args: tuple  # arrays holding the special and the ordinary points
    rtol: float = 1e-10
    softmax_flag: bool = False  # jax_softmax_custom_jvp on while building the program
    # JAX's text of `fn` that eqjax cannot read (nested jaxprs with constvars): the program is then the
    # call staged by eqjax with this body (its value is not compared; the rule's tangent is)
    stand_in: Callable | None = None
    # JAX's text leaves out the values of the consts the call closes over (coefficient tables): the program
    # comes in live (`ir.from_jax`), which holds them
    live: bool = False

    @property
    def id(self) -> str:
        return f"{self.call}/{self.rule}"


def _a(*xs) -> np.ndarray:
    return np.array(xs, dtype=np.float64)


def _s(x) -> np.ndarray:
    return np.array(x, dtype=np.float64)


SPD3 = np.array([[2.0, 1, 0], [1, 3, 1], [0, 1, 4]])
M4 = np.array([[2.0, 1, 0, 1], [1, -3, 1, 0], [0, 1, 4, 2], [1, 0, 2, 5]])
RANK3 = np.vstack([M4[:3], M4[0] + 2 * M4[2]])  # det = 0, adj != 0: the rule is finite, det(x) x^-1 is not
RANK2 = np.outer([1.0, 2, 0, 1], [1.0, 0, 1, 1]) + np.outer([0.0, 1, 1, 0], [2.0, 1, 0, 0])  # adj = 0

ROWS = [
    # jax.nn
    Row("relu", "jvp", jax.nn.relu, (_a(0, -1.5, 2, -0.0),)),
    Row("relu6", "jvp", jax.nn.relu6, (_a(0, 6, 3, -1, 7),)),
    Row("log1mexp", "jvp", jax.nn.log1mexp, (_a(0.3, 2, np.log(2), 40),)),
    Row("_softmax", "_softmax_jvp", jax.nn.softmax, (_a(1, 2, -INF, 0.5),), softmax_flag=True),
    Row("logaddexp", "_logaddexp_jvp", jax.nn.softplus, (_a(0, -40, 40, INF, -INF),)),
    # jax.numpy
    Row("logaddexp", "_logaddexp_jvp", jnp.logaddexp, (_a(0, 1, INF, -INF, -INF, 2), _a(0, 3, 1, -INF, 2, INF))),
    Row("logaddexp2", "_logaddexp2_jvp", jnp.logaddexp2, (_a(0, 1, INF, -INF, -INF), _a(0, 3, 1, -INF, 2))),
    Row("_i0", "_i0_jvp", jnp.i0, (_a(0, 1.5, -2),)),
    Row("_frexp", "_frexp_jvp", lambda x: jnp.frexp(x)[0], (_a(0, 3.5, -0.7, 1024),)),
    Row("_sinc_maclaurin", "_sinc_maclaurin_jvp", jnp.sinc, (_a(0, 0.5, -1.3),)),
    # jax.scipy.special, and jax.scipy.stats through them
    Row("xlogy", "_xlogy_jvp", jss.xlogy, (_a(0, 0, 1.5, 2), _a(0, 2, 0.5, 0))),
    Row("xlog1py", "_xlog1py_jvp", jss.xlog1py, (_a(0, 0, 1.5, 2), _a(-1, 1, 0.5, -1))),
    Row("_xlogx", "_xlogx_jvp", jss.entr, (_a(0, 0.5, 2),)),
    Row("log_ndtr", "_log_ndtr_jvp", jss.log_ndtr, (_a(-40, -5, 0, 3, 10),)),
    Row("log_ndtr", "_log_ndtr_jvp", jax.scipy.stats.norm.logcdf, (_a(-45, 0.5),)),
    Row("xlogy", "_xlogy_jvp", lambda k, mu: jax.scipy.stats.poisson.logpmf(k, mu), (_a(0, 2, 3), _a(0.0, 0.5, 2))),
    Row("logit", "jvp", jss.logit, (_a(0.3, 0.5, 0, 1),)),
    Row("zeta", "jvp", jss.zeta, (_a(2, 3.5, 1.5, 6), _a(1, 0.5, 2, 10)), rtol=1e-9),
    Row("poch", "jvp", jss.poch, (_a(1.5, 2, 0.5, 3), _a(0, 1.2, -0.3, 0))),
    # calls closing over coefficient tables (num_consts > 0), which the rules call again with them
    Row("_erfcx", "jvp", jss.erfcx, (_a(0, 0.5, -2, 30),), live=True),
    Row("_dawsn", "jvp", jss.dawsn, (_a(0, 1, -3, 50),), live=True),
    Row("_wofz", "jvp", jss.wofz, (np.array([0.5 + 0.2j, -1 + 2j, 3 - 0.5j]),), live=True),
    Row("_owens_t_impl", "_owens_t_jvp", jss.owens_t, (_a(0.5, 0, 2), _a(0.3, 1, -0.7)), live=True),
    Row("fresnel", "_fresnel_jvp", lambda x: jnp.stack(jss.fresnel(x)), (_a(0, 0.5, 3, 1e3),), live=True),
    # JAX's text of these does not parse (nested jaxprs closing over coefficient tables)
    Row("expi", "expi_jvp", jss.expi, (_a(-2, 0.5, 3),), stand_in=lambda x: x),
    Row("sici", "sici_jvp", lambda x: jnp.stack(jss.sici(x)), (_a(0.0, 0.5, 3),), stand_in=lambda x: (x, x),
        rtol=1e-9),
    # expn's order n: folded into the call's body (a Python int) or the call's const (traced); the rule calls
    # expn(n - 1, x). Scalars only: JAX vmaps these functions' while loops with a batched predicate
    # (`while` whose cond returns bool[n]), which eqjax does not read
    Row("expn", "expn_jvp", lambda x: jss.expn(3, x), (_s(0.0),)),  # E_3(0) = 1/2, E_3'(0) = -E_2(0) = -1
    Row("expn", "expn_jvp", lambda x: jss.expn(3, x), (_s(0.5),)),
    Row("expn", "expn_jvp", lambda x: jss.expn(1, x), (_s(2.0),)),  # E_0(x) = exp(-x) / x
    Row("expn", "expn_jvp", jss.expn, (_s(2.0), _s(0.5))),
    # d/da, d/db (d/dc) are series, d/dx the function again on a + 1, b + 1 (c + 1)
    Row("hyp1f1", "jvp", jss.hyp1f1, (_s(0.5), _s(1.5), _s(0.3))),
    Row("hyp1f1", "jvp", jss.hyp1f1, (_s(0.5), _s(1.5), _s(120.0))),  # the asymptotic expansion
    Row("hyp1f1", "jvp", jss.hyp1f1, (_s(0.0), _s(1.5), _s(0.3))),  # a = 0: 1F1 = 1
    Row("hyp2f1", "jvp", jss.hyp2f1, (_s(0.5), _s(1.5), _s(2.5), _s(0.3))),
    Row("hyp2f1", "jvp", jss.hyp2f1, (_s(0.5), _s(1.5), _s(2.5), _s(-0.6))),
    # jnp.linalg
    Row("_slogdet_lu", "_slogdet_jvp", lambda a: jnp.linalg.slogdet(a)[1], (SPD3,)),
    Row("_slogdet_qr", "_slogdet_jvp", lambda a: jnp.linalg.slogdet(a, method="qr")[1], (M4,)),
    Row("_slogdet_small", "_slogdet_small_jvp", lambda a: jnp.linalg.slogdet(a)[1], (SPD3[:2, :2] * [[1], [-1]],)),
    Row("_slogdet_small", "_slogdet_small_jvp", lambda a: jnp.linalg.slogdet(a)[1], (np.array([[-0.5]]),)),
    Row("_det", "_det_jvp", jnp.linalg.det, (M4,)),
    Row("_det", "_det_jvp", jnp.linalg.det, (RANK3,)),
    Row("_det", "_det_jvp", jnp.linalg.det, (RANK2,)),
    Row("_pinv", "_pinv_jvp", jnp.linalg.pinv, (SPD3[:, :2],)),
    Row("_pinv", "_pinv_jvp", jnp.linalg.pinv, (SPD3[:2, :],)),
    Row("_pinv", "_pinv_jvp", lambda a: jnp.linalg.pinv(a, hermitian=True), (SPD3,)),
    # a rank-deficient matrix: JAX's rtol cut-off drops the zero singular value, and the rule follows it
    Row("_pinv", "_pinv_jvp", jnp.linalg.pinv, (np.array([[1.0, 2], [2, 4], [0, 0]]),), rtol=1e-8),
]


def _jax(row: Row):
    """JAX's configuration for the row (x64; softmax's custom JVP flag)."""
    from contextlib import ExitStack

    stack = ExitStack()
    stack.enter_context(jax.enable_x64(True))
    stack.enter_context(jax.softmax_custom_jvp(row.softmax_flag))
    return stack


def _weighted_sum(row: Row, np_like) -> Callable:
    """sum(w * f(x)), with weights that differ per output element made in the program (iota), since the
    text does not hold a constant array's values."""
    def f(*xs):
        y = row.fn(*xs) if np_like is jnp else _stand_in_call(row)(*xs)
        y = np_like.stack(y) if isinstance(y, tuple) else y
        return np_like.sum(y * (0.5 + 0.25 * np_like.arange(y.size, dtype=y.dtype).reshape(y.shape)))
    return f


def _stand_in_call(row: Row) -> Callable:
    return lambda *xs: jax_rules.stage_call(row.call, row.rule, row.stand_in, *xs)


def _program(row: Row, fn_of) -> ClosedJaxpr:
    """The row's program (`fn_of(np_like)`): JAX's, printed and read back, or eqjax's stand-in call."""
    if row.stand_in is not None:
        return make_jaxpr(fn_of(inp))(*row.args)
    with _jax(row):
        traced = jax.make_jaxpr(fn_of(jnp))(*row.args)
    assert (row.call, row.rule) in _calls(str(traced)), _calls(str(traced))
    return from_jax.convert(traced) if row.live else parse_jaxpr(str(traced))


def _calls(text: str) -> set[tuple[str, str]]:
    """(name, jvp) of every custom_jvp_call in the printed program."""
    out = set()
    for m in re.finditer(r"custom_jvp_call\[\n(\s*)name=(\S+)\n", text):
        rule = re.compile(rf"\n{m.group(1)}jvp=(\S+)\n").search(text, m.end())
        out.add((m.group(2), rule.group(1)))
    return out


def _outputs(closed: ClosedJaxpr, keep: range) -> ClosedJaxpr:
    """`closed` computing only the outputs `keep` (the equations they need)."""
    jaxpr = closed.jaxpr
    outs = [jaxpr.outvars[i] for i in keep]
    needed = {id(v) for v in outs if isinstance(v, Var)}
    eqns = []
    for e in reversed(jaxpr.eqns):
        if any(id(v) in needed for v in e.outvars):
            eqns.append(e)
            needed |= {id(x) for x in e.invars if isinstance(x, Var)}
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, outs, eqns[::-1]), closed.consts)


@pytest.fixture(autouse=True)
def _no_user_rules():
    with custom_rules.scoped():
        yield


def _ids(rows):
    return [f"{r.id}-{i}" for i, r in enumerate(rows)]


# Forward mode: every row nightly; under `ci` the first row of each rule (every rule keeps a row and its
# first row's special points); a rule's further rows (other special points, other JAX entry points to the same
# rule) run nightly.
FORWARD_ROWS = ci_share(ROWS, keep_every=None, by=lambda row: row.id)


@pytest.mark.parametrize("row", FORWARD_ROWS, ids=_ids(FORWARD_ROWS))
def test_forward_mode_agrees_with_jax(row: Row):
    """Tangents only: a call's primal output is its body's value, not the rule's."""
    closed = _program(row, lambda np_like: row.fn if np_like is jnp else _stand_in_call(row))
    tangents = tuple(np.random.default_rng(0).uniform(0.5, 1.5, np.shape(a)).astype(np.asarray(a).dtype)
                     for a in row.args)  # a complex input gets a complex tangent (of zero imaginary part)
    program, _ = jvp_program(closed, list(range(len(row.args))))
    n_out = len(closed.jaxpr.outvars)
    got = eval_jaxpr(_outputs(program, range(n_out, 2 * n_out)), *row.args, *tangents)
    with _jax(row):
        _, want = jax.jvp(row.fn, row.args, tangents)
    got = np.stack(got) if isinstance(want, tuple) or np.ndim(want) > np.ndim(got[0]) else got[0]
    np.testing.assert_allclose(got, np.asarray(want), rtol=row.rtol, atol=1e-12)


# Reverse mode transposes the rule's program by the same machinery for every rule: under `ci`, one rule of each
# module's kinds (elementwise, two operands, staged Maclaurin calls, a series, the linear-algebra solves), on the
# rule's first row as in forward mode (11 rows, where all rows of those rules were 20); every row nightly.
CI_REVERSE = {"relu/jvp", "logaddexp/_logaddexp_jvp", "xlog1py/_xlog1py_jvp", "_sinc_maclaurin/_sinc_maclaurin_jvp",
              "log_ndtr/_log_ndtr_jvp", "poch/jvp", "expn/expn_jvp", "expi/expi_jvp", "_slogdet_lu/_slogdet_jvp",
              "_det/_det_jvp", "_pinv/_pinv_jvp"}
REVERSE_ROWS = [r for r in FORWARD_ROWS if NIGHTLY or r.id in CI_REVERSE]


@pytest.mark.parametrize("row", REVERSE_ROWS, ids=_ids(REVERSE_ROWS))
def test_reverse_mode_agrees_with_jax(row: Row):
    """The gradient of a weighted sum: the rule's tangent map transposed."""
    argnums = tuple(range(len(row.args)))
    program, _ = grad_program(_program(row, lambda np_like: _weighted_sum(row, np_like)), list(argnums))
    got = eval_jaxpr(program, *row.args)
    with _jax(row):
        wants = jax.grad(_weighted_sum(row, jnp), argnums)(*row.args)
    for g, want in zip(got, wants, strict=True):
        np.testing.assert_allclose(g, np.asarray(want), rtol=row.rtol, atol=1e-12)


# --- second order: JAX differentiates the rule again (sinc's rule calls _sinc_maclaurin(k + 1)) ------------

SECOND_ORDER = [
    Row("_sinc_maclaurin", "_sinc_maclaurin_jvp", jnp.sinc, (_a(0, 0.7),)),  # -pi^2/3 at 0; the body's is 0
    Row("relu", "jvp", jax.nn.relu, (_a(0, -1, 2),)),
    Row("logaddexp", "_logaddexp_jvp", jax.nn.softplus, (_a(0, -30, 30, INF),)),
    Row("xlog1py", "_xlog1py_jvp", lambda y: jss.xlog1py(0.5, y), (_a(-0.5, 0, 3),)),
]


@pytest.mark.parametrize("row", SECOND_ORDER, ids=_ids(SECOND_ORDER))
def test_second_derivative_agrees_with_jax(row: Row):
    """f'' of an elementwise f: the gradient of sum(grad(sum f)), both through eqjax's e-graph."""
    with _jax(row):
        text = str(jax.make_jaxpr(lambda x: jnp.sum(row.fn(x)))(*row.args))
        want = jax.grad(lambda x: jnp.sum(jax.grad(lambda y: jnp.sum(row.fn(y)))(x)))(*row.args)
    assert (row.call, row.rule) in _calls(text)
    first, _ = grad_program(parse_jaxpr(text), [0])
    second, _ = grad_program(make_jaxpr(lambda x: inp.sum(bind_jaxpr(first, x)[0]))(*row.args), [0])
    np.testing.assert_allclose(eval_jaxpr(second, *row.args)[0], np.asarray(want), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n_traced", [False, True], ids=["n_folded", "n_const"])
def test_expn_second_derivative_is_the_order_two_below(n_traced: bool):
    """E_n'' = E_{n-2}: expn's rule calls expn(n - 1, x), whose rule calls expn(n - 2, x). JAX's own second
    derivative of expn raises (its jitted rule meets n as a tracer), so JAX's E_1 is the reference."""
    n, x = _s(3.0), _s(0.7)
    with jax.enable_x64(True):
        closed = parse_jaxpr(str(jax.make_jaxpr(jss.expn if n_traced else lambda x: jss.expn(3, x))(
            *((n, x) if n_traced else (x,)))))
        want = jss.expn(1, x)
    args = (n, x) if n_traced else (x,)
    first, _ = grad_program(closed, [len(args) - 1])
    second, _ = grad_program(make_jaxpr(lambda *xs: bind_jaxpr(first, *xs)[0])(*args), [len(args) - 1])
    np.testing.assert_allclose(eval_jaxpr(second, *args)[0], np.asarray(want), rtol=1e-10)


@pytest.mark.parametrize("call", ["hyp1f1", "hyp2f1"])
def test_hypergeometric_series_stop_per_element(call: str):
    """The a, b (c) derivative series on arrays, which JAX sums per element (under jnp.vectorize). JAX's
    programs of arrays are not read yet (their `while` has a batched predicate), so the call is eqjax's
    stand-in, with x's tangent 0 (its d/dx calls the stand-in body); the elements need few and many terms."""
    a, b, c, x = _a(0.5, 2.0, 0.1), _a(1.5, 3.0, 1.2), _a(2.5, 4.0, 3.0), _a(0.01, 0.3, -0.8)
    args = (a, b, x) if call == "hyp1f1" else (a, b, c, x)
    closed = make_jaxpr(lambda *xs: jax_rules.stage_call(call, "jvp", lambda *vs: sum(vs), *xs))(*args)
    tangents = tuple(_a(0.6, 0.8, 1.1) for _ in args[:-1]) + (np.zeros(3),)
    program, _ = jvp_program(closed, list(range(len(args))))
    got = eval_jaxpr(program, *args, *tangents)[1]
    with jax.enable_x64(True):
        _, want = jax.jvp(getattr(jss, call), args, tangents)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-12)


# --- the rules JAX prints that are not written: a typed error naming them -------------------------------------

def test_a_rule_not_written_raises_naming_it(monkeypatch):
    """A call whose JAX rule is listed unwritten (here a made-up one) is not differentiated through its body."""
    monkeypatch.setitem(jax_rules.UNWRITTEN, ("my_fn", "my_jvp"), "a reason")
    closed = make_jaxpr(lambda x: jax_rules.stage_call("my_fn", "my_jvp", lambda v: v * 2, x))(_a(0.5))
    with pytest.raises(UnsupportedPrimitive, match=r"my_jvp \(of my_fn\): a reason"):
        jvp_program(closed, [0])


# --- the registry -----------------------------------------------------------------------------------------------


def test_every_rule_is_written_and_has_a_row():
    assert set(jax_rules.all_rules()) == {(r.call, r.rule) for r in ROWS}
    assert jax_rules.unwritten_rules() == {}


def test_the_rule_name_alone_does_not_pick_a_rule():
    """`jvp` is the name of every rule JAX's `defjvps` makes: a call of another name keeps its body."""
    closed = make_jaxpr(lambda x: jax_rules.stage_call("my_relu", "jvp", lambda v: inp.maximum(v, 0.0), x))(_a(0.0))
    assert custom_rules.jvp_rule(closed.jaxpr.eqns[0]) is None
    program, _ = jvp_program(closed, [0])
    np.testing.assert_allclose(eval_jaxpr(program, _a(0.0), _a(1.0))[1], [0.5])  # max's derivative at a tie


def test_a_registered_rule_wins_and_defaults_are_not_listed():
    with jax.enable_x64(True):
        closed = parse_jaxpr(str(jax.make_jaxpr(jax.nn.relu)(_a(0.0, 1.0))))
    assert custom_rules.registered() == []
    custom_rules.defjvp(lambda primals, tangents: (inp.maximum(primals[0], 0.0), 3.0 * tangents[0]), name="jvp")
    program, _ = jvp_program(closed, [0])
    np.testing.assert_allclose(eval_jaxpr(program, _a(0.0, 1.0), _a(1.0, 1.0))[1], [3.0, 3.0])


def test_import_ir_does_not_load_the_rules():
    code = "import sys, ir; ir.parse_jaxpr; assert 'transforms.ad.jax_rules' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
