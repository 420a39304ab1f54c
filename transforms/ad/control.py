"""Derivatives of control flow, built in the e-graph: a new `scan`/`while`/`cond` node whose bodies are the
derivative of the original bodies, built by the same builder inside the body (its AD nodes are expanded by
the same rules, and the algebra then simplifies them with everything else).

    JVP  scan   one scan over (primal, tangent) carries; tangents of consts and xs are extra operands.
                Which carries have a tangent is a fixpoint over the body (JAX's `_scan_jvp`).
         while  the same over the loop's carries; the condition ignores the tangents.
         cond   each branch differentiated; a result has a tangent if it has one in some branch.
    VJP  scan   a forward scan that also stacks each iteration's input carries, then a scan in the other
                direction whose body recomputes the iteration from them and runs its VJP: O(n) memory (the
                carries) and about twice the forward work, whatever the body.
         cond   each branch's VJP, recomputing the branch from the operands; the index gets none.
    (JAX has no reverse mode for `while` either.)
    optimization_barrier: tangents and cotangents pass through a barrier of their own, so the e-graph
    does not rewrite across it in the derivative either.

The new node computes the primal results too: they are asserted equal to the original node's (a union),
so extraction can keep one loop.
"""

from __future__ import annotations

from functools import partial

from egglog import bindings as eb

from ir.core import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var
from rewrites.build_terms import B
from rewrites.encode import Term, encode_jaxpr
from transforms.control_node import ControlNode, barrier, carry_fixpoint, placed


def _nonzero_outputs(body: Jaxpr, nonzero_inputs: list[bool]) -> list[bool]:
    from transforms.ad.build import _depends_on, differentiable

    dep = _depends_on(body, [v for v, nz in zip(body.invars, nonzero_inputs, strict=True) if nz])
    return [isinstance(x, Var) and id(x) in dep and differentiable(x.aval) for x in body.outvars]


def inline_body(builder, body: ClosedJaxpr, inputs: list[Term]) -> tuple[list[eb.Call], object]:
    """The body's equations over `inputs`, and a builder for derivatives inside it."""
    env: dict = {}
    outs = encode_jaxpr(body, inputs, builder.loader, env)
    sub = type(builder)(builder.loader, env)
    sub.values = builder.values
    return [o.egg for o in outs], sub


def _tangent_or_zero(sub, tangent: dict, x) -> eb.Call:
    return _tangent(sub, x, tangent.get(id(x)) if isinstance(x, Var) else None)


def _union_primals(builder, eqn: Eqn, results: list[eb.Call], positions: list[int]) -> None:
    for v, k in zip(eqn.outvars, positions, strict=True):
        builder.loader.union(builder.env[id(v)].egg, results[k])


# --- JVP ---------------------------------------------------------------------------------------------


def _tangent(builder, x, t) -> eb.Call:
    return t if t is not None else builder.zero(x.aval)


def scan_jvp(builder, eqn: Eqn, tans: list) -> list:
    p = eqn.params
    body: ClosedJaxpr = p["jaxpr"]
    k, c, n = p["num_consts"], p["num_carry"], len(eqn.invars)
    nz = [t is not None for t in tans]
    carry = carry_fixpoint(partial(_nonzero_outputs, body.jaxpr), nz[:k], nz[k:k + c], nz[k + c:])
    nz[k:k + c] = carry
    out_nz = _nonzero_outputs(body.jaxpr, nz)
    out_nz[:c] = carry
    groups = [range(0, k), range(k, k + c), range(k + c, n)]
    order = [(i, tangent) for g in groups for tangent in (False, True) for i in g if not tangent or nz[i]]
    node = ControlNode(builder, "scan", {**p, "num_consts": k + sum(nz[:k]),
                                         "num_carry": c + sum(carry)})
    node.operands = [_tangent(builder, eqn.invars[i], tans[i]) if tangent else builder.atom(eqn.invars[i])
                     for i, tangent in order]
    m = len(body.jaxpr.outvars)
    out_order = [(j, tangent) for g in (range(0, c), range(c, m)) for tangent in (False, True) for j in g
                 if not tangent or out_nz[j]]

    def fill(leaves):
        primal = [leaf for (_, tangent), leaf in zip(order, leaves, strict=True) if not tangent]
        outs, sub = inline_body(builder, body, primal)
        seeds = {id(body.jaxpr.invars[i]): leaf.egg for (i, tangent), leaf in zip(order, leaves, strict=True)
                 if tangent}
        tangent = sub.forward(body.jaxpr, seeds)
        return [_tangent_or_zero(sub, tangent, body.jaxpr.outvars[j]) if t else outs[j] for j, t in out_order]

    node.body([body.jaxpr.invars[i].aval for i, _ in order], fill)
    node.out_avals = [eqn.outvars[j].aval for j, _ in out_order]
    results = node.results()
    _union_primals(builder, eqn, results, [q for q, (_, t) in enumerate(out_order) if not t])
    tangents = [(j, r) for (j, tangent), r in zip(out_order, results, strict=True) if tangent]
    return placed([j for j, _ in tangents], [r for _, r in tangents], len(eqn.outvars))


