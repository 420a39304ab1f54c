"""Accuracy as an extraction objective: the local error of every e-node, Herbie style.

    optimize(closed, cost="flops+accuracy")        # any model: "ops+accuracy", "latency+accuracy", ...
    accuracy_cost("flops", weight=64.0)            # the same, with another weight

The cost of a node is its base model's price plus `weight` × its local error: the bits of error (the measure
of `rewrites.accuracy.bits_of_error`) summed over its result's elements, averaged over the input samples.
A program's cost (`jaxpr_cost`, before and after) is the same sum over its equations.

Local error (Herbie's): of a node f(c1, ..., cn) of e-class c on one input sample, f computed in its dtype on
the operands' exact values correctly rounded, against c's exact value correctly rounded. Each rounding is
charged to the operation that turns it into error: at tiny x, `1 - x` is correctly rounded (0 bits) and `log`
of that rounded value is far from log(1 - x) (up to 64 bits), while `log1p(-x)` is within a rounding
everywhere; for large x, `1 - logistic(x)` loses its bits in the `sub`, `logistic(-x)` none. Elements within
`ROUNDING_BITS` count 0: a reassociation moves results by a rounding, which is not a loss, so among forms that
are all accurate the base model decides alone.

Exact values are computed e-class by e-class from the leaves (the inputs' samples, literals, consts), each by
the first node whose operands have values and whose primitive the high-precision evaluation has
(`rewrites.accuracy.exact.exact_eqn`), preferring the input program's own nodes (those over classes that
hold input equations): the nodes of a class are equal over the reals, but a `real` rule may differ at an
overflow or a special value, and there the input program's value is the reference. The evaluation is at
`DIGITS` decimal digits: enough that no float64 cancellation or absorption rounds the exact value (the
adaptive precision of `ground_truth` rose to the same level on most samples of an e-graph, at three times the
cost). Equivalent nodes share their class's exact value: that is what makes local error a price per node, so
every extractor (tree, greedy DAG, ILP) minimizes it unchanged.

Left at 0 error (`LocalErrors.skipped` says why, per primitive): nodes whose primitive has no high-precision
rule or no NumPy result (control flow, multi-result primitives, complex values, nodes inside loop bodies), or
whose class or operands have no exact value. The samples (`SAMPLES`, seeded) are the same for an e-graph and
for the programs extracted from it, so the price of a program (`jaxpr_cost`) and of its nodes agree. The
time grows with the e-graph's result elements times the samples: about a second for a numerical kernel, and
minutes for an e-graph of thousands of array nodes; the model is meant for the former.

Known limit (Herbie's, without its regime inference): a node is charged its error on every sample, also on
those where a `select_n` above it discards its value, so a select between two forms each accurate on one side
(log1mexp) costs the sum of both forms' errors, and extraction prefers the better single form.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from eval.interpreter import literal_array
from ir.core import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ir.dtypes import from_name
from ir.errors import EqjaxError, UnsupportedPrimitive
from ir.inline import inline_calls
from rewrites.accuracy import ROUNDING_BITS, SEED, bits_of_error, input_samples
from rewrites.accuracy.exact import PRIMAL_CALLS, exact_eqn, exact_input, rounded
from rewrites.costs import ACCURACY_DEFAULT_WEIGHT as DEFAULT_WEIGHT  # a whole float64 lost ≈ 4096 flops
from rewrites.costs import get_cost_model
from rewrites.verify import highprec as hp
from rewrites.verify.judges import run

SAMPLES = (24, 16, 2)  # finite, special, mixed (see `input_samples`): the same for an e-graph and its programs
DIGITS = 650  # decimal digits: a float64 sum of the largest and the least subnormal magnitudes is exact


@dataclass(frozen=True)
class Step:
    """One evaluable operation: `eqn` (its vars typed by the operands' and the result's avals) computes the
    value `result` from the values `operands` (keys: e-classes, or a jaxpr's vars)."""

    eqn: Eqn
    operands: tuple
    result: object
    reference: bool = True  # may give its result its exact value before the other steps (`_exact_values`)


@dataclass
class LocalErrors:
    """Per step, its local error (bits summed over elements, averaged over samples; 0 where not measured),
    and how many steps were measured."""

    bits: list[float]
    measured: int
    samples: int
    skipped: dict[str, int] = field(default_factory=dict)  # why a step got no measure -> how many


def local_errors(steps: Sequence[Step], leaves: dict, in_avals: Sequence[ShapedArray], seed: int = SEED
                 ) -> LocalErrors:
    """The local error of every step. `leaves` maps a value key to a function of the sample's input arrays
    giving that value's NumPy array (an input, a literal, a const)."""
    try:
        samples = input_samples(list(in_avals), *SAMPLES, seed=seed)
    except EqjaxError as e:  # complex or key inputs: no high-precision values
        return LocalErrors([0.0] * len(steps), 0, 0, {str(e): len(steps)})
    bits = np.zeros(len(steps))
    measured = np.zeros(len(steps), dtype=bool)
    skipped: dict[str, int] = {}
    programs = [_one_equation(step.eqn) for step in steps]
    for sample in samples:
        exact = _rounded_values(steps, leaves, sample.args)
        for k, step in enumerate(steps):
            why = _why_not(step, exact)
            if why:
                if sample is samples[0]:
                    skipped[why] = skipped.get(why, 0) + 1
                continue
            aval = step.eqn.outvars[0].aval
            try:
                [got] = run(programs[k], [exact[o] for o in step.operands])
            except Exception:  # noqa: BLE001  (a NumPy implementation refusing these inputs: no measure)
                continue
            err = bits_of_error(np.broadcast_to(got, aval.shape), exact[step.result], aval.dtype)
            err = np.where(err <= ROUNDING_BITS, 0.0, err)
            bits[k] += float(err.sum())
            measured[k] = True
    return LocalErrors([float(b) / len(samples) for b in bits], int(measured.sum()), len(samples), skipped)


def _why_not(step: Step, exact: dict) -> str:
    if step.result not in exact:
        return f"{step.eqn.primitive}: no exact value"
    if any(o not in exact for o in step.operands):
        return f"{step.eqn.primitive}: an operand without an exact value"
    return ""


def _rounded_values(steps: Sequence[Step], leaves: dict, args) -> dict:
    """The exact value of every key at `DIGITS`, correctly rounded to its dtype."""
    values = _exact_values(steps, leaves, args, DIGITS)
    return {k: rounded(v[0], aval.dtype) for k, (v, aval) in values.items()}


def _exact_values(steps: Sequence[Step], leaves: dict, args, dps: int) -> dict:
    """key -> ((numbers, exact, bad), aval) at `dps` digits, each key by its first step whose operands have
    values (passes over the steps until none adds a value), the `reference` steps to the end first."""
    interp = hp.Interpreter(dps, domain=False)
    values = {}
    for key, (make, aval) in leaves.items():
        values[key] = (exact_input(make(args), aval.dtype, dps), aval)
    for phase in ([s for s in steps if s.reference], steps):
        _fill(interp, phase, values)
    return values


def _fill(interp, steps: Sequence[Step], values: dict) -> None:
    progress = True
    while progress:
        progress = False
        for step in steps:
            if step.result in values or any(o not in values for o in step.operands):
                continue
            try:
                with np.errstate(all="ignore"):
                    got = exact_eqn(interp, step.eqn, [values[o][0] for o in step.operands])
            except (UnsupportedPrimitive, ValueError, TypeError, ZeroDivisionError, OverflowError):
                continue
            values[step.result] = (got, step.eqn.outvars[0].aval)
            progress = True


def _one_equation(eqn: Eqn) -> ClosedJaxpr:
    return ClosedJaxpr(Jaxpr([], [v for v in eqn.invars if isinstance(v, Var)], list(eqn.outvars), [eqn]))


def _real_valued(aval) -> bool:
    """An array the high-precision evaluation holds (floats, integers, bools; not complex numbers or keys)."""
    return isinstance(aval, ShapedArray) and aval.dtype.kind in "fiub"


# --- the two sources of steps: a saturated e-graph's view, and a program ------------------------------------

def view_steps(view, avals: dict, enc) -> tuple[list[Step | None], dict]:
    """Per node of `view` its step (None for a leaf or a node that is not one evaluable equation), and the
    leaves (program inputs, consts, literals)."""
    from rewrites.decode import node_params, node_primitive, operand_classes
    from rewrites.terms import SPECS

    leaves: dict = {}
    steps: list[Step | None] = []
    for i, node in enumerate(view.nodes):
        cls = view.node_class[i]
        steps.append(None)
        if node.op == "inp":
            k = node.payload[0]
            leaves[cls] = (lambda args, k=k: args[k], enc.in_avals[k])
        elif node.op == "const":
            k = node.payload[0]
            leaves[cls] = (lambda args, k=k: enc.consts[k], enc.const_avals[k])
        elif node.op == "scalar":
            v, dtype = node.payload
            aval = ShapedArray((), from_name(dtype))
            leaves[cls] = (lambda args, v=v, a=aval: np.asarray(v).astype(a.dtype.numpy), aval)
        elif node.op in SPECS and _real_valued(avals.get(cls)):
            operands = operand_classes(view, node)
            if all(_real_valued(avals.get(c)) for c in operands):
                in_avals = [avals[c] for c in operands]
                eqn = Eqn(node_primitive(node), [Var(a) for a in in_avals], [Var(avals[cls])],
                          node_params(node, in_avals, enc))
                steps[-1] = Step(eqn, tuple(operands), cls)
    from_input = set(leaves) | {c for c in view.classes if _holds_an_input_equation(c)}
    return [s if s is None else Step(s.eqn, s.operands, s.result, set(s.operands) <= from_input) for s in steps], \
        leaves


def _holds_an_input_equation(cls: str) -> bool:
    """Whether e-class `cls` holds an equation of the input program: `rewrites.serialize` names it
    `<sort>-e<k>-<digest>`."""
    return cls.split("-")[1].startswith("e")


def program_steps(closed: ClosedJaxpr) -> tuple[list[Step], dict, list[ShapedArray]]:
    """The steps of a program's equations (calls inlined), its leaves and its input avals."""
    closed = inline_calls(closed, PRIMAL_CALLS)
    jaxpr = closed.jaxpr
    leaves: dict = {}
    for k, v in enumerate(jaxpr.invars):
        leaves[id(v)] = (lambda args, k=k: args[k], v.aval)
    for v, c in zip(jaxpr.constvars, closed.consts, strict=True):
        leaves[id(v)] = (lambda args, c=c: c, v.aval)
    steps = []
    for eqn in jaxpr.eqns:
        operands = []
        for a in eqn.invars:
            if isinstance(a, Literal):
                leaves[id(a)] = (lambda args, a=a: literal_array(a), a.aval)
            operands.append(id(a))
        if len(eqn.outvars) == 1 and all(_real_valued(a.aval) for a in (*eqn.invars, *eqn.outvars)):
            own = Eqn(eqn.primitive, [Var(getattr(a, "aval", None)) for a in eqn.invars], list(eqn.outvars),
                      eqn.params)
            steps.append(Step(own, tuple(operands), id(eqn.outvars[0])))
    return steps, leaves, jaxpr.in_avals


# --- the cost model ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AccuracyCost:
    """`base` plus `weight` × local error (module docstring). Called on one equation alone it gives the base
    model's price: local error needs the operands' exact values, which only a whole program or e-graph has
    (`node_costs`, `program_cost`)."""

    base: object  # rewrites.costs.CostModel
    weight: float = DEFAULT_WEIGHT

    @property
    def name(self) -> str:
        return f"{self.base.name}+accuracy" if self.weight == DEFAULT_WEIGHT else \
            f"{self.base.name}+accuracy:{self.weight:g}"

    @property
    def fn(self):
        return self.base.fn

    def __call__(self, primitive, params, in_avals, out_avals):
        return self.base(primitive, params, in_avals, out_avals)

    def node_costs(self, view, avals: dict, enc, base_costs: Sequence[float]) -> list[float]:
        steps, leaves = view_steps(view, avals, enc)
        real = [s for s in steps if s is not None]
        errors = local_errors(real, leaves, enc.in_avals).bits
        extra = iter(errors)
        return [c + (self.weight * next(extra) if s is not None else 0.0) for c, s in zip(base_costs, steps,
                                                                                          strict=True)]

    def program_cost(self, closed: ClosedJaxpr, base_cost: float) -> float:
        steps, leaves, in_avals = program_steps(closed)
        return base_cost + self.weight * sum(local_errors(steps, leaves, in_avals).bits)


def accuracy_cost(base="flops", weight: float = DEFAULT_WEIGHT, backend: str = "numpy") -> AccuracyCost:
    """`base` (a name, callable or model) with the local-error term of the module docstring."""
    if not weight > 0 or not math.isfinite(weight):
        raise ValueError(f"the accuracy weight must be a positive number, got {weight!r}")
    return AccuracyCost(get_cost_model(base, backend), float(weight))
