"""Value facts (sign, zero, range, finiteness) that guarded rules check.

Each fact is a relation on e-classes and speaks about every element of the array, for every value of
the program's inputs (±inf and nan included), with the program evaluated exactly over the extended
reals: rounding is ignored as it is for `real` rules (exp(-1000) is positive although it underflows to
0.0, 1e308*10 is finite although it overflows).

    positive(x)         x > 0, or x is nan
    nonneg(x)           x >= 0 (-0.0 included), or x is nan
    nonzero(x)          x != 0, or x is nan
    within_one(x)       -1 <= x <= 1, or x is nan
    above_minus_one(x)  x >= -1, or x is nan
    finite(x)           x is a finite number: never ±inf, never nan

The sign and range facts let nan through, so that they hold for programs over inputs (x*x >= 0 holds
for every x but nan, and no input is known not to be nan); a guarded rule that uses them is checked
for a nan in the guarded operand (its math says why both sides then agree). `finite` is strict: it is
the guard of rules whose sides differ on nan or inf (`x/x -> 1`), and comes from literals and from
operations on finite operands.

Facts are derived only on float dtypes (integer arithmetic wraps: abs(INT_MIN) < 0; complex values have
no sign), except through operations that pick one of their operands' values (broadcast, select, max).
Each rule's math says why the fact holds for every input satisfying its premises.
"""

from egglog import String, StringLike, eq, f64, function, i64, ne, relation, rule, set_, var, vars_

from ir import dtypes as D
from rewrites.analyses.shapes import float_dtype
from rewrites.rule import EXACT, Rule, RuleBook
from rewrites.terms import SPECS, Arr, T, args_list, dtype_of

R = RuleBook("values")

positive = relation("positive", Arr)
nonneg = relation("nonneg", Arr)
nonzero = relation("nonzero", Arr)
within_one = relation("within_one", Arr)
above_minus_one = relation("above_minus_one", Arr)
finite = relation("finite", Arr)
SIGN_FACTS = (positive, nonneg, nonzero, within_one, above_minus_one)
FACTS = (*SIGN_FACTS, finite)

# e has only values x has (a copy, broadcast, reshape, ...): every fact of x is one of e.
same_values = relation("same_values", Arr, Arr)
# each element of e is the element of x or of y (select, max, min; nan where an operand is nan)
chooses = relation("chooses", Arr, Arr, Arr)

# Pattern variables (not those of `rewrites.rules.common`: the rule modules import this module).
e, x, y, p = vars_("e x y p", Arr)
a = var("a", f64)
d, s = vars_("d s", String)
n = var("n", i64)
INF = f64(float("inf"))


def floating(term: Arr, dtype=d) -> list:
    """Conditions: `term` has a float dtype (bound to `dtype`)."""
    return [eq(dtype_of(term)).to(dtype), float_dtype(dtype)]


def complex_dtype(dtype=d) -> list:
    """Conditions: the dtype name is a complex one."""
    return [ne(dtype.replace("complex", "")).to(dtype)]


def not_complex(dtype=d) -> list:
    return [eq(dtype.replace("complex", "")).to(dtype)]


def any_params(prim: str, *operands: Arr) -> Arr:
    """`prim(operands)` with its fields as fresh pattern variables."""
    spec = SPECS[prim]
    positional = [var(f"v_{prim}_{name}", kind.egg_type) for name, kind in spec.fields[:spec.positional]]
    return getattr(T, prim)(*operands, *positional, **T.params(prim, f"v_{prim}"))


def select_n(pred: Arr, *cases: Arr) -> Arr:
    return T.select_n(args_list([pred, *cases]), **T.params("select_n", "s"))


def _family(name: str, eggs: list, math: str) -> Rule:
    """One named rule made of several egglog rules (one per primitive, per fact, ...)."""
    r = Rule(name, R.category, EXACT, math, tuple(eggs))
    R.rules.append(r)
    return r


def _law(name: str, prims: tuple[str, ...], premises, fact, math: str, unary: bool = True) -> Rule:
    """`fact(e)` for e = prim(x) (or prim(x, y)), any params, of a float dtype when the `premises` hold."""
    eggs = [rule(eq(e).to(_term(prim, x) if unary else any_params(prim, x, y)), *floating(e), *premises)
            .then(fact(e))
            for prim in prims]
    return _family(name, eggs, math)


def _term(prim: str, operand: Arr) -> Arr:
    """prim(operand), any params; integer_pow's exponent bound to `n`."""
    return T.integer_pow(operand, n) if prim == "integer_pow" else any_params(prim, operand)


# --- dtype tables ---------------------------------------------------------------------------------


