"""E-graph → Jaxpr: the avals of every e-class, and the program an extraction chose.

`class_avals` gives each term e-class its aval by applying the primitives' shape rules (`ir`) to the
nodes bottom-up; every node of a class must agree, so a rule that changes a shape or dtype is caught
here (`UnsoundRewrite`). `decode` rebuilds a typechecked ClosedJaxpr from the chosen node of each
class, emitting each shared class once, in operand-first order.
"""

from __future__ import annotations

import numpy as np

from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.dtypes import from_name
from ir.errors import EqjaxError
from ir.primitives import abstract_eval, get_primitive
from ir.shapes.control import cond_results, scan_results, while_results
from ir.typecheck import typecheck
from rewrites.egraph_view import STRUCTURAL_OPS, EGraphView, ENode
from rewrites.encode import Encoding
from rewrites.terms import CONTROL_SPECS, SPECS, TermSpec, body_params, decode_fields

_LISTS = STRUCTURAL_OPS - {"get"}  # nodes that are not arrays: no aval


class UnsoundRewrite(EqjaxError):
    """Two terms in one e-class have different avals: some rule changed a shape or dtype."""


def node_params(node: ENode, in_avals: list[ShapedArray], enc: Encoding) -> dict:
    """The params of a primitive node: its fields (a control-flow node's but its bodies), or an opaque
    call's `extra` params."""
    if node.op == "call":
        prim, extra = node.payload
        return dict(enc.params_of(extra)) if extra else {}
    return decode_fields(node_spec(node), node.payload, in_avals)


def node_primitive(node: ENode) -> str:
    return node.payload[0] if node.op == "call" else node.op


def node_spec(node: ENode) -> TermSpec | None:
    """The term spec of a primitive node (a control-flow one's too); None for leaves, lists and `call`."""
    return SPECS.get(node.op) or CONTROL_SPECS.get(node.op)


def is_control(node: ENode) -> bool:
    """Whether a node is a control-flow primitive's (`scan`, `while`, `cond`), which holds bodies."""
    return node.op in CONTROL_SPECS


def args_classes(view: EGraphView, args_class: str, nil: str = "nil") -> list[str]:
    """The element classes of a cons list (`Args`; `Bodies` with nil="bnil"), in order."""
    out, cls = [], args_class
    while True:
        [i] = view.classes[cls][:1]
        node = view.nodes[i]
        if node.op == nil:
            return out
        head, cls = node.children
        out.append(head)


def output_classes(view: EGraphView) -> list[str]:
    """The program's output classes: the roots, or the elements of the one root cons list (`ROOT_LET`)."""
    if len(view.roots) == 1 and view.nodes[view.classes[view.roots[0]][0]].op in ("cons", "nil"):
        return args_classes(view, view.roots[0])
    return list(view.roots)


def operand_classes(view: EGraphView, node: ENode) -> list[str]:
    """A node's operand classes: its children, or the elements of its `Args` list (`call` and the
    constructors of variadic, multi-result and control-flow primitives)."""
    return args_classes(view, node.children[0]) if holds_args(node) else list(node.children)


def holds_results(node: ENode) -> bool:
    """Whether a node is a `Tup` of results, read through `get` (`call`, a multi-result or control-flow
    primitive's)."""
    spec = node_spec(node)
    return node.op == "call" or (spec is not None and spec.multiple_results)


def holds_args(node: ENode) -> bool:
    """Whether a node's operands are the elements of its first child, an `Args` list."""
    spec = node_spec(node)
    return node.op == "call" or (spec is not None and spec.arity is None)


def _leaf_aval(node: ENode, enc: Encoding) -> ShapedArray | None:
    if node.op == "inp":
        return enc.in_avals[node.payload[0]]
    if node.op == "const":
        return enc.const_avals[node.payload[0]]
    if node.op == "scalar":
        return ShapedArray((), from_name(node.payload[1]))
    if node.op == "barg":
        b, k = node.payload
        return enc.body_avals[b][k]
    return None


