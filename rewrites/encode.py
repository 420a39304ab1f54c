"""Jaxpr → e-graph: every equation becomes a term, with its shape and dtype set.

Loading goes straight to egglog's command level (`egglog.bindings`), skipping the Python expression
layer, which costs about a millisecond per term: each equation result `k` is the alias `ref(k)`
(unextractable) unioned with its definition, whose operands name earlier results by their `ref`.
All unions and facts are the actions of a few body-less rules run once, so the cost is one egglog
command per few hundred equations (about 0.1 ms per equation at 5,000 equations).

`jit` (and older `pjit`, `closed_call`, `core_call`) bodies are inlined: a call boundary carries no
meaning for NumPy evaluation, and inlining lets rules work across it. Control flow (`scan`, `while`,
`cond`) is a node of its own constructor (`p_scan(args, bodies, fields...)`, `rewrites.terms.CONTROL_SPECS`)
whose bodies are terms over their own inputs (`Arr.barg(b, k)`), so rules rewrite inside them; its other
params are its fields, and its result types follow from its bodies. The other higher-order primitives
(`OPAQUE_CALLS`: `custom_jvp_call`, `remat2`, ...) are held as `call` nodes whose params live on the Python
side (`Encoding.extras`, keyed by the node's `extra` text): they hold Python callables and jaxprs with
constants, which no field can hold. Every other primitive's params, single- or multi-result, are all fields
of its own constructor (`rewrites.terms`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from egglog import EGraph
from egglog import bindings as eb

from ir.core import ClosedJaxpr, DropVar, Jaxpr, Literal, ShapedArray
from ir.errors import UnsupportedPrimitive
from ir.primitives import primitives_with
from ir.text.printer import value_text
from rewrites.terms import CONTROL_SPECS, SPECS, Arr, alias, declare, declare_terms, encode_fields, ref

INLINED = frozenset(primitives_with("call"))  # jit, pjit, closed_call, core_call: their bodies are encoded in place
_JAXPR_PARAM_KEYS = ("jaxpr", "call_jaxpr")
_SPAN = eb.PanicSpan()
_ACTIONS_PER_RULE = 300
_load_ids = itertools.count()


def egg_call(name: str, *args) -> eb.Call:
    return eb.Call(_SPAN, name, list(args))


def egg_int(v: int) -> eb.Lit:
    return eb.Lit(_SPAN, eb.Int(int(v)))


def egg_str(v: str) -> eb.Lit:
    return eb.Lit(_SPAN, eb.String(v))


def egg_ints(v: Sequence[int]) -> eb.Call:
    return egg_call("vec-of", *map(egg_int, v)) if len(v) else egg_call("vec-empty")


def egg_bool(v: bool) -> eb.Lit:
    return eb.Lit(_SPAN, eb.Bool(bool(v)))


_FIELD_TO_EGG = {"int": egg_int, "ints": egg_ints, "bool": egg_bool}


def _egg_fields(spec, values: list) -> list:
    """A node's field values (`rewrites.terms.encode_fields`) as egglog literals of their sorts."""
    return [_FIELD_TO_EGG.get(kind.name, egg_str)(v) for (_, kind), v in zip(spec.fields, values, strict=True)]


# The params of each control-flow primitive that hold its bodies, in the order of its node's `Bodies` list.
BODY_PARAMS = {prim: spec.bodies for prim, spec in CONTROL_SPECS.items()}

# The higher-order primitives held as `call(prim, extra, args)`, their params in `Encoding.extras`: they call a
# body the e-graph does not hold (remat2, checkpoint, composite, custom_jvp_call, custom_vjp_call,
# custom_vjp_call_jaxpr, custom_linear_solve), and their params hold what no typed field holds and reads back:
# Python callables (custom rules, thunks, a remat policy) and jaxprs with their constants.
OPAQUE_CALLS = frozenset(p for p in primitives_with("higher_order") if p not in BODY_PARAMS and p not in INLINED)


