"""Printer of `ir.core` jaxprs in the text JAX 0.10.2 prints (`jax/_src/core.py`, `pp_toplevel_jaxpr`).

JAX's algorithm, reproduced step by step:

- Shared jaxprs: a breadth-first walk over the nested jaxprs counts how often each Jaxpr object is
  reached (the walk does not deduplicate, so everything inside a jaxpr reached twice is reached twice
  too); a nested jaxpr with more than 10 equations counts twice. Jaxprs counted more than once are
  printed first as `let NAME = {...} in` and referred to by NAME. NAME is the `name` param of the
  first equation found holding the jaxpr (`<lambda>` loses its brackets), else `jaxpr`; repeated
  names get a counter suffix (`jaxpr`, `jaxpr1`).
- Variable names: one counter for the whole print, `a`..`z`, `ba`.. (`_encode_digits_alphabetic`),
  skipping shared-jaxpr names; a variable is named when first printed. Unused results of the
  top-level equations print as `_`. A `jit` whose jaxpr is not shared first names its inner inputs
  and outputs after the outer operands and results.
- Layout: the Wadler-style printer of `ir.text.pp` at width 80 (`{ lambda ; ... }` on one line when
  it fits, otherwise one equation per line and params one per line).
- Param values print as Python's `str` (nested values as `repr`); a jaxpr inside a record (such as
  `_LinearSolveTuple`) prints as its own top-level text, with fresh names, as JAX's repr does.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var
from ir.dtypes import DType
from ir.params import NpScalar, Opaque, Record, Symbol
from ir.text import pp
from ir.text.eqn_rules import RULES, printed_params

SHARE_EQNS_ABOVE = 10  # a nested jaxpr with more equations is printed as a shared `let`
# JAX's own param order where it differs from the sorted one and decides which shared jaxpr comes first.
_JAXPR_PARAM_ORDER = {"while": ("cond_nconsts", "cond_jaxpr", "body_nconsts", "body_jaxpr")}
_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def print_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> str:
    """The text JAX prints for this jaxpr (consts are not printed, only their constvars)."""
    return toplevel_doc(jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr).format()


def encode_name(n: int) -> str:
    """0 → a, 25 → z, 26 → ba: base 26 with letters as digits (JAX's `_encode_digits_alphabetic`)."""
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Context:
    def __init__(self, var_names: dict[Var, str]):
        self.var_names: dict[Var, str] = dict(var_names)
        self.shared: dict[Jaxpr, str] = {}
        self._counter = 0

    def name(self, v: Var | DropVar) -> str:
        if isinstance(v, DropVar):
            return "_"
        name = self.var_names.get(v)
        if name is None:
            while True:
                name = encode_name(self._counter)
                self._counter += 1
                if name not in self.shared.values():
                    break
            self.var_names[v] = name
        return name

    def suggest_same_names(self, for_vars: Sequence[Any], like_vars: Sequence[Any]) -> None:
        if len(for_vars) != len(like_vars):
            return
        used: set[int] = set()
        for for_v, like_v in zip(for_vars, like_vars, strict=True):
            if (isinstance(like_v, (Var, DropVar)) and id(like_v) not in used
                    and isinstance(for_v, Var) and for_v not in self.var_names):
                used.add(id(like_v))
                self.var_names[for_v] = self.name(like_v)


def toplevel_doc(top: Jaxpr) -> pp.Doc:
    ctx = _Context(_unused_results(top))
    for name, jaxpr in _shared_jaxprs(top):
        ctx.shared[jaxpr] = name
    docs = [pp.concat([pp.text(f"let {name} = "), _skeleton(jaxpr, ctx), pp.text(" in"), pp.brk()])
            for jaxpr, name in ctx.shared.items()]
    return pp.concat([*docs, _jaxpr_doc(top, ctx)])


def _unused_results(jaxpr: Jaxpr) -> dict[Var, str]:
    """Top-level results nobody reads print as `_` (JAX's `_dropvars`)."""
    names: dict[Var, str] = {}
    used = {id(x) for x in jaxpr.outvars if isinstance(x, Var)}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if isinstance(v, Var) and id(v) not in used:
                names[v] = "_"
        used.update(id(x) for x in eqn.invars if isinstance(x, Var))
    return names


def _jaxprs_in_params(eqn: Eqn) -> list[Jaxpr]:
    """The jaxprs of an equation's params: values and elements of tuple-like values, in JAX's order."""
    order = _JAXPR_PARAM_ORDER.get(eqn.primitive, ())
    keys = [k for k in order if k in eqn.params] + [k for k in eqn.params if k not in order]
    out = []
    for key in keys:
        value = eqn.params[key]
        items = value if isinstance(value, tuple) else (
            [v for _, v in value.fields] if isinstance(value, Record) else [value])
        out += [j.jaxpr if isinstance(j, ClosedJaxpr) else j for j in items if isinstance(j, (Jaxpr, ClosedJaxpr))]
    return out


def _shared_jaxprs(top: Jaxpr) -> list[tuple[str, Jaxpr]]:
    counts: dict[Jaxpr, int] = {}
    visits: dict[Jaxpr, int] = {}
    names: dict[Jaxpr, str] = {}
    queue = deque([top])
    while queue:
        jaxpr = queue.popleft()
        counts[jaxpr] = counts.get(jaxpr, 0) + 1
        if jaxpr is not top and len(jaxpr.eqns) > SHARE_EQNS_ABOVE:
            counts[jaxpr] += 1
        visits[jaxpr] = visits.get(jaxpr, 0) + 1
        if visits[jaxpr] > 2:
            continue  # a third walk through the same jaxpr changes no count from 1 to 2 any more
        for eqn in jaxpr.eqns:
            subs = _jaxprs_in_params(eqn)
            queue.extend(subs)
            name = eqn.params.get("name")
            rule = RULES.get(eqn.primitive)
            if name is not None and (rule is None or rule.name_is_param):
                for sub in subs:
                    names.setdefault(sub, str(name).strip("<>"))
    name_counts: dict[str, int] = {}
    shared = []
    for jaxpr, count in counts.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        seen = name_counts.get(name, 0)
        name_counts[name] = seen + 1
        if seen:
            name += str(seen)
            name_counts[name] = name_counts.get(name, 0) + 1
        shared.append((name, jaxpr))
    return shared


def _jaxpr_doc(jaxpr: Jaxpr, ctx: _Context) -> pp.Doc:
    name = ctx.shared.get(jaxpr)
    return pp.text(name) if name is not None else _skeleton(jaxpr, ctx)


def _skeleton(jaxpr: Jaxpr, ctx: _Context) -> pp.Doc:
    constvars = _vars_doc(jaxpr.constvars, ctx, shapes=True)
    invars = _vars_doc(jaxpr.invars, ctx, shapes=True)
    eqns = pp.join(pp.brk("; "), [_eqn_doc(e, ctx) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), _vars_doc(jaxpr.outvars, ctx, separator=","),
                         pp.text(",)" if len(jaxpr.outvars) == 1 else ")")])
    body = pp.concat([pp.text("{ lambda "), constvars, pp.text("; "), invars, pp.text(". let"),
                      pp.nest(2, pp.brk() + eqns), pp.brk(), pp.text("in "), outvars])
    return pp.group(pp.nest(2, body) + pp.text(" }"))


