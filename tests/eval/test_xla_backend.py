"""The XLA backend (eval/xla.py): every oracle case, rebuilt with JAX's own primitives, runs under `jax.jit`
to JAX's outputs and prints back as the text it came from; optimized, gradient and batched programs agree
with the interpreter; custom rules, keys and unsupported primitives cross as documented; and the core works
without JAX installed.

Cases that cannot round-trip are listed in `TEXT_GAPS` / `VALUE_GAPS` (a case id, or `primitive:NAME` for
every case using it, with the reason); the oracle tests assert that exactly those fail, so a case that starts
passing forces its entry out. Today both are empty: every case round-trips, text and values.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from eval.oracle import compare_lists, decode_array, load_fixtures, mismatch, parse_case
from ir.errors import JaxprTypeError, UnsupportedPrimitive
from ir.text import parse_jaxpr, parse_jaxpr_untyped
from tests.oracle_paths import ORACLE

ROOT = Path(__file__).resolve().parents[2]
CUSTOM_RULES = ROOT / "tests" / "oracle_custom_rules.py"

# XLA compiles at backend optimization level 0 here: a third less compile time, and these tests are about
# the rebuild (primitives and params), not about XLA's optimizer.
COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}

# Cases that cannot round-trip, by case id or "primitive:NAME" (every case using it) -> the reason. The tests
# assert that exactly these fail. Both are empty: every oracle case prints back and computes JAX's outputs.
TEXT_GAPS: dict[str, str] = {}  # make_jaxpr of the rebuild does not print the case's text
VALUE_GAPS: dict[str, str] = {}  # jax.jit of the rebuild does not compute the case's outputs

CASES = load_fixtures([ORACLE])
BY_ID = {c.id: c for c in CASES}
FAMILIES = sorted({c.family for c in CASES})


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax", reason="the XLA backend needs the jax extra")


@pytest.fixture(scope="module")
def xla(jax):
    import eval.xla

    return eval.xla


def _gap(gaps: dict[str, str], case) -> str | None:
    keys = [case.id, *(f"primitive:{p}" for p in case.primitives)]
    return next((gaps[k] for k in keys if k in gaps), None)


def _expected_failures(gaps: dict[str, str], cases, problems: dict[str, str]) -> list[str]:
    """What contradicts `gaps`: a case that fails unlisted, or a listed case that passes."""
    wrong = []
    for case in cases:
        reason, problem = _gap(gaps, case), problems.get(case.id)
        if reason is None and problem:
            wrong.append(f"{case.id}: {problem}")
        elif reason is not None and not problem:
            wrong.append(f"{case.id} now round-trips: remove its entry from the gap list ({reason})")
    return wrong


def _attempt(fn) -> str | None:
    try:
        with np.errstate(all="ignore"):
            return fn()
    except Exception as e:  # a case that raises fails; whether that was expected is the gap list's business
        return f"{type(e).__name__}: {e}"


def test_the_gap_lists_name_existing_cases():
    known = set(BY_ID) | {f"primitive:{p}" for c in CASES for p in c.primitives}
    assert not (set(TEXT_GAPS) | set(VALUE_GAPS)) - known


@pytest.mark.parametrize("case_id", sorted(BY_ID))
def test_oracle_case_prints_back(jax, xla, case_id):
    """`str(jax.make_jaxpr(to_jax(closed))(*args))` is the case's jaxpr text."""
    case = BY_ID[case_id]

    def problem():
        text = str(jax.make_jaxpr(xla.to_jax(parse_case(case)))(*case.arrays("args")))
        return None if text == case.jaxpr_text else f"printed\n{text}\ninstead of\n{case.jaxpr_text}"

    wrong = _expected_failures(TEXT_GAPS, [case], {case.id: _attempt(problem)})
    assert not wrong, wrong[0]


def _value_problem(outs, case) -> str | None:
    outs, want = [np.asarray(o) for o in outs], case.arrays("out")
    if len(outs) != len(want):
        return f"{len(outs)} outputs, expected {len(want)}"
    return next((f"out[{i}]: {m}" for i, (g, w) in enumerate(zip(outs, want, strict=True))
                 if (m := mismatch(g, w, case.rtol, case.atol))), None)


@pytest.mark.parametrize("family", FAMILIES)
def test_oracle_family_computes_jax_outputs(jax, xla, family):
    """`jax.jit(to_jax(closed))(*args)` gives each case's outputs (dtype, shape, the case's tolerances). One
    jit runs a whole family, each case on its own arguments: one XLA compile instead of one per case (each
    costs ~40 ms of fixed overhead); if it fails, each case is compiled alone to say which."""
    cases = [c for c in CASES if c.family == family]
    fns, problems = {}, {}
    for case in cases:
        if (p := _attempt(lambda case=case: fns.setdefault(case.id, xla.to_jax(parse_case(case))) and None)):
            problems[case.id] = p
    ready = [c for c in cases if c.id in fns]
    args = [c.arrays("args") for c in ready]

    def run_all(argss):
        return [fns[c.id](*a) for c, a in zip(ready, argss, strict=True)]

    try:
        with np.errstate(all="ignore"):
            results = jax.jit(run_all, compiler_options=COMPILER_OPTIONS)(args)
    except Exception:
        results = None
    for k, case in enumerate(ready):
        if results is not None:
            problem = _attempt(lambda k=k, case=case: _value_problem(results[k], case))
        else:
            problem = _attempt(lambda k=k, case=case: _value_problem(
                jax.jit(fns[case.id], compiler_options=COMPILER_OPTIONS)(*args[k]), case))
        if problem:
            problems[case.id] = problem
    wrong = _expected_failures(VALUE_GAPS, cases, problems)
    assert not wrong, "\n".join(wrong)


