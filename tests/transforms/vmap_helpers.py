"""Shared checks for batching rule tests: vmap of a spec row's program against a loop over slices.

    Spec("sin", lambda x: lax.sin(x), [Dom((3, 4), -3, 3)])       # the AD spec rows serve here too
    check_config(spec, Config((None, 1), (0,), 3), seed)          # one batching configuration
    test_axes, test_random = vmap_spec_tests(SPECS)                # every axis position, and hypothesis

The reference stacks the unbatched program applied to each slice (`loop_reference`); batched programs
are built without algebraic rules (the rules under test alone), cached per configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
from tests.profile import NIGHTLY, ci_share
from tests.transforms.ad_helpers import Spec
from transforms.batching.programs import vmap_program
from transforms.batching.verify import Config, difference, loop_reference

RAW = Options(rules="none")
SIZES = (0, 1, 3)


_PROGRAMS: dict = {}


def batched_program(closed: ClosedJaxpr, config: Config, options: Options = RAW) -> ClosedJaxpr:
    key = (fingerprint(closed), config, options)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = vmap_program(closed, list(config.in_axes), list(config.out_axes), config.size, options)[0]
    return _PROGRAMS[key]


def draw_batched(spec: Spec, config: Config, rng: np.random.Generator) -> tuple[list, list]:
    """(batched args, unbatched example args): a mapped arg stacks `size` fresh draws at its axis."""
    example = [d.draw(rng) for d in spec.domains]
    args = []
    for d, x, axis in zip(spec.domains, example, config.in_axes, strict=True):
        if axis is None:
            args.append(x)
            continue
        slices = [d.draw(rng) for _ in range(config.size)]
        stacked = np.stack(slices) if slices else np.zeros((0, *x.shape), x.dtype)
        args.append(np.moveaxis(stacked, 0, axis))
    return args, example


def assert_same(got, want, what: str) -> None:
    problem = difference(got, want)
    assert problem is None, f"{what}: {problem}"


def check_config(spec: Spec, config: Config, seed: int = 0, options: Options = RAW) -> None:
    rng = np.random.default_rng(seed)
    args, example = draw_batched(spec, config, rng)
    closed = make_jaxpr(spec.fn)(*example)
    program = batched_program(closed, config, options)
    with np.errstate(all="ignore"):
        got = eval_jaxpr(program, *args, check=True)
        want = loop_reference(closed, args, config)
    assert len(got) == len(want)
    for j, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_same(g, w, f"{spec.name} {config}: output {j}")


def axis_configs(spec: Spec) -> list[Config]:
    """Every batch-axis position of every operand (the others unbatched), then all operands batched at
    their last position; batch sizes rotate through 0, 1 and 3, output axes through the positions."""
    ranks = [len(d.shape) for d in spec.domains]
    out_ranks = _out_ranks(spec)
    chosen = [tuple(a if k == i else None for k in range(len(ranks))) for i, r in enumerate(ranks)
              for a in range(r + 1)]
    if len(ranks) > 1:
        chosen.append(tuple(ranks))
    while len(chosen) < len(SIZES):  # every row sees every batch size, 0 and 1 included
        chosen.append(chosen[len(chosen) % len(chosen)])
    return [Config(axes, tuple(n % (r + 1) for r in out_ranks), SIZES[n % len(SIZES)])
            for n, axes in enumerate(chosen)]


def _out_ranks(spec: Spec) -> list[int]:
    example = [d.draw(np.random.default_rng(0)) for d in spec.domains]
    return [a.ndim for a in make_jaxpr(spec.fn)(*example).out_avals]


@st.composite
def configs(draw, spec: Spec) -> Config:
    """A random configuration: each operand unbatched or at any axis (negative ones too), at least one
    batched; any output axis; batch size 0 to 4."""
    ranks = [len(d.shape) for d in spec.domains]
    axes = [draw(st.one_of(st.none(), st.integers(-(r + 1), r))) for r in ranks]
    if all(a is None for a in axes):
        k = draw(st.integers(0, len(ranks) - 1))
        axes[k] = draw(st.integers(-(ranks[k] + 1), ranks[k]))
    outs = tuple(draw(st.integers(-(r + 1), r)) for r in _out_ranks(spec))
    return Config(tuple(axes), outs, draw(st.integers(0, 4)))


# Each configuration builds a program through egglog (~0.08 s): `ci` runs 2 random ones per row (the
# axis test covers every position), `nightly` 100.
RANDOM_EXAMPLES = settings(max_examples=max(2, settings.default.max_examples // 50), deadline=None)


# The axis test runs every configuration of `axis_configs` nightly; under `ci` every second one, the rows
# alternating between the even and the odd ones (each ~0.1 s through egglog; the random test adds two).
AXES_STRIDE = 1 if NIGHTLY else 2


def vmap_spec_tests(specs: Sequence[Spec]) -> tuple[Callable, Callable]:
    """The two tests of a module's spec table: the axis positions of each row (deterministic, see
    `AXES_STRIDE`), and random configurations under hypothesis."""
    cases = [(s, c) for k, s in enumerate(specs) for c in axis_configs(s)[k % AXES_STRIDE::AXES_STRIDE]]

    @pytest.mark.parametrize("spec, config", cases, ids=[f"{s.name}-{c}" for s, c in cases])
    def test_axes(spec, config):
        check_config(spec, config)

    @pytest.mark.parametrize("spec", specs, ids=lambda s: s.name)
    @RANDOM_EXAMPLES
    @given(data=st.data(), seed=st.integers(0, 2**31 - 1))
    def test_random(spec, data, seed):
        check_config(spec, data.draw(configs(spec)), seed)

    return test_axes, test_random


ORACLE_STRIDE = 2  # under `ci` (`ci_share`); every case nightly


def primitive_set(case) -> tuple[str, ...]:
    return tuple(sorted(case.primitives))


def assert_oracle(family: str, checks: Sequence[str] = ("vmap",), select: Callable = lambda case: True,
                  stride: int | None = None, one_per: Callable | None = None) -> list:
    """Runs the family's oracle batching checks (under `ci` every `stride`-th case, or with `one_per` the first
    case of each `one_per(case)` group; nightly all); fails listing every failure."""
    from transforms.checks import register_checks

    register_checks()
    cases = [c for c in load_fixtures([ORACLE], [family]) if select(c)]
    cases = ci_share(cases, None, by=one_per) if one_per else ci_share(cases, stride or ORACLE_STRIDE)
    outcomes = run_conformance(cases, list(checks))
    failed = [f"{o.check} {o.case}: {o.reason}" for o in outcomes if o.status == "failed"]
    assert not failed, "\n".join(failed)
    return outcomes
