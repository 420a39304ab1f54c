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
    one constructor per primitive that is not higher order (the catalogue trait "term", ir/primitives), named
    after it (`add(x, y)`, `reduce_sum(x, axes, out_sharding)`, `gather(x, idx, dimension_numbers, ...)`): the
    operands, then one field per param (`TermSpec.fields`): first the positional ones, the params rules
    compute with (the catalogue's `term_field` params: ints as `i64`/`Vec[i64]`, dtypes and dot_general's
    dimension numbers as Strings), then the others, which rules carry over by name: a required int, ints or
    dtype param typed as those, any other param its printed text (`VALUE_TEXT`: bools, floats with nan and
    -0.0, names, padding pairs, records, shardings; a jaxpr param its printed jaxpr, `JAXPR_TEXT`), with
    `ABSENT` for a param the equation leaves out and a marker for an `OperandDtype` default. A node a rule
    builds gets the catalogue default of every field it does not give (`T`, `default_value`). A field value
    JAX spelled with NumPy ints is held as its plain value in a typed field (`(0, np.int64(1))` prints
    `(0, 1)` after decoding), as spelled in a text field. A variadic primitive holds its operands as one
    `Args` list (`select_n(args)`, `dynamic_slice(args, slice_sizes)`). A multi-result primitive holds its
    operands as one `Args` list too, and its constructor is a `Tup` whose result i is `get(t, i)`
    (`get(sort(args, dimension, is_stable, num_keys), 0)`). An equation with shape operands besides the row's
    own (JAX's dynamic-shape mode) is refused (`UnsupportedPrimitive`);
    `call(prim, extra, args)` for the higher-order primitives that call a body the e-graph does not hold
    (`rewrites.encode.OPAQUE_CALLS`: custom_jvp_call, custom_vjp_call, remat2, composite, ...), read through
    `get`: their params hold Python callables (custom rules, thunks, remat policies) and jaxprs with their
    constants, which no field holds and reads back, so they stay on the Python side, `extra` the key of
    them in `Encoding.extras`;
    one constructor per control-flow primitive (the catalogue trait "control_flow": `scan`, `while`,
    `cond`), `p_scan(args, bodies, length, reverse, num_consts, ...) -> Tup`: its operands as one `Args`
    list, its jaxprs as a `Bodies.cons` list in the order of its jaxpr params (scan's one body, while's
    cond and body, each of cond's branches), then one field per other param, as for the primitives
    above (`CONTROL_SPECS`). Each body is a `Body.of(b, outs)` whose outputs are terms over its own inputs
    `Arr.barg(b, k)`, so rules rewrite inside bodies as anywhere else. The node holds no result types:
    they follow from its bodies' outputs (`rewrites.decode.class_avals`), one source of truth for them.

The e-class analysis facts rules can ask for are egglog functions: `shape_of(x)` (Vec[i64]) and
`dtype_of(x)` (the dtype name); `rewrites.analyses.values` adds sign/zero/finiteness relations.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from egglog import Bool, EGraph, Expr, String, StringLike, Vec, f64Like, function, i64, i64Like, method, relation, var
from egglog.declarations import LitDecl

from ir.errors import JaxprTypeError
from ir.primitives import PRIMITIVES, Primitive, primitives_with
from ir.primitives.schema import OperandDtype
from rewrites import egglog_fast  # noqa: F401  (before any expression is built)
from rewrites.term_fields import (
    ABSENT,
    FIELD_KINDS,
    INTS,
    FieldKind,
    field_kind,
    operand_dtype_marker,
)


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


@dataclass(frozen=True)
class TermSpec:
    """How one primitive is held in the e-graph: its constructor's operands (`arity` of them, or None for a
    variadic or multi-result primitive: one `Args` list of them all), its `results` (a count, None for any
    number: a multi-result constructor gives a `Tup`), its `bodies` (a control-flow primitive's jaxpr params,
    held as one `Bodies` list after its `Args`) and its fields, one per other param: first the `positional`
    ones (the catalogue's `term_field` params, which rules compute with and pass by position), then the
    others, in schema order."""

    primitive: str
    arity: int | None
    fields: tuple[tuple[str, FieldKind], ...] = ()
    positional: int = 0
    results: int | None = 1
    bodies: tuple[str, ...] = ()  # a control-flow primitive's jaxpr params, held as its `Bodies` list

    @property
    def multiple_results(self) -> bool:
        return self.results != 1

    @property
    def control_flow(self) -> bool:
        return bool(self.bodies)

    def kind_of(self, name: str) -> FieldKind:
        return dict(self.fields)[name]

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)

    @property
    def positional_fields(self) -> tuple[tuple[str, FieldKind], ...]:
        """The fields rules compute with and pass by position (the catalogue's `term_field` params)."""
        return self.fields[:self.positional]

    @property
    def keyword_fields(self) -> tuple[tuple[str, FieldKind], ...]:
        """The fields rules pass by name: the params rules carry over rather than compute."""
        return self.fields[self.positional:]

    @property
    def variable_fields(self) -> tuple[tuple[str, FieldKind], ...]:
        """The fields a text rule may bind to a param variable: the positional ones and the keyword fields
        without a default (concatenate's `dimension`, stack's `axis`), which a rule must give; the other
        keyword fields are carried over with `extra=`."""
        return self.positional_fields + tuple((name, kind) for name, kind in self.keyword_fields
                                              if not has_default(self, name))

    @property
    def children(self) -> int:
        """The constructor's term children: its operands, or the one `Args` list of a variadic primitive (and
        the `Bodies` list of a control-flow one)."""
        return 2 if self.bodies else 1 if self.arity is None else self.arity

    @property
    def constructor_name(self) -> str:
        return "p_" + self.primitive.replace("-", "_")


def _spec(row: Primitive) -> TermSpec:
    """The term spec of a catalogue row with the trait "term": its operand count, result count and fields."""
    if row.higher_order:
        raise ValueError(f"primitive {row.name!r} has the trait 'term' but runs its jaxprs as programs")
    if any(p.kind == "jaxprs" for p in row.params.values()):
        raise ValueError(f"primitive {row.name!r} has the trait 'term' but a tuple-of-jaxprs param")
    arity = row.operands if isinstance(row.operands, int) and not row.multiple_results else None
    results = row.results if isinstance(row.results, int) else None
    typed = [(name, FIELD_KINDS[p.kind]) for name, p in row.typed_fields()]
    others = [(name, field_kind(p)) for name, p in row.params.items() if not p.term_field]
    return TermSpec(row.name, arity, tuple(typed + others), len(typed), results)


def _control_spec(row: Primitive) -> TermSpec:
    """The term spec of a control-flow row: its jaxpr params are its bodies, every other param a field."""
    bodies = tuple(name for name, p in row.params.items() if p.kind in ("jaxpr", "jaxprs"))
    fields = [(name, field_kind(p)) for name, p in row.params.items() if name not in bodies]
    return TermSpec(row.name, None, tuple(fields), 0, None, bodies)


def _build_specs() -> dict[str, TermSpec]:
    return {name: _spec(PRIMITIVES[name]) for name in sorted(primitives_with("term"))}


SPECS: dict[str, TermSpec] = _build_specs()
# The control-flow primitives' specs, apart from `SPECS`: rules neither match nor build them, and no AD or
# batching rule table has a row for them (transforms/ad/control.py and transforms/batching/control.py build
# them from the equations).
CONTROL_SPECS: dict[str, TermSpec] = {name: _control_spec(PRIMITIVES[name])
                                      for name in sorted(primitives_with("control_flow"))}


def body_params(spec: TermSpec, params: dict, bodies: Sequence) -> dict:
    """A control-flow equation's params: the fields' `params` and its jaxpr params from `bodies`, in the
    order of its `Bodies` list (a tuple-of-jaxprs param takes the rest: cond's branches)."""
    out, k = dict(params), 0
    for name in spec.bodies:
        if PRIMITIVES[spec.primitive].params[name].kind == "jaxprs":
            out[name], k = tuple(bodies[k:]), len(bodies)
        else:
            out[name], k = bodies[k], k + 1
    return out


def _make_constructor(spec: TermSpec):
    """An egglog constructor `p_<prim>(operands..., fields...) -> Arr` (`p_<prim>(args, ...)` for a variadic
    primitive, `p_<prim>(args, ...) -> Tup` for a multi-result one, `p_<prim>(args, bodies, ...) -> Tup` for
    a control-flow one)."""
    if spec.arity is None:
        params = [inspect.Parameter("args", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Args)]
        if spec.bodies:
            params.append(inspect.Parameter("bodies", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Bodies))
    else:
        params = [inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Arr)
                  for i in range(spec.arity)]
    params += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind.egg_type)
               for name, kind in spec.fields]

    def stub(*args): ...

    result = Tup if spec.multiple_results else Arr
    stub.__signature__ = inspect.Signature(params, return_annotation=result)
    stub.__annotations__ = {p.name: p.annotation for p in params} | {"return": result}
    stub.__name__ = stub.__qualname__ = spec.constructor_name
    return function(egg_fn=spec.constructor_name)(stub)