def while_jvp(builder, eqn: Eqn, tans: list) -> list:
    p = eqn.params
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]
    ck, bk = p["cond_nconsts"], p["body_nconsts"]
    nz = [t is not None for t in tans]
    carry = carry_fixpoint(partial(_nonzero_outputs, body.jaxpr), nz[ck:ck + bk], nz[ck + bk:], [])
    nz[ck + bk:] = carry
    body_consts = [i for i in range(ck, ck + bk) if nz[i]]
    carries = [i for i in range(ck + bk, len(eqn.invars)) if nz[i]]
    node = ControlNode(builder, "while", {**p, "body_nconsts": bk + len(body_consts)})
    operand = [(i, False) for i in range(ck + bk)] + [(i, True) for i in body_consts] + [
        (i, False) for i in range(ck + bk, len(eqn.invars))] + [(i, True) for i in carries]
    node.operands = [_tangent(builder, eqn.invars[i], tans[i]) if t else builder.atom(eqn.invars[i])
                     for i, t in operand]
    carry_avals = [eqn.invars[i].aval for i in range(ck + bk, len(eqn.invars))] + [eqn.invars[i].aval for i in carries]
    n_carry = len(eqn.outvars)

    def fill_cond(leaves):
        outs, _ = inline_body(builder, cond, leaves[:ck + n_carry])
        return outs

    def fill_body(leaves):
        consts, dots = leaves[:bk], leaves[bk:bk + len(body_consts)]
        primal_carry = leaves[bk + len(body_consts):bk + len(body_consts) + n_carry]
        carry_dots = leaves[bk + len(body_consts) + n_carry:]
        outs, sub = inline_body(builder, body, consts + primal_carry)
        inv = body.jaxpr.invars  # the body's consts, then its carries: eqn operand i is inv[i - ck]
        seeds = {id(inv[i - ck]): t.egg for i, t in zip(body_consts + carries, dots + carry_dots, strict=True)}
        tangent = sub.forward(body.jaxpr, seeds)
        return outs + [_tangent_or_zero(sub, tangent, body.jaxpr.outvars[i - ck - bk]) for i in carries]

    node.body([eqn.invars[i].aval for i in range(ck)] + carry_avals, fill_cond)
    node.body([eqn.invars[i].aval for i in range(ck, ck + bk)] + [eqn.invars[i].aval for i in body_consts]
              + carry_avals, fill_body)
    node.out_avals = [v.aval for v in eqn.outvars] + [eqn.outvars[i - ck - bk].aval for i in carries]
    results = node.results()
    _union_primals(builder, eqn, results, list(range(n_carry)))
    return placed([i - ck - bk for i in carries], results[n_carry:], n_carry)


