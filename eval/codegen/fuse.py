"""Fusion of elementwise chains with numexpr (`compile_numpy(closed, fuse=True)`).

A float32/float64 elementwise equation whose result is read once, by another fusable equation of the
same shape, and is not a result of the function, is not materialized: it becomes a subexpression of its
reader. Each tree of at least two equations over at least `MIN_SIZE` elements is one numexpr call
(a `NumExpr` compiled once per program), which streams the operands through cache-sized blocks on
numexpr's threads instead of writing every intermediate array to memory.

Rounding: numexpr computes + - * /, sqrt, abs, comparisons and `where` exactly as NumPy does, so a tree
of those is bit-identical; its transcendental functions (`ROUNDS_DIFFERENTLY`) are the C library's
rather than NumPy's own SIMD loops and may differ in the last bits (`rounding_differences` measures by
how much on this machine). The default, `fuse=False`, is bit for bit the interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ir.core import Eqn, Jaxpr, Literal, Var

MIN_SIZE = 16384  # below this numexpr's call overhead (a few µs) outweighs what fusion saves
_FLOATS = ("f32", "f64")

_INFIX = {"add": "+", "add_any": "+", "sub": "-", "mul": "*", "div": "/",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
              "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh",
              "atanh": "arctanh", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
              "sqrt": "sqrt", "abs": "abs", "atan2": "arctan2"}
ROUNDS_DIFFERENTLY = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                      "atanh", "exp", "expm1", "log", "log1p", "atan2", "logistic")


def _text(eqn: Eqn, a: list[str]) -> str | None:
    """The numexpr text of a fusable equation over its operands' texts, or None."""
    name = eqn.primitive
    if name in _INFIX:
        return f"({a[0]} {_INFIX[name]} {a[1]})"
    if name in _FUNCTIONS:
        return f"{_FUNCTIONS[name]}({', '.join(a)})"
    if name == "neg":
        return f"(-{a[0]})"
    if name == "square":
        return f"({a[0]} * {a[0]})"
    if name == "rsqrt":
        return f"(1 / sqrt({a[0]}))"
    if name == "logistic":
        return f"(1 / (1 + exp(-{a[0]})))"
    if name == "select_n" and len(a) == 3 and eqn.invars[0].aval.dtype.short == "bool":
        return f"where({a[0]}, {a[2]}, {a[1]})"
    if name == "integer_pow":
        from eval.codegen.inline import _integer_pow
        op = _integer_pow(eqn)
        return None if op is None else op.template.format(a[0])
    if name in ("max", "min") and any(isinstance(x, Literal) for x in eqn.invars):
        from eval.codegen.inline import _max_min
        op = _max_min(eqn, name, eqn.invars[0].aval.dtype.short)
        return None if op is None else op.template.replace("_np.where", "where").format(*a)
    return None


def fusable(eqn: Eqn) -> bool:
    if len(eqn.outvars) != 1 or eqn.params and set(eqn.params) - {"accuracy", "y"}:
        return False
    out = eqn.outvars[0].aval
    operand_dtypes = {x.aval.dtype.short for x in eqn.invars if not (x.aval.dtype.short == "bool")}
    if out.dtype.short not in (*_FLOATS, "bool") or not operand_dtypes <= set(_FLOATS) or len(operand_dtypes) > 1:
        return False
    if any(not _broadcasts(x.aval.shape, out.shape) for x in eqn.invars):
        return False
    return _text(eqn, [f"x{i}" for i in range(len(eqn.invars))]) is not None


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """A rank-0 operand, or one of the result's rank with size-1 dims where it is broadcast."""
    return shape == () or (len(shape) == len(to) and all(a in (1, b) for a, b in zip(shape, to, strict=True)))


@dataclass
class Tree:
    """A fused tree: its numexpr text over `leaves` (vars and literals), rooted at one equation."""

    text: str
    leaves: list
    size: int  # equations fused


