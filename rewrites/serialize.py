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
    p_<prim>(xs.., fields..)          op = the primitive, payload (its field values...); a variadic or
                                      multi-result primitive's one child is its `Args` list
    p_<prim>(args, bodies, fields..)  a control-flow primitive (scan, while, cond): op = the primitive,
                                      children (args, bodies), payload (its field values...)
    call(prim, extra, args)           op "call", payload (prim, extra) (the opaque higher-order primitives)
    body(b, outs)              payload (b,); bcons(body, rest) / bnil() no payload
    get(t, i)                  payload (i,)
    cons(x, rest) / nil()      no payload
"""

from __future__ import annotations

import hashlib
from typing import Any

from egglog import EGraph

from rewrites.egraph_view import EGraphView, ENode, canonical
from rewrites.terms import ALL_BY_EGG_NAME

TERM_SORTS = frozenset({"Arr", "Args", "Tup", "Body", "Bodies"})
ROOT_LET = "$outputs"
OUTPUT_TABLE = "output_at"
_TERM_TABLES = frozenset({"inp", "const", "scalar", "get", "call", "cons", "nil", "barg", "body", "bnil",
                          "bcons"})


def view_of(egraph: EGraph) -> EGraphView:
    """The term nodes of `egraph`. The roots are the output classes in the `output_at` table, in order, or
    else the one `Args` class bound by `let` to `ROOT_LET` (a cons list of outputs, for small e-graphs)."""
    raw = egraph._egraph
    frozen = raw.freeze()
    decode = {"i64": raw.value_to_i64, "f64": raw.value_to_f64, "String": raw.value_to_string,
              "bool": raw.value_to_bool, "Bool": raw.value_to_bool}

    def primitive(sort: str, value) -> Any:
        if sort in decode:
            return decode[sort](value)
        return tuple(raw.value_to_i64(v) for v in raw.value_to_vec(value))  # Vec[i64]

    by_class: dict[str, list[ENode]] = {}
    retired: list[tuple[str, ENode]] = []
    for name, table in frozen.functions.items():
        if name not in _TERM_TABLES and name not in ALL_BY_EGG_NAME:
            continue  # analysis tables, `ref` aliases, let bindings
        spec = ALL_BY_EGG_NAME.get(name)
        op = spec.primitive if spec else name
        out_sort = table.output_sort
        sorts = table.input_sorts
        for row in table.rows:
            children, values = [], []
            for sort, value in zip(sorts, row.inputs, strict=True):
                if sort in TERM_SORTS:
                    children.append(_class_id(sort, value))
                else:
                    values.append(primitive(sort, value))
            node = ENode(op, tuple(children), tuple(values))
            if row.subsumed:
                retired.append((_class_id(out_sort, row.output), node))
            else:
                by_class.setdefault(_class_id(out_sort, row.output), []).append(node)
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
    main = _reachable(by_class, roots)
    # The classes only retired nodes reach (a folded `1 + 3`'s literals) are named too, for `with_retired`.
    folded: dict[str, list[ENode]] = {}
    for cid, node in retired:
        folded.setdefault(cid, []).append(node)
    extended = _reachable(by_class, roots, folded) if folded else main
    first_use: dict[str, int] = {}  # class -> the first input equation whose result it holds (`ref(k)`)
    refs = frozen.functions.get("ref")
    for row in refs.rows if refs is not None else ():
        cid, k = _class_id("Arr", row.output), raw.value_to_i64(row.inputs[0])
        first_use[cid] = min(k, first_use.get(cid, k))
    names: dict[str, str] = {}
    named, roots = canonical_class_ids(extended, roots, first_use, names)
    kept = {names[cid] for cid in main}
    for cls in named.values():
        cls.sort(key=_node_order)
    view = EGraphView.from_classes({cid: nodes for cid, nodes in named.items() if cid in kept}, roots)
    renamed = [(names[cid], ENode(n.op, tuple(names[c] for c in n.children), n.payload))
               for cid, n in retired if cid in names and all(c in names for c in n.children)]
    view.retired = ([(cid, n) for cid, nodes in named.items() if cid not in kept for n in nodes]
                    + sorted(renamed, key=lambda r: (r[0], _node_order(r[1]))))
    return view


def canonical_class_ids(by_class: dict[str, list[ENode]], roots: list[str], first_use: dict[str, int] | None = None,
                        names_out: dict[str, str] | None = None) -> tuple[dict[str, list[ENode]], list[str]]:
    """The classes renamed by their content, in a canonical order, so that nothing downstream sees egglog's ids.

    egglog numbers values in the order it creates them, and that order is not stable between processes (a
    `nil()` was created first in some runs and last in others), while extraction breaks ties by class ids:
    the same e-graph then gave different programs. A class's name is a digest of its smallest node (op,
    payload, its children's names), taking, round by round from the leaves, the nodes whose children are all
    named in an earlier round. Congruence makes the names distinct (two classes with equal smallest nodes
    have the same children, so egglog merged them). Classes are ordered by round, then by the text of that
    smallest node; classes with no term of finite depth (unextractable) come last, named by their position
    in the order of their nodes' text. A class holding the result of the input's equation k (`first_use`)
    has its name prefixed `e<k>`, so that ties between equal-cost nodes (mul(a, b) and mul(b, a)) go to the
    input's order of operands, and the output reads in the input's order."""
    first_use = first_use or {}
    names: dict[str, str] = {}
    used: set[str] = set()
    parents: dict[str, list[tuple[str, ENode]]] = {}
    missing: dict[int, int] = {}
    ready: dict[str, list[ENode]] = {}
    for cid, nodes in by_class.items():
        for node in nodes:
            kids = set(node.children)
            missing[id(node)] = len(kids)
            for kid in kids:
                parents.setdefault(kid, []).append((cid, node))
            if not kids:
                ready.setdefault(cid, []).append(node)
    order: list[str] = []
    while ready:
        named = sorted(((min(_node_text(n, names) for n in nodes), cid) for cid, nodes in ready.items()
                        if cid not in names))
        ready = {}
        for text, cid in named:
            prefix = f"e{first_use[cid]:07d}-" if cid in first_use else "n-"
            name = f"{cid.partition('-')[0]}-{prefix}{hashlib.blake2b(text.encode(), digest_size=8).hexdigest()}"
            if name in used:
                raise RuntimeError(f"two e-classes named {name} ({text}): a digest collision")
            names[cid] = name
            used.add(name)
            order.append(cid)
        for _, cid in named:
            for parent, node in parents.get(cid, ()):
                missing[id(node)] -= 1
                if missing[id(node)] == 0 and parent not in names:
                    ready.setdefault(parent, []).append(node)
    rest = sorted(by_class.keys() - names.keys(), key=lambda c: sorted(_node_text(n, {}) for n in by_class[c]))
    for k, cid in enumerate(rest):
        names[cid] = f"{cid.partition('-')[0]}-unextractable-{k}"
    renamed = {names[cid]: [ENode(n.op, tuple(names[c] for c in n.children), n.payload) for n in by_class[cid]]
               for cid in order + rest}
    if names_out is not None:
        names_out.update(names)  # egglog's class id -> its name
    return renamed, [names[r] for r in roots]


def _reachable(by_class: dict[str, list[ENode]], roots: list[str],
               also: dict[str, list[ENode]] | None = None) -> dict[str, list[ENode]]:
    """The classes reachable from `roots` through any node: what extraction can choose from. Other rows are
    not part of the program, and some are not even the same in every process (a `nil()` that egglog's
    Python layer adds in some processes and not in others while declaring the term language). `also`: more
    nodes by class to walk through (the retired ones), whose own rows are not returned."""
    also = also or {}
    seen, frontier = set(roots), list(roots)
    while frontier:
        cid = frontier.pop()
        for node in [*by_class.get(cid, ()), *also.get(cid, ())]:
            for child in node.children:
                if child not in seen:
                    seen.add(child)
                    frontier.append(child)
    return {cid: nodes for cid, nodes in by_class.items() if cid in seen}


def _node_text(node: ENode, names: dict[str, str]) -> str:
    # Not memoized by payload: equal tuples can print differently ((0,) == (False,), (0.0,) == (-0.0,)), so
    # a memo returned whichever text came first and class names, hence tie-breaks, depended on the process's
    # history (the golden record held such programs).
    return f"{node.op}{canonical(node.payload)}({','.join(names.get(c, '?') for c in node.children)})"


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


def _node_order(node: ENode) -> tuple:
    return node.op, repr(node.payload), node.children
