"""The hypothesis profile of the run (`HYPOTHESIS_PROFILE`, default `ci`; tests/conftest.py loads it). Tests
that run every row of a deterministic table nightly and a subset under `ci` read `NIGHTLY`, or take the subset
with `ci_share`."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
NIGHTLY = PROFILE == "nightly"
# Random programs of the semantics run (tests/rewrites/test_semantics_run.py): ~1 s each under three rule sets.
SEMANTICS_PROGRAMS = 2000 if NIGHTLY else 16

T = TypeVar("T")


def ci_share(items: Iterable[T], keep_every: int | None, by: Callable[[T], Hashable] | None = None) -> list[T]:
    """Every item nightly; under `ci` a deterministic share in the items' given order (which the caller keeps
    stable): within each group of `by(item)` (one group when `by` is None) the 1st, (k+1)-th, (2k+1)-th... item
    for `keep_every=k`, or only the first when `keep_every` is None. Every group keeps at least one item."""
    items = list(items)
    if NIGHTLY:
        return items
    seen: dict[Hashable, int] = {}
    kept = []
    for item in items:
        group = by(item) if by is not None else None
        index = seen[group] = seen.get(group, -1) + 1
        if index == 0 or keep_every is not None and index % keep_every == 0:
            kept.append(item)
    return kept
