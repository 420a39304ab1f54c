"""Shape/dtype rules of the higher-order primitives: calls of nested jaxprs, cond, while, scan,
custom_linear_solve, and the small primitives that travel with them.

Operands must have the shape and dtype of the inner jaxpr inputs they feed (weak types are not
compared: JAX does not print them), and the results are the inner jaxpr's outputs, as in JAX's
`_cond_typecheck`, `_scan_typecheck` and `_while_loop_abstract_eval`
(jax/_src/lax/control_flow/*.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from ir.core import ClosedJaxpr, ShapedArray
from ir.dtypes import DType, bool_, int32
from ir.errors import JaxprTypeError
from ir.params import Record
from ir.primitives import shape_rule


def _types(avals: Sequence[ShapedArray]) -> str:
    return "(" + ", ".join(map(str, avals)) + ")"


def _check_types(prim: str, what: str, expected: Sequence[ShapedArray],
                 actual: Sequence[ShapedArray]) -> None:
    if len(expected) != len(actual) or not all(
            e.same_type(a) for e, a in zip(expected, actual, strict=True)):
        raise JaxprTypeError(f"{what} do not match", primitive=prim,
                             expected=_types(expected), actual=_types(actual))


def _jaxpr_param(prim: str, params: dict, name: str) -> ClosedJaxpr:
    body = params.get(name)
    if not isinstance(body, ClosedJaxpr):
        raise JaxprTypeError(f"param {name!r} must be a jaxpr", primitive=prim,
                             expected="{ lambda ... }", actual=repr(body))
    return body


def _count_param(prim: str, params: dict, name: str, limit: int) -> int:
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise JaxprTypeError(f"param {name!r} must be an operand count", primitive=prim,
                             expected=f"an int in [0, {limit}]", actual=repr(value))
    return int(value)


def _weak_join(avals: Sequence[ShapedArray]) -> ShapedArray:
    """The common type of avals that agree on shape and dtype: weak only if all of them are."""
    first = avals[0]
    return ShapedArray(first.shape, first.dtype, all(a.weak_type for a in avals))


# Call-like primitives: the operands feed the body's inputs, the results are its outputs.
# The value is the param holding the body.
_CALL_BODY = {
    "jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
    "remat2": "jaxpr", "checkpoint": "jaxpr", "composite": "jaxpr",
    "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
}


def call_rule(prim: str, body_param: str, *avals: ShapedArray, **params) -> list[ShapedArray]:
    body = _jaxpr_param(prim, params, body_param)
    _check_types(prim, f"operands and the inputs of {body_param}", body.in_avals, avals)
    return list(body.out_avals)


for _prim, _body_param in _CALL_BODY.items():
    shape_rule(_prim)(partial(call_rule, _prim, _body_param))


@shape_rule("cond")
def cond_rule(index: ShapedArray, *operands: ShapedArray, **params) -> list[ShapedArray]:
    if index.shape != () or index.dtype not in (int32, bool_):
        raise JaxprTypeError("the branch index (first operand) must be a scalar", primitive="cond",
                             expected="i32[] or bool[]", actual=str(index))
    branches = params.get("branches")
    if not isinstance(branches, (tuple, list)) or not branches \
            or not all(isinstance(b, ClosedJaxpr) for b in branches):
        raise JaxprTypeError("param 'branches' must be a non-empty tuple of jaxprs", primitive="cond",
                             expected="( { lambda ... } ... )", actual=repr(branches))
    first = branches[0]
    for i, branch in enumerate(branches[1:], start=1):
        _check_types("cond", f"input types of branch 0 and branch {i}", first.in_avals, branch.in_avals)
        _check_types("cond", f"output types of branch 0 and branch {i}", first.out_avals, branch.out_avals)
    _check_types("cond", "operands and the branch inputs", first.in_avals, operands)
    return cond_results([b.out_avals for b in branches])


# The result avals of scan, while and cond from their bodies' output avals: the shape rules below use them,
# and so does the e-graph, whose control-flow nodes hold their bodies as terms (rewrites/decode.py).
def cond_results(branch_outs: Sequence[Sequence[ShapedArray]]) -> list[ShapedArray]:
    """A cond's results: its branches' outputs, weak only where every branch's is."""
    return [_weak_join(avals) for avals in zip(*branch_outs, strict=True)]


def while_results(init: Sequence[ShapedArray], body_outs: Sequence[ShapedArray]) -> list[ShapedArray]:
    """A while's results: its carries, weak only where both the init and the body's output are."""
    return [_weak_join(pair) for pair in zip(init, body_outs, strict=True)]


def scan_results(length: int, num_carry: int, body_outs: Sequence[ShapedArray]) -> list[ShapedArray]:
    """A scan's results: the body's carry outputs, then its ys stacked along a leading axis of `length`."""
    carry_out, ys = body_outs[:num_carry], body_outs[num_carry:]
    return [*carry_out, *(ShapedArray((length, *y.shape), y.dtype, y.weak_type) for y in ys)]