def closed_over(prim: str, params: dict, enc: Encoding) -> list[range]:
    """Per body of a control-flow equation, the leading operands it closes over instead of taking them as
    inputs: scan's consts, while's cond and body consts. In the e-graph such a body is a term over those
    operands' own terms, so a loop-invariant subterm is the same e-class as it would be outside the loop
    (hash-consing), and decoding computes it once, before the loop (loop-invariant code motion).
    cond's branches take every operand as an input: hoisting out of a branch would run work the taken
    branch does not need. Nothing when the encoding does not close loops (`Encoding.close_loops`)."""
    if not enc.close_loops:
        return []
    if prim == "scan":
        return [range(params["num_consts"])]
    if prim == "while":
        ck, bk = params["cond_nconsts"], params["body_nconsts"]
        return [range(ck), range(ck, ck + bk)]
    return []


def without_closed_over(prim: str, params: dict, operands: list, enc: Encoding) -> tuple[dict, list]:
    """The params and operands of a control-flow node whose bodies close over their consts (`closed_over`)."""
    if not enc.close_loops:
        return params, operands
    dropped = {j for r in closed_over(prim, params, enc) for j in r}
    kept = [x for j, x in enumerate(operands) if j not in dropped]
    if prim == "scan":
        return {**params, "num_consts": 0}, kept
    if prim == "while":
        return {**params, "cond_nconsts": 0, "body_nconsts": 0}, kept
    return params, kept


@dataclass
class Encoding:
    """What the e-graph's leaves and the `extra` keys of `call` nodes stand for, to decode extracted terms.
    `extras` holds only the params of the opaque calls (`OPAQUE_CALLS`), which no typed field holds: every
    other node's params are its fields."""

    in_avals: list[ShapedArray]
    consts: list[np.ndarray] = field(default_factory=list)
    const_avals: list[ShapedArray] = field(default_factory=list)
    literal_consts: set[int] = field(default_factory=set)  # consts that stand for a Literal
    extras: dict[str, dict] = field(default_factory=dict)  # an opaque call's `extra` key -> its params
    outputs: list[Arr] = field(default_factory=list)  # this program's outputs, as Python-level terms
    n_eqns: int = 0
    body_avals: list[tuple[ShapedArray, ...]] = field(default_factory=list)  # body id -> its input avals
    close_loops: bool = True  # loop bodies close over their consts (`closed_over`); False: every input a leaf

    def add_body(self, in_avals) -> int:
        self.body_avals.append(tuple(in_avals))
        return len(self.body_avals) - 1

    def add_const(self, value: np.ndarray, aval: ShapedArray, literal: bool = False) -> int:
        self.consts.append(value)
        self.const_avals.append(aval)
        if literal:
            self.literal_consts.add(len(self.consts) - 1)
        return len(self.consts) - 1

    def extra_key(self, prim: str, params: dict) -> str:
        """The `extra` key of an opaque call's params (`OPAQUE_CALLS`): their printed text (a numbered key when
        they hold jaxprs, which print long)."""
        if any(_holds_jaxpr(v) for v in params.values()):
            key = f"{prim}#{sum(1 for k in self.extras if k.startswith(prim + '#'))}"
        else:
            key = params_key(params)
        self.extras.setdefault(key, params)
        return key

    def params_of(self, key: str) -> dict:
        """The params an `extra` key of a `call` node stands for."""
        params = self.extras.get(key)
        if params is None:
            raise KeyError(f"no params for the extra key {key!r}: the program did not make it")
        return params


def params_key(params: dict) -> str:
    """The `extra` key of params that hold no jaxpr: their printed text ("-" for none)."""
    return " ".join(f"{k}={value_text(v)}" for k, v in sorted(params.items())) or "-"


def _holds_jaxpr(value: Any) -> bool:
    from ir.params import walk_values

    return any(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in walk_values(value))


# An atom's term: (egglog-level expression, Python-level expression or None). Python-level terms are
# only needed for program outputs, so they are built lazily from this small description.
@dataclass(frozen=True)
class Term:
    kind: str  # "inp" | "const" | "scalar" | "ref" | "barg"
    args: tuple

    @property
    def egg(self) -> eb.Call:
        if self.kind == "scalar":
            value, dtype = self.args
            return egg_call("scalar", eb.Lit(_SPAN, eb.Float(value)), egg_str(dtype))
        return egg_call(self.kind, *map(egg_int, self.args))

    @classmethod
    def of(cls, egg: eb.Call) -> Term:
        """The Term of an egglog-level leaf or alias (`inp`, `const`, `scalar`, `ref`, `barg`)."""
        if egg.name == "scalar":
            value, dtype = egg.args
            return cls("scalar", (float(value.value.value), dtype.value.value))
        if egg.name not in ("inp", "const", "ref", "barg"):
            raise ValueError(f"{egg.name} is not a leaf or an alias")
        return cls(egg.name, tuple(int(a.value.value) for a in egg.args))

    @property
    def python(self) -> Arr:
        if self.kind == "scalar":
            return Arr.scalar(*self.args)
        return {"inp": Arr.inp, "const": Arr.const, "ref": alias, "barg": Arr.barg}[self.kind](*self.args)


