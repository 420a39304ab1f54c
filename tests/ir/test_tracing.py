"""Tracing with ir.make_jaxpr: the printed text must be what JAX printed for the same function.

Each row of `SAME_TEXT` re-expresses a fixture case with ir.numpy / ir.lax; the traced jaxpr,
printed, must equal the fixture's `jaxpr` text, and evaluating it on the fixture's args must
give the fixture's outputs. `SAME_PRIMITIVES` rows are cases where JAX wraps part of the program
in a `jit` (or names a function in a param) that eqjax inlines: only the primitive sequence is
compared there. Pytrees, weak-type promotion and nesting are tested below.
"""

from functools import partial

import numpy as np
import pytest

import ir.numpy as jnp
from eval.oracle import compare_lists, load_fixtures
from ir import lax
from ir.core import ClosedJaxpr, DropVar, Literal, ShapedArray
from ir.dtypes import bool_, float16, float32, float64, int32, int64
from ir.tracing import TracingError, bind_jaxpr, hoist_consts, make_jaxpr, trace_to_jaxpr
from ir.tree import tree_flatten, tree_map, tree_structure, tree_unflatten
from ir.typecheck import typecheck
from tests.oracle_paths import ORACLE

CASES = {c.id: c for c in load_fixtures([ORACLE])}


def _mlp(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


def _layernorm(x, gamma, beta):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return jnp.sum(jnp.sin((x - mu) * lax.rsqrt(var + 1e-5) * gamma + beta))


def _horner(x):
    y = jnp.asarray(0.0, dtype=jnp.float64) + 0.1  # a strong f64 zero, so no conversion follows
    for c in (-0.3, 0.75, 2.0, -1.25, 0.5):
        y = y * x + c
    return y


def _rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _nbody_accel(x, m):
    d = x[None, :, :] - x[:, None, :]
    inv = (jnp.sum(d ** 2, axis=2) + 0.01) ** -1.5
    return jnp.sum(d * (m[None, :, None] * inv[:, :, None]), axis=1)


def _nbody(x, v, m):
    v = v + 0.005 * _nbody_accel(x, m)
    x = x + 0.01 * v
    v = v + 0.005 * _nbody_accel(x, m)
    d = x[None] - x[:, None]
    r = jnp.sqrt(jnp.sum(d ** 2, axis=2) + 0.01)
    potential = -0.5 * jnp.sum(m[None, :] * m[:, None] / r)
    return 0.5 * jnp.sum(m[:, None] * v ** 2) + potential


def _residual_chain(x, ws):
    for i in range(ws.shape[0]):
        x = x + 0.1 * jnp.tanh(ws[i] @ x)
    return jnp.sum(x ** 2)


def _redundant_mixed(a, b):
    f = a * 1.0 + 0.0 - (b - b)
    i = jnp.exp(0.0 * a) * f
    k = jnp.sqrt(a * a)
    return jnp.sum(i * k / k + jnp.log(jnp.exp(f)) - f)


def _wrap_negative(i, size):
    return lax.select(lax.lt(i, 0), lax.add(i, size), i)


_ROW_SCATTER = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))

