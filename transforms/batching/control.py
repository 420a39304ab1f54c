"""Batching of control flow, built in the e-graph: a new `scan`/`while`/`cond` node whose bodies the same
batcher batches inside (their `vmap_of` nodes are expanded by the same rules, then the algebra runs).

    scan   consts and carries carry the batch axis first; a carry is batched when its init is or its
           update depends on a batched value (a fixpoint, as JAX's `_scan_batching_rule`); batched xs
           and ys hold it second (the loop runs over the first axis), moved there and back by transposes.
    cond   an unbatched index: a cond of the batched branches. A batched index: every branch runs on the
           whole batch and `select_n` picks each element's result (JAX does the same).
    while  an unbatched predicate: a while of the batched body (carries by fixpoint). A batched predicate:
           every carry batched; the loop runs while some element's predicate holds, and each iteration
           keeps the old carry of the elements whose predicate is false (`select_n`).
    optimization_barrier  one barrier over the operands as they are.
A value an output must hold batched but the body computes unbatched is broadcast inside the body.
"""

from __future__ import annotations

from functools import partial

from ir import lax
from ir.core import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var
from ir.tracing import make_jaxpr
from rewrites.encode import Term, encode_jaxpr, literal_term
from transforms.batching.rule import with_batch
from transforms.control_node import ControlNode, barrier, carry_fixpoint


def _batched_outputs(body: Jaxpr, in_batched: list[bool]) -> list[bool]:
    from transforms.batching.build import batched_values

    dep = batched_values(body, [v for v, b in zip(body.invars, in_batched, strict=True) if b])
    return [isinstance(x, Var) and id(x) in dep for x in body.outvars]


def _run_body(batcher, body: ClosedJaxpr, inputs: list[Term], in_batched: list[bool]):
    """The body over `inputs` (batched ones with the batch axis first): its unbatched equations encoded as
    they are, the others batched. Returns (a batcher of the body's scope, the batched terms by var id)."""
    from transforms.batching.build import Batcher, batched_values

    jaxpr = body.jaxpr
    dep = batched_values(jaxpr, [v for v, b in zip(jaxpr.invars, in_batched, strict=True) if b])
    unbatched = [e for e in jaxpr.eqns if not any(isinstance(x, Var) and id(x) in dep for x in e.invars)]
    env: dict = {}
    encode_jaxpr(ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, [], unbatched), body.consts), inputs,
                 batcher.loader, env)
    sub = Batcher(batcher.loader, env, batcher.size)
    sub.values = batcher.values
    starts = {id(v): t.egg for v, t, b in zip(jaxpr.invars, inputs, in_batched, strict=True) if b}
    return sub, sub.run(jaxpr, starts)


def _outputs(sub, body: Jaxpr, batched: dict, want: list[bool]) -> list:
    """The body's output terms, batched where `want` says (broadcast if the body computes it unbatched)."""
    out = []
    for x, w in zip(body.outvars, want, strict=True):
        if isinstance(x, Var) and id(x) in batched:
            out.append(batched[id(x)])
        else:
            term = sub.atom(x)
            out.append(sub.broadcast(term, x.aval) if w else term)
    return out


def _body(node: ControlNode, batcher, body: ClosedJaxpr, in_batched: list[bool], want: list[bool]) -> None:
    avals = [with_batch(v.aval, batcher.size) if b else v.aval
             for v, b in zip(body.jaxpr.invars, in_batched, strict=True)]

    def fill(leaves):
        sub, batched = _run_body(batcher, body, leaves, in_batched)
        return _outputs(sub, body.jaxpr, batched, want)

    node.body(avals, fill)


def _operand(batcher, eqn: Eqn, i: int, flags, batched: dict, want: bool):
    x = eqn.invars[i]
    if flags[i]:
        return batched[id(x)]
    return batcher.broadcast(batcher.atom(x), x.aval) if want else batcher.atom(x)


def _finish(batcher, eqn: Eqn, results: list, out_batched: list[bool]) -> list:
    """Every result batched (the equation's results all count as batched), batch axis first."""
    return [r if b else batcher.broadcast(r, v.aval) for v, r, b in zip(eqn.outvars, results, out_batched, strict=True)]