def plan(jaxpr: Jaxpr, exclude=frozenset()) -> tuple[dict[int, Tree], set[int]]:
    """The fused trees by root equation index, and the indices of the equations folded into them (none
    of the equations of `exclude`)."""
    readers: dict[int, list[int]] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for x in eqn.invars:
            if isinstance(x, Var):
                readers.setdefault(id(x), []).append(i)
    outputs = {id(x) for x in jaxpr.outvars if isinstance(x, Var)}
    ok = [i not in exclude and fusable(e) for i, e in enumerate(jaxpr.eqns)]
    producer = {id(e.outvars[0]): i for i, e in enumerate(jaxpr.eqns) if ok[i]}
    folded = set()
    for i, eqn in enumerate(jaxpr.eqns):
        if not ok[i] or id(eqn.outvars[0]) in outputs:
            continue
        users = readers.get(id(eqn.outvars[0]), [])
        if len(users) == 1 and ok[users[0]] and jaxpr.eqns[users[0]].outvars[0].aval.shape == eqn.outvars[0].aval.shape:
            folded.add(i)
    trees = {}
    for i, eqn in enumerate(jaxpr.eqns):
        if ok[i] and i not in folded:
            leaves: list = []
            text, size = _build(jaxpr, i, folded, producer, leaves)
            if size >= 2 and eqn.outvars[0].aval.size >= MIN_SIZE:
                trees[i] = Tree(text, leaves, size)
    folded = {j for j in folded if _root(jaxpr, j, folded, readers) in trees}
    return trees, folded


def _root(jaxpr: Jaxpr, j: int, folded: set[int], readers: dict) -> int:
    while j in folded:
        j = readers[id(jaxpr.eqns[j].outvars[0])][0]
    return j


def _build(jaxpr: Jaxpr, i: int, folded: set[int], producer: dict, leaves: list) -> tuple[str, int]:
    eqn, texts, size = jaxpr.eqns[i], [], 1
    for x in eqn.invars:
        j = producer.get(id(x)) if isinstance(x, Var) else None
        if j is not None and j in folded:
            text, n = _build(jaxpr, j, folded, producer, leaves)
            texts.append(text)
            size += n
        else:
            if not any(x is leaf for leaf in leaves):
                leaves.append(x)
            texts.append(f"v{next(k for k, leaf in enumerate(leaves) if leaf is x)}")
    return _text(eqn, texts), size


def compile_tree(tree: Tree):
    """The numexpr program of a tree, called with its leaves in order."""
    from numexpr.necompiler import NumExpr, getType

    signature = [(f"v{k}", getType(np.zeros((), x.aval.dtype.numpy))) for k, x in enumerate(tree.leaves)]
    return NumExpr(tree.text, signature=signature)


def rounding_differences(n: int = 100_000, seed: int = 0) -> dict[str, dict]:
    """For each function numexpr computes differently, on `n` float64 and float32 samples of its domain:
    the fraction of results that differ from NumPy's and the largest difference in ulps."""
    from numexpr import evaluate
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    numpy_fns = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
                 "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
                 "acosh": np.arccosh, "atanh": np.arctanh, "exp": np.exp, "expm1": np.expm1, "log": np.log,
                 "log1p": np.log1p, "atan2": np.arctan2, "logistic": expit}
    domains = {"asin": (-1, 1), "acos": (-1, 1), "atanh": (-1, 1), "acosh": (1, 50), "log": (1e-3, 1e3),
               "log1p": (-0.9, 1e3), "sinh": (-20, 20), "cosh": (-20, 20), "exp": (-50, 50), "expm1": (-50, 50)}
    out = {}
    for name in ROUNDS_DIFFERENTLY:
        for dtype in (np.float64, np.float32):
            lo, hi = domains.get(name, (-10, 10))
            x = rng.uniform(lo, hi, n).astype(dtype)
            y = rng.uniform(lo, hi, n).astype(dtype)
            want = numpy_fns[name](x, y) if name == "atan2" else numpy_fns[name](x)
            if name == "logistic":
                got = evaluate("1 / (1 + exp(-x))", local_dict={"x": x, "one": dtype(1)})
            else:
                got = evaluate(f"{_FUNCTIONS[name]}(x, y)" if name == "atan2" else f"{_FUNCTIONS[name]}(x)",
                               local_dict={"x": x, "y": y})
            got = got.astype(dtype)
            ulps = np.abs(got - want) / np.spacing(np.abs(want).astype(dtype))
            out[f"{name} {np.dtype(dtype).name}"] = {"differ": float(np.mean(got != want)),
                                                     "max_ulp": float(np.nanmax(ulps))}
    return out
