"""How accurate a program and its optimized form are, Herbie style: bits of error against the exact result.

    accuracy = measure_accuracy(original, optimized, rules="fast", fired=report.rule_matches)
    accuracy["outputs"], accuracy["warning"]; summary_lines(accuracy)
    bits_on(program, args, reference)          # per output, per element: bits of error on one input
    optimize(closed, rules=rules, accuracy=True) puts it in `report.accuracy`

Samples (seeded, `SEED`; `input_samples`): `FINITE_SAMPLES` sets of finite inputs across each dtype's whole
range (`numeric.random_values`: magnitudes log-uniform from the smallest subnormal to the largest finite,
and moderate values), then special ones: every element of each input one of its dtype's special values
(`numeric.special_values`: ±0, ±0.5, ±1, ±2, ±inf, nan, subnormal, tiny, huge, the largest finite; the
combinations across inputs of `numeric.grid`, at most `SPECIAL_SAMPLES` of them evenly spaced), and
`MIXED_SAMPLES` arrays with about half their elements ±0, ±inf or nan (`semantics.mixed_arrays`). A program
of much work gets fewer (`sample_counts`): one precision costs about `WORK_BUDGET` scalar operations.

Exact results: the original program over the extended reals, by the high-precision interpreter's
elementwise rules (`rewrites.verify.highprec`) applied element by element to arrays of mpmath numbers, with
data movement, reductions and dot_general done here on those arrays; calls are inlined first. As in Herbie,
the precision grows (`LEVELS`, decimal digits) until each element correctly rounded to its dtype is the
same at two consecutive precisions and no step rounding could have decided it (`highprec.significance`:
a cancellation, an absorbed tiny term, an amplified error); at the last precision either suffices (a term
absorbed at 300 and at 1000 digits is below 2^-3000 of the sum, gone from any float result). An element not
settled there is `unresolved` and left out. Sums (reduce_sum, dot_general) are accumulated without rounding
and rounded once. A primitive without a high-precision rule raises `UnsupportedPrimitive` naming it.

Bits of error of one element, with `c` the computed value and `e` the exact value correctly rounded to the
output's dtype (`rounded`):
    log2(1 + the number of floats strictly after min(c, e) up to max(c, e))    (+0 and -0 count as one)
so 0 when equal, 1 for neighbours, up to the dtype's width (64 for float64). Special values:
    e nan (undefined over the reals, or computed from a nan input): 0 if c is nan, else the width;
    e ±inf (an infinity, or a finite value that rounds to one): c's distance with inf as the float after
        the largest finite (the same inf: 0, the largest finite: 1 bit), c nan: the width;
    e finite: c nan or ±inf counts the width.
Integer and bool outputs count 0 where equal to the exact value (integers modulo 2^bits, as integer
arithmetic wraps; or where it is undefined: an integer division by zero), else the width (1 for bool).

The warning: rules of soundness class `real` or `unsafe` fired and the results changed: the optimized
program has more bits of error than the original at some element (by more than `ROUNDING_BITS`, the
rounding a `real` rule may move a result by), or gives another special value (nan, ±inf) than the
original there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ir.core import ClosedJaxpr, ShapedArray
from ir.errors import EqjaxError
from ir.inline import inline_calls
from rewrites.accuracy.exact import LEVELS, PRIMAL_CALLS, exact_outputs, ground_truth, rounded
from rewrites.rule import REAL, UNSAFE
from rewrites.verify.judges import SPECIAL, run
from rewrites.verify.numeric import float_kind, grid, random_values

__all__ = ["LEVELS", "UnsupportedAccuracy", "bits_of_error", "bits_on", "exact_outputs", "input_samples",
           "measure_accuracy", "rounded", "sample_counts", "summary_lines", "unsupported"]

SEED = 18
FINITE_SAMPLES, SPECIAL_SAMPLES, MIXED_SAMPLES = 64, 32, 4
WORK_BUDGET = 50_000  # scalar operations per precision, over all samples (`sample_counts`)


class UnsupportedAccuracy(EqjaxError):
    """A program whose accuracy cannot be measured (complex or key values): says which value and why."""


# --- inputs ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    label: str
    args: tuple[np.ndarray, ...]


def input_samples(avals, finite: int = FINITE_SAMPLES, special: int = SPECIAL_SAMPLES, mixed: int = MIXED_SAMPLES,
                  seed: int = SEED) -> list[Sample]:
    """The samples of the module docstring for inputs of `avals`."""
    for a in avals:
        if a.dtype.kind not in "fiub":
            raise UnsupportedAccuracy(f"inputs of dtype {a.dtype.name} have no high-precision values")
    if not avals:
        return [Sample("no inputs", ())]
    rng = np.random.default_rng(seed)
    draws = [rng.permutation(random_values(rng, a.dtype, finite * math.prod(a.shape))) for a in avals]
    out = [Sample(f"finite {k}", tuple(d.reshape(finite, *a.shape)[k] for d, a in zip(draws, avals, strict=True)))
           for k in range(finite)]
    combos = grid([ShapedArray((), a.dtype) for a in avals])
    picks = np.unique(np.linspace(0, len(combos[0]) - 1, min(special, len(combos[0]))).round().astype(int))
    for k in picks:
        values = [c[k] for c in combos]
        out.append(Sample("special " + ", ".join(map(str, values)),
                          tuple(np.full(a.shape, v, a.dtype.numpy) for v, a in zip(values, avals, strict=True))))
    from rewrites.verify.semantics import mixed_arrays  # semantics imports the engine, which imports this lazily

    out += [Sample(f"mixed special {k}", mixed_arrays(rng, avals, SPECIAL)) for k in range(mixed)]
    return out


def program_work(closed: ClosedJaxpr) -> int:
    """Scalar operations of one high-precision evaluation, about: every result element, and a dot_general's
    products and a reduction's inputs."""
    total = 0
    for eqn in inline_calls(closed, PRIMAL_CALLS).jaxpr.eqns:
        out = sum(math.prod(v.aval.shape) for v in eqn.outvars)
        if eqn.primitive == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            out *= 2 * math.prod(eqn.invars[0].aval.shape[d] for d in lc)
        elif eqn.primitive.startswith("reduce_"):
            out += math.prod(eqn.invars[0].aval.shape)
        total += out
    return total


