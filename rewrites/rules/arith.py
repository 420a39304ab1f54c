"""Arithmetic identities: units, negation, absolute value and sign, cancellation.

Classes follow IEEE behaviour: negating, multiplying by ±1 and moving signs through * and / are
exact (the magnitude of a product or quotient does not depend on the signs); results that only differ
in the sign of a zero (x + 0 at x = -0.0, -(x - y) at x = y) are `real`. Integer arithmetic wraps,
which keeps most sign laws exact (they hold modulo 2^n) but not those through division or abs:
rules restricted to floats say so with `floating(x)`.
"""

from egglog import Vec, eq, f64, i64, ne

from rewrites.analyses.values import INF, finite, floating, nonneg, nonzero, not_complex
from rewrites.rule import EXACT, GUARDED, REAL, UNSAFE, RuleBook
from rewrites.rules.common import T, a, b, d, dtype_of, filled, lit, shape_of, sx, sy, x, y, z

R = RuleBook("arith")


def shaped_like(term, operand) -> list:
    """Conditions: `operand` has the shape of `term` (binary ops may broadcast a rank-0 operand)."""
    return [eq(shape_of(term)).to(sx), eq(shape_of(operand)).to(sx)]


# --- units ------------------------------------------------------------------------------------------
R.rw("neg-neg", EXACT, T.neg(T.neg(x)), x, math="-(-x) -> x")
R.rw("mul-one", EXACT, T.mul(x, lit(1.0)), x, math="x*1 -> x")
R.rw("mul-one-left", EXACT, T.mul(lit(1.0), x), x, math="1*x -> x")
R.rw("div-one", EXACT, T.div(x, lit(1.0)), x, math="x/1 -> x")
R.rw("add-zero", REAL, T.add(x, lit(0.0)), x, math="x+0 -> x (x=-0.0 gives +0.0 on the left)")
R.rw("zero-add", REAL, T.add(lit(0.0), x), x, math="0+x -> x (x=-0.0 gives +0.0 on the left)")
R.rw("add-neg-zero", EXACT, T.add(x, T.neg(lit(0.0))), x, *floating(x),
     math="x+(-0) -> x (IEEE: -0+-0 = -0, +0+-0 = +0, nan and inf come back; -0.0 is held as neg(0.0))")
R.rw("neg-zero-add", EXACT, T.add(T.neg(lit(0.0)), x), x, *floating(x), math="(-0)+x -> x (as add-neg-zero)")
R.rw("sub-zero", EXACT, T.sub(x, lit(0.0)), x, math="x-0 -> x")
R.rw("zero-sub", REAL, T.sub(lit(0.0), x), T.neg(x), math="0-x -> -x (x=+0.0 gives +0.0 on the left)")
R.rw("mul-ones", EXACT, T.mul(x, T.broadcast_in_dim(lit(1.0), sy, Vec[i64].empty())), x,
     eq(shape_of(x)).to(sy), math="x*ones -> x (ones of x's shape)")
R.rw("div-ones", EXACT, T.div(x, T.broadcast_in_dim(lit(1.0), sy, Vec[i64].empty())), x,
     eq(shape_of(x)).to(sy), math="x/ones -> x (ones of x's shape)")
R.rw("add-zeros", REAL, T.add(x, T.broadcast_in_dim(lit(0.0), sy, Vec[i64].empty())), x,
     eq(shape_of(x)).to(sy), math="x+zeros -> x (zeros of x's shape; x=-0.0 gives +0.0 on the left)")
R.rw("mul-zero", UNSAFE, T.mul(x, lit(0.0)), filled(0.0), eq(shape_of(x)).to(sx),
     math="x*0 -> 0 (inf*0 is nan)")
R.rw("sub-self", REAL, T.sub(x, x), T.mul(x, lit(0.0)), eq(dtype_of(x)).to(d),
     math="x-x -> x*0 (real: both nan at ±inf and nan; x<0 gives -0.0 on the right)")

# --- negation ---------------------------------------------------------------------------------------
R.rw("mul-neg-one", EXACT, T.mul(x, lit(-1.0)), T.neg(x), math="x*-1 -> -x")
R.rw("neg-one-mul", EXACT, T.mul(lit(-1.0), x), T.neg(x), math="-1*x -> -x")
R.rw("div-neg-one", EXACT, T.div(x, lit(-1.0)), T.neg(x), math="x/-1 -> -x (INT_MIN/-1 = INT_MIN = -INT_MIN)")
R.rw("neg-mul-neg", EXACT, T.mul(T.neg(x), T.neg(y)), T.mul(x, y), math="(-x)*(-y) -> x*y")
R.rw("neg-mul", EXACT, T.mul(T.neg(x), y), T.neg(T.mul(x, y)), eq(dtype_of(x)).to(d), *not_complex(),
     math="(-x)*y -> -(x*y) (mod 2^n for ints; not complex: a zero part's sign differs)")