CONSTRUCTORS: dict[str, Any] = {name: _make_constructor(spec) for name, spec in SPECS.items()}
CONTROL_CONSTRUCTORS: dict[str, Any] = {name: _make_constructor(spec) for name, spec in CONTROL_SPECS.items()}
BY_EGG_NAME: dict[str, TermSpec] = {spec.constructor_name: spec for spec in SPECS.values()}
# Every constructor's spec by its egglog name, the control-flow ones too (for reading e-graph tables).
ALL_BY_EGG_NAME: dict[str, TermSpec] = {**BY_EGG_NAME, **{s.constructor_name: s for s in CONTROL_SPECS.values()}}


def field_value(spec: TermSpec, name: str, value: Any, in_avals: Sequence | None = None) -> Any:
    """The value field `name` holds for the param value `value`: `ABSENT` for a param left out (its default
    if JAX's printer hides it at its default), the operand-dtype marker for the dtype its `OperandDtype`
    default resolves to against `in_avals`. A value that does not fit is a `JaxprTypeError` naming
    primitive and param."""
    kind = spec.kind_of(name)
    param = PRIMITIVES[spec.primitive].params[name]
    if value is LEFT_OUT and param.has_default and not param.printed_when_default:
        value = param.default  # JAX's printer hides it at its default: left out, it prints as the default does
    if value is LEFT_OUT:
        if kind.textual and not param.required:
            return ABSENT
        raise JaxprTypeError(f"missing param {name}, a field of its term", primitive=spec.primitive)
    if isinstance(param.default, OperandDtype) and in_avals is not None and kind.textual:
        if value is not None and value == param.default_for(in_avals):
            return operand_dtype_marker(param.default.index)
    held = kind.encode(value)
    if held is None:
        held = kind.nearest(value)
    if held is None:
        raise JaxprTypeError(f"param {name}={value!r} does not fit its field ({kind.name})", primitive=spec.primitive)
    return held


