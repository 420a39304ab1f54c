"""AD of control flow built in the e-graph (transforms/ad/control.py): JVP of scan, while and cond, VJP of
scan and cond, against central differences and the transpose identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩, then the
control_flow oracle family against JAX."""

from __future__ import annotations

import numpy as np
import pytest

from ir import lax
from ir import numpy as jnp
from tests.transforms.ad_helpers import Dom, Spec, assert_oracle, check_fd, jvp_eval, program_of, spec_test


def _rnn(h0, xs, w):
    """A tanh recurrence: carry h, consts w, xs rows, ys the per-step sums."""
    def step(h, x):
        h = jnp.tanh(h * w + x)
        return h, jnp.sum(h * h)
    return lax.scan(step, h0, xs)


def _reverse_two_carries(a, xs):
    def step(carry, x):
        s, p = carry
        return (s + jnp.sin(x) * p, p * 0.9 + x), s * x
    return lax.scan(step, (a, a * 2.0), xs, reverse=True)


def _nested(xs):
    def outer(c, row):
        inner, _ = lax.scan(lambda d, x: (d * jnp.cos(x) + x, None), c, row)
        return inner, inner * c
    return lax.scan(outer, jnp.sum(xs[0]), xs)


def _cond_in_scan(xs):
    def step(c, x):
        c = lax.cond(x > 0.0, lambda u: u * x + 1.0, lambda u: jnp.sin(u) - x, c)
        return c, c
    return lax.scan(step, 0.5, xs)


def _newton_sqrt(a):
    """A fixed-count while loop (JVP only: JAX has no reverse mode for while)."""
    def body(state):
        i, y = state
        return i + 1, 0.5 * (y + a / y)
    return lax.while_loop(lambda s: s[0] < 6, body, (0, a))[1]


def _switch(i, x):
    return lax.switch(i, [lambda v: jnp.exp(v), lambda v: v * v, lambda v: jnp.sin(v) * 3.0], x)


def _fori(x):
    return lax.fori_loop(0, 4, lambda i, y: y * jnp.cos(y) + 0.1, x)


SPECS = [
    Spec("scan-rnn", _rnn, [Dom((3,)), Dom((5, 3)), Dom((3,))]),
    Spec("scan-reverse-two-carries", _reverse_two_carries, [Dom(()), Dom((4,))]),
    Spec("scan-nested", _nested, [Dom((3, 4), -1, 1)]),
    Spec("scan-with-cond", _cond_in_scan, [Dom((6,))]),
    Spec("switch", _switch, [Dom((), values=(0, 1, 2, 5), dtype="int32"), Dom((3,))]),
    Spec("fori-static", _fori, [Dom((3,), -1, 1)]),
]
test_spec = spec_test(SPECS)


@pytest.mark.parametrize("seed", range(2))
def test_while_jvp_matches_central_differences(seed):
    spec = Spec("while-newton", _newton_sqrt, [Dom((3,), 0.5, 4.0)])
    args = spec.draw(seed)
    check_fd(program_of(spec, args), args, seed)


def test_the_while_tangent_is_carried_by_the_loop():
    """d sqrt(a) = da / (2 sqrt a): Newton's iteration carries the tangent to the same fixed point."""
    a = np.array([0.5, 2.0, 9.0])
    closed = program_of(Spec("w", _newton_sqrt, [Dom((3,))]), [a])
    [tangent] = jvp_eval(closed, [a], [np.ones(3)])
    np.testing.assert_allclose(tangent, 0.5 / np.sqrt(a), rtol=1e-10)


def test_scan_vjp_is_one_forward_and_one_backward_scan():
    from ir import make_jaxpr
    from transforms.ad.build import float_positions
    from transforms.ad.programs import vjp_program

    args = SPECS[0].draw(0)
    closed = make_jaxpr(_rnn)(*args)
    program, _ = vjp_program(closed, float_positions(closed.jaxpr.invars))
    scans = [e for e in program.jaxpr.eqns if e.primitive == "scan"]
    assert len(scans) == 2 and scans[0].params["reverse"] != scans[1].params["reverse"]


# The cases with control flow (the family's custom_jvp, nn and jit cases are covered elsewhere).
CONTROL = {"scan", "while", "cond", "optimization_barrier", "custom_vjp_call"}


def test_control_flow_oracle():
    outcomes = assert_oracle("control_flow", ("jvp", "vjp"), stride=1,
                             select=lambda case: CONTROL & set(case.primitives))
    skipped = {o.case for o in outcomes if o.status == "skipped"}
    assert skipped <= {"custom_vjp/user_defined/f64[3,4]"}, skipped


JIT_IN_SCAN = """{ lambda ; a:f64[] b:f64[3]. let
    c:f64[] d:f64[3] = scan[
      _split_transpose=False
      jaxpr={ lambda ; e:f64[] f:f64[]. let
          g:f64[] = jit[
            name=inner
            jaxpr={ lambda ; h:f64[]. let i:f64[] = sin h in (i,) }
          ] f
          j:f64[] = mul e g
        in (j, g) }
      length=3
      linear=(False, False)
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a b
  in (c, d) }"""


def test_a_call_inside_a_loop_body_is_differentiated_and_batched():
    """AD and batching walk loop bodies equation by equation: the calls inside are inlined there too."""
    from eval.interpreter import eval_jaxpr
    from ir.text import parse_jaxpr
    from tests.transforms.ad_helpers import check_transpose
    from tests.transforms.vmap_helpers import assert_same, batched_program
    from transforms.batching.verify import Config, loop_reference

    closed = parse_jaxpr(JIT_IN_SCAN)
    args = [np.float64(1.5), np.array([0.3, -0.7, 1.1])]
    check_fd(closed, args)
    check_transpose(closed, args)
    config = Config((0, 1), (0, 0), 4)
    batched = [np.linspace(0.5, 1.5, 4), np.outer(args[1], np.arange(1.0, 5.0))]
    got = eval_jaxpr(batched_program(closed, config), *batched)
    for j, (g, w) in enumerate(zip(got, loop_reference(closed, batched, config), strict=True)):
        assert_same(g, w, f"output {j}")


def test_the_derivative_does_not_rewrite_across_a_barrier():
    """d/dx [barrier(x) - x] is 1 - 1 = 0, but the algebra may not see through the barrier: the gradient
    program keeps one, and its value is still 0."""
    from eval.interpreter import eval_jaxpr
    from ir import make_jaxpr
    from transforms.ad.programs import grad_program

    def f(x):
        [y] = lax.optimization_barrier([x])
        return jnp.sum(y - x)

    closed = make_jaxpr(f)(np.ones(3))
    program, _ = grad_program(closed, [0])
    assert any(e.primitive == "optimization_barrier" for e in program.jaxpr.eqns)
    np.testing.assert_array_equal(eval_jaxpr(program, np.arange(3.0))[0], np.zeros(3))


def test_custom_linear_solve_follows_the_implicit_rule():
    """jnp.linalg.solve/inv stop gradients through the LU factors: only the implicit rule
    dx = S(db - dA x) gives JAX's derivatives (differentiating the solve jaxpr alone gives dA-derivatives 0)."""
    from transforms.checks import register_checks

    register_checks()
    outcomes = assert_oracle("linalg", ("jvp", "vjp", "vmap"), select=lambda c: "custom_linear_solve" in c.primitives,
                             stride=1)
    assert outcomes and all(o.status == "passed" for o in outcomes), [o for o in outcomes if o.status != "passed"]