R.rw("neg-div-neg", EXACT, T.div(T.neg(x), T.neg(y)), T.div(x, y), *floating(x),
     math="(-x)/(-y) -> x/y (floats: integer division of -INT_MIN wraps)")
R.rw("neg-div", EXACT, T.div(T.neg(x), y), T.neg(T.div(x, y)), *floating(x), math="(-x)/y -> -(x/y) (floats)")
R.rw("div-neg", EXACT, T.div(x, T.neg(y)), T.neg(T.div(x, y)), *floating(x), math="x/(-y) -> -(x/y) (floats)")
R.rw("sub-neg", EXACT, T.sub(x, T.neg(y)), T.add(x, y), math="x-(-y) -> x+y (IEEE: x-y is x+(-y))")
R.rw("add-neg", EXACT, T.add(x, T.neg(y)), T.sub(x, y), math="x+(-y) -> x-y")
R.rw("neg-add", EXACT, T.add(T.neg(x), y), T.sub(y, x), math="(-x)+y -> y-x")
R.rw("neg-sub", REAL, T.neg(T.sub(x, y)), T.sub(y, x), math="-(x-y) -> y-x (x=y gives -0.0 on the left)")

# --- abs and sign -----------------------------------------------------------------------------------
R.rw("abs-abs", EXACT, T.abs(T.abs(x)), T.abs(x), math="||x|| -> |x|")
R.rw("abs-neg", EXACT, T.abs(T.neg(x)), T.abs(x), math="|-x| -> |x| (|-INT_MIN| = |INT_MIN|)")
R.rw("abs-mul", EXACT, T.abs(T.mul(x, y)), T.mul(T.abs(x), T.abs(y)), *floating(x),
     math="|x*y| -> |x|*|y| (floats: a wrapped integer product is not)")
R.rw("abs-div", EXACT, T.abs(T.div(x, y)), T.div(T.abs(x), T.abs(y)), *floating(x),
     math="|x/y| -> |x|/|y| (floats)")
R.rw("abs-mul-merge", EXACT, T.mul(T.abs(x), T.abs(y)), T.abs(T.mul(x, y)), *floating(x),
     math="|x|*|y| -> |x*y| (abs-mul read backwards: one abs instead of two)")
R.rw("abs-div-merge", EXACT, T.div(T.abs(x), T.abs(y)), T.abs(T.div(x, y)), *floating(x),
     math="|x|/|y| -> |x/y| (abs-div read backwards)")
R.rw("abs-mul-self", EXACT, T.mul(T.abs(x), T.abs(x)), T.mul(x, x), *floating(x),
     math="|x|*|x| -> x*x (floats)")
R.rw("abs-square", EXACT, T.abs(T.mul(x, x)), T.mul(x, x), *floating(x), math="|x*x| -> x*x (floats)")
R.rw("abs-of-nonneg", GUARDED, T.abs(x), x, nonneg(x),
     math="|x| -> x for x >= 0 (x=-0.0 gives +0.0 on the left; nan stays nan)")
R.rw("sign-sign", EXACT, T.sign(T.sign(x)), T.sign(x), eq(dtype_of(x)).to(d), *not_complex(),
     math="sign(sign x) -> sign x (sign(±0) = ±0, sign(nan) = nan; not complex: z/|z| rounds)")
R.rw("sign-neg", EXACT, T.sign(T.neg(x)), T.neg(T.sign(x)), *floating(x),
     math="sign(-x) -> -sign(x) (floats: sign(-INT_MIN) = -1)")
R.rw("abs-times-sign", EXACT, T.mul(T.abs(x), T.sign(x)), x, *floating(x),
     math="|x|*sign(x) -> x (floats: |-0|*sign(-0) = 0*-0 = -0; inf*1; nan)")

# --- cancellation -----------------------------------------------------------------------------------
R.rw("div-self", GUARDED, T.div(x, x), filled(1.0), eq(shape_of(x)).to(sx), eq(dtype_of(x)).to(d),
     nonzero(x), finite(x), math="x/x -> 1 for finite x != 0 (0/0 and inf/inf are nan)")
R.rw("div-self-any", UNSAFE, T.div(x, x), filled(1.0), eq(shape_of(x)).to(sx), eq(dtype_of(x)).to(d),
     *floating(x), math="x/x -> 1 (0/0, inf/inf and nan/nan are nan)")
R.rw("div-abs", UNSAFE, T.div(x, T.abs(x)), T.sign(x), *floating(x), *not_complex(),
     math="x/|x| -> sign x (0/0 and inf/inf are nan, sign gives 0 and ±1)")