def _swap(aval_shape: tuple[int, ...]) -> tuple[int, ...]:
    return (1, 0, *range(2, len(aval_shape)))


def scan_batch(batcher, eqn: Eqn, flags, batched: dict) -> list:
    p = eqn.params
    body: ClosedJaxpr = p["jaxpr"]
    k, c, n = p["num_consts"], p["num_carry"], len(eqn.invars)
    size, length = batcher.size, p["length"]
    carry = carry_fixpoint(partial(_batched_outputs, body.jaxpr), list(flags[:k]), list(flags[k:k + c]),
                           list(flags[k + c:]))
    in_b = list(flags[:k]) + carry + list(flags[k + c:])
    out_b = carry + _batched_outputs(body.jaxpr, in_b)[c:]
    node = ControlNode(batcher, "scan", p)
    for i in range(n):
        term = _operand(batcher, eqn, i, flags, batched, in_b[i])
        if i >= k + c and flags[i]:  # (B, L, ...) -> (L, B, ...)
            aval = with_batch(eqn.invars[i].aval, size)
            term = batcher.transpose(term, aval, _swap(aval.shape))
        node.operands.append(term)
    _body(node, batcher, body, in_b, out_b)
    avals = []
    for j, v in enumerate(eqn.outvars):
        if out_b[j] and j >= c:
            avals.append(ShapedArray((length, size, *v.aval.shape[1:]), v.aval.dtype, v.aval.weak_type))
        else:
            avals.append(with_batch(v.aval, size) if out_b[j] else v.aval)
    node.out_avals = avals
    results = node.results()
    for j in range(c, len(results)):
        if out_b[j]:
            results[j] = batcher.transpose(results[j], avals[j], _swap(avals[j].shape))
    return _finish(batcher, eqn, results, out_b)


def _encode_fn(batcher, fn, inputs: list, avals: list[ShapedArray]) -> list:
    """`fn` traced on `avals` and encoded over the terms `inputs` (aliases or leaves): for the few glue
    equations a rule needs (a select, a reduction), written as the program would write them."""
    closed = make_jaxpr(fn)(*avals)
    outs = encode_jaxpr(closed, [Term.of(x) if not isinstance(x, Term) else x for x in inputs], batcher.loader)
    return [t.egg for t in outs]


def _select(batcher, which, which_aval: ShapedArray, cases: list, aval: ShapedArray) -> list:
    """select_n(which broadcast to `aval`'s shape, *cases): each element's case."""
    def pick(w, *xs):
        w = lax.broadcast_in_dim(w, aval.shape, (0,)) if w.aval.shape != aval.shape else w
        return lax.select_n(w, *xs)

    return _encode_fn(batcher, pick, [which, *cases], [which_aval] + [aval] * len(cases))


def _term(batcher, x, batched: dict) -> Term:
    if isinstance(x, Var) and id(x) in batched:
        return Term.of(batched[id(x)])
    return batcher.env[id(x)] if isinstance(x, Var) else literal_term(x, batcher.enc)


def cond_batch(batcher, eqn: Eqn, flags, batched: dict) -> list:
    branches = eqn.params["branches"]
    in_b = list(flags[1:])
    out_b = [any(col) for col in zip(*(_batched_outputs(br.jaxpr, in_b) for br in branches), strict=True)]
    if not flags[0]:
        node = ControlNode(batcher, "cond", eqn.params)
        node.operands = [_operand(batcher, eqn, i, flags, batched, False) for i in range(len(eqn.invars))]
        for branch in branches:
            _body(node, batcher, branch, in_b, out_b)
        node.out_avals = [with_batch(v.aval, batcher.size) if b else v.aval
                          for v, b in zip(eqn.outvars, out_b, strict=True)]
        return _finish(batcher, eqn, node.results(), out_b)
    # a batched index: every branch on the whole batch, then each element's result
    inputs = [_term(batcher, x, batched) for x in eqn.invars[1:]]
    per_branch = []
    for branch in branches:
        sub, got = _run_body(batcher, branch, inputs, in_b)
        per_branch.append(_outputs(sub, branch.jaxpr, got, [True] * len(eqn.outvars)))
    index_aval = with_batch(eqn.invars[0].aval, batcher.size)
    return [_select(batcher, batched[id(eqn.invars[0])], index_aval, [outs[j] for outs in per_branch],
                    with_batch(v.aval, batcher.size))[0] for j, v in enumerate(eqn.outvars)]


