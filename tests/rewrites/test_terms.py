"""The term constructors: one field per param (`rewrites.terms.encode_fields`, `decode_fields`), defaults of
rule-built nodes (`T`) and variadic operand lists."""

import math

import numpy as np
import pytest

from ir import lax
from ir.core import ShapedArray
from ir.dtypes import float32, float64, int32
from ir.errors import JaxprTypeError
from ir.params import NpScalar, Opaque, Record, Symbol
from ir.text.printer import value_text
from rewrites.rules.common import x, y
from rewrites.terms import (
    ABSENT,
    SPECS,
    T,
    args_list,
    decode_fields,
    encode_fields,
    get,
    operand_dtype_marker,
    output_at,
)

BROADCAST, GATHER, DOT = SPECS["broadcast_in_dim"], SPECS["gather"], SPECS["dot_general"]
F64 = ShapedArray((2,), float64)


def test_every_param_is_a_field_the_positional_ones_first():
    assert BROADCAST.field_names == ("shape", "broadcast_dimensions", "sharding") and BROADCAST.positional == 2
    assert [kind.name for _, kind in BROADCAST.fields] == ["ints", "ints", "text"]
    kinds = {name: kind.name for name, kind in GATHER.fields}
    assert kinds["slice_sizes"] == "ints" and kinds["unique_indices"] == "bool" and kinds["mode"] == "text"


def test_plain_values_fill_the_fields_and_decode_back():
    params = {"shape": (2, 3), "broadcast_dimensions": (1,), "sharding": None}
    values = encode_fields(BROADCAST, params)
    assert values == [(2, 3), (1,), "None"]
    assert decode_fields(BROADCAST, values, [F64]) == params


def test_numpy_spelled_ints_are_held_as_their_values_in_a_typed_field_and_spelled_in_a_text_field():
    dims = (NpScalar(1),)
    assert encode_fields(BROADCAST, {"shape": (2, 3), "broadcast_dimensions": dims, "sharding": None})[1] == (1,)
    params = {"dimensions": dims, "sharding": None, "new_sizes": (2,)}
    held = encode_fields(SPECS["reshape"], params)
    assert held == [(2,), "(np.int64(1),)", "None"]
    assert repr(decode_fields(SPECS["reshape"], held, [F64])["dimensions"]) == "(np.int64(1),)"


@pytest.mark.parametrize("value", [math.nan, -0.0, math.inf, -math.inf, 0.5, None])
def test_float_params_round_trip_exactly_through_their_text(value):
    params = {**_gather_params(), "fill_value": value}
    back = decode_fields(GATHER, encode_fields(GATHER, params), [F64, ShapedArray((1, 1), int32)])["fill_value"]
    assert repr(back) == repr(value)


def test_records_names_and_strings_round_trip_through_their_text():
    params = _gather_params()
    back = decode_fields(GATHER, encode_fields(GATHER, params), [F64, ShapedArray((1, 1), int32)])
    assert isinstance(back["dimension_numbers"], Record) and back["dimension_numbers"].offset_dims == ()
    assert back["mode"] == params["mode"] and back == params
    held = encode_fields(SPECS["random_seed"], {"impl": Symbol("fry")}), encode_fields(SPECS["random_seed"],
                                                                                       {"impl": "fry"})
    assert held[0] != held[1]  # a bare name and a str print apart


def test_a_param_left_out_is_absent_and_stays_left_out():
    values = encode_fields(SPECS["conj"], {})
    assert values == [ABSENT] and decode_fields(SPECS["conj"], values, [F64]) == {}


def test_an_operand_dtype_default_is_held_as_the_marker_and_resolved_against_the_operands():
    params = {"dimension_numbers": (([0], [0]), ([], [])), "precision": None, "out_sharding": None,
              "preferred_element_type": float32}
    held = encode_fields(DOT, params, [ShapedArray((2,), float32)] * 2)
    assert operand_dtype_marker(0) in held
    assert decode_fields(DOT, held, [ShapedArray((2,), float64)] * 2)["preferred_element_type"] == float64
    assert operand_dtype_marker(0) not in encode_fields(DOT, params, [F64, F64])


