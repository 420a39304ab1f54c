"""The egglog term language of Jaxprs.

Sorts
    Arr    an array value
    Args   a cons list of array operands (`Args.nil()`, `Args.cons(x, rest)`) for variadic primitives
    Tup    the results of a multi-result equation; `get(t, i)` is its i-th result
    Body   a sub-jaxpr: its id and its outputs; Bodies a cons list of them

Leaves
    Arr.inp(k)               the k-th input of the program
    Arr.barg(b, k)           the k-th input of body b (a sub-jaxpr of a control-flow equation)
    Arr.const(k)             the k-th array constant (values held on the Python side), also any literal
                             `scalar` cannot hold exactly (nan, -0.0, huge integers, complex)
    Arr.scalar(v, dtype)     a rank-0 literal of `dtype` whose value is the float64 `v`

Equations
    one constructor per single-result primitive (the catalogue trait "term", ir/primitives), named after
    it (`add(x, y, extra)`, `reduce_sum(x, axes, extra)`, `gather(x, idx, extra)`): the operands, then the
    params a rule may read as typed egglog values (`TermSpec.fields`), then `extra`, the remaining params
    as their printed text ("" stands for the primitive's default params, which rules use when they build
    a node); a variadic primitive holds its operands as one `Args` list (`select_n(args, extra)`,
    `dynamic_slice(args, extra)`); a field value JAX spelled with NumPy ints (`(0, np.int64(1))`)
    is held as its plain value, and its spelling in `extra` (`encode_fields`). An equation with shape
    operands besides the row's own (JAX's dynamic-shape mode) is refused (`UnsupportedPrimitive`);
    `call(prim, extra, args)` for multi-result primitives, read through `get`;
    `hcall(prim, extra, args, bodies)` for control flow (`scan`, `while`, `cond`): each sub-jaxpr is a
    `Body.of(b, outs)` whose outputs are terms over its own inputs `Arr.barg(b, k)`, so rules rewrite
    inside bodies as anywhere else; `bodies` is a `Bodies.cons` list in the order of the params.

The e-class analysis facts rules can ask for are egglog functions: `shape_of(x)` (Vec[i64]) and
`dtype_of(x)` (the dtype name); `rewrites.analyses.values` adds sign/zero/finiteness relations.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from egglog import EGraph, Expr, StringLike, Vec, f64Like, function, i64, i64Like, method, relation
from egglog.declarations import LitDecl

from ir.errors import JaxprTypeError
from ir.primitives import PRIMITIVES, Primitive, primitives_with
from rewrites import egglog_fast  # noqa: F401  (before any expression is built)


class Arr(Expr, egg_sort="Arr"):
    @method(egg_fn="inp")
    @classmethod
    def inp(cls, k: i64Like) -> Arr: ...

    @method(egg_fn="const")
    @classmethod
    def const(cls, k: i64Like) -> Arr: ...

    @method(egg_fn="scalar")
    @classmethod
    def scalar(cls, value: f64Like, dtype: StringLike) -> Arr: ...


    @method(egg_fn="barg")
    @classmethod
    def barg(cls, body: i64Like, k: i64Like) -> Arr: ...


class Args(Expr, egg_sort="Args"):
    @method(egg_fn="nil")
    @classmethod
    def nil(cls) -> Args: ...

    @method(egg_fn="cons")
    @classmethod
    def cons(cls, head: Arr, tail: Args) -> Args: ...


class Tup(Expr, egg_sort="Tup"):
    pass


class Body(Expr, egg_sort="Body"):
    @method(egg_fn="body")
    @classmethod
    def of(cls, body: i64Like, outs: Args) -> Body: ...


class Bodies(Expr, egg_sort="Bodies"):
    @method(egg_fn="bnil")
    @classmethod
    def nil(cls) -> Bodies: ...

    @method(egg_fn="bcons")
    @classmethod
    def cons(cls, head: Body, tail: Bodies) -> Bodies: ...


@function(egg_fn="get")
def get(t: Tup, i: i64Like) -> Arr: ...


@function(egg_fn="call")
def call(prim: StringLike, extra: StringLike, args: Args) -> Tup: ...


@function(egg_fn="hcall")
def hcall(prim: StringLike, extra: StringLike, args: Args, bodies: Bodies) -> Tup: ...


@function(egg_fn="ref", unextractable=True)
def ref(k: i64Like) -> Arr:
    """The k-th equation result of an encoded program: an alias the loader unions with its definition."""


def alias(k: int) -> Arr:
    """`ref(k)`, built from a template instead of through egglog's call machinery (7x faster: a program has
    as many output aliases as outputs, thousands for a gradient)."""
    template = _ref_template()
    typed = template.__egg_typed_expr__
    [index] = typed.expr.args
    k_decl = dataclasses.replace(index, expr=LitDecl(int(k)))
    return template.__with_expr__(dataclasses.replace(typed, expr=dataclasses.replace(typed.expr, args=(k_decl,))))


@cache
def _ref_template() -> Arr:
    return ref(0)


@function(egg_fn="shape_of", merge=lambda old, new: old)
def shape_of(x: Arr) -> Vec[i64]: ...


@function(egg_fn="dtype_of", merge=lambda old, new: old)
def dtype_of(x: Arr) -> StringLike: ...


# The program's k-th output is `output_at(k, x)`: a flat table read by `rewrites.serialize`, where a cons
# list of thousands of outputs made egglog's Python layer recurse past its limit (~350 outputs).
output_at = relation("output_at", i64, Arr, egg_fn="output_at")


def args_list(xs: list[Arr]) -> Args:
    out = Args.nil()
    for x in reversed(xs):
        out = Args.cons(x, out)
    return out


# --- typed param fields -------------------------------------------------------------------------
# A field kind says how one param is held in the e-graph and read back. `encode` gives the field's value
# for a param value it holds exactly; `nearest` the value of one it holds only up to spelling (NumPy ints
# such as `np.int64(1)`, a list for a tuple), whose printed form then rides in `extra` (`encode_fields`).


@dataclass(frozen=True)
class FieldKind:
    """`encode`/`nearest` give the plain Python value the field holds (int, tuple of ints or str), or None."""

    name: str
    egg_type: Any
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    nearest: Callable[[Any], Any]


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _encode_int(v):
    return int(v) if type(v) is int else None


def _nearest_int(v):
    return int(v) if _is_int(v) else None


def _encode_ints(v):
    return v if type(v) is tuple and all(type(d) is int for d in v) else None


def _nearest_ints(v):
    return tuple(int(d) for d in v) if isinstance(v, (tuple, list)) and all(map(_is_int, v)) else None


def _encode_dtype(v):
    from ir.dtypes import DType

    return v.name if isinstance(v, DType) else None


def _decode_dtype(s: str):
    from ir.dtypes import from_name

    return from_name(s)


INT = FieldKind("int", i64, _encode_int, int, _nearest_int)
INTS = FieldKind("ints", Vec[i64], _encode_ints, lambda v: tuple(int(d) for d in v), _nearest_ints)
DTYPE = FieldKind("dtype", StringLike, _encode_dtype, _decode_dtype, _encode_dtype)


def _encode_literal_text(v):
    """Nested tuples/lists of ints as their printed text, e.g. `(([1], [0]), ([], []))`."""
    text = repr(v)
    try:
        return text if ast.literal_eval(text) == v and _same_structure(ast.literal_eval(text), v) else None
    except (ValueError, SyntaxError):
        return None


def _plain_ints(v):
    """`v` with its NumPy-spelled ints as Python ints (containers kept)."""
    if isinstance(v, (tuple, list)):
        return type(v)(_plain_ints(x) for x in v)
    return int(v) if _is_int(v) else v


def _same_structure(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same_structure(x, y) for x, y in zip(a, b, strict=True))
    return True


# dot_general's dimension_numbers, matched by rules as text (the matmul form is `(([1], [0]), ([], []))`).
DIMENSION_NUMBERS = FieldKind("dimension_numbers", StringLike, _encode_literal_text, ast.literal_eval,
                              lambda v: _encode_literal_text(_plain_ints(v)))


@dataclass(frozen=True)
class TermSpec:
    """How one primitive is held in the e-graph: its constructor's operands (`arity` of them, or None for a
    variadic primitive: one `Args` list of them all) and typed fields."""

    primitive: str
    arity: int | None
    fields: tuple[tuple[str, FieldKind], ...] = ()

    def kind_of(self, name: str) -> FieldKind:
        return dict(self.fields)[name]

    @property
    def children(self) -> int:
        """The constructor's array children: its operands, or the one `Args` list of a variadic primitive."""
        return 1 if self.arity is None else self.arity

    @property
    def constructor_name(self) -> str:
        return "p_" + self.primitive.replace("-", "_")