@function(egg_fn="exact_low", merge=lambda old, new: old)
def exact_low(dtype: StringLike) -> f64:
    """With `exact_high`: every integer in [exact_low, exact_high] is exactly a value of the dtype and
    of f64 (|n| < 2^53), so f64 arithmetic on such integers is exact."""


@function(egg_fn="exact_high", merge=lambda old, new: old)
def exact_high(dtype: StringLike) -> f64: ...


def _exact_range(dt: D.DType) -> tuple[float, float]:
    below_2_53 = 2 ** 53 - 1
    if dt.is_float:
        top = min(2 ** (D.finfo(dt).nmant + 1), below_2_53)
        return -top, top
    info = D.iinfo(dt)
    return max(int(info.min), -below_2_53), min(int(info.max), below_2_53)


_RANGES = {dt.name: _exact_range(dt) for dt in D.ALL if dt.kind in "iuf"}
R.rule("exact-integer-range", EXACT, [],
       [action for name, (low, high) in _RANGES.items()
        for action in (set_(exact_low(String(name))).to(f64(float(low))),
                       set_(exact_high(String(name))).to(f64(float(high))))],
       math="integers each int and float dtype holds exactly, within f64's exact integers (|n| < 2^53)")


@function(egg_fn="exact_reciprocal", merge=lambda old, new: old)
def exact_reciprocal(c: f64) -> f64:
    """1/c for c = ±2^k, 1 <= |k| <= 14: both are normal numbers of every float dtype (float16's
    normal range is [2^-14, 65504]), so x/c and x*(1/c) round the same exact value."""


R.rule("power-of-two-reciprocals", EXACT, [],
       [set_(exact_reciprocal(f64(sign * 2.0 ** k))).to(f64(sign * 2.0 ** -k))
        for k in range(-14, 15) if k for sign in (1.0, -1.0)],
       math="1/(±2^k) = ±2^-k exactly")


def _holds_all(narrow: D.DType, wide: D.DType) -> bool:
    """Every value of `narrow` is exactly a value of `wide` (nan, ±inf and -0.0 included)."""
    if narrow == wide or wide.kind not in "biuf" or narrow.kind not in "biuf":
        return False
    if narrow.is_bool:
        return not wide.is_bool
    if wide.is_float:
        fw = D.finfo(wide)
        if narrow.is_float:
            fn = D.finfo(narrow)
            return fw.nmant >= fn.nmant and fw.maxexp >= fn.maxexp and fw.minexp <= fn.minexp
        info = D.iinfo(narrow)
        return max(-int(info.min), int(info.max)) <= 2 ** (fw.nmant + 1)
    if narrow.is_float or wide.is_bool:
        return False
    n, w = D.iinfo(narrow), D.iinfo(wide)
    return int(w.min) <= int(n.min) and int(n.max) <= int(w.max)


holds_all = relation("holds_all", String, String)
R.rule("lossless-conversions", EXACT, [],
       [holds_all(String(n.name), String(w.name)) for n in D.ALL for w in D.ALL if _holds_all(n, w)],
       math="dtype pairs (narrow, wide): converting narrow to wide and back is the identity")

# --- literals -------------------------------------------------------------------------------------
_LIT = Arr.scalar(a, d)
R.rule("literal-positive", EXACT, [_LIT, a > 0.0], [positive(_LIT)], math="a literal a > 0")
R.rule("literal-nonneg", EXACT, [_LIT, a >= 0.0], [nonneg(_LIT)], math="a literal a >= 0")
R.rule("literal-nonzero", EXACT, [_LIT, ne(a).to(f64(0.0))], [nonzero(_LIT)], math="a literal a != 0")
R.rule("literal-within-one", EXACT, [_LIT, a >= -1.0, a <= 1.0], [within_one(_LIT)],
       math="a literal -1 <= a <= 1")
R.rule("literal-above-minus-one", EXACT, [_LIT, a >= -1.0], [above_minus_one(_LIT)], math="a literal a >= -1")
R.rule("literal-finite", EXACT, [_LIT, a < INF, a > -INF], [finite(_LIT)],
       math="a literal other than ±inf (literals are never nan)")

# --- implications ---------------------------------------------------------------------------------
R.rule("positive-nonneg", EXACT, [positive(x)], [nonneg(x)], math="x > 0 => x >= 0")
R.rule("positive-nonzero", EXACT, [positive(x)], [nonzero(x)], math="x > 0 => x != 0")
R.rule("nonneg-above-minus-one", EXACT, [nonneg(x)], [above_minus_one(x)], math="x >= 0 => x >= -1")
R.rule("within-one-above-minus-one", EXACT, [within_one(x)], [above_minus_one(x)],
       math="|x| <= 1 => x >= -1")

