"""Pytrees: nested tuples, lists and dicts (keys sorted, as JAX does) with arrays at the leaves.

`None` is a container with no children (so it has no leaves); anything else that is not a
tuple, list or dict is a leaf. A `TreeDef` records the structure; it is hashable and compares
by structure, so transforms can cache on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_LEAF = "*"


class TreeDef:
    """The shape of a pytree: a node kind, its static data (dict keys) and its children."""

    __slots__ = ("kind", "data", "children", "num_leaves", "_hash")

    def __init__(self, kind: str, data: Any = None, children: tuple[TreeDef, ...] = ()):
        self.kind = kind  # "*" leaf, "tuple", "list", "dict" or "None"
        self.data = data  # the sorted keys of a dict node
        self.children = children
        self.num_leaves = 1 if kind == _LEAF else sum(c.num_leaves for c in children)
        self._hash = hash((kind, data, children))

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeDef) and self._hash == other._hash and
                (self.kind, self.data, self.children) == (other.kind, other.data, other.children))

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.kind == _LEAF:
            return "*"
        if self.kind == "None":
            return "None"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.data, self.children, strict=True))
            return "{" + inner + "}"
        if self.kind == "tuple":
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        return f"[{inner}]"

    def unflatten(self, leaves) -> Any:
        return tree_unflatten(self, leaves)


LEAF = TreeDef(_LEAF)


def tree_flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    """The leaves of `tree` in order, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(node: Any, leaves: list[Any]) -> TreeDef:
    if node is None:
        return TreeDef("None")
    if type(node) is tuple:
        return TreeDef("tuple", None, tuple(_flatten(c, leaves) for c in node))
    if type(node) is list:
        return TreeDef("list", None, tuple(_flatten(c, leaves) for c in node))
    if type(node) is dict:
        keys = tuple(sorted(node))
        return TreeDef("dict", keys, tuple(_flatten(node[k], leaves) for k in keys))
    leaves.append(node)
    return LEAF


def tree_unflatten(treedef: TreeDef, leaves) -> Any:
    """Rebuild a pytree of structure `treedef` from its leaves."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree {treedef} has {treedef.num_leaves} leaves, got {len(leaves)}")
    it = iter(leaves)
    return _unflatten(treedef, it)


def _unflatten(treedef: TreeDef, it) -> Any:
    kind = treedef.kind
    if kind == _LEAF:
        return next(it)
    if kind == "None":
        return None
    children = [_unflatten(c, it) for c in treedef.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    return dict(zip(treedef.data, children, strict=True))


def tree_leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> TreeDef:
    return tree_flatten(tree)[1]


def tree_map(f: Callable, tree: Any, *rest: Any) -> Any:
    """Apply `f` leafwise; the trees in `rest` must have the same structure as `tree`."""
    leaves, treedef = tree_flatten(tree)
    others = []
    for other in rest:
        other_leaves, other_def = tree_flatten(other)
        if other_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} vs {other_def}")
        others.append(other_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others, strict=True)])