LEFT_OUT: Any = object()


def encode_fields(spec: TermSpec, params: dict, in_avals: Sequence | None = None) -> list[Any]:
    """Every field's value for an equation's `params` (`field_value`); a param the primitive does not have is
    a `JaxprTypeError`."""
    unknown = sorted(set(params) - set(spec.field_names))
    if unknown:
        raise JaxprTypeError(f"param {unknown[0]} is not a param of {spec.primitive} (a term with the fields "
                             f"{', '.join(spec.field_names) or 'none'})", primitive=spec.primitive)
    return [field_value(spec, name, params.get(name, LEFT_OUT), in_avals) for name in spec.field_names]


def has_default(spec: TermSpec, name: str) -> bool:
    """Whether a node a rule builds without giving field `name` gets a value for it (`default_value`); a field
    without one (concatenate's `dimension`, stack's `axis`) must be given or carried from a matched node."""
    param = PRIMITIVES[spec.primitive].params[name]
    return (isinstance(param.default, OperandDtype) or param.has_default
            or (not param.required and spec.kind_of(name).textual))


def default_value(spec: TermSpec, name: str) -> Any:
    """The value field `name` holds in a node a rule builds without giving it: the param's catalogue default
    (`operand_dtype_marker` for an `OperandDtype`), `ABSENT` for a param without a default JAX may leave
    out; a param with neither must be given (`TypeError`; `has_default` asks first)."""
    param = PRIMITIVES[spec.primitive].params[name]
    if not has_default(spec, name):
        raise TypeError(f"{spec.primitive} has no default for its param {name!r}: a rule building it must give it")
    if isinstance(param.default, OperandDtype):
        return operand_dtype_marker(param.default.index)
    if param.has_default:
        return field_value(spec, name, param.default)
    return ABSENT


