"""Shape and dtype facts for terms built by rules (encoded terms get theirs from the Jaxpr).

Each rule sets `shape_of`/`dtype_of` of a node from its operands' facts and its typed params, as the
primitive's shape rule in `ir/shapes` does. A node outside these cases (n-ary ops with size-1
broadcasting, reductions with unsorted axes, `dot_general` forms not in `DOT_FORMS`, ranks above
`MAX_RANK`, a dtype given by a param that is not a positional field) gets no facts, so rules that ask for
its shape do not fire on it: that is never wrong.

Primitives that share a shape rule share its egglog rules through a relation, which keeps the rules
to register and match few: one rule per primitive records `unary_operand(e, x)`,
`binary_operands(e, x, y)` or `removes_axes(e, x, axes)`, and a few generic rules derive the shapes.

Index arithmetic runs in the rule's query (a failing primitive there only means no match). egglog has
no loops or conditionals, so rules are generated per rank (or per number of axes) up to `MAX_RANK`,
read Vec entries one by one (`items`), and write comparisons as integer arithmetic (`below(u, v)` is
1 if u < v else 0, from i64 `min`/`max`). `Query` binds intermediate values to variables so that a
value used several times is computed once. Rule modules import these helpers from here.
"""

from __future__ import annotations

import itertools

from egglog import (
    RewriteOrRule,
    String,
    StringLike,
    Vec,
    eq,
    f64,
    function,
    i64,
    ne,
    relation,
    rule,
    set_,
    var,
    vars_,
)

from ir import dtypes as D
from ir.primitives import primitives_with
from ir.shapes.elementwise import NARY, UNARY
from rewrites.rule import EXACT, RuleBook
from rewrites.terms import SPECS, Arr, T, dtype_of, shape_of

R = RuleBook("shapes")
MAX_RANK = 6
MAX_MOVED_RANK = 4  # reductions merged or moved through a transpose: their rules are the largest
EMPTY = Vec[i64].empty()

# Pattern variables (not those of `rewrites.rules.common`: the rule modules import this module).
e, x, y = vars_("e x y", Arr)
a, d = var("a", f64), var("d", String)  # a literal's value and dtype
sx, sy, p, out = vars_("sx sy p out", Vec[i64])


# --- index arithmetic, evaluated in queries ------------------------------------------------------


def ints(*values: int) -> Vec[i64]:
    """A literal Vec[i64]."""
    return Vec[i64](*(i64(v) for v in values)) if values else EMPTY


def vec(entries: list) -> Vec[i64]:
    return Vec[i64](*entries) if entries else EMPTY


def items(v: Vec[i64], n: int) -> list[i64]:
    return [v[i] for i in range(n)]


def ascending(values: list) -> list:
    """Facts: the values are strictly increasing."""
    return [u < v for u, v in itertools.pairwise(values)]


def below(u, v) -> i64:
    """1 if u < v else 0 (integers)."""
    return (i64(0) + v - u).max(0).min(1)


class Query:
    """The facts of one rule's query; `let` binds a computed value to a fresh variable."""

    _count = itertools.count()

    def __init__(self, *facts):
        self.facts = list(facts)

    def let(self, value, sort=i64):
        v = var(f"q{next(Query._count)}", sort)
        self.facts.append(eq(v).to(value))
        return v

    def sort_distinct(self, values: list) -> list:
        """Distinct small non-negative integers in ascending order."""
        if len(values) < 2:
            return list(values)
        return self.set_bits(sum((i64(1) << v for v in values[1:]), i64(1) << values[0]), len(values))

    def set_bits(self, mask, count: int) -> list:
        """The positions of the `count` set bits of `mask`, ascending: the lowest set bit is `m & -m`."""
        out = []
        for _ in range(count):
            mask = self.let(mask)
            low = self.let(mask & (i64(0) - mask))
            out.append(low.log2())
            mask = mask - low
        return out

    def kept_axis(self, removed: list, i) -> i64:
        """The i-th axis (from 0) not in `removed` (distinct, ascending)."""
        t = i64(0) + i
        for r in removed:
            t = self.let(t + below(r, t + 1))
        return t


def without(v: Vec[i64], axes: list) -> Vec[i64]:
    """`v` without the entries at `axes` (ascending)."""
    for axis in reversed(axes):
        v = v.remove(axis)
    return v


# --- rank 0 literals ------------------------------------------------------------------------------

R.rule("scalar-aval", EXACT, [Arr.scalar(a, d)],
       [set_(shape_of(Arr.scalar(a, d))).to(EMPTY), set_(dtype_of(Arr.scalar(a, d))).to(d)],
       math="a literal is rank 0, of its own dtype")


