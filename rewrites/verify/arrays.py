"""Numeric evidence for rules that are not elementwise (transpose, reductions, dot_general, ... with
concrete params), at one array shape (`instantiate.array_instances`).

    check_array_dtype(rule, instance, budget) -> Evidence

A sample is one array per input: first arrays of special values (±0, ±0.5, ±1, ±2, ±inf, nan; integer
extremes), then moderate random values (uniform in [-4, 4] and small integers), where the rule's value
conditions hold (an element that breaks one is replaced by 1). Param variables are checked at sampled
values (`params`).
Both sides run on each sample in NumPy and their output arrays are compared:
- bits: bit for bit (any nan matches any nan);
- kind: element by element (nan, +inf, -inf, a number) — no high-precision arbitration here, which the
  moderate magnitudes make unnecessary (nothing overflows);
- real (float64, complex128 and integers): on samples with finite inputs, where the left side is a number
  the right side must be within a relative 1e-7 (floats: summation order and rounding differ by far less)
  or equal (integers, which do not round: a wrapped -INT_MIN is a different value). Weaker than the
  elementwise real check (float64 values, not exact reals), and said so.
"""

from __future__ import annotations

import numpy as np

from eval.interpreter import eval_jaxpr
from ir import dtypes as D
from rewrites.pattern import PatternRule
from rewrites.verify import params as P
from rewrites.verify.instantiate import Instance, NotInstantiable, applicable_instances
from rewrites.verify.numeric import CONDITION_TESTS, SEED, Counterexample, Evidence, bits_differ, float_kind

ARRAY_SHAPES = ((3,), (3, 3), (2, 2, 2), (2, 2, 2, 2))  # concrete params: the first that fits
PARAM_SHAPES = ((2, 3), (2, 3, 4), (3,))  # param variables: values sampled at each that fits


def array_instances(rule: PatternRule, complex_dtypes: bool = False) -> list[tuple[tuple, list[Instance]]]:
    """For a rule that is not elementwise: (sampled param values, the rule's instances) at an array shape
    (every variable of one shape). Concrete params: one group at the first of `ARRAY_SHAPES` the left side
    is defined for; param variables: a group per sampled binding (`params.bindings`) at `PARAM_SHAPES`. A
    bare-variable right side of another shape than the left side's is checked at a square shape instead, and
    one that has the left side's shape at no binding is an ill-typed rule."""
    reasons, groups, other_shapes = [], [], []
    sampled = bool(P.param_uses(rule.rhs, P.param_uses(rule.lhs)))
    for shape in PARAM_SHAPES if sampled else ARRAY_SHAPES:
        found = 0
        for binding in P.bindings(rule, shape) if sampled else [{}]:
            label = P.show(binding)
            try:
                instances, _ = applicable_instances(P.bind(rule, binding), shape, complex_dtypes)
            except NotInstantiable as err:
                if err.ill_typed:
                    raise
                reasons.append(err.reason)
                if not err.other_shape:
                    continue
                other_shapes.append(err.reason)
                # where the shapes differ the rule does not apply, but it may where they agree: a square shape
                # (transpose(x, p) => x keeps a 3x3 matrix's shape for every p)
                square = (3,) * len(shape)
                try:
                    instances, _ = applicable_instances(P.bind(rule, binding), square, complex_dtypes)
                except NotInstantiable as again:
                    if again.ill_typed:
                        raise
                    continue
                label += (("shape", "x".join(map(str, square))),)
            groups.append((label, instances))
            found += 1
            if found == P.MAX_BINDINGS:
                break
        if groups and not sampled:
            break
    if not groups and other_shapes:  # the right side never has the left side's shape: an ill-typed rule
        raise NotInstantiable(other_shapes[0], ill_typed=True)
    if not groups:
        raise NotInstantiable(f"no array shape fits: {reasons[0]}" if reasons else "no array shape fits")
    return groups


SPECIALS = np.array([-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan])
MODERATE = np.array([-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0])
RTOL = 1e-7
NOTE = "float64 values at moderate inputs (an array rule has no high-precision check)"