# --- programs eqjax made: optimized, differentiated, batched --------------------------------------------------


def _agrees_with_interpreter(jax, xla, closed, args, rtol=1e-9, atol=1e-9):
    want = eval_jaxpr(closed, *args)
    got = [np.asarray(o) for o in jax.jit(xla.to_jax(closed))(*args)]
    compare_lists("xla vs interpreter", got, want, rtol, atol)
    return got


@pytest.mark.parametrize("case_id", ["program/layernorm", "program/cond_piecewise", "program/checkpoint_mlp"])
def test_optimized_program(jax, xla, case_id):
    from rewrites.engine import optimize

    case = BY_ID[case_id]
    better, _ = optimize(parse_case(case))
    got = _agrees_with_interpreter(jax, xla, better, case.arrays("args"))
    compare_lists("xla vs JAX", got, case.arrays("out"), case.rtol, case.atol)


@pytest.mark.parametrize("case_id", ["program/mlp_tanh", "program/rnn_scan", "program/cond_piecewise"])
def test_gradient_program(jax, xla, case_id):
    from transforms.ad.programs import grad_program

    case = BY_ID[case_id]
    argnums = case.raw["grad"]["argnums"]
    program, _ = grad_program(parse_case(case), argnums)
    got = _agrees_with_interpreter(jax, xla, program, case.arrays("args"))
    want = [decode_array(a) for a in case.raw["grad"]["out"]]
    compare_lists("xla vs jax.grad", got, want, case.rtol, case.atol)


@pytest.mark.parametrize("case_id", ["program/mlp_tanh", "program/rnn_scan", "program/cond_piecewise"])
def test_batched_program(jax, xla, case_id):
    from transforms.batching.programs import vmap_program

    case = BY_ID[case_id]
    spec = case.raw["vmap"]
    program, _ = vmap_program(parse_case(case), spec["in_axes"], 0, size=3)
    args = [decode_array(a) for a in spec["args"]]
    got = _agrees_with_interpreter(jax, xla, program, args)
    compare_lists("xla vs jax.vmap", got, [decode_array(a) for a in spec["out"]], case.rtol, case.atol)


def test_traced_grad_and_vmap_programs(jax, xla):
    import ir
    from ir import numpy as jnp
    from transforms import grad, vmap

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    w, x = np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.arange(12.0).reshape(4, 3) / 10
    _agrees_with_interpreter(jax, xla, ir.make_jaxpr(grad(loss))(w, x), (w, x))
    xs = np.arange(24.0).reshape(2, 4, 3) / 10
    _agrees_with_interpreter(jax, xla, ir.make_jaxpr(vmap(loss, in_axes=(None, 0)))(w, xs), (w, xs))


def test_jax_transforms_the_rebuilt_program(jax, xla):
    """The rebuild is made of JAX's primitives, so JAX's own grad and vmap apply to it (here through a scan)."""
    case = BY_ID["program/rnn_scan"]
    fn = xla.to_jax(parse_case(case))
    argnums = tuple(case.raw["grad"]["argnums"])
    grads = jax.jit(jax.grad(lambda *a: fn(*a)[0], argnums))(*case.arrays("args"))
    want = [decode_array(a) for a in case.raw["grad"]["out"]]
    compare_lists("jax.grad", [np.asarray(g) for g in grads], want, case.rtol, case.atol)
    spec = case.raw["vmap"]
    outs = jax.jit(jax.vmap(fn, in_axes=spec["in_axes"]))(*[decode_array(a) for a in spec["args"]])
    compare_lists("jax.vmap", [np.asarray(o) for o in outs], [decode_array(a) for a in spec["out"]],
                  case.rtol, case.atol)


def test_older_names_and_a_primitive_this_jax_has_as_a_function(jax, xla):
    closed = parse_jaxpr("""{ lambda ; a:f64[3] b:f64[3]. let
    c:f64[3] = pjit[name=f jaxpr={ lambda ; d:f64[3]. let e:f64[3] = sin d in (e,) }] a
    f:f64[3] = copy_p c
    g:f64[3] = random_gamma_grad f b
  in (g,) }""")
    args = (np.array([0.5, 1.5, 3.0]), np.array([0.2, 1.0, 2.5]))
    _agrees_with_interpreter(jax, xla, closed, args)
    text = str(jax.make_jaxpr(xla.to_jax(closed))(*args))
    assert "jit[" in text and "copy " in text and "pjit" not in text and "copy_p" not in text


