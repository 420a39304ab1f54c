"""A read-only view of a saturated e-graph, the only thing extraction sees (it knows nothing of egglog).

    EGraphView ::= nodes (node index -> ENode), node_class (node index -> e-class id),
                   classes (e-class id -> node indices), roots (e-class ids to extract, in order)
    ENode      ::= op(children: e-class ids, payload: hashable non-array data)

Extractors work on dense integer indices: `view.index` numbers the classes in the order of
`view.classes` and lists each node's class and children by that number. Every ordering here comes
from list order or from `node_key`, never from hashing, so results are identical across processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

# Nodes of eqjax's term language that are no equation although they have children: operand and body lists, a
# body, and the projection of a multi-result equation's tuple (`rewrites.terms`).
STRUCTURAL_OPS = frozenset({"get", "cons", "nil", "body", "bcons", "bnil"})


@dataclass(frozen=True)
class ENode:
    op: str  # term constructor: "add", "reduce_sum", "input", "scalar", "opaque", ...
    children: tuple[str, ...]  # e-class ids of the array operands, in order
    payload: tuple = ()  # params; opaque to extraction


class Index(NamedTuple):
    """The view on dense ints: class number c in range(len(class_ids)), node number as in `nodes`."""

    class_ids: list[str]  # class number -> id
    class_of: dict[str, int]  # id -> class number
    node_class: list[int]  # node -> class number
    children: list[tuple[int, ...]]  # node -> child class numbers, with multiplicity, in order
    members: list[list[int]]  # class number -> its nodes
    roots: list[int]  # root class numbers, in order (may repeat)


@dataclass
class EGraphView:
    nodes: list[ENode]
    node_class: list[str]
    classes: dict[str, list[int]]
    roots: list[str]
    # The nodes constant folding retired (`subsume`), with their classes: not extractable, so not among `nodes`;
    # a derivation may pass through them (`with_retired`, `rewrites.explain`).
    retired: list[tuple[str, ENode]] = field(default_factory=list)

    def __post_init__(self):
        if len(self.node_class) != len(self.nodes):
            raise ValueError(f"{len(self.nodes)} nodes but {len(self.node_class)} node_class entries")
        listed = sorted(i for members in self.classes.values() for i in members)
        if listed != list(range(len(self.nodes))):
            raise ValueError("classes must list every node index exactly once")
        for cid, members in self.classes.items():
            for i in members:
                if self.node_class[i] != cid:
                    raise ValueError(f"node {i} is listed in class {cid!r} but node_class says "
                                     f"{self.node_class[i]!r}")
        for i, node in enumerate(self.nodes):
            for child in node.children:
                if child not in self.classes:
                    raise ValueError(f"node {i} ({node.op}) has child class {child!r}, "
                                     "which is not in the e-graph")
        for root in self.roots:
            if root not in self.classes:
                raise ValueError(f"root class {root!r} is not in the e-graph")

    @classmethod
    def from_classes(cls, classes: Mapping[str, Sequence[ENode]], roots: Sequence[str]) -> EGraphView:
        """A view from `{class id: [ENode, ...]}`; nodes are numbered in that order."""
        nodes, node_class, members = [], [], {}
        for cid, enodes in classes.items():
            members[cid] = list(range(len(nodes), len(nodes) + len(enodes)))
            nodes.extend(enodes)
            node_class.extend([cid] * len(enodes))
        return cls(nodes, node_class, members, list(roots))

    def with_retired(self) -> EGraphView:
        """This view with its retired nodes among the nodes (after the others, so every node keeps its number),
        those whose classes are all in it: for explaining a derivation, which may fold a literal subterm on the
        way (`x + 3x -> (1+3)x -> 4x`), not for extraction."""
        nodes, node_class = list(self.nodes), list(self.node_class)
        classes = {cid: list(members) for cid, members in self.classes.items()}
        known = set(classes) | {cid for cid, _ in self.retired}
        for cid, node in self.retired:
            if all(c in known for c in node.children):
                classes.setdefault(cid, []).append(len(nodes))
                nodes.append(node)
                node_class.append(cid)
        return EGraphView(nodes, node_class, classes, list(self.roots))

    def node_key(self, i: int) -> str:
        """A canonical string of node i (op, payload, children) for deterministic tie-breaking."""
        node = self.nodes[i]
        return f"{node.op}{canonical(node.payload)}({','.join(node.children)})"

    @cached_property
    def index(self) -> Index:
        class_ids = list(self.classes)
        class_of = {cid: c for c, cid in enumerate(class_ids)}
        return Index(class_ids, class_of, [class_of[cid] for cid in self.node_class],
                     [tuple(class_of[ch] for ch in node.children) for node in self.nodes],
                     [list(self.classes[cid]) for cid in class_ids], [class_of[r] for r in self.roots])

    @cached_property
    def is_equation(self) -> list[bool]:
        """Whether each node stands for an equation: it has children and is no list, body or projection
        (`STRUCTURAL_OPS`). Extraction breaks cost ties by how many a term holds."""
        return [bool(node.children) and node.op not in STRUCTURAL_OPS for node in self.nodes]

    @cached_property
    def node_rank(self) -> list[int]:
        """Each node's position in (node_key, node index) order: the tie-breaker of every extractor."""
        order = sorted(range(len(self.nodes)), key=lambda i: (self.node_key(i), i))
        rank = [0] * len(order)
        for position, i in enumerate(order):
            rank[i] = position
        return rank


def canonical(value: Any) -> str:
    """`repr` with sets and dicts sorted, so the text never depends on hash randomization."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(canonical, value))) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(sorted(f"{canonical(k)}: {canonical(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(map(canonical, value))
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


def reachable(view: EGraphView, roots: Sequence[str] | None = None) -> list[str]:
    """Classes reachable from `roots` (default: the view's) through any node, in breadth-first order."""
    ix = view.index
    start = ix.roots if roots is None else [ix.class_of[r] for r in roots]
    seen = [False] * len(ix.class_ids)
    order = []
    for c in start:
        if not seen[c]:
            seen[c] = True
            order.append(c)
    for c in order:
        for n in ix.members[c]:
            for d in ix.children[n]:
                if not seen[d]:
                    seen[d] = True
                    order.append(d)
    return [ix.class_ids[c] for c in order]
