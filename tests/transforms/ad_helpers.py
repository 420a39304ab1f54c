"""Shared checks for AD rule tests: a spec row per primitive drives finite-difference and transpose checks.

    Spec("sin", lambda x: lax.sin(x), [Dom((3, 4), -3, 3)])
    check_spec(spec, seed)                 # JVP vs central differences, VJP vs JVP by transposition
    assert_oracle("unary", ("jvp", "vjp")) # the family's oracle cases, no failure allowed
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.interpreter import eval_jaxpr
from eval.oracle import load_fixtures, run_conformance
from ir import make_jaxpr
from ir.core import ClosedJaxpr
from ir.typecheck import fingerprint
from rewrites.options import Options
from tests.oracle_paths import ORACLE
from tests.profile import ci_share
from transforms.ad.build import float_positions
from transforms.ad.programs import jvp_program, vjp_program
from transforms.ad.verify import random_like, transpose_sides


@dataclass(frozen=True)
class Dom:
    """An argument's domain: uniform in [low, high) of `shape` and `dtype`, or `values` drawn from."""

    shape: tuple[int, ...]
    low: float = -2.0
    high: float = 2.0
    dtype: str = "float64"
    values: tuple | None = None  # integer/bool operands: a set to choose from

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        if self.values is not None:
            return np.asarray(rng.choice(np.asarray(self.values), size=self.shape)).astype(self.dtype)
        return rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)


@dataclass(frozen=True)
class Spec:
    """One row of a rule table's test spec: a function (usually one primitive) and its input domains."""

    name: str
    fn: Callable
    domains: Sequence[Dom]
    rtol: float = 1e-6  # for the finite-difference comparison
    eps: float = 1e-6
    transpose_rtol: float = 1e-9  # for the transpose identity (float32 rows need about 1e-6)
    params: dict = field(default_factory=dict)

    def draw(self, seed: int) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [d.draw(rng) for d in self.domains]


def program_of(spec: Spec, args: Sequence[np.ndarray]) -> ClosedJaxpr:
    return make_jaxpr(spec.fn)(*args)


# Derivative programs depend on the program, not on the argument values: hypothesis examples of one
# spec row share them (keyed by the program's fingerprint), so an example costs only NumPy evaluation.
_PROGRAMS: dict = {}


def _cached(kind: str, closed: ClosedJaxpr, build):
    key = (kind, fingerprint(closed))
    if key not in _PROGRAMS:
        _PROGRAMS[key] = build()
    return _PROGRAMS[key]


# Spec rows test the AD rules themselves: their programs are extracted without algebraic rules (3x
# faster to build); the oracle checks run the whole pipeline with the default rules.
RAW = Options(rules="none")


def jvp_eval(closed: ClosedJaxpr, args, tangents, options: Options = RAW) -> list:
    """Output tangents (float outputs) for `tangents` (one per float input)."""
    wrt = float_positions(closed.jaxpr.invars)
    program, _ = _cached(("jvp", options), closed, lambda: jvp_program(closed, wrt, options))
    got = eval_jaxpr(program, *args, *tangents, check=True)
    return got[len(closed.jaxpr.outvars):]


def vjp_eval(closed: ClosedJaxpr, args, cts, options: Options = RAW) -> list:
    """Input cotangents (float inputs) for `cts` (one per float output)."""
    wrt = float_positions(closed.jaxpr.invars)
    outs = float_positions(closed.jaxpr.outvars)
    program, _ = _cached(("vjp", options), closed, lambda: vjp_program(
        closed, wrt, seed="inputs", cotangent_outputs=outs, options=options))
    return eval_jaxpr(program, *args, *cts, check=True)


def check_fd(closed: ClosedJaxpr, args, seed: int = 0, rtol: float = 1e-6, eps: float = 1e-6) -> None:
    """J·u from the JVP program equals the central difference (f(x + εu) - f(x - εu)) / 2ε."""
    rng = np.random.default_rng(seed)
    ins, outs = float_positions(closed.jaxpr.invars), float_positions(closed.jaxpr.outvars)
    u = [random_like(rng, args[i]) for i in ins]
    got = jvp_eval(closed, args, u)

    def at(sign):
        moved = list(args)
        for i, ui in zip(ins, u, strict=True):
            moved[i] = args[i] + sign * eps * ui
        return eval_jaxpr(closed, *moved)

    plus, minus = at(1), at(-1)
    for k, j in enumerate(outs):
        fd = (np.asarray(plus[j], np.complex128) - np.asarray(minus[j], np.complex128)) / (2 * eps)
        scale = max(1.0, float(np.max(np.abs(fd), initial=0.0)))
        np.testing.assert_allclose(np.asarray(got[k], np.complex128), fd, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"JVP vs central differences, output {j}")


def check_transpose(closed: ClosedJaxpr, args, seed: int = 0, rtol: float = 1e-9) -> None:
    """Re⟨v, J u⟩ = Re⟨Jᵀ v, u⟩ with the JVP and VJP programs (see `transforms.ad.verify.transpose_sides`)."""
    lhs, rhs, scale = transpose_sides(closed, args, jvp_eval, vjp_eval, seed)
    assert abs(lhs - rhs) <= rtol * scale, f"<v, Ju> = {lhs} but <J^T v, u> = {rhs}"


def spec_test(specs: Sequence[Spec]):
    """The test of a module's spec table: `test_spec = spec_test(SPECS)` checks every row under
    hypothesis (`SPEC_EXAMPLES` seeds per row)."""

    @pytest.mark.parametrize("spec", specs, ids=lambda s: s.name)
    @SPEC_EXAMPLES
    @given(st.integers(0, 2**31 - 1))
    def test_spec(spec, seed):
        check_spec(spec, seed)

    return test_spec


def check_spec(spec: Spec, seed: int) -> None:
    args = spec.draw(seed)
    closed = program_of(spec, args)
    with np.errstate(all="ignore"):
        check_fd(closed, args, seed, spec.rtol, spec.eps)
        check_transpose(closed, args, seed, spec.transpose_rtol)


# Each oracle case builds its derivative programs through egglog (0.1-0.5 s): the `ci` profile checks
# every third case of a family, `nightly` all of them.
ORACLE_STRIDE = 3  # under `ci` (`ci_share`); every case nightly
# Examples per spec row (a row's derivative programs are built once; examples vary the values) and per
# random-configuration test (each example builds new programs): 5 and 4 under `ci`, 250 and 200 nightly.
SPEC_EXAMPLES = settings(max_examples=max(3, settings.default.max_examples // 20))
CONFIG_EXAMPLES = settings(max_examples=max(3, settings.default.max_examples // 25))


def assert_oracle(family: str, checks: Sequence[str] = ("jvp", "vjp"), select: Callable = lambda case: True,
                  stride: int | None = None) -> list:
    """Runs the family's oracle cases (under `ci` every `stride`-th, default `ORACLE_STRIDE`; nightly all); fails
    listing every failed case. Returns the outcomes, so a test can also assert which were skipped."""
    from transforms.checks import register_checks

    register_checks()
    cases = ci_share([c for c in load_fixtures([ORACLE], [family]) if select(c)], stride or ORACLE_STRIDE)
    outcomes = run_conformance(cases, list(checks))
    failed = [f"{o.check} {o.case}: {o.reason}" for o in outcomes if o.status == "failed"]
    assert not failed, "\n".join(failed)
    return outcomes
