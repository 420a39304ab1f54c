"""The term constructors: their typed fields (`rewrites.terms.encode_fields`) and variadic operand lists."""

import pytest

from ir.errors import JaxprTypeError
from ir.params import NpScalar
from rewrites.rules.common import x, y
from rewrites.terms import SPECS, T, args_list, encode_fields

BROADCAST = SPECS["broadcast_in_dim"]


def test_plain_values_fill_the_fields_and_the_rest_is_left_over():
    values, rest = encode_fields(BROADCAST, {"shape": (2, 3), "broadcast_dimensions": (1,), "sharding": None})
    assert values == [(2, 3), (1,)] and rest == {"sharding": None}


def test_numpy_spelled_ints_fill_the_field_and_keep_their_spelling_in_the_rest():
    dims = (NpScalar(1),)
    values, rest = encode_fields(BROADCAST, {"shape": (2, 3), "broadcast_dimensions": dims})
    assert values == [(2, 3), (1,)] and rest == {"broadcast_dimensions": dims}


def test_a_value_of_the_wrong_kind_names_the_primitive_and_the_param():
    with pytest.raises(JaxprTypeError, match=r"broadcast_in_dim: param broadcast_dimensions='a' does not fit"):
        encode_fields(BROADCAST, {"shape": (2, 3), "broadcast_dimensions": "a"})


def test_every_single_result_primitive_has_a_constructor_a_variadic_one_over_one_args_list():
    assert SPECS["select_n"].arity is None and SPECS["gather"].arity == 2
    assert "p_select_n" in repr(T.select_n(args_list([x, y, x])))
    with pytest.raises(TypeError, match="select_n takes one Args list and 0 fields"):
        T.select_n(x, y, x)
