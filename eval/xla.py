"""The XLA backend: an eqjax program rebuilt with JAX's own primitives, to run under `jax.jit`.

`to_jax(closed)` returns `f(*args) -> list`, one output per outvar, that binds equation by equation the JAX
primitive of the same name (`Primitive.bind(*operands, **params)`) with JAX's own param objects
(`eval/xla_params.py` converts each param kind, one table). So `jax.jit(to_jax(closed))(*args)` runs the
program on XLA (any backend the installed JAX has), and `jax.make_jaxpr(to_jax(closed))(*args)` prints the
program text it came from. The rebuilt function is cached per program fingerprint.

- JAX: an optional extra (`pip install 'eqjax[jax]'`). Without it this module still imports, and `to_jax`
  raises `BackendUnavailable` naming the extra.
- x64: JAX with `jax_enable_x64` is eqjax's reference, so importing this module switches it on for the
  process (`jax.config.update("jax_enable_x64", True)`), and `to_jax` switches it back on if it was turned
  off. A scoped `with jax.enable_x64(True):` would not do: `jax.jit` canonicalizes the float64 arguments
  at the call, before the rebuilt function runs, so the setting must hold where the caller calls jit.
- Primitives are found by name in one table: every `jax.extend.core.Primitive` that is a module attribute
  of JAX's modules (`jax_primitives`). eqjax's older names are aliases (`pjit` -> `jit`, `checkpoint` ->
  `remat2`, `core_call` -> `closed_call`, `copy_p` -> `copy`); they print under JAX's name. A name that this
  JAX has as a function but no longer as a primitive (`random_gamma_grad`) binds what that function
  stages. Any other name raises `UnsupportedPrimitive(name, "XLA rebuild", "eval/xla.py")`.
- Sub-jaxprs (jit, cond, while, scan, remat2, composite, reduce, custom_linear_solve, ...) are rebuilt
  once each by tracing the rebuilt body with `jax.make_jaxpr` at the body's avals; one eqjax jaxpr object
  gives one JAX jaxpr object, so JAX prints shared sub-jaxprs as `let` definitions as the text did.
- `custom_jvp_call` / `custom_vjp_call` go through JAX's `custom_jvp` / `custom_vjp` with functions named as
  the text names them, so they print the same. Their rules are the Python functions the text only names:
  the JVP rule is the one registered with `ir.custom_rules` (traced by eqjax, rebuilt here), else the JVP of
  the body, as eqjax's own AD does; fwd/bwd likewise, else reverse mode raises `UnsupportedPrimitive`
  naming the bwd.
- Keys: the rebuilt function takes and returns what `eval.interpreter.eval_jaxpr` does, uint32 key data
  with a trailing axis of 2 words for a `key<fry>[...]` value, and wraps/unwraps it with
  `jax.random.wrap_key_data` / `jax.random.key_data` at the boundary (inputs, outputs, constants and key
  literals).
- Weak types are not in the text, so bodies are traced at strong avals. JAX's tracer drops a
  `convert_element_type` whose operand already has the target dtype and weak type; JAX printed one, so
  its operand was weak there: it is staged as written (`STAGED_AS_WRITTEN`).

Gaps: every oracle case prints back and computes JAX's outputs (tests/eval/test_xla_backend.py). Programs
that do not come from JAX's printer may print differently, with the same values:
- key-typed inputs, outputs or constants add the `random_wrap` / `random_unwrap` equations of the boundary;
- eqjax's older names print as JAX's (`pjit`, `checkpoint`, `core_call`, `copy_p`, and
  `custom_vjp_call_jaxpr` as `custom_vjp_call`), `random_gamma_grad` as the equations JAX stages for it;
- equations JAX's tracer folds or forwards (`pe.const_fold_rules`, `pe.forwarding_rules`: a convert or
  broadcast of a literal, a broadcast to the operand's own shape, ...) that eqjax's rewrites left in;
- a `custom_jvp_call`'s rule and a `custom_vjp_call`'s fwd/bwd are only names in the text: the rebuild
  prints them, but differentiates with the rules registered in `ir.custom_rules` (or the body's JVP);
- function reprs JAX only prints (any `Opaque` but a checkpoint policy and `reduce`'s computation) become
  functions of that name that refuse to be called.
Refused: a `remat2`, `reduce_window` or scatter body with constants (JAX keeps those bodies open).
"""

