"""JAX's own gradient programs run in eqjax: the `grad`, `hessian` and `grad_grad` jaxprs JAX prints for every
oracle program (tests/jax_programs/gradients.json, written by tests/jax_programs/capture.py, and the oracle's
own grad / grad_grad texts) parse, type check and evaluate to JAX's values and the oracle's, generated NumPy
bit for bit as the interpreter; a representative subset keeps them through `optimize`; the XLA rebuild prints
those with the new primitives back; eqjax's AD and vmap go through the primitives only JAX's gradient
programs use (`unstack`, the transpose of `stack`; `empty2`, the placeholder of an unread residual)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.codegen import compile_numpy
from eval.interpreter import eval_jaxpr
from eval.oracle import decode_array, load_fixtures, mismatch
from ir import lax
from ir.core import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var
from ir.dtypes import float64, int32, key_fry
from ir.errors import JaxprTypeError
from ir.text import parse_jaxpr
from ir.tracing import bind
from rewrites import optimize
from tests.jax_programs.capture import DERIVATIVES, EXTRAS, load, oracle_values
from tests.oracle_paths import ORACLE
from tests.transforms.ad_helpers import Dom, Spec, check_spec
from tests.transforms.vmap_helpers import axis_configs, batched_program, check_config
from transforms.ad.programs import grad_program
from transforms.batching.verify import Config, loop_reference

FIXTURE = load()
CAPTURED = {(c["id"], c["derivative"]): c for c in FIXTURE["cases"]}
ORACLE_PROGRAMS = {case.id: case for case in load_fixtures([ORACLE], ("programs",))}


def _arrays(entry: dict, key: str) -> list[np.ndarray]:
    return [decode_array(a) for a in entry[key]]


def _assert_values(got, want, rtol: float, atol: float, what: str) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} values, want {len(want)}"
    problems = [p for p in (mismatch(g, w, rtol, atol) for g, w in zip(got, want, strict=True)) if p]
    assert not problems, f"{what}: {problems}"


# --- the fixture ----------------------------------------------------------------------------------------------


def test_fixture_holds_every_derivative_of_every_oracle_program():
    want = {(case.id, d) for case in ORACLE_PROGRAMS.values() for d in DERIVATIVES if d in case.raw}
    want |= {(case_id, d) for case_id, (_, _, derivatives) in EXTRAS.items() for d in derivatives}
    assert set(CAPTURED) == want
    assert len(CAPTURED) == len(FIXTURE["cases"])
    oracle_file = (ORACLE / "programs.json").read_text()
    assert f'"jax_version": "{FIXTURE["jax_version"]}"' in oracle_file and FIXTURE["x64"] is True


def test_the_extras_are_programs_whose_gradients_unstack():
    for case_id in EXTRAS:
        assert "stack[" in CAPTURED[(case_id, "grad")]["program"]
        assert all("unstack[" in CAPTURED[(case_id, d)]["jaxpr"] for d in EXTRAS[case_id][2])


# --- JAX's printed programs evaluate to JAX's values ----------------------------------------------------------


@pytest.mark.parametrize("key", sorted(CAPTURED), ids=lambda k: f"{k[0]}-{k[1]}")
def test_jax_gradient_program_evaluates_to_jax_values(key):
    entry = CAPTURED[key]
    closed, args = parse_jaxpr(entry["jaxpr"]), _arrays(entry, "args")
    got = eval_jaxpr(closed, *args, check=True)
    _assert_values(got, _arrays(entry, "out"), entry["rtol"], entry["atol"], "JAX's values")
    generated = compile_numpy(closed)(*args)
    assert all(np.array_equal(g, w, equal_nan=True) for g, w in zip(generated, got, strict=True))
    case = ORACLE_PROGRAMS.get(key[0])
    if case is not None:
        _assert_values(got, oracle_values(case, key[1]), case.rtol, case.atol, "the oracle's values")


ORACLE_TEXTS = [(case_id, d) for case_id, case in ORACLE_PROGRAMS.items() for d in ("grad", "grad_grad")
                if d in case.raw]


@pytest.mark.parametrize("key", ORACLE_TEXTS, ids=lambda k: f"{k[0]}-{k[1]}")
def test_oracle_printed_gradient_program_evaluates_to_its_values(key):
    """The grad / grad_grad texts JAX printed for the original Python functions (the oracle's own)."""
    case = ORACLE_PROGRAMS[key[0]]
    args = case.arrays("args")[:1] if key[1] == "grad_grad" else case.arrays("args")
    got = eval_jaxpr(parse_jaxpr(case.raw[key[1]]["jaxpr"]), *args, check=True)
    _assert_values(got, oracle_values(case, key[1]), case.rtol, case.atol, "the oracle's values")


# One of each kind: empty2 at the top level and inside cond branches, unstack (plain and batched by hessian).
OPTIMIZED = [("program/gaussian_loglik_chol", "grad"), ("program/cond_piecewise", "grad_grad"),
             ("extra/stack_features", "grad"), ("extra/stack_scalar", "hessian")]


@pytest.mark.parametrize("key", OPTIMIZED, ids=lambda k: f"{k[0]}-{k[1]}")
def test_optimized_jax_gradient_program_keeps_its_values(key):
    entry = CAPTURED[key]
    closed = parse_jaxpr(entry["jaxpr"])
    better, report = optimize(closed, rules="default")
    assert report.cost_after <= report.cost_before
    got = eval_jaxpr(better, *_arrays(entry, "args"), check=True)
    _assert_values(got, _arrays(entry, "out"), entry["rtol"], entry["atol"], "optimized")


NEW_PRIMITIVES = sorted(k for k, c in CAPTURED.items() if "unstack[" in c["jaxpr"] or "empty2[" in c["jaxpr"])


@pytest.mark.parametrize("key", NEW_PRIMITIVES, ids=lambda k: f"{k[0]}-{k[1]}")
def test_xla_rebuild_prints_jax_gradient_program_back(key):
    jax = pytest.importorskip("jax", reason="the XLA backend needs the jax extra")
    from eval.xla import to_jax

    entry = CAPTURED[key]
    assert str(jax.make_jaxpr(to_jax(parse_jaxpr(entry["jaxpr"])))(*_arrays(entry, "args"))) == entry["jaxpr"]


# --- eqjax differentiates and batches them ------------------------------------------------------------------


@pytest.mark.parametrize("case_id", ["program/cond_piecewise", "extra/stack_scalar"])
def test_eqjax_gradient_of_jax_gradient_program_is_jax_second_derivative(case_id):
    """cond_piecewise's grad has empty2 in its cond branches, stack_scalar's has unstack."""
    grad, second = CAPTURED[(case_id, "grad")], CAPTURED[(case_id, "grad_grad")]
    program, _ = grad_program(parse_jaxpr(grad["jaxpr"]), [0])
    got = eval_jaxpr(program, *_arrays(second, "args"), check=True)
    _assert_values(got, _arrays(second, "out"), second["rtol"], second["atol"], "grad of JAX's grad")


def test_eqjax_vmap_of_jax_gradient_program_with_unstack_is_a_loop():
    entry = CAPTURED[("extra/stack_features", "grad")]
    closed = parse_jaxpr(entry["jaxpr"])
    x, y = _arrays(entry, "args")
    xs = np.stack([x, 2 * x, -x])
    config = Config((0, None), (0, 0), 3)
    got = eval_jaxpr(batched_program(closed, config), xs, y, check=True)
    _assert_values(got, loop_reference(closed, [xs, y], config), 1e-12, 1e-12, "vmap")


# --- unstack and empty2 one by one -------------------------------------------------------------------------


def unstack(x, axis: int) -> tuple:
    return tuple(bind("unstack", x, axis=axis))


UNSTACK_SPECS = [
    Spec("unstack", lambda x: unstack(x, 1), [Dom((3, 4))]),
    Spec("unstack/one-used", lambda x: unstack(x, 0)[1], [Dom((3, 2, 2))]),
    Spec("unstack/restacked", lambda x: lax.stack(unstack(x, 2)[::-1], 0), [Dom((2, 3, 2))]),
]


@pytest.mark.parametrize("spec", UNSTACK_SPECS, ids=lambda s: s.name)
def test_unstack_jvp_matches_differences_and_vjp_is_its_transpose(spec):
    check_spec(spec, seed=0)


VMAP_CASES = [(s, c) for s in UNSTACK_SPECS[::2] for c in axis_configs(s)]


@pytest.mark.parametrize(("spec", "config"), VMAP_CASES, ids=[f"{s.name}-{c}" for s, c in VMAP_CASES])
def test_unstack_vmap_is_a_loop_over_slices(spec, config):
    check_config(spec, config)


def test_unstack_evaluates_and_type_checks():
    x = np.arange(24.0).reshape(2, 3, 4)
    closed = parse_jaxpr("{ lambda ; a:f64[2,3,4]. let b:f64[2,4] c:f64[2,4] d:f64[2,4] = unstack[axis=1] a "
                         "in (b, c, d) }")
    got = eval_jaxpr(closed, x, check=True)
    assert all(np.array_equal(g, x[:, i]) for i, g in enumerate(got))
    with pytest.raises(JaxprTypeError, match="unstack"):
        parse_jaxpr("{ lambda ; a:f64[2,3]. let b:f64[3] c:f64[3] = unstack[axis=2] a in (b, c) }")
    with pytest.raises(JaxprTypeError, match="unstack"):
        parse_jaxpr("{ lambda ; a:f64[2,3]. let b:f64[2] c:f64[2] = unstack[axis=1] a in (b, c) }")


def test_unstack_of_many_results_is_differentiated_and_batched():
    """AD's and batching's variadic rules take any result count: 12 results, against finite differences and a
    loop over slices."""
    spec = Spec("unstack/many", lambda x: unstack(x, 0), [Dom((12,))])
    check_spec(spec, 0)
    check_config(spec, Config((0,), (0,) * 12, 2))


@pytest.mark.parametrize("dtype", [float64, int32, key_fry], ids=lambda d: d.short)
def test_empty2_evaluates_to_xla_zero(dtype):
    out = Var(ShapedArray((), dtype))
    closed = ClosedJaxpr(Jaxpr([], [], [out], [Eqn("empty2", [], [out], {"dtype": dtype, "memory_space": None})]))
    (got,) = eval_jaxpr(closed, check=True)
    want_shape = (2,) if dtype.kind == "key" else ()
    assert got.dtype == dtype.numpy and got.shape == want_shape and not got.any()