def class_avals(view: EGraphView, enc: Encoding) -> dict[str, ShapedArray | tuple[ShapedArray, ...]]:
    """The aval of every Arr class (a tuple of avals for a Tup class), by shape rules, bottom-up.

    A worklist visits each node once all its operand classes have an aval (and a control-flow node's body
    outputs: its results' types follow from them, `control_avals`); shape rules are memoized on (node,
    operand avals), since saturated e-graphs repeat the same node shapes many times."""
    avals: dict[str, ShapedArray | tuple] = {}
    operands = [_dependencies(view, n) for n in view.nodes]
    waiting = [len(set(deps)) for deps in operands]
    users: dict[str, list[int]] = {}
    for i, deps in enumerate(operands):
        for c in set(deps):
            users.setdefault(c, []).append(i)
    ready = [i for i, n in enumerate(view.nodes) if waiting[i] == 0 and n.op not in _LISTS]
    memo: dict = {}
    while ready:
        i = ready.pop()
        node, cls = view.nodes[i], view.node_class[i]
        got = _node_aval(view, node, [avals[c] for c in operands[i]], enc, memo)
        old = avals.get(cls)
        if old is None:
            avals[cls] = got
            for user in users.get(cls, ()):
                waiting[user] -= 1
                if waiting[user] == 0:
                    ready.append(user)
        elif not _same_avals(old, got):
            raise UnsoundRewrite(f"e-class {cls} holds terms of types {old} and {got} "
                                 f"(a rewrite changed the type; node {node.op}{node.payload})")
    return avals


def _dependencies(view: EGraphView, node: ENode) -> list[str]:
    """The classes whose avals a node's aval is computed from."""
    if node.op in _LISTS:
        return []
    if node.op == "get":
        return list(node.children)
    if is_control(node):
        return operand_classes(view, node) + [c for outs in body_outputs(view, node) for c in outs]
    return operand_classes(view, node)


def _same_avals(a, b) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(
            x.same_type(y) for x, y in zip(a, b, strict=True))
    return a.same_type(b)


def _node_aval(view: EGraphView, node: ENode, in_avals: list, enc: Encoding, memo: dict):
    leaf = _leaf_aval(node, enc)
    if leaf is not None:
        return leaf
    if node.op == "get":
        return in_avals[0][node.payload[0]]
    if is_control(node):
        return control_avals(view, node, in_avals, enc)
    key = (node.op, node.payload, tuple(in_avals))
    out = memo.get(key)
    if out is None:
        result = abstract_eval(node_primitive(node), in_avals, node_params(node, in_avals, enc))
        out = memo[key] = tuple(result) if holds_results(node) else result[0]
    return out


def decode(view: EGraphView, choice: dict[str, int], enc: Encoding,
           avals: dict | None = None, stats: dict | None = None) -> ClosedJaxpr:
    """The program made of the chosen node of each class reachable from the outputs. `stats`, if given,
    gets "hoisted": the equations emitted before a loop instead of in its body."""
    avals = class_avals(view, enc) if avals is None else avals
    program = _Scope(view, choice, enc, avals, [Var(a) for a in enc.in_avals], None, None, _BodyDeps(view, choice))
    closed = program.closed(output_classes(view))
    if stats is not None:
        stats["hoisted"] = program.hoisted()
    typecheck(closed)
    return closed