def sample_counts(closed: ClosedJaxpr, budget: int = WORK_BUDGET) -> tuple[int, int, int]:
    """(finite, special, mixed) samples: the defaults, scaled down (to at least 8, 4, 2) so that a program of
    more work than `budget` / 100 costs about `budget` operations per precision."""
    total = FINITE_SAMPLES + SPECIAL_SAMPLES + MIXED_SAMPLES
    scale = min(1.0, budget / max(1, program_work(closed) * total))
    return (max(8, round(FINITE_SAMPLES * scale)), max(4, round(SPECIAL_SAMPLES * scale)),
            max(2, round(MIXED_SAMPLES * scale)))


# --- bits of error -------------------------------------------------------------------------------------

def width(dtype) -> int:
    return 1 if dtype.kind == "b" else dtype.bits


def _ordinal(x: np.ndarray) -> np.ndarray:
    """Floats as integers in their order: neighbours differ by 1, +0 and -0 are both 0, inf is max + 1."""
    ints = np.ascontiguousarray(x).view({1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize])
    ints = ints.astype(np.int64)
    magnitude = ints & np.int64((1 << (8 * x.dtype.itemsize - 1)) - 1)
    return np.where(ints < 0, -magnitude, magnitude)


def bits_of_error(computed: np.ndarray, exact: np.ndarray, dtype) -> np.ndarray:
    """Per element, the bits of error of `computed` against `exact`, already rounded to `dtype` (`rounded`),
    scored as the module docstring says; float64 values in [0, width(dtype)]."""
    computed = np.asarray(computed)
    w = float(width(dtype))
    if dtype.kind != "f":
        undefined = np.array([x is None for x in exact.flat], dtype=bool).reshape(exact.shape)
        equal = np.array([c == e for c, e in zip(computed.flat, exact.flat, strict=True)], bool).reshape(exact.shape)
        return np.where(undefined | equal, 0.0, w)
    c64, e64 = computed.astype(np.float64), exact.astype(np.float64)
    c_nan, e_nan = np.isnan(c64), np.isnan(e64)
    oc, oe = _ordinal(computed.astype(dtype.numpy)), _ordinal(exact.astype(dtype.numpy))
    same_sign = (oc >= 0) == (oe >= 0)
    with np.errstate(over="ignore", invalid="ignore"):
        # one sign: the int64 difference is exact; opposite signs: |oc| + |oe| is large, float64 is enough
        distance = np.where(same_sign, np.abs(oc - np.where(same_sign, oe, oc)).astype(np.float64),
                            np.abs(oc).astype(np.float64) + np.abs(oe).astype(np.float64))
        ulp_bits = np.minimum(np.log2(1.0 + distance), w)
    not_finite_where_finite = np.isfinite(e64) & ~np.isfinite(c64)
    return np.where(e_nan, np.where(c_nan, 0.0, w), np.where(c_nan | not_finite_where_finite, w, ulp_bits))


