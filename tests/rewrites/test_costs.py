"""Cost models against hand-computed formulas, the oracle fixtures' equations, and the primitive registry."""

from __future__ import annotations

import json
import math

import pytest

from ir import dtypes as D
from ir.core import ClosedJaxpr, ShapedArray
from ir.params import Record, walk_values
from ir.primitives import PRIMITIVES, get_primitive
from ir.text import parse_jaxpr
from rewrites.costs import (
    _FLOPS_RULES,
    COST_MODELS,
    CostModel,
    bytes_moved,
    custom,
    flops,
    get_cost_model,
    jaxpr_cost,
    op_count,
)
from tests.oracle_paths import ALL_FAMILIES, ORACLE


def A(shape, dtype=D.float64):
    return ShapedArray(tuple(shape), dtype)


def all_eqns():
    """Every equation of every fixture jaxpr (grads too), nested bodies included."""
    def walk(closed):
        for eqn in closed.jaxpr.eqns:
            yield eqn
            for value in walk_values(eqn.params):
                if isinstance(value, ClosedJaxpr):
                    yield from walk(value)

    for family in ALL_FAMILIES:
        for case in json.loads((ORACLE / f"{family}.json").read_text())["cases"]:
            texts = [case["jaxpr"]] + [case[k]["jaxpr"] for k in ("grad", "grad_grad") if k in case]
            for text in texts:
                yield from walk(parse_jaxpr(text))


EQNS = list(all_eqns())


def price(model, eqn):
    return model(eqn.primitive, eqn.params, [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars])


# --- dot_general and conv ------------------------------------------------------------------------

DOT_CASES = [
    # (lhs shape, rhs shape, dimension_numbers, B, M, N, K)
    ((3, 4), (4, 5), (([1], [0]), ([], [])), 1, 3, 5, 4),  # matmul
    ((4, 3), (4, 5), (([0], [0]), ([], [])), 1, 3, 5, 4),  # lhs transposed
    ((2, 3, 4), (2, 4, 5), (([2], [1]), ([0], [0])), 2, 3, 5, 4),  # batched
    ((3, 2, 4), (4, 5, 2), (([2], [0]), ([1], [2])), 2, 3, 5, 4),  # non-leading batch dims
    ((3, 4, 5), (4, 5, 6), (([1, 2], [0, 1]), ([], [])), 1, 3, 6, 20),  # two contracting dims
    ((3,), (4,), (([], []), ([], [])), 1, 3, 4, 1),  # outer product
    ((7,), (7,), (([0], [0]), ([], [])), 1, 1, 1, 7),  # inner product
    ((2, 6, 3), (6,), (([1], [0]), ([], [])), 1, 6, 1, 6),  # matrix-vector with a free rhs-less axis
]


@pytest.mark.parametrize("lhs,rhs,dn,b,m,n,k", DOT_CASES)
def test_dot_general_flops_is_2_batch_m_n_k(lhs, rhs, dn, b, m, n, k):
    out = A((b * m * n,))  # only the size of the result matters
    assert flops("dot_general", {"dimension_numbers": dn}, [A(lhs), A(rhs)], [out]) == 2 * b * m * n * k


def test_complex_dot_counts_four_real_multiply_adds():
    c, r = A((3, 4), D.complex128), A((4, 5), D.complex128)
    params = {"dimension_numbers": (([1], [0]), ([], []))}
    assert flops("dot_general", params, [c, r], [A((3, 5), D.complex128)]) == 4 * 2 * 3 * 5 * 4


def conv_params(lhs_spec, rhs_spec, out_spec, groups=1, batch_groups=1):
    dn = Record("ConvDimensionNumbers", {"lhs_spec": lhs_spec, "rhs_spec": rhs_spec, "out_spec": out_spec})
    return {"dimension_numbers": dn, "feature_group_count": groups, "batch_group_count": batch_groups,
            "window_strides": (1, 1), "padding": ((0, 0), (0, 0)), "lhs_dilation": (1, 1),
            "rhs_dilation": (1, 1)}


