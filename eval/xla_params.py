"""eqjax param values as JAX's own param objects, for the XLA backend (`eval/xla.py`).

A param value is converted by the first rule that applies, each a row of one table:

1. `by_param[(primitive, param)]`, then `by_param[("*", param)]`: params whose meaning is not in the value's
   type: `rounding_method=1` is a `RoundingMethod`, `fft_type=2` an `FftType`, `impl=fry` a PRNG
   implementation, jit's `name` a plain str, the sub-jaxprs JAX keeps open (`remat2`'s `jaxpr`,
   `reduce_window`'s, the scatters' `update_jaxpr`), `reduce`'s `computation` (a Python function JAX calls
   when it batches the reduction; rebuilt from the `jaxpr` param and named as printed) and `remat2`'s policy
   (looked up in `jax.checkpoint_policies` by its printed name);
2. `by_type[type(value)]` (along the MRO): `DType` -> np.dtype (key and float0 dtypes included), `NpScalar` ->
   `np.int64(...)`, `Symbol` -> the enum member it prints as (`Precision.HIGHEST`, `GatherScatterMode.CLIP`,
   `RNG_THREE_FRY`, `ArrayCopySemantics.REUSE_INPUT`, empty2's `MemorySpace.Device`) or else a str,
   `Record` -> the JAX class of that name (`GatherDimensionNumbers`, `ScatterDimensionNumbers`, `ConvDimensionNumbers`,
   `RaggedDotDimensionNumbers`, `_LinearSolveTuple`) with converted fields, a nested `ClosedJaxpr` -> JAX's
   `ClosedJaxpr`, lists -> tuples (JAX's params are hashable), tuples element by element;
3. anything else (int, float, bool, None, str) as it is.

`hidden[primitive]` puts back params JAX's printer leaves out and eqjax's parser does not restore (the `accuracy` of
`exp`, `sin`, ... and `mul`'s `out_dtype`, found from the pretty-printing rule JAX registers for the
primitive; jit's shardings, layouts, donation and mesh, which depend on the arity; the `sharding` of the
broadcast a symbolic zero decodes as).

The tables (`tables()`, fields `by_param`, `by_type`, `symbols`, `records`, `hidden`) are built on first use:
nothing here imports JAX at module import.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ir.core import ClosedJaxpr
from ir.dtypes import DType
from ir.errors import JaxprTypeError
from ir.params import NpScalar, Opaque, Record, Symbol


class Context:
    """What a converter may need besides the value: the equation's raw params and the sub-jaxpr rebuilds."""

    def __init__(self, primitive: str, params: dict, closed: Callable, open_: Callable):
        self.primitive, self.params = primitive, params
        self.closed = closed  # ir ClosedJaxpr -> jax ClosedJaxpr (one object per ir object: JAX shares it)
        self.open = open_  # ir ClosedJaxpr -> jax Jaxpr


Converter = Callable[[Any, Context], Any]


@dataclass(frozen=True)
class Tables:
    by_param: dict[tuple[str, str], Converter]
    by_type: dict[type, Converter]
    symbols: dict[str, Any]
    records: dict[str, type]
    hidden: dict[str, Callable[[dict, int, int], dict]]


def convert_params(primitive: str, params: dict, cx: Context, n_in: int, n_out: int) -> dict:
    """JAX's params for an equation of `primitive` with eqjax `params`, hidden defaults included."""
    t = tables()
    out = {k: convert(v, cx, primitive, k) for k, v in params.items()}
    hidden = t.hidden.get(primitive)
    if hidden is not None:
        out = {**hidden(out, n_in, n_out), **out}
    return out


def convert(value: Any, cx: Context, primitive: str = "", param: str = "") -> Any:
    t = tables()
    rule = t.by_param.get((primitive, param)) or t.by_param.get(("*", param))
    if rule is not None:
        return rule(value, cx)
    for cls in type(value).__mro__:
        rule = t.by_type.get(cls)
        if rule is not None:
            return rule(value, cx)
    return value