def cond_jvp(builder, eqn: Eqn, tans: list) -> list:
    branches = eqn.params["branches"]
    ops = list(range(1, len(eqn.invars)))
    nz = [t is not None for t in tans[1:]]
    out_nz = [any(col) for col in zip(*(_nonzero_outputs(br.jaxpr, nz) for br in branches), strict=True)]
    dots = [i for i, z in zip(ops, nz, strict=True) if z]
    node = ControlNode(builder, "cond", eqn.params)
    node.operands = [builder.atom(x) for x in eqn.invars] + [tans[i] for i in dots]
    in_avals = [eqn.invars[i].aval for i in ops] + [eqn.invars[i].aval for i in dots]
    tangent_outs = [j for j, z in enumerate(out_nz) if z]

    def fill(branch):
        def outputs(leaves):
            outs, sub = inline_body(builder, branch, leaves[:len(ops)])
            seeds = {id(branch.jaxpr.invars[i - 1]): t.egg for i, t in zip(dots, leaves[len(ops):], strict=True)}
            tangent = sub.forward(branch.jaxpr, seeds)
            return outs + [_tangent_or_zero(sub, tangent, branch.jaxpr.outvars[j]) for j in tangent_outs]
        return outputs

    for branch in branches:
        node.body(in_avals, fill(branch))
    node.out_avals = [v.aval for v in eqn.outvars] + [eqn.outvars[j].aval for j in tangent_outs]
    results = node.results()
    _union_primals(builder, eqn, results, list(range(len(eqn.outvars))))
    return placed(tangent_outs, results[len(eqn.outvars):], len(eqn.outvars))


# --- VJP ---------------------------------------------------------------------------------------------


def cond_vjp(builder, eqn: Eqn, cts: list, active: list[bool]) -> list:
    """Cotangents of the operands (None for the index and the inactive ones)."""
    branches = eqn.params["branches"]
    ops = list(range(1, len(eqn.invars)))
    wanted = [i for i in ops if active[i]]
    seeded = [j for j, c in enumerate(cts) if c is not None]
    if not wanted or not seeded:
        return [None] * len(eqn.invars)
    node = ControlNode(builder, "cond", eqn.params)
    node.operands = [builder.atom(x) for x in eqn.invars] + [cts[j] for j in seeded]
    in_avals = [eqn.invars[i].aval for i in ops] + [eqn.outvars[j].aval for j in seeded]

    def fill(branch):
        def outputs(leaves):
            _, sub = inline_body(builder, branch, leaves[:len(ops)])
            outvars = branch.jaxpr.outvars
            seeds: dict[int, list] = {}
            for j, ct in zip(seeded, leaves[len(ops):], strict=True):
                if isinstance(outvars[j], Var):
                    seeds.setdefault(id(outvars[j]), []).append(ct.egg)
            wrt = [branch.jaxpr.invars[i - 1] for i in wanted]
            got = sub.backward(branch.jaxpr, wrt, seeds)
            return [got[id(v)] if got[id(v)] is not None else sub.zero(v.aval) for v in wrt]
        return outputs

    for branch in branches:
        node.body(in_avals, fill(branch))
    node.out_avals = [eqn.invars[i].aval for i in wanted]
    return placed(wanted, node.results(), len(eqn.invars))