from __future__ import annotations

import importlib
import sys
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any

import numpy as np

from eval.xla_params import Context, convert_params, jax_dtype
from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray
from ir.errors import EqjaxError, JaxprTypeError, UnsupportedPrimitive

try:
    import jax
except ImportError:  # the core works without JAX; to_jax says how to get it
    jax = None
else:
    jax.config.update("jax_enable_x64", True)

EXTRA = "pip install 'eqjax[jax]'"
WHERE = "eval/xla.py"


class BackendUnavailable(EqjaxError):
    """The XLA backend needs JAX, which is not installed."""


def to_jax(closed: ClosedJaxpr) -> Callable[..., list]:
    """`f(*args) -> list`: `closed` rebuilt with JAX's primitives, for `jax.jit` (see the module docstring)."""
    if jax is None:
        raise BackendUnavailable(f"the XLA backend needs JAX, which is not installed: {EXTRA}")
    if not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)
    from ir.typecheck import fingerprint

    key = fingerprint(closed)
    fn = _CACHE.get(key)
    if fn is None:
        fn = _rebuild(closed)
        _CACHE[key] = fn
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return fn


_CACHE: OrderedDict[str, Callable[..., list]] = OrderedDict()
_CACHE_SIZE = 256


# --- JAX's primitives by name ------------------------------------------------------------------------------

# Modules that define primitives; every loaded JAX module is searched after them.
_PRIMITIVE_MODULES = (
    "jax._src.lax.lax", "jax._src.lax.slicing", "jax._src.lax.convolution", "jax._src.lax.windowed_reductions",
    "jax._src.lax.control_flow", "jax._src.lax.linalg", "jax._src.lax.fft", "jax._src.lax.ann",
    "jax._src.lax.special", "jax._src.lax.parallel", "jax._src.random.prng", "jax._src.random.threefry2x32",
    "jax._src.random", "jax._src.custom_derivatives", "jax._src.ad_checkpoint", "jax._src.ad_util",
    "jax._src.core", "jax._src.dispatch", "jax._src.pjit",
)
ALIASES = {"pjit": "jit", "checkpoint": "remat2", "core_call": "closed_call", "copy_p": "copy"}


@cache
def jax_primitives() -> dict[str, Any]:
    """Every JAX `Primitive` found as a module attribute, by `.name` (the first module in order wins)."""
    from jax.extend.core import Primitive

    for name in _PRIMITIVE_MODULES:
        importlib.import_module(name)
    loaded = sorted(n for n in sys.modules if n == "jax" or n.startswith("jax."))
    table: dict[str, Any] = {}
    for name in (*_PRIMITIVE_MODULES, *loaded):
        for value in list(vars(sys.modules[name]).values()):
            if isinstance(value, Primitive):
                table.setdefault(value.name, value)
    return table


def _special_random_gamma_grad(a, x):
    from jax._src.lax import special

    return special.random_gamma_grad(a, x)


# Names eqjax knows that this JAX has as a function, not a primitive: the function stages its equations.
FUNCTIONS: dict[str, Callable] = {"random_gamma_grad": _special_random_gamma_grad}


# --- the rebuild -------------------------------------------------------------------------------------------