# Fixture case id -> the same function written with ir.numpy / ir.lax.
SAME_TEXT = {
    "program/mlp_tanh": _mlp,
    "program/layernorm": _layernorm,
    "program/horner": _horner,
    "program/rosenbrock": _rosenbrock,
    "program/nbody_step": _nbody,
    "program/residual_chain_8": _residual_chain,
    "program/matchain_wide_narrow": lambda a, b, c, d: jnp.sum(a @ b @ c @ d),
    "program/redundant_distribute": lambda a, b, c: jnp.sum(a * b + a * c),
    "program/redundant_exp_log": lambda a: jnp.sum(jnp.exp(jnp.log(a)) * a),
    "program/redundant_div_self": lambda a, b: jnp.sum(a / a * b),
    "program/redundant_double_transpose": lambda a, b: jnp.sum(a.T.T * b) + jnp.sum(a.T.T @ b.T),
    "program/redundant_add0_mul1": lambda a: jnp.sum(((a + 0.0) * 1.0) ** 2 - (a - 0.0) / 1.0),
    "program/redundant_sum_broadcast": lambda a: (jnp.sum(jnp.broadcast_to(a, (5, 4)))
                                                  + jnp.sum(jnp.broadcast_to(a[:, None], (4, 3)) * 2.0)),
    "program/redundant_mixed": _redundant_mixed,
    "program/redundant_reshape_roundtrip": lambda a: jnp.sum(a.reshape(12).reshape(3, 4) ** 2 * 0.5),
    # dtype promotion and weak types
    "promotion/i32+f64/i32[3,4],f64[3,4]": jnp.add,
    "promotion/u8+i8/u8[3,4],i8[3,4]": jnp.add,
    "promotion/u32+i32/u32[3,4],i32[3,4]": jnp.add,
    "promotion/bf16+f16/bf16[3,4],f16[3,4]": jnp.add,
    "promotion/c64+f64/c64[3,4],f64[3,4]": jnp.add,
    "promotion/bool*f64/bool[3,4],f64[3,4]": jnp.multiply,
    "promotion/i32*f32/i32[3,4],f32[3,4]": lambda a, b: a * b,
    "weak/i32*2/i32[3,4]": lambda a: a * 2,
    "weak/f32*2.5/f32[3,4]": lambda a: a * 2.5,
    "weak/i32+2.5/i32[3,4]": lambda a: a + 2.5,
    "weak/f16*3/f16[3,4]": lambda a: a * 3,
    "weak/bool*2/bool[3,4]": lambda a: a * 2,
    "weak/u8+1/u8[3,4]": lambda a: a + 1,
    "weak/jnp_scalar_arith/f32[3,4]": lambda a: (a + 1.5) * 3,
    "strong/np_float32_literal/f64[3,4]": lambda a: a + np.float32(1.5),
    "strong/np_int64_literal/i32[3,4]": lambda a: a * np.int64(3),
    "f16/sum/f16[3,4]": jnp.sum,
    "f32/sum_mean/f32[3,4]": lambda a: (jnp.sum(a), jnp.mean(a)),
    "convert_element_type/f64_to_i32/f64[3,4]": lambda a: a.astype(jnp.int32),
    "convert_element_type/bool_to_f64/bool[3,4]": partial(lax.convert_element_type, new_dtype=float64),
    "convert_element_type/f32_to_bf16/f32[3,4]": lambda a: a.astype("bfloat16"),
    "bitcast_convert_type/f32_to_u8/f32[6]": partial(lax.bitcast_convert_type, new_dtype=np.uint8),
    "reduce_precision/e5m10/f64[3,4]": partial(lax.reduce_precision, exponent_bits=5, mantissa_bits=10),
    "overflow/i8_add/i8[3,4]": lambda a, b: a + b,
    # elementwise and comparisons
    "sin/f64[3,4]": jnp.sin,
    "abs/c128[3,4]": jnp.abs,
    "conj/c128[3,4]": jnp.conj,
    "real/c128[3,4]": jnp.real,
    "round/to_nearest_even/f64[3,4]": jnp.round,
    "round/away_from_zero/f64[3,4]": lax.round,
    "integer_pow/y=3/f64[3,4]": lambda a: a ** 3,
    "integer_pow/y=-2/f64[3,4]": lambda a: lax.integer_pow(a, -2),
    "exp2/f64[3,4]": jnp.exp2,
    "square/f64[3,4]": jnp.square,
    "is_finite/f64[3,4]": jnp.isfinite,
    "stop_gradient/f64[3,4]": lax.stop_gradient,
    "logistic/f64[3,4]": lax.logistic,
    "polygamma/m=1/f64[3,4]": lambda a: lax.polygamma(jnp.full(a.shape, 1.0), a),
    "pow/int_exponent/f64[3,4],i32[3,4]": jnp.power,
    "pow/f64[3,4]": lambda a, b: a ** b,
    "div/i32[3,4]": lax.div,
    "max/f64[3,4]": jnp.maximum,
    "atan2/f64[3,4]": jnp.arctan2,
    "complex/f64[3,4]": lax.complex,
    "add/broadcast/f64[3,4],f64[4]": lambda a, b: a + b,
    "mul/scalar/f64[3,4],f64[]": lambda a, b: a * b,
    "sub/broadcast_col/f64[3,4],f64[3,1]": lambda a, b: a - b,
    "betainc/f64[3,4]": lax.betainc,
    "eq/f64[3,4]": lambda a, b: a == b,
    "lt/i32[3,4]": lambda a, b: a < b,
    "ge/f64[3,4]": jnp.greater_equal,
    "and/bool[3,4]": lambda a, b: a & b,
    "xor/u32[3,4]": jnp.bitwise_xor,
    "not/i32[3,4]": lambda a: ~a,
    "shift_left/i32[3,4]": lambda a, b: a << b,
    "shift_right_arithmetic/i32[3,4]": lambda a, b: a >> b,
    "shift_right_logical/u32[3,4]": lambda a, b: a >> b,
    "population_count/u32[3,4]": lax.population_count,
    "clz/i64[3,4]": lax.clz,
    "select_n/3way/i32[3,4],f64[3,4]": lax.select_n,
    "select_n/scalar_pred/bool[],f64[3,4]": lax.select_n,
    "clamp/literal_bounds/f64[3,4]": lambda a: lax.clamp(-0.5, a, 0.5),
    "clamp/scalar_bounds/f64[],f64[3,4]": lax.clamp,
    # shapes
    "reshape/f64[3,4]": lambda a: a.reshape(4, 3),
    "reshape/flatten/f64[3,4]": jnp.ravel,
    "reshape/dimensions/f64[3,4]": lambda a: lax.reshape(a, (12,), (1, 0)),
    "transpose/f64[3,4]": lambda a: a.T,
    "transpose/3d/f64[2,3,4]": lambda a: jnp.transpose(a, (2, 0, 1)),
    "jnp.swapaxes/f64[2,3,4]": lambda a: jnp.swapaxes(a, 0, 2),
    "broadcast_in_dim/row/f64[4]": lambda a: jnp.broadcast_to(a, (3, 4)),
    "broadcast_in_dim/scalar/f64[]": lambda a: jnp.broadcast_to(a, (3, 4)),
    "broadcast_in_dim/size1/f64[3,1]": lambda a: jnp.broadcast_to(a, (3, 4)),
    "broadcast/leading/f64[3,4]": lambda a: lax.broadcast(a, (2,)),
    "broadcast_in_dim/middle/f64[3,4]": lambda a: lax.broadcast_in_dim(a, (3, 2, 4), (0, 2)),
    "squeeze/f64[3,1,4]": lambda a: jnp.squeeze(a, 1),
    "squeeze/all_ones/f64[1,4,1]": jnp.squeeze,
    "expand_dims/f64[3,4]": lambda a: lax.expand_dims(a, (0, 2)),
    "jnp.expand_dims/f64[3,4]": lambda a: jnp.expand_dims(a, -1),
    "concatenate/axis=0/f64[3,4],f64[2,4]": lambda a, b: jnp.concatenate([a, b]),
    "concatenate/axis=1x3/f64[3,4],f64[3,1],f64[3,2]": lambda a, b, c: jnp.concatenate([a, b, c], axis=1),
    "jnp.stack/f64[3,4]": lambda a, b: jnp.stack([a, b], axis=1),
    "pad/edges/f64[3,4]": lambda a: lax.pad(a, 0.0, ((1, 2, 0), (0, 1, 0))),
    "pad/interior_negative/f64[3,4]": lambda a: lax.pad(a, 0.0, ((1, -1, 1), (0, 2, 0))),
    "pad/value_arg/f64[3,4],f64[]": lambda a, b: lax.pad(a, b, ((1, 1, 1), (2, 0, 0))),
    "rev/both/f64[3,4]": lambda a: jnp.flip(a),
    "split/f64[3,4]": lambda a: tuple(lax.split(a, (1, 3), axis=1)),
    "iota/no_args/()": lambda: lax.broadcasted_iota(int32, (3, 4), 1) + lax.iota(int32, 4),
    "iota/broadcasted/f64[3,4]": lambda a: a * lax.broadcasted_iota(float64, (3, 4), 0),
    "jnp.arange/f64[3,4]": lambda a: a + jnp.arange(4),
    "jnp.eye/f64[3,4]": lambda a: a @ jnp.eye(4),
    "jnp.tile/f64[3,4]": lambda a: jnp.tile(a, (2, 1)),
    "jnp.repeat/f64[3,4]": lambda a: jnp.repeat(a, 2, axis=1),
    "device_put/f64[3,4]": lambda a: lax.device_put(a) * 2.0,
    "identity/f64[3,4]": lambda a: a,
    "identity/two_outputs_swapped/f64[3,4],i32[3,4]": lambda a, b: (b, a),
    "literal_output/f64[3,4]": lambda a: (a, 1.5),
    # reductions
    "reduce_sum/axis=0/f64[3,4]": lambda a: jnp.sum(a, axis=0),
    "reduce_sum/axes=(0,2)/f64[2,3,4]": lambda a: a.sum(axis=(0, 2)),
    "reduce_sum/axis=1/i32[3,4]": lambda a: jnp.sum(a, axis=1),
    "reduce_sum/keepdims/f64[3,4]": lambda a: jnp.sum(a, axis=1, keepdims=True),
    "reduce_max/axis=1/f64[3,4]": lambda a: a.max(axis=1),
    "reduce_max/all/i32[3,4]": jnp.max,
    "reduce_min/axis=0/f64[3,4]": lambda a: jnp.min(a, 0),
    "reduce_prod/all/f64[3,4]": lambda a: lax.reduce_prod(a, (0, 1)),
    "reduce_and/axis=1/bool[3,4]": lambda a: jnp.all(a, axis=1),
    "reduce_or/axis=0/bool[3,4]": lambda a: jnp.any(a, axis=0),
    "reduce_xor/axis=0/i32[3,4]": lambda a: lax.reduce_xor(a, (0,)),
    "argmax/axis=1/f64[3,4]": lambda a: jnp.argmax(a, axis=1),
    "argmax/int32_index/f64[3,4]": lambda a: lax.argmax(a, 0, jnp.int32),
    "argmin/axis=0/f64[3,4]": lambda a: a.argmin(axis=0),
    "cumsum/reverse/f64[3,4]": lambda a: lax.cumsum(a, axis=0, reverse=True),
    "cumlogsumexp/axis=1/f64[3,4]": lambda a: lax.cumlogsumexp(a, axis=1),
    "jnp.mean/f64[3,4]": lambda a: a.mean(axis=0),
    "reduce_window_sum/2x2/f64[3,4]": lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 1), "VALID"),
    "reduce_window_max/same/f64[3,4]": lambda a: lax.reduce_window(a, -np.inf, lax.max, (3, 1), (1, 1),
                                                                   "SAME"),
    "reduce_window_sum/stride_pad/f64[3,4]": lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 2), (2, 2),
                                                                          ((1, 0), (0, 1))),
    "reduce_window/mul/f64[3,4]": lambda a: lax.reduce_window(a, 1.0, lambda x, y: x * y, (2, 2), (1, 1),
                                                               "VALID"),
    # contractions
    "dot_general/matmul/f64[3,4],f64[4,5]": lambda a, b: a @ b,
    "dot_general/matmul/i32[3,4],i32[4,2]": jnp.matmul,
    "dot_general/batched/f64[2,3,4],f64[2,4,2]": lambda a, b: lax.dot_general(a, b,
                                                                               (((2,), (1,)), ((0,), (0,)))),
    "dot_general/vector/f64[6]": jnp.dot,
    "dot_general/matvec/f64[3,4],f64[4]": lambda a, b: a @ b,
    "dot_general/vecmat/f64[3],f64[3,4]": lambda a, b: a @ b,
    "dot_general/outer/f64[3],f64[4]": lambda a, b: lax.dot_general(a, b, (((), ()), ((), ()))),
    "dot_general/preferred_f64/f32[3,4],f32[4,2]": partial(jnp.matmul, preferred_element_type=float64),
    "dot_general/precision_highest/f64[3,4],f64[4,2]": lambda a, b: jnp.matmul(a, b, precision="highest"),
    "einsum/bij,bjk/f64[2,3,4],f64[2,4,2]": lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
    "einsum/trace/f64[4,4]": lambda a: jnp.einsum("ii->", a),
    "conv/1d_nwc_stride2/f64[2,9,3],f64[3,3,4]": lambda a, b: lax.conv_general_dilated(
        a, b, (2,), "VALID", dimension_numbers=("NWC", "WIO", "NWC")),
    "conv/2d_nchw_same/f64[1,2,5,5],f64[3,2,3,3]": partial(lax.conv_general_dilated, window_strides=(1, 1),
                                                            padding="SAME"),
    "conv/2d_feature_groups/f64[1,4,4,4],f64[6,2,3,3]": lambda a, b: lax.conv_general_dilated(
        a, b, (1, 1), "VALID", feature_group_count=2),
    "conv/lax.conv/f64[2,1,4,4],f64[2,1,2,2]": lambda a, b: lax.conv(a, b, (1, 1), "VALID"),
    "ragged_dot/f64[3,4],f64[2,4,2],i32[2]": lax.ragged_dot,
    # indexing
    "slice/strided/f64[3,4]": lambda a: lax.slice(a, (0, 1), (3, 4), (1, 2)),
    "slice/basic/f64[3,4]": lambda a: a[1:, :3],
    "slice/getitem/f64[3,4]": lambda a: a[1:, ::2],
    "slice/getitem_scalar/f64[3,4]": lambda a: a[1, 2],
    "dynamic_slice/f64[3,4],i32[]": lambda a, i, j: lax.dynamic_slice(a, (i, j), (2, 2)),
    "dynamic_slice/getitem/f64[3,4],i32[]": lambda a, i: a[i],
    "dynamic_slice/int64_index/f64[3,4],i64[]": lambda a, i: lax.dynamic_slice(a, (0, i), (3, 2)),
    "dynamic_update_slice/f64[3,4],f64[2,2],i32[]": lambda a, b, i, j: lax.dynamic_update_slice(a, b, (i, j)),
    "sort/axis=0/f64[3,4]": lambda a: jnp.sort(a, axis=0),
    "sort/multi_operand/f64[3,4]": lambda a, b: lax.sort((a, b), dimension=1),
    "sort/num_keys=2/i32[3,4],f64[3,4]": lambda a, b, c: lax.sort((a, b, c), dimension=1, num_keys=2),
    "top_k/f64[3,4]": lambda a: lax.top_k(a, 2),
    "gather/rows/f64[3,4],i32[4]": lambda a, i: lax.gather(
        a, lax.broadcast_in_dim(_wrap_negative(i, 3), (4, 1), (0,)),
        lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
        (1, 4), mode="promise_in_bounds"),
    "scatter-add/dup_rows/f64[3,4],i32[4],f64[4,4]": lambda a, i, u: lax.scatter_add(
        a, lax.broadcast_in_dim(_wrap_negative(i, 3), (4, 1), (0,)), u, _ROW_SCATTER, mode="fill"),
    "scatter/set_unique/f64[3,4],i32[2],f64[2,4]": lambda a, i, u: lax.scatter(
        a, lax.broadcast_in_dim(_wrap_negative(i, 3), (2, 1), (0,)), u, _ROW_SCATTER, mode="fill"),
    "scatter-mul/unique/f64[3,4],i32[2],f64[2,4]": lambda a, i, u: lax.scatter_mul(
        a, lax.broadcast_in_dim(_wrap_negative(i, 3), (2, 1), (0,)), u, _ROW_SCATTER, mode="fill",
        unique_indices=True),
    "scatter-max/unique/f64[3,4],i32[2],f64[2,4]": lambda a, i, u: lax.scatter_max(
        a, lax.broadcast_in_dim(_wrap_negative(i, 3), (2, 1), (0,)), u, _ROW_SCATTER, mode="fill"),
    "cumprod/axis=1/f64[3,4]": lambda a: lax.cumprod(a, axis=1),
    "cummax/reverse/f64[3,4]": lambda a: lax.cummax(a, axis=0, reverse=True),
    "cummin/axis=1/f64[3,4]": lambda a: lax.cummin(a, axis=1),
    "reduce_window_min/2x2/f64[3,4]": lambda a: lax.reduce_window(a, np.inf, lax.min, (2, 2), (1, 2),
                                                                  "VALID"),
    "approx_max_k/f64[3,4]": lambda a: lax.approx_max_k(a, 2),
}

