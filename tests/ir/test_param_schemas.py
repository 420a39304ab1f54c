"""The params schemas of the catalogue rows (ir/primitives): every fixture program passes them, the params
a row hides at their default are those JAX's printer hides, and bad params are typed errors naming the
equation, primitive and param."""

import pytest

from ir.errors import JaxprTypeError
from ir.primitives import PRIMITIVES
from ir.primitives.schema import OperandDtype
from ir.text import parse_jaxpr
from ir.text.eqn_rules import printed_params
from tests.ir.test_text_roundtrip import TEXTS


def test_the_params_a_row_hides_at_their_default_are_those_the_printer_hides():
    checked = 0
    for name, row in PRIMITIVES.items():
        for param, spec in row.params.items():
            if spec.has_default and not isinstance(spec.default, OperandDtype):
                printed = dict(printed_params(name, {param: spec.default}))
                assert (param in printed) == spec.printed_when_default, (name, param, spec.default)
                checked += 1
    assert checked >= 10


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
