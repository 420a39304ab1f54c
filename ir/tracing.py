"""Tracing Python functions into Jaxprs (autodidax style).

A `JaxprBuilder` records equations while a function runs on `Tracer`s. Every primitive
application goes through `bind(name, *operands, **params)`: the operands are lifted to atoms
(the builder's own variables, weak-typed `Literal`s for Python scalars, strong `Literal`s for
NumPy scalars, constvars for non-scalar NumPy arrays and for tracers of an enclosing trace),
the shape rule (`ir.primitives.abstract_eval`) gives the result avals, and new tracers come back.

Builders nest: `bind` always records into the innermost one, and a tracer of an enclosing trace
used inside becomes a constvar of the inner jaxpr whose const is that outer tracer (as in JAX);
`hoist_consts` turns such constants into leading inputs for higher-order primitives.

Equation results nobody reads print as `_` (DropVar) only in the outermost trace, the jaxpr
`make_jaxpr` returns: JAX keeps the names in nested jaxprs (scan/while/cond bodies, reduce
computations, custom_jvp and jit bodies).

    make_jaxpr(f, static_argnums=())(*example_args) -> ClosedJaxpr
    trace_to_jaxpr(f, in_avals) -> (ClosedJaxpr, out_treedef)    # used by transforms
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ir import dtypes
from ir.core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.errors import EqjaxError
from ir.primitives import abstract_eval, get_primitive
from ir.tree import TreeDef, tree_flatten, tree_unflatten

_TRACE_STACK: list[JaxprBuilder] = []


class TracingError(EqjaxError):
    """A traced value was used where a concrete one is needed, or escaped its trace."""


def _np():
    import ir.numpy as jnp
    return jnp


class Tracer:
    """A traced array: a variable of a `JaxprBuilder` (or a Literal, for a traced constant),
    with NumPy-like operators."""

    __slots__ = ("_builder", "_var")
    __array_priority__ = 1000
    __array_ufunc__ = None  # NumPy defers `ndarray + tracer` to Tracer.__radd__

    def __init__(self, builder: JaxprBuilder, var: Var):
        self._builder = builder
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        return self._var.aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self._var.aval.shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._var.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self._var.aval.weak_type

    @property
    def ndim(self) -> int:
        return len(self._var.aval.shape)

    @property
    def size(self) -> int:
        return self._var.aval.size

    @property
    def T(self) -> Tracer:
        return _np().transpose(self)

    def __repr__(self) -> str:
        return f"Tracer<{self.aval}{'(weak)' if self.weak_type else ''}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def _concrete(self, what: str, convert):
        if isinstance(self._var, Literal):  # a traced constant still has its value
            return convert(self._var.value)
        raise TracingError(f"{what} needs a concrete value, but this is a traced {self.aval}; "
                           "use ir.numpy.where / lax.select instead of Python control flow")

    def __bool__(self):
        return self._concrete("bool()", bool)

    def __int__(self):
        return self._concrete("int()", int)

    def __float__(self):
        return self._concrete("float()", float)

    def __complex__(self):
        return self._concrete("complex()", complex)

    def __index__(self):
        return self._concrete("use as an index", operator.index)

    def __array__(self, *args, **kwargs):
        return self._concrete("conversion to a NumPy array", np.asarray)

    __hash__ = None  # == builds an `eq` equation, so tracers are not hashable

    # Arithmetic goes through ir.numpy, which applies JAX's promotion and broadcasting.
    def __neg__(self): return _np().negative(self)
    def __pos__(self): return _np().positive(self)
    def __abs__(self): return _np().abs(self)
    def __invert__(self): return _np().invert(self)
    def __add__(self, other): return _np().add(self, other)
    def __radd__(self, other): return _np().add(other, self)
    def __sub__(self, other): return _np().subtract(self, other)
    def __rsub__(self, other): return _np().subtract(other, self)
    def __mul__(self, other): return _np().multiply(self, other)
    def __rmul__(self, other): return _np().multiply(other, self)
    def __truediv__(self, other): return _np().true_divide(self, other)
    def __rtruediv__(self, other): return _np().true_divide(other, self)
    def __floordiv__(self, other): return _np().floor_divide(self, other)
    def __rfloordiv__(self, other): return _np().floor_divide(other, self)
    def __mod__(self, other): return _np().remainder(self, other)
    def __rmod__(self, other): return _np().remainder(other, self)
    def __pow__(self, other): return _np().power(self, other)
    def __rpow__(self, other): return _np().power(other, self)
    def __matmul__(self, other): return _np().matmul(self, other)
    def __rmatmul__(self, other): return _np().matmul(other, self)
    def __and__(self, other): return _np().bitwise_and(self, other)
    def __rand__(self, other): return _np().bitwise_and(other, self)
    def __or__(self, other): return _np().bitwise_or(self, other)
    def __ror__(self, other): return _np().bitwise_or(other, self)
    def __xor__(self, other): return _np().bitwise_xor(self, other)
    def __rxor__(self, other): return _np().bitwise_xor(other, self)
    def __lshift__(self, other): return _np().left_shift(self, other)
    def __rlshift__(self, other): return _np().left_shift(other, self)
    def __rshift__(self, other): return _np().right_shift(self, other)
    def __rrshift__(self, other): return _np().right_shift(other, self)
    def __eq__(self, other): return _np().equal(self, other)
    def __ne__(self, other): return _np().not_equal(self, other)
    def __lt__(self, other): return _np().less(self, other)
    def __le__(self, other): return _np().less_equal(self, other)
    def __gt__(self, other): return _np().greater(self, other)
    def __ge__(self, other): return _np().greater_equal(self, other)

    def __getitem__(self, idx):
        return _np().getitem(self, idx)

    @property
    def at(self):
        """`x.at[idx].set(v)` / `.add` / `.multiply` / `.min` / `.max` / `.get()`, as `jax.Array.at`."""
        return _np().IndexUpdateHelper(self)

    def reshape(self, *shape, order: str = "C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return _np().reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return _np().transpose(self, axes or None)

    def astype(self, dtype):
        return _np().astype(self, dtype)

    def sum(self, axis=None, dtype=None, keepdims=False):
        return _np().sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return _np().prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, keepdims=False):
        return _np().mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return _np().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _np().min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _np().argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _np().argmin(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None):
        return _np().cumsum(self, axis=axis, dtype=dtype)

    def squeeze(self, axis=None):
        return _np().squeeze(self, axis)

    def ravel(self):
        return _np().ravel(self)

    def flatten(self):
        return _np().ravel(self)

    def dot(self, other):
        return _np().dot(self, other)

    def clip(self, min=None, max=None):  # noqa: A002  (NumPy's names)
        return _np().clip(self, min, max)

    def conj(self):
        return _np().conj(self)

    @property
    def real(self):
        return _np().real(self)

    @property
    def imag(self):
        return _np().imag(self)


class JaxprBuilder:
    """Records the equations of one trace; `build` closes it into a `ClosedJaxpr`."""

    def __init__(self):
        self.invars: list[Var] = []
        self.eqns: list[Eqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_vars: dict[int, Var] = {}  # id(const value) -> its constvar

    def new_arg(self, aval: ShapedArray) -> Tracer:
        var = Var(aval)
        self.invars.append(var)
        return Tracer(self, var)

    def atom(self, x: Any) -> Var | Literal:
        """The atom standing for operand `x` in this trace."""
        if isinstance(x, Tracer):
            if x._builder is self:
                return x._var
            if x._builder not in _TRACE_STACK:
                raise TracingError(f"a tracer {x.aval} escaped the trace that made it (it was kept "
                                   "in a global or returned through a side channel)")
            return self._constvar(x, x.aval)
        if isinstance(x, Literal):
            return x
        if isinstance(x, np.ndarray) and x.ndim > 0:
            return self._constvar(x, ShapedArray(x.shape, dtypes.from_numpy(x.dtype)))
        return literal(x)

    def _constvar(self, value: Any, aval: ShapedArray) -> Var:
        var = self._const_vars.get(id(value))
        if var is None:
            var = self._const_vars[id(value)] = Var(aval)
            self.constvars.append(var)
            self.consts.append(value)
        return var

    def add_eqn(self, primitive: str, atoms: list, out_avals: Sequence[ShapedArray],
                params: dict) -> list[Tracer]:
        outvars = [Var(a) for a in out_avals]
        self.eqns.append(Eqn(primitive, atoms, outvars, params))
        return [Tracer(self, v) for v in outvars]

    def build(self, outs: Sequence[Any], *, drop_unread: bool) -> ClosedJaxpr:
        """The jaxpr returning `outs`, without the constvars nobody reads; with `drop_unread`, the
        equation results nobody reads become `_`."""
        out_atoms = [self.atom(x) for x in outs]
        constvars, consts = _drop_unused_vars(self.constvars, self.consts, self.eqns, out_atoms, drop_unread)
        return ClosedJaxpr(Jaxpr(constvars, list(self.invars), out_atoms, self.eqns), consts)


def _drop_unused_vars(constvars, consts, eqns, outvars, drop_unread: bool):
    """Unread constvars go and, with `drop_unread`, unread equation results become `_`, as in JAX's
    `_drop_unused_vars`."""
    used = {id(a) for a in outvars if isinstance(a, Var)}
    for eqn in reversed(eqns):
        if drop_unread:
            eqn.outvars = [v if id(v) in used else DropVar(v.aval) for v in eqn.outvars]
        used.update(id(a) for a in eqn.invars if isinstance(a, Var))
    kept = [(v, c) for v, c in zip(constvars, consts, strict=True) if id(v) in used]
    return [v for v, _ in kept], [c for _, c in kept]


def literal(x: Any, dtype: dtypes.DType | None = None, weak_type: bool | None = None) -> Literal:
    """A scalar as a Literal: Python scalars are weak (except bool), NumPy scalars are strong.

    With `dtype`, the value is converted to it (this is how JAX folds the conversion of a
    Python scalar operand to the promoted dtype at trace time).
    """
    if isinstance(x, Literal):
        x, x_dtype, x_weak = x.value, x.aval.dtype, x.aval.weak_type
    elif isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        x_dtype = dtypes.canonical_scalar_dtype(x)
        x_weak = not isinstance(x, bool)
    elif isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0:
        x_dtype, x_weak = dtypes.from_numpy(np.asarray(x).dtype), False
    else:
        raise TypeError(f"not a scalar constant: {type(x).__name__} {x!r}")
    dtype = x_dtype if dtype is None else dtype
    weak = x_weak if weak_type is None else weak_type
    if dtype.kind in ("key", "float0"):
        raise TypeError(f"cannot make a {dtype} literal from {x!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        value = np.asarray(x).astype(dtype.numpy)[()]
    return Literal(value, ShapedArray((), dtype, weak and dtype.kind != "b"))


def current_builder() -> JaxprBuilder:
    if not _TRACE_STACK:
        raise TracingError("no active trace: call ir.numpy / ir.lax functions inside a function "
                           "traced by ir.make_jaxpr (eqjax has no eager mode)")
    return _TRACE_STACK[-1]


def bind(primitive: str, *operands: Any, **params: Any):
    """Apply `primitive` in the innermost trace; returns a Tracer, or a list for multi-result ones."""
    builder = current_builder()
    atoms = [builder.atom(x) for x in operands]
    out_avals = abstract_eval(primitive, [a.aval for a in atoms], params)
    outs = builder.add_eqn(primitive, atoms, out_avals, params)
    return outs if get_primitive(primitive).multiple_results else outs[0]


def aval_of(x: Any) -> ShapedArray:
    """The abstract value of a tracer, Literal, ShapedArray, NumPy array or Python scalar."""
    if isinstance(x, (Tracer, Literal)):
        return x.aval
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, np.ndarray) and x.ndim > 0:
        return ShapedArray(x.shape, dtypes.from_numpy(x.dtype))
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        return literal(x).aval
    raise TypeError(f"{type(x).__name__} is not an array type eqjax can trace: {x!r}")


def const_tracer(x: Any) -> Tracer:
    """A constant as a tracer of the current trace (a Literal for scalars, else a constvar), so
    operations on it are recorded rather than computed by NumPy (JAX stages them out too)."""
    builder = current_builder()
    return Tracer(builder, builder.atom(x))


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)


# --- tracing whole functions -------------------------------------------------------------------

def trace_flat(fun: Callable[..., Any], in_avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, TreeDef]:
    """Trace `fun(*tracers)` (one tracer per aval); returns the jaxpr and the output pytree structure.

    Inside another trace (a body of a higher-order primitive) unread results keep their names;
    the outermost trace prints them as `_`, as JAX's `make_jaxpr` does."""
    outermost = not _TRACE_STACK
    builder = JaxprBuilder()
    _TRACE_STACK.append(builder)
    try:
        args = [builder.new_arg(a) for a in in_avals]
        out = fun(*args)
        leaves, out_tree = tree_flatten(out)
        closed = builder.build(leaves, drop_unread=outermost)
    finally:
        _TRACE_STACK.pop()
    return closed, out_tree