class _Scope:
    """One jaxpr being decoded: the program (leaves `inp`) or a body (leaves `barg(b, k)` of its id b).

    A loop body (scan, while) captures what does not depend on its own leaves: such a class is emitted in
    the enclosing scope, before the loop, and becomes a const input of the body (loop-invariant code
    motion: the bodies close over their consts in the e-graph, `rewrites.encode.closed_over`). A cond
    branch computes everything it uses itself: hoisting out of it would run work the taken branch does
    not need."""

    def __init__(self, view: EGraphView, choice: dict[str, int], enc: Encoding, avals: dict, invars: list[Var],
                 body: int | None, parent: _Scope | None, deps: _BodyDeps, captures: bool = False):
        self.view, self.choice, self.enc, self.avals, self.invars, self.body = view, choice, enc, avals, invars, body
        self.parent, self.deps, self.captures = parent, deps, captures
        self.constvars: list[Var] = []
        self.consts: list[np.ndarray] = []
        self.eqns: list[Eqn] = []
        self.atoms: dict[str, object] = {}  # class -> Var | Literal (a list of Vars for a Tup class)
        self.captured: list[tuple[Var, object]] = []  # (this body's const input, the enclosing scope's atom)
        self.children: list[_Scope] = []
        self.n_hoisted = 0

    def closed(self, outputs: list[str]) -> ClosedJaxpr:
        for out_cls in outputs:
            self.atom(out_cls)
        _drop_unused(self.eqns, [self.atoms[c] for c in outputs])
        invars = [v for v, _ in self.captured] + self.invars
        jaxpr = Jaxpr(self.constvars, invars, [self.atoms[c] for c in outputs], self.eqns)
        return ClosedJaxpr(jaxpr, self.consts)

    def hoisted(self) -> int:
        """Equations this scope and the scopes it encloses emitted because a body captured their result."""
        return self.n_hoisted + sum(child.hoisted() for child in self.children)

    def atom(self, cls: str):
        if cls not in self.atoms:
            _emit(self.view, self.choice, cls, self.atoms, self.build, self.invariant)
        return self.atoms[cls]

    def invariant(self, cls: str) -> bool:
        """Whether this body captures `cls` from the enclosing scope instead of computing it."""
        return (self.captures and self.view.nodes[self.choice[cls]].op != "scalar"
                and self.body not in self.deps.of(cls))

    def build(self, cls: str):
        if self.invariant(cls):
            before = len(self.parent.eqns)
            outer = self.parent.atom(cls)
            self.parent.n_hoisted += len(self.parent.eqns) - before
            if isinstance(outer, Literal):
                return outer
            inner = Var(outer.aval)
            self.captured.append((inner, outer))
            return inner
        view, enc = self.view, self.enc
        node = view.nodes[self.choice[cls]]
        if node.op == "inp":
            return self.invars[node.payload[0]]
        if node.op == "barg":
            b, k = node.payload
            if b != self.body:
                raise EqjaxError(f"a term of body {b} was extracted outside it (in {self.body or 'the program'})")
            return self.invars[k]
        if node.op == "scalar":
            dt = from_name(node.payload[1])
            return Literal(np.asarray(node.payload[0]).astype(dt.numpy)[()], ShapedArray((), dt))
        if node.op == "const":
            k = node.payload[0]
            if k in enc.literal_consts:
                return Literal(enc.consts[k][()], enc.const_avals[k])
            var = Var(enc.const_avals[k])
            self.constvars.append(var)
            self.consts.append(enc.consts[k])
            return var
        if node.op == "get":
            return self.atoms[node.children[0]][node.payload[0]]
        operands = [self.atoms[c] for c in operand_classes(view, node)]
        in_avals = [x.aval for x in operands]
        prim = node_primitive(node)
        params = node_params(node, in_avals, enc)
        if is_control(node):
            captures = prim != "cond" and enc.close_loops
            scopes = [self.body_scope(c, captures) for c in body_classes(view, node)]
            params = body_params(CONTROL_SPECS[prim], params, [closed for closed, _ in scopes])
            operands, params = _with_captured(prim, params, operands, [outer for _, outer in scopes])
        if holds_results(node):
            outs = [Var(a) for a in self.avals[cls]]
            self.eqns.append(Eqn(prim, operands, list(outs), params))
            return outs
        if get_primitive(prim).multiple_results:
            raise EqjaxError(f"{prim} has several results but is held as a single-result node")
        out = Var(self.avals[cls])
        self.eqns.append(Eqn(prim, operands, [out], params))
        return out

    def body_scope(self, body_cls: str, captures: bool) -> tuple[ClosedJaxpr, list]:
        """A body's jaxpr (captured consts first) and the enclosing scope's atoms it captured."""
        node = self.view.nodes[self.choice[body_cls]]
        [b] = node.payload
        scope = _Scope(self.view, self.choice, self.enc, self.avals, [Var(a) for a in self.enc.body_avals[b]], b,
                       self, self.deps, captures)
        closed = scope.closed(args_classes(self.view, node.children[0]))
        self.children.append(scope)
        return closed, [outer for _, outer in scope.captured]