# Cases where JAX's text has a jit wrapper or a function name eqjax does not reproduce.
SAME_PRIMITIVES = {
    "jnp.cumsum/f64[3,4]": lambda a: jnp.cumsum(a, axis=1),
    "jnp.where/bool[3,4],f64[3,4],f64[4]": jnp.where,
    "jnp.triu/f64[3,4]": jnp.triu,
    "jnp.linalg.norm/f64[3,4]": lambda a: jnp.sqrt(jnp.sum(a * a)),
    "argsort/f64[3,4]": jnp.argsort,
    "sort/descending/f64[3,4]": lambda a: jnp.flip(jnp.sort(a, axis=1), axis=1),
    "reduce/variadic/f64[3,4]": lambda a, b: lax.reduce((a, b), (0.0, 1.0),
                                                        lambda x, y: (x[0] + y[0], x[1] * y[1]), (1,)),
    "jnp.roll/f64[3,4]": lambda a: jnp.concatenate([a[:, 3:], a[:, :3]], axis=1),
}


def _trace_case(case_id: str, fn):
    case = CASES[case_id]
    args = case.arrays("args")
    closed = make_jaxpr(fn)(*args)
    typecheck(closed)
    return case, args, closed


def _eval_matches(case, args, closed):
    from eval.interpreter import eval_jaxpr
    got = eval_jaxpr(closed, *args)
    compare_lists(case.id, got, case.arrays("out"), case.rtol, case.atol)