# --- dtype tables -----------------------------------------------------------------------------------


@function(egg_fn="exact_integers")
def exact_integers(dtype: StringLike) -> i64:
    """Every integer in [0, exact_integers(dtype)] is exactly a `dtype` value (and an f64 literal)."""


float_dtype = relation("float_dtype", String)

_EXACT_INTEGERS = {dt.name: min(2 ** 53, 2 ** (dt.bits - (dt.kind == "i")) - 1 if dt.kind in "iu"
                                else 2 ** (D.finfo(dt).nmant + 1))
                   for dt in D.ALL if dt.kind in "iuf"}
R.rule("dtype-tables", EXACT, [],
       [*(set_(exact_integers(String(name))).to(i64(limit)) for name, limit in _EXACT_INTEGERS.items()),
        *(float_dtype(String(dt.name)) for dt in D.ALL if dt.kind == "f")],
       math="integers each dtype holds exactly (up to 2^53, an f64 literal's limit); the float dtypes")


# --- elementwise ----------------------------------------------------------------------------------

unary_operand = relation("unary_operand", Arr, Arr)  # e = f(x), f elementwise
binary_operands = relation("binary_operands", Arr, Arr, Arr)  # e = f(x, y), f elementwise
dtype_from = relation("dtype_from", Arr, Arr)  # e has the dtype of x

UNARY_PRIMS: tuple[str, ...] = tuple(sorted(primitives_with("elementwise", "term", operands=1)))
BINARY_PRIMS: tuple[str, ...] = tuple(sorted(primitives_with("elementwise", "term", operands=2)))


def field_vars(prim: str) -> list:
    """Pattern variables for the positional fields of `prim` (the same variables on every call)."""
    spec = SPECS[prim]
    return [var(f"f_{name}", kind.egg_type) for name, kind in spec.fields[:spec.positional]]


def unary(prim: str, operand: Arr, params: str = "s") -> Arr:
    """`prim(operand)` with its fields as pattern variables (the keyword ones named `params`)."""
    return getattr(T, prim)(operand, *field_vars(prim), **T.params(prim, params))


def binary(prim: str, lhs: Arr, rhs: Arr, params: str = "s") -> Arr:
    return getattr(T, prim)(lhs, rhs, **T.params(prim, params))


def _dtype_rules(term, operand, accepted, result) -> tuple[list, list[RewriteOrRule]]:
    """How `e = term` gets its dtype from `operand`'s by the dtype map `result` over the `accepted`
    dtypes: (actions for the rule that matches `term`, further rules). The map is one constant if all
    dtypes map to one, else its changed entries plus "otherwise the operand's dtype"."""
    dts = [dt for dt in D.ALL if accepted is None or dt.kind in accepted or dt.short in accepted]
    results = {result(dt).name for dt in dts}
    if len(results) == 1 and len(dts) > 1:
        return [set_(dtype_of(e)).to(results.pop())], []
    changes = {dt.name: result(dt).name for dt in dts if result(dt) != dt}
    if not changes:
        return [dtype_from(e, operand)], []
    eggs = [rule(eq(e).to(term), eq(dtype_of(operand)).to(String(old))).then(set_(dtype_of(e)).to(new))
            for old, new in changes.items()]
    unchanged = [ne(d).to(String(old)) for old in changes]
    same_dtype = rule(eq(e).to(term), eq(dtype_of(operand)).to(d), *unchanged).then(dtype_from(e, operand))
    return [], [*eggs, same_dtype]


def _unary_eggs() -> list[RewriteOrRule]:
    eggs = [rule(unary_operand(e, x), eq(shape_of(x)).to(sx)).then(set_(shape_of(e)).to(sx))]
    for prim in UNARY_PRIMS:
        term = unary(prim, x)
        if prim == "convert_element_type":
            [new_dtype] = field_vars(prim)
            actions, more = [set_(dtype_of(e)).to(new_dtype)], []
        elif prim in UNARY:
            actions, more = _dtype_rules(term, x, *UNARY[prim])
        else:  # round, reduce_precision, integer_pow
            actions, more = [dtype_from(e, x)], []
        eggs += [rule(eq(e).to(term)).then(unary_operand(e, x), *actions), *more]
    return eggs


