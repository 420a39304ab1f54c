"""`ir.strategies.programs`: its programs typecheck, print and re-parse to the same text, evaluate to
their declared avals, honour the options, and the default strategy reaches every primitive it covers."""

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis.vendor.pretty import pretty

from eval import eval_jaxpr
from ir import Literal, parse_jaxpr
from ir.dtypes import from_name
from ir.strategies import DEFAULT_PRIMS, FINITE_BOUND, Program, programs
from ir.typecheck import typecheck


def used_primitives(p: Program) -> set[str]:
    return {eqn.primitive for eqn in p.closed.eqns}


def literal_operands(p: Program) -> list[Literal]:
    return [x for e in p.closed.eqns for x in e.invars if isinstance(x, Literal)]


def uses(p: Program, var) -> int:
    return sum(x is var for e in p.closed.eqns for x in e.invars)


def check_program(p: Program) -> list[np.ndarray]:
    """Typecheck, print → parse → print, evaluate; return the outputs."""
    typecheck(p.closed)
    text = str(p.closed)
    assert str(parse_jaxpr(text)) == text
    assert [(a.shape, a.dtype) for a in p.args] == [(v.shape, v.dtype.numpy) for v in p.closed.in_avals]
    with np.errstate(all="ignore"):
        outs = eval_jaxpr(p.closed, *p.args)
    assert [(np.shape(o), np.asarray(o).dtype) for o in outs] == \
        [(v.shape, v.dtype.numpy) for v in p.closed.out_avals]
    return outs


@given(programs())
def test_programs_typecheck_roundtrip_and_evaluate(p):
    check_program(p)
    assert 1 <= len(p.closed.eqns) <= 12
    assert 1 <= len(p.closed.jaxpr.outvars) <= 3
    assert used_primitives(p) <= set(DEFAULT_PRIMS)
    for a in p.args:
        assert np.all(np.isfinite(a)) and np.all(np.abs(a) <= FINITE_BOUND) and not np.any(np.signbit(a) & (a == 0))


OPTIONS = {
    "few equations": dict(max_eqns=3),
    "one dtype": dict(dtypes=("float32",)),
    "three dtypes": dict(dtypes=("bfloat16", "float32", "float64")),
    "rank 3 and unit dims": dict(shapes=((1,), (4,), (2, 1, 3), (2, 2, 3))),
    "arithmetic only": dict(primitives=("add", "mul", "neg")),
    "shape ops only": dict(primitives=("transpose", "reshape", "broadcast_in_dim"), shapes=((2, 3),)),
    "select on one comparison": dict(primitives=("select_n", "lt")),
    "no literals": dict(literals=()),
    "special values": dict(special_values=True),
}


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_programs_honour_their_options(options):
    @given(programs(**options))
    def check(p):
        check_program(p)
        assert 1 <= len(p.closed.eqns) <= options.get("max_eqns", 12)
        assert used_primitives(p) <= set(options.get("primitives", DEFAULT_PRIMS))
        dtypes = {from_name(name) for name in options.get("dtypes", ("float64", "float32"))}
        values = [*p.closed.jaxpr.invars, *(v for e in p.closed.eqns for v in e.outvars)]
        assert {v.aval.dtype for v in values} <= dtypes | {from_name("bool")}
        assert {v.shape for v in p.closed.in_avals} <= set(options.get("shapes", ((), (3,), (2, 3))))
        if not options.get("literals", True):
            assert not literal_operands(p)
        if not options.get("special_values"):
            assert all(np.all(np.isfinite(a)) for a in p.args)

    check()


def _finds(strategy, condition):
    """`condition` holds for some example of `strategy` (no shrinking: only existence matters)."""
    return find(strategy, condition, settings=settings(max_examples=2000, phases=[Phase.generate], database=None))


@pytest.mark.parametrize("primitive", DEFAULT_PRIMS)
def test_default_programs_reach_every_primitive(primitive):
    assert primitive in used_primitives(_finds(programs(), lambda p: primitive in used_primitives(p)))


SPECIAL_KINDS = {
    "nan": np.isnan,
    "+inf": np.isposinf,
    "-inf": np.isneginf,
    "-0.0": lambda a: (a == 0) & np.signbit(a),
    "huge": lambda a: np.isfinite(a) & (np.abs(a) > 1e30),
    "subnormal": lambda a: (a != 0) & (np.abs(a) < np.finfo(a.dtype).smallest_normal),
}


@pytest.mark.parametrize("kind", SPECIAL_KINDS, ids=SPECIAL_KINDS.keys())
def test_special_values_reach_every_kind(kind):
    found = _finds(programs(special_values=True), lambda p: any(SPECIAL_KINDS[kind](a).any() for a in p.args))
    assert any(SPECIAL_KINDS[kind](a).any() for a in found.args)


def test_dag_sharing_and_literals_occur():
    def shares(p):
        return any(uses(p, v) > 1 for e in p.closed.eqns for v in e.outvars)

    assert shares(_finds(programs(), shares))
    values = {float(x.value) for p in [_finds(programs(), lambda p: len(literal_operands(p)) >= 3)]
              for x in literal_operands(p)}
    assert values <= {0.0, 1.0, 2.0, -1.0, 0.5} and values


BAD_OPTIONS = {
    "unknown primitive": (dict(primitives=("sin", "cumsum")), "cumsum"),
    "comparison without select_n": (dict(primitives=("lt",)), "select_n"),
    "integer dtype": (dict(dtypes=("int32",)), "int32"),
    "unknown dtype": (dict(dtypes=("float99",)), "float99"),
    "no equations": (dict(max_eqns=0), "max_eqns"),
    "no shapes": (dict(shapes=()), "shape"),
}


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_bad_options_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        programs(**options)


@given(programs(max_eqns=4))
def test_failure_reports_show_the_jaxpr_text_and_inputs(p):
    report = pretty(p)
    assert report == repr(p)
    assert str(p.closed) in report
    for a in p.args:
        assert f"dtype=np.{a.dtype}" in report