@pytest.mark.parametrize("case_id", sorted(SAME_TEXT))
def test_traced_text_equals_jax(case_id):
    case, args, closed = _trace_case(case_id, SAME_TEXT[case_id])
    assert str(closed) == case.jaxpr_text
    _eval_matches(case, args, closed)


def _primitive_sequence(closed: ClosedJaxpr) -> list[str]:
    from ir.core import subjaxprs
    out = []
    for eqn in closed.eqns:
        if eqn.primitive == "jit":  # JAX's wrapper, inlined by eqjax
            out += _primitive_sequence(subjaxprs(eqn)[0])
        else:
            out.append(eqn.primitive)
    return out


@pytest.mark.parametrize("case_id", sorted(SAME_PRIMITIVES))
def test_traced_primitives_equal_jax(case_id):
    from ir.text import parse_jaxpr
    case, args, closed = _trace_case(case_id, SAME_PRIMITIVES[case_id])
    want = _primitive_sequence(parse_jaxpr(case.jaxpr_text))
    assert _primitive_sequence(closed) == want
    assert [str(a) for a in closed.out_avals] == [str(a) for a in parse_jaxpr(case.jaxpr_text).out_avals]
    _eval_matches(case, args, closed)


# lax function names that differ from the primitive they bind
LAX_NAME = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
            "regularized_incomplete_beta": "betainc"}
