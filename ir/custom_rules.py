"""Custom derivative rules, by the names a jaxpr prints for them.

A `custom_jvp_call` prints its JVP rule as a name (`jvp=_newton_sqrt_jvp`), a `custom_vjp_call` its
forward and backward functions (`fwd=_clip_gradient_fwd bwd=_clip_gradient_bwd`): Python functions that
the jaxpr text does not hold. Registering functions under those names gives AD the rules JAX uses.
Without them, AD differentiates a `custom_jvp_call`'s body, and a `custom_vjp_call` has no reverse mode
(`UnsupportedPrimitive` naming its bwd).

JAX's own rules (jax.nn, jax.numpy, jax.scipy, jnp.linalg) are there by default, keyed by the call's
name and its rule's name (`transforms.ad.jax_rules`); `registered()` lists only the rules registered here.

Rules are written with the tracing API (`ir.lax`, `ir.numpy`) and have JAX's signatures:

    jvp(primals, tangents) -> (primal_out, tangent_out)
    fwd(*primals)          -> (primal_out, residuals)
    bwd(residuals, cotangent_out) -> one cotangent per primal (None for zero)

`primals` are the call's operands after its `num_consts` (arguments JAX treats as non-differentiable,
`nondiff_argnums`, are not operands: close over them; a JVP rule that calls the function again gets the
consts from `call_consts()`); an output is one array, or a tuple when the call has several results;
residuals are any pytree of arrays. Each rule is traced into a jaxpr when AD meets the call
(`jvp_program`, `fwd_program`, `bwd_program`), so AD and the algebra see ordinary equations.
`custom_jvp` and `custom_vjp` are JAX's decorators for the tracing API: calling the function stages out
the call and registers its rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ir.core import ClosedJaxpr, Eqn, ShapedArray
from ir.params import Symbol
from ir.tracing import aval_of, bind, hoist_consts, trace_flat
from ir.tree import tree_flatten, tree_unflatten


@dataclass(frozen=True)
class CustomVJP:
    fwd: Callable
    bwd: Callable


_JVP: dict[str, Callable] = {}
_VJP: dict[tuple[str, str], CustomVJP] = {}


def defjvp(jvp: Callable, name: str | None = None) -> Callable:
    """Register `jvp` as the rule a `custom_jvp_call` names `jvp=<name>` (default: the function's name)."""
    _JVP[name or jvp.__name__] = jvp
    return jvp


def defvjp(fwd: Callable, bwd: Callable, fwd_name: str | None = None, bwd_name: str | None = None) -> None:
    """Register the rules a `custom_vjp_call` names `fwd=<fwd_name> bwd=<bwd_name>`."""
    _VJP[(fwd_name or fwd.__name__, bwd_name or bwd.__name__)] = CustomVJP(fwd, bwd)


@contextmanager
def scoped() -> Iterator[None]:
    """Rules registered inside the block are forgotten when it ends."""
    saved_jvp, saved_vjp = dict(_JVP), dict(_VJP)
    try:
        yield
    finally:
        _JVP.clear()
        _JVP.update(saved_jvp)
        _VJP.clear()
        _VJP.update(saved_vjp)


def registered() -> list[tuple[str, str]]:
    """(kind, printed names) of every rule registered from outside eqjax, sorted: ("jvp", "f_jvp"),
    ("vjp", "f_fwd f_bwd"). Rules eqjax's own modules register (`ir.nn`, `ir.scipy`: defined in its source,
    which the disk cache's key covers) are not listed."""
    return sorted([("jvp", name) for name, rule in _JVP.items() if not _eqjax_own(rule)]
                  + [("vjp", f"{f} {b}") for (f, b), rule in _VJP.items() if not _eqjax_own(rule.fwd, rule.bwd)])


_EQJAX_PACKAGES = ("ir", "eval", "rewrites", "transforms")


def _eqjax_own(*functions: Callable) -> bool:
    return all(getattr(f, "__module__", "").split(".")[0] in _EQJAX_PACKAGES for f in functions)


def jvp_rule(eqn: Eqn) -> Callable | None:
    """The registered JVP rule of a `custom_jvp_call`, else JAX's own rule for the call when it is one of
    jax.nn's, jax.numpy's or jax.scipy's (`transforms.ad.jax_rules`, loaded on the first look-up), or None.
    A registered rule wins over JAX's."""
    rule = _JVP.get(str(eqn.params.get("jvp")))
    if rule is None:
        from transforms.ad.jax_rules import jax_jvp_rule

        rule = jax_jvp_rule(eqn)
    return rule


def vjp_rules(eqn: Eqn) -> CustomVJP | None:
    """The registered fwd/bwd of a `custom_vjp_call` (or the older `custom_vjp_call_jaxpr`), or None."""
    fwd = eqn.params.get("fwd", eqn.params.get("fwd_jaxpr_thunk"))
    return _VJP.get((str(fwd), str(eqn.params.get("bwd"))))


# --- the rules as jaxprs --------------------------------------------------------------------------


_CONSTS: list[tuple] = []  # the consts of the calls whose JVP rules are being traced, innermost last


def call_consts() -> tuple:
    """The consts of the call whose JVP rule is being traced (`jvp_program`): tracers, empty when it has none."""
    if not _CONSTS:
        raise RuntimeError("call_consts() is only defined while jvp_program traces a rule")
    return _CONSTS[-1]


def _primal_avals(eqn: Eqn) -> list[ShapedArray]:
    return [x.aval for x in eqn.invars[eqn.params.get("num_consts", 0):]]


def _leaves(value, n: int, what: str, eqn: Eqn) -> list:
    """A rule's `what`, which must be `n` arrays: one array, or a tuple/list of `n`."""
    leaves = list(value) if isinstance(value, (tuple, list)) else [value]
    if len(leaves) != n:
        raise TypeError(f"{eqn.primitive} {eqn.params.get('name')}: the rule's {what} has {len(leaves)} "
                        f"arrays, expected {n}")
    return leaves


def _check_avals(closed: ClosedJaxpr, positions: range, expected: list[ShapedArray], what: str, eqn: Eqn) -> None:
    for k, want in zip(positions, expected, strict=True):
        got = closed.jaxpr.outvars[k].aval
        if (got.shape, got.dtype) != (want.shape, want.dtype):
            raise TypeError(f"{eqn.primitive} {eqn.params.get('name')}: the rule's {what} {k - positions.start} "
                            f"is {got}, expected {want}")


def jvp_program(eqn: Eqn) -> ClosedJaxpr:
    """The registered JVP rule of `eqn` as a jaxpr: (consts..., primals..., tangents...) -> (outs..., tangent
    outs...). The rule sees the primals and tangents; the call's consts (the arrays its body closes over) are
    `call_consts()` while it runs, for a rule that calls the function again (JAX's, `transforms.ad.jax_rules`)."""
    rule = jvp_rule(eqn)
    avals, n_out = _primal_avals(eqn), len(eqn.outvars)
    const_avals = [x.aval for x in eqn.invars[:eqn.params.get("num_consts", 0)]]

    def flat(*xs):
        consts, xs = xs[:len(const_avals)], xs[len(const_avals):]
        _CONSTS.append(consts)
        try:
            primal_out, tangent_out = rule(tuple(xs[:len(avals)]), tuple(xs[len(avals):]))
        finally:
            _CONSTS.pop()
        return _leaves(primal_out, n_out, "primal output", eqn) + _leaves(tangent_out, n_out, "tangent output", eqn)

    closed, _ = trace_flat(flat, const_avals + avals + avals)
    outs = [v.aval for v in eqn.outvars]
    _check_avals(closed, range(n_out, 2 * n_out), outs, "tangent output", eqn)
    return closed


def fwd_program(eqn: Eqn) -> tuple[ClosedJaxpr, object]:
    """The registered fwd of `eqn` as a jaxpr: primals -> (outs..., residual leaves...), and the
    residuals' tree structure (for `bwd_program`)."""
    fwd, n_out, trees = vjp_rules(eqn).fwd, len(eqn.outvars), []

    def flat(*xs):
        out, residuals = fwd(*xs)
        leaves, tree = tree_flatten(residuals)
        trees.append(tree)
        return _leaves(out, n_out, "primal output", eqn) + leaves

    closed, _ = trace_flat(flat, _primal_avals(eqn))
    return closed, trees[0]


def bwd_program(eqn: Eqn, residual_avals: list[ShapedArray], residual_tree) -> ClosedJaxpr:
    """The registered bwd of `eqn` as a jaxpr: (residual leaves..., output cotangents...) -> one cotangent
    per primal (zeros where bwd returns None)."""
    from ir import lax

    bwd, avals, n_res = vjp_rules(eqn).bwd, _primal_avals(eqn), len(residual_avals)
    outs = [v.aval for v in eqn.outvars]

    def flat(*xs):
        residuals = tree_unflatten(residual_tree, list(xs[:n_res]))
        cts = list(xs[n_res:])
        result = bwd(residuals, cts[0] if len(cts) == 1 else tuple(cts))
        result = _leaves(result, len(avals), "cotangents", eqn)
        return [lax.full(a.shape, 0, a.dtype) if r is None else r for r, a in zip(result, avals, strict=True)]

    closed, _ = trace_flat(flat, residual_avals + outs)
    _check_avals(closed, range(len(avals)), avals, "cotangent", eqn)
    return closed


# --- JAX's decorators for the tracing API -------------------------------------------------------


class custom_jvp:  # noqa: N801  (JAX's name)
    """`@custom_jvp def f(x): ...` then `@f.defjvp def f_jvp(primals, tangents): ...`: calling `f` in a
    trace stages out one `custom_jvp_call` naming `f_jvp`, which is registered."""

    def __init__(self, fun: Callable):
        self.fun, self.jvp = fun, None

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = defjvp(jvp)
        return jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise TypeError(f"custom_jvp {self.fun.__name__} has no rule: call .defjvp first")
        return _call("custom_jvp_call", self.fun, args, jvp=Symbol(self.jvp.__name__))


class custom_vjp:  # noqa: N801  (JAX's name)
    """`@custom_vjp def f(x): ...` then `f.defvjp(f_fwd, f_bwd)`: calling `f` in a trace stages out one
    `custom_vjp_call` naming both, which are registered."""

    def __init__(self, fun: Callable):
        self.fun, self.rules = fun, None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        defvjp(fwd, bwd)
        self.rules = (fwd, bwd)

    def __call__(self, *args):
        if self.rules is None:
            raise TypeError(f"custom_vjp {self.fun.__name__} has no rules: call .defvjp first")
        fwd, bwd = self.rules
        return _call("custom_vjp_call", self.fun, args, bwd=Symbol(bwd.__name__), fwd=Symbol(fwd.__name__))


def _call(primitive: str, fun: Callable, args: tuple, **names):
    closed, out_tree = trace_flat(fun, [aval_of(a) for a in args])
    body, consts = hoist_consts(closed)
    outs = bind(primitive, *consts, *args, name=Symbol(fun.__name__), call_jaxpr=body,
                num_consts=len(consts), symbolic_zeros=False, **names)
    return tree_unflatten(out_tree, outs)