def literal_term(lit: Literal, enc: Encoding) -> Term:
    """`scalar` when the float64 `v` holds the literal exactly and keeps its identity, else a constant."""
    dt = lit.aval.dtype
    if dt.kind in "biuf":
        v = float(lit.value) if dt.kind != "b" else float(bool(lit.value))
        exact = (dt.kind not in "iu" or int(lit.value) == v) and not math.isnan(v)
        if exact and not (v == 0.0 and math.copysign(1.0, v) < 0):
            return Term("scalar", (v, dt.name))
    return Term("const", (enc.add_const(np.asarray(lit.value, dt.numpy), lit.aval, literal=True),))


class Loader:
    """Collects the unions and facts of one program and runs them as a few body-less rules."""

    def __init__(self, egraph: EGraph, enc: Encoding):
        self.egraph, self.enc = egraph, enc
        self.actions: list = []

    def facts(self, term: eb.Call, aval: ShapedArray) -> None:
        self.actions.append(eb.Set(_SPAN, "shape_of", [term], egg_ints(aval.shape)))
        self.actions.append(eb.Set(_SPAN, "dtype_of", [term], egg_str(aval.dtype.name)))

    def bind(self, definition: eb.Call, aval: ShapedArray) -> Term:
        self.enc.n_eqns += 1
        alias = Term("ref", (self.enc.n_eqns,))
        self.actions.append(eb.Union(_SPAN, alias.egg, definition))
        self.facts(alias.egg, aval)
        return alias

    def union(self, a: eb.Call, b: eb.Call) -> None:
        """Assert two terms equal (a transform that computes a value twice, e.g. a loop's primal results)."""
        self.actions.append(eb.Union(_SPAN, a, b))

    def output(self, term: eb.Call, aval: ShapedArray | None) -> Arr:
        """`term` as a Python-level program output: its alias `ref(k)`, bound first (with `aval`) unless
        `term` is an alias already."""
        if term.name != "ref":
            term = self.bind(term, aval).egg
        return alias(int(term.args[0].value.value))

    def run(self) -> None:
        if not self.actions:
            return
        if isinstance(self.egraph, Staging):
            self.egraph.load(self.actions)
        else:
            load(self.egraph, self.actions)
        self.actions = []


def load(egraph: EGraph, actions: list) -> None:
    """Run `actions` in `egraph` as a few body-less rules."""
    ruleset = f"load-{next(_load_ids)}"
    commands = [eb.AddRuleset(_SPAN, ruleset)]
    for k in range(0, len(actions), _ACTIONS_PER_RULE):
        chunk = actions[k:k + _ACTIONS_PER_RULE]
        commands.append(eb.RuleCommand(eb.Rule(_SPAN, chunk, [], f"{ruleset}-{k}", ruleset)))
    commands.append(eb.RunSchedule(eb.Run(_SPAN, eb.RunConfig(ruleset, None))))
    egraph._egraph.run_program(*commands)


def output_actions(egraph: EGraph, outputs: list) -> list:
    """The facts `output_at(k, x)` of the program outputs `outputs` (Python-level terms), at egglog's level:
    aliases `ref(k)` (most outputs) are written directly, other terms converted by egglog's Python layer."""
    actions = []
    for k, x in enumerate(outputs):
        if is_alias(x):
            term = egg_call("ref", egg_int(x.__egg_typed_expr__.expr.args[0].expr.value))
        else:
            egraph._add_decls(x)
            term = egraph._state.typed_expr_to_egg(x.__egg_typed_expr__, False)
        actions.append(eb.Expr_(_SPAN, egg_call("output_at", egg_int(k), term)))
    return actions


def is_alias(x) -> bool:
    """Whether the Python-level term `x` is an equation result's alias `ref(k)`."""
    return getattr(getattr(x.__egg_typed_expr__.expr, "callable", None), "ident", None) == _REF_IDENT