FOUNDATION = ("unary", "binary", "compare_bitwise", "reduce", "shape", "indexing", "dot_conv", "dtype")


def _single_primitive_cases() -> list[str]:
    """Cases whose whole program is one param-less equation on the inputs, in order."""
    from ir.text import parse_jaxpr
    out = []
    for case in CASES.values():
        if case.family not in FOUNDATION or case.id in SAME_TEXT:
            continue
        closed = parse_jaxpr(case.jaxpr_text)
        eqns = closed.eqns
        if (len(eqns) == 1 and not eqns[0].params and eqns[0].invars == closed.jaxpr.invars
                and len(closed.jaxpr.outvars) == 1):
            out.append(case.id)
    return sorted(out)


@pytest.mark.parametrize("case_id", _single_primitive_cases())
def test_single_primitive_cases_via_lax(case_id):
    from ir.text import parse_jaxpr
    prim = parse_jaxpr(CASES[case_id].jaxpr_text).eqns[0].primitive
    fn = getattr(lax, LAX_NAME.get(prim, prim))
    case, args, closed = _trace_case(case_id, fn)
    assert str(closed) == case.jaxpr_text
    _eval_matches(case, args, closed)


def _roundtrip_cases() -> list[str]:
    from ir.text import parse_jaxpr
    ids = []
    for case in CASES.values():
        try:
            if str(parse_jaxpr(case.jaxpr_text)) == case.jaxpr_text and "consts" not in case.raw:
                ids.append(case.id)
        except Exception:  # the parser's own tests own its failures
            continue
    return sorted(ids)


