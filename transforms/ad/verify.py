"""The AD rules checked as `eqjax rules verify --set ad` runs them: JVP rules against SymPy, VJP rules
against the JVP rules by the transpose identity.

For every scalar elementwise primitive with a JVP entry (whichever rule module holds it), the
one-equation program f(x[, y, z]) on float64 scalars is differentiated with `jvp_program` (the rules
alone, or with an algebra); the tangent program translated to SymPy (`rewrites.verify.sympy_jaxpr`) must
equal Σ ∂f/∂xᵢ tᵢ, by `sympy.simplify` or, where that does not reduce the difference to 0 (piecewise
forms, special functions), at random rational points of f's domain to 30 digits. The primitives SymPy
cannot check are listed with the reason (`NOT_SYMPY_CHECKED`).

Every primitive with a VJP entry is checked on the oracle's equations of it (`eval.samples`): with the JVP
program J and the VJP program Jᵀ of the one equation, Re⟨v, J u⟩ = Re⟨Jᵀ v, u⟩ for random u and v.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from functools import partial

import numpy as np
import sympy as sp

from eval.interpreter import eval_jaxpr
from ir import dtypes as D
from ir import make_jaxpr
from ir.core import Literal
from ir.errors import EqjaxError, UnsupportedPrimitive
from ir.tracing import bind
from rewrites.options import Options
from rewrites.terms import SPECS
from rewrites.verify import Counterexample, Verdict
from rewrites.verify.sympy_jaxpr import to_sympy
from transforms.ad.build import ELEMENTWISE, float_positions
from transforms.ad.programs import ad_rules, jvp_program, vjp_program
from transforms.ad.rule import JVP, VJP, by_result
from transforms.sample_check import sample_verdicts, verdict_name

RULES_ALONE = Options(rules="none")
PRIMALS = sp.symbols("x0:3", positive=True)
TANGENTS = sp.symbols("t0:3", real=True)

# Params of the checked equation, one program per entry (default: none).
PARAMS = {
    "integer_pow": ({"y": 3}, {"y": -2}, {"y": 1}, {"y": 0}),
    "convert_element_type": ({"new_dtype": D.float64, "sharding": None, "weak_type": False},),
    "reduce_precision": ({"exponent_bits": 11, "mantissa_bits": 52},),
}
# Where f is real and smooth (the points are drawn there; the symbols are positive): lower, upper.
DOMAIN = {"acosh": (sp.Rational(11, 10), sp.Integer(3))}
DEFAULT_DOMAIN = (sp.Rational(1, 10), sp.Rational(9, 10))
# Points must also satisfy: clamp's bounds in order (JAX's clamp JVP assumes lo <= hi).
VALID = {"clamp": lambda lo, x, hi: lo < hi}

# Elementwise primitives whose JVP SymPy does not check, and why.
NOT_SYMPY_CHECKED = {
    "real": "takes a complex operand",
    "imag": "takes a complex operand",
    "conj": "gives a complex result",
    "complex": "gives a complex result",
    "select_n": "its predicate is a boolean or an integer, not a float",
    "rem": "SymPy leaves the derivative of Mod unevaluated",
    "igamma": "its JVP uses igamma_grad_a, which has no SymPy form",
    "igammac": "its JVP uses igamma_grad_a, which has no SymPy form",
    "random_gamma_grad": "has no SymPy form",
    "igamma_grad_a": "has no SymPy form",
    "nextafter": "has no SymPy form",
    "zeta": "has no derivative in JAX",
}
PIECEWISE = (sp.Piecewise, sp.Heaviside, sp.Max, sp.Min, sp.Abs, sp.sign)


def arity(prim: str) -> int:
    spec = SPECS.get(prim)
    return spec.arity if spec is not None and spec.arity is not None else 3


def _wrt(prim: str) -> list[int]:
    """The operands that get a tangent: those with a JVP entry (all, for a whole-equation JVP)."""
    slots = JVP[prim]
    return list(range(arity(prim))) if by_result(slots) else sorted(int(s) for s in slots)


def sympy_problem(prim: str, params: dict, options: Options) -> tuple[sp.Expr, sp.Expr]:
    """(the JVP program's tangent, Σ ∂f/∂xᵢ tᵢ) as SymPy expressions; raises UnsupportedPrimitive
    (or the shape rule's error) where the function or its JVP program has no SymPy form."""
    x = np.asarray(0.5)
    closed = make_jaxpr(lambda *xs: bind(prim, *xs, **params))(*[x] * arity(prim))
    xs = PRIMALS[:arity(prim)]
    [f] = to_sympy(closed, *xs)
    wrt = _wrt(prim)
    ts = TANGENTS[:len(wrt)]
    program, _ = jvp_program(closed, wrt, options)
    [_, tangent] = to_sympy(program, *xs, *ts)
    expected = sum(sp.diff(f, xs[i]) * t for i, t in zip(wrt, ts, strict=True))
    if expected.has(sp.Derivative):
        raise UnsupportedPrimitive(prim, "a derivative SymPy evaluates", "transforms/ad/verify.py")
    return tangent, expected


def checked_primitives() -> list[str]:
    ad_rules()  # imports every rule module, filling the JVP registry
    return sorted(p for p in JVP if p in ELEMENTWISE and p not in NOT_SYMPY_CHECKED)


def _points(prim: str, seed: int):
    """Random rational points of f's domain (primals) with random rational tangents."""
    rng = random.Random(seed)
    low, high = DOMAIN.get(prim, DEFAULT_DOMAIN)
    valid = VALID.get(prim, lambda *xs: True)
    xs = PRIMALS[:arity(prim)]
    while True:
        point = {x: low + (high - low) * sp.Rational(rng.randint(1, 999), 1000) for x in xs}
        if valid(*point.values()):
            yield point | {t: sp.Rational(rng.randint(-999, 999), 250) for t in TANGENTS}


def disagreement(prim: str, got: sp.Expr, want: sp.Expr, seed: int) -> dict | None:
    """None when `simplify` proves got = want or (always, for piecewise forms, where simplify is slow and
    rarely succeeds) they agree at 5 random points to 25 digits; else the point where they differ."""
    difference = got - want
    if not difference.has(*PIECEWISE) and sp.simplify(difference) == 0:
        return None
    for point, _ in zip(_points(prim, seed), range(5), strict=False):
        d, w = sp.N(difference.subs(point), 30), sp.N(want.subs(point), 30)
        if abs(d) > 1e-25 * max(1, abs(w)):
            return {"point": point, "jvp": got, "sympy": want}
    return None


def verify_jvp_rules(rules: str = "none", names: Collection[str] = ()) -> list[Verdict]:
    """One verdict per checked primitive's JVP rules (named `jvp-<prim>`), every param variant."""
    out = []
    for prim in checked_primitives():
        name = verdict_name("jvp", prim)
        if names and name not in names:
            continue
        try:
            found = None
            for variant, params in enumerate(PARAMS.get(prim, ({},))):
                found = found or disagreement(prim, *sympy_problem(prim, params, Options(rules=rules)), variant)
        except EqjaxError as e:
            out.append(Verdict(name, "exact", "unknown", "unknown", "-", "unknown", reason=str(e)))
            continue
        if found is None:
            out.append(Verdict(name, "exact", "exact", "proved", "-", "ok"))
        else:
            cex = Counterexample("real", "float64", tuple((str(k), str(v)) for k, v in found["point"].items()),
                                 str(found["jvp"]), str(found["sympy"]), "JVP program vs SymPy's derivative")
            out.append(Verdict(name, "exact", "unsound", "disproved", "-", "unsound", cex,
                               "the JVP program is not the derivative"))
    return out


def random_like(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    if np.iscomplexobj(x):
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    return rng.standard_normal(x.shape).astype(x.dtype)


def _inner(a, b) -> complex:
    return complex(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128)))


def transpose_sides(closed, args, jvp_eval, vjp_eval, seed: int = 0, wrt=None) -> tuple[float, float, float]:
    """(Re⟨v, J u⟩, Re⟨Jᵀ v, u⟩, a scale for the tolerance) for random u and v, with ⟨a, b⟩ = Σ a·b (no
    conjugation: JAX's convention). The real part is what defines the transpose of maps linear only over
    the reals (real, imag, conj, complex abs); for random complex u and v it still determines Jᵀ.
    `jvp_eval(closed, args, u)` gives J u (float outputs), `vjp_eval(closed, args, v)` gives Jᵀ v; both
    differentiate in the inputs `wrt` (default: the float inputs)."""
    rng = np.random.default_rng(seed + 1)
    wrt = float_positions(closed.jaxpr.invars) if wrt is None else wrt
    u = [random_like(rng, np.asarray(args[i])) for i in wrt]
    ju = jvp_eval(closed, args, u)
    v = [random_like(rng, np.asarray(x)) for x in ju]
    jtv = vjp_eval(closed, args, v)
    lhs = sum((_inner(a, b) for a, b in zip(v, ju, strict=True)), 0j).real
    rhs = sum((_inner(a, b) for a, b in zip(jtv, u, strict=True)), 0j).real
    return lhs, rhs, max(1.0, abs(lhs), sum(float(np.sum(np.abs(a))) for a in ju))


def program_jvp(closed, args, tangents, wrt=None, options: Options = RULES_ALONE) -> list:
    """Output tangents (float outputs) for `tangents` (one per input in `wrt`, default the float inputs)."""
    wrt = float_positions(closed.jaxpr.invars) if wrt is None else wrt
    program, _ = jvp_program(closed, wrt, options)
    return eval_jaxpr(program, *args, *tangents, check=True)[len(closed.jaxpr.outvars):]


def program_vjp(closed, args, cts, wrt=None, options: Options = RULES_ALONE) -> list:
    """Cotangents of the inputs in `wrt` (default the float inputs) for `cts` (one per float output)."""
    wrt = float_positions(closed.jaxpr.invars) if wrt is None else wrt
    program, _ = vjp_program(closed, wrt, seed="inputs", cotangent_outputs=float_positions(closed.jaxpr.outvars),
                             options=options)
    return eval_jaxpr(program, *args, *cts, check=True)


def _differentiated(sample) -> list[int]:
    """The sample's float operands the primitive has a derivative in (polygamma's order m has none)."""
    slots = JVP.get(sample.closed.eqns[0].primitive, {})
    floats = float_positions(sample.closed.jaxpr.invars)
    if by_result(slots):
        return floats
    operand = [i for i, x in enumerate(sample.closed.eqns[0].invars) if not isinstance(x, Literal)]
    return [i for i in floats if str(operand[i]) in slots]


def _applies(sample) -> bool:
    return bool(_differentiated(sample)) and bool(float_positions(sample.closed.jaxpr.outvars))


def _rtol(sample) -> float:
    """Rounding of the narrowest float type involved (reduce_precision's target format included): the
    JVP and VJP of a rounding op are linear only up to it."""
    eqn = sample.closed.eqns[0]
    bits = [np.finfo(np.dtype(a.dtype.numpy)).nmant for a in [*sample.closed.in_avals, *sample.closed.out_avals]
            if a.dtype.kind in "fc"]
    bits += [eqn.params["mantissa_bits"]] if eqn.primitive == "reduce_precision" else []
    return max(1e-9, 32 * 2.0 ** -min(bits))


def _transpose_problem(sample) -> str | None:
    wrt = _differentiated(sample)
    lhs, rhs, scale = transpose_sides(sample.closed, list(sample.args), partial(program_jvp, wrt=wrt),
                                      partial(program_vjp, wrt=wrt), wrt=wrt)
    finite = np.isfinite(lhs) and np.isfinite(rhs)
    return None if finite and abs(lhs - rhs) <= _rtol(sample) * scale or not finite and lhs == rhs else (
        f"<v, J u> = {lhs!r} but <J^T v, u> = {rhs!r}")


def verify_vjp_rules(per_primitive: int = 2, names: Collection[str] = ()) -> list[Verdict]:
    """One verdict per primitive with VJP entries (named `vjp-<prim>`), on oracle equation samples."""
    ad_rules()
    return sample_verdicts("vjp", VJP, _transpose_problem, "the JVP rule, by the transpose identity",
                           per_primitive, applies=_applies, names=names)