_REF_IDENT = ref(0).__egg_typed_expr__.expr.callable.ident


class Staging:
    """Stands in for the e-graph while a program is encoded, so that the e-graph (which rules it holds)
    can be chosen from the terms (`rewrites.liveness`): keeps the declarations and load actions, and
    replays them into the e-graph chosen."""

    def __init__(self):
        self.declarations: list[tuple[Any, str]] = []
        self.loads: list[list] = []
        self.terms: list = []  # Python-level terms added to the e-graph besides the loads (the outputs)

    def declare(self, exprs, flag: str) -> None:
        self.declarations.append((exprs, flag))

    def load(self, actions: list) -> None:
        self.loads.append(list(actions))

    def symbols(self) -> set[str]:
        from rewrites.liveness import command_symbols, expr_symbols

        return command_symbols(a for actions in self.loads for a in actions) | expr_symbols(self.terms)

    def declare_into(self, egraph: EGraph) -> None:
        for exprs, flag in self.declarations:
            declare(egraph, exprs, flag)

    def load_into(self, egraph: EGraph) -> None:
        for actions in self.loads:
            load(egraph, actions)


def encode(closed: ClosedJaxpr, egraph: EGraph, enc: Encoding | None = None,
           env: dict | None = None, close_loops: bool = True) -> Encoding:
    """Add `closed` to `egraph`; returns the Encoding whose `outputs` are the program's output terms.

    Passing the Encoding of a program already in `egraph` adds a second program over the same inputs,
    sharing its constant and param tables (so leaves never collide). `env`, if given, is filled with
    the term of every variable (`id(var)` -> `Term`), dropped results included. `close_loops`: see
    `closed_over`."""
    jaxpr = closed.jaxpr
    declare_terms(egraph)
    if enc is None:
        enc = Encoding([v.aval for v in jaxpr.invars], close_loops=close_loops)
    elif [a.strip_weak() for a in enc.in_avals] != [v.aval.strip_weak() for v in jaxpr.invars]:
        raise ValueError("a program added to an encoding must take the same inputs")
    loader = Loader(egraph, enc)
    env = {} if env is None else env
    for v, c in zip(jaxpr.constvars, closed.consts, strict=True):
        env[id(v)] = Term("const", (enc.add_const(np.asarray(c), v.aval),))
        loader.facts(env[id(v)].egg, v.aval)
    for k, v in enumerate(jaxpr.invars):
        env[id(v)] = Term("inp", (k,))
        loader.facts(env[id(v)].egg, v.aval)
    _encode_eqns(jaxpr, env, loader)
    outputs = [_atom(x, env, enc) for x in jaxpr.outvars]
    loader.run()
    enc.outputs = [t.python for t in outputs]
    return enc


def _atom(x, env: dict[int, Term], enc: Encoding) -> Term:
    return literal_term(x, enc) if isinstance(x, Literal) else env[id(x)]


def _encode_eqns(jaxpr: Jaxpr, env: dict[int, Term], loader: Loader) -> None:
    enc = loader.enc
    for eqn in jaxpr.eqns:
        operands = [_atom(x, env, enc) for x in eqn.invars]
        if eqn.primitive in INLINED:
            inner = next(eqn.params[k] for k in _JAXPR_PARAM_KEYS if k in eqn.params)
            results = _inline(inner, operands, loader)
            for v, term in zip(eqn.outvars, results, strict=True):
                if not isinstance(v, DropVar):
                    env[id(v)] = term
            continue
        if eqn.primitive in BODY_PARAMS:
            tup = _control(eqn, operands, loader)
            for k, v in enumerate(eqn.outvars):
                env[id(v)] = loader.bind(egg_call("get", tup, egg_int(k)), v.aval)
            continue
        in_avals = [x.aval for x in eqn.invars]
        definitions = _eqn_terms(eqn.primitive, eqn.params, [t.egg for t in operands], in_avals,
                                 len(eqn.outvars), enc)
        for v, definition in zip(eqn.outvars, definitions, strict=True):
            env[id(v)] = loader.bind(definition, v.aval)


def _inline(inner: ClosedJaxpr, operands: list[Term], loader: Loader) -> list[Term]:
    return encode_jaxpr(inner, operands, loader)


