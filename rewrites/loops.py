"""Loop-aware extraction and clean-up.

Loop-invariant code motion needs no rule: loop bodies close over their consts in the e-graph
(`rewrites.encode.closed_over`), so an invariant subterm is the same e-class inside and outside the
loop, and decoding computes it once, before the loop. Two things here make the rest loop-aware:

`loop_weights`: extraction prices a node by how often it runs. A node that necessarily reads a loop
body's inputs (every term of some operand's e-class does) runs once per trip: its cost is multiplied by
the scan's length (a `while`'s unknown trip count counts as `WHILE_TRIPS`). So among equal programs the
extractor prefers the one whose work is invariant: `h * w * 3` reassociated to `h * (w * 3)` costs one
multiply per trip instead of two, and decoding hoists `w * 3`. A cond branch runs once: weight 1.

`prune_loops`, dead loop outputs: a pass over the decoded program that drops what no one reads from
control flow. Extraction keeps a `scan`/`while`/`cond` whole even when the program reads only some of
its results; AD's forward scan, for one, would still compute the primal ys a gradient never reads.

    scan   a ys output nobody reads leaves the body; a carry leaves the loop when nobody reads its final
           value and no kept output depends on it (a fixpoint over the body); consts and xs the body no
           longer reads stop being operands.
    while  the same for carries, which must also not be read by the condition.
    cond   an output nobody reads leaves every branch; operands no branch reads stop being operands.

Every primitive is pure, so a value no kept output depends on can go (soundness class: exact). Bodies
are pruned from the outside in, and the program's dead equations go with them, until nothing changes.
"""

from __future__ import annotations

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Var

WHILE_TRIPS = 2  # a while loop's trip count is unknown; any weight above 1 prefers invariant work


def loop_weights(view, enc) -> list[int] | None:
    """Per node of `view`, how many times it runs per run of its program (see the module docstring); None
    when the e-graph holds no loop."""
    from rewrites.decode import body_classes, node_params, reached_classes

    trips: dict[int, int] = {}
    for node in view.nodes:
        if node.op in ("scan", "while"):
            trip = int(node_params(node, [], enc)["length"]) if node.op == "scan" else WHILE_TRIPS
            for cls in body_classes(view, node):
                trips.update((view.nodes[j].payload[0], trip) for j in view.classes[cls] if view.nodes[j].op == "body")
    if not trips:
        return None

    kids = [reached_classes(view, n) if n.op not in _LISTS else None for n in view.nodes]
    inside = _necessary_bodies(view, kids)
    weights = []
    for i, node in enumerate(view.nodes):
        w = 1
        for b in _node_bodies(node, kids[i], inside) if kids[i] is not None else ():
            w *= trips.get(b, 1)
        weights.append(w)
    return weights


_LISTS = frozenset({"cons", "nil", "bcons", "bnil"})


def _node_bodies(node, kids: list[str], inside: dict[str, frozenset]) -> frozenset:
    """The bodies whose inputs a node necessarily reads (its own body's inputs excluded for a body node)."""
    if node.op == "barg":
        return frozenset({node.payload[0]})
    got = frozenset().union(*(inside.get(k, frozenset()) for k in kids))
    return got - {node.payload[0]} if node.op == "body" else got


def _necessary_bodies(view, kids: list) -> dict[str, frozenset]:
    """Per class, the bodies every one of its terms reads the inputs of: the intersection over its nodes,
    a worklist to the fixpoint (a class's set only shrinks once it has one)."""
    users: dict[str, list[int]] = {}
    for i, ks in enumerate(kids):
        for k in ks or ():
            users.setdefault(k, []).append(i)
    inside: dict[str, frozenset] = {}
    work = [i for i, ks in enumerate(kids) if ks is not None and not ks]
    while work:
        i = work.pop()
        ks = kids[i]
        if any(k not in inside for k in ks):
            continue
        cls = view.node_class[i]
        got = _node_bodies(view.nodes[i], ks, inside)
        old = inside.get(cls)
        new = got if old is None else old & got
        if new != old:
            inside[cls] = new
            work.extend(users.get(cls, ()))
    return inside


def prune_loops(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, int]:
    """`closed` without dead loop outputs; and how many outputs (carries, ys, branch results) went."""
    count = [0]
    jaxpr = _prune(closed.jaxpr, [True] * len(closed.jaxpr.outvars), count)
    return ClosedJaxpr(jaxpr, closed.consts), count[0]


def _prune(jaxpr: Jaxpr, live_outputs: list[bool], count: list[int]) -> Jaxpr:
    """`jaxpr` with its outputs where `live_outputs` is False unread, dead equations dropped and each
    loop's dead outputs dropped, recursively; its inputs and outputs unchanged (`jaxpr` itself if nothing
    changed)."""
    eqns, touched = list(jaxpr.eqns), False
    while True:
        used = {id(v) for v, live in zip(jaxpr.outvars, live_outputs, strict=True) if live and isinstance(v, Var)}
        kept: list[Eqn] = []
        changed = False
        for eqn in reversed(eqns):
            if not any(id(v) in used for v in eqn.outvars):
                changed = True
                continue
            if any(not isinstance(v, DropVar) and id(v) not in used for v in eqn.outvars):
                eqn = Eqn(eqn.primitive, eqn.invars, [v if id(v) in used else DropVar(v.aval) for v in eqn.outvars],
                          eqn.params)
                changed = True
            pruned = _PRUNE[eqn.primitive](eqn, count) if eqn.primitive in _PRUNE else eqn
            changed |= pruned is not eqn
            kept.append(pruned)
            used.update(id(a) for a in pruned.invars if isinstance(a, Var))
        eqns = kept[::-1]
        touched |= changed
        if not changed:
            return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns) if touched else jaxpr