def _binary_eggs() -> list[RewriteOrRule]:
    eggs = [
        rule(binary_operands(e, x, y), eq(shape_of(x)).to(sx), eq(shape_of(y)).to(sx)).then(
            set_(shape_of(e)).to(sx)),
        rule(binary_operands(e, x, y), eq(shape_of(x)).to(EMPTY), eq(shape_of(y)).to(sy)).then(
            set_(shape_of(e)).to(sy)),
        rule(binary_operands(e, x, y), eq(shape_of(x)).to(sx), eq(shape_of(y)).to(EMPTY)).then(
            set_(shape_of(e)).to(sx)),
    ]
    for prim in BINARY_PRIMS:
        term = binary(prim, x, y)
        if prim in NARY:
            actions, more = _dtype_rules(term, x, NARY[prim][0][0], NARY[prim][1])
        else:  # pow and add_any: the (base's) dtype
            actions, more = [dtype_from(e, x)], []
        eggs += [rule(eq(e).to(term)).then(binary_operands(e, x, y), *actions), *more]
    return eggs


R.rule("dtype-from", EXACT, [dtype_from(e, x), eq(dtype_of(x)).to(d)], [set_(dtype_of(e)).to(d)],
       math="a node recorded as keeping its operand's dtype has that dtype")
R.family("elementwise-unary-aval", EXACT, _unary_eggs(),
       math="f(x) has x's shape; its dtype by the primitive's dtype rule")
R.family("elementwise-binary-aval", EXACT, _binary_eggs(),
       math="f(x, y) has the shape of x = y, or of the other operand when one is rank 0")


# --- shape ops ------------------------------------------------------------------------------------

_sizes, _dims = vars_("sizes dims", Vec[i64])


def _transpose_eggs() -> list[RewriteOrRule]:
    term = T.transpose(x, p)
    eggs = [rule(eq(e).to(term)).then(dtype_from(e, x))]
    for n in range(MAX_RANK + 1):
        eggs.append(rule(eq(e).to(term), eq(p.length()).to(i64(n)), eq(shape_of(x)).to(sx),
                         eq(out).to(vec([sx[i] for i in items(p, n)]))).then(set_(shape_of(e)).to(out)))
    return eggs


R.family("transpose-aval", EXACT, _transpose_eggs(), math="transpose(x, p).shape[i] = x.shape[p[i]]")
R.rule("reshape-aval", EXACT, [eq(e).to(T.reshape(x, _sizes, **T.params("reshape", "s")))],
       [set_(shape_of(e)).to(_sizes), dtype_from(e, x)], math="reshape(x, sizes) has shape sizes")
R.rule("broadcast-aval", EXACT, [eq(e).to(T.broadcast_in_dim(x, _sizes, _dims, **T.params("broadcast_in_dim", "s")))],
       [set_(shape_of(e)).to(_sizes), dtype_from(e, x)],
       math="broadcast_in_dim(x, shape, dims) has the shape param")

REDUCTIONS = primitives_with("reduction")  # reduce_sum, reduce_max, ...: drop `axes`, keep the dtype
removes_axes = relation("removes_axes", Arr, Arr, Vec[i64])  # e is x without the dims `axes`, same dtype


def _removing_eggs() -> list[RewriteOrRule]:
    eggs = [rule(eq(e).to(getattr(T, prim)(x, p, **T.params(prim, "s")))).then(removes_axes(e, x, p), dtype_from(e, x))
            for prim in (*REDUCTIONS, "squeeze")]
    for k in range(MAX_RANK + 1):
        axes = items(p, k)
        eggs.append(rule(removes_axes(e, x, p), eq(p.length()).to(i64(k)), *ascending(axes),
                         eq(shape_of(x)).to(sx), eq(out).to(without(sx, axes))).then(
            set_(shape_of(e)).to(out)))
    return eggs


R.family("removed-axes-aval", EXACT, _removing_eggs(),
       math="reduce_op(x, axes) and squeeze(x, axes) drop the axes (ascending) from x's shape")


# --- axis bookkeeping for rules that merge or move reductions ---------------------------------------
# Filled for the pairs that occur: `merged_axes(a1, a2)` for removals of removals, and for a removal
# of a transpose `transpose(x, p)`: the axes of x it removes (`axes_through(p, axes)`, ascending) and
# the permutation left on the kept axes (`perm_after_removal(p, axes)`).


@function(egg_fn="merged_axes")
def merged_axes(first: Vec[i64], then: Vec[i64]) -> Vec[i64]: ...


@function(egg_fn="axes_through")
def axes_through(perm: Vec[i64], axes: Vec[i64]) -> Vec[i64]: ...


@function(egg_fn="perm_after_removal")
def perm_after_removal(perm: Vec[i64], axes: Vec[i64]) -> Vec[i64]: ...


_inner = var("inner", Arr)
_first, _then, p2 = vars_("first then p2", Vec[i64])