# --- operations that copy or choose values ----------------------------------------------------------
_COPIES = ("broadcast_in_dim", "reshape", "transpose", "squeeze", "rev", "slice", "copy", "copy_p",
           "stop_gradient")
_family("copies-values", [rule(eq(e).to(any_params(prim, x))).then(same_values(e, x)) for prim in _COPIES],
        math="broadcast, reshape, transpose, squeeze, rev, slice and copies hold only values of x")
_family("copies-keep-facts", [rule(same_values(e, x), fact(x)).then(fact(e)) for fact in FACTS],
        math="an array holding only values of x has every fact of x")
_family("chooses-values", [rule(eq(e).to(select_n(p, x, y))).then(chooses(e, x, y)),
                           rule(eq(e).to(any_params("max", x, y))).then(chooses(e, x, y)),
                           rule(eq(e).to(any_params("min", x, y))).then(chooses(e, x, y))],
        math="select_n(p, x, y), max(x, y) and min(x, y) pick x's or y's element (nan if one is nan)")
_family("choices-keep-facts", [rule(chooses(e, x, y), fact(x), fact(y)).then(fact(e)) for fact in FACTS],
        math="picking elements of x and y keeps the facts both have")
R.rule("select-finite", EXACT, [eq(e).to(select_n(any_params("is_finite", x), y, x)), finite(y)], [finite(e)],
       math="where(is_finite(x), x, y) is finite for finite y (x is picked only where it is finite)")
_family("max-keeps-lower-bound",
        [rule(eq(e).to(any_params("max", *operands)), fact(x)).then(fact(e))
         for fact in (positive, nonneg, above_minus_one) for operands in ((x, y), (y, x))],
        math="max(x, y) >= x: a lower bound of either operand bounds the max (nan propagates)")
_family("convert-keeps-signs",
        [rule(eq(e).to(T.convert_element_type(x, d, **T.params("convert_element_type", "s"))), float_dtype(d),
              fact(x)).then(fact(e))
         for fact in SIGN_FACTS],
        math="converting to a float dtype rounds to nearest: it keeps signs and the bounds ±1 (tiny "
             "values may underflow to 0, a rounding)")
_family("reduce-sum-nonneg", [rule(eq(e).to(any_params("reduce_sum", x)), *floating(e), fact(x)).then(fact(e))
                              for fact in (nonneg, finite)],
        math="a sum of values >= 0 is >= 0 (an empty sum is 0); a sum of finite values is finite")

# --- exp, log and powers --------------------------------------------------------------------------
_law("exp-nonneg", ("exp", "exp2"), [], nonneg, math="exp(x) >= 0 (exp(-inf) = 0, exp(nan) = nan)")
_law("exp-positive", ("exp", "exp2"), [finite(x)], positive, math="exp(x) > 0 for x > -inf")
_law("exp-positive-of-bounded", ("exp", "exp2"), [above_minus_one(x)], positive,
     math="exp(x) >= exp(-1) > 0 for x >= -1")
_law("exp-finite", ("exp", "exp2"), [finite(x)], finite, math="exp of a finite x is finite")
_law("expm1-above-minus-one", ("expm1",), [], above_minus_one, math="expm1(x) >= -1 (expm1(-inf) = -1)")
_law("expm1-log1p-keep-sign", ("expm1", "log1p"), [nonneg(x)], nonneg,
     math="expm1 and log1p are increasing with f(0) = 0 (f(-0) = -0): x >= 0 => f(x) >= 0")
_law("expm1-log1p-keep-positive", ("expm1", "log1p"), [positive(x)], positive,
     math="expm1 and log1p are increasing with f(0) = 0: x > 0 => f(x) > 0")
_law("log-finite", ("log",), [positive(x), finite(x)], finite, math="log of a finite x > 0 is finite")
_law("sqrt-nonneg", ("sqrt",), [], nonneg, math="sqrt(x) >= 0 (sqrt(-0) = -0; nan for x < 0)")
_law("sqrt-positive", ("sqrt",), [positive(x)], positive, math="sqrt(x) > 0 for x > 0")
_law("sqrt-finite", ("sqrt",), [nonneg(x), finite(x)], finite, math="sqrt of a finite x >= 0 is finite")
_law("rsqrt-nonneg", ("rsqrt",), [positive(x)], nonneg, math="1/sqrt(x) >= 0 for x > 0 (0 at +inf)")
_law("rsqrt-positive", ("rsqrt",), [positive(x), finite(x)], positive, math="1/sqrt(x) > 0 for finite x > 0")
_law("rsqrt-finite", ("rsqrt",), [positive(x), finite(x)], finite,
     math="1/sqrt(x) is finite for finite x > 0")