def _live(eqn: Eqn) -> list[bool]:
    return [not isinstance(v, DropVar) for v in eqn.outvars]


def _reads(jaxpr: Jaxpr, outputs: list[bool]) -> list[bool]:
    """Which inputs the `outputs` of `jaxpr` depend on."""
    used = {id(v) for v, live in zip(jaxpr.outvars, outputs, strict=True) if live and isinstance(v, Var)}
    for eqn in reversed(jaxpr.eqns):
        if any(id(v) in used for v in eqn.outvars):
            used.update(id(a) for a in eqn.invars if isinstance(a, Var))
    return [id(v) in used for v in jaxpr.invars]


def _body(closed: ClosedJaxpr, inputs: list[bool], outputs: list[bool], count: list[int]) -> ClosedJaxpr:
    """The body with only the kept inputs and outputs, pruned (`closed` itself if nothing changed)."""
    j = closed.jaxpr
    inner = _prune(j, outputs, count)
    if inner is j and all(inputs) and all(outputs):
        return closed
    kept_out = [x for x, k in zip(j.outvars, outputs, strict=True) if k]
    kept_in = [v for v, k in zip(j.invars, inputs, strict=True) if k]
    return ClosedJaxpr(Jaxpr(inner.constvars, kept_in, kept_out, inner.eqns), closed.consts)


def _pick(items, keep: list[bool]) -> list:
    return [x for x, k in zip(items, keep, strict=True) if k]


def _prune_scan(eqn: Eqn, count: list[int]) -> Eqn:
    p, body = eqn.params, eqn.params["jaxpr"]
    k, c = p["num_consts"], p["num_carry"]
    live = _live(eqn)
    carry = live[:c]
    while True:  # a carry is live if read outside, or if a live output reads its body input
        reads = _reads(body.jaxpr, carry + live[c:])
        grown = [a or b for a, b in zip(carry, reads[k:k + c], strict=True)]
        if grown == carry:
            break
        carry = grown
    outputs = carry + live[c:]
    inputs = reads[:k] + carry + reads[k + c:]
    new_body = _body(body, inputs, outputs, count)
    if new_body is body:
        return eqn
    count[0] += outputs.count(False)
    params = {**p, "jaxpr": new_body, "num_consts": sum(inputs[:k]), "num_carry": sum(carry)}
    if "linear" in p and p["linear"] is not None:
        params["linear"] = tuple(_pick(p["linear"], inputs))
    return Eqn("scan", _pick(eqn.invars, inputs), _pick(eqn.outvars, outputs), params)


def _prune_while(eqn: Eqn, count: list[int]) -> Eqn:
    p, cond, body = eqn.params, eqn.params["cond_jaxpr"], eqn.params["body_jaxpr"]
    ck, bk = p["cond_nconsts"], p["body_nconsts"]
    cond_reads = _reads(cond.jaxpr, [True])
    carry = [a or b for a, b in zip(_live(eqn), cond_reads[ck:], strict=True)]
    while True:
        reads = _reads(body.jaxpr, carry)
        grown = [a or b for a, b in zip(carry, reads[bk:], strict=True)]
        if grown == carry:
            break
        carry = grown
    cond_in, body_in = cond_reads[:ck] + carry, reads[:bk] + carry
    new_cond, new_body = _body(cond, cond_in, [True], count), _body(body, body_in, carry, count)
    if new_cond is cond and new_body is body:
        return eqn
    count[0] += carry.count(False)
    params = {**p, "cond_jaxpr": new_cond, "body_jaxpr": new_body, "cond_nconsts": sum(cond_in[:ck]),
              "body_nconsts": sum(body_in[:bk])}
    invars = _pick(eqn.invars[:ck], cond_in[:ck]) + _pick(eqn.invars[ck:ck + bk], body_in[:bk]) + _pick(
        eqn.invars[ck + bk:], carry)
    return Eqn("while", invars, _pick(eqn.outvars, carry), params)


def _prune_cond(eqn: Eqn, count: list[int]) -> Eqn:
    branches, live = eqn.params["branches"], _live(eqn)
    reads = [any(col) for col in zip(*(_reads(b.jaxpr, live) for b in branches), strict=True)]
    pruned = tuple(_body(b, reads, live, count) for b in branches)
    if all(new is old for new, old in zip(pruned, branches, strict=True)):
        return eqn
    count[0] += live.count(False)
    return Eqn("cond", [eqn.invars[0], *_pick(eqn.invars[1:], reads)], _pick(eqn.outvars, live),
               {**eqn.params, "branches": pruned})


_PRUNE = {"scan": _prune_scan, "while": _prune_while, "cond": _prune_cond}