@pytest.mark.parametrize("case_id", _roundtrip_cases())
def test_rebinding_every_fixture_program_reproduces_it(case_id):
    """bind() replaying a parsed fixture program (all families) gives back JAX's exact text."""
    from ir.text import parse_jaxpr
    case = CASES[case_id]
    parsed = parse_jaxpr(case.jaxpr_text)
    closed = make_jaxpr(lambda *a: bind_jaxpr(parsed, *a))(*[v.aval for v in parsed.jaxpr.invars])
    assert str(closed) == case.jaxpr_text


def test_fixture_ids_exist():
    missing = [k for k in list(SAME_TEXT) + list(SAME_PRIMITIVES) if k not in CASES]
    assert not missing


# --- weak-typed literal promotion --------------------------------------------------------------

# (input dtype, Python scalar, op, dtype the input is converted to and that conversion's weak_type
#  (None: no conversion), the literal's dtype, the result dtype) — the dtype.json `weak/*` cases.
WEAK_TABLE = [
    (int32, 2, "mul", None, "i32", int32),
    (float32, 2.5, "mul", None, "f32", float32),
    (int32, 2.5, "add", (float64, True), "f64", float64),
    (bool_, 2, "mul", (int64, True), "i64", int64),
    (float16, 3, "mul", None, "f16", float16),
    (np.uint8, 1, "add", None, "u8", np.uint8),
    (float32, 1j, "mul", (np.complex64, False), "c64", np.complex64),
    (int64, True, "add", None, "i64", int64),
    (bool_, 1.5, "add", (float64, True), "f64", float64),
]