def _values(rng: np.random.Generator, dtype: D.DType, shape: tuple[int, ...], special: bool) -> np.ndarray:
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        if special:
            info = np.iinfo(dtype.numpy)
            return rng.choice(np.array([info.min, info.max, 0, 1, 2, info.max - 1]), shape).astype(dtype.numpy)
        low = 0 if dtype.kind == "u" else -8
        return rng.integers(low, 9, shape).astype(dtype.numpy)
    if dtype.kind == "c":
        part = D.float64 if dtype.bits == 128 else D.float32
        out = np.empty(shape, dtype.numpy)
        out.real, out.imag = _values(rng, part, shape, special), _values(rng, part, shape, special)
        return out
    if special:
        return rng.choice(SPECIALS, shape).astype(dtype.numpy)
    mixed = np.where(rng.random(shape) < 0.5, rng.uniform(-4, 4, shape), rng.choice(MODERATE, shape))
    return mixed.astype(dtype.numpy)


def samples(rule: PatternRule, inst: Instance, count: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(SEED)
    out = []
    for k in range(count):
        arrays = [_values(rng, a.dtype, a.shape, special=k < count // 4) for a in inst.in_avals]
        by_name = dict(zip(inst.names, arrays, strict=True))
        for c in rule.conditions:
            if c.kind in CONDITION_TESTS:
                v = by_name[c.args[0]]
                with np.errstate(invalid="ignore"):
                    v[~CONDITION_TESTS[c.kind](v)] = 1
        out.append(arrays)
    return out


def _show(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), separator=", ", threshold=64).replace("\n", "")


def _cex(check: str, inst: Instance, arrays, lhs, rhs, note: str = "", binding: tuple = ()) -> Counterexample:
    inputs = binding + tuple((name, _show(a)) for name, a in zip(inst.names, arrays, strict=True))
    return Counterexample(check, inst.dtype.name, inputs, _show(lhs), _show(rhs), note)


def _bits_differ(lhs: np.ndarray, rhs: np.ndarray) -> bool:
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (lhs, rhs)]
    return lhs.tobytes() != rhs.tobytes() and bool(bits_differ(*flat).any())


def _real_differ(lhs: np.ndarray, rhs: np.ndarray) -> bool:
    if lhs.dtype.kind not in "fc":
        return bool((lhs != rhs).any())
    number = np.isfinite(lhs)
    with np.errstate(invalid="ignore", over="ignore"):
        far = ~np.isfinite(rhs) | (np.abs(lhs - rhs) > RTOL * np.maximum(1.0, np.abs(lhs)))
    return bool((number & far).any())


def check_array_dtype(rule: PatternRule, inst: Instance, budget: int, real: bool, binding: tuple = ()) -> Evidence:
    count = int(min(300, max(100, budget // 10)))  # per binding and dtype: each sample is one evaluation
    bits = kind = real_cex = None
    compared = 0
    floating = inst.out_aval.dtype.kind in "fc"
    real = real and inst.dtype not in (D.float32, D.complex64)  # too coarse for the value check
    for arrays in samples(rule, inst, count):
        with np.errstate(all="ignore"):
            lhs, rhs = (np.asarray(eval_jaxpr(side, *arrays)[0]) for side in (inst.lhs, inst.rhs))
        if bits is None and _bits_differ(lhs, rhs):
            bits = _cex("bits", inst, arrays, lhs, rhs, binding=binding)
        if kind is None and floating and (float_kind(lhs) != float_kind(rhs)).any():
            kind = _cex("kind", inst, arrays, lhs, rhs, binding=binding)
        finite = all(a.dtype.kind not in "fc" or np.isfinite(a).all() for a in arrays)
        if real and finite:
            compared += 1
            if real_cex is None and _real_differ(lhs, rhs):
                real_cex = _cex("real", inst, arrays, lhs, rhs, NOTE, binding)
    shape = "x".join(map(str, inst.in_avals[0].shape)) if inst.in_avals else "scalar"
    label = ", ".join(f"{k}={v}" for k, v in binding)
    return Evidence(inst.dtype.name, count, bits, kind, real_cex, compared if real else 0,
                    real_how=f"{inst.dtype.name} samples", params=f"{shape} arrays" + (f", {label}" if label else ""))