# --- converters by value type -----------------------------------------------------------------------------


def jax_dtype(d: DType):
    """JAX's dtype of an eqjax dtype: the NumPy dtype, JAX's threefry key dtype, or float0."""
    import jax
    from jax._src.random import prng

    if d.kind == "key":
        return prng.KeyTy(prng.prngs["threefry2x32"])
    if d.kind == "float0":
        return jax.dtypes.float0
    return np.dtype(d.numpy)


def _dtype(d: DType, cx: Context):
    return jax_dtype(d)


def _np_scalar(v: NpScalar, cx: Context):
    return getattr(np, v.np_type)(int(v))


def _symbol(s: Symbol, cx: Context):
    return tables().symbols.get(str(s), str(s))


def _record(r: Record, cx: Context):
    cls = tables().records.get(r.type_name)
    if cls is None:
        raise JaxprTypeError(f"no JAX type for the param record {r.type_name}", primitive=cx.primitive)
    return cls(**{k: convert(v, cx) for k, v in r.fields})


def _sequence(v, cx: Context):
    return tuple(convert(x, cx) for x in v)


def _closed(cj: ClosedJaxpr, cx: Context):
    return cx.closed(cj)


def _opaque(o: Opaque, cx: Context):
    """A function repr JAX printed (`<function f at 0xXXX>`) that nothing here interprets: a function of that
    name that refuses to be called (a param JAX only prints, never calls, still prints the same)."""
    return _named_function(o, _refuse(str(o)))


# --- converters by param -------------------------------------------------------------------------------


def _open(cj: ClosedJaxpr, cx: Context):
    return None if cj is None else cx.open(cj)


def _plain_str(v, cx: Context):
    return str(v)


def _prng_impl(tag, cx: Context):
    from jax._src.random import prng

    for impl in prng.prngs.values():
        if impl.tag == str(tag):
            return impl
    raise JaxprTypeError(f"no JAX PRNG implementation {tag}", primitive=cx.primitive)


def _rounding_method(v, cx: Context):
    from jax import lax

    return lax.RoundingMethod(int(v))


def _fft_type(v, cx: Context):
    from jax import lax

    return lax.FftType(int(v))


def _checkpoint_policy(p, cx: Context):
    import jax

    if p is None:
        return None
    name = _function_name(p).rsplit(".", 1)[-1]
    policy = getattr(jax.checkpoint_policies, name, None)
    return policy if policy is not None else _opaque(p, cx)


def _reduce_computation(o, cx: Context):
    """`reduce`'s Python combiner `computation(xs, ys)` (JAX 0.10.2 only passes it along; its rules use the
    `jaxpr` param): that jaxpr as a function of the accumulators and the values, under the printed name."""
    from jax.extend.core import jaxpr_as_fun

    reducer = jaxpr_as_fun(cx.closed(cx.params["jaxpr"]))

    def computation(xs, ys):
        xs, ys = (tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in (xs, ys))
        outs = reducer(*xs, *ys)
        return tuple(outs) if len(outs) > 1 else outs[0]

    return _named_function(o, computation)


_FUNCTION_REPR = re.compile(r"<function (\S+) at 0x[0-9A-Fa-fX]+>")


def _function_name(text) -> str:
    m = _FUNCTION_REPR.fullmatch(str(text))
    return m.group(1) if m else str(text)


def _named_function(text, fn: Callable) -> Callable:
    qualname = _function_name(text)
    fn.__qualname__, fn.__name__ = qualname, qualname.rsplit(".", 1)[-1]
    return fn


def _refuse(what: str) -> Callable:
    def refused(*args, **kwargs):
        raise JaxprTypeError(f"the param value {what} is only a printed name; JAX cannot call it")
    return refused


# --- hidden params ---------------------------------------------------------------------------------------