def bits_on(program: ClosedJaxpr, args: Sequence[np.ndarray], reference: ClosedJaxpr | None = None
            ) -> list[np.ndarray]:
    """Per output, the bits of error of `program` on `args` against the exact outputs of `reference` (default
    `program` itself); nan where the exact value is unresolved."""
    reference = reference or program
    exact, unsettled = ground_truth(reference, args)
    got = run(program, args)
    return [np.where(u, np.nan, bits_of_error(np.broadcast_to(g, e.shape), e, a.dtype))
            for g, e, u, a in zip(got, exact, unsettled, reference.out_avals, strict=True)]


# --- the report ----------------------------------------------------------------------------------------

@dataclass
class _Scores:
    bits: list[np.ndarray]  # per sample, flattened, over resolved elements
    kinds: list[np.ndarray]
    values: list[np.ndarray]


def _score(closed, samples: Sequence[Sample], truth, output: int, dtype) -> _Scores:
    bits, kinds, values = [], [], []
    for sample, (exact, changing) in zip(samples, truth, strict=True):
        got = np.broadcast_to(run(closed, sample.args)[output], exact[output].shape)
        keep = ~changing[output].reshape(-1)
        bits.append(bits_of_error(got, exact[output], dtype).reshape(-1)[keep])
        kinds.append(np.asarray(float_kind(np.asarray(got).reshape(-1)))[keep])
        values.append(np.asarray(got).reshape(-1)[keep])
    return _Scores(bits, kinds, values)


def _show_inputs(args) -> str:
    return ", ".join(np.array2string(np.asarray(a), threshold=6, edgeitems=2, separator=" ").replace("\n", "")
                     for a in args)


def _output_record(i: int, aval, samples, truth, before: _Scores, after: _Scores) -> dict:
    b_all, a_all = np.concatenate(before.bits), np.concatenate(after.bits)
    record = {"output": i, "dtype": aval.dtype.name, "elements": int(b_all.size),
              "unresolved": int(sum(int(t[1][i].sum()) for t in truth)),
              "input_max_bits": _r(b_all.max(initial=0.0)), "input_mean_bits": _r(b_all.mean() if b_all.size else 0.0),
              "optimized_max_bits": _r(a_all.max(initial=0.0)),
              "optimized_mean_bits": _r(a_all.mean() if a_all.size else 0.0),
              "worse": int((a_all > b_all + ROUNDING_BITS).sum()),
              "better": int((a_all + ROUNDING_BITS < b_all).sum()),
              "specials_changed": int(sum(int((kb != ka).sum()) if aval.dtype.kind == "f" else 0
                                          for kb, ka in zip(before.kinds, after.kinds, strict=True))),
              "worst": None}
    gains = [(float((a - b).max(initial=0.0)), k) for k, (a, b) in enumerate(zip(after.bits, before.bits, strict=True))]
    loss, k = max(gains, key=lambda g: g[0]) if gains else (0.0, -1)
    if loss > 0:
        j = int(np.argmax(after.bits[k] - before.bits[k]))
        keep = ~truth[k][1][i].reshape(-1)
        exact = truth[k][0][i].reshape(-1)[keep][j]
        record["worst"] = {"sample": samples[k].label, "inputs": _show_inputs(samples[k].args), "element": j,
                           "exact": str(exact), "input_gives": str(before.values[k][j]),
                           "optimized_gives": str(after.values[k][j]),
                           "input_bits": _r(before.bits[k][j]), "optimized_bits": _r(after.bits[k][j])}
    return record


