"""Batching rules of the contractions: dot_general and conv_general_dilated (JAX's `_dot_general_batch_rule`
in jax/_src/lax/lax.py and `_conv_general_dilated_batch_rule` in jax/_src/lax/convolution.py), with the
batch axis of each batched operand and of the result at 0.

dot_general: the batch axis becomes a new leading batch dimension when both operands carry it, and a free
dimension of its own operand otherwise, so the other operand is never broadcast. dot_general orders its
result (batch dims, lhs free, rhs free): a transpose brings the batch axis to the front, unless it is there.

conv_general_dilated: the batch axis is folded into a dimension the convolution already has and split out
of the result: into the lhs batch dimension (lhs batched), the kernel's output features (rhs batched), or
both with the feature (or batch) group count multiplied by B, so that each batch element is its own group.
A fold is reshape -> transpose -> reshape (`_fold`), as JAX's `_reshape_axis_into` / `_reshape_axis_out_of`
compose; a step that would be an identity is left out.

Each combination of steps a site needs is its own rule, guarded by a case number its values compute
(`VmapBook.cases`), so no rule leaves identity ops. With B = 0 and both operands batched the group count would be
0: the result is zeros, as in JAX.

ragged_dot_general has no rule: JAX cannot batch it either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product
from math import prod

from egglog import Vec, i64

from ir.params import as_ints
from rewrites.terms import Arr, T
from transforms.batching.rule import INTS, STR, Site, VmapBook, moveaxis_perm, node, shifted

V = VmapBook("dot_conv")


# --- dot_general -----------------------------------------------------------------------------------------


def _dot_values(e: Site) -> dict:
    """The batched dimension numbers and where the batch axis lands in the result."""
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lc, rc, lb, rb = as_ints(lc), as_ints(rc), as_ints(lb), as_ints(rb)
    lhs, _ = e.in_avals
    if e.flags == "bb":
        lc, rc, lb, rb, at = shifted(lc), shifted(rc), (0, *shifted(lb)), (0, *shifted(rb)), 0
    elif e.flags == "bu":
        lc, lb, at = shifted(lc), shifted(lb), len(lb)  # the first lhs free dimension
    else:
        rc, rb, at = shifted(rc), shifted(rb), lhs.ndim - len(lc)  # the first rhs free dimension
    dims = ((list(lc), list(rc)), (list(lb), list(rb)))
    perm = moveaxis_perm(e.out_avals[0].ndim + 1, at, 0)
    return {"case": "front" if at == 0 else "moved", "dot": {**e.params, "dimension_numbers": dims}, "perm": perm}


_DOT_CASES = {"front": lambda x, y, *, dot, perm: dot(x, y),
              "moved": lambda x, y, *, dot, perm: T.transpose(dot(x, y), perm)}
_BOTH = ("front", "moved")
for _flags, _names, _how in (("bb", ("front",), "a new leading batch dimension of both operands"),
                             ("bu", _BOTH, "a free lhs dimension (after the batch dimensions of the result)"),
                             ("ub", _BOTH, "a free rhs dimension (after the lhs free dimensions of the result)")):
    V.cases("dot_general", _flags, {k: _DOT_CASES[k] for k in _names}, fn=_dot_values, dot=node("dot_general"),
            perm=INTS,
            math=f"the batch axis is {_how}; a transpose brings it to the front unless it is there")


# --- conv_general_dilated --------------------------------------------------------------------------------

Layout = Sequence[Sequence[str]]  # an array's dimensions, each a list of named parts (major to minor)


def _fold(src: Layout, dst: Layout, sizes: dict[str, int]) -> tuple[str, tuple, tuple, tuple]:
    """reshape -> transpose -> reshape taking an array laid out as `src` to `dst`: which steps are needed
    (a "0"/"1" per step) and their params (() for a step left out)."""
    parts_in = [p for d in src for p in d]
    parts_out = [p for d in dst for p in d]
    perm = tuple(parts_in.index(p) for p in parts_out)
    steps = (any(len(d) > 1 for d in src), perm != tuple(range(len(perm))), any(len(d) > 1 for d in dst))
    params = (tuple(sizes[p] for p in parts_in), perm, tuple(prod(sizes[p] for p in d) for d in dst))
    return ("".join("01"[s] for s in steps), *(v if s else () for v, s in zip(params, steps, strict=True)))


def _refold(x: Arr, steps: str, split, perm, merged) -> Arr:
    if steps[0] == "1":
        x = T.reshape(x, split)
    if steps[1] == "1":
        x = T.transpose(x, perm)
    if steps[2] == "1":
        x = T.reshape(x, merged)
    return x


def _with(layout: list[list[str]], at: int, parts: list[str]) -> list[list[str]]:
    return [*layout[:at], parts, *layout[at + 1:]]


def _layout(case: str, lhs: tuple, rhs: tuple, conv: dict, out: tuple, shape: tuple = (), dt: str = "") -> dict:
    """A conv case's values: the folds (split shape, permutation, merged shape) of the lhs, the rhs and the
    result, the conv's params, and the zeros' shape and dtype of the `empty` case."""
    (ls, lp, lm), (rs, rp, rm), (os, op, om) = lhs, rhs, out
    return {"case": case, "ls": ls, "lp": lp, "lm": lm, "rs": rs, "rp": rp, "rm": rm, "conv": conv, "os": os,
            "op": op, "om": om, "shape": shape, "dt": dt}


def _conv_values(e: Site) -> dict:
    """JAX's `_conv_general_dilated_batch_rule` as folds: the lhs, rhs and result layouts, the new params."""
    p = e.params
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = as_ints(dn.lhs_spec), as_ints(dn.rhs_spec), as_ints(dn.out_spec)
    features, batches = int(p["feature_group_count"]), int(p["batch_group_count"])
    lhs, rhs = e.in_avals
    out = e.out_avals[0]
    sizes = {"B": e.size, **{f"l{i}": n for i, n in enumerate(lhs.shape)},
             **{f"r{i}": n for i, n in enumerate(rhs.shape)}, **{f"o{i}": n for i, n in enumerate(out.shape)}}
    L, R, O = ([[f"{c}{i}"] for i in range(a.ndim)] for c, a in (("l", lhs), ("r", rhs), ("o", out)))
    lhs_src, lhs_dst, rhs_src, rhs_dst = L, L, R, R
    out_src, out_dst = O, [["B"], *O]
    conv = dict(p)
    if e.flags == "bb":
        if e.size == 0:
            return _layout("empty", ((),) * 3, ((),) * 3, p, ((),) * 3, (0, *out.shape), out.dtype.name)
        # each batch element is a group: lhs batch (batch groups) or features (feature groups), kernel
        # output features and result features all get the batch axis as their major part
        s = lhs_spec[0] if batches > 1 else lhs_spec[1]
        lhs_src, lhs_dst = [["B"], *L], _with(L, s, ["B", f"l{s}"])
        rhs_src, rhs_dst = [["B"], *R], _with(R, rhs_spec[0], ["B", f"r{rhs_spec[0]}"])
        out_src = _with(O, out_spec[1], ["B", f"o{out_spec[1]}"])
        conv.update({"batch_group_count": batches * e.size} if batches > 1 else
                    {"feature_group_count": features * e.size})
    elif e.flags == "bu":
        s, ob = lhs_spec[0], out_spec[0]
        lhs_src, lhs_dst = [["B"], *L], _with(L, s, ["B", f"l{s}"])
        if batches > 1:  # the batch groups stay outermost: (groups, B, batch / groups)
            sizes.update(g=batches, n=lhs.shape[s] // batches)
            lhs_src, lhs_dst = [["B"], *_with(L, s, ["g", "n"])], _with(L, s, ["g", "B", "n"])
        out_src = _with(O, ob, ["B", f"o{ob}"])
    else:
        r, f = rhs_spec[0], out_spec[1]
        rhs_src, rhs_dst = [["B"], *R], _with(R, r, ["B", f"r{r}"])
        out_src = _with(O, f, ["B", f"o{f}"])
        groups = max(features, batches)
        if groups > 1:  # the groups stay outermost in the output features: (groups, B, features / groups)
            sizes.update(G=groups, m=rhs.shape[r] // groups)
            rhs_src, rhs_dst = [["B"], *_with(R, r, ["G", "m"])], _with(R, r, ["G", "B", "m"])
            out_src, out_dst = _with(O, f, ["G", "B", "m"]), [["B"], *_with(O, f, ["G", "m"])]
    lf, *lhs_fold = _fold(lhs_src, lhs_dst, sizes)
    rf, *rhs_fold = _fold(rhs_src, rhs_dst, sizes)
    of, *out_fold = _fold(out_src, out_dst, sizes)
    return _layout(f"{lf}-{rf}-{of}", lhs_fold, rhs_fold, conv, out_fold)


def _conv_case(name: str) -> Callable:
    """The rule of one case: the folds its name lists ("<lhs>-<rhs>-<result>" steps), or zeros."""
    lf, rf, of = name.split("-") if name != "empty" else ("",) * 3

    def f(x, w, *, ls, lp, lm, rs, rp, rm, conv, os, op, om, shape, dt):
        if name == "empty":
            return T.broadcast_in_dim(Arr.scalar(0.0, dt), shape, Vec[i64].empty())
        return _refold(conv(_refold(x, lf, ls, lp, lm), _refold(w, rf, rs, rp, rm)), of, os, op, om)

    return f


def _steps(*patterns: str) -> list[str]:
    """Step strings, "?" standing for either: "0?1" -> ["001", "011"]."""
    return ["".join(c) for p in patterns for c in product(*("01" if s == "?" else s for s in p))]


# The step combinations each operand pattern can need: a fold into an existing dimension transposes
# unless the batch axis lands first; splitting groups out always transposes.
_CONV_FOLDS = {
    "bu": [f"{lf}-000-{of}" for lf in _steps("0?1", "111") for of in _steps("1?0")],
    "ub": [*(f"000-{rf}-{of}" for rf in _steps("0?1") for of in _steps("1?0")), "000-111-111"],
    "bb": [*(f"{lf}-{rf}-{of}" for lf in _steps("0?1") for rf in _steps("0?1") for of in _steps("1?0")),
           "empty"],
}
_CONV_TYPES = {"ls": INTS, "lp": INTS, "lm": INTS, "rs": INTS, "rp": INTS, "rm": INTS,
               "conv": node("conv_general_dilated"), "os": INTS, "op": INTS, "om": INTS, "shape": INTS, "dt": STR}
for _flags, _how in (("bu", "into the lhs batch dimension (inside the batch groups)"),
                     ("ub", "into the kernel output features (inside the feature or batch groups)"),
                     ("bb", "into the lhs features (batch) and kernel output features, B times the groups")):
    V.cases("conv_general_dilated", _flags, {name: _conv_case(name) for name in _CONV_FOLDS[_flags]},
            fn=_conv_values, **_CONV_TYPES,
            math=f"the batch axis is folded {_how}, then split out of the result (JAX's "
                 f"_conv_general_dilated_batch_rule)")