def _jit_hidden(params: dict, n_in: int, n_out: int) -> dict:
    from jax._src import pjit
    from jax._src.sharding_impls import UNSPECIFIED

    return {"in_shardings": (UNSPECIFIED,) * n_in, "out_shardings": (UNSPECIFIED,) * n_out,
            "in_layouts": (None,) * n_in, "out_layouts": (None,) * n_out, "donated_invars": (False,) * n_in,
            "ctx_mesh": pjit.get_ctx_mesh(False), "keep_unused": False, "inline": False,
            "compiler_options_kvs": ()}


def _constant(**defaults: Any) -> Callable[[dict, int, int], dict]:
    return lambda params, n_in, n_out: defaults


# JAX's pretty-printing rules that drop a param holding its default, and that default.
_PP_RULE_DEFAULTS = {"_unary_with_accuracy_pp_rule": {"accuracy": None},
                     "_binary_with_out_dtype_pp_rule": {"out_dtype": None}}


def _hidden_table() -> dict[str, Callable[[dict, int, int], dict]]:
    from jax._src import core

    # a symbolic zero decodes as a broadcast without `sharding` (None is its default), which bind requires
    hidden: dict[str, Callable[[dict, int, int], dict]] = {"jit": _jit_hidden,
                                                            "broadcast_in_dim": _constant(sharding=None)}
    for prim, rule in core.pp_eqn_rules.items():
        defaults = _PP_RULE_DEFAULTS.get(getattr(rule, "__name__", ""))
        if defaults is not None:
            hidden[prim.name] = _constant(**defaults)
    return hidden


# --- the tables ------------------------------------------------------------------------------------------


_SCATTERS = ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max", "scatter_apply")


def _symbols(enums) -> dict[str, Any]:
    """Enum members by the texts JAX prints for them: a bare param prints the member's str, an element of a
    tuple its repr (`Precision.HIGHEST`). A text two members share (`DEFAULT`) is left out."""
    symbols: dict[str, Any] = {}
    shared = set()
    for enum in enums:
        for member in enum.__members__.values():
            for text in {repr(member), str(member)}:
                if symbols.setdefault(text, member) is not member:
                    shared.add(text)
    return {text: member for text, member in symbols.items() if text not in shared}


@cache
def tables() -> Tables:
    from jax import lax
    from jax._src.core import MemorySpace
    from jax._src.dispatch import ArrayCopySemantics
    from jax._src.lax.control_flow.solves import _LinearSolveTuple

    by_param: dict[tuple[str, str], Converter] = {
        ("*", "rounding_method"): _rounding_method,
        ("*", "fft_type"): _fft_type,
        ("*", "impl"): _prng_impl,
        ("jit", "name"): _plain_str,
        ("composite", "name"): _plain_str,
        ("remat2", "jaxpr"): _open,
        ("remat2", "policy"): _checkpoint_policy,
        ("reduce_window", "jaxpr"): _open,
        ("reduce", "computation"): _reduce_computation,
        **{(s, "update_jaxpr"): _open for s in _SCATTERS},
    }
    by_type: dict[type, Converter] = {
        DType: _dtype, NpScalar: _np_scalar, Symbol: _symbol, Opaque: _opaque, Record: _record,
        ClosedJaxpr: _closed, tuple: _sequence, list: _sequence,
    }
    from jax._src.lax import linalg

    enums = (lax.Precision, lax.DotAlgorithmPreset, lax.GatherScatterMode, lax.RandomAlgorithm, lax.AccuracyMode,
             linalg.EigImplementation, linalg.EighImplementation, linalg.SvdAlgorithm, ArrayCopySemantics,
             MemorySpace)
    symbols = _symbols(enums)
    records = {cls.__name__: cls for cls in (lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers,
                                             lax.ConvDimensionNumbers, lax.RaggedDotDimensionNumbers,
                                             _LinearSolveTuple)}
    return Tables(by_param, by_type, symbols, records, _hidden_table())