def _rebuild(closed: ClosedJaxpr) -> Callable[..., list]:
    rb = _Rebuilder()
    program = rb.program(closed.jaxpr)
    consts = [_const(c, v.aval) for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)]
    in_avals, out_avals = closed.jaxpr.in_avals, closed.jaxpr.out_avals

    def rebuilt(*args):
        if len(args) != len(in_avals):
            raise JaxprTypeError(f"the program takes {len(in_avals)} arguments, got {len(args)}")
        xs = [_wrap_key(_checked_arg(i, x, a), a) for i, (x, a) in enumerate(zip(args, in_avals, strict=True))]
        outs = program([_wrap_key(c, v.aval) for c, v in zip(consts, closed.jaxpr.constvars, strict=True)], xs)
        return [_unwrap_key(o, a) for o, a in zip(outs, out_avals, strict=True)]

    rebuilt.__name__ = rebuilt.__qualname__ = "eqjax_program"
    return rebuilt


class _Rebuilder:
    """One program's rebuild: each nested jaxpr object is rebuilt once (JAX shares the result as eqjax did)."""

    def __init__(self):
        self._closed: dict[int, tuple[ClosedJaxpr, Any]] = {}
        self._open: dict[int, tuple[ClosedJaxpr, Any]] = {}

    def program(self, jaxpr: Jaxpr) -> Callable[[list, list], list]:
        """`run(consts, args) -> outs` binding every equation of `jaxpr` with JAX's primitives."""
        steps = [(self._equation(eqn), eqn.invars, eqn.outvars) for eqn in jaxpr.eqns]
        constvars, invars, outvars = jaxpr.constvars, jaxpr.invars, jaxpr.outvars

        def run(consts: Sequence, args: Sequence) -> list:
            env: dict[int, Any] = {}
            for v, x in zip((*constvars, *invars), (*consts, *args), strict=True):
                env[id(v)] = x
            read = partial(_read, env)
            for fn, ins, outs in steps:
                for v, r in zip(outs, fn(*map(read, ins)), strict=True):
                    env[id(v)] = r
            return [read(x) for x in outvars]

        return run

    def _equation(self, eqn: Eqn) -> Callable[..., list]:
        rule = HIGHER_ORDER.get(eqn.primitive)
        if rule is not None:
            return rule(self, eqn)
        if eqn.primitive in FUNCTIONS:
            fn = FUNCTIONS[eqn.primitive]
            return lambda *xs: [fn(*xs, **eqn.params)]
        prim = jax_primitives().get(ALIASES.get(eqn.primitive, eqn.primitive))
        if prim is None:
            raise UnsupportedPrimitive(eqn.primitive, "XLA rebuild", WHERE)
        params = convert_params(prim.name, eqn.params, self.context(eqn), len(eqn.invars), len(eqn.outvars))
        if prim.multiple_results:
            return partial(prim.bind, **params)
        bind = STAGED_AS_WRITTEN.get(prim.name, _bind)
        return lambda *xs: [bind(prim, params, *xs)]

    def context(self, eqn: Eqn) -> Context:
        return Context(eqn.primitive, eqn.params, self.closed, self.open)

    def function(self, closed: ClosedJaxpr, name: str = "body") -> Callable[..., list]:
        """The rebuilt body of a nested jaxpr as a Python function of its arguments (named `name`)."""
        program = self.program(closed.jaxpr)
        consts = [_const(c, v.aval) for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)]

        def body(*xs):
            return program(consts, xs)

        body.__name__ = body.__qualname__ = name
        return body

    def closed(self, closed: ClosedJaxpr) -> Any:
        """A JAX ClosedJaxpr of the rebuilt body, traced at the body's avals (one per eqjax object)."""
        hit = self._closed.get(id(closed))
        if hit is None:
            traced = jax.make_jaxpr(self.function(closed))(*map(_abstract, closed.jaxpr.in_avals))
            hit = self._closed[id(closed)] = (closed, traced)
        return hit[1]

    def open(self, closed: ClosedJaxpr) -> Any:
        """A JAX Jaxpr (the params JAX keeps open: remat2, reduce_window, the scatters' update_jaxpr)."""
        hit = self._open.get(id(closed))
        if hit is None:
            traced = self.closed(closed)
            if traced.consts:
                raise JaxprTypeError("a nested jaxpr that JAX keeps open cannot close over constants",
                                     expected="no constants", actual=f"{len(traced.consts)} constants")
            hit = self._open[id(closed)] = (closed, traced.jaxpr)
        return hit[1]