# The field kind of each param kind a catalogue row marks `term_field` (ir/primitives/schema.py).
FIELD_KINDS: dict[str, FieldKind] = {"int": INT, "nat": INT, "ints": INTS, "dtype": DTYPE,
                                     "dot_dims": DIMENSION_NUMBERS}


def _spec(row: Primitive) -> TermSpec:
    """The term spec of a catalogue row with the trait "term": its operand count and typed fields."""
    if row.multiple_results:
        raise ValueError(f"primitive {row.name!r} has the trait 'term' but not one result")
    arity = row.operands if isinstance(row.operands, int) else None
    return TermSpec(row.name, arity, tuple((name, FIELD_KINDS[p.kind]) for name, p in row.typed_fields()))


def _build_specs() -> dict[str, TermSpec]:
    return {name: _spec(PRIMITIVES[name]) for name in sorted(primitives_with("term"))}


SPECS: dict[str, TermSpec] = _build_specs()


def _make_constructor(spec: TermSpec):
    """An egglog constructor `p_<prim>(operands..., fields..., extra) -> Arr` (`p_<prim>(args, ...)` for a
    variadic primitive)."""
    if spec.arity is None:
        params = [inspect.Parameter("args", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Args)]
    else:
        params = [inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Arr)
                  for i in range(spec.arity)]
    params += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind.egg_type)
               for name, kind in spec.fields]
    params.append(inspect.Parameter("extra", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=StringLike))

    def stub(*args): ...

    stub.__signature__ = inspect.Signature(params, return_annotation=Arr)
    stub.__annotations__ = {p.name: p.annotation for p in params} | {"return": Arr}
    stub.__name__ = stub.__qualname__ = spec.constructor_name
    return function(egg_fn=spec.constructor_name)(stub)