def _merge_eggs() -> list[RewriteOrRule]:
    eggs = []
    for k1 in range(1, MAX_MOVED_RANK):
        for k2 in range(1, MAX_MOVED_RANK - k1 + 1):
            first, then = items(_first, k1), items(_then, k2)
            q = Query(removes_axes(e, _inner, _then), removes_axes(_inner, x, _first),
                      eq(_first.length()).to(i64(k1)), eq(_then.length()).to(i64(k2)),
                      *ascending(first), *ascending(then))
            merged = q.sort_distinct(first + [q.kept_axis(first, a2) for a2 in then])
            eggs.append(rule(*q.facts, eq(out).to(vec(merged))).then(
                set_(merged_axes(_first, _then)).to(out)))
    return eggs


def _through_transpose_eggs() -> list[RewriteOrRule]:
    eggs = []
    for n in range(1, MAX_MOVED_RANK + 1):
        for k in range(1, n + 1):
            axes = items(_then, k)
            q = Query(removes_axes(e, _inner, _then), eq(_inner).to(T.transpose(x, p)),
                      eq(p.length()).to(i64(n)), eq(_then.length()).to(i64(k)))
            moved = [q.let(p[axis]) for axis in axes]
            through = q.sort_distinct(moved)
            kept = q.set_bits((i64(1) << n) - 1 - sum((i64(1) << axis for axis in axes), i64(0)), n - k)
            sources = [q.let(p[axis]) for axis in kept]
            perm = [src - sum((below(m, src) for m in moved), i64(0)) for src in sources]
            eggs.append(rule(*q.facts, eq(out).to(vec(through)), eq(p2).to(vec(perm))).then(
                set_(axes_through(p, _then)).to(out), set_(perm_after_removal(p, _then)).to(p2)))
    return eggs


R.family("merged-axes", EXACT, _merge_eggs(),
       math="removing axes a2 after axes a1 removes a1 and the a2-th kept axes (sorted)")
R.family("axes-through-transpose", EXACT, _through_transpose_eggs(),
       math="removing axes A of transpose(x, p) removes p[A] of x, then permutes the kept ones")


# --- dot_general ------------------------------------------------------------------------------------


def dimension_numbers(lc=(), rc=(), lb=(), rb=()) -> str:
    """dot_general's dimension_numbers as the term field holds them, e.g. `(([1], [0]), ([], []))`."""
    return repr(((list(lc), list(rc)), (list(lb), list(rb))))


MATMUL = dimension_numbers([1], [0])  # A @ B and A @ v
VECMAT = dimension_numbers([0], [0])  # v @ B, and A^T @ B


def _dot_form(nl: int, nr: int, lc: int, rc: int, batch: bool) -> tuple[str, int, int, list[tuple[int, int]]]:
    """(dimension numbers, lhs rank, rhs rank, the (operand, axis) of each output dim)."""
    first = int(batch)
    picks = [(0, 0)] * batch + [(0, i) for i in range(first, nl) if i != lc] + [
        (1, j) for j in range(first, nr) if j != rc]
    return dimension_numbers([lc], [rc], [0] * batch, [0] * batch), nl, nr, picks


# Every one-axis contraction of rank-1/2 operands, and jnp.matmul's forms for a rank-3 lhs.
DOT_FORMS = [_dot_form(nl, nr, lc, rc, False) for nl in (1, 2) for nr in (1, 2)
             for lc in range(nl) for rc in range(nr)]
DOT_FORMS += [_dot_form(3, 3, 2, 1, True), _dot_form(3, 2, 2, 0, False), _dot_form(3, 1, 2, 0, False)]
_dn = var("dn", String)


def _dot_eggs() -> list[RewriteOrRule]:
    eggs = [rule(eq(e).to(T.dot_general(x, y, _dn))).then(dtype_from(e, x))]
    for dn, nl, nr, picks in DOT_FORMS:
        shapes = (sx, sy)
        eggs.append(rule(eq(e).to(T.dot_general(x, y, dn, **T.params("dot_general", "s"))), eq(shape_of(x)).to(sx),
                         eq(shape_of(y)).to(sy), eq(sx.length()).to(i64(nl)), eq(sy.length()).to(i64(nr)),
                         eq(out).to(vec([shapes[side][axis] for side, axis in picks]))).then(
            set_(shape_of(e)).to(out)))
    return eggs


R.family("dot-general-aval", EXACT, _dot_eggs(),
       math="dot_general: batch dims, then lhs free dims, then rhs free dims; the lhs dtype when "
            "preferred_element_type is the default")