# An element is worse (or better) only when its error moved by more than this many bits: a `real` rule that
# reorders arithmetic moves results by a rounding or so, which is what its class allows, not a loss to warn of
# (measured: reassociation under `default` moved logsumexp and rosenbrock by 1 bit at a few elements).
ROUNDING_BITS = 1.0


def _r(x) -> float:
    return round(float(x), 2)


def measure_accuracy(original: ClosedJaxpr, optimized: ClosedJaxpr, rules="default",
                     fired: Mapping[str, int] | None = None, *, samples: tuple[int, int, int] | None = None,
                     seed: int = SEED) -> dict:
    """Bits of error of both programs against the exact results of `original`, per output, on the samples
    of `input_samples` (`samples`: how many finite, special and mixed ones; default `sample_counts`, the
    defaults scaled down for a big program), and the warning (module docstring) over the `fired` rules
    (name -> matches) of `rules` (a spec or a rule list). Raises UnsupportedPrimitive / UnsupportedAccuracy
    naming what the high-precision evaluation cannot do. The result is JSON-able:
    {"samples", "seconds", "outputs": [{"output", "dtype", "elements", "unresolved", "input_max_bits",
    "input_mean_bits", "optimized_max_bits", "optimized_mean_bits", "worse", "better", "specials_changed",
    "worst": None or where the optimized program lost the most}], "changed", "warning", "unsupported"}."""
    from rewrites.rulesets import resolve_rules

    start = time.perf_counter()
    for a in original.out_avals:
        if a.dtype.kind not in "fiub":
            raise UnsupportedAccuracy(f"outputs of dtype {a.dtype.name} have no high-precision values")
    samples = input_samples(original.in_avals, *(samples or sample_counts(original)), seed=seed)
    truth = [ground_truth(original, s.args) for s in samples]
    outputs = []
    for i, aval in enumerate(original.out_avals):
        outputs.append(_output_record(i, aval, samples, truth, _score(original, samples, truth, i, aval.dtype),
                                      _score(optimized, samples, truth, i, aval.dtype)))
    changed = any(o["worse"] or o["specials_changed"] for o in outputs)
    classes = {r.name: r.soundness for r in resolve_rules(rules)}
    loose = sorted(n for n, k in (fired or {}).items() if k and classes.get(n) in (REAL, UNSAFE))
    warning = ""
    if loose and changed:
        where = "; ".join(f"output {o['output']}: {o['worse']} elements with more error, "
                          f"{o['specials_changed']} with another special value" for o in outputs
                          if o["worse"] or o["specials_changed"])
        warning = (f"rules that may change results fired and did ({where}): "
                   + ", ".join(f"{n} ({classes[n]})" for n in loose))
    return {"samples": len(samples), "seconds": round(time.perf_counter() - start, 3), "outputs": outputs,
            "changed": changed, "warning": warning, "unsupported": ""}


def unsupported(reason: str) -> dict:
    """The accuracy record of a program it could not be measured on, with the reason."""
    return {"samples": 0, "seconds": 0.0, "outputs": [], "changed": False, "warning": "", "unsupported": reason}


def summary_lines(accuracy: dict) -> list[str]:
    if accuracy["unsupported"]:
        return [f"accuracy: not measured: {accuracy['unsupported']}"]
    lines = [f"accuracy (bits of error against the exact result, {accuracy['samples']} input samples, "
             f"{accuracy['seconds']:.2f} s):"]
    for o in accuracy["outputs"]:
        unresolved = f", {o['unresolved']} unresolved" if o["unresolved"] else ""
        lines.append(f"  output {o['output']} ({o['dtype']}, {o['elements']} elements{unresolved}): input max "
                     f"{o['input_max_bits']:g} mean {o['input_mean_bits']:g}; "
                     f"optimized max {o['optimized_max_bits']:g} mean {o['optimized_mean_bits']:g}; "
                     f"worse at {o['worse']}, better at {o['better']}, "
                     f"special value changed at {o['specials_changed']}")
        w = o["worst"]
        if w:
            lines.append(f"    most lost at {w['sample']} (inputs {w['inputs']}), element {w['element']}: exact "
                         f"{w['exact']}, input {w['input_gives']} ({w['input_bits']:g} bits), optimized "
                         f"{w['optimized_gives']} ({w['optimized_bits']:g} bits)")
    if accuracy["warning"]:
        lines.append("WARNING: " + accuracy["warning"])
    return lines

