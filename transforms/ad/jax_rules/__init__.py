"""JAX's own custom derivative rules, by the names its jaxprs print, registered by default.

jax.nn, jax.numpy, jax.scipy.special/stats and jnp.linalg define some functions with `custom_jvp`; their
jaxprs print a `custom_jvp_call[name=<function> jvp=<rule>]` whose rule is a Python function the text
does not hold. This package writes each rule again with `ir.lax` / `ir.numpy`, keyed by the pair
(call name, rule name) the text prints: the rule name alone is ambiguous, since every rule made by JAX's
`defjvps` prints as `jvp` (relu, relu6, log1mexp, logit, _erfcx, _dawsn, _wofz, zeta, poch, hyp1f1,
hyp2f1), while `_slogdet_jvp` is shared on purpose (`_slogdet_lu` and `_slogdet_qr`: one rule).

A rule here takes the call's equation first, then JAX's arguments: `rule(eqn, primals, tangents)`. The
equation gives what JAX closes over (`nondiff_argnums`: softmax's axis, sinc's derivative order, pinv's
`hermitian`) and the call itself: JAX's rules compute the primal by calling the function again, which
stages the same `custom_jvp_call` (`call_again`), so a second derivative meets the rule again, as in JAX.

Rules JAX prints that are not written here (`UNWRITTEN`, with the reason) make AD raise
`UnsupportedPrimitive` naming them rather than differentiate the body, whose derivative differs from JAX's.
The modules load when AD first looks a rule up (`jax_jvp_rule`), not on `import ir`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial

from ir.core import ClosedJaxpr, Eqn
from ir.errors import UnsupportedPrimitive
from ir.params import Symbol

JaxRule = Callable[..., tuple]

RULES: dict[tuple[str, str], JaxRule] = {}
UNWRITTEN: dict[tuple[str, str], str] = {}
_MODULES = ("nn", "numpy", "special", "linalg")
_loaded: list[bool] = []


def jax_rule(call: str, rule: str) -> Callable[[JaxRule], JaxRule]:
    """Register `fn(eqn, primals, tangents)` as JAX's rule printed `name=<call> ... jvp=<rule>`."""
    def register(fn: JaxRule) -> JaxRule:
        if (call, rule) in RULES or (call, rule) in UNWRITTEN:
            raise ValueError(f"JAX rule {call}/{rule} is defined twice")
        RULES[(call, rule)] = fn
        return fn
    return register


def unwritten(call: str, rule: str, reason: str) -> None:
    """A rule JAX prints that is not written here: AD raises naming it and `reason`."""
    UNWRITTEN[(call, rule)] = reason


def _load() -> None:
    if not _loaded:
        for name in _MODULES:
            importlib.import_module(f"{__name__}.{name}")
        _loaded.append(True)


def jax_jvp_rule(eqn: Eqn) -> Callable | None:
    """JAX's rule for the `custom_jvp_call` `eqn` as `(primals, tangents) -> (out, tangent out)`, or None
    when the call is not one of JAX's. Raises `UnsupportedPrimitive` for a JAX rule not written here."""
    _load()
    key = (str(eqn.params.get("name")), str(eqn.params.get("jvp")))
    if key in UNWRITTEN:
        raise UnsupportedPrimitive(eqn.primitive, f"JAX's custom JVP rule {key[1]} (of {key[0]}): {UNWRITTEN[key]}; "
                                   "register one with ir.custom_rules.defjvp", "transforms/ad/jax_rules")
    rule = RULES.get(key)
    return None if rule is None else partial(rule, eqn)


def all_rules() -> list[tuple[str, str]]:
    """(call name, rule name) of every JAX rule written here, sorted."""
    _load()
    return sorted(RULES)


def unwritten_rules() -> dict[tuple[str, str], str]:
    """(call name, rule name) -> why, of every JAX rule AD refuses."""
    _load()
    return dict(UNWRITTEN)


# --- helpers the rules share ------------------------------------------------------------------------


def call_again(eqn: Eqn, *primals):
    """The call `eqn` on `primals`, staged as the same `custom_jvp_call` (JAX's rules call the function
    itself for the primal output). One output, or a tuple when the call has several."""
    from ir.custom_rules import call_consts
    from ir.tracing import bind

    outs = bind(eqn.primitive, *call_consts(), *primals, **eqn.params)
    return outs[0] if len(outs) == 1 else tuple(outs)


def stage_call(name: str, rule: str, fun: Callable, *args):
    """Stage `fun(*args)` as `custom_jvp_call[name=<name> jvp=<rule>]`, as a JAX function defined with
    `custom_jvp` does (without registering anything in `ir.custom_rules`): the rule is JAX's, found here."""
    from ir.tracing import aval_of, bind, hoist_consts, trace_flat
    from ir.tree import tree_unflatten

    closed, out_tree = trace_flat(fun, [aval_of(a) for a in args])
    body, consts = hoist_consts(closed)
    outs = bind("custom_jvp_call", *consts, *args, name=Symbol(name), call_jaxpr=body, num_consts=len(consts),
                symbolic_zeros=False, jvp=Symbol(rule))
    return tree_unflatten(out_tree, outs)


def body_eqns(eqn: Eqn):
    """Every equation of the call's body, inside nested calls and jits too."""
    def walk(closed):
        jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
        for e in jaxpr.eqns:
            yield e
            for p in e.params.values():
                if isinstance(p, ClosedJaxpr) or hasattr(p, "eqns"):
                    yield from walk(p)
    return walk(eqn.params["call_jaxpr"])


def defjvps(*per_operand: Callable) -> JaxRule:
    """JAX's `defjvps`: one `(g, ans, *primals) -> tangent` per operand (None: no dependence), summed."""
    def rule(eqn: Eqn, primals, tangents):
        ans = call_again(eqn, *primals)
        parts = [f(t, ans, *primals) for f, t in zip(per_operand, tangents, strict=True) if f is not None]
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return ans, total
    return rule