def _bind(prim, params: dict, *xs):
    return prim.bind(*xs, **params)


def _convert_as_written(prim, params: dict, x):
    """`convert_element_type` to the operand's own dtype, staged as written. JAX's tracer drops it when the
    operand's weak type equals `weak_type` (its forwarding rule): JAX printed it, so its operand was weakly
    typed there, but the text does not print weak types and a rebuilt operand is strong. The value is the
    same either way; staging the equation keeps the program (and its text) as it was."""
    from jax._src import core as jax_core
    from jax._src import source_info_util
    from jax._src.interpreters import partial_eval as pe

    trace = jax_core.trace_ctx.trace
    if not (isinstance(trace, pe.DynamicJaxprTrace) and isinstance(x, pe.DynamicJaxprTracer)
            and x._trace is trace and x.aval.dtype == params["new_dtype"]):
        return prim.bind(x, **params)
    out_aval, effects = prim.abstract_eval(x.aval, **params)
    eqn, (out,) = trace.make_eqn([x], [out_aval], prim, params, effects, source_info_util.current())
    trace.frame.add_eqn(eqn)
    return out


# Primitives whose equations JAX's tracer may drop as no-ops though the text has them: staged as written.
STAGED_AS_WRITTEN = {"convert_element_type": _convert_as_written}


def _read(env: dict[int, Any], x) -> Any:
    if isinstance(x, Literal):
        return _wrap_key(_const(x.value, x.aval), x.aval)
    return env[id(x)]


# --- the custom-derivative calls -------------------------------------------------------------------------


def _named(fn: Callable, name: str) -> Callable:
    fn.__name__ = fn.__qualname__ = name
    return fn


def _custom_jvp_call(rb: _Rebuilder, eqn: Eqn) -> Callable[..., list]:
    """JAX's `custom_jvp` of the rebuilt body, its rule named as printed. The rule is looked up in
    `ir.custom_rules` when JAX differentiates (the registry may change after `to_jax`)."""
    from ir import custom_rules

    n_consts, n_out = int(eqn.params.get("num_consts", 0)), len(eqn.outvars)
    body = rb.function(eqn.params["call_jaxpr"], str(eqn.params["name"]))
    jvp_name = str(eqn.params["jvp"])
    built: dict[Callable, Callable] = {}  # registered rule -> its rebuilt program

    def registered() -> Callable | None:
        rule = custom_rules.jvp_rule(eqn)
        if rule is not None and rule not in built:
            built[rule] = rb.function(custom_rules.jvp_program(eqn), jvp_name)
        return built.get(rule)

    def call(*operands):
        consts, args = operands[:n_consts], operands[n_consts:]
        fun = _named(lambda *xs: tuple(body(*consts, *xs)), body.__name__)

        def jvp(primals, tangents):
            rule = registered()
            if rule is None:  # no rule registered: the body's own derivative, as eqjax's AD does
                return jax.jvp(fun, primals, tangents)
            outs = rule(*consts, *primals, *tangents)
            return tuple(outs[:n_out]), tuple(outs[n_out:])

        f = jax.custom_jvp(fun)
        f.defjvp(_named(jvp, jvp_name), symbolic_zeros=bool(eqn.params.get("symbolic_zeros", False)))
        return list(f(*args))

    return call


