"""Shape/dtype rules of control flow, linalg, fft and random primitives.

Ground truth is JAX itself: every equation (nested jaxprs included) of the oracle cases of these
families, of programs.json and of its grad / grad_grad texts is re-typed with the registered rule
and compared with the avals JAX printed. Hand-built cases pin down what the fixtures do not show
(full-matrices QR, pivoting, subsets, left eigenvectors, ...) from JAX's documented shapes, and a
table of ill-typed applications must raise JaxprTypeError naming the primitive.
"""

from __future__ import annotations

import json

import pytest

import ir.shapes  # noqa: F401  (fills SHAPE_RULES)
from ir.core import ClosedJaxpr, Jaxpr, ShapedArray, Var, subjaxprs
from ir.dtypes import float0, from_short
from ir.errors import JaxprTypeError
from ir.params import NpScalar, Record, Symbol
from ir.primitives import SHAPE_RULES, abstract_eval, get_primitive
from tests.oracle_paths import ORACLE

FAMILIES = ("control_flow", "linalg", "fft", "random", "programs")


def aval(text: str) -> ShapedArray:
    """`f64[3,4]` as a ShapedArray."""
    short, dims = text[:-1].split("[")
    return ShapedArray(tuple(int(d) for d in dims.split(",") if d), from_short(short))


def avals(text: str) -> list[ShapedArray]:
    return [aval(t) for t in text.split()]


def jaxpr(ins: str, outs: str) -> ClosedJaxpr:
    """A body with the given input and output types (rules read only the types)."""
    return ClosedJaxpr(Jaxpr([], [Var(a) for a in avals(ins)], [Var(a) for a in avals(outs)], []))


# --- the fixture walk ----------------------------------------------------------------------------

def _texts():
    for family in FAMILIES:
        for case in json.loads((ORACLE / f"{family}.json").read_text())["cases"]:
            yield case["id"], case["jaxpr"]
            for key in ("grad", "grad_grad"):
                if key in case:
                    yield f"{case['id']} [{key}]", case[key]["jaxpr"]


TEXTS = dict(_texts())


def _equations(closed: ClosedJaxpr):
    """Every equation of a jaxpr and of the jaxprs nested in its params, each jaxpr once."""
    seen, stack = set(), [closed.jaxpr]
    while stack:
        jx = stack.pop()
        if id(jx) in seen:
            continue
        seen.add(id(jx))
        for eqn in jx.eqns:
            yield eqn
            stack.extend(sub.jaxpr for sub in subjaxprs(eqn))


@pytest.mark.parametrize("text_id", sorted(TEXTS))
def test_rules_reproduce_printed_avals(text_id):
    text_module = pytest.importorskip("ir.text")
    # Parsed without the type check, so that this walk is what checks each equation.
    closed = text_module.parse_jaxpr_untyped(TEXTS[text_id])
    checked = 0
    for eqn in _equations(closed):
        assert eqn.primitive in SHAPE_RULES, f"{eqn.primitive} has no shape rule"
        got = abstract_eval(eqn.primitive, [x.aval for x in eqn.invars], eqn.params)
        printed = [v.aval for v in eqn.outvars]
        assert [str(a) for a in got] == [str(a) for a in printed], eqn.primitive
        assert get_primitive(eqn.primitive).multiple_results or len(printed) == 1, eqn.primitive
        checked += 1
    assert checked > 0


OWN_MODULES = {"ir.shapes.control", "ir.shapes.linalg", "ir.shapes.fft", "ir.shapes.random"}
# Rules that accept operands of any type: identities.
ANY_OPERAND = {"optimization_barrier", "random_clone"}


def _own(prim: str) -> bool:
    rule = SHAPE_RULES[prim]
    return getattr(rule, "func", rule).__module__ in OWN_MODULES


