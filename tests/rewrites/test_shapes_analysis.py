"""The shape analysis: facts for rule-built terms against the IR's shape rules, the axis tables against
NumPy, and no facts where the analysis cannot know them."""

from __future__ import annotations

import ast
import itertools

import numpy as np
import pytest
from egglog import String, set_

from ir import dtypes as D
from ir.core import ShapedArray
from ir.primitives import abstract_eval
from ir.shapes.elementwise import NARY, UNARY
from rewrites.analyses import shapes
from rewrites.analyses.shapes import (
    BINARY_PRIMS,
    DOT_FORMS,
    MAX_MOVED_RANK,
    REDUCTIONS,
    UNARY_PRIMS,
    axes_through,
    ints,
    merged_axes,
    perm_after_removal,
)
from rewrites.engine import Limits, Report, fresh_egraph, saturate
from rewrites.terms import Arr, T, dtype_of, shape_of

SIZES = (2, 3, 4, 5, 6, 7)  # distinct sizes: a wrong permutation of dims shows in the shape


class Analysed:
    """Terms over inputs of given avals, after the analysis rules ran to saturation; read the facts
    inside the `with` block (the e-graph is the engine's, reused across tests through push/pop)."""

    def __init__(self, in_avals: list[ShapedArray], terms: list):
        self.in_avals, self.terms = in_avals, terms

    def __enter__(self):
        self._context = fresh_egraph([])
        prep = self._context.__enter__()
        self.egraph = prep.egraph
        for k, aval in enumerate(self.in_avals):
            self.egraph.register(set_(shape_of(Arr.inp(k))).to(ints(*aval.shape)),
                                 set_(dtype_of(Arr.inp(k))).to(String(aval.dtype.name)))
        self.egraph.register(*self.terms)
        saturate(prep, 0, Limits(iterations=1), Report([]))
        return self

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)

    def value(self, fact):
        try:
            got = self.egraph.extract(fact).value
        except Exception:  # egglog reports a missing function value as an error
            return None
        return tuple(v.value for v in got) if isinstance(got, tuple) else got

    def aval(self, term) -> tuple | None:
        shape, dtype = self.value(shape_of(term)), self.value(dtype_of(term))
        return None if shape is None or dtype is None else (shape, dtype)


def expected(prim: str, avals: list[ShapedArray], **params) -> tuple:
    [out] = abstract_eval(prim, avals, params)
    return out.shape, out.dtype.name


def accepted_dtypes(accepted) -> list[D.DType]:
    return [dt for dt in D.ALL if dt.kind not in ("key", "float0")
            and (accepted is None or dt.kind in accepted or dt.short in accepted)]


# --- elementwise ----------------------------------------------------------------------------------