def test_a_value_of_the_wrong_kind_or_an_unknown_param_names_the_primitive_and_the_param():
    with pytest.raises(JaxprTypeError, match=r"broadcast_in_dim: param broadcast_dimensions='a' does not fit"):
        encode_fields(BROADCAST, {"shape": (2, 3), "broadcast_dimensions": "a", "sharding": None})
    with pytest.raises(JaxprTypeError, match=r"broadcast_in_dim: param colour is not a param of broadcast_in_dim"):
        encode_fields(BROADCAST, {"shape": (2, 3), "broadcast_dimensions": (), "colour": 1})
    with pytest.raises(JaxprTypeError, match=r"gather: missing param slice_sizes"):
        encode_fields(GATHER, {k: v for k, v in _gather_params().items() if k != "slice_sizes"})


def test_rule_built_nodes_get_the_catalogue_defaults_and_take_keyword_fields():
    assert str(T.reduce_sum(x, ())) == str(T.reduce_sum(x, (), out_sharding="None"))
    assert str(T.cumsum(x, 0)) == str(T.cumsum(x, 0, reverse=False))
    assert str(T.cumsum(x, 0, reverse=True)) != str(T.cumsum(x, 0))
    with pytest.raises(TypeError, match="cumsum has no keyword field 'axis'"):
        T.cumsum(x, 0, axis=0)
    with pytest.raises(TypeError, match="pad has no default for its param 'padding_config'"):
        T.pad(x, y)


def test_every_single_result_primitive_has_a_constructor_a_variadic_one_over_one_args_list():
    assert SPECS["select_n"].arity is None and SPECS["gather"].arity == 2
    assert "p_select_n" in repr(T.select_n(args_list([x, y, x])))
    with pytest.raises(TypeError, match="select_n takes one Args list and 0 positional fields"):
        T.select_n(x, y, x)


def _gather_params() -> dict:
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,),
                                    operand_batching_dims=(), start_indices_batching_dims=())
    return {"dimension_numbers": dn, "slice_sizes": (1,), "indices_are_sorted": False, "unique_indices": False,
            "mode": lax.GatherScatterMode.PROMISE_IN_BOUNDS, "fill_value": None}


def test_a_value_without_a_syntax_is_held_verbatim_and_prints_the_same():
    spec = SPECS["reduce_sum"]
    params = {"axes": (0,), "out_sharding": Opaque("NamedSharding(mesh=Mesh('x': 1))")}
    back = decode_fields(spec, encode_fields(spec, params), [F64])
    assert value_text(back["out_sharding"]) == "NamedSharding(mesh=Mesh('x': 1))" and back["axes"] == (0,)


def test_a_multi_result_primitive_has_a_constructor_over_one_args_list_giving_a_tup():
    sort, svd = SPECS["sort"], SPECS["svd"]
    assert sort.arity is None and sort.results is None and sort.multiple_results and SPECS["top_k"].results == 2
    assert [kind.name for _, kind in sort.fields] == ["int", "bool", "int"]
    assert {name: kind.name for name, kind in svd.fields}["algorithm"] == "text"
    tup = T.sort(args_list([x, y]), dimension=0, is_stable=True, num_keys=1)
    assert str(tup.__egg_typed_expr__.tp) == "Tup" and "p_sort" in repr(get(tup, 1))
    with pytest.raises(TypeError, match="sort has no default for its param 'dimension'"):
        T.sort(args_list([x]))