CONSTRUCTORS: dict[str, Any] = {name: _make_constructor(spec) for name, spec in SPECS.items()}
BY_EGG_NAME: dict[str, TermSpec] = {spec.constructor_name: spec for spec in SPECS.values()}


def default_params(prim: str, in_avals: list) -> dict | None:
    """The leftover params a rule-built node of `prim` gets (its `extra` is ""), or None if it has none:
    the params its catalogue row gives a default, other than the typed fields."""
    if prim not in SPECS:
        return None
    return PRIMITIVES[prim].default_params(in_avals)


class _Ops:
    """`T.add(x, y)`, `T.reduce_sum(x, axes)`, `T.scatter_add(x, i, u, extra=s)`: the constructors, named as
    their egglog names without `p_`, with `extra` defaulting to "" (the primitive's default params), for
    writing rules."""

    def __getattr__(self, name: str):
        spec = BY_EGG_NAME.get("p_" + name)
        if spec is None:
            raise AttributeError(f"no term constructor for primitive {name!r}")
        prim, n = spec.primitive, spec.children + len(spec.fields)
        ctor = CONSTRUCTORS[prim]

        def build(*args, extra: Any = ""):
            if len(args) != n:
                what = "one Args list" if spec.arity is None else f"{spec.arity} operands"
                raise TypeError(f"{prim} takes {what} and {len(spec.fields)} fields, got {len(args)} arguments")
            return ctor(*args, extra)

        return build


T = _Ops()


def declare(egraph, exprs: Callable[[], Sequence], flag: str) -> None:
    """Declare the constructors and functions the expressions `exprs()` use to `egraph` without adding
    nodes, so that commands built at egglog's level can name them; once per `flag`. An egraph stand-in
    (`rewrites.encode.Staging`) keeps the declaration to replay it."""
    if getattr(egraph, flag, False):
        return
    setattr(egraph, flag, True)
    if not isinstance(egraph, EGraph):
        egraph.declare(exprs, flag)
        return
    for expr in exprs():
        egraph._add_decls(expr)
        egraph._state.typed_expr_to_egg(expr.__egg_typed_expr__)


def declare_terms(egraph) -> None:
    """Declare every sort and constructor to `egraph` without adding a node, so that commands built
    directly at egglog's level (the fast loader in `rewrites.encode`) can name them. Idempotent."""
    declare(egraph, _term_uses, "_eqjax_terms_declared")


@cache
def _term_uses() -> tuple:
    x = Arr.inp(0)
    xs = args_list([x])
    bodies = Bodies.cons(Body.of(0, args_list([Arr.barg(0, 0)])), Bodies.nil())
    uses = [shape_of(x), dtype_of(x), ref(0), Arr.const(0), Arr.scalar(0.0, ""), get(call("", "", xs), 0),
            get(hcall("", "", xs, bodies), 0), output_at(0, x)]
    for spec in SPECS.values():
        fields = [_placeholder(kind) for _, kind in spec.fields]
        operands = [xs] if spec.arity is None else [x] * spec.arity
        uses.append(CONSTRUCTORS[spec.primitive](*operands, *fields, ""))
    return tuple(uses)


def _placeholder(kind: FieldKind):
    return {"int": i64(0), "ints": Vec[i64].empty()}.get(kind.name, "")


def encode_fields(spec: TermSpec, params: dict) -> tuple[list[Any], dict]:
    """The typed field values of `params` and the leftover params. A field value held only up to its
    spelling (`FieldKind.nearest`: `np.int64(1)` for 1) stays among the leftover params too, so that the
    node's `extra` prints it as it was; a missing or ill-kinded field value is a `JaxprTypeError`."""
    values, rest = [], dict(params)
    for name, kind in spec.fields:
        if name not in rest:
            raise JaxprTypeError(f"missing param {name}, a typed field of its term", primitive=spec.primitive)
        v = kind.encode(rest[name])
        if v is None:
            v = kind.nearest(rest[name])
            if v is None:
                raise JaxprTypeError(f"param {name}={rest[name]!r} does not fit its typed field ({kind.name})",
                                     primitive=spec.primitive)
        else:
            del rest[name]
        values.append(v)
    return values, rest
