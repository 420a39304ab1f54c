"""JAX's live jaxpr objects (`jax.core.ClosedJaxpr`, `Jaxpr`, `JaxprEqn`, `Var`, `Literal`) as `ir.core` objects.

The result is the program `parse_jaxpr(str(closed))` gives (the text route), built from the objects:

- avals: shape and dtype (`dtypes.BY_NAME[str(dtype)]`, so `key<fry>` and float0 too); weak types are not
  kept, as the text does not print them;
- variables map one to one within a jaxpr; JAX's `DropVar` is `ir.core.DropVar`; a literal is a NumPy scalar
  of its dtype;
- top-level constants keep their values (key constants as their uint32 key data); nested jaxprs keep theirs
  (the text cannot hold those, the objects can);
- one ir `ClosedJaxpr` per JAX `Jaxpr` object, so a sub-jaxpr JAX shares (printed once as a `let`) is
  shared here too;
- params as `ir.jax_convert.params` describes; primitives eqjax does not have raise `UnsupportedPrimitive`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ir import dtypes
from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.errors import JaxprTypeError, UnsupportedPrimitive
from ir.jax_convert.params import convert_value, printed_params
from ir.text.eqn_rules import complete_params


def aval_of(jax_aval: Any) -> ShapedArray:
    dtype = dtypes.BY_NAME.get(str(getattr(jax_aval, "dtype", None)))
    if dtype is None or not hasattr(jax_aval, "shape"):
        raise JaxprTypeError(f"JAX value of type {jax_aval} has no eqjax aval (arrays of eqjax's dtypes only)")
    return ShapedArray(tuple(int(d) for d in jax_aval.shape), dtype)


def array_value(value: Any, aval: ShapedArray) -> np.ndarray:
    """A constant's value as eqjax holds it (threefry keys as their two uint32 words)."""
    if aval.dtype.kind == "key":
        import jax

        value = jax.random.key_data(value)
    return np.asarray(value, dtype=aval.dtype.numpy)


class Converter:
    """One conversion: JAX jaxpr objects to ir ones, each JAX object converted once."""

    def __init__(self):
        self._done: dict[int, tuple[Any, ClosedJaxpr]] = {}  # id(JAX object) -> (object, ir program)

    def closed(self, closed: Any, top: bool = False) -> ClosedJaxpr:
        """A JAX ClosedJaxpr (or an open Jaxpr, which has no constants) as an ir ClosedJaxpr. In the `top`
        level jaxpr, results nobody reads are DropVars (JAX prints them `_` there: `core._dropvars`)."""
        from jax._src import core

        jaxpr, consts = (closed.jaxpr, closed.consts) if isinstance(closed, core.ClosedJaxpr) else (closed, [])
        key = id(jaxpr) if not consts else id(closed)
        hit = self._done.get(key)
        if hit is not None:
            return hit[1]
        out = self._jaxpr(jaxpr, consts, _unread(jaxpr) if top else set())
        self._done[key] = (closed, out)
        return out

    def _jaxpr(self, jaxpr: Any, consts: list, unread: set) -> ClosedJaxpr:
        from jax._src import core

        env: dict[Any, Var] = {}

        def bind(v) -> Var | DropVar:
            if isinstance(v, core.DropVar) or v in unread:
                return DropVar(aval_of(v.aval))
            out = env[v] = Var(aval_of(v.aval))
            return out

        def read(v) -> Var | Literal:
            if isinstance(v, core.Literal):
                aval = aval_of(v.aval)
                if aval.shape:
                    raise JaxprTypeError(f"a JAX literal of shape {aval} (eqjax literals are scalars)")
                return Literal(array_value(v.val, aval)[()], aval)
            return env[v]

        constvars = [bind(v) for v in jaxpr.constvars]
        invars = [bind(v) for v in jaxpr.invars]
        eqns = []
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            params = self.params(eqn)  # before binding: a sub-jaxpr may not see this equation's results
            outs = [bind(v) for v in eqn.outvars]
            eqns.append(Eqn(eqn.primitive.name, ins, outs, complete_params(eqn.primitive.name, params, outs)))
        outvars = [read(v) for v in jaxpr.outvars]
        values = [array_value(c, v.aval) for c, v in zip(consts, constvars, strict=True)]
        return ClosedJaxpr(Jaxpr(constvars, invars, outvars, eqns), values)

    def params(self, eqn: Any) -> dict[str, Any]:
        from ir.primitives import PRIMITIVES, _load_rules

        name = eqn.primitive.name
        _load_rules()
        if name not in PRIMITIVES:
            raise UnsupportedPrimitive(name, "eqjax counterpart (JAX in)", "ir/shapes")
        printed = printed_params(eqn.primitive, dict(eqn.params))
        return {k: convert_value(v, k, self.closed) for k, v in printed.items()}


def _unread(jaxpr: Any) -> set:
    """The equation results of `jaxpr` that no later equation and no output reads."""
    from jax._src import core

    used = {v for v in jaxpr.outvars if not isinstance(v, core.Literal)}
    unread = set()
    for eqn in reversed(jaxpr.eqns):
        unread.update(v for v in eqn.outvars if not isinstance(v, core.DropVar) and v not in used)
        used.update(v for v in eqn.invars if not isinstance(v, core.Literal))
    return unread


def convert(closed: Any) -> ClosedJaxpr:
    """A live `jax.core.ClosedJaxpr` (what `jax.make_jaxpr(f)(*args)` returns) as an `ir.ClosedJaxpr`,
    type checked."""
    from jax._src import core

    if not isinstance(closed, (core.ClosedJaxpr, core.Jaxpr)):
        raise TypeError(f"convert expects a jax.core.ClosedJaxpr, got {type(closed).__name__}")
    from ir.typecheck import typecheck

    program = Converter().closed(closed, top=True)
    typecheck(program)
    return program