@pytest.mark.parametrize("in_dtype,scalar,op,converted,lit,out", WEAK_TABLE)
def test_weak_literal_promotion(in_dtype, scalar, op, converted, lit, out):
    in_dtype, out = lax.to_dtype(in_dtype), lax.to_dtype(out)
    fn = {"mul": lambda a: a * scalar, "add": lambda a: a + scalar}[op]
    closed = make_jaxpr(fn)(ShapedArray((3,), in_dtype))
    eqns = closed.eqns
    if converted is None:
        assert [e.primitive for e in eqns] == [op]
    else:
        assert [e.primitive for e in eqns] == ["convert_element_type", op]
        assert eqns[0].params == {"new_dtype": lax.to_dtype(converted[0]), "sharding": None, "weak_type": converted[1]}
    literal = eqns[-1].invars[1]
    assert isinstance(literal, Literal) and literal.aval.dtype.short == lit
    assert closed.out_avals[0].dtype == out


def test_weak_result_stays_weak_until_strong_operand():
    def f(i, x):
        w = i + 2.5           # weak f64
        return w * x          # x is strong f32: the weak value converts to f32
    closed = make_jaxpr(f)(ShapedArray((3,), int32), ShapedArray((3,), float32))
    prims = [e.primitive for e in closed.eqns]
    assert prims == ["convert_element_type", "add", "convert_element_type", "mul"]
    assert closed.eqns[2].params["new_dtype"] == float32 and closed.eqns[2].params["weak_type"] is False
    assert closed.out_avals[0].dtype == float32


def test_where_with_python_scalar_broadcasts_a_literal_of_the_array_dtype():
    # JAX's jit-wrapped `_where` converts the scalar inside the jit; inlined, it is folded.
    closed = make_jaxpr(lambda a: jnp.where(a > 0, a, 0.0))(ShapedArray((3, 4), float32))
    assert [e.primitive for e in closed.eqns] == ["gt", "broadcast_in_dim", "select_n"]
    zero = closed.eqns[1].invars[0]
    assert isinstance(zero, Literal) and zero.aval.dtype == float32
    assert closed.eqns[2].invars[1] is closed.eqns[1].outvars[0]  # select_n(pred, on_false, on_true)


def test_python_scalar_args_are_weak_invars():
    closed = make_jaxpr(lambda x, y: x * y)(2.0, np.float32(3.0))
    a, b = closed.jaxpr.invars
    assert a.aval.weak_type and a.aval.dtype == float64
    assert not b.aval.weak_type and b.aval.dtype == float32
    assert closed.out_avals[0].dtype == float32


# --- pytrees -----------------------------------------------------------------------------------

def test_pytree_inputs_and_outputs():
    def f(params, x):
        h = x @ params["w"] + params["b"]
        return {"out": h, "aux": (jnp.sum(h), None, [x])}
    params = {"w": np.ones((3, 2)), "b": np.zeros(2)}
    closed, out_shape = make_jaxpr(f, return_shape=True)(params, np.ones((4, 3)))
    # leaves in sorted-key order: params["b"], params["w"], x
    assert [str(v.aval) for v in closed.jaxpr.invars] == ["f64[2]", "f64[3,2]", "f64[4,3]"]
    assert tree_structure(out_shape) == tree_structure({"out": 0, "aux": (0, None, [0])})
    assert out_shape["out"] == ShapedArray((4, 2), float64)
    assert [str(a) for a in closed.out_avals] == ["f64[]", "f64[4,3]", "f64[4,2]"]


def test_trace_to_jaxpr_returns_out_tree():
    closed, out_tree = trace_to_jaxpr(lambda p: (p[0] * 2.0, {"s": p[1]}),
                                      [(ShapedArray((2,), float64), ShapedArray((), int32))])
    assert len(closed.jaxpr.invars) == 2
    assert out_tree == tree_structure((0, {"s": 0}))
    assert tree_unflatten(out_tree, ["a", "b"]) == ("a", {"s": "b"})


