"""Terms at egglog's command level (`egglog.bindings`), for the builders that add a transform's nodes to an
e-graph (AD's, batching's, control flow's): the same constructors rules write with `rewrites.terms.T`, built
without egglog's Python expression layer, which costs about a millisecond per term (the loader's reason,
`rewrites.encode`).

    B.add(x, y)                                    a primitive of `SPECS`: its operands, then its fields
    B.broadcast_in_dim(x, shape=(2, 3), broadcast_dimensions=(1,))   by name (Python values); a field not
    B.reduce_sum(x, axes=(0,))                     given gets its default (`rewrites.terms.default_value`)
    B.get(B.sort(B.args(xs), dimension=0), k)      result k of a multi-result primitive   B.args(operands)
    B.ints((2, 3))  B.int(k)   B.string(s)   B.vec([...])        literals and containers
    B.function("jvp_of")(...)                       a transform's own constructor, by its egglog name

A term is an `eb.Call` or an `eb.Lit`; Python ints and strs given where a term is expected are taken as
`i64` and `String` literals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from egglog import bindings as eb

from rewrites.encode import egg_bool, egg_int, egg_ints, egg_str
from rewrites.terms import SPECS, TermSpec, default_value, field_value

_SPAN = eb.PanicSpan()
Term = eb.Call | eb.Lit
_int, _string, _ints = egg_int, egg_str, egg_ints


def _term(x: Any) -> Term:
    """`x` as a term: a term as it is, a Python str or int as a literal."""
    if isinstance(x, str):
        return _string(x)
    if isinstance(x, int):
        return _int(x)
    return x


# How each field kind of `rewrites.terms` is written from its Python value (what `FieldKind.encode` gives).
_FIELD = {"int": _int, "ints": _ints, "bool": egg_bool}


def _primitive(spec: TermSpec) -> Callable[..., eb.Call]:
    name, children = spec.constructor_name, spec.children
    fields = [(field, _FIELD.get(kind.name, _string)) for field, kind in spec.fields]
    required = spec.field_names[:spec.positional]

    def build(*operands: Term, **values: Any) -> eb.Call:
        if len(operands) != children or not set(required) <= set(values) or not set(values) <= set(spec.field_names):
            what = "one Args list" if spec.arity is None else f"{children} operands"
            raise TypeError(f"{spec.primitive} takes {what}, the fields {list(required)} and optionally "
                            f"{list(spec.field_names[spec.positional:])}, got {sorted(values)}")
        held = [field_value(spec, field, values[field]) if field in values else default_value(spec, field)
                for field, _ in fields]
        return eb.Call(_SPAN, name, [*operands, *(write(v) for (_, write), v in zip(fields, held, strict=True))])

    build.__name__ = build.__qualname__ = spec.primitive
    return build


class _Builders:
    """`B`: see the module docstring. A primitive's builder is made on first use, then kept."""

    @staticmethod
    def int(v: int) -> eb.Lit:
        return _int(v)

    @staticmethod
    def string(v: str) -> eb.Lit:
        return _string(v)

    @staticmethod
    def bool(v: bool) -> eb.Lit:
        return egg_bool(v)

    @staticmethod
    def ints(v: Sequence[int]) -> eb.Call:
        """A Vec[i64]."""
        return _ints(v)

    @staticmethod
    def vec(items: Sequence[Any]) -> eb.Call:
        """A Vec of `items` (terms, or Python ints and strs)."""
        return eb.Call(_SPAN, "vec-of", [_term(x) for x in items]) if items else eb.Call(_SPAN, "vec-empty", [])

    @staticmethod
    def args(operands: Sequence[Term]) -> eb.Call:
        """An `Args` cons list."""
        out = eb.Call(_SPAN, "nil", [])
        for x in reversed(operands):
            out = eb.Call(_SPAN, "cons", [x, out])
        return out

    @staticmethod
    def get(tup: eb.Call, k: int) -> eb.Call:
        return eb.Call(_SPAN, "get", [tup, _int(k)])

    @staticmethod
    def function(name: str) -> Callable[..., eb.Call]:
        """The builder of the constructor egglog knows as `name` (declared by its module: `jvp_of`, `zero`)."""
        def build(*children: Any) -> eb.Call:
            return eb.Call(_SPAN, name, [_term(x) for x in children])

        return build

    def __getattr__(self, prim: str) -> Callable[..., eb.Call]:
        spec = SPECS.get(prim)
        if spec is None:
            raise AttributeError(f"no term constructor for primitive {prim!r}")
        build = _primitive(spec)
        setattr(self, prim, build)
        return build


B = _Builders()
