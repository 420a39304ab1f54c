"""Symbolic evidence: both sides of a scalar elementwise rule in SymPy, proved equal over the reals or
disproved at a point.

    prove(instance) -> Symbolic(status="proved" | "disproved" | "unknown", reason, point, lhs, rhs)

Variables are real symbols carrying the rule's value conditions as assumptions (`positive`, `nonneg` ->
nonnegative, `nonzero`; `above_minus_one` substitutes x = t - 1 with t >= 0; `within_one` and `finite`
add nothing: SymPy's real symbols are finite). `proved`: `simplify(lhs - rhs)` is 0 or `lhs.equals(rhs)`
(for booleans: the two are the same relation after simplification) — equality wherever both sides are
defined (a generic proof: the numeric checks look at the points where one side is undefined).
`disproved`: a point among small candidates (0, ±1, ±2, ±1/2, 3, ±1/3, ±10, respecting the conditions)
where the left side is a real number and the right side is another number or not real, at 50 digits.
Whether a side is a real number at a point follows JAX's semantics, not SymPy's complex one: an operation
outside its real domain gives nan, which propagates (exp(log(-1)) is nan, where SymPy simplifies it to -1),
as the high-precision interpreter evaluates the side (`highprec.run`; SymPy's value alone for a side it
cannot evaluate).
SymPy runs under a time limit (`seconds`, by SIGALRM in the main thread; without a limit elsewhere).
"""

from __future__ import annotations

import itertools
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import sympy as sp

from ir.errors import UnsupportedPrimitive
from rewrites.verify import highprec as hp
from rewrites.verify.instantiate import Instance
from rewrites.verify.sympy_jaxpr import to_sympy

CANDIDATES = [0, 1, -1, 2, -2, sp.Rational(1, 2), sp.Rational(-1, 2), 3, sp.Rational(1, 3), sp.Rational(-1, 3),
              10, -10]
MAX_CANDIDATE_POINTS = 400
DIGITS = 50


@dataclass(frozen=True)
class Symbolic:
    status: str  # proved | disproved | unknown
    reason: str = ""
    point: tuple[tuple[str, str], ...] = ()
    lhs: str = ""
    rhs: str = ""

    def __str__(self) -> str:
        if self.status == "disproved":
            at = ", ".join(f"{k}={v}" for k, v in self.point)
            return f"disproved at {at}: {self.lhs} vs {self.rhs}"
        return self.status + (f" ({self.reason})" if self.reason else "")


class SympyTimeout(BaseException):
    """Raised by the alarm; a BaseException so that SymPy's `except Exception` clauses let it through."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise SympyTimeout

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_ASSUMPTIONS = {"positive": "positive", "nonneg": "nonnegative", "nonzero": "nonzero"}


def symbols(instance: Instance) -> tuple[list, dict]:
    """One SymPy value per input (a symbol or t - 1), and the substitution back to the inputs' symbols."""
    rule = instance.rule
    values, back = [], {}
    for name, aval in zip(instance.names, instance.in_avals, strict=True):
        kinds = {c.kind for c in rule.conditions if c.args[:1] == (name,)}
        if aval.dtype.kind == "b":
            values.append(sp.Symbol(name))
            continue
        assumptions = {_ASSUMPTIONS[k]: True for k in kinds if k in _ASSUMPTIONS}
        assumptions["integer" if aval.dtype.kind in "iu" else "real"] = True
        if "above_minus_one" in kinds and not assumptions.keys() & {"positive", "nonnegative"}:
            t = sp.Symbol(name + "_plus_one", nonnegative=True, real=True)
            values.append(t - 1)
            back[t] = sp.Symbol(name, real=True) + 1
        else:
            values.append(sp.Symbol(name, **assumptions))
    return values, back


def _is_boolean(e) -> bool:
    return isinstance(e, (sp.logic.boolalg.Boolean, sp.core.relational.Relational))


def prove(instance: Instance, seconds: float | None = 5.0) -> Symbolic:
    """Symbolic evidence for a rank-0 float instance."""
    if any(a.shape != () for a in instance.in_avals):
        return Symbolic("unknown", "not a scalar instance")
    values, _ = symbols(instance)
    try:
        with time_limit(seconds):
            [lhs] = to_sympy(instance.lhs, *values)
            [rhs] = to_sympy(instance.rhs, *values)
            if _equal(lhs, rhs):
                return Symbolic("proved")
            found = _counterexample(instance, values, lhs, rhs)
    except UnsupportedPrimitive as err:
        return Symbolic("unknown", f"no SymPy form: {err}")
    except SympyTimeout:
        return Symbolic("unknown", f"SymPy took longer than {seconds:g} s")
    except (TypeError, ValueError, AttributeError, RecursionError, ZeroDivisionError, NotImplementedError) as err:
        return Symbolic("unknown", f"SymPy failed: {type(err).__name__}: {err}")
    if found is not None:
        return found
    return Symbolic("unknown", "SymPy neither simplified the difference to 0 nor found a differing point")