def while_batch(batcher, eqn: Eqn, flags, batched: dict) -> list:
    p = eqn.params
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]
    ck, bk, n = p["cond_nconsts"], p["body_nconsts"], len(eqn.invars)
    carry = carry_fixpoint(partial(_batched_outputs, body.jaxpr), list(flags[ck:ck + bk]), list(flags[ck + bk:]), [])
    [pred_b] = _batched_outputs(cond.jaxpr, list(flags[:ck]) + carry)
    if pred_b:
        return _while_batched_predicate(batcher, eqn, flags, batched)
    node = ControlNode(batcher, "while", p)
    in_b = list(flags[:ck + bk]) + carry
    node.operands = [_operand(batcher, eqn, i, flags, batched, in_b[i]) for i in range(n)]
    _body(node, batcher, cond, in_b[:ck] + carry, [False])
    _body(node, batcher, body, in_b[ck:], carry)
    node.out_avals = [with_batch(v.aval, batcher.size) if b else v.aval
                      for v, b in zip(eqn.outvars, carry, strict=True)]
    return _finish(batcher, eqn, node.results(), carry)


def _while_batched_predicate(batcher, eqn: Eqn, flags, batched: dict) -> list:
    p = eqn.params
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]
    ck, bk, n = p["cond_nconsts"], p["body_nconsts"], len(eqn.invars)
    size = batcher.size
    cond_b, body_b = list(flags[:ck]), list(flags[ck:ck + bk])
    carry_b = [True] * (n - ck - bk)
    carry_avals = [with_batch(v.aval, size) for v in eqn.outvars]
    pred_aval = ShapedArray((size,), cond.jaxpr.outvars[0].aval.dtype)
    # the body also takes the condition's consts: it computes each element's predicate
    node = ControlNode(batcher, "while", {**p, "body_nconsts": ck + bk})
    node.operands = ([_operand(batcher, eqn, i, flags, batched, False) for i in range(ck)] * 2
                     + [_operand(batcher, eqn, i, flags, batched, False) for i in range(ck, ck + bk)]
                     + [_operand(batcher, eqn, i, flags, batched, True) for i in range(ck + bk, n)])
    const_avals = [with_batch(eqn.invars[i].aval, size) if flags[i] else eqn.invars[i].aval for i in range(ck + bk)]

    def any_element(leaves):
        sub, got = _run_body(batcher, cond, leaves, cond_b + carry_b)
        [pred] = _outputs(sub, cond.jaxpr, got, [True])
        return _encode_fn(batcher, lambda q: lax.reduce_or(q, (0,)), [pred], [pred_aval])

    def step(leaves):
        cond_consts, body_consts, old = leaves[:ck], leaves[ck:ck + bk], leaves[ck + bk:]
        sub, got = _run_body(batcher, cond, cond_consts + old, cond_b + carry_b)
        [pred] = _outputs(sub, cond.jaxpr, got, [True])
        sub, got = _run_body(batcher, body, body_consts + old, body_b + carry_b)
        new = _outputs(sub, body.jaxpr, got, carry_b)
        return [_select(batcher, pred, pred_aval, [o.egg, x], a)[0]
                for o, x, a in zip(old, new, carry_avals, strict=True)]

    node.body(const_avals[:ck] + carry_avals, any_element)
    node.body(const_avals[:ck] + const_avals[ck:] + carry_avals, step)
    node.out_avals = carry_avals
    return node.results()


def barrier_batch(batcher, eqn: Eqn, flags, batched: dict) -> list:
    """One barrier over the operands as they are (batched ones with the batch axis first)."""
    operands = [_operand(batcher, eqn, i, flags, batched, False) for i in range(len(eqn.invars))]
    avals = [with_batch(v.aval, batcher.size) if b else v.aval for v, b in zip(eqn.outvars, flags, strict=True)]
    return _finish(batcher, eqn, barrier(batcher, operands, avals), list(flags))


BATCH_RULES = {"scan": scan_batch, "cond": cond_batch, "while": while_batch, "optimization_barrier": barrier_batch}
