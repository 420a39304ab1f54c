"""JAX's custom pretty-printing rules (`core.pp_eqn_rules`) for the primitives that have one.

JAX prints most equations with every param, sorted by name. A few primitives hide params that
the binder types imply or that hold their default (`broadcast_in_dim`, `convert_element_type`,
`dot_general`, `jit`, the custom calls), and `jit`, `custom_jvp_call` and
`custom_vjp_call` print `name` first. Each rule here has two halves that must agree:

- `printed(params)`: the `(key, value)` pairs JAX prints, in its order (the printer);
- `complete(params, outvars)`: puts the hidden params back after parsing, so `eqn.params` is whole.

Params JAX hides that eqjax has no value for are not re-inserted (jit's shardings, layouts and
donation flags, custom_vjp_call's `out_trees`); the printer still hides them if a caller sets them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Params = dict[str, Any]


@dataclass(frozen=True)
class EqnRule:
    printed: Callable[[Params], list[tuple[str, Any]]]
    complete: Callable[[Params, list], Params]
    # jit names the inner jaxpr's binders after the outer operands and results (when not shared).
    same_var_names: bool = False
    # The printed `name` is the traced function's name, not a param (so it does not name a shared jaxpr).
    name_is_param: bool = True


RULES: dict[str, EqnRule] = {}


def default_printed(params: Params) -> list[tuple[str, Any]]:
    return sorted(params.items())


def printed_params(primitive: str, params: Params) -> list[tuple[str, Any]]:
    rule = RULES.get(primitive)
    return rule.printed(params) if rule else default_printed(params)


def complete_params(primitive: str, params: Params, outvars: list) -> Params:
    rule = RULES.get(primitive)
    return rule.complete(params, outvars) if rule else params


def _with_defaults(params: Params, **defaults: Any) -> Params:
    """The params as printed, then the hidden ones that are missing."""
    return {**params, **{k: v for k, v in defaults.items() if k not in params}}


def _name_first(params: Params) -> list[tuple[str, Any]]:
    rest = sorted((k, v) for k, v in params.items() if k != "name")
    return ([("name", params["name"])] if "name" in params else []) + rest


def _broadcast_in_dim_printed(params: Params) -> list[tuple[str, Any]]:
    hidden = {"shape", "sharding"} | ({"broadcast_dimensions"} if not params.get("broadcast_dimensions") else set())
    return sorted((k, v) for k, v in params.items() if k not in hidden)


def _broadcast_in_dim_complete(params: Params, outvars: list) -> Params:
    shape = tuple(outvars[0].aval.shape) if outvars else ()
    return _with_defaults(params, broadcast_dimensions=(), shape=shape, sharding=None)


RULES["broadcast_in_dim"] = EqnRule(_broadcast_in_dim_printed, _broadcast_in_dim_complete)


RULES["convert_element_type"] = EqnRule(
    lambda params: sorted((k, v) for k, v in params.items() if k != "sharding"),
    lambda params, outvars: _with_defaults(params, sharding=None))


def _dot_general_printed(params: Params) -> list[tuple[str, Any]]:
    out = {k: v for k, v in params.items() if v is not None and k != "out_sharding"}
    try:
        (lc, rc), (lb, rb) = out["dimension_numbers"]
        out["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    except (KeyError, TypeError, ValueError):
        pass  # malformed numbers print as they are; the type checker reports them
    return sorted(out.items())


def _dot_general_complete(params: Params, outvars: list) -> Params:
    return _with_defaults(params, precision=None, preferred_element_type=None, out_sharding=None)


RULES["dot_general"] = EqnRule(_dot_general_printed, _dot_general_complete)


def _all_unset(value: Any) -> bool:
    return all(v is None or str(v) == "UnspecifiedValue" for v in value)


# jit's params that JAX leaves out when they hold their default.
_JIT_HIDDEN: dict[str, Callable[[Any], bool]] = {
    "inline": lambda v: True,
    "donated_invars": lambda v: not any(v),
    "in_shardings": _all_unset, "out_shardings": _all_unset,
    "in_layouts": _all_unset, "out_layouts": _all_unset,
    "keep_unused": lambda v: not v,
    "ctx_mesh": lambda v: v is None,
    "compiler_options_kvs": lambda v: not v,
}


def _jit_printed(params: Params) -> list[tuple[str, Any]]:
    return _name_first({k: v for k, v in params.items() if not (k in _JIT_HIDDEN and _JIT_HIDDEN[k](v))})


RULES["jit"] = RULES["pjit"] = EqnRule(_jit_printed, lambda params, outvars: params, same_var_names=True)


def _custom_call_printed(always_hidden: frozenset[str]):
    def printed(params: Params) -> list[tuple[str, Any]]:
        return _name_first({k: v for k, v in params.items()
                            if k not in always_hidden and not (k == "num_consts" and not v)})
    return printed


def _custom_call_complete(params: Params, outvars: list) -> Params:
    return _with_defaults(params, num_consts=0)


RULES["custom_jvp_call"] = EqnRule(_custom_call_printed(frozenset()), _custom_call_complete,
                                   name_is_param=False)
RULES["custom_vjp_call"] = EqnRule(_custom_call_printed(frozenset({"out_trees"})), _custom_call_complete,
                                   name_is_param=False)
