"""Key rules: how each primitive that JAX allows on key-typed arrays evaluates on their key data.

A `key<fry>[*S]` value is held as uint32 key data of shape `(*S, 2)` (eval/impls/random.py). An element
of a key array is its trailing pair of words, so a primitive that moves elements (reshape, slice, gather,
select_n, ...) runs its ordinary implementation on the key data with the word axis as one more trailing
dimension that every parameter passes through untouched: a trailing broadcast dimension, permutation
entry, slice size or gather offset dimension. These are the rules of JAX's lowerings for extended dtypes
(`physical_element_aval` in jax/_src/prng.py; `_gather_lower_opaque`, `_scatter_lower_opaque`,
`mlir.slice_op`, `mlir.dynamic_slice`, `_transpose_lower`, `_select_hlo_lowering_opaque`, ...). `eq` and
`ne` compare the words and reduce over them (`_opaque_comparison_hlo`).

The PRNG primitives take key data as it is, and the call-like primitives hand it to nested jaxprs, which
evaluate their own key-typed equations the same way. A primitive without a rule here is refused with an
error naming it; so are `pad` and `sort`, which JAX's lowering refuses on keys.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from eval.registry import key_rule
from ir.errors import JaxprTypeError
from ir.params import as_ints

_WORDS = 2  # a threefry key's data: two uint32 words (eval.interpreter.runtime_shape)
_ZERO_START = np.zeros((), np.int64)


def _axis(axis, ndim: int) -> int:
    """An axis of a key array of rank `ndim`, made non-negative: counted from the end, the key data's last
    axis would be the word axis."""
    return int(axis) % ndim if ndim else 0


def _axes(axes, ndim: int) -> tuple[int, ...]:
    return tuple(_axis(a, ndim) for a in as_ints(axes))


# --- primitives that take key data as it is ------------------------------------------------------------


@key_rule("random_seed", "random_wrap", "random_unwrap", "random_clone", "random_bits", "random_split",
          "random_fold_in", "random_gamma",
          "copy", "copy_p", "stop_gradient", "device_put", "optimization_barrier", "empty2",
          "jit", "pjit", "closed_call", "core_call", "remat2", "checkpoint", "composite",
          "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_linear_solve",
          "cond", "while", "scan")
def _as_is(impl, avals_in, avals_out, params):
    return impl, params


# Axis params made non-negative (counted from the end, the key data's last axis would be the word axis), of
# the operand's rank or the result's: (param, normalizer, "in" | "out").
_AXIS_PARAMS = {"concatenate": ("dimension", _axis, "in"), "stack": ("axis", _axis, "out"),
                "split": ("axis", _axis, "in"), "unstack": ("axis", _axis, "in"),
                "squeeze": ("dimensions", _axes, "in"), "rev": ("dimensions", _axes, "in")}


def _axis_param(param, normalize, rank_of, impl, avals_in, avals_out, params):
    ndim = (avals_out if rank_of == "out" else avals_in)[0].ndim
    return impl, {**params, param: normalize(params[param], ndim)}


for _prim, _spec in _AXIS_PARAMS.items():
    key_rule(_prim)(partial(_axis_param, *_spec))


# --- the word axis appended to the params ---------------------------------------------------------------


@key_rule("reshape")
def _reshape(impl, avals_in, avals_out, params):
    dimensions = params.get("dimensions")
    if dimensions is not None:
        dimensions = (*as_ints(dimensions), avals_in[0].ndim)
    return impl, {**params, "new_sizes": (*as_ints(params["new_sizes"]), _WORDS), "dimensions": dimensions}


@key_rule("transpose")
def _transpose(impl, avals_in, avals_out, params):
    return impl, {**params, "permutation": (*as_ints(params["permutation"]), avals_in[0].ndim)}


@key_rule("broadcast_in_dim")
def _broadcast_in_dim(impl, avals_in, avals_out, params):
    return impl, {**params, "shape": (*as_ints(params["shape"]), _WORDS),
                  "broadcast_dimensions": (*as_ints(params["broadcast_dimensions"]), avals_out[0].ndim)}


@key_rule("tile")
def _tile(impl, avals_in, avals_out, params):
    return impl, {**params, "reps": (*as_ints(params["reps"]), 1)}


@key_rule("slice")
def _slice(impl, avals_in, avals_out, params):
    strides = params.get("strides")
    return impl, {**params, "start_indices": (*as_ints(params["start_indices"]), 0),
                  "limit_indices": (*as_ints(params["limit_indices"]), _WORDS),
                  "strides": None if strides is None else (*as_ints(strides), 1)}


def _with_word_start(impl, *operands, **params):
    """`impl` with one more start index after the given ones: 0, for the word axis."""
    return impl(*operands, _ZERO_START, **params)


@key_rule("dynamic_slice")
def _dynamic_slice(impl, avals_in, avals_out, params):
    return (partial(_with_word_start, impl),
            {**params, "slice_sizes": (*as_ints(params["slice_sizes"]), _WORDS)})


@key_rule("dynamic_update_slice")
def _dynamic_update_slice(impl, avals_in, avals_out, params):
    return partial(_with_word_start, impl), params


@key_rule("gather")
def _gather(impl, avals_in, avals_out, params):
    dn = params["dimension_numbers"]
    dn = dn.replace(offset_dims=(*as_ints(dn.offset_dims), avals_out[0].ndim))
    return impl, {**params, "dimension_numbers": dn, "slice_sizes": (*as_ints(params["slice_sizes"]), _WORDS)}


@key_rule("scatter")
def _scatter(impl, avals_in, avals_out, params):
    if params.get("update_jaxpr") is not None:
        raise JaxprTypeError("a scatter of key-typed arrays cannot combine keys with an update_jaxpr",
                             primitive="scatter", expected="update_jaxpr=None", actual="an update_jaxpr")
    dn = params["dimension_numbers"]
    dn = dn.replace(update_window_dims=(*as_ints(dn.update_window_dims), avals_in[2].ndim))
    return impl, {**params, "dimension_numbers": dn}


def _select_words(impl, which, *cases):
    """The predicate stretched over the word axis, so that every word of a key follows its key's choice."""
    return impl(which[..., np.newaxis] if which.ndim else which, *cases)


@key_rule("select_n")
def _select_n(impl, avals_in, avals_out, params):
    return partial(_select_words, impl), params


def _all_words(impl, x, y):
    return np.asarray(np.all(impl(x, y), axis=-1))


def _any_word(impl, x, y):
    return np.asarray(np.any(impl(x, y), axis=-1))


@key_rule("eq")
def _eq(impl, avals_in, avals_out, params):
    return partial(_all_words, impl), params


@key_rule("ne")
def _ne(impl, avals_in, avals_out, params):
    return partial(_any_word, impl), params


# --- what JAX refuses on keys ---------------------------------------------------------------------------


def _refused(primitive: str, why: str, impl, avals_in, avals_out, params):
    raise JaxprTypeError(why, primitive=primitive, expected="operands that are not key-typed",
                         actual=", ".join(str(a) for a in avals_in))


_REFUSED = {
    "pad": "JAX cannot pad key-typed arrays: XLA's Pad takes a scalar padding value, and a key is a pair of "
           "words (mlir.pad has no rule for extended dtypes); pad the key data (random_unwrap) instead",
    "sort": "JAX cannot sort with a key-typed operand: keys have no order, and XLA's Sort compares scalar "
            "elements (JAX's sort lowering has no rule for extended dtypes); sort indices and gather the keys "
            "instead",
}
for _name, _why in _REFUSED.items():
    key_rule(_name)(partial(_refused, _name, _why))