def _with_captured(prim: str, params: dict, operands: list, captured: list[list]) -> tuple[list, dict]:
    """A control-flow equation's operands and params with each body's captured consts leading its consts."""
    if prim == "scan":  # `linear` marks operands for JAX's transposition, which a decoded scan has no use for
        [caps] = captured
        operands = caps + operands
        linear = {"linear": (False,) * len(operands)} if "linear" in params else {}
        return operands, {**params, "num_consts": params["num_consts"] + len(caps), **linear}
    if prim == "while":
        cond_caps, body_caps = captured
        ck = params["cond_nconsts"]
        counts = {"cond_nconsts": ck + len(cond_caps), "body_nconsts": params["body_nconsts"] + len(body_caps)}
        return cond_caps + operands[:ck] + body_caps + operands[ck:], {**params, **counts}
    return operands, params


class _BodyDeps:
    """Which bodies' leaves each class reaches through the chosen nodes (a body node's own leaves excluded)."""

    def __init__(self, view: EGraphView, choice: dict[str, int]):
        self.view, self.choice = view, choice
        self.memo: dict[str, frozenset[int]] = {}

    def children(self, cls: str) -> list[str]:
        return reached_classes(self.view, self.view.nodes[self.choice[cls]])

    def of(self, start: str) -> frozenset[int]:
        stack = [(start, False)]
        while stack:
            cls, expanded = stack.pop()
            if cls in self.memo:
                continue
            children = self.children(cls)
            if not expanded:
                stack.append((cls, True))
                stack.extend((c, False) for c in children if c not in self.memo)
                continue
            node = self.view.nodes[self.choice[cls]]
            deps = frozenset().union(*(self.memo[c] for c in children))
            if node.op == "barg":
                deps = frozenset({node.payload[0]})
            elif node.op == "body":
                deps = deps - {node.payload[0]}
            self.memo[cls] = deps
        return self.memo[start]


def reached_classes(view: EGraphView, node: ENode) -> list[str]:
    """The classes a node's value is computed from, through bodies too: a control-flow node's operands and
    Body classes, a body's outputs (the cons lists walked through)."""
    if node.op == "body":
        return args_classes(view, node.children[0])
    if is_control(node):
        return operand_classes(view, node) + body_classes(view, node)
    return _dependencies(view, node)


def body_classes(view: EGraphView, node: ENode) -> list[str]:
    """The Body classes of a control-flow node, in order."""
    return args_classes(view, node.children[1], nil="bnil")


def body_outputs(view: EGraphView, node: ENode) -> list[list[str]]:
    """Per Body of a control-flow node, its output classes."""
    return [args_classes(view, view.nodes[view.classes[b][0]].children[0]) for b in body_classes(view, node)]


def control_avals(view: EGraphView, node: ENode, avals: list[ShapedArray], enc: Encoding) -> tuple[ShapedArray, ...]:
    """A control-flow node's result avals from its operands' and its bodies' output avals (`avals`, in the
    order of `_dependencies`), by the rules its shape rule uses (`ir.shapes.control`)."""
    outs, k = [], len(operand_classes(view, node))
    operands = avals[:k]
    for body in body_outputs(view, node):
        outs.append(avals[k:k + len(body)])
        k += len(body)
    params = node_params(node, operands, enc)
    if node.op == "scan":
        return tuple(scan_results(params["length"], params["num_carry"], outs[0]))
    if node.op == "while":
        return tuple(while_results(operands[params["cond_nconsts"] + params["body_nconsts"]:], outs[1]))
    return tuple(cond_results(outs))


def _emit(view: EGraphView, choice: dict[str, int], start: str, atoms: dict, build, leaf) -> None:
    """Post-order over the chosen nodes from `start` (iterative: programs can be thousands deep); classes
    for which `leaf(cls)` holds are built without their operands."""
    stack = [(start, False)]
    while stack:
        cls, expanded = stack.pop()
        if cls in atoms:
            continue
        if expanded or leaf(cls):
            atoms[cls] = build(cls)
            continue
        stack.append((cls, True))
        node = view.nodes[choice[cls]]
        deps = list(node.children) if node.op == "get" else operand_classes(view, node)
        for child in reversed(deps):
            if child not in atoms:
                stack.append((child, False))


def _drop_unused(eqns: list[Eqn], outputs: list) -> None:
    """Results of multi-result equations that nothing reads become `_`."""
    used = {id(x) for x in outputs}
    for e in eqns:
        used.update(id(x) for x in e.invars)
    for e in eqns:
        if len(e.outvars) > 1:
            e.outvars = [v if id(v) in used else DropVar(v.aval) for v in e.outvars]
