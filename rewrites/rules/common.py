"""Pattern variables and literal helpers shared by the rule modules."""

from egglog import String, Vec, f64, i64, var, vars_

from rewrites.analyses.shapes import float_dtype
from rewrites.terms import Arr, T, dtype_of, shape_of  # noqa: F401  (re-exported for rule modules)

x, y, z, w = vars_("x y z w", Arr)
e = var("e", Arr)  # the matched term in rules written with `rule(eq(e).to(...))`
d = var("d", String)  # a dtype name
sx, sy = vars_("sx sy", Vec[i64])  # shapes
a, b = vars_("a b", f64)  # literal values


def lit(value: float, dtype=d) -> Arr:
    """A scalar literal of `value`: in a pattern it matches that value in any dtype (bound to `d`)."""
    return Arr.scalar(value, dtype)


def filled(value: float, dtype=d, shape=sx) -> Arr:
    """An array of `shape` filled with the literal `value` of `dtype` (a literal alone is rank 0)."""
    return T.broadcast_in_dim(lit(value, dtype), shape, Vec[i64].empty())


def is_float(dtype=d):
    """Condition: `dtype` names a float dtype."""
    return float_dtype(dtype)