def scan_vjp(builder, eqn: Eqn, cts: list, active: list[bool]) -> list:
    from transforms.ad.build import differentiable

    p = eqn.params
    body: ClosedJaxpr = p["jaxpr"]
    k, c, n = p["num_consts"], p["num_carry"], len(eqn.invars)
    inv, outv = body.jaxpr.invars, body.jaxpr.outvars
    m = len(outv)
    length = p["length"]
    stacked = [ShapedArray((length, *inv[i].aval.shape), inv[i].aval.dtype, inv[i].aval.weak_type)
               for i in range(k, k + c)]

    # the forward scan: the original, also stacking each iteration's input carries
    forward = ControlNode(builder, "scan", p)
    forward.operands = [builder.atom(x) for x in eqn.invars]

    def fill_forward(leaves):
        outs, _ = inline_body(builder, body, leaves)
        return outs + [t.egg for t in leaves[k:k + c]]

    forward.body([v.aval for v in inv], fill_forward)
    forward.out_avals = [v.aval for v in eqn.outvars] + stacked
    fwd = forward.results()
    _union_primals(builder, eqn, fwd, list(range(len(eqn.outvars))))
    carries_in = fwd[len(eqn.outvars):]

    float_consts = [i for i in range(k) if differentiable(inv[i].aval)]
    float_carry = [i for i in range(k, k + c) if differentiable(inv[i].aval)]
    float_xs = [i for i in range(k + c, n) if differentiable(inv[i].aval)]
    float_ys = [j for j in range(c, m) if differentiable(outv[j].aval)]

    def ct_of(j):
        return cts[j] if cts[j] is not None else builder.zero(eqn.outvars[j].aval)

    backward = ControlNode(builder, "scan", {**p, "reverse": not p["reverse"], "num_consts": k,
                                       "num_carry": len(float_carry) + len(float_consts)})
    backward.operands = ([builder.atom(eqn.invars[i]) for i in range(k)]
                         + [ct_of(i - k) for i in float_carry]
                         + [builder.zero(eqn.invars[i].aval) for i in float_consts]
                         + carries_in + [builder.atom(eqn.invars[i]) for i in range(k + c, n)]
                         + [ct_of(j) for j in float_ys])
    avals = ([inv[i].aval for i in range(k)] + [inv[i].aval for i in float_carry] + [inv[i].aval for i in float_consts]
             + [inv[i].aval for i in range(k, n)] + [outv[j].aval for j in float_ys])

    def fill_backward(leaves):
        consts = leaves[:k]
        ct_carry = leaves[k:k + len(float_carry)]
        acc = leaves[k + len(float_carry):k + len(float_carry) + len(float_consts)]
        rest = leaves[k + len(float_carry) + len(float_consts):]
        carry_in, xs, ct_ys = rest[:c], rest[c:n - k], rest[n - k:]
        _, sub = inline_body(builder, body, consts + carry_in + xs)
        seeds: dict[int, list] = {}
        for j, ct in [*zip((i - k for i in float_carry), ct_carry, strict=True), *zip(float_ys, ct_ys, strict=True)]:
            if isinstance(outv[j], Var):
                seeds.setdefault(id(outv[j]), []).append(ct.egg)
        wrt = [inv[i] for i in float_consts + float_carry + float_xs]
        got = sub.backward(body.jaxpr, wrt, seeds)

        def ct(i):
            g = got[id(inv[i])]
            return g if g is not None else sub.zero(inv[i].aval)

        summed = [sub.bind(B.add(a.egg, ct(i)), inv[i].aval)
                  for i, a in zip(float_consts, acc, strict=True)]
        return [ct(i) for i in float_carry] + summed + [ct(i) for i in float_xs]

    backward.body(avals, fill_backward)
    backward.out_avals = ([eqn.invars[i].aval for i in float_carry] + [eqn.invars[i].aval for i in float_consts]
                          + [eqn.invars[i].aval for i in float_xs])
    bwd = backward.results()
    got = placed(float_carry + float_consts + float_xs, bwd, n)
    return [g if active[i] else None for i, g in enumerate(got)]


# --- optimization_barrier: the derivative passes through a barrier of its own --------------------------


def barrier_jvp(builder, eqn: Eqn, tans: list) -> list:
    """The tangents of the nonzero operands through one barrier (JAX: `_optimization_barrier_jvp`)."""
    live = [i for i, t in enumerate(tans) if t is not None]
    results = barrier(builder, [tans[i] for i in live], [eqn.outvars[i].aval for i in live])
    return placed(live, results, len(eqn.outvars))


def barrier_vjp(builder, eqn: Eqn, cts: list, active: list[bool]) -> list:
    """The cotangents of the active operands through one barrier (the transpose of the JVP)."""
    live = [i for i, c in enumerate(cts) if c is not None and active[i]]
    results = barrier(builder, [cts[i] for i in live], [eqn.invars[i].aval for i in live])
    return placed(live, results, len(eqn.invars))


JVP_RULES = {"scan": scan_jvp, "while": while_jvp, "cond": cond_jvp, "optimization_barrier": barrier_jvp}
VJP_RULES = {"scan": scan_vjp, "cond": cond_vjp, "optimization_barrier": barrier_vjp}