R.rw("div-abs-finite", GUARDED, T.div(x, T.abs(x)), T.sign(x), *floating(x), *not_complex(), nonzero(x), finite(x),
     math="x/|x| -> sign x for finite x != 0")
R.rw("zero-div", GUARDED, T.div(lit(0.0), x), filled(0.0), eq(shape_of(x)).to(sx), nonzero(x), finite(x),
     math="0/x -> 0 for finite x != 0 (0/0 is nan; 0/(-2) = -0.0)")
R.rw("mul-div-cancel", GUARDED, T.div(T.mul(x, y), y), x, *shaped_like(T.div(T.mul(x, y), y), x),
     *floating(x), nonzero(y), finite(y), math="(x*y)/y -> x for finite y != 0 (floats; x*y may overflow)")
R.rw("div-mul-cancel", GUARDED, T.mul(T.div(x, y), y), x, *shaped_like(T.mul(T.div(x, y), y), x),
     *floating(x), nonzero(y), finite(y), math="(x/y)*y -> x for finite y != 0 (floats: 7/2*2 = 6)")
R.rw("add-sub-cancel", GUARDED, T.sub(T.add(x, y), y), x, *shaped_like(T.sub(T.add(x, y), y), x), finite(y),
     math="(x+y)-y -> x for finite y (y=inf gives nan; x=-0.0 gives +0.0 on the left)")
R.rw("sub-add-cancel", GUARDED, T.add(T.sub(x, y), y), x, *shaped_like(T.add(T.sub(x, y), y), x), finite(y),
     math="(x-y)+y -> x for finite y")
R.rw("add-sub-cancel-any", UNSAFE, T.sub(T.add(x, y), y), x, *shaped_like(T.sub(T.add(x, y), y), x),
     math="(x+y)-y -> x (y = inf gives nan on the left)")
R.rw("sub-add-cancel-any", UNSAFE, T.add(T.sub(x, y), y), x, *shaped_like(T.add(T.sub(x, y), y), x),
     math="(x-y)+y -> x (y = inf gives nan on the left)")
R.rw("mul-recip", REAL, T.mul(x, T.div(lit(1.0), y)), T.div(x, y), *floating(x),
     math="x*(1/y) -> x/y (floats; y=0: x*inf vs x/0, y=inf: x*0 vs x/inf agree)")
R.rw("div-div-right", REAL, T.div(x, T.div(y, z)), T.div(T.mul(x, z), y), *floating(x),
     math="x/(y/z) -> (x*z)/y (floats; x*z may overflow)")
R.rw("div-div", REAL, T.div(T.div(x, y), z), T.div(x, T.mul(y, z)), *floating(x),
     math="(x/y)/z -> x/(y*z) (floats; y*z may overflow or underflow; y=0, z=inf: nan on both sides)")

# --- like terms ---------------------------------------------------------------------------------------
# Literal coefficients of one sign: with opposite signs, x = inf gives inf - inf = nan on the left but ±inf
# (or 0*inf = nan where they cancel) on the right. The new coefficient is a sum of literals that `fold` folds.
R.rw("add-scaled-self", REAL, T.add(x, T.mul(lit(a), x)), T.mul(T.add(lit(1.0), lit(a)), x), *floating(x),
     a > 0.0, a < INF, math="x + a*x -> (1+a)*x for a literal a > 0 (a <= 0 at x = inf: nan vs ±inf)")
R.rw("add-scaled-scaled", REAL, T.add(T.mul(lit(a), x), T.mul(lit(b), x)), T.mul(T.add(lit(a), lit(b)), x),
     *floating(x), a * b > 0.0, abs(a) < INF, abs(b) < INF,
     math="a*x + b*x -> (a+b)*x for finite literals a, b of one sign (opposite signs at x = inf: nan vs ±inf)")

# --- quotients of scaled values, literal signs ------------------------------------------------------------
R.rw("div-scaled", REAL, T.div(T.mul(lit(a), x), T.mul(lit(b), y)), T.mul(T.div(lit(a), lit(b)), T.div(x, y)),
     *floating(x), ne(b).to(f64(0.0)), abs(a) < INF, abs(b) < INF,
     math="(a*x)/(b*y) -> (a/b)*(x/y) for finite literals a, b != 0 (a/b rounds; a = 0: 0/0 = nan on both sides)")
R.rw("sub-literal-as-add", EXACT, T.sub(x, lit(a)), T.add(x, lit(-a)), *floating(x), ne(a).to(f64(0.0)),
     math="x - c -> x + (-c) for a float literal c != 0 (IEEE subtraction adds the negation)")
R.rw("add-literal-as-sub", EXACT, T.add(x, lit(a)), T.sub(x, lit(-a)), *floating(x), ne(a).to(f64(0.0)),
     math="x + c -> x - (-c) for a float literal c != 0 (IEEE subtraction adds the negation)")