@shape_rule("while")
def while_rule(*avals: ShapedArray, **params) -> list[ShapedArray]:
    cond_jaxpr = _jaxpr_param("while", params, "cond_jaxpr")
    body_jaxpr = _jaxpr_param("while", params, "body_jaxpr")
    cond_nconsts = _count_param("while", params, "cond_nconsts", len(avals))
    body_nconsts = _count_param("while", params, "body_nconsts", len(avals) - cond_nconsts)
    cond_consts = avals[:cond_nconsts]
    body_consts = avals[cond_nconsts:cond_nconsts + body_nconsts]
    init = avals[cond_nconsts + body_nconsts:]
    _check_types("while", "cond consts and carry vs cond_jaxpr inputs", cond_jaxpr.in_avals,
                 cond_consts + init)
    _check_types("while", "cond_jaxpr outputs", [ShapedArray((), bool_)], cond_jaxpr.out_avals)
    _check_types("while", "body consts and carry vs body_jaxpr inputs", body_jaxpr.in_avals,
                 body_consts + init)
    _check_types("while", "body_jaxpr outputs and the carry", init, body_jaxpr.out_avals)
    return while_results(init, body_jaxpr.out_avals)


@shape_rule("scan")
def scan_rule(*avals: ShapedArray, **params) -> list[ShapedArray]:
    body = _jaxpr_param("scan", params, "jaxpr")
    num_consts = _count_param("scan", params, "num_consts", len(avals))
    num_carry = _count_param("scan", params, "num_carry", len(avals) - num_consts)
    length = params.get("length")
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise JaxprTypeError("param 'length' must be a non-negative int", primitive="scan",
                             expected="length=N", actual=repr(length))
    length = int(length)
    consts, init = avals[:num_consts], avals[num_consts:num_consts + num_carry]
    xs = avals[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise JaxprTypeError("every scanned operand (xs) must have leading axis of size length",
                                 primitive="scan", expected=f"[{length},...]", actual=str(x))
    x_slices = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    _check_types("scan", "consts, carry and xs slices vs jaxpr inputs", body.in_avals,
                 [*consts, *init, *x_slices])
    carry_in = body.in_avals[num_consts:num_consts + num_carry]
    _check_types("scan", "carry outputs and carry inputs of the jaxpr", carry_in, body.out_avals[:num_carry])
    return scan_results(length, num_carry, body.out_avals)


@shape_rule("optimization_barrier")
def optimization_barrier_rule(*avals: ShapedArray, **_) -> list[ShapedArray]:
    return list(avals)


# custom_linear_solve's operands are the consts of each of these jaxprs, in this order, then b.
_LINEAR_SOLVE_FIELDS = ("matvec", "vecmat", "solve", "transpose_solve")


@shape_rule("custom_linear_solve")
def custom_linear_solve_rule(*avals: ShapedArray, const_lengths, jaxprs, **_) -> list[ShapedArray]:
    if not isinstance(const_lengths, Record) or not isinstance(jaxprs, Record):
        raise JaxprTypeError("params const_lengths and jaxprs must be _LinearSolveTuple records",
                             primitive="custom_linear_solve", expected="_LinearSolveTuple(matvec=..., ...)",
                             actual=f"{const_lengths!r}, {jaxprs!r}")
    counts = [int(const_lengths.get(field) or 0) for field in _LINEAR_SOLVE_FIELDS]
    if sum(counts) > len(avals):
        raise JaxprTypeError("const_lengths count more consts than there are operands",
                             primitive="custom_linear_solve", expected=f"at most {len(avals)}",
                             actual=sum(counts))
    b = avals[sum(counts):]
    start = 0
    for field, count in zip(_LINEAR_SOLVE_FIELDS, counts, strict=True):
        consts, start = avals[start:start + count], start + count
        body = jaxprs.get(field)
        if body is None and count == 0:
            continue
        if not isinstance(body, ClosedJaxpr):
            raise JaxprTypeError(f"jaxprs.{field} must be a jaxpr", primitive="custom_linear_solve",
                                 expected="{ lambda ... }", actual=repr(body))
        _check_types("custom_linear_solve", f"{field} consts and b vs {field} inputs", body.in_avals,
                     [*consts, *b])
        _check_types("custom_linear_solve", f"{field} outputs and b", b, body.out_avals)
    return [a.strip_weak() for a in b]


@shape_rule("platform_index")
def platform_index_rule(*avals: ShapedArray, **_) -> list[ShapedArray]:
    if avals:
        raise JaxprTypeError("platform_index takes no operands", primitive="platform_index",
                             expected="()", actual=_types(avals))
    return [ShapedArray((), int32)]


# Placeholder for a residual a cond branch does not produce (appears in partial-eval'd grads).
@shape_rule("empty2")
def empty2_rule(*avals: ShapedArray, dtype, **_) -> list[ShapedArray]:
    if avals or not isinstance(dtype, DType):
        raise JaxprTypeError("empty2 takes no operands and a dtype param", primitive="empty2",
                             expected="empty2[dtype=...]", actual=f"{_types(avals)}, dtype={dtype!r}")
    return [ShapedArray((), dtype)]
