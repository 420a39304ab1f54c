"""Type checking of Jaxprs and their canonical fingerprint.

`typecheck` walks every equation (nested jaxprs included), checks that each operand is bound before
use, checks its params against the primitive's schema (its catalogue row, `ir.primitives`), applies the
primitive's shape/dtype rule and compares the result with the declared binders.
A primitive without a shape rule is refused with `UnsupportedPrimitive` naming it: nothing downstream
could check, evaluate or rewrite it (register a shape rule in `ir/shapes` to add one).
"""

from __future__ import annotations

import hashlib

from ir.core import ClosedJaxpr, DropVar, Jaxpr, Literal, ShapedArray, Var, subjaxprs
from ir.errors import JaxprTypeError, UnsupportedPrimitive
from ir.primitives import SHAPE_RULES, _load_rules, check_params

# Exceptions a shape rule raises on malformed params (a bad axis, a missing key): the equation is
# ill-typed, so they become a JaxprTypeError naming it.
_MALFORMED = (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError, OverflowError)


def typecheck(jaxpr: ClosedJaxpr | Jaxpr) -> None:
    """Raise `JaxprTypeError` naming the first ill-typed equation, `UnsupportedPrimitive` for a primitive
    without a shape rule; return None if well typed."""
    _load_rules()
    if isinstance(jaxpr, ClosedJaxpr):
        for var, const in zip(jaxpr.jaxpr.constvars, jaxpr.consts, strict=True):
            shape = tuple(getattr(const, "shape", ()))
            if var.aval.dtype.kind != "key" and shape != var.aval.shape:
                raise JaxprTypeError("constant does not match its constvar", expected=str(var.aval),
                                     actual=f"array of shape {shape}")
        jaxpr = jaxpr.jaxpr
    _check_jaxpr(jaxpr, seen=set())


def _check_jaxpr(jaxpr: Jaxpr, seen: set[int]) -> None:
    if id(jaxpr) in seen:
        return
    seen.add(id(jaxpr))
    bound: set[int] = set()

    def bind(v, where: str) -> None:
        if isinstance(v, DropVar):
            return
        if not isinstance(v, Var):
            raise JaxprTypeError(f"{where}: binder is not a variable: {v!r}")
        if id(v) in bound:
            raise JaxprTypeError(f"{where}: variable bound twice")
        bound.add(id(v))

    for v in jaxpr.constvars + jaxpr.invars:
        bind(v, "jaxpr inputs")
    for i, eqn in enumerate(jaxpr.eqns):
        for x in eqn.invars:
            if isinstance(x, Var) and id(x) not in bound:
                raise JaxprTypeError("operand used before it is bound", i, eqn.primitive)
            if not isinstance(x, (Var, Literal)):
                raise JaxprTypeError(f"operand is not a variable or literal: {x!r}", i, eqn.primitive)
        rule = SHAPE_RULES.get(eqn.primitive)
        if rule is None:
            raise UnsupportedPrimitive(eqn.primitive, "shape/dtype", "ir/shapes")
        try:
            check_params(eqn.primitive, eqn.params)
        except JaxprTypeError as e:
            raise JaxprTypeError(e.detail, i, eqn.primitive) from None
        for sub in subjaxprs(eqn):
            _check_jaxpr(sub.jaxpr, seen)
        in_avals = [x.aval for x in eqn.invars]
        try:
            out_avals = rule(*in_avals, **eqn.params)
        except JaxprTypeError as e:
            raise JaxprTypeError(e.detail, i, eqn.primitive, e.expected, e.actual) from None
        except _MALFORMED as e:
            raise JaxprTypeError(f"malformed params or operands ({type(e).__name__}: {e})",
                                 i, eqn.primitive) from None
        _check_outvars(i, eqn.primitive, out_avals, [v.aval for v in eqn.outvars])
        for v in eqn.outvars:
            bind(v, f"equation {i} ({eqn.primitive})")
    for x in jaxpr.outvars:
        if isinstance(x, Var) and id(x) not in bound:
            raise JaxprTypeError("jaxpr output is not bound")


def _check_outvars(i: int, prim: str, expected: list[ShapedArray], actual: list[ShapedArray]) -> None:
    if len(expected) != len(actual):
        raise JaxprTypeError(f"{len(actual)} results bound but the primitive returns {len(expected)}",
                             i, prim, [str(a) for a in expected], [str(a) for a in actual])
    for want, got in zip(expected, actual, strict=True):
        if not want.same_type(got):
            raise JaxprTypeError("result type differs from the shape rule", i, prim,
                                 [str(a) for a in expected], [str(a) for a in actual])


def fingerprint(jaxpr: ClosedJaxpr | Jaxpr) -> str:
    """SHA-256 hex digest of the canonical text (JAX's printed format) and the constant values."""
    from ir.text import print_jaxpr

    h = hashlib.sha256(print_jaxpr(jaxpr).encode())
    for c in getattr(jaxpr, "consts", ()):
        arr = c if hasattr(c, "tobytes") else None
        if arr is not None:
            h.update(str(arr.dtype).encode() + str(arr.shape).encode() + arr.tobytes())
    return h.hexdigest()