def _control(eqn, operands: list[Term], loader: Loader) -> eb.Call:
    """The node of a control-flow equation, its bodies encoded as terms over their own inputs."""
    bodies = []
    for name in BODY_PARAMS[eqn.primitive]:
        value = eqn.params[name]
        bodies += [value] if isinstance(value, (ClosedJaxpr, Jaxpr)) else list(value)
    closures = closed_over(eqn.primitive, eqn.params, loader.enc)
    terms = [_body(body, loader, [operands[j] for j in closures[i]] if i < len(closures) else [])
             for i, body in enumerate(bodies)]
    params, kept = without_closed_over(eqn.primitive, eqn.params, operands, loader.enc)
    return control_term(eqn.primitive, params, [t.egg for t in kept], terms)


def control_term(prim: str, params: dict, operands: list[eb.Call], bodies: list[eb.Call]) -> eb.Call:
    """`p_<prim>(args, bodies, fields...)`: a control-flow node; `params` may hold its jaxpr params or not
    (the bodies stand for them)."""
    spec = CONTROL_SPECS[prim]
    fields = _egg_fields(spec, encode_fields(spec, {k: v for k, v in params.items() if k not in spec.bodies}))
    body_list = egg_call("bnil")
    for body in reversed(bodies):
        body_list = egg_call("bcons", body, body_list)
    return egg_call(spec.constructor_name, egg_args(operands), body_list, *fields)


def new_body(loader: Loader, in_avals) -> tuple[int, list[Term]]:
    """A fresh body id and its input leaves `barg(b, k)` (with their shape facts)."""
    b = loader.enc.add_body(in_avals)
    terms = [Term("barg", (b, k)) for k in range(len(in_avals))]
    for t, aval in zip(terms, in_avals, strict=True):
        loader.facts(t.egg, aval)
    return b, terms


def body_term(b: int, outs: list[eb.Call]) -> eb.Call:
    return egg_call("body", egg_int(b), egg_args(outs))


def encode_jaxpr(closed: ClosedJaxpr, inputs: list[Term], loader: Loader, env: dict | None = None) -> list[Term]:
    """`closed`'s equations over the terms `inputs` (its constants become program constants); returns its
    output terms. `env`, if given, is filled with the term of every variable."""
    enc = loader.enc
    env = {} if env is None else env
    for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True):
        env[id(v)] = Term("const", (enc.add_const(np.asarray(c), v.aval),))
        loader.facts(env[id(v)].egg, v.aval)
    env.update({id(v): t for v, t in zip(closed.jaxpr.invars, inputs, strict=True)})
    _encode_eqns(closed.jaxpr, env, loader)
    return [_atom(x, env, enc) for x in closed.jaxpr.outvars]


def _body(body: ClosedJaxpr | Jaxpr, loader: Loader, closure: list[Term]) -> eb.Call:
    """A body term: its leading inputs are the `closure` terms, the others its own leaves."""
    closed = body if isinstance(body, ClosedJaxpr) else ClosedJaxpr(body, [])
    b, inputs = new_body(loader, [v.aval for v in closed.jaxpr.invars[len(closure):]])
    return body_term(b, [t.egg for t in encode_jaxpr(closed, closure + inputs, loader)])


def egg_args(operands: list[eb.Call]) -> eb.Call:
    out = egg_call("nil")
    for x in reversed(operands):
        out = egg_call("cons", x, out)
    return out


def _eqn_terms(prim: str, params: dict, operands: list[eb.Call], in_avals: list[ShapedArray], n_out: int,
               enc: Encoding) -> list[eb.Call]:
    if prim in OPAQUE_CALLS:
        tup = egg_call("call", egg_str(prim), egg_str(enc.extra_key(prim, params)), egg_args(operands))
        return [egg_call("get", tup, egg_int(i)) for i in range(n_out)]
    spec = SPECS.get(prim)
    if spec is None:
        raise UnsupportedPrimitive(prim, "term", "ir/primitives")
    if spec.arity not in (None, len(operands)):
        raise UnsupportedPrimitive(prim, f"term with {len(operands)} operands (dynamic shapes)", "rewrites/terms.py")
    fields = _egg_fields(spec, encode_fields(spec, params, in_avals))
    children = [egg_args(operands)] if spec.arity is None else operands
    term = egg_call(spec.constructor_name, *children, *fields)
    if spec.multiple_results:
        return [egg_call("get", term, egg_int(i)) for i in range(n_out)]
    return [term]
