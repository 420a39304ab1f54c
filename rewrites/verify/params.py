"""Param variables by example: a rule over any permutation, axes, axis, exponent or dtype is checked at a
few sampled values of them (every permutation of a small rank, the first, last and all axes, a slice's
bounds for the whole array, its first row and the rest, ...).

    bindings(rule, shape) -> [{"p": (1, 0)}, {"p": (0, 1)}, ...]
    bind(rule, binding) -> the rule with those values in place of its param variables

Evidence for the sampled values only: a rule true for them may still be false for others (the verdict's
`details` list the values checked). A param variable of another kind (strides, gather's dimension numbers,
...) has no values to sample: such a rule stays `unknown`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

from ir import dtypes as D
from rewrites.pattern import App, Param, PatternRule
from rewrites.verify.instantiate import EXTRA, NotInstantiable, extra_field_vars

MAX_BINDINGS = 4  # applicable ones per array shape (`arrays.array_instances`)
MAX_COMBINATIONS = 64


def _axes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    rank = len(shape)
    return list(dict.fromkeys([(0,), (rank - 1,), tuple(range(rank)), ()]))


def _prod(shape: tuple[int, ...]) -> int:
    return int(math.prod(shape))


def _slice_starts(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The whole array's start, and one past it on the first axis: with `_slice_limits`, a slice and the one
    after it (`x[:1]`, `x[1:]`), so that rules about adjacent or nested slices meet an instance."""
    zeros = (0,) * len(shape)
    return [zeros, (1, *zeros[1:])] if shape else [zeros]


def _slice_limits(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    return [(1, *shape[1:]), tuple(shape)] if shape else [()]


# the candidate values of a param, given the operands' shape (those that do not type-check are skipped)
PARAM_CHOICES = {
    "permutation": lambda shape: list(itertools.permutations(range(len(shape)))),
    "axes": _axes,
    "dimensions": _axes,
    "axis": lambda shape: list(range(len(shape))),
    "dimension": lambda shape: list(range(len(shape))),  # concatenate's
    "y": lambda shape: [2, 3, -1, 0],  # integer_pow exponents
    "new_dtype": lambda shape: [D.float32, D.float64, D.int32],
    "new_sizes": lambda shape: [(_prod(shape),), tuple(reversed(shape)), (1, *shape)],
    "shape": lambda shape: [(2, *shape), (*shape, 2), shape],  # broadcast_in_dim targets
    "broadcast_dimensions": lambda shape: [tuple(range(1, len(shape) + 1)), tuple(range(len(shape)))],
    "dimension_numbers": lambda shape: _contractions(len(shape)),
    "start_indices": _slice_starts,
    "limit_indices": _slice_limits,
}


def _contractions(rank: int) -> list:
    """dot_general dimension numbers for operands of one shape of `rank`: x·y, x·yᵀ, and batched x·yᵀ."""
    if rank == 0:
        return [(([], []), ([], []))]
    last = rank - 1
    out = [(([last], [0]), ([], [])), (([last], [last]), ([], []))]
    return out + ([(([last], [last]), ([0], [0]))] if rank > 1 else [])


def param_uses(p, out: dict[str, str] | None = None) -> dict[str, str]:
    """Each param variable (but `extra`, whose fields without a default count as their own) and the param it
    stands for."""
    out = {} if out is None else out
    if isinstance(p, App):
        for key, value in p.params:
            if isinstance(value, Param) and key != EXTRA:
                out.setdefault(value.name, key)
        for name, field in extra_field_vars(p).items():
            out.setdefault(name, field)
        for a in p.args:
            param_uses(a, out)
    return out


def bindings(rule: PatternRule, shape: tuple[int, ...]) -> list[dict[str, Any]]:
    """Candidate values of the rule's param variables for operands of `shape` (every combination, up to
    `MAX_COMBINATIONS`); the caller keeps those that type-check."""
    uses = param_uses(rule.rhs, param_uses(rule.lhs))
    missing = [f"{name} ({key})" for name, key in uses.items() if key not in PARAM_CHOICES]
    if missing:
        raise NotInstantiable(f"param variables {', '.join(missing)}: no values to sample")
    names = list(uses)
    combos = itertools.product(*[PARAM_CHOICES[uses[n]](shape) for n in names])
    return [dict(zip(names, c, strict=True)) for c in itertools.islice(combos, MAX_COMBINATIONS)]


def _substitute(p, binding: dict[str, Any]):
    if not isinstance(p, App):
        return p
    params = tuple((k, binding.get(v.name, v) if isinstance(v, Param) and k != EXTRA else v) for k, v in p.params)
    carried = tuple((field, binding[name]) for name, field in extra_field_vars(p).items() if name in binding)
    return App(p.prim, tuple(sorted(params + carried)), tuple(_substitute(a, binding) for a in p.args))


def bind(rule: PatternRule, binding: dict[str, Any]) -> PatternRule:
    return dataclasses.replace(rule, lhs=_substitute(rule.lhs, binding), rhs=_substitute(rule.rhs, binding))


def show(binding: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(value)) for name, value in binding.items())