def _equal(lhs, rhs) -> bool:
    if _is_boolean(lhs) or _is_boolean(rhs):
        if not (_is_boolean(lhs) and _is_boolean(rhs)):
            return False
        return lhs == rhs or sp.simplify(sp.Equivalent(lhs, rhs)) is sp.true
    if lhs == rhs:
        return True
    diff = sp.simplify(lhs - rhs)
    if diff == 0:
        return True
    return bool(lhs.equals(rhs))


def _candidate_points(instance: Instance) -> Iterator[tuple]:
    rule = instance.rule
    per_input = []
    for name, aval in zip(instance.names, instance.in_avals, strict=True):
        if aval.dtype.kind == "b":
            per_input.append([sp.true, sp.false])
            continue
        tests = [CONDITION_HOLDS[c.kind] for c in rule.conditions if c.args[:1] == (name,) and c.kind in
                 CONDITION_HOLDS]
        per_input.append([v for v in CANDIDATES if all(t(v) for t in tests)])
    yield from itertools.islice(itertools.product(*per_input), MAX_CANDIDATE_POINTS)


CONDITION_HOLDS = {"positive": lambda v: v > 0, "nonneg": lambda v: v >= 0, "nonzero": lambda v: v != 0,
                   "within_one": lambda v: -1 <= v <= 1, "above_minus_one": lambda v: v >= -1}


def _real_number(v):
    """v as a 50-digit real number, or None when it is not one (complex, infinite, undefined)."""
    if _is_boolean(v):
        return v if v in (sp.true, sp.false) else None
    try:
        n = sp.N(v, DIGITS)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if not n.is_number or n.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or n.is_real is not True:
        return None
    return n


def _jax_real(program, instance: Instance, point) -> bool | None:
    """Whether `program` gives a real number (a finite float, a bool, an int) at `point` under JAX's semantics,
    where a value outside the reals is nan and propagates; None when the high-precision interpreter cannot
    evaluate it."""
    values = [bool(p) if p in (sp.true, sp.false) else float(p) for p in point]
    try:
        value, _ = hp.run(program, values, [a.dtype for a in instance.in_avals], DIGITS, domain=True)
    except UnsupportedPrimitive:
        return None
    return hp.kind(value) not in ("nan", "inf", "-inf", "undef")


def _counterexample(instance: Instance, values, lhs, rhs) -> Symbolic | None:
    free = [v for v in values]
    for point in _candidate_points(instance):
        subs = _substitution(free, point)
        left = _real_number(_subs(lhs, subs))
        if left is None or _jax_real(instance.lhs, instance, point) is False:
            continue
        right = _real_number(_subs(rhs, subs))
        if right is not None and _jax_real(instance.rhs, instance, point) is False:
            right = None
        if right is not None and _same_number(left, right):
            continue
        shown = tuple((name, str(p)) for name, p in zip(instance.names, point, strict=True))
        return Symbolic("disproved", "", shown, _show(left), "not a real number" if right is None else _show(right))
    return None


def _show(n) -> str:
    if _is_boolean(n):
        return str(n)
    rounded = sp.Integer(round(n))
    return str(rounded) if abs(n - rounded) <= sp.Float(10) ** (-(DIGITS // 2)) else str(sp.N(n, 17))


def _substitution(values, point) -> dict:
    subs = {}
    for value, p in zip(values, point, strict=True):
        if isinstance(value, sp.Symbol):
            subs[value] = p
        else:  # t - 1: t = p + 1
            (t,) = value.free_symbols
            subs[t] = p + 1
    return subs


def _subs(expr, subs: dict):
    try:
        return expr.subs(subs)
    except (TypeError, ValueError, ZeroDivisionError):
        return sp.nan


def _same_number(a, b) -> bool:
    if _is_boolean(a) or _is_boolean(b):
        return a == b
    return abs(a - b) <= sp.Float(10) ** (-(DIGITS // 2)) * max(abs(a), abs(b), sp.Float(1))
