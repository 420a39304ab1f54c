"""The list functions variadic transform rules build with (transforms/arglists.py): each row is a term and the
plain list its rules must merge it with, and lists they must not merge it with (lengths 0 to 3)."""

from __future__ import annotations

import pytest
from egglog import EGraph, eq, ruleset, run

from rewrites.terms import Arr, args_list
from transforms.arglists import RULES, concat, drop, onehot, snoc, take

a, b, c, h, z = (Arr.inp(k) for k in range(5))

# (name, term, the list it equals, a list it differs from)
ROWS = [
    ("snoc-empty", snoc(args_list([]), h), [h], []),
    ("snoc", snoc(args_list([a, b]), h), [a, b, h], [h, a, b]),
    ("onehot-first", onehot(args_list([a, b, c]), 0, h, z), [h, z, z], [z, h, z]),
    ("onehot-last", onehot(args_list([a, b, c]), 2, h, z), [z, z, h], [z, z, z]),
    ("onehot-past-the-end", onehot(args_list([a, b]), 5, h, z), [z, z], [z, h]),
    ("onehot-empty", onehot(args_list([]), 0, h, z), [], [h]),
    ("concat", concat(args_list([a]), args_list([b, c])), [a, b, c], [b, c, a]),
    ("concat-empty", concat(args_list([]), args_list([b])), [b], []),
    ("take", take(args_list([a, b, c]), 2), [a, b], [a, b, c]),
    ("take-none", take(args_list([a, b]), 0), [], [a]),
    ("drop", drop(args_list([a, b, c]), 2), [c], [a, b, c]),
    ("drop-all", drop(args_list([a, b]), 2), [], [b]),
]


@pytest.mark.parametrize(("name", "term", "equal", "different"), ROWS, ids=[r[0] for r in ROWS])
def test_expands_to_the_plain_list(name, term, equal, different):
    egraph = EGraph()
    egraph.register(term, args_list(different))
    egraph.run(run(ruleset(*(e for r in RULES for e in r.egg))).saturate())
    assert egraph.check_bool(eq(term).to(args_list(equal))), name
    assert not egraph.check_bool(eq(term).to(args_list(different))), name
