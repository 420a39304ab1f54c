"""The params schema table (ir/param_schemas.py): every fixture program passes it, every registered
primitive has a row, and bad params are typed errors naming the equation, primitive and param."""

import pytest

from ir.errors import JaxprTypeError
from ir.param_schemas import SCHEMAS
from ir.primitives import PRIMITIVES, _load_rules
from ir.text import parse_jaxpr
from tests.ir.test_text_roundtrip import TEXTS


def test_every_registered_primitive_has_a_schema_row():
    _load_rules()
    assert sorted(set(PRIMITIVES) - set(SCHEMAS)) == []


def test_every_fixture_text_passes_the_schemas():
    for text in TEXTS.values():
        parse_jaxpr(text)  # raises JaxprTypeError naming the param if a row is too strict


@pytest.mark.parametrize(("equation", "param"), [
    ("b:f64[3] = sin[foo=1] a", "foo"),
    ("b:f64[3] = integer_pow[y=2.5] a", "y"),
    ("b:f64[3] = integer_pow[y=1e999] a", "y"),
    ("b:f64[3] = integer_pow[y=True] a", "y"),
    ("b:f64[3] = integer_pow a", "y"),
    ("b:f64[3] = cumsum[axis=-1 reverse=False] a", "axis"),
    ("b:f64[3] = cumsum[axis=0 reverse=1] a", "reverse"),
    ("b:f64[] = reduce_sum[axes=(0.5,) out_sharding=None] a", "axes"),
    ("b:f64[3] = transpose[permutation=relu] a", "permutation"),
])
def test_bad_params_name_equation_primitive_and_param(equation, param):
    text = f"{{ lambda ; a:f64[3]. let {equation} in (b,) }}"
    with pytest.raises(JaxprTypeError) as info:
        parse_jaxpr(text)
    err = info.value
    primitive = equation.split("= ")[1].split("[")[0].split(" ")[0]
    assert (err.eqn_index, err.primitive) == (0, primitive)
    assert param in str(err)


def test_axes_beyond_the_rank_are_type_errors():
    for equation in ("b:f64[] = reduce_sum[axes=(3,) out_sharding=None] a",
                     "b:f64[3] = cumsum[axis=5 reverse=False] a",
                     "b:f64[3] = transpose[permutation=(1,)] a"):
        with pytest.raises(JaxprTypeError):
            parse_jaxpr(f"{{ lambda ; a:f64[3]. let {equation} in (b,) }}")
