"""The primitive catalogue (ir/primitives) against everything keyed by primitive name.

The coverage matrix (transforms/coverage.py; `pytest -s` prints it) must have every property of every row
provided, or named in the row's gaps with a reason; a named gap that is provided now, and a registry entry
for a primitive without a row, fail too. The rows' operand and result counts must fit every equation of
the oracle fixtures and the shape rules' signatures.
"""

from __future__ import annotations

import inspect
import json
from functools import partial

import pytest

from ir.core import ClosedJaxpr
from ir.params import walk_values
from ir.primitives import PRIMITIVES, SHAPE_RULES, TRAITS, Variadic, _load_rules, primitives_with
from ir.text import parse_jaxpr
from tests.ir.test_text_roundtrip import TEXTS
from transforms.coverage import coverage_matrix, format_matrix, problems


def test_every_property_is_provided_or_a_named_gap():
    matrix = coverage_matrix()
    print("\n" + format_matrix(matrix))
    assert set(matrix) == set(PRIMITIVES)
    found = problems(matrix)
    assert not found, "\n".join(found)


def _fits(count, n: int) -> bool:
    return n >= count.minimum if isinstance(count, Variadic) else n == count


def _equations(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for value in walk_values(eqn.params):
            if isinstance(value, ClosedJaxpr):
                yield from _equations(value.jaxpr)


def test_operand_and_result_counts_fit_every_fixture_equation():
    seen = set()
    for case_id, text in TEXTS.items():
        for eqn in _equations(parse_jaxpr(text).jaxpr):
            row = PRIMITIVES[eqn.primitive]
            assert _fits(row.operands, len(eqn.invars)), (case_id, eqn.primitive, row.operands, len(eqn.invars))
            assert _fits(row.results, len(eqn.outvars)), (case_id, eqn.primitive, row.results, len(eqn.outvars))
            seen.add(eqn.primitive)
    assert len(seen) > 150


def _positional_operands(rule) -> tuple[int, bool]:
    """How many operands a shape rule names before its params, and whether it takes more (*avals)."""
    bound = 0
    while isinstance(rule, partial):
        bound += len(rule.args)
        rule = rule.func
    kinds = [p.kind for p in inspect.signature(rule).parameters.values()]
    named = sum(k == inspect.Parameter.POSITIONAL_OR_KEYWORD for k in kinds) - bound
    return named, inspect.Parameter.VAR_POSITIONAL in kinds


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_operand_count_fits_the_shape_rule(name):
    _load_rules()
    named, more = _positional_operands(SHAPE_RULES[name])
    count = PRIMITIVES[name].operands
    if isinstance(count, Variadic):
        assert more and named <= count.minimum, (named, more, count)
    else:
        assert named == count or (more and named <= count), (named, more, count)


def test_queries():
    assert primitives_with("cumulative") == ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
    assert primitives_with("elementwise", "term", operands=3) == ("regularized_incomplete_beta", "clamp")
    assert set(primitives_with("higher_order")) == {name for name, row in PRIMITIVES.items() if row.higher_order}
    assert all(set(row.traits) <= set(TRAITS) for row in PRIMITIVES.values())
    with pytest.raises(ValueError, match="unknown traits"):
        primitives_with("cumulativ")


def test_the_term_rows_are_the_rows_that_are_not_higher_order():
    first_order = {name for name, row in PRIMITIVES.items() if not row.higher_order}
    assert set(primitives_with("term")) == first_order
    assert {"sort", "svd", "split", "reduce", "optimization_barrier"} <= first_order


def test_eqjax_primitives_cli(capsys):
    from transforms.cli import main

    assert main(["primitives", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["problems"] == [] and set(out["primitives"]) == set(PRIMITIVES)
    assert out["primitives"]["cumsum"]["coverage"]["vjp"] == "rule"
    assert main(["primitives"]) == 0
    assert "rng_uniform eval: stateful" in capsys.readouterr().out
