"""Structural equality of two ir programs, for comparing the live JAX route with the text route; flax parameters."""

from __future__ import annotations

from typing import Any

import numpy as np

from ir.core import ClosedJaxpr, DropVar, Literal, Var
from ir.params import Record


def difference(a: ClosedJaxpr, b: ClosedJaxpr) -> str | None:
    """None when `a` and `b` are the same program (binders, avals, literals, primitives, params of the same
    types and values, nested programs, constants), else where they first differ."""
    return _Compare().closed(a, b, "program")


class _Compare:
    def __init__(self):
        self.seen: set[tuple[int, int]] = set()

    def closed(self, a: ClosedJaxpr, b: ClosedJaxpr, where: str) -> str | None:
        if (id(a), id(b)) in self.seen:
            return None
        self.seen.add((id(a), id(b)))
        ja, jb = a.jaxpr, b.jaxpr
        env: dict[int, int] = {}
        for what in ("constvars", "invars"):
            va, vb = getattr(ja, what), getattr(jb, what)
            if len(va) != len(vb):
                return f"{where}: {len(va)} vs {len(vb)} {what}"
            for x, y in zip(va, vb, strict=True):
                problem = self.binder(x, y, env, f"{where} {what}")
                if problem:
                    return problem
        if len(a.consts) != len(b.consts):
            return f"{where}: {len(a.consts)} vs {len(b.consts)} consts"
        for i, (x, y) in enumerate(zip(a.consts, b.consts, strict=True)):
            x, y = np.asarray(x), np.asarray(y)
            if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return f"{where}: const {i} differs"
        if len(ja.eqns) != len(jb.eqns):
            return f"{where}: {len(ja.eqns)} vs {len(jb.eqns)} equations"
        for k, (ea, eb) in enumerate(zip(ja.eqns, jb.eqns, strict=True)):
            at = f"{where} eqn {k} ({ea.primitive})"
            if ea.primitive != eb.primitive:
                return f"{at}: primitive {ea.primitive} vs {eb.primitive}"
            problem = (self.atoms(ea.invars, eb.invars, env, at) or self.params(ea.params, eb.params, at))
            if problem:
                return problem
            if len(ea.outvars) != len(eb.outvars):
                return f"{at}: {len(ea.outvars)} vs {len(eb.outvars)} results"
            for x, y in zip(ea.outvars, eb.outvars, strict=True):
                problem = self.binder(x, y, env, at)
                if problem:
                    return problem
        return self.atoms(ja.outvars, jb.outvars, env, f"{where} outputs")

    def binder(self, x, y, env: dict[int, int], where: str) -> str | None:
        if type(x) is not type(y):
            return f"{where}: binder {x!r} vs {y!r}"
        if (x.aval.shape, x.aval.dtype, x.aval.weak_type) != (y.aval.shape, y.aval.dtype, y.aval.weak_type):
            return f"{where}: aval {x.aval} vs {y.aval}"
        if isinstance(x, Var):
            env[id(x)] = id(y)
        return None

    def atoms(self, xs, ys, env: dict[int, int], where: str) -> str | None:
        if len(xs) != len(ys):
            return f"{where}: {len(xs)} vs {len(ys)} operands"
        for x, y in zip(xs, ys, strict=True):
            if type(x) is not type(y):
                return f"{where}: operand {x!r} vs {y!r}"
            if isinstance(x, Literal):
                vx, vy = np.asarray(x.value), np.asarray(y.value)
                if x.aval != y.aval or vx.dtype != vy.dtype or vx.tobytes() != vy.tobytes():
                    return f"{where}: literal {x!r} vs {y!r}"
            elif env.get(id(x)) != id(y):
                return f"{where}: operand {x!r} is not {y!r}"
        return None

    def params(self, pa: dict, pb: dict, where: str) -> str | None:
        if sorted(pa) != sorted(pb):
            return f"{where}: params {sorted(pa)} vs {sorted(pb)}"
        for k in pa:
            problem = self.value(pa[k], pb[k], f"{where} param {k}")
            if problem:
                return problem
        return None

    def value(self, x: Any, y: Any, where: str) -> str | None:
        if type(x) is not type(y):
            return f"{where}: {type(x).__name__} {x!r} vs {type(y).__name__} {y!r}"
        if isinstance(x, ClosedJaxpr):
            return self.closed(x, y, where)
        if isinstance(x, (tuple, list)):
            if len(x) != len(y):
                return f"{where}: {x!r} vs {y!r}"
            return next((p for p in (self.value(u, v, where) for u, v in zip(x, y, strict=True)) if p), None)
        if isinstance(x, Record):
            if x.type_name != y.type_name or [k for k, _ in x.fields] != [k for k, _ in y.fields]:
                return f"{where}: {x!r} vs {y!r}"
            return next((p for p in (self.value(u, v, f"{where}.{k}")
                                     for (k, u), (_, v) in zip(x.fields, y.fields, strict=True)) if p), None)
        if isinstance(x, float) and np.isnan(x) and np.isnan(y):
            return None
        same = x == y
        if not isinstance(same, bool) or not same or repr(x) != repr(y):
            return f"{where}: {x!r} vs {y!r}"
        return None


__all__ = ["difference", "DropVar"]


def random_params(model, x):
    """Parameters of a flax model as NumPy arrays of its shapes: `model.init` would compile XLA code (seconds)."""
    import jax

    shapes = jax.eval_shape(model.init, jax.random.PRNGKey(0), x)
    rng = np.random.default_rng(1)
    return jax.tree_util.tree_map(lambda s: rng.normal(size=s.shape) / np.sqrt(s.shape[0]), shapes)
