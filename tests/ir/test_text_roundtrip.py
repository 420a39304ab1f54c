"""Every jaxpr text of the oracle fixtures parses, type checks and prints back exactly as JAX did."""

import json

import numpy as np
import pytest

from ir import dtypes
from ir.core import ClosedJaxpr, DropVar, Literal, Var, subjaxprs
from ir.params import NpScalar, Opaque, Record, Symbol
from ir.text import canonical_text, parse_jaxpr, parse_jaxpr_untyped, pp, print_jaxpr
from ir.text.printer import encode_name
from tests.oracle_paths import ORACLE


def _fixture_texts() -> dict[str, str]:
    """`case id` → jaxpr text, plus `id#grad` / `id#grad_grad` for the programs' derived texts."""
    texts = {}
    for path in sorted(ORACLE.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            texts[case["id"]] = case["jaxpr"]
            for key in ("grad", "grad_grad"):
                if key in case:
                    texts[f"{case['id']}#{key}"] = case[key]["jaxpr"]
    return texts


TEXTS = _fixture_texts()
CASES = {case["id"]: case for path in sorted(ORACLE.glob("*.json"))
         for case in json.loads(path.read_text())["cases"]}

# Texts the printer cannot reproduce: case id -> (what differs, why). Today every text round-trips;
# an entry here documents a known normalisation, and the test below fails if the set changes.
KNOWN_NORMALIZATIONS: dict[str, tuple[str, str]] = {}


@pytest.mark.parametrize("case_id", sorted(TEXTS))
def test_fixture_text_parses_and_type_checks(case_id):
    closed = parse_jaxpr(TEXTS[case_id])
    assert isinstance(closed, ClosedJaxpr)


def test_round_trip_reproduces_jax_text():
    differing = {k for k, text in TEXTS.items() if print_jaxpr(parse_jaxpr_untyped(text)) != text}
    assert len(TEXTS) > 600
    assert 1 - len(differing) / len(TEXTS) >= 0.95
    assert differing == set(KNOWN_NORMALIZATIONS)


def test_printing_is_idempotent():
    for case_id, text in TEXTS.items():
        once = print_jaxpr(parse_jaxpr_untyped(text))
        assert print_jaxpr(parse_jaxpr_untyped(once)) == once, case_id


def test_canonical_text_is_the_printed_text():
    closed = parse_jaxpr(TEXTS["program/softmax_xent"])
    assert canonical_text(closed) == print_jaxpr(closed) == print_jaxpr(closed.jaxpr) == str(closed)


# --- what the parsed objects hold ---------------------------------------------------------------

def _all_eqns(closed: ClosedJaxpr, seen=None):
    seen = set() if seen is None else seen
    if id(closed) in seen:
        return
    seen.add(id(closed))
    for eqn in closed.eqns:
        yield eqn
        for sub in subjaxprs(eqn):
            yield from _all_eqns(sub, seen)


def _literals(closed: ClosedJaxpr):
    for eqn in _all_eqns(closed):
        yield from (x for x in eqn.invars if isinstance(x, Literal))


def test_literal_values_are_numpy_scalars_of_their_dtype():
    count = 0
    for text in TEXTS.values():
        for lit in _literals(parse_jaxpr_untyped(text)):
            assert type(lit.value) is lit.aval.dtype.numpy.type
            count += 1
    assert count > 1000


@pytest.mark.parametrize("text, dtype, value", [
    ("2.0:f64[]", "f64", 2.0),
    ("-inf:f64[]", "f64", -np.inf),
    ("-0.0:f64[]", "f64", -0.0),
    ("(1+0j):c128[]", "c128", 1 + 0j),
    ("(-0-2.5j):c64[]", "c64", complex(-0.0, -2.5)),
    ("4607182418800017408:u64[]", "u64", 4607182418800017408),
    ("-9223372036854775808:i64[]", "i64", -(2 ** 63)),
    ("True:bool[]", "bool", True),
    ("0.10000000149011612:f32[]", "f32", np.float32(0.1)),
    ("0.10009765625:bf16[]", "bf16", 0.10009765625),
    ("3.0:f16[]", "f16", 3.0),
])
def test_literal_text_to_value(text, dtype, value):
    closed = parse_jaxpr_untyped(f"{{ lambda ; a:{dtype}[]. let b:{dtype}[] = max a {text} in (b,) }}")
    lit = closed.eqns[0].invars[1]
    assert lit.aval.dtype == dtypes.from_short(dtype)
    assert np.array(lit.value, dtype=lit.aval.dtype.numpy).tobytes() == \
        np.array(value, dtype=lit.aval.dtype.numpy).tobytes()
    assert print_jaxpr(closed).split("max a ")[1].startswith(text)


def test_nan_literal_and_literal_outputs():
    closed = parse_jaxpr_untyped("{ lambda ; a:f64[]. let b:f64[] = add a nan:f64[] in (b, 1.5:f64[]) }")
    assert np.isnan(closed.eqns[0].invars[1].value)
    out = closed.jaxpr.outvars[1]
    assert isinstance(out, Literal) and out.value == 1.5


def test_shared_jaxpr_is_one_object_at_every_reference():
    text = TEXTS["jnp.linalg.det/4x4/f64[4,4]"]
    assert text.count("jaxpr=_where") == 2 and text.count("jaxpr=count_nonzero") == 2
    closed = parse_jaxpr(text)
    by_name: dict[str, list[ClosedJaxpr]] = {}
    for eqn in _all_eqns(closed):
        if eqn.primitive == "jit":
            by_name.setdefault(str(eqn.params["name"]), []).append(eqn.params["jaxpr"])
    assert len(by_name["count_nonzero"]) == 2 and by_name["count_nonzero"][0] is by_name["count_nonzero"][1]
    # `_where` is referenced twice by name and once more as an inline `{...}` of another object
    assert len({id(j) for j in by_name["_where"]}) == 2 and len(by_name["_where"]) == 3


def test_names_reused_in_nested_scopes_are_distinct_variables():
    closed = parse_jaxpr(TEXTS["program/softmax_xent"])
    jit = next(e for e in closed.eqns if e.primitive == "jit")
    inner = jit.params["jaxpr"].jaxpr
    assert inner.invars[0] is not jit.invars[0]  # both print as `g`
    assert inner.invars[0].aval == jit.invars[0].aval


def test_variable_named_in_is_not_the_keyword():
    case_id = next(k for k, t in TEXTS.items() if " in:" in t)
    closed = parse_jaxpr(TEXTS[case_id])
    assert any(isinstance(v, Var) and v.hint == "in" for e in _all_eqns(closed) for v in e.outvars)


def test_dropped_results_are_dropvars():
    closed = parse_jaxpr(TEXTS["fori_loop/dynamic/f64[3,4],i32[]"])
    loop = next(e for e in closed.eqns if e.primitive == "while")
    assert [type(v) for v in loop.outvars] == [DropVar, DropVar, Var]


def test_top_level_constvars_get_placeholder_consts():
    case = CASES["rfft/norm_ortho/f64[8]"]
    closed = parse_jaxpr(case["jaxpr"])
    assert len(closed.consts) == len(closed.jaxpr.constvars) == len(case["consts"]) > 0
    for var, const, fixture in zip(closed.jaxpr.constvars, closed.consts, case["consts"], strict=True):
        assert const.shape == var.aval.shape == tuple(fixture["shape"])
        assert const.dtype == var.aval.dtype.numpy == np.dtype(fixture["dtype"])
        assert not const.any()


def test_hidden_params_are_restored_from_the_binders():
    seen = set()
    for text in TEXTS.values():
        for eqn in _all_eqns(parse_jaxpr_untyped(text)):
            if eqn.primitive == "broadcast_in_dim":
                assert eqn.params["shape"] == eqn.outvars[0].aval.shape
                assert eqn.params["sharding"] is None and "broadcast_dimensions" in eqn.params
            elif eqn.primitive == "dot_general":
                assert {"precision", "preferred_element_type", "out_sharding"} <= set(eqn.params)
            elif eqn.primitive in ("custom_jvp_call", "custom_vjp_call"):
                assert eqn.params["num_consts"] == 0
            elif eqn.primitive == "convert_element_type":
                assert eqn.params["sharding"] is None
            else:
                continue
            seen.add(eqn.primitive)
    assert seen == {"broadcast_in_dim", "dot_general", "custom_jvp_call", "custom_vjp_call",
                    "convert_element_type"}


def test_param_values_follow_the_params_model():
    closed = parse_jaxpr(TEXTS["jnp.linalg.solve/f64[3,3],f64[3]"])
    eqns = list(_all_eqns(closed))
    solve = next(e for e in eqns if e.primitive == "custom_linear_solve")
    assert isinstance(solve.params["jaxprs"], Record) and solve.params["jaxprs"].type_name == "_LinearSolveTuple"
    assert isinstance(solve.params["jaxprs"].matvec, ClosedJaxpr)
    assert solve.params["const_lengths"].solve == 2
    gather = next(e for e in eqns if e.primitive == "gather")
    assert gather.params["dimension_numbers"].offset_dims == (1,)
    assert gather.params["mode"] == Symbol("GatherScatterMode.PROMISE_IN_BOUNDS")
    dot = next(e for e in eqns if e.primitive == "dot_general")
    assert dot.params["dimension_numbers"] == (([1], [0]), ([], []))
    iota = next(e for e in eqns if e.primitive == "iota")
    assert iota.params["dtype"] is dtypes.int32 and iota.params["shape"] == (3,)
    split = next(e for e in parse_jaxpr(TEXTS["threefry2x32/u32[2],u32[6]"]).eqns if e.primitive == "split")
    assert split.params["sizes"] == (3, 3) and all(type(s) is NpScalar for s in split.params["sizes"])
    remat = next(e for t in TEXTS.values() if "0xXXXX" in t
                 for e in _all_eqns(parse_jaxpr_untyped(t)) if e.primitive == "remat2")
    assert isinstance(remat.params["policy"], Opaque)


# --- the printer's building blocks ------------------------------------------------------------

@pytest.mark.parametrize("n, name", [(0, "a"), (25, "z"), (26, "ba"), (27, "bb"), (51, "bz"),
                                     (52, "ca"), (26 * 26, "baa"), (8 * 26 + 13, "in")])
def test_variable_names_are_base_26_letters(n, name):
    assert encode_name(n) == name
    assert sum((ord(c) - 97) * 26 ** i for i, c in enumerate(reversed(name))) == n


@pytest.mark.parametrize("width, expected", [(11, "[a b c d e]"), (10, "[\n  a\n  b\n  c\n  d\n  e\n]")])
def test_a_group_breaks_all_its_breaks_when_it_does_not_fit(width, expected):
    items = pp.join(pp.brk(), [pp.text(c) for c in "abcde"])
    doc = pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("["), pp.brk(""), items])),
                              pp.brk(""), pp.text("]")]))
    assert doc.format(width) == expected


def test_an_inner_group_stays_flat_when_it_fits_inside_a_broken_outer_group():
    inner = pp.group(pp.concat([pp.text("x"), pp.brk(), pp.text("y")]))
    doc = pp.group(pp.concat([pp.text("aaaa"), pp.brk(), inner, pp.brk(), pp.text("bbbb")]))
    assert doc.format(6) == "aaaa\nx y\nbbbb"