def decode_fields(spec: TermSpec, values: Sequence, in_avals: Sequence) -> dict:
    """The params a node's field values stand for (the inverse of `encode_fields`)."""
    params = {}
    for (name, kind), v in zip(spec.fields, values, strict=True):
        if v == ABSENT and kind.textual:
            continue
        default = PRIMITIVES[spec.primitive].params[name].default
        if isinstance(default, OperandDtype) and v == operand_dtype_marker(default.index):
            params[name] = in_avals[default.index].dtype
            continue
        params[name] = kind.decode(v)
    return params


def _egg_value(kind: FieldKind, v: Any):
    """A field's Python value as an egglog value of its sort (what a constructor takes)."""
    if kind is INTS and isinstance(v, tuple):
        return Vec[i64](*(i64(d) for d in v)) if v else Vec[i64].empty()
    return v


class _Ops:
    """`T.add(x, y)`, `T.reduce_sum(x, axes)`, `T.gather(x, i, **params)`, `get(T.sort(xs, **own), 0)`: the
    constructors, named as their egglog names without `p_`, for writing rules. The positional fields (the
    params rules compute with) come after the operands; every other field is a keyword, and a field not
    given gets its default (`default_value`), as a node a rule builds gets the primitive's default params."""

    def __getattr__(self, name: str):
        spec = BY_EGG_NAME.get("p_" + name)
        if spec is None:
            raise AttributeError(f"no term constructor for primitive {name!r}")
        prim, n = spec.primitive, spec.children + spec.positional
        ctor = CONSTRUCTORS[prim]
        defaults: dict[str, Any] = {}  # field -> its default as an egglog value, made on first use

        def default(name: str, kind: FieldKind):
            if name not in defaults:
                defaults[name] = _egg_value(kind, default_value(spec, name))
            return defaults[name]

        def build(*args, **fields: Any):
            if len(args) != n:
                what = "one Args list" if spec.arity is None else f"{spec.arity} operands"
                raise TypeError(f"{prim} takes {what} and {spec.positional} positional fields, got {len(args)} "
                                "arguments")
            positional = spec.field_names[:spec.positional]
            unknown = sorted(set(fields) - set(spec.field_names[spec.positional:]))
            if unknown:
                raise TypeError(f"{prim} has no keyword field {unknown[0]!r} (its keyword fields: "
                                f"{', '.join(spec.field_names[spec.positional:]) or 'none'}; positional: "
                                f"{', '.join(positional) or 'none'})")
            rest = [fields[name] if name in fields else default(name, kind) for name, kind in spec.keyword_fields]
            return ctor(*args, *rest)

        setattr(self, name, build)
        return build

    def of(self, prim: str):
        """The builder of the primitive named as the catalogue names it (`T.of("scatter-add")`)."""
        return getattr(self, prim.replace("-", "_"))

    @staticmethod
    @cache
    def params(prim: str, name: str) -> dict[str, Any]:
        """Pattern variables for `prim`'s keyword fields (`{field: var}`), named `name_<field>`: a rule matches a
        node's params with them and passes them on, `T.reduce_sum(y, a, **T.params("reduce_sum", "s"))`. Do not
        change the dict: it is shared by every call with these arguments."""
        spec = BY_EGG_NAME.get("p_" + prim.replace("-", "_"))
        if spec is None:
            raise AttributeError(f"no term constructor for primitive {prim!r}")
        return {field: var(f"{name}_{field}", String if kind.textual else kind.egg_type)
                for field, kind in spec.keyword_fields}


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
            output_at(0, x)]
    for spec in SPECS.values():
        fields = [_placeholder(kind) for _, kind in spec.fields]
        operands = [xs] if spec.arity is None else [x] * spec.arity
        uses.append(CONSTRUCTORS[spec.primitive](*operands, *fields))
    for spec in CONTROL_SPECS.values():
        fields = [_placeholder(kind) for _, kind in spec.fields]
        uses.append(get(CONTROL_CONSTRUCTORS[spec.primitive](xs, bodies, *fields), 0))
    return tuple(uses)


def _placeholder(kind: FieldKind):
    return {"int": i64(0), "ints": Vec[i64].empty(), "bool": Bool(False)}.get(kind.name, "")
