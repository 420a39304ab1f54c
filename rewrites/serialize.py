"""The saturated e-graph as an `EGraphView`: egglog's serialization, read with the term language.

egglog's JSON (`EGraph._egraph.serialize(...)`, a private API wrapped only here) lists every node
with its e-class; primitive values (i64, f64, String, Vec[i64]) are nodes of their own. Here the
nodes of the sorts `Arr`, `Args` and `Tup` become `ENode`s whose `children` are the e-classes of
their term operands and whose `payload` holds their primitive values, decoded:

    inp(k) / const(k)          payload (k,)
    scalar(v, dtype)           payload (v, dtype)
    p_<prim>(xs.., fields.., extra)   op = the primitive, payload (field values..., extra)
    apply / call(prim, extra, args)   op "apply" / "call", payload (prim, extra)
    get(t, i)                  payload (i,)
    cons(x, rest) / nil()      no payload
"""

from __future__ import annotations

import json
import math
from typing import Any

from egglog import EGraph

from rewrites.egraph_view import EGraphView, ENode
from rewrites.terms import BY_EGG_NAME

TERM_SORTS = frozenset({"Arr", "Args", "Tup"})
ROOT_LET = "$outputs"


def serialize(egraph: EGraph) -> dict:
    """egglog's serialized e-graph as JSON data (every node; nothing truncated)."""
    return json.loads(egraph._egraph.serialize([], max_functions=None, max_calls_per_function=None).to_json())


def _primitive(node: dict, raw: dict) -> Any:
    op = node["op"]
    if op == "vec-of":
        return tuple(int(raw[c]["op"]) for c in node["children"])
    if op.startswith('"'):
        return json.loads(op)
    if op in ("inf", "-inf", "NaN", "nan"):
        return float(op.lower()) if op != "NaN" else math.nan
    try:
        return int(op)
    except ValueError:
        return float(op)


def view_of(data: dict) -> EGraphView:
    """The term nodes of serialized `data`; the root is the class bound by `let` to `ROOT_LET`."""
    raw, class_data = data["nodes"], data["class_data"]
    by_class: dict[str, list[ENode]] = {}
    for node in raw.values():  # egglog's own order, deterministic for the same input and rules
        cls = node["eclass"]
        if class_data[cls]["type"] not in TERM_SORTS or node.get("subsumed") or node["op"] == "ref":
            continue  # `ref(k)` is the loader's alias of an equation result, never a program term
        term_children, values = [], []
        for c in node["children"]:
            child = raw[c]
            if class_data[child["eclass"]]["type"] in TERM_SORTS:
                term_children.append(child["eclass"])
            else:
                values.append(_primitive(child, raw))
        op = node["op"]
        spec = BY_EGG_NAME.get(op)
        by_class.setdefault(cls, []).append(
            ENode(spec.primitive if spec else op, tuple(term_children), tuple(values)))
    roots = [c for c, d in class_data.items() if d.get("let") == ROOT_LET]
    if len(roots) != 1:
        raise RuntimeError(f"expected one e-class bound to {ROOT_LET}, found {len(roots)}")
    return EGraphView.from_classes(by_class, roots)
