"""JAX's live param values as the Python data `ir.params` defines, the same data the text route gives.

What a param means to eqjax is what JAX prints for it (`ir.text`), so each live value becomes what the
parser makes of its printed form, built directly from the object:

| live value (JAX prints)                        | ir value                                            |
|------------------------------------------------|-----------------------------------------------------|
| `Jaxpr` / `ClosedJaxpr`, at any depth           | `ir.core.ClosedJaxpr` (one object per JAX object)    |
| bool, int, float, complex, None                | the same                                            |
| NumPy integer: bare `3`, inside a tuple `np.int64(3)` | int / `NpScalar`                             |
| NumPy dtype / JAX key dtype (`float64`, `key<fry>`) | `ir.dtypes.DType`                              |
| str: bare `relu`, inside a tuple `'mosaic'`       | `Symbol` / str                                      |
| tuple, list                                    | tuple, list, element by element                     |
| NamedTuple or dataclass (`GatherDimensionNumbers(offset_dims=...)`) | `Record`, field by field       |
| anything else (enum members, functions, ...)   | its printed form, addresses masked as JAX masks them, |
|                                                | read by the parser: `Precision.HIGHEST` → `Symbol`, |
|                                                | `<function f at 0xXXXXXXXXXXXX>` → `Opaque`         |

Before that, `printed_params` applies JAX's pretty-printing rules (`jax._src.core.pp_eqn_rules`), the
params JAX hides or renames in its text: jit's default shardings and flags, the custom calls' rule names
(`jvp=`, `fwd=`, `bwd=` from the functions' debug info) and `name`, an `accuracy`/`out_dtype` of None,
`broadcast_in_dim`'s `shape`, `dot_general`'s Nones. `ir.text.eqn_rules.complete_params` then restores
what eqjax reads, exactly as after parsing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ir import dtypes
from ir.params import NpScalar, Opaque, Symbol

_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def masked(text: str) -> str:
    """`text` with ` at 0x7f...` addresses masked, as JAX's printer masks them (`pp_kv_pair`)."""
    return _ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), text)


# --- JAX's pretty-printing rules -------------------------------------------------------------------------


def _func_name(fun: Any) -> str:
    return fun.debug_info.func_name


def _custom_call(params: dict) -> dict:
    params = dict(params)
    if not params["num_consts"]:
        params.pop("num_consts")
    params.pop("out_trees", None)
    if "jvp_jaxpr_fun" in params:
        params["jvp"] = _func_name(params.pop("jvp_jaxpr_fun"))
    if "fwd_jaxpr_thunk" in params:
        params["fwd"] = _func_name(params.pop("fwd_jaxpr_thunk"))
    if "bwd" in params:
        params["bwd"] = _func_name(params["bwd"])
    return {"name": params["call_jaxpr"].jaxpr.debug_info.func_name, **dict(sorted(params.items()))}


def _jit(params: dict) -> dict:
    from jax._src.sharding_impls import UnspecifiedValue

    hidden = {
        "inline": lambda v: True,
        "donated_invars": lambda v: not any(v),
        "in_shardings": lambda v: all(isinstance(s, UnspecifiedValue) for s in v),
        "out_shardings": lambda v: all(isinstance(s, UnspecifiedValue) for s in v),
        "in_layouts": lambda v: all(x is None for x in v),
        "out_layouts": lambda v: all(x is None for x in v),
        "keep_unused": lambda v: not v,
        "ctx_mesh": lambda v: v.empty,
        "compiler_options_kvs": lambda v: not v,
    }
    kept = {k: v for k, v in params.items() if not (k in hidden and hidden[k](v))}
    return {"name": kept.pop("name"), **dict(sorted(kept.items()))}


def _drop_none(*keys: str) -> Callable[[dict], dict]:
    return lambda params: {k: v for k, v in params.items() if not (k in keys and v is None)}


def _broadcast_in_dim(params: dict) -> dict:
    return {k: v for k, v in params.items()
            if k not in ("shape", "sharding") and not (k == "broadcast_dimensions" and not v)}


