"""Jaxpr → e-graph: every equation becomes a term, bound once with `let`, with its shape and dtype set.

`jit` (and older `pjit`, `closed_call`, `core_call`) bodies are inlined: a call boundary carries no
meaning for NumPy evaluation, and inlining lets rules work across it. Other higher-order primitives
(`custom_jvp_call`, `cond`, `scan`, ...) are held as `call`/`apply` nodes whose jaxpr-valued params
live on the Python side (`Encoding.extras`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from egglog import EGraph, String, Vec, i64, set_

from ir.core import ClosedJaxpr, DropVar, Jaxpr, Literal, ShapedArray
from ir.primitives import get_primitive
from ir.text.printer import value_text
from rewrites.terms import (
    CONSTRUCTORS,
    SPECS,
    Arr,
    apply,
    args_list,
    call,
    default_params,
    dtype_of,
    encode_fields,
    get,
    shape_of,
)

INLINED = frozenset({"jit", "pjit", "closed_call", "core_call"})
_JAXPR_PARAM_KEYS = ("jaxpr", "call_jaxpr")


@dataclass
class Encoding:
    """What the e-graph's leaves and `extra` keys stand for, to decode extracted terms."""

    in_avals: list[ShapedArray]
    consts: list[np.ndarray] = field(default_factory=list)
    const_avals: list[ShapedArray] = field(default_factory=list)
    extras: dict[str, dict] = field(default_factory=dict)
    literal_consts: set[int] = field(default_factory=set)  # consts that stand for a Literal
    outputs: list[Arr] = field(default_factory=list)
    n_eqns: int = 0

    def add_const(self, value: np.ndarray, aval: ShapedArray, literal: bool = False) -> Arr:
        self.consts.append(value)
        self.const_avals.append(aval)
        if literal:
            self.literal_consts.add(len(self.consts) - 1)
        return Arr.const(len(self.consts) - 1)

    def extra_key(self, prim: str, params: dict, in_avals: list | None = None) -> str:
        """"" for the primitive's default params, else their printed text (a numbered key when they
        hold jaxprs, which print long)."""
        if in_avals is not None and params == default_params(prim, in_avals):
            return ""
        if any(_holds_jaxpr(v) for v in params.values()):
            key = f"{prim}#{sum(1 for k in self.extras if k.startswith(prim + '#'))}"
        else:
            key = " ".join(f"{k}={value_text(v)}" for k, v in sorted(params.items()))
        self.extras.setdefault(key, params)
        return key


def _holds_jaxpr(value: Any) -> bool:
    from ir.params import walk_values

    return any(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in walk_values(value))


def literal_term(lit: Literal, enc: Encoding) -> Arr:
    """`Arr.scalar` when the float64 `v` holds the literal exactly and keeps its identity, else a constant."""
    dt = lit.aval.dtype
    if dt.kind in "biuf":
        v = float(lit.value) if dt.kind != "b" else float(bool(lit.value))
        exact = (dt.kind not in "iu" or int(lit.value) == v) and not math.isnan(v)
        if exact and not (v == 0.0 and math.copysign(1.0, v) < 0):
            return Arr.scalar(v, dt.name)
    return enc.add_const(np.asarray(lit.value, dt.numpy), lit.aval, literal=True)


def encode(closed: ClosedJaxpr, egraph: EGraph, enc: Encoding | None = None) -> Encoding:
    """Add `closed` to `egraph`; returns the Encoding whose `outputs` are the program's output terms.

    Passing the Encoding of a program already in `egraph` adds a second program over the same inputs,
    sharing its constant and param tables (so leaves never collide)."""
    jaxpr = closed.jaxpr
    if enc is None:
        enc = Encoding([v.aval for v in jaxpr.invars])
    elif [a.strip_weak() for a in enc.in_avals] != [v.aval.strip_weak() for v in jaxpr.invars]:
        raise ValueError("a program added to an encoding must take the same inputs")
    env: dict[int, Arr] = {}
    facts: list = []
    for v, c in zip(jaxpr.constvars, closed.consts, strict=True):
        env[id(v)] = enc.add_const(np.asarray(c), v.aval)
        facts += aval_facts(env[id(v)], v.aval)
    for k, v in enumerate(jaxpr.invars):
        env[id(v)] = Arr.inp(k)
        facts += aval_facts(env[id(v)], v.aval)
    _encode_eqns(jaxpr, env, enc, egraph, facts)
    enc.outputs = [_atom(x, env, enc) for x in jaxpr.outvars]
    if facts:
        egraph.register(*facts)
    return enc


def _atom(x, env: dict[int, Arr], enc: Encoding) -> Arr:
    return literal_term(x, enc) if isinstance(x, Literal) else env[id(x)]


def _encode_eqns(jaxpr: Jaxpr, env: dict[int, Arr], enc: Encoding, egraph: EGraph, facts: list) -> None:
    for eqn in jaxpr.eqns:
        operands = [_atom(x, env, enc) for x in eqn.invars]
        if eqn.primitive in INLINED:
            inner = next(eqn.params[k] for k in _JAXPR_PARAM_KEYS if k in eqn.params)
            results = _inline(inner, operands, enc, egraph, facts)
        else:
            results = _eqn_terms(eqn.primitive, eqn.params, operands, [x.aval for x in eqn.invars],
                                 len(eqn.outvars), enc)
        for v, term in zip(eqn.outvars, results, strict=True):
            if isinstance(v, DropVar):
                continue
            enc.n_eqns += 1
            bound = egraph.let(f"v{enc.n_eqns}", term)
            env[id(v)] = bound
            facts += aval_facts(bound, v.aval)


def aval_facts(term: Arr, aval: ShapedArray) -> list:
    return [set_(shape_of(term)).to(_shape_vec(aval.shape)), set_(dtype_of(term)).to(String(aval.dtype.name))]


def _inline(inner: ClosedJaxpr, operands: list[Arr], enc: Encoding, egraph: EGraph, facts: list) -> list[Arr]:
    env = {}
    for v, c in zip(inner.jaxpr.constvars, inner.consts, strict=True):
        env[id(v)] = enc.add_const(np.asarray(c), v.aval)
        facts += aval_facts(env[id(v)], v.aval)
    env.update({id(v): t for v, t in zip(inner.jaxpr.invars, operands, strict=True)})
    _encode_eqns(inner.jaxpr, env, enc, egraph, facts)
    return [_atom(x, env, enc) for x in inner.jaxpr.outvars]


def _eqn_terms(prim: str, params: dict, operands: list[Arr], in_avals: list[ShapedArray], n_out: int,
               enc: Encoding) -> list[Arr]:
    if get_primitive(prim).multiple_results if _known(prim) else n_out != 1:
        tup = call(prim, enc.extra_key(prim, params), args_list(operands))
        return [get(tup, i) for i in range(n_out)]
    spec = SPECS.get(prim)
    if spec is not None and spec.arity == len(operands):
        fitted = encode_fields(spec, params)
        if fitted is not None:
            values, rest = fitted
            return [CONSTRUCTORS[prim](*operands, *values, enc.extra_key(prim, rest, in_avals))]
    return [apply(prim, enc.extra_key(prim, params), args_list(operands))]


def _known(prim: str) -> bool:
    from ir.primitives import PRIMITIVES, _load_rules

    _load_rules()
    return prim in PRIMITIVES


def _shape_vec(shape: tuple[int, ...]) -> Vec:
    return Vec[i64](*(i64(d) for d in shape)) if shape else Vec[i64].empty()
