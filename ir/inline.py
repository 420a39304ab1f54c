"""Inlining call-like equations: `jit(f)` inside a program becomes f's equations.

A call boundary means nothing to evaluation, and transforms that walk a program equation by equation
(AD builds one linearization or cotangent node per equation) want one flat list. `CALLS` are the
primitives that only call their body (the catalogue trait "call"); the caller may add others (AD adds
`remat2`, which only changes what is recomputed, and the custom-derivative calls, whose bodies it
differentiates).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var
from ir.primitives import primitives_with

CALLS = frozenset(primitives_with("call"))  # jit, pjit, closed_call, core_call
_BODY_KEYS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def body_of(eqn: Eqn) -> ClosedJaxpr:
    for key in _BODY_KEYS:
        body = eqn.params.get(key)
        if body is not None:
            return body if isinstance(body, ClosedJaxpr) else ClosedJaxpr(body, [])
    raise KeyError(f"{eqn.primitive} has no body param (looked for {', '.join(_BODY_KEYS)})")


LINEAR_SOLVE_FIELDS = ("matvec", "vecmat", "solve", "transpose_solve")  # their consts lead the operands


def linear_solve_operands(const_lengths, operands) -> dict[str, list]:
    """`custom_linear_solve`'s operands by role: the consts of each of its jaxprs (`LINEAR_SOLVE_FIELDS`),
    then "b", the right-hand side's leaves."""
    out, k = {}, 0
    for field in LINEAR_SOLVE_FIELDS:
        n = int(const_lengths.get(field) or 0)
        out[field], k = list(operands[k:k + n]), k + n
    out["b"] = list(operands[k:])
    return out


def called(eqn: Eqn, operands: list) -> tuple[ClosedJaxpr, list]:
    """The body an equation runs and the operands it runs it on: for `custom_linear_solve`, its `solve`
    jaxpr on that jaxpr's consts and b (what JAX's impl runs; the other jaxprs serve JAX's own AD and
    batching rules, which here come from differentiating and batching the solve)."""
    if eqn.primitive != "custom_linear_solve":
        return body_of(eqn), operands
    groups = linear_solve_operands(eqn.params["const_lengths"], operands)
    solve = eqn.params["jaxprs"].solve
    body = solve if isinstance(solve, ClosedJaxpr) else ClosedJaxpr(solve, [])
    return body, groups["solve"] + groups["b"]


def inline_calls(closed: ClosedJaxpr, primitives: Iterable[str] = CALLS,
                 bodies: Callable[[Eqn, list], tuple[ClosedJaxpr, list]] = called,
                 keep: Callable[[Eqn], bool] | None = None, into_bodies: bool = False) -> ClosedJaxpr:
    """`closed` with every equation of `primitives` replaced by its body, recursively; the bodies'
    constants become constants of the result. `bodies(eqn, operands)` gives the body an equation runs
    and its operands (default `called`); equations for which `keep(eqn)` holds stay. With `into_bodies`,
    the jaxpr-valued params of the equations that stay (loop bodies, branches) are inlined the same way,
    so a transform walking those bodies equation by equation meets no call there either."""
    prims = frozenset(primitives)

    def inlined(eqn: Eqn) -> bool:
        return eqn.primitive in prims and not (keep is not None and keep(eqn))

    def inner(body: ClosedJaxpr) -> ClosedJaxpr:
        return inline_calls(body, prims, bodies, keep, True)

    def params_of(eqn: Eqn) -> dict:
        return {k: _map_jaxprs(v, inner) for k, v in eqn.params.items()} if into_bodies else eqn.params

    if not _has_calls(closed.jaxpr, inlined, into_bodies):
        return closed
    constvars, consts = list(closed.jaxpr.constvars), list(closed.consts)
    eqns: list[Eqn] = []
    env: dict[int, Var | Literal] = {}

    def read(x):
        return x if isinstance(x, Literal) else env.get(id(x), x)

    def walk(jaxpr: Jaxpr, inside: bool) -> None:
        for eqn in jaxpr.eqns:
            invars = [read(x) for x in eqn.invars]
            if not inlined(eqn):
                # A body can be called twice (one ClosedJaxpr object in two equations): fresh names.
                outvars = [_fresh(v, env) for v in eqn.outvars] if inside else list(eqn.outvars)
                eqns.append(Eqn(eqn.primitive, invars, outvars, params_of(eqn)))
                continue
            body, invars = bodies(eqn, invars)
            for v, c in zip(body.jaxpr.constvars, body.consts, strict=True):
                fresh = Var(v.aval)
                constvars.append(fresh)
                consts.append(c)
                env[id(v)] = fresh
            for v, x in zip(body.jaxpr.invars, invars, strict=True):
                env[id(v)] = x
            walk(body.jaxpr, True)
            for v, result in zip(eqn.outvars, body.jaxpr.outvars, strict=True):
                if not isinstance(v, DropVar):
                    env[id(v)] = read(result)

    walk(closed.jaxpr, False)
    # An inlined result that is the body's input or a literal leaves the caller's var unbound: rename.
    outvars = [read(x) for x in closed.jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, list(closed.jaxpr.invars), outvars, eqns), consts)


def _fresh(v, env: dict):
    if isinstance(v, DropVar):
        return DropVar(v.aval)
    env[id(v)] = Var(v.aval)
    return env[id(v)]


def _has_calls(jaxpr: Jaxpr, inlined: Callable[[Eqn], bool], into_bodies: bool) -> bool:
    return any(inlined(e) or (into_bodies and any(_has_calls(b.jaxpr, inlined, True)
                                                  for v in e.params.values() for b in _jaxprs_in(v)))
               for e in jaxpr.eqns)


def _jaxprs_in(value) -> list[ClosedJaxpr]:
    """The closed jaxprs a param holds: itself, or the items of a tuple of them (cond's branches)."""
    if isinstance(value, ClosedJaxpr):
        return [value]
    if isinstance(value, tuple) and value and all(isinstance(x, ClosedJaxpr) for x in value):
        return list(value)
    return []


def _map_jaxprs(value, fn: Callable[[ClosedJaxpr], ClosedJaxpr]):
    """`value` (a param) with `fn` applied to each closed jaxpr in it (`_jaxprs_in`)."""
    if isinstance(value, ClosedJaxpr):
        return fn(value)
    return tuple(fn(x) for x in value) if _jaxprs_in(value) else value