def _dot_general(params: dict) -> dict:
    out = {k: v for k, v in params.items() if v is not None and k != "out_sharding"}
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    out["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    return out


# JAX's pp rules by function name (`core.pp_eqn_rules` maps primitives to these functions).
_PP_RULES: dict[str, Callable[[dict], dict]] = {
    "_custom_jvp_call_pp_rule": _custom_call,
    "_custom_vjp_call_pp_rule": _custom_call,
    "_pjit_pp_rule": _jit,
    "_unary_with_accuracy_pp_rule": _drop_none("accuracy"),
    "_binary_with_out_dtype_pp_rule": _drop_none("out_dtype"),
    "_convert_elt_type_pp_rule": lambda params: {k: v for k, v in params.items() if k != "sharding"},
    "_dot_general_pp_rule": _dot_general,
    "_broadcast_in_dim_pp_rule": _broadcast_in_dim,
}


def printed_params(primitive: Any, params: dict) -> dict:
    """The params JAX prints for an equation of `primitive` (a JAX Primitive), in JAX's order."""
    from jax._src import core

    rule = core.pp_eqn_rules.get(primitive)
    if rule is None:
        return dict(sorted(params.items()))
    mirror = _PP_RULES.get(getattr(rule, "__name__", ""))
    if mirror is None:
        from ir.errors import UnsupportedPrimitive

        raise UnsupportedPrimitive(primitive.name, f"conversion of its printed params ({rule.__name__})",
                                   "ir/jax_convert/params.py")
    out = mirror(params)
    return out if "name" in out else dict(sorted(out.items()))


# --- values ---------------------------------------------------------------------------------------------


def convert_value(value: Any, key: str, jaxpr: Callable[[Any], Any], top: bool = True) -> Any:
    """The ir value of a live param `value` of param `key`; `jaxpr` converts a JAX (Closed)Jaxpr.
    `top`: printed by `str` (a param's own value) rather than `repr` (inside a tuple or record)."""
    from jax._src import core

    if isinstance(value, (core.Jaxpr, core.ClosedJaxpr)):
        return jaxpr(value)
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, (int, float, complex)) and type(value) in (int, float, complex):
        return value
    if isinstance(value, np.integer):
        return int(value) if top else NpScalar(int(value), type(value).__name__)
    if isinstance(value, str) and type(value) is str:
        if not top:
            return value
        return dtypes.BY_NAME[value] if key != "name" and value in dtypes.BY_NAME else Symbol(value)
    dtype = _as_dtype(value)
    if dtype is not None and top:
        return dtype
    if type(value) in (tuple, list):
        return type(value)(convert_value(v, key, jaxpr, top=False) for v in value)
    printed = masked(str(value) if top else repr(value))
    record = _record(value, printed, jaxpr)
    if record is not None:
        return record
    return read_printed(printed, key)


def _as_dtype(value: Any):
    """An ir DType for a NumPy dtype or JAX's extended dtypes (`key<fry>`, float0), else None."""
    if isinstance(value, np.dtype) or type(value).__module__.startswith("jax"):
        name = str(value)
        if name in dtypes.BY_NAME and hasattr(value, "itemsize"):
            return dtypes.BY_NAME[name]
    return None


def _record(value: Any, printed: str, jaxpr: Callable[[Any], Any]):
    """A NamedTuple or dataclass that prints as `Name(field=repr, ...)`, as a `Record`; else None."""
    from ir.params import Record

    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        names = type(value)._fields
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value) if f.repr)
    else:
        return None
    fields = [(n, getattr(value, n)) for n in names]
    if printed != masked(f"{type(value).__name__}(" + ", ".join(f"{n}={v!r}" for n, v in fields) + ")"):
        return None
    return Record(type(value).__name__, tuple((n, convert_value(v, n, jaxpr, top=False)) for n, v in fields))


def read_printed(text: str, key: str) -> Any:
    """A param value of a type with no row above, read from the text JAX prints for it, as the parser does."""
    from ir.errors import JaxprSyntaxError
    from ir.text.parser import Parser, _Lets

    parser = Parser(text)
    try:
        value = parser.value(key, _Lets())
        complete = parser.peek().kind == "eof"
    except JaxprSyntaxError:
        complete = False
    return value if complete else Opaque(text)