def _vars_doc(atoms: Sequence[Any], ctx: _Context, *, separator: str = "", shapes: bool = False) -> pp.Doc:
    docs = [pp.text(_atom_text(x, ctx)) + pp.text(f":{x.aval}") if shapes else pp.text(_atom_text(x, ctx))
            for x in atoms]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), docs)))


def _atom_text(x: Any, ctx: _Context) -> str:
    if isinstance(x, Literal):
        return f"{literal_value_text(x)}:{x.aval}"
    return ctx.name(x)


def literal_value_text(lit: Literal) -> str:
    """JAX's `str(np.asarray(val).item())`, e.g. `1.0`, `-inf`, `(1+0j)`, `True`."""
    value = np.asarray(lit.value)
    if lit.aval.dtype.kind != "key" and value.dtype != lit.aval.dtype.numpy:
        value = value.astype(lit.aval.dtype.numpy)
    return str(value.item()) if value.shape == () else "[...]"


def _eqn_doc(eqn: Eqn, ctx: _Context) -> pp.Doc:
    rule = RULES.get(eqn.primitive)
    if rule is not None and rule.same_var_names:
        inner = eqn.params.get("jaxpr")
        inner = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
        if isinstance(inner, Jaxpr) and inner not in ctx.shared:
            ctx.suggest_same_names(inner.invars, eqn.invars)
            ctx.suggest_same_names(inner.outvars, eqn.outvars)
    lhs = _vars_doc(eqn.outvars, ctx, shapes=True)
    rhs = [pp.text(eqn.primitive), _params_doc(printed_params(eqn.primitive, eqn.params), ctx),
           pp.text(" ") + _vars_doc(eqn.invars, ctx)]
    return pp.concat([lhs, pp.text(" = "), *rhs] if eqn.outvars else rhs)


def _params_doc(pairs: list[tuple[str, Any]], ctx: _Context) -> pp.Doc:
    if not pairs:
        return pp.NIL
    items = pp.join(pp.brk(), [pp.text(f"{k}=") + _value_doc(v, ctx) for k, v in pairs])
    return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("["), pp.brk(""), items])),
                               pp.brk(""), pp.text("]")]))


def _value_doc(value: Any, ctx: _Context) -> pp.Doc:
    if type(value) is tuple and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in value):
        docs = [_jaxpr_doc(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in value]
        return pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), docs)])),
                                   pp.brk(""), pp.text(")")]))
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return _jaxpr_doc(value.jaxpr if isinstance(value, ClosedJaxpr) else value, ctx)
    return pp.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), value_text(value)))


def value_text(value: Any, nested: bool = False) -> str:
    """Python's `str` of a param value as JAX holds it (`repr` inside containers)."""
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return print_jaxpr(value)
    if isinstance(value, Record):
        fields = ", ".join(f"{k}={value_text(v, True)}" for k, v in value.fields)
        return f"{value.type_name}({fields})"
    if isinstance(value, tuple):
        inner = ", ".join(value_text(v, True) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v, True) for v in value) + "]"
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join(value_text(v, True) for v in sorted(value)) + "})"
    if isinstance(value, (Symbol, Opaque, NpScalar)):
        return repr(value)
    if isinstance(value, DType):
        return value.name
    if isinstance(value, str):
        return repr(value) if nested else str(value)
    return repr(value) if nested else str(value)