_UNARY_PARAMS = {"integer_pow": {"y": 2}, "round": {"rounding_method": 0},
                 "convert_element_type": {"new_dtype": D.float32, "weak_type": False},
                 "reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}
_UNARY_FIELDS = {"integer_pow": (2,), "convert_element_type": ("float32",)}
_UNARY_KEYWORDS = {"reduce_precision": {"exponent_bits": 5, "mantissa_bits": 10}}  # no defaults: a rule gives them
_FLOAT, _NUM = UNARY["floor"][0], UNARY["neg"][0]
_UNARY_ACCEPTED = {"round": _FLOAT, "reduce_precision": _FLOAT, "integer_pow": _NUM,
                   "convert_element_type": _NUM}


def _unary_cases():
    for prim in UNARY_PRIMS:
        accepted = UNARY[prim][0] if prim in UNARY else _UNARY_ACCEPTED[prim]
        for dt in accepted_dtypes(accepted):
            yield prim, dt


def test_unary_facts_follow_the_shape_rules():
    cases = list(_unary_cases())
    dts = sorted({dt for _, dt in cases}, key=D.ALL.index)
    avals = [ShapedArray((2, 3), dt) for dt in dts]
    terms = [getattr(T, prim)(Arr.inp(dts.index(dt)), *_UNARY_FIELDS.get(prim, ()), **_UNARY_KEYWORDS.get(prim, {}))
             for prim, dt in cases]
    with Analysed(avals, terms) as analysed:
        for (prim, dt), term in zip(cases, terms, strict=True):
            want = expected(prim, [avals[dts.index(dt)]], **_UNARY_PARAMS.get(prim, {}))
            assert analysed.aval(term) == want, (prim, dt)


@pytest.mark.parametrize("lhs,rhs", [((2, 3), (2, 3)), ((), (2, 3)), ((2, 3), ()), ((), ())])
def test_binary_facts_follow_the_shape_rules(lhs, rhs):
    cases = [(prim, dt) for prim in BINARY_PRIMS
             for dt in accepted_dtypes(NARY[prim][0][0] if prim in NARY else frozenset("f"))
             if prim != "add_any" or lhs == rhs]  # add_any does not broadcast
    dts = sorted({dt for _, dt in cases}, key=D.ALL.index)
    avals = [ShapedArray(shape, dt) for dt in dts for shape in (lhs, rhs)]
    terms = [getattr(T, prim)(Arr.inp(2 * dts.index(dt)), Arr.inp(2 * dts.index(dt) + 1))
             for prim, dt in cases]
    with Analysed(avals, terms) as analysed:
        for (prim, dt), term in zip(cases, terms, strict=True):
            k = 2 * dts.index(dt)
            assert analysed.aval(term) == expected(prim, avals[k:k + 2]), (prim, dt)


def test_no_shape_for_size_one_broadcasting():
    """add(f64[1,3], f64[2,3]) is valid, but the analysis only knows equal shapes and rank-0 operands."""
    with Analysed([ShapedArray((1, 3), D.float64), ShapedArray((2, 3), D.float64)],
                  [T.add(Arr.inp(0), Arr.inp(1))]) as analysed:
        assert analysed.value(shape_of(T.add(Arr.inp(0), Arr.inp(1)))) is None


def test_literals_are_rank_0():
    with Analysed([], [Arr.scalar(2.0, "float32")]) as analysed:
        assert analysed.aval(Arr.scalar(2.0, "float32")) == ((), "float32")


# --- shape ops ------------------------------------------------------------------------------------


def _subsets(n: int, min_size: int = 0):
    return [c for k in range(min_size, n + 1) for c in itertools.combinations(range(n), k)]


def test_transpose_facts():
    perms = [p for n in range(1, 5) for p in itertools.permutations(range(n))] + [(5, 3, 1, 0, 2, 4)]
    avals = [ShapedArray(SIZES[:n], D.float32) for n in range(1, 7)]
    terms = [T.transpose(Arr.inp(len(p) - 1), ints(*p)) for p in perms]
    with Analysed(avals, terms) as analysed:
        for p, term in zip(perms, terms, strict=True):
            assert analysed.aval(term) == expected("transpose", [avals[len(p) - 1]], permutation=p), p


def test_reduction_and_squeeze_facts():
    avals = [ShapedArray(SIZES[:n], D.int32) for n in range(1, 5)]
    ones = ShapedArray((1, 2, 1, 3, 1), D.int32)
    cases = [(prim, n, axes) for prim in REDUCTIONS for n in range(1, 5) for axes in _subsets(n)]
    terms = [getattr(T, prim)(Arr.inp(n - 1), ints(*axes)) for prim, n, axes in cases]
    squeezes = [axes for axes in _subsets(5) if all(ones.shape[a] == 1 for a in axes)]
    sq_terms = [T.squeeze(Arr.inp(4), ints(*axes)) for axes in squeezes]
    with Analysed([*avals, ones], terms + sq_terms) as analysed:
        for (prim, n, axes), term in zip(cases, terms, strict=True):
            assert analysed.aval(term) == expected(prim, [avals[n - 1]], axes=axes), (prim, axes)
        for axes, term in zip(squeezes, sq_terms, strict=True):
            assert analysed.aval(term) == expected("squeeze", [ones], dimensions=axes), axes


def test_no_shape_for_unsorted_axes():
    term = T.reduce_sum(Arr.inp(0), ints(1, 0))
    with Analysed([ShapedArray((2, 3, 4), D.float64)], [term]) as analysed:
        assert analysed.value(shape_of(term)) is None


def test_reshape_broadcast_convert_facts():
    x = ShapedArray((2, 3), D.float32)
    terms = {"reshape": T.reshape(Arr.inp(0), ints(3, 2)),
             "broadcast_in_dim": T.broadcast_in_dim(Arr.inp(0), ints(4, 2, 3), ints(1, 2)),
             "convert_element_type": T.convert_element_type(Arr.inp(0), "int8")}
    params = {"reshape": {"new_sizes": (3, 2), "dimensions": None},
              "broadcast_in_dim": {"shape": (4, 2, 3), "broadcast_dimensions": (1, 2)},
              "convert_element_type": {"new_dtype": D.int8, "weak_type": False}}
    with Analysed([x], list(terms.values())) as analysed:
        for prim, term in terms.items():
            assert analysed.aval(term) == expected(prim, [x], **params[prim]), prim


def test_dot_general_facts():
    avals = [ShapedArray(SIZES[:n], D.float64) for n in range(1, 4)]
    rhs_for = {}
    cases = []
    for dn, nl, nr, _ in DOT_FORMS:
        numbers = ast.literal_eval(dn)
        (lc, rc), (lb, rb) = numbers
        lhs = avals[nl - 1]
        # an rhs whose contracted and batch dims match the lhs, other dims of new sizes
        shape = [8 + j for j in range(nr)]
        for i, j in zip(lc + lb, rc + rb, strict=True):
            shape[j] = lhs.shape[i]
        rhs_for[(dn, nl, nr)] = ShapedArray(tuple(shape), D.float64)
        cases.append((dn, nl, nr, numbers))
    in_avals = avals + list(rhs_for.values())
    terms = [T.dot_general(Arr.inp(nl - 1), Arr.inp(3 + i), dn) for i, (dn, nl, nr, _) in enumerate(cases)]
    with Analysed(in_avals, terms) as analysed:
        for i, ((dn, nl, nr, numbers), term) in enumerate(zip(cases, terms, strict=True)):
            want = expected("dot_general", [avals[nl - 1], in_avals[3 + i]], dimension_numbers=numbers,
                            precision=None, preferred_element_type=D.float64)
            assert analysed.aval(term) == want, (dn, nl, nr)


# --- axis tables, against NumPy --------------------------------------------------------------------


def test_merged_axes_sum_like_numpy():
    rng = np.random.default_rng(0)
    cases = [(n, a1, a2) for n in range(2, MAX_MOVED_RANK + 1) for a1 in _subsets(n, 1)
             for a2 in _subsets(n - len(a1), 1)]
    terms = [T.reduce_sum(T.reduce_sum(Arr.inp(n - 2), ints(*a1)), ints(*a2)) for n, a1, a2 in cases]
    with Analysed([ShapedArray(SIZES[:n], D.int64) for n in range(2, MAX_MOVED_RANK + 1)], terms) as analysed:
        for n, a1, a2 in cases:
            merged = analysed.value(merged_axes(ints(*a1), ints(*a2)))
            x = rng.integers(-9, 9, SIZES[:n])
            np.testing.assert_array_equal(np.sum(np.sum(x, axis=a1), axis=a2), np.sum(x, axis=merged))
            assert list(merged) == sorted(merged)


def test_axes_through_transpose_like_numpy():
    rng = np.random.default_rng(1)
    perms = [p for n in range(1, MAX_MOVED_RANK) for p in itertools.permutations(range(n))]
    perms += list(itertools.permutations(range(MAX_MOVED_RANK)))[::5]  # every rank-4 axis set, some perms
    cases = [(p, axes) for p in perms for axes in _subsets(len(p), 1)] + [((2, 0, 1), (2, 0))]  # unsorted
    terms = [T.reduce_sum(T.transpose(Arr.inp(len(p) - 1), ints(*p)), ints(*axes)) for p, axes in cases]
    with Analysed([ShapedArray(SIZES[:n], D.int64) for n in range(1, MAX_MOVED_RANK + 1)], terms) as analysed:
        for p, axes in cases:
            through = analysed.value(axes_through(ints(*p), ints(*axes)))
            rest = analysed.value(perm_after_removal(ints(*p), ints(*axes)))
            x = rng.integers(-9, 9, SIZES[:len(p)])
            np.testing.assert_array_equal(np.sum(np.transpose(x, p), axis=axes),
                                          np.transpose(np.sum(x, axis=through), rest))
            assert list(through) == sorted(through)


def test_dtype_tables():
    with Analysed([], [Arr.scalar(1.0, "float64")]) as analysed:
        for dt in D.ALL:
            limit = analysed.value(shapes.exact_integers(dt.name))
            if dt.kind in "iu":
                assert limit == min(np.iinfo(dt.numpy).max, 2 ** 53), dt
            elif dt.kind == "f":  # the largest n with 0..n all exact: n is, n + 1 is not
                assert float(np.asarray(limit, dt.numpy)) == limit
                assert float(np.asarray(limit + 1, dt.numpy)) != limit + 1
            else:
                assert limit is None, dt
            assert (analysed.egraph.check_bool(shapes.float_dtype(String(dt.name)))) == (dt.kind == "f")