def trace_to_jaxpr(fun: Callable[..., Any], in_avals: Sequence[Any]) -> tuple[ClosedJaxpr, TreeDef]:
    """Trace `fun(*args)` where `in_avals` holds one pytree of ShapedArrays per argument.

    The jaxpr's invars are the flattened leaves; the returned treedef is the output structure.
    Consts of the result may be tracers of an enclosing trace (closed-over values).
    """
    flat_avals, in_tree = tree_flatten(tuple(in_avals))
    for a in flat_avals:
        if not isinstance(a, ShapedArray):
            raise TypeError(f"trace_to_jaxpr expects ShapedArray leaves, got {type(a).__name__}")

    def flat_fun(*flat_args):
        return fun(*tree_unflatten(in_tree, flat_args))

    return trace_flat(flat_fun, flat_avals)


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (), *,
               return_shape: bool = False, check: bool = True):
    """Like `jax.make_jaxpr`: `make_jaxpr(f)(*example_args) -> ClosedJaxpr`.

    Example arguments may be NumPy arrays, Python or NumPy scalars (Python scalars give
    weak-typed inputs, as in JAX), `ShapedArray`s, or pytrees of those; keyword arguments are
    traced too. Arguments at `static_argnums` are passed through untraced. With
    `return_shape=True` the result is `(closed_jaxpr, out)` where `out` is the output pytree
    with a ShapedArray per leaf.
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make(*args, **kwargs):
        n = len(args)
        static_pos = {operator.index(i) % n if n else i for i in static}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)

        def call(dyn, kw):
            it = iter(dyn)
            full = [args[i] if i in static_pos else next(it) for i in range(n)]
            return fun(*full, **kw)

        in_avals = (_abstractify_tree(dyn_args), _abstractify_tree(kwargs))
        closed, out_tree = trace_to_jaxpr(call, in_avals)
        if check:
            from ir.typecheck import typecheck
            typecheck(closed)
        if return_shape:
            return closed, tree_unflatten(out_tree, [a.strip_weak() for a in closed.out_avals])
        return closed

    make.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return make


def _abstractify_tree(tree: Any) -> Any:
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [_abstractify(x) for x in leaves])


def _abstractify(x: Any) -> ShapedArray:
    if isinstance(x, ShapedArray):
        return x
    if isinstance(x, (list, tuple)):  # unreachable for pytrees; kept for a clear message
        raise TypeError("nested sequences are pytrees, not arrays")
    try:
        return aval_of(x)
    except (TypeError, KeyError):
        raise TypeError(f"make_jaxpr: argument of type {type(x).__name__} is not an array, "
                        "scalar, ShapedArray or pytree of those") from None


# --- working with traced jaxprs ----------------------------------------------------------------

def bind_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    """Replay `closed`'s equations in the current trace on `args`; returns its outputs (inlined)."""
    jaxpr = closed.jaxpr
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[int, Any] = {}
    for v, x in zip(jaxpr.constvars, closed.consts, strict=True):
        env[id(v)] = x
    for v, x in zip(jaxpr.invars, args, strict=True):
        env[id(v)] = x

    def read(a):
        return a if isinstance(a, Literal) else env[id(a)]

    for eqn in jaxpr.eqns:
        outs = bind(eqn.primitive, *map(read, eqn.invars), **eqn.params)
        if not get_primitive(eqn.primitive).multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs, strict=True):
            if isinstance(v, Var):
                env[id(v)] = x
    return [read(a) for a in jaxpr.outvars]


def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Move constvars to the front of the invars: for the sub-jaxpr of a higher-order primitive,
    whose constants (outer tracers or arrays) must become explicit operands."""
    jaxpr = closed.jaxpr
    hoisted = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), list(jaxpr.outvars), jaxpr.eqns)
    return ClosedJaxpr(hoisted, []), list(closed.consts)
