"""Rules as plain data: the pattern language the text rule format parses into, built-in rules are dumped
into, and the verifier instantiates into programs.

    Pattern ::= Var(name)                       an array pattern variable (any dtype and shape)
              | Lit(value)                      a scalar literal; it takes the dtype of its context
              | App(prim, params, args)         a primitive applied to patterns; `params` a sorted tuple
                                                of (name, value) pairs, values as JAX prints them
                                                (ints, tuples, dtype names), or Param(name); the pair
                                                ("extra", Param(s)) binds every param not written out
                                                (built-in rules keep a node's other params that way);
                                                params left out are the primitive's defaults
    Param(name)                                 a parameter pattern variable (axes, a permutation, ...)
    Condition(kind, args)                       a side condition on variables (see CONDITION_KINDS)
    PatternRule(name, soundness, lhs, rhs, conditions, both_ways, origin)

Text form (`rewrites.ruletext`): `mul-one  exact  mul(x, 1.0) => x` and
`log-of-product  guarded  log(mul(x, y)) => add(log(x), log(y))  if x > 0, y > 0`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Lit:
    value: float | int | bool


@dataclass(frozen=True)
class Param:
    name: str


@dataclass(frozen=True)
class App:
    prim: str
    params: tuple[tuple[str, Any], ...]
    args: tuple[Pattern, ...]

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)


Pattern = Var | Lit | App

# Side conditions the engine's analyses decide (rewrites.analyses): the sign/range/finiteness relations of
# `values`, dtype classes and shapes of `shapes`. Each kind's args are variable names (shape_eq: two).
CONDITION_KINDS = {
    "positive": "x > 0",
    "nonneg": "x >= 0",
    "nonzero": "x != 0",
    "within_one": "-1 <= x <= 1",
    "above_minus_one": "x >= -1",
    "finite": "finite(x)",
    "float": "float(x): x has a float dtype",
    "integer": "integer(x): x has an integer dtype",
    "not_complex": "real(x): x has no complex dtype",
    "shape_eq": "shape(x) == shape(y)",
    # a condition of a built-in rule that the text format cannot state (a param computed by an egglog
    # function, a literal comparison of constant folding): args = (its egglog text,). Rules holding one
    # are dumped as comments and verified through the engine, never reloaded from text.
    "engine": "a condition only the engine evaluates",
}


@dataclass(frozen=True)
class Condition:
    kind: str
    args: tuple[str, ...]

    def __post_init__(self):
        if self.kind not in CONDITION_KINDS:
            raise ValueError(f"unknown condition kind {self.kind!r}; known: {', '.join(CONDITION_KINDS)}")


@dataclass(frozen=True)
class Origin:
    """Where a rule was written: a text file and line, or a built-in rule module."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file


@dataclass(frozen=True)
class PatternRule:
    name: str
    soundness: str  # exact | real | guarded | unsafe (rewrites.rule.SOUNDNESS)
    lhs: Pattern
    rhs: Pattern
    conditions: tuple[Condition, ...] = ()
    both_ways: bool = False  # `<=>`
    origin: Origin | None = field(default=None, compare=False)
    math: str = ""


def variables(p: Pattern) -> list[str]:
    """The array variables of a pattern, in first-occurrence order."""
    out: list[str] = []

    def walk(q):
        if isinstance(q, Var):
            if q.name not in out:
                out.append(q.name)
        elif isinstance(q, App):
            for a in q.args:
                walk(a)

    walk(p)
    return out


def params(p: Pattern) -> list[str]:
    """The parameter variables of a pattern, in first-occurrence order."""
    out: list[str] = []

    def walk(q):
        if isinstance(q, App):
            for _, v in q.params:
                if isinstance(v, Param) and v.name not in out:
                    out.append(v.name)
            for a in q.args:
                walk(a)

    walk(p)
    return out