def test_fixture_equations_with_a_float0_operand_are_rejected():
    # float0 (the tangent type of integers) fits no operand of these primitives: replacing any one
    # operand of a real equation by a float0 array of the same shape must make the rule refuse it.
    text_module = pytest.importorskip("ir.text")
    accepted, tried = [], 0
    for text_id, text in TEXTS.items():
        for eqn in _equations(text_module.parse_jaxpr_untyped(text)):
            if not _own(eqn.primitive) or eqn.primitive in ANY_OPERAND:
                continue
            in_avals = [x.aval for x in eqn.invars]
            for i, a in enumerate(in_avals):
                tried += 1
                bad = [*in_avals[:i], ShapedArray(a.shape, float0), *in_avals[i + 1:]]
                try:
                    abstract_eval(eqn.primitive, bad, eqn.params)
                except JaxprTypeError as e:
                    assert e.primitive == eqn.primitive
                else:
                    accepted.append(f"{text_id}: {eqn.primitive} operand {i}")
    assert tried > 500 and accepted == []


# --- hand-built applications (shapes as JAX documents them) ---------------------------------------

LU_TUPLE = "_LinearSolveTuple"
GOOD = [
    # Call-like primitives return their body's outputs.
    ("jit", "f64[3] i32[]", dict(name=Symbol("f"), jaxpr=jaxpr("f64[3] i32[]", "f64[] f64[3]")),
     "f64[] f64[3]"),
    ("pjit", "f32[2]", dict(name=Symbol("f"), jaxpr=jaxpr("f32[2]", "f32[2]")), "f32[2]"),
    ("closed_call", "f64[]", dict(call_jaxpr=jaxpr("f64[]", "bool[]")), "bool[]"),
    ("checkpoint", "f64[2]", dict(jaxpr=jaxpr("f64[2]", "f64[2]"), prevent_cse=True), "f64[2]"),
    ("custom_vjp_call_jaxpr", "f64[2]", dict(fun_jaxpr=jaxpr("f64[2]", "f64[]")), "f64[]"),
    ("custom_vjp_call", "f64[2]", dict(call_jaxpr=jaxpr("f64[2]", "f64[2]"), fwd=Symbol("f"),
                                        bwd=Symbol("b")), "f64[2]"),
    # cond: an i32 or bool index then the branch operands.
    ("cond", "bool[] f64[2]", dict(branches=(jaxpr("f64[2]", "f64[]"), jaxpr("f64[2]", "f64[]"))), "f64[]"),
    # while: cond consts, body consts, carry.
    ("while", "f64[] f32[2] i64[] f32[2]",
     dict(cond_nconsts=1, body_nconsts=1, cond_jaxpr=jaxpr("f64[] i64[] f32[2]", "bool[]"),
          body_jaxpr=jaxpr("f32[2] i64[] f32[2]", "i64[] f32[2]")), "i64[] f32[2]"),
    # scan: consts, carry, xs sliced on axis 0; ys stacked on a new axis 0 of size length.
    ("scan", "f64[4] f64[] i32[5,3]",
     dict(jaxpr=jaxpr("f64[4] f64[] i32[3]", "f64[] bool[2] f64[]"), length=NpScalar(5), num_consts=1,
          num_carry=1, reverse=False, unroll=1), "f64[] bool[5,2] f64[5]"),
    ("scan", "", dict(jaxpr=jaxpr("", "u8[2]"), length=0, num_consts=0, num_carry=0), "u8[0,2]"),
    ("optimization_barrier", "f64[2] i32[]", {}, "f64[2] i32[]"),
    ("custom_linear_solve", "f64[3,3] f64[3]",
     dict(const_lengths=Record(LU_TUPLE, dict(matvec=1, vecmat=0, solve=0, transpose_solve=0)),
          jaxprs=Record(LU_TUPLE, dict(matvec=jaxpr("f64[3,3] f64[3]", "f64[3]"), vecmat=None,
                                       solve=None, transpose_solve=None))), "f64[3]"),
    ("platform_index", "", dict(platforms=(("mosaic",), None)), "i32[]"),
    ("empty2", "", dict(dtype=from_short("i32")), "i32[]"),
    # linalg, batched: leading dims are carried through.
    ("cholesky", "c64[2,3,3]", {}, "c64[2,3,3]"),
    ("triangular_solve", "f64[2,3,3] f64[2,4,3]", dict(left_side=False, lower=True, transpose_a=False,
                                                       conjugate_a=False, unit_diagonal=False), "f64[2,4,3]"),
    ("qr", "f64[5,3]", dict(full_matrices=True, pivoting=False, use_magma=None), "f64[5,5] f64[5,3]"),
    ("qr", "f32[2,3]", dict(full_matrices=False, pivoting=True, use_magma=None), "f32[2,2] f32[2,3] i32[3]"),
    ("svd", "c128[4,2]", dict(full_matrices=False, compute_uv=True, subset_by_index=None, algorithm=None),
     "f64[2] c128[4,2] c128[2,2]"),
    ("svd", "f64[3,5]", dict(full_matrices=False, compute_uv=False, subset_by_index=(0, 2), algorithm=None),
     "f64[2]"),
    ("eigh", "c64[4,4]", dict(lower=True, sort_eigenvalues=True, subset_by_index=(1, 3)), "c64[4,2] f32[2]"),
    ("lu", "f64[7,4,6]", {}, "f64[7,4,6] i32[7,4] i32[7,4]"),
    ("lu_pivots_to_permutation", "i32[2,3]", dict(permutation_size=5), "i32[2,5]"),
    ("householder_product", "c64[5,3] c64[2]", {}, "c64[5,3]"),
    ("eig", "f32[3,3]", dict(compute_left_eigenvectors=True, compute_right_eigenvectors=True),
     "c64[3] c64[3,3] c64[3,3]"),
    ("schur", "f64[3,3]", dict(compute_schur_vectors=False, sort_eig_vals=False, select_callable=None),
     "f64[3,3]"),
    ("hessenberg", "c128[2,4,4]", {}, "c128[2,4,4] c128[2,3]"),
    ("tridiagonal", "c64[3,3]", dict(lower=False), "c64[3,3] f32[3] f32[2] c64[2]"),
    ("tridiagonal_solve", "f32[2,4] f32[2,4] f32[2,4] f32[2,4,3]", dict(perturb_singular=False),
     "f32[2,4,3]"),
    ("cholesky_update", "f32[4,4] f32[4]", {}, "f32[4,4]"),
    # fft: lengths name the trailing axes.
    ("fft", "c64[2,6]", dict(fft_type=1, fft_lengths=(6,)), "c64[2,6]"),
    ("fft", "f32[2,4,6]", dict(fft_type=Symbol("FftType.RFFT"), fft_lengths=(4, 6)), "c64[2,4,4]"),
    ("fft", "c128[3,5]", dict(fft_type=3, fft_lengths=(3, 9)), "f64[3,9]"),
    # random
    ("random_seed", "u64[2]", dict(impl=Symbol("fry")), "key<fry>[2]"),
    ("random_wrap", "u32[3,2]", dict(impl=Symbol("fry")), "key<fry>[3]"),
    ("random_unwrap", "key<fry>[2,3]", {}, "u32[2,3,2]"),
    ("random_bits", "key<fry>[2]", dict(bit_width=16, shape=(3,)), "u16[2,3]"),
    ("random_split", "key<fry>[2]", dict(shape=(4, 1)), "key<fry>[2,4,1]"),
    ("random_fold_in", "key<fry>[1,3] u32[2,1]", {}, "key<fry>[2,3]"),
    ("random_clone", "key<fry>[4]", {}, "key<fry>[4]"),
    ("random_gamma", "key<fry>[] f32[5]", dict(log_space=True), "f32[5]"),
    ("threefry2x32", "u32[] u32[] u32[4] u32[4]", {}, "u32[4] u32[4]"),
    ("rng_bit_generator", "u64[2]", dict(algorithm=Symbol("RNG_DEFAULT"), dtype=from_short("u8"),
                                                 out_sharding=None, shape=(2, 2)), "u64[2] u8[2,2]"),
    ("rng_uniform", "f32[] f32[]", dict(shape=(2, 3)), "f32[2,3]"),
]


