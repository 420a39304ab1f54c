"""Properties of `rewrites.engine.optimize` on random programs (`ir.strategies.programs`).

Each named rule set promises what its soundness classes allow (see the design's soundness classes):

    strict   exact rules only: the optimized program's results are bit-identical to the original's on
             every input, special values included (nan compares equal to nan; zeros keep their sign;
             the sign of a nan is not part of IEEE semantics and is not compared)
    default  exact + real + guarded: results agree within a tolerance wherever the original's result
             is finite, on any input (special values included)
    fast     every rule, unsafe ones included: `fast` may change what special values do, those given as
             inputs (inf/nan/signed zero) and those a program makes inside from finite inputs (le-self
             makes le(nan, nan) True where pow(-4.4, -4.4) is nan); so on finite inputs on which the
             program makes no special value, the finite results agree within the tolerance
    all      optimizing the same program twice gives the same text and fingerprint

Every optimized program must also typecheck and keep the original's output types.

A failing property is a real bug (a rule that is false, or in the wrong soundness class): the
failure message lists the rules that fired. Known failures are pinned below as explicit
regression programs marked xfail(strict=True), never by narrowing the strategy.
"""

import numpy as np
from hypothesis import assume, given, settings

from eval import eval_jaxpr
from ir import fingerprint, parse_jaxpr
from ir.strategies import Program, programs
from ir.typecheck import typecheck
from rewrites.engine import optimize
from rewrites.verify.judges import makes_specials_inside
from tests.profile import NIGHTLY

# One optimize call on these programs takes about 0.1-0.3 s (up to ~2 s for the largest), so the
# profile's 100 examples per property would take over a minute for this file. Each property runs
# a fraction of the profile's budget: 2000 in `nightly`; 25 in `ci` (derandomized: the first 25 of the same
# examples every run), about 30 s of CPU in all, where 40 took ~50 s.
OPTIMIZE = settings(max_examples=2 * settings.default.max_examples // 5 if NIGHTLY
                    else max(10, settings.default.max_examples // 4))
DETERMINISM = settings(max_examples=max(5, settings.default.max_examples // 5))

# Tolerances for `default` and `fast`: real rules (reassociation, exp/log identities, ...) change the
# rounding of intermediates. f64: programs may pass through float32 intermediates
# (convert_element_type), whose rounding (~6e-8 relative per operation) then shows in an f64 result,
# so 1e-6 leaves room for a dozen f32 roundings while still catching any rule that is false over the
# reals. f32: ~1.2e-7 per rounding, amplified by cancellation and by up to 12 later operations
# (e.g. exp of a sum), needs a few thousand ulps: 1e-3. The same value serves as the absolute
# tolerance, for results that cancel to near zero (inputs are at most 8 in magnitude).
TOLERANCE = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-3}


def run(closed, args) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [np.asarray(o) for o in eval_jaxpr(closed, *args)]


def optimized(p: Program, rules: str):
    """The optimized program (which must typecheck, print and re-parse, and keep the output types)
    and its report."""
    out, report = optimize(p.closed, rules=rules)
    typecheck(out)
    assert str(parse_jaxpr(str(out))) == str(out)
    assert [str(a) for a in out.out_avals] == [str(a) for a in p.closed.out_avals]
    return out, report


def explain(p: Program, out, report, i: int, ref: np.ndarray, got: np.ndarray) -> str:
    fired = ", ".join(f"{name} ×{n}" for name, n in sorted(report.rule_matches.items()) if n)
    return (f"output {i} differs\n{p!r}\noptimized:\n{out}\n"
            f"original gives  {ref!r}\noptimized gives {got!r}\nrules fired: {fired}")


def same_bits(ref: np.ndarray, got: np.ndarray) -> bool:
    zeros = ref == 0
    return np.array_equal(ref, got, equal_nan=True) and np.array_equal(np.signbit(ref[zeros]), np.signbit(got[zeros]))


def close_where_finite(ref: np.ndarray, got: np.ndarray) -> bool:
    finite = np.isfinite(ref)
    tol = TOLERANCE[ref.dtype]
    return bool(np.all(np.isclose(got[finite], ref[finite], rtol=tol, atol=tol)))


def check(p: Program, rules: str, agree) -> None:
    out, report = optimized(p, rules)
    for i, (ref, got) in enumerate(zip(run(p.closed, p.args), run(out, p.args), strict=True)):
        assert agree(ref, got), explain(p, out, report, i, ref, got)


@OPTIMIZE
@given(programs(special_values=True))
def test_strict_is_bit_identical(p):
    check(p, "strict", same_bits)


@OPTIMIZE
@given(programs(special_values=True))
def test_default_agrees_where_the_original_is_finite(p):
    check(p, "default", close_where_finite)


@OPTIMIZE
@given(programs(special_values=False))
def test_fast_agrees_on_finite_inputs_where_the_original_is_finite(p):
    """`fast` may change what special values do, given or made inside: judged where neither happens."""
    assume(not makes_specials_inside(p.closed, p.args))
    check(p, "fast", close_where_finite)


@DETERMINISM
@given(programs())
def test_optimizing_twice_gives_the_same_program(p):
    first, _ = optimize(p.closed)
    second, _ = optimize(p.closed)
    assert str(first) == str(second)
    assert fingerprint(first) == fingerprint(second)


# --- failures the properties found, pinned as explicit programs ---------------------------------------

def regression(text: str, *args: np.ndarray) -> Program:
    closed = parse_jaxpr(text)
    typecheck(closed)
    return Program(closed, tuple(args))


def test_regression_fast_outputs_sharing_one_literal():
    """Found by this file: one Literal object read twice (decode shares it between two outputs) once
    left the interpreter's plan a slot short."""
    p = regression("{ lambda ; a:f64[]. let b:f64[] = sub a a in (b, b) }", np.array(1.5))
    check(p, "fast", close_where_finite)