def _custom_vjp_call(rb: _Rebuilder, eqn: Eqn) -> Callable[..., list]:
    """JAX's `custom_vjp` of the rebuilt body, fwd and bwd named as printed and looked up in `ir.custom_rules`
    when JAX differentiates; without them reverse mode raises `UnsupportedPrimitive` naming the bwd."""
    from ir import custom_rules

    n_consts, n_out = int(eqn.params.get("num_consts", 0)), len(eqn.outvars)
    body = rb.function(eqn.params.get("call_jaxpr", eqn.params.get("fun_jaxpr")), str(eqn.params.get("name", "fun")))
    fwd_name = str(eqn.params.get("fwd", eqn.params.get("fwd_jaxpr_thunk")))
    bwd_name = str(eqn.params["bwd"])
    built: dict[Any, tuple[Callable, Callable]] = {}  # registered rules -> rebuilt (fwd, bwd) programs

    def registered() -> tuple[Callable, Callable] | None:
        rules = custom_rules.vjp_rules(eqn)
        if rules is not None and rules not in built:
            fwd, tree = custom_rules.fwd_program(eqn)
            bwd = custom_rules.bwd_program(eqn, fwd.jaxpr.out_avals[n_out:], tree)
            built[rules] = (rb.function(fwd, fwd_name), rb.function(bwd, bwd_name))
        return built.get(rules)

    def call(*operands):
        consts, args = operands[:n_consts], operands[n_consts:]
        fun = _named(lambda *xs: tuple(body(*consts, *xs)), body.__name__)

        def fwd(*xs):
            rules = registered()
            if rules is None:
                return fun(*xs), ()
            outs = rules[0](*xs)
            return tuple(outs[:n_out]), tuple(outs[n_out:])

        def bwd(residuals, cts):
            rules = registered()
            if rules is None:
                raise UnsupportedPrimitive(f"custom_vjp_call {eqn.params.get('name')}",
                                           f"registered bwd ({bwd_name})", "ir.custom_rules.defvjp")
            return tuple(rules[1](*residuals, *cts))

        f = jax.custom_vjp(fun)
        f.defvjp(_named(fwd, fwd_name), _named(bwd, bwd_name),
                 symbolic_zeros=bool(eqn.params.get("symbolic_zeros", False)))
        return list(f(*args))

    return call


HIGHER_ORDER: dict[str, Callable[[_Rebuilder, Eqn], Callable[..., list]]] = {
    "custom_jvp_call": _custom_jvp_call, "custom_vjp_call": _custom_vjp_call,
    "custom_vjp_call_jaxpr": _custom_vjp_call,
}


# --- values at the boundary --------------------------------------------------------------------------------


def _const(value, aval: ShapedArray) -> np.ndarray:
    return np.asarray(value, dtype=aval.dtype.numpy)


def _abstract(aval: ShapedArray):
    return jax.ShapeDtypeStruct(aval.shape, jax_dtype(aval.dtype), weak_type=aval.weak_type)


def _checked_arg(i: int, x, aval: ShapedArray):
    """`x` if it has the invar's dtype and shape (key data for a key); a Python scalar is given that dtype,
    as `eval_jaxpr` does."""
    shape = aval.shape + (2,) if aval.dtype.kind == "key" else aval.shape
    dtype = np.dtype(aval.dtype.numpy)
    if isinstance(x, (bool, int, float, complex)):
        x = np.asarray(x, dtype=dtype)
    elif not hasattr(x, "dtype"):
        x = np.asarray(x)
    got_shape, got_dtype = tuple(np.shape(x)), np.dtype(x.dtype)
    if got_shape != shape or got_dtype != dtype:
        raise JaxprTypeError(f"argument {i} is {got_dtype}{list(got_shape)}", expected=str(aval),
                             actual=f"{got_dtype}{list(got_shape)}")
    return x


def _wrap_key(x, aval: ShapedArray):
    if aval.dtype.kind != "key":
        return x
    return jax.random.wrap_key_data(x, impl="threefry2x32")


def _unwrap_key(x, aval: ShapedArray):
    if aval.dtype.kind != "key":
        return x
    return jax.random.key_data(x)


__all__ = ["ALIASES", "EXTRA", "FUNCTIONS", "HIGHER_ORDER", "STAGED_AS_WRITTEN", "BackendUnavailable",
           "jax_primitives", "to_jax"]