NCHW = (0, 1, 2, 3)  # also OIHW for the kernel
NHWC, HWIO = (0, 3, 1, 2), (3, 2, 0, 1)  # as specs: (batch, feature, spatial...), (out, in, spatial...)
CONV_CASES = [
    # lhs, rhs, out, params, hand formula: 2 × N × Cout × out spatial × (Cin / groups) × kernel window
    (A((1, 3, 8, 8)), A((16, 3, 3, 3)), A((1, 16, 6, 6)), conv_params(NCHW, NCHW, NCHW),
     2 * 1 * 16 * 36 * 3 * 9),
    (A((2, 4, 5, 5)), A((6, 2, 3, 3)), A((2, 6, 3, 3)), conv_params(NCHW, NCHW, NCHW, groups=2),
     2 * 2 * 6 * 9 * 2 * 9),
    (A((1, 8, 8, 3)), A((3, 3, 3, 16)), A((1, 6, 6, 16)), conv_params(NHWC, HWIO, NHWC),
     2 * 1 * 16 * 36 * 3 * 9),
    # batch groups: each output sums over all Cin
    (A((4, 3, 5, 5)), A((6, 3, 2, 2)), A((2, 6, 4, 4)), conv_params(NCHW, NCHW, NCHW, batch_groups=2),
     2 * 2 * 6 * 16 * 3 * 4),
]


@pytest.mark.parametrize("lhs,rhs,out,params,want", CONV_CASES)
def test_conv_flops_hand_computed(lhs, rhs, out, params, want):
    assert flops("conv_general_dilated", params, [lhs, rhs], [out]) == want


def test_dot_and_conv_flops_on_every_fixture_equation():
    """Fixture shapes, checked with formulas from the lhs side: 2 × out × (lhs contracted size), and
    2 × out × (lhs features / feature groups) × kernel window."""
    seen = set()
    for eqn in EQNS:
        ins, outs = [v.aval for v in eqn.invars], [v.aval for v in eqn.outvars]
        if eqn.primitive == "dot_general":
            (lc, rc), _ = eqn.params["dimension_numbers"]
            k = math.prod(ins[1].shape[d] for d in rc)
            want = 2 * outs[0].size * k * (4 if outs[0].dtype.is_complex else 1)
        elif eqn.primitive == "conv_general_dilated":
            dn, groups = eqn.params["dimension_numbers"], int(eqn.params["feature_group_count"])
            features = ins[0].shape[dn.lhs_spec[1]] // groups
            window = math.prod(ins[1].shape[d] for d in dn.rhs_spec[2:])
            want = 2 * outs[0].size * features * window
        else:
            continue
        seen.add(eqn.primitive)
        assert price(flops, eqn) == want, eqn
    assert seen == {"dot_general", "conv_general_dilated"}


# --- elementwise, reductions, shape ops ----------------------------------------------------------

X = A((3, 4))


@pytest.mark.parametrize("primitive,params,ins,outs,want", [
    ("add", {}, [X, X], [X], 12),
    ("exp", {}, [X], [X], 12 * 10),  # transcendentals weigh more than add/mul
    ("div", {}, [X, X], [X], 12 * 4),
    ("lgamma", {}, [X], [X], 12 * 30),
    ("mul", {}, [A((3,), D.complex128)] * 2, [A((3,), D.complex128)], 3 * 4),
    ("integer_pow", {"y": 2}, [X], [X], 12 * 1),  # x*x
    ("integer_pow", {"y": 3}, [X], [X], 12 * 2),  # x*x*x
    ("integer_pow", {"y": 8}, [X], [X], 12 * 3),  # three squarings
    ("integer_pow", {"y": -1}, [X], [X], 12 * 4),  # one division
    ("reduce_sum", {"axes": (0, 1)}, [X], [A(())], 12),  # reductions: input size
    ("argmax", {"axes": (1,), "index_dtype": D.int32}, [X], [A((3,), D.int32)], 12),
    ("cumsum", {"axis": 0, "reverse": False}, [X], [X], 12),
    ("reshape", {"new_sizes": (12,), "dimensions": None}, [X], [A((12,))], 0),
    ("transpose", {"permutation": (1, 0)}, [X], [A((4, 3))], 0),
    ("broadcast_in_dim", {"shape": (5, 3, 4), "broadcast_dimensions": (1, 2)}, [X], [A((5, 3, 4))], 0),
    ("reduce_window_sum", {"window_dimensions": (2, 2), "window_strides": (1, 1),
                           "padding": ((0, 0), (0, 0))}, [X], [A((2, 3))], 6 * 4),
    ("sort", {"dimension": 1, "is_stable": True, "num_keys": 1}, [X], [X], 12 * 2),  # n log2(4) per row
    ("cholesky", {}, [A((2, 6, 6))], [A((2, 6, 6))], 2 * 6 ** 3 // 3),
    ("fft", {"fft_type": 0, "fft_lengths": (8,)}, [A((2, 8), D.complex128)], [A((2, 8), D.complex128)],
     2 * 5 * 8 * 3),
    ("some_future_primitive", {}, [X], [X, A((2,))], 14),  # default: 1 per output element
])
def test_flops_rules(primitive, params, ins, outs, want):
    assert flops(primitive, params, ins, outs) == want


def test_scan_costs_length_times_its_body_and_cond_its_costliest_branch():
    def eqn_of(prim):
        return next(e for e in EQNS if e.primitive == prim)

    scan, cond = eqn_of("scan"), eqn_of("cond")
    for model in (flops, bytes_moved):
        body = jaxpr_cost(model, scan.params["jaxpr"])
        assert price(model, scan) == int(scan.params["length"]) * body
        assert price(model, cond) == max(jaxpr_cost(model, b) for b in cond.params["branches"])


# --- bytes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,itemsize", [(D.float64, 8), (D.float32, 4), (D.bfloat16, 2), (D.int8, 1),
                                            (D.bool_, 1), (D.complex128, 16), (D.uint16, 2)])
