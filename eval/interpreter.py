"""The Jaxpr interpreter: runs each equation's NumPy implementation in order.

A jaxpr is compiled once into a plan (cached per Jaxpr object): every variable gets a slot in a flat
list, literals are materialized as 0-d arrays, and each equation becomes a tuple
(implementation, operand slots, result slots, params). Running the plan is then one tight loop,
which keeps the interpreter's own cost per equation near a microsecond (see `eqjax bench eval`).
An equation with key-typed values gets the implementation and params of its key rule
(`eval.registry.get_key_impl`), which run on the key data.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from eval.registry import get_impl, get_key_impl
from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray
from ir.errors import EqjaxError, JaxprEvalError, JaxprTypeError, UnsupportedEvaluation, clipped
from ir.primitives import get_primitive


class _Plan:
    __slots__ = ("n_slots", "const_slots", "in_slots", "literal_slots", "steps", "out_slots", "jaxpr")

    def __init__(self, jaxpr: Jaxpr):
        slot_of: dict[int, int] = {}
        self.jaxpr = jaxpr
        self.literal_slots: list[tuple[int, np.ndarray]] = []

        def slot(v) -> int:
            s = slot_of.get(id(v))
            if s is None:
                s = slot_of[id(v)] = len(slot_of)
                if isinstance(v, Literal):
                    self.literal_slots.append((s, literal_array(v)))
            return s

        self.const_slots = [slot(v) for v in jaxpr.constvars]
        self.in_slots = [slot(v) for v in jaxpr.invars]
        self.steps = []
        for eqn in jaxpr.eqns:
            fn, params = _impl_of(eqn)
            multiple = get_primitive(eqn.primitive).multiple_results
            ins = tuple(slot(x) for x in eqn.invars)
            outs = tuple(slot(v) for v in eqn.outvars)  # a DropVar gets a slot nobody reads
            self.steps.append((fn, ins, outs, params, multiple, eqn))
        self.out_slots = [slot(x) for x in jaxpr.outvars]
        self.n_slots = len(slot_of)


def _impl_of(eqn: Eqn) -> tuple[Any, dict]:
    avals_in, avals_out = [x.aval for x in eqn.invars], [v.aval for v in eqn.outvars]
    if any(a.dtype.kind == "key" for a in (*avals_in, *avals_out)):
        return get_key_impl(eqn.primitive, avals_in, avals_out, eqn.params)
    return get_impl(eqn.primitive), eqn.params


_PLANS: weakref.WeakKeyDictionary[Jaxpr, _Plan] = weakref.WeakKeyDictionary()


def _plan(jaxpr: Jaxpr) -> _Plan:
    plan = _PLANS.get(jaxpr)
    if plan is None:
        plan = _PLANS[jaxpr] = _Plan(jaxpr)
    return plan


def literal_array(lit: Literal) -> np.ndarray:
    return np.asarray(lit.value, dtype=lit.aval.dtype.numpy)


def runtime_shape(aval: ShapedArray) -> tuple[int, ...]:
    """The NumPy shape holding a value of `aval` (threefry keys carry a trailing pair of words)."""
    return aval.shape + (2,) if aval.dtype.kind == "key" else aval.shape


def _coerce_arg(i: int, x: Any, aval: ShapedArray) -> np.ndarray:
    arr = np.asarray(x)
    want = aval.dtype.numpy
    if arr.dtype != want:
        if isinstance(x, (bool, int, float, complex)) and not arr.shape:
            arr = np.asarray(x, dtype=want)
        else:
            raise JaxprTypeError(f"argument {i} has dtype {arr.dtype}", expected=str(aval), actual=str(arr.dtype))
    if arr.shape != runtime_shape(aval):
        raise JaxprTypeError(f"argument {i} has shape {arr.shape}", expected=str(aval), actual=str(arr.shape))
    return arr


def eval_jaxpr(jaxpr: ClosedJaxpr | Jaxpr, *args: Any, consts: Sequence[Any] | None = None,
               check: bool = False) -> list[np.ndarray]:
    """Evaluate `jaxpr` on `args` (arrays of the invars' dtypes and shapes); returns the outputs.

    `consts` overrides a ClosedJaxpr's constants (required for a bare Jaxpr with constvars).
    `check=True` verifies every implementation's result dtype and shape against the jaxpr.
    """
    if isinstance(jaxpr, ClosedJaxpr):
        consts = jaxpr.consts if consts is None else consts
        jaxpr = jaxpr.jaxpr
    try:
        plan = _plan(jaxpr)
    except EqjaxError:
        raise
    except _IMPL_FAILURES as e:  # a key rule or registry lookup rejecting an equation's params
        raise JaxprEvalError(f"cannot prepare evaluation: {type(e).__name__}: {clipped(str(e), 200)}") from e
    if len(args) != len(plan.in_slots):
        raise JaxprTypeError(f"jaxpr takes {len(plan.in_slots)} arguments, got {len(args)}")
    consts = list(consts or ())
    if len(consts) != len(plan.const_slots):
        raise JaxprTypeError(f"jaxpr has {len(plan.const_slots)} constvars, got {len(consts)} consts")
    env: list[Any] = [None] * plan.n_slots
    for s, c, v in zip(plan.const_slots, consts, jaxpr.constvars, strict=True):
        env[s] = _coerce_arg(-1, c, v.aval)
    for i, (s, a, v) in enumerate(zip(plan.in_slots, args, jaxpr.invars, strict=True)):
        env[s] = _coerce_arg(i, a, v.aval)
    for s, arr in plan.literal_slots:
        env[s] = arr
    if check:
        _run_checked(plan, env)
        return [env[s] for s in plan.out_slots]
    step = None
    try:
        for step in plan.steps:
            fn, ins, outs, params, multiple, _ = step
            result = fn(*[env[i] for i in ins], **params)
            if multiple:
                for o, r in zip(outs, result, strict=True):
                    env[o] = r
            else:
                env[outs[0]] = result
    except EqjaxError:
        raise
    except _IMPL_FAILURES as e:
        raise _eval_error(plan, step, e) from e
    return [env[s] for s in plan.out_slots]


# What an implementation raises on a type-checked equation it cannot run: the program asks for something
# NumPy refuses (a huge shape, an out-of-range index, params inconsistent in a way the shape rule does not
# see, an enum param value the NumPy evaluator does not support: NotImplementedError). These become
# `JaxprEvalError`s naming the equation; EqjaxErrors (UnsupportedPrimitive, nested jaxprs' errors) pass through.
_IMPL_FAILURES = (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError,
                  OverflowError, MemoryError, np.linalg.LinAlgError, NotImplementedError)


def _eval_error(plan: _Plan, step, e: Exception) -> JaxprEvalError:
    index = plan.steps.index(step) if step is not None else None
    primitive = step[5].primitive if step is not None else None
    kind = UnsupportedEvaluation if isinstance(e, NotImplementedError) else JaxprEvalError
    return kind(f"evaluation failed: {type(e).__name__}: {clipped(str(e), 200)}", index, primitive)


def _run_checked(plan: _Plan, env: list[Any]) -> None:
    for k, (fn, ins, outs, params, multiple, eqn) in enumerate(plan.steps):
        try:
            result = fn(*[env[i] for i in ins], **params, **({"check": True} if _takes_check(fn) else {}))
        except EqjaxError:
            raise
        except _IMPL_FAILURES as e:
            raise _eval_error(plan, plan.steps[k], e) from e
        results = list(result) if multiple else [result]
        if len(results) != len(outs):
            raise AssertionError(f"equation {k} ({eqn.primitive}): implementation returned "
                                 f"{len(results)} results, expected {len(outs)}")
        for o, r, v in zip(outs, results, eqn.outvars, strict=True):
            want_dtype, want_shape = v.aval.dtype.numpy, runtime_shape(v.aval)
            if not isinstance(r, np.ndarray) or r.dtype != want_dtype or r.shape != want_shape:
                got = f"{getattr(r, 'dtype', type(r).__name__)}{list(getattr(r, 'shape', ()))}"
                raise AssertionError(f"equation {k} ({eqn.primitive}): implementation returned {got}, "
                                     f"expected {v.aval} (fix eval/impls)")
            env[o] = r


def _takes_check(fn) -> bool:
    return getattr(fn, "takes_check", False)