TREES = [(), None, 1, (1, 2), [1, (2, 3)], {"b": 1, "a": [2, None]}, ((),), {"x": {"y": (1,)}}]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_tree_roundtrip(tree):
    leaves, treedef = tree_flatten(tree)
    assert tree_unflatten(treedef, leaves) == tree
    assert treedef == tree_structure(tree) and hash(treedef) == hash(tree_structure(tree))
    assert tree_map(lambda x: x, tree) == tree


def test_tree_dict_keys_sorted_and_structures_differ():
    assert tree_flatten({"b": 1, "a": 2})[0] == [2, 1]
    assert tree_structure((1, 2)) != tree_structure([1, 2])
    assert tree_structure((1,)) != tree_structure((1, 2))
    assert tree_map(lambda x, y: x + y, (1, [2]), (10, [20])) == (11, [22])
    with pytest.raises(ValueError):
        tree_map(lambda x, y: x, (1, 2), [1, 2])


# --- constants, nesting, static args, errors ---------------------------------------------------

def test_numpy_array_constants_become_constvars_and_scalars_literals():
    c = np.arange(3.0)
    closed = make_jaxpr(lambda x: x * c + c + np.float64(2.0))(np.ones(3))
    assert len(closed.jaxpr.constvars) == 1 and closed.consts[0] is c  # deduplicated
    assert isinstance(closed.eqns[-1].invars[1], Literal)
    from eval.interpreter import eval_jaxpr
    np.testing.assert_allclose(eval_jaxpr(closed, np.ones(3))[0], c + c + 2.0)


def test_unused_results_become_dropvars():
    def f(x):
        jnp.sin(x)  # result unused
        a, _ = lax.top_k(x, 1)
        return a
    closed = make_jaxpr(f)(np.ones(4))
    assert isinstance(closed.eqns[0].outvars[0], DropVar)
    assert isinstance(closed.eqns[1].outvars[1], DropVar)


def test_static_argnums():
    closed = make_jaxpr(lambda x, n: x ** n, static_argnums=1)(np.ones(3), 3)
    assert len(closed.jaxpr.invars) == 1
    assert closed.eqns[0].params == {"y": 3}


def test_nested_make_jaxpr_and_closure_capture():
    seen = {}

    def outer(x, y):
        inner = make_jaxpr(lambda z: jnp.sin(z) * y)(ShapedArray((3,), float64))
        seen["inner"] = inner
        hoisted, consts = hoist_consts(inner)
        assert consts[0] is y  # the outer tracer, captured as a constant
        return bind_jaxpr(hoisted, *consts, x)[0] + 1.0

    closed = make_jaxpr(outer)(np.ones(3), np.full(3, 2.0))
    inner = seen["inner"]
    assert [e.primitive for e in inner.eqns] == ["sin", "mul"]
    assert len(inner.jaxpr.constvars) == 1
    assert [e.primitive for e in closed.eqns] == ["sin", "mul", "add"]
    from eval.interpreter import eval_jaxpr
    x, y = np.linspace(0, 1, 3), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(eval_jaxpr(closed, x, y)[0], np.sin(x) * y + 1.0)


def test_traced_scalar_constants_stay_concrete():
    def f(x):
        n = jnp.asarray(3)
        assert int(n) == 3 and bool(jnp.asarray(True))
        return x * float(jnp.asarray(2.5))
    closed = make_jaxpr(f)(np.ones(2))
    assert [e.primitive for e in closed.eqns] == ["mul"]


def test_tracer_errors_are_clear():
    with pytest.raises(TracingError, match="bool"):
        make_jaxpr(lambda x: 1.0 if x > 0 else 0.0)(1.0)
    leaked = []
    make_jaxpr(lambda x: leaked.append(x) or x)(np.ones(2))
    with pytest.raises(TracingError, match="escaped"):
        make_jaxpr(lambda y: y + leaked[0])(np.ones(2))
    with pytest.raises(TracingError, match="no active trace"):
        jnp.sin(np.ones(2))
    with pytest.raises(NotImplementedError, match="data-dependent"):
        make_jaxpr(lambda x: x[x > 0])(np.ones(3))
    with pytest.raises(TypeError):
        make_jaxpr(lambda x: x)("not an array")


def test_bind_jaxpr_inlines_a_parsed_program():
    from ir.text import parse_jaxpr
    case = CASES["program/mlp_tanh"]
    parsed = parse_jaxpr(case.jaxpr_text)
    closed = make_jaxpr(lambda *a: bind_jaxpr(parsed, *a)[0])(*case.arrays("args"))
    assert str(closed) == case.jaxpr_text