def test_bytes_of_an_elementwise_op_are_inputs_plus_output(dtype, itemsize):
    x = A((3, 4), dtype)
    assert bytes_moved("max", {}, [x, x], [x]) == 3 * 12 * itemsize
    assert bytes_moved("eq", {}, [x, x], [A((3, 4), D.bool_)]) == 2 * 12 * itemsize + 12


@pytest.mark.parametrize("primitive,params,ins,outs,want", [
    ("reshape", {"new_sizes": (12,), "dimensions": None}, [X], [A((12,))], 0),
    ("squeeze", {"dimensions": (0,)}, [A((1, 12))], [A((12,))], 0),
    ("transpose", {"permutation": (1, 0)}, [X], [A((4, 3))], 2 * 96),
    ("slice", {"start_indices": (0, 0), "limit_indices": (1, 4), "strides": None}, [X], [A((1, 4))], 2 * 32),
    ("dynamic_slice", {"slice_sizes": (2, 2)}, [X, A((), D.int32), A((), D.int32)], [A((2, 2))], 2 * 32 + 8),
    ("convert_element_type", {"new_dtype": D.float32, "weak_type": False, "sharding": None}, [X],
     [A((3, 4), D.float32)], 96 + 48),
    ("random_bits", {"bit_width": 32, "shape": (5,)}, [A((), D.key_fry)], [A((5,), D.uint32)], 8 + 20),
    ("iota", {"dtype": D.int32, "shape": (6,), "dimension": 0, "sharding": None}, [], [A((6,), D.int32)], 24),
])
def test_bytes_rules(primitive, params, ins, outs, want):
    assert bytes_moved(primitive, params, ins, outs) == want


# --- registry, custom models, coverage ----------------------------------------------------------

def test_op_count_is_one_per_equation():
    assert all(price(op_count, eqn) == 1 for eqn in EQNS)
    text = "{ lambda ; a:f64[3]. let\n    b:f64[3] = sin a\n    c:f64[3] = cos b\n  in (c,) }"
    assert jaxpr_cost(op_count, parse_jaxpr(text)) == 2


def test_every_model_prices_every_fixture_equation_as_a_non_negative_int():
    primitives = set()
    for eqn in EQNS:
        primitives.add(eqn.primitive)
        for model in COST_MODELS.values():
            value = price(model, eqn)
            assert type(value) is int and value >= 0, (model.name, eqn)
    assert len(primitives) > 100


def test_every_registered_primitive_has_a_flops_rule():
    """Primitives with a body are priced by it; every other one needs a row (not the default)."""
    missing = sorted(name for name in PRIMITIVES
                     if name not in _FLOPS_RULES and not get_primitive(name).higher_order)
    assert not missing, f"add flops rules for {missing} to rewrites/costs.py"


def test_registry_and_lookup():
    assert set(COST_MODELS) == {"ops", "flops", "bytes"}
    assert get_cost_model("flops") is flops
    name, fn = get_cost_model("bytes")  # a model is also a (name, function) pair
    assert name == "bytes" and fn("add", {}, [X, X], [X]) == 288
    with pytest.raises(ValueError, match="known: ops, flops, bytes, latency, latency-numpy, latency-xla, learned:PATH"):
        get_cost_model("latenc")


def test_custom_model_wraps_a_function_and_checks_its_results():
    def per_output_element(primitive, params, ins, outs):
        return -1 if primitive == "neg" else sum(a.size for a in outs)

    model = get_cost_model(per_output_element)
    assert isinstance(model, CostModel) and model.name == "per_output_element"
    assert model("add", {}, [X, X], [X]) == 12
    assert custom(per_output_element, "mine").name == "mine"
    with pytest.raises(ValueError, match="neg"):
        model("neg", {}, [X], [X])
    with pytest.raises(TypeError):
        custom(3)