# --- custom rules, keys, errors, cache ---------------------------------------------------------------------------


@pytest.fixture
def _scoped_rules():
    from ir import custom_rules

    with custom_rules.scoped():
        yield


@pytest.mark.usefixtures("_scoped_rules")
def test_custom_vjp_uses_the_registered_rules_or_refuses_reverse_mode(jax, xla):
    case = BY_ID["custom_vjp/user_defined/f64[3,4]"]
    fn, args = xla.to_jax(parse_case(case)), case.arrays("args")
    cts = [decode_array(a) for a in case.raw["vjp"]["cotangents"]]
    with pytest.raises(UnsupportedPrimitive, match="_clip_gradient_bwd"):
        jax.vjp(fn, *args)[1](cts)
    runpy.run_path(str(CUSTOM_RULES))
    got = jax.jit(lambda *a: jax.vjp(fn, *a)[1](cts))(*args)
    want = [decode_array(a) for a in case.raw["vjp"]["arg_cotangents"]]
    compare_lists("vjp", [np.asarray(g) for g in got], want, case.rtol, case.atol)


@pytest.mark.usefixtures("_scoped_rules")
def test_custom_jvp_uses_the_registered_rule(jax, xla):
    case = BY_ID["program/newton_sqrt_while"]
    fn, args = xla.to_jax(parse_case(case)), case.arrays("args")
    runpy.run_path(str(CUSTOM_RULES))
    tangents = [decode_array(t) for t in case.raw["jvp"]["tangents"]]
    _, got = jax.jit(lambda a, t: jax.jvp(fn, (a,), (t,)))(*args, *tangents)
    want = [decode_array(t) for t in case.raw["jvp"]["out_tangents"]]
    compare_lists("jvp", [np.asarray(g) for g in got], want, case.rtol, case.atol)


def test_key_values_cross_as_key_data(jax, xla):
    closed = parse_jaxpr("""{ lambda ; a:key<fry>[] b:u32[]. let
    c:key<fry>[2] = random_split[shape=(2,)] a
    d:key<fry>[2] = random_fold_in c b
    e:u32[2,3] = random_bits[bit_width=32 shape=(3,)] d
  in (d, e) }""")
    args = (np.array([0, 42], np.uint32), np.uint32(7))
    got = [np.asarray(o) for o in jax.jit(xla.to_jax(closed))(*args)]
    want = eval_jaxpr(closed, *args)
    assert [(g.dtype, g.shape) for g in got] == [(np.dtype(np.uint32), (2, 2)), (np.dtype(np.uint32), (2, 3))]
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_a_primitive_jax_lacks_is_unsupported(xla):
    closed = parse_jaxpr_untyped("{ lambda ; a:f64[3]. let b:f64[3] = frobnicate a in (b,) }")
    with pytest.raises(UnsupportedPrimitive, match=r"'frobnicate' has no XLA rebuild rule.*eval/xla\.py"):
        xla.to_jax(closed)


def test_every_eqjax_primitive_has_a_rebuild(xla):
    from ir.primitives import PRIMITIVES, _load_rules

    _load_rules()
    rebuilt = set(xla.jax_primitives()) | set(xla.ALIASES) | set(xla.FUNCTIONS) | set(xla.HIGHER_ORDER)
    assert sorted(set(PRIMITIVES) - rebuilt) == []


def test_arguments_are_checked_and_the_rebuild_is_cached(jax, xla):
    text = "{ lambda ; a:f64[3]. let b:f64[3] = sin a in (b,) }"
    fn = xla.to_jax(parse_jaxpr(text))
    assert xla.to_jax(parse_jaxpr(text)) is fn  # same fingerprint, same function
    with pytest.raises(JaxprTypeError, match="argument 0"):
        fn(np.ones(4))
    assert jax.config.jax_enable_x64


# --- without JAX --------------------------------------------------------------------------------------------------

_WITHOUT_JAX = textwrap.dedent("""
    import importlib.abc
    import sys

    class BlockJax(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in ("jax", "jaxlib"):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
            return None

    sys.meta_path.insert(0, BlockJax())

    import numpy as np

    import eval
    import ir
    import rewrites
    import transforms
    from eval.interpreter import eval_jaxpr
    from eval.xla import BackendUnavailable, to_jax
    from ir import numpy as jnp
    from rewrites.engine import optimize

    closed = ir.make_jaxpr(lambda x: jnp.sum(jnp.sin(x) * 1.0))(np.arange(3.0))
    better, _ = optimize(closed)
    assert np.allclose(eval_jaxpr(better, np.arange(3.0))[0], np.sin(np.arange(3.0)).sum())
    try:
        to_jax(better)
    except BackendUnavailable as e:
        assert "pip install 'eqjax[jax]'" in str(e), e
    else:
        raise AssertionError("to_jax worked without jax")
    assert not [m for m in sys.modules if m.partition(".")[0] in ("jax", "jaxlib")]
    print("ok")
""")


def test_the_core_works_without_jax():
    proc = subprocess.run([sys.executable, "-c", _WITHOUT_JAX], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