_law("even-power-nonneg", ("integer_pow",), [eq(n % 2).to(i64(0))], nonneg,
     math="x^n >= 0 for even n (x^-2 = +inf at x = ±0)")
_family("power-keeps-facts",
        [rule(eq(e).to(_term("integer_pow", x)), *floating(e), n >= 0, fact(x)).then(fact(e))
         for fact in (positive, nonneg, nonzero, within_one, finite)],
        math="x^n, n >= 0, keeps x > 0, x >= 0, x != 0, |x| <= 1 and finiteness (x^0 = 1)")
_law("square-nonneg", ("square",), [], nonneg, math="x^2 >= 0")
R.rule("mul-self-nonneg", EXACT, [eq(e).to(any_params("mul", x, x)), *floating(e)], [nonneg(e)],
       math="x*x >= 0")

# --- arithmetic -----------------------------------------------------------------------------------
_law("add-positive", ("add",), [positive(x), nonneg(y)], positive, unary=False,
     math="x > 0, y >= 0 => x + y > 0 (neither is -inf)")
_law("add-positive-right", ("add",), [nonneg(x), positive(y)], positive, unary=False,
     math="x >= 0, y > 0 => x + y > 0")
_law("add-nonneg", ("add",), [nonneg(x), nonneg(y)], nonneg, unary=False, math="x, y >= 0 => x + y >= 0")
_law("add-sub-finite", ("add", "sub"), [finite(x), finite(y)], finite, unary=False,
     math="sums and differences of finite numbers are finite")
_law("mul-positive", ("mul",), [positive(x), positive(y)], positive, unary=False,
     math="x, y > 0 => x*y > 0 (neither is 0, so no 0*inf)")
_law("mul-nonneg", ("mul",), [nonneg(x), nonneg(y)], nonneg, unary=False,
     math="x, y >= 0 => x*y >= 0 (0*inf is nan)")
_law("mul-nonzero", ("mul",), [nonzero(x), nonzero(y)], nonzero, unary=False,
     math="x, y != 0 => x*y != 0 (inf*y = ±inf)")
_law("mul-finite", ("mul",), [finite(x), finite(y)], finite, unary=False,
     math="products of finite numbers are finite")
_law("div-positive", ("div",), [positive(x), positive(y), finite(y)], positive, unary=False,
     math="x > 0 and finite y > 0 => x/y > 0 (x/inf would be 0)")
_law("div-nonneg", ("div",), [nonneg(x), positive(y)], nonneg, unary=False,
     math="x >= 0, y > 0 => x/y >= 0 (y = -0.0 is excluded: x/-0.0 = -inf)")
_law("div-nonzero", ("div",), [nonzero(x), finite(y)], nonzero, unary=False,
     math="x != 0 and finite y => x/y != 0 (x/0 = ±inf)")
_law("div-finite", ("div",), [finite(x), finite(y), nonzero(y)], finite, unary=False,
     math="finite x over a finite y != 0 is finite")
_family("neg-keeps-facts", [rule(eq(e).to(any_params("neg", x)), *floating(e), fact(x)).then(fact(e))
                            for fact in (nonzero, within_one, finite)],
        math="-x keeps x != 0, |x| <= 1 and finiteness")
_law("rounding-finite", ("sign", "floor", "ceil", "round"), [finite(x)], finite,
     math="sign, floor, ceil and round of a finite x are finite")
_law("abs-nonneg", ("abs",), [], nonneg, math="|x| >= 0 (float results only: abs(INT_MIN) < 0)")
_law("abs-positive", ("abs",), [nonzero(x)], positive, math="x != 0 => |x| > 0")
_law("abs-finite", ("abs",), [finite(x)], finite, math="|x| of a finite x is finite")

# --- bounded functions ----------------------------------------------------------------------------
_law("bounded-within-one", ("tanh", "sin", "cos", "erf", "logistic"), [], within_one,
     math="tanh, sin, cos, erf and logistic lie in [-1, 1] (nan at ±inf for sin and cos)")
_law("bounded-finite", ("tanh", "sin", "cos", "erf", "logistic", "atan"), [finite(x)], finite,
     math="tanh, sin, cos, erf, logistic and atan of a finite x are finite")
_law("logistic-nonneg", ("logistic",), [], nonneg, math="logistic(x) >= 0 (logistic(-inf) = 0)")
_law("logistic-positive", ("logistic",), [finite(x)], positive, math="logistic(x) > 0 for x > -inf")
_law("logistic-positive-of-bounded", ("logistic",), [above_minus_one(x)], positive,
     math="logistic(x) >= logistic(-1) > 0 for x >= -1")
_law("cosh-positive", ("cosh",), [], positive, math="cosh(x) >= 1 (cosh(±inf) = inf)")
