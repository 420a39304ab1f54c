"""An implementation failing on a type-checked program is a typed error naming the equation and primitive."""

import numpy as np
import pytest

from eval.interpreter import eval_jaxpr
from ir.errors import JaxprEvalError, JaxprTypeError
from ir.text import parse_jaxpr

HUGE = "{ lambda ; a:f64[]. let\n    b:f64[] = sin a\n    c:f64[4000000000,4000000000] = broadcast_in_dim[broadcast_dimensions=() shape=(4000000000, 4000000000) sharding=None] b\n  in (c,) }"  # noqa: E501


@pytest.mark.parametrize("check", [False, True])
def test_an_allocation_numpy_refuses_is_an_eval_error_naming_the_equation(check):
    closed = parse_jaxpr(HUGE)
    with pytest.raises(JaxprEvalError) as info:
        eval_jaxpr(closed, np.float64(1.0), check=check)
    err = info.value
    assert isinstance(err, JaxprTypeError)
    assert (err.eqn_index, err.primitive) == (1, "broadcast_in_dim")
    assert "evaluation failed" in str(err)


def test_an_unsupported_param_value_is_a_typed_not_implemented_error():
    from ir.errors import UnsupportedEvaluation

    text = ("{ lambda ; a:u32[4]. let\n    b:u32[4] c:u32[2,3] = rng_bit_generator[algorithm=RNG_FOO dtype=uint32 "
            "out_sharding=None shape=(2, 3)] a\n  in (b, c) }")
    with pytest.raises(UnsupportedEvaluation) as info:
        eval_jaxpr(parse_jaxpr(text), np.zeros(4, np.uint32))
    assert isinstance(info.value, NotImplementedError) and info.value.primitive == "rng_bit_generator"
