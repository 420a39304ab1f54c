"""Live JAX in (the `jax` extra): programs and functions written with JAX, as eqjax programs.

    ir.from_jax(f)(*args)             # f written with jax.numpy / lax / flax / optax: traced by JAX
                                      # (`jax.make_jaxpr`, x64 on) and converted to an ir.ClosedJaxpr
    ir.from_jax.convert(closed)       # a live jax.core.ClosedJaxpr (jax.make_jaxpr's result) as an ir one
    ir.from_jax.function(f)           # f as a function eqjax traces: its JAX program is inlined into the trace

The conversion walks JAX's objects (`ir.jax_convert.jaxprs`); it does not go through text, and gives the
program the text route gives (`parse_jaxpr(str(closed))`, tested on every oracle case).

How a transform knows a function is written with JAX: `transforms.jit/grad/vmap/...`, `parse_jaxpr` and
`optimize` accept a live `jax.core.ClosedJaxpr` wherever they take a program (a program stands for the
function of its inputs returning the list of its outputs, as `jax.core.jaxpr_as_fun`). A function is
traced with eqjax's tracer (`trace_to_jaxpr` here); when that trace fails on JAX code (the function calls
`jax.numpy`, `jax.lax`, flax, ... on eqjax's tracer: the error names eqjax's tracer or a JAX array type, or
was raised inside JAX's own code) the function is traced again, whole, by JAX, and its converted program
is used; an error of the second trace is raised with the first as its context. `from_jax.function(f)` declares it up
front (one trace, by JAX). A function mixing `ir.numpy` and `jax.numpy` on the same values fails with the
error of the tracer that refused the other's values; nothing is silently computed by the other library.
Arguments and results of a JAX function are pytrees of arrays in the transforms' sense (tuples, lists,
dicts); JAX's own pytree nodes (an optax state, a flax `FrozenDict`) are passed as their leaves
(`jax.tree_util.tree_flatten`) and rebuilt inside the function. A JAX function nested in a transform must
take the enclosing transform's values as arguments: closing over them raises `ClosureError`.

Without JAX installed, `import ir` still works; these functions raise `JaxUnavailable` naming the extra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ir.core import ClosedJaxpr
from ir.errors import EqjaxError

EXTRA = "pip install 'eqjax[jax]'"


class JaxUnavailable(EqjaxError, ImportError):
    """Live JAX in needs JAX, which is not installed."""


def require_jax():
    """The `jax` module with x64 on (JAX with x64 is eqjax's reference), or `JaxUnavailable`."""
    try:
        import jax
    except ImportError:
        raise JaxUnavailable(f"JAX programs and functions need JAX, which is not installed: {EXTRA}") from None
    if not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)
    return jax


def is_live_jaxpr(value: Any) -> bool:
    """Whether `value` is a JAX `ClosedJaxpr` or `Jaxpr` object (checked without importing JAX)."""
    cls = type(value)
    return cls.__module__.startswith("jax") and cls.__name__ in ("ClosedJaxpr", "Jaxpr")


def convert(closed: Any) -> ClosedJaxpr:
    """A live `jax.core.ClosedJaxpr` as an `ir.ClosedJaxpr` (type checked); see `ir.jax_convert.jaxprs`."""
    require_jax()
    from ir.jax_convert.jaxprs import convert as convert_objects

    return convert_objects(closed)


def as_program(program: Any) -> ClosedJaxpr:
    """An ir `ClosedJaxpr` as it is, a live JAX one converted."""
    return convert(program) if is_live_jaxpr(program) else program


def from_jax(fun: Callable, static_argnums: int | Sequence[int] = ()) -> Callable[..., ClosedJaxpr]:
    """Like `ir.make_jaxpr`, for a function written with JAX: `from_jax(f)(*args) -> ir.ClosedJaxpr`.

    `jax.make_jaxpr(f, static_argnums)(*args, **kwargs)` with x64 on (arguments as JAX takes them: arrays,
    `jax.ShapeDtypeStruct`s, any JAX pytree), converted by `convert`."""

    def make(*args, **kwargs) -> ClosedJaxpr:
        jax = require_jax()
        return convert(jax.make_jaxpr(fun, static_argnums=static_argnums)(*args, **kwargs))

    make.__name__ = f"from_jax({getattr(fun, '__name__', 'fun')})"
    return make


from_jax.convert = convert  # type: ignore[attr-defined]


class ClosureError(EqjaxError, TypeError):
    """A function written with JAX closes over a value of eqjax's trace, which JAX cannot see."""


