"""The optimizer's knobs, declared once (`rewrites.options`): every transform and `optimize` take `options=`
and/or the knobs as keywords, read by `merge_options`; an unknown keyword is a TypeError naming the knobs."""

from __future__ import annotations

import numpy as np
import pytest

import ir
import ir.numpy as jnp
from rewrites.engine import optimize
from rewrites.options import DEFAULT_OPTIONS, KNOBS, Limits, Options, merge_options
from transforms import grad, hessian, jacfwd, jacrev, jit, jvp, value_and_grad, vjp, vmap


def f(x):
    return jnp.sum(jnp.sin(x) * x * 1.0)


X = np.linspace(-1.0, 1.0, 3)


def test_keywords_override_the_options_and_the_defaults_fill_the_rest():
    base = Options(rules="strict", cost="bytes")
    assert merge_options("f", None, {}) is DEFAULT_OPTIONS
    assert merge_options("f", base, {}) is base
    merged = merge_options("f", base, {"cost": "ops", "limits": Limits(iterations=2)})
    assert merged == Options(rules="strict", cost="ops", limits=Limits(iterations=2))
    assert KNOBS == ("rules", "cost", "extractor", "limits", "loops", "measure_transformed")


def test_an_unknown_knob_or_a_wrong_options_is_a_type_error_naming_the_function():
    with pytest.raises(TypeError, match=r"jit\(\) got an unexpected keyword argument 'rule'; the optimizer's "
                                        r"options are rules, cost"):
        jit(f, rule="fast")
    with pytest.raises(TypeError, match=r"optimize\(\): options must be a rewrites.options.Options, got str"):
        optimize(ir.make_jaxpr(f)(X), options="fast")


TRANSFORMS = {"jit": lambda **kw: jit(f, **kw), "grad": lambda **kw: grad(f, **kw),
              "value_and_grad": lambda **kw: value_and_grad(f, **kw), "vmap": lambda **kw: vmap(f, **kw),
              "jacfwd": lambda **kw: jacfwd(f, **kw), "jacrev": lambda **kw: jacrev(f, **kw),
              "hessian": lambda **kw: hessian(f, **kw), "jvp": lambda **kw: jvp(f, (X,), (X,), **kw),
              "vjp": lambda **kw: vjp(f, X, **kw)}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_every_transform_refuses_an_unknown_knob_by_its_name(name):
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'node_limit'"):
        TRANSFORMS[name](node_limit=3)


def test_options_and_keywords_give_the_same_programs():
    by_keywords = jit(f, rules="strict", cost="bytes", extractor="tree").optimized(X)[0]
    by_options = jit(f, options=Options(rules="strict", cost="bytes", extractor="tree")).optimized(X)[0]
    mixed = jit(f, options=Options(rules="strict", extractor="tree"), cost="bytes").optimized(X)[0]
    assert str(by_keywords) == str(by_options) == str(mixed)
    closed = ir.make_jaxpr(f)(X)
    assert str(optimize(closed, rules="strict")[0]) == str(optimize(closed, options=Options(rules="strict"))[0])
    np.testing.assert_array_equal(grad(f, options=Options(rules="strict"))(X), grad(f, rules="strict")(X))
