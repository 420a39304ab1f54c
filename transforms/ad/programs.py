"""Derivative programs: a Jaxpr in, the optimized JVP or VJP Jaxpr out, through one e-graph.

    jvp_program(closed, wrt)             inputs: primals, then a tangent per float `wrt` input;
                                         outputs: primal outputs, then a tangent per float output
    vjp_program(closed, wrt, seed)       inputs: primals (then a cotangent per float output when
                                         seed="inputs"); outputs: the primal outputs if `keep_outputs`,
                                         then the cotangent of each `wrt` input
    grad_program(closed, argnums)        vjp_program seeded with 1 at the scalar output

Each runs `rewrites.engine.optimize` with the AD rules as its prelude: the program is encoded, the
builder (`transforms.ad.build`) adds the derivative's nodes, the AD rules expand them to
saturation, then the algebraic rules simplify primal and derivative together and the cost model
extracts the cheapest program computing every output.
"""

from __future__ import annotations

from functools import cache

from egglog import Vec, i64

from ir.core import ClosedJaxpr, ShapedArray, Var
from ir.errors import EqjaxError
from rewrites.encode import Loader, Term
from rewrites.engine import Report, optimize
from rewrites.options import DEFAULT_OPTIONS, Options
from rewrites.rule import Rule
from rewrites.terms import Arr
from transforms.ad.build import Builder, differentiable, flat_program
from transforms.ad.terms import declare_ad_terms, zero


class GradTypeError(EqjaxError, TypeError):
    """A derivative asked of something that has none (an integer input, a non-scalar output for grad)."""


@cache
def ad_rules() -> tuple[Rule, ...]:
    """Every AD rule (JVP, VJP, symbolic zeros), in module order."""
    from rewrites.rule import check_rules
    from transforms.ad.rules import rule_list

    return tuple(check_rules(rule_list()))


def _optimize(closed: ClosedJaxpr, extend, options: Options) -> tuple[ClosedJaxpr, Report]:
    return optimize(closed, rules=options.rules, cost=options.cost, extractor=options.extractor,
                    limits=options.limits, prelude=ad_rules(), extend=extend, loops=options.loops,
                    measure_transformed=options.measure_transformed)


class _Outputs:
    """Collects a derivative program's output terms as aliases (Python-level `ref`s)."""

    def __init__(self, builder: Builder):
        self.builder, self.terms = builder, []

    def add(self, term, aval: ShapedArray) -> None:
        if term is None:
            self.terms.append(zero(Vec[i64](*(i64(d) for d in aval.shape)), aval.dtype.name))
            return
        self.terms.append(self.builder.loader.output(term, aval))


def _new_input(enc, loader: Loader, aval: ShapedArray):
    enc.in_avals.append(aval)
    term = Term("inp", (len(enc.in_avals) - 1,)).egg
    loader.facts(term, aval)
    return term


def jvp_program(closed: ClosedJaxpr, wrt: list[int] | None = None,
                options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """`wrt`: the inputs that get a tangent input (default: every float input)."""
    flat = flat_program(closed, "jvp")
    chosen = range(len(flat.jaxpr.invars)) if wrt is None else wrt
    invars = [flat.jaxpr.invars[i] for i in chosen]

    def extend(egraph, enc, env) -> list[Arr]:
        declare_ad_terms(egraph)
        loader = Loader(egraph, enc)
        builder = Builder(loader, env)
        seeds = {id(v): _new_input(enc, loader, v.aval) for v in invars if differentiable(v.aval)}
        tangent = builder.forward(flat.jaxpr, seeds)
        outs = _Outputs(builder)
        for x in flat.jaxpr.outvars:
            if differentiable(x.aval):
                outs.add(tangent.get(id(x)), x.aval.strip_weak())
        loader.run()
        return [*enc.outputs, *outs.terms]

    return _optimize(flat, extend, options)


def vjp_program(closed: ClosedJaxpr, wrt: list[int], seed: str = "inputs", keep_outputs: bool = False,
                cotangent_outputs: list[int] | None = None,
                options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """`seed`: "inputs" (a cotangent input per float output in `cotangent_outputs`, default all) or
    "ones" (grad: the one scalar output in `cotangent_outputs` gets cotangent 1)."""
    flat = flat_program(closed, "vjp")
    jaxpr = flat.jaxpr
    for i in wrt:
        aval = jaxpr.invars[i].aval
        if not differentiable(aval):
            raise GradTypeError(f"differentiation requires float or complex inputs, but input {i} is {aval} "
                                "(integer and boolean inputs have no derivative)")
    chosen = cotangent_outputs if cotangent_outputs is not None else range(len(jaxpr.outvars))
    chosen = [j for j in chosen if differentiable(jaxpr.outvars[j].aval)]

    def extend(egraph, enc, env) -> list[Arr]:
        declare_ad_terms(egraph)
        loader = Loader(egraph, enc)
        builder = Builder(loader, env)
        seeds: dict[int, list] = {}
        for j in chosen:
            x = jaxpr.outvars[j]
            if seed == "inputs":
                term = _new_input(enc, loader, x.aval.strip_weak())
            else:
                term = Term("scalar", (1.0, x.aval.dtype.name)).egg
            if isinstance(x, Var):  # a Literal output has no cotangent to pass on
                seeds.setdefault(id(x), []).append(term)
        cts = builder.backward(jaxpr, [jaxpr.invars[i] for i in wrt], seeds)
        outs = _Outputs(builder)
        for i in wrt:
            v = jaxpr.invars[i]
            outs.add(cts[id(v)], v.aval.strip_weak())
        loader.run()
        return [*(enc.outputs if keep_outputs else []), *outs.terms]

    return _optimize(flat, extend, options)


def grad_program(closed: ClosedJaxpr, argnums: list[int], keep_outputs: bool = False,
                 options: Options = DEFAULT_OPTIONS) -> tuple[ClosedJaxpr, Report]:
    """The gradient of the first (scalar) output with respect to the `argnums` inputs (after the
    outputs themselves if `keep_outputs`): `vjp_program` seeded with cotangent 1."""
    return vjp_program(closed, list(argnums), seed="ones", keep_outputs=keep_outputs, cotangent_outputs=[0],
                       options=options)