class JaxFunction:
    """`fun`, written with JAX, as a function eqjax traces: called on eqjax tracers, JAX traces `fun` at
    their avals and the converted program's equations are replayed into eqjax's trace. Called on concrete
    values it is `fun` itself, run by JAX."""

    def __init__(self, fun: Callable):
        self.fun = fun
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__wrapped__ = fun
        self._programs: dict[Any, tuple[ClosedJaxpr, Any]] = {}

    def __call__(self, *args, **kwargs):
        from ir.tracing import aval_of, bind_jaxpr, is_tracer

        jax = require_jax()
        leaves, in_tree = jax.tree_util.tree_flatten((args, kwargs))
        if not any(is_tracer(x) for x in leaves):
            return self.fun(*args, **kwargs)
        avals = tuple(aval_of(x) for x in leaves)
        key = (in_tree, avals)
        if key not in self._programs:
            self._programs[key] = self._trace(jax, in_tree, avals)
        program, out_tree = self._programs[key]
        return jax.tree_util.tree_unflatten(out_tree, bind_jaxpr(program, *leaves))

    def _trace(self, jax, in_tree, avals) -> tuple[ClosedJaxpr, Any]:
        from jax._src.random import prng

        def flat_fun(*flat):
            a, kw = jax.tree_util.tree_unflatten(in_tree, flat)
            return self.fun(*a, **kw)

        def struct(aval):
            if aval.dtype.kind == "key":
                return jax.ShapeDtypeStruct(aval.shape, prng.KeyTy(prng.prngs["threefry2x32"]))
            if aval.dtype.kind == "float0":
                return jax.ShapeDtypeStruct(aval.shape, jax.dtypes.float0)
            return jax.ShapeDtypeStruct(aval.shape, aval.dtype.numpy, weak_type=aval.weak_type)

        try:
            closed, out_shape = jax.make_jaxpr(flat_fun, return_shape=True)(*map(struct, avals))
        except Exception as error:
            if "ir.tracing.Tracer" not in str(error):
                raise
            raise ClosureError(f"{self.__name__}, written with JAX, uses a value eqjax is tracing that is not one of "
                               "its arguments (a closure over an enclosing transform's variable): JAX cannot trace "
                               "it; pass it as an argument") from error
        return convert(closed), jax.tree_util.tree_structure(out_shape)


def function(fun: Callable) -> JaxFunction:
    """Declare `fun` written with JAX (see `JaxFunction`); transforms then skip eqjax's first trace."""
    return fun if isinstance(fun, JaxFunction) else JaxFunction(fun)


from_jax.function = function  # type: ignore[attr-defined]


def as_function(fun: Any) -> Callable:
    """What a transform traces for `fun`: a program (ir or live JAX) as the function of its inputs returning
    the list of its outputs; any other callable as it is."""
    if isinstance(fun, ClosedJaxpr) or is_live_jaxpr(fun):
        from ir.tracing import bind_jaxpr

        program = as_program(fun)

        def run_program(*xs):
            return bind_jaxpr(program, *xs)

        run_program.__name__ = "program"
        return run_program
    return fun


def _rejected_by_jax(error: BaseException) -> bool:
    """Whether tracing failed because JAX met eqjax's tracer or eqjax met a JAX value: the message names
    eqjax's tracer type or a JAX array type, or the error was raised inside JAX's own code (JAX filters its
    frames from tracebacks, so the chain of causes is searched too)."""
    if isinstance(error, ClosureError):  # JAX did trace, and met a variable it cannot see: tracing again won't do
        return False
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if any(name in str(error) for name in ("ir.tracing.Tracer", "ArrayImpl", "jax.Array", "JaxprTracer")):
            return True
        tb = error.__traceback__
        while tb is not None:
            module = tb.tb_frame.f_globals.get("__name__", "")
            if module == "jax" or module.startswith(("jax.", "jaxlib")):
                return True
            tb = tb.tb_next
        error = error.__cause__ or error.__context__
    return False


def trace_to_jaxpr(fun: Callable, in_avals: Sequence[Any]):
    """`ir.tracing.trace_to_jaxpr` for a function written with eqjax's API or with JAX's (see the module
    docstring: a function JAX's code refuses to trace with eqjax's tracer is traced by JAX)."""
    from ir.tracing import trace_to_jaxpr as trace

    fun = as_function(fun)
    if isinstance(fun, JaxFunction):
        return trace(fun, in_avals)
    try:
        return trace(fun, in_avals)
    except Exception as error:
        if not _rejected_by_jax(error):
            raise
        try:
            require_jax()
        except JaxUnavailable:
            raise error from None
        return trace(JaxFunction(fun), in_avals)


__all__ = ["EXTRA", "ClosureError", "JaxFunction", "JaxUnavailable", "as_function", "as_program", "convert", "from_jax",
           "function", "is_live_jaxpr", "require_jax", "trace_to_jaxpr"]
