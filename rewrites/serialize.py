"""The saturated e-graph as an `EGraphView`: egglog's tables, read with the term language.

egglog can freeze an e-graph into its tables (`EGraph._egraph.freeze()`, a private API wrapped only
here): one row per node with its input values and its output e-class. Reading just the term tables
(`Arr`, `Args` and `Tup` constructors) skips the analysis tables, which outnumber the terms, and costs
tens of milliseconds where egglog's JSON serialization cost seconds on large e-graphs. Each row
becomes an `ENode` whose `children` are the e-classes of its term operands and whose `payload`
holds its primitive values, decoded:

    inp(k) / const(k)          payload (k,)
    barg(b, k)                 payload (b, k)
    scalar(v, dtype)           payload (v, dtype)
    p_<prim>(xs.., fields.., extra)   op = the primitive, payload (field values..., extra)
    apply / call(prim, extra, args)   op "apply" / "call", payload (prim, extra)
    hcall(prim, extra, args, bodies)  op "hcall", payload (prim, extra), children (args, bodies)
    body(b, outs)              payload (b,); bcons(body, rest) / bnil() no payload
    get(t, i)                  payload (i,)
    cons(x, rest) / nil()      no payload
"""

from __future__ import annotations

from typing import Any

from egglog import EGraph

from rewrites.egraph_view import EGraphView, ENode
from rewrites.terms import BY_EGG_NAME

TERM_SORTS = frozenset({"Arr", "Args", "Tup", "Body", "Bodies"})
ROOT_LET = "$outputs"
OUTPUT_TABLE = "output_at"
_TERM_TABLES = frozenset({"inp", "const", "scalar", "get", "apply", "call", "cons", "nil", "barg", "body", "bnil",
                          "bcons", "hcall"})


def view_of(egraph: EGraph) -> EGraphView:
    """The term nodes of `egraph`. The roots are the output classes in the `output_at` table, in order, or
    else the one `Args` class bound by `let` to `ROOT_LET` (a cons list of outputs, for small e-graphs)."""
    raw = egraph._egraph
    frozen = raw.freeze()
    decode = {"i64": raw.value_to_i64, "f64": raw.value_to_f64, "String": raw.value_to_string}

    def primitive(sort: str, value) -> Any:
        if sort in decode:
            return decode[sort](value)
        return tuple(raw.value_to_i64(v) for v in raw.value_to_vec(value))  # Vec[i64]

    by_class: dict[str, list[ENode]] = {}
    for name, table in frozen.functions.items():
        if name not in _TERM_TABLES and name not in BY_EGG_NAME:
            continue  # analysis tables, `ref` aliases, let bindings
        spec = BY_EGG_NAME.get(name)
        op = spec.primitive if spec else name
        out_sort = table.output_sort
        sorts = table.input_sorts
        for row in table.rows:
            if row.subsumed:
                continue
            children, values = [], []
            for sort, value in zip(sorts, row.inputs, strict=True):
                if sort in TERM_SORTS:
                    children.append(_class_id(sort, value))
                else:
                    values.append(primitive(sort, value))
            by_class.setdefault(_class_id(out_sort, row.output), []).append(
                ENode(op, tuple(children), tuple(values)))
    bound = frozen.functions.get(ROOT_LET)
    if bound is not None and bound.rows:
        roots = [_class_id("Args", row.output) for row in bound.rows]
        if len(roots) != 1:
            raise RuntimeError(f"expected one e-class bound to {ROOT_LET}, found {len(roots)}")
    else:
        table = frozen.functions.get(OUTPUT_TABLE)
        rows = sorted((raw.value_to_i64(row.inputs[0]), row.inputs[1]) for row in (table.rows if table else ()))
        if [k for k, _ in rows] != list(range(len(rows))):
            raise RuntimeError(f"the {OUTPUT_TABLE} table must hold one class per output 0..n-1")
        roots = [_class_id("Arr", value) for _, value in rows]
    _drop_dangling(by_class)
    for cls in by_class.values():
        cls.sort(key=_node_order)
    return EGraphView.from_classes(dict(sorted(by_class.items(), key=lambda kv: _class_order(kv[0]))), roots)


def _drop_dangling(by_class: dict[str, list[ENode]]) -> None:
    """Remove the nodes that have a child class without a term node (a class holding only unextractable
    nodes, such as a transform node no rule expanded, or one egglog's frozen tables show no producer
    for), then the classes left empty, until none is left: such nodes can never be extracted."""
    changed = True
    while changed:
        changed = False
        for cid in list(by_class):
            kept = [n for n in by_class[cid] if all(c in by_class for c in n.children)]
            if len(kept) != len(by_class[cid]):
                changed = True
                if kept:
                    by_class[cid] = kept
                else:
                    del by_class[cid]


def _class_id(sort: str, value) -> str:
    return f"{sort}-{str(value)[6:-1]}"  # str(Value) is "Value(<n>)"


def _class_order(cid: str) -> tuple[str, int]:
    sort, _, n = cid.rpartition("-")
    return sort, int(n)


def _node_order(node: ENode) -> tuple:
    return node.op, repr(node.payload), node.children