@pytest.mark.parametrize("prim,ins,params,outs", GOOD, ids=[f"{g[0]}-{i}" for i, g in enumerate(GOOD)])
def test_rule_on_hand_built_operands(prim, ins, params, outs):
    got = abstract_eval(prim, avals(ins), params)
    assert [str(a) for a in got] == outs.split()


# --- ill-typed applications -----------------------------------------------------------------------

TS = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False, unit_diagonal=False)
BAD = [
    ("jit", "f64[3]", dict(jaxpr=jaxpr("f32[3]", "f32[3]")), "inputs"),
    ("jit", "f64[3] f64[3]", dict(jaxpr=jaxpr("f64[3]", "f64[3]")), "inputs"),
    ("custom_jvp_call", "f64[2]", dict(call_jaxpr=None), "must be a jaxpr"),
    ("cond", "f64[] f64[2]", dict(branches=(jaxpr("f64[2]", "f64[2]"),)), "branch index"),
    ("cond", "i32[2] f64[2]", dict(branches=(jaxpr("f64[2]", "f64[2]"),)), "branch index"),
    ("cond", "i32[] f64[2]", dict(branches=(jaxpr("f64[2]", "f64[2]"), jaxpr("f64[2]", "f32[2]"))),
     "output types"),
    ("cond", "i32[] f64[2]", dict(branches=(jaxpr("f64[3]", "f64[2]"),)), "operands"),
    ("cond", "i32[] f64[2]", dict(branches=()), "non-empty"),
    ("while", "f64[]", dict(cond_nconsts=0, body_nconsts=0, cond_jaxpr=jaxpr("f64[]", "bool[2]"),
                            body_jaxpr=jaxpr("f64[]", "f64[]")), "cond_jaxpr outputs"),
    ("while", "f64[]", dict(cond_nconsts=0, body_nconsts=0, cond_jaxpr=jaxpr("f64[]", "bool[]"),
                            body_jaxpr=jaxpr("f64[]", "f32[]")), "body_jaxpr outputs"),
    ("while", "f64[]", dict(cond_nconsts=2, body_nconsts=0, cond_jaxpr=jaxpr("f64[]", "bool[]"),
                            body_jaxpr=jaxpr("f64[]", "f64[]")), "cond_nconsts"),
    ("scan", "f64[] f64[4,2]", dict(jaxpr=jaxpr("f64[] f64[2]", "f64[]"), length=3, num_consts=0,
                                    num_carry=1), "leading axis"),
    ("scan", "f64[] f64[3,2]", dict(jaxpr=jaxpr("f64[] f64[2]", "f32[]"), length=3, num_consts=0,
                                    num_carry=1), "carry outputs"),
    ("scan", "f64[] f64[3,2]", dict(jaxpr=jaxpr("f64[] f64[3]", "f64[]"), length=3, num_consts=0,
                                    num_carry=1), "xs slices"),
    ("custom_linear_solve", "f64[3]",
     dict(const_lengths=Record(LU_TUPLE, dict(matvec=0, vecmat=0, solve=0, transpose_solve=0)),
          jaxprs=Record(LU_TUPLE, dict(matvec=jaxpr("f64[3]", "f64[2]"), vecmat=None, solve=None,
                                       transpose_solve=None))), "matvec outputs"),
    ("platform_index", "i32[]", dict(platforms=()), "no operands"),
    ("cholesky", "f64[3,4]", {}, "square"),
    ("cholesky", "i32[3,3]", {}, "dtype"),
    ("cholesky", "f64[3]", {}, "rank"),
    ("triangular_solve", "f64[3,3] f64[2,3]", TS, "b must be"),
    ("triangular_solve", "f64[3,3] f32[3,2]", TS, "same dtype"),
    ("triangular_solve", "f64[2,3,3] f64[4,3,2]", TS, "batch"),
    ("svd", "f64[4,3]", dict(full_matrices=True, compute_uv=True, subset_by_index=(0, 2)), "subset_by_index"),
    ("eig", "f64[2,3]", dict(compute_left_eigenvectors=False, compute_right_eigenvectors=True), "square"),
    ("lu_pivots_to_permutation", "i32[4]", dict(permutation_size=3), "permutation_size"),
    ("lu_pivots_to_permutation", "i64[4]", dict(permutation_size=4), "int32"),
    ("householder_product", "f64[3,4] f64[2]", {}, "rows"),
    ("householder_product", "f64[4,3] f64[4]", {}, "taus"),
    ("tridiagonal", "f64[0,0]", dict(lower=True), "non-empty"),
    ("tridiagonal_solve", "f64[4] f64[3] f64[4] f64[4,2]", {}, "same shape"),
    ("tridiagonal_solve", "f64[4] f64[4] f64[4] f64[3,2]", {}, "rows"),
    ("cholesky_update", "f64[2,3,3] f64[2,3]", {}, "rank"),
    ("cholesky_update", "c128[3,3] c128[3]", {}, "dtype"),
    ("cholesky_update", "f64[3,3] f64[2]", {}, "vector"),
    ("fft", "f64[8]", dict(fft_type=0, fft_lengths=(8,)), "complex"),
    ("fft", "c128[8]", dict(fft_type=2, fft_lengths=(8,)), "real"),
    ("fft", "c128[3,8]", dict(fft_type=0, fft_lengths=(3, 4)), "fft_lengths"),
    ("fft", "c128[3,4]", dict(fft_type=3, fft_lengths=(8,)), "n//2+1"),
    ("fft", "c128[8]", dict(fft_type=0, fft_lengths=(1, 2, 8)), "trailing axes"),
    ("fft", "c128[8]", dict(fft_type=7, fft_lengths=(8,)), "fft_type"),
    ("random_seed", "f64[]", dict(impl=Symbol("fry")), "integers"),
    ("random_seed", "i32[]", dict(impl=Symbol("rbg")), "PRNG implementation"),
    ("random_wrap", "u32[3]", dict(impl=Symbol("fry")), "key data"),
    ("random_wrap", "i32[2]", dict(impl=Symbol("fry")), "key data"),
    ("random_unwrap", "u32[2]", {}, "key array"),
    ("random_bits", "key<fry>[]", dict(bit_width=12, shape=(2,)), "bit_width"),
    ("random_split", "u32[2]", dict(shape=(2,)), "key array"),
    ("random_fold_in", "key<fry>[3] u32[2]", {}, "broadcast"),
    ("random_fold_in", "key<fry>[] f32[]", {}, "integers"),
    ("random_gamma", "key<fry>[] i32[3]", dict(log_space=False), "floating"),
    ("threefry2x32", "u32[] u32[] i32[3] u32[3]", {}, "uint32"),
    ("threefry2x32", "u32[] u32[] u32[3] u32[3,1]", {}, "same rank"),
    ("rng_bit_generator", "u32[2,2]", dict(shape=(2,), dtype=from_short("u32")), "state"),
    ("rng_bit_generator", "u32[4]", dict(shape=(2,), dtype=from_short("f32")), "unsigned"),
    ("rng_uniform", "f32[2] f32[]", dict(shape=(2,)), "scalars"),
]


@pytest.mark.parametrize("prim,ins,params,fragment", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_ill_typed_application_raises(prim, ins, params, fragment):
    with pytest.raises(JaxprTypeError) as info:
        abstract_eval(prim, avals(ins), params)
    assert info.value.primitive == prim
    assert fragment in str(info.value)