def test_a_multi_result_program_encodes_typed_and_decodes_to_the_same_program():
    from egglog import EGraph

    import ir
    import ir.numpy as jnp
    from eval.interpreter import eval_jaxpr
    from rewrites.decode import class_avals, decode
    from rewrites.encode import encode
    from rewrites.serialize import view_of

    def f(a):
        q, r = jnp.linalg.qr(a)
        s = lax.sort((a, q), dimension=1, num_keys=1)
        left, right = jnp.split(a, 2, axis=1)
        return s[1] + r, left * right

    a = np.random.default_rng(0).normal(size=(4, 4))
    closed = ir.make_jaxpr(f)(a)
    egraph = EGraph()
    enc = encode(closed, egraph)
    egraph.register(*(output_at(k, out) for k, out in enumerate(enc.outputs)))
    view = view_of(egraph)
    ops = {node.op for node in view.nodes}
    assert {"qr", "sort", "split"} <= ops and "call" not in ops and not enc.extras
    choice = {cls: members[0] for cls, members in view.classes.items()}
    back = decode(view, choice, enc, class_avals(view, enc))
    assert sorted(map(str, back.jaxpr.eqns)) == sorted(map(str, closed.jaxpr.eqns))  # the order may differ
    for got, want in zip(eval_jaxpr(back, a), eval_jaxpr(closed, a), strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_opaque_higher_order_calls_keep_their_params_on_the_python_side():
    from rewrites.encode import OPAQUE_CALLS

    assert OPAQUE_CALLS == {"remat2", "checkpoint", "composite", "custom_jvp_call", "custom_vjp_call",
                            "custom_vjp_call_jaxpr", "custom_linear_solve"}
    assert not OPAQUE_CALLS & set(SPECS)


def test_a_primitive_without_a_row_is_refused_whatever_its_result_count():
    from egglog import EGraph

    from ir.core import ClosedJaxpr, Eqn, Jaxpr, Var
    from ir.errors import UnsupportedPrimitive
    from rewrites.encode import encode

    a = Var(F64)
    closed = ClosedJaxpr(Jaxpr([], [a], [a], [Eqn("my_pair", [a], [Var(F64), Var(F64)], {})]), [])
    with pytest.raises(UnsupportedPrimitive, match="my_pair"):
        encode(closed, EGraph())


def test_control_flow_has_typed_constructors_whose_bodies_stand_for_the_jaxpr_params():
    from rewrites.terms import CONTROL_SPECS

    assert set(CONTROL_SPECS) == {"scan", "while", "cond"} and not set(CONTROL_SPECS) & set(SPECS)
    scan, loop, cond = CONTROL_SPECS["scan"], CONTROL_SPECS["while"], CONTROL_SPECS["cond"]
    assert scan.bodies == ("jaxpr",) and loop.bodies == ("cond_jaxpr", "body_jaxpr") and cond.bodies == ("branches",)
    assert {name: kind.name for name, kind in scan.fields} == {
        "length": "int", "reverse": "bool", "num_consts": "int", "num_carry": "int", "linear": "text",
        "unroll": "text", "_split_transpose": "text"}
    assert [kind.name for _, kind in loop.fields] == ["int", "int"] and cond.field_names == ("branches_platforms",)
    assert scan.multiple_results and scan.arity is None and scan.children == 2


def test_a_control_flow_program_encodes_typed_and_decodes_to_the_same_program():
    from egglog import EGraph

    import ir
    import ir.numpy as jnp
    from eval.interpreter import eval_jaxpr
    from rewrites.decode import class_avals, decode
    from rewrites.encode import encode
    from rewrites.serialize import view_of

    def f(w, xs):
        def step(h, x):
            return jnp.tanh(w * h + x), jnp.sum(h)
        h, ys = lax.scan(step, w, xs)
        _, k = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, jnp.sum(ys)))
        return lax.cond(k > 0.0, lambda a: a * h, lambda a: a - h, k), ys

    w, xs = np.array([0.3, -0.2]), np.linspace(-1, 1, 8).reshape(4, 2)
    closed = ir.make_jaxpr(f)(w, xs)
    egraph = EGraph()
    enc = encode(closed, egraph, close_loops=False)
    egraph.register(*(output_at(k, out) for k, out in enumerate(enc.outputs)))
    view = view_of(egraph)
    ops = {node.op for node in view.nodes}
    assert {"scan", "while", "cond"} <= ops and "call" not in ops and not enc.extras
    [scan] = [n for n in view.nodes if n.op == "scan"]
    [eqn] = [e for e in closed.jaxpr.eqns if e.primitive == "scan"]
    assert scan.payload[:4] == tuple(eqn.params[k] for k in ("length", "reverse", "num_consts", "num_carry"))
    avals = class_avals(view, enc)  # a control-flow node's result types come from its bodies' outputs
    assert [str(a) for a in avals[view.node_class[view.nodes.index(scan)]]] == [str(v.aval) for v in eqn.outvars]
    choice = {cls: members[0] for cls, members in view.classes.items()}
    back = decode(view, choice, enc, avals)
    assert sorted(map(str, back.jaxpr.eqns)) == sorted(map(str, closed.jaxpr.eqns))
    for got, want in zip(eval_jaxpr(back, w, xs), eval_jaxpr(closed, w, xs), strict=True):
        np.testing.assert_array_equal(got, want)
