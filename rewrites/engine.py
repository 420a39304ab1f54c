"""The saturation engine: encode → saturate (bounded) → serialize → extract → decode.

Schedules are built here and only here. One iteration is: the analysis rules (shape and value
facts) and the eager ones (constant folding) to saturation, then one pass of the chosen rules under
back-off (`rewrites.backoff`), whose match limit grows with the program so that a rule is skipped only
when it would explode. Saturation always stops: at the iteration limit, the e-node limit, the time
limit, or when nothing changed; the report says which.

A program is encoded before its e-graph is chosen (`rewrites.encode.Staging`), so that the e-graph holds
only the egglog rules that can fire on its terms (`rewrites.liveness`): registering a rule, and each
scheduled pass over it, costs time whether it matches or not.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from egglog import EGraph, back_off, bindings, ruleset, run, seq
from egglog.egraph_state import span

from ir.core import ClosedJaxpr, subjaxprs
from rewrites.analyses.signed_zero import negative_zero_unions
from rewrites.backoff import BackOff
from rewrites.decode import class_avals, decode, is_control, node_params, node_primitive, operand_classes
from rewrites.egraph_view import STRUCTURAL_OPS
from rewrites.encode import BODY_PARAMS, INLINED, Staging, encode, is_alias, load, output_actions
from rewrites.extract import extract
from rewrites.liveness import live_eggs
from rewrites.loops import loop_weights, prune_loops
from rewrites.options import DEFAULT_OPTIONS, Limits, Options, merge_options  # noqa: F401  (re-exported)
from rewrites.report import Report, Step
from rewrites.rule import Rule
from rewrites.rulesets import analysis_rules, resolve_rules
from rewrites.serialize import view_of
from rewrites.terms import declare_terms

_LEAVES = frozenset({"inp", "const", "scalar", "barg", *STRUCTURAL_OPS})
# A control-flow node costs its bodies' nodes, which extraction counts as its dependencies (once each: a cost
# model over one e-graph cannot see trip counts), plus this, or the cheapest priced node's cost when that is
# less (a model in seconds prices equations at ~1e-6).
CONTROL_FLOW_COST = 1.0


_ruleset_ids = itertools.count()
_bases = threading.local()


@dataclass
class Prepared:
    """An EGraph with the term language declared and rules registered, reused across programs through
    push/pop (registering a rule costs ~1 ms, far more than a small program's saturation).

    Each thread keeps a pool of them (`prepared`): a program runs in the smallest pooled e-graph holding every
    egglog rule that can fire on it (`rewrites.liveness`) if that e-graph holds at most `_RATIO` times as many;
    else an e-graph of its rule list and prelude grows to hold them too, if it then holds at most `_RATIO` times
    as many; else it gets a new e-graph of just those. The rules a program cannot fire never match it, so which
    e-graph it runs in changes no result, only the time: push and pop copy the whole e-graph with its rules
    (~30 µs per registered rule each way), which made an e-graph holding every rule cost small programs more in
    copies than in saturation.

    Each egglog rule is registered in a ruleset of its own, and a program's schedule runs only the rules that
    can fire on it: `push(live)` defines each group's ruleset (`analysis`, `ordinary`, `explosive`, `prelude`:
    placeholders naming it) as egglog's combined ruleset of the group's live rules, in the group's order, and
    `pop` drops it with the program. A pass over a rule costs time whether it matches or not: running only the
    live rules took the derivations of a seventh of the oracle cases from 68 s to 52 s.
    """

    egraph: EGraph
    rules: list[Rule]
    analysis: Any
    ordinary: Any
    explosive: Any
    prelude: Any
    groups: dict[str, list[tuple[int, str]]]  # a group's egglog name -> its rules: (id, their ruleset's name)
    eggs: dict[int, Any]  # the registered egglog rules, by id
    by_decl: dict
    key: tuple = ()  # the ids of its rule list and prelude
    depth: int = 0  # how many programs it holds now (nested derivations push it again)
    commands: dict = field(default_factory=dict)  # schedule key -> its egglog command
    by_egg_name: dict[str, str] = field(default_factory=dict)  # egglog's rule name -> the rule's name
    by_egg_id: dict[str, int] = field(default_factory=dict)  # egglog's rule name -> the egglog rule's id
    live: Collection[int] | None = None  # the ids of the rules the current program's schedules run (None: all)
    subsets: dict[tuple[str, frozenset], Any] = field(default_factory=dict)  # (group, left out) -> its ruleset
    scopes: list[tuple[Any, set[str]]] = field(default_factory=list)  # per program: its live ids, subsets defined

    def run(self, key: tuple, schedule: Callable[[], Any]) -> tuple[bool, dict[str, int], dict[int, int]]:
        """Run the schedule `schedule()` builds (built once per `key`): whether the e-graph changed, the
        matches of each of our rules, and those of each egglog rule (by id).

        egglog's `EGraph.run` converts the schedule to a command at every call, hashing every rule's
        declaration deeply to see whether it is registered; with ~250 rules that cost more than the run
        itself on small programs (measured: saturating a 5-equation scan took 0.85 s, 0.23 s replayed).
        The command is built once here and replayed through the same private entry points `EGraph.run`
        uses (egglog is pinned in pyproject.toml)."""
        command = self.commands.get(key)
        if command is None:
            built = schedule()
            self.egraph._add_decls(built)
            state = self.egraph._state
            # Converting a schedule also registers its rulesets, checking each rule by a deep hash; ours are
            # registered (`_register`), so the check is skipped (half the first run's time on small programs).
            state.ruleset_to_egg = _registered
            try:
                command = self.commands[key] = state.run_schedule_to_egg(built.schedule)
            finally:
                del state.ruleset_to_egg
        (output,) = self.egraph._run_program(command)
        if not self.by_egg_name:
            named = self.egraph._state.rule_name_to_command_decl.items()
            self.by_egg_name = {name: self.by_decl[decl] for name, decl in named if decl in self.by_decl}
            ids = {e.decl: i for i, e in self.eggs.items()}
            self.by_egg_id = {name: ids[decl] for name, decl in named if decl in ids}
        matches: dict[str, int] = {}
        by_egg: dict[int, int] = {}
        for egg_name, count in output.report.num_matches_per_rule.items():
            name = self.by_egg_name.get(egg_name)
            if name is not None:
                matches[name] = matches.get(name, 0) + count
                i = self.by_egg_id[egg_name]
                by_egg[i] = by_egg.get(i, 0) + count
        return output.report.updated, matches, by_egg

    def without(self, group: Any, left_out: frozenset[int]) -> Any:
        """The ruleset of group `group` (one of the placeholders) but for the egglog rules of ids `left_out`:
        the group itself when none is left out; else a combined ruleset defined in this program's scope on first
        use (its name is kept across programs, so that a schedule's command is built once)."""
        if not left_out:
            return group
        name = str(group.__egg_ident__)
        ruleset_ = self.subsets.get((name, left_out))
        if ruleset_ is None:
            if len(self.subsets) >= _SUBSETS:  # a long sweep meets many: forget them (names are never reused)
                self.subsets.clear()
                self.commands.clear()
            ruleset_ = self.subsets[name, left_out] = ruleset(name=f"{name}-less-{next(_ruleset_ids)}")
        ident = str(ruleset_.__egg_ident__)
        if ident not in self.scopes[-1][1]:
            members = [n for i, n in self.groups[name] if (self.live is None or i in self.live) and i not in left_out]
            self.egraph._egraph.run_program(bindings.UnstableCombinedRuleset(span(), ident, members))
            self.scopes[-1][1].add(ident)
        return ruleset_

    def push(self, live: Collection[int] | None = None) -> None:
        """A scope for one program whose schedules run the rules of ids `live` (None: every rule)."""
        self.egraph.push()
        self.depth += 1
        self.live = live
        self.scopes.append((live, set()))
        commands = [bindings.UnstableCombinedRuleset(span(), group, [name for i, name in members
                                                                    if live is None or i in live])
                    for group, members in self.groups.items()]
        self.egraph._egraph.run_program(*commands)

    def pop(self) -> None:
        self.egraph.pop()
        self.depth -= 1
        self.scopes.pop()
        self.live = self.scopes[-1][0] if self.scopes else None


def _registered(ruleset_ident) -> None:
    """Stands in for egglog's `EGraphState.ruleset_to_egg` while a schedule of registered rulesets is converted."""


def prepared(rules: list[Rule], prelude: Sequence[Rule] = (),
             symbols: set[str] | None = None) -> tuple[Prepared, Collection[int] | None]:
    """A prepared e-graph for `rules` and `prelude`, and the ids of the rules a program's schedules run (None:
    all): holding every egglog rule of them and of the analyses, or with `symbols` (those of the terms a program
    loads) at least every one that can fire on them, which are the ones it runs. `Prepared` says which."""
    pool = getattr(_bases, "pool", None)
    if pool is None:
        pool = _bases.pool = OrderedDict()  # id -> Prepared, least recently used first
    groups = (analysis_rules(), rules, prelude)
    if symbols is None:
        needed = {id(e): e for group in groups for r in group for e in r.egg}
    else:
        needed = live_eggs(groups, symbols)
    key = (tuple(id(r) for r in rules), tuple(id(r) for r in prelude))
    live = None if symbols is None else needed.keys()
    bound = _RATIO * len(needed)
    holding = [p for p in pool.values() if p.key[0] == key[0] and needed.keys() <= p.eggs.keys()]
    best = min(holding, key=lambda p: len(p.eggs), default=None)
    if best is None or len(best.eggs) > bound:
        growable = [p for p in pool.values() if p.key == key and p.depth == 0]
        best = min(growable, key=lambda p: len(p.eggs.keys() | needed.keys()), default=None)
        if best is not None and len(best.eggs.keys() | needed.keys()) <= bound:
            _grow(best, rules, prelude, needed)
        else:
            best = _register(rules, prelude, needed, key)
            pool[id(best)] = best
            if len(pool) > _POOL:
                pool.popitem(last=False)
    pool.move_to_end(id(best))
    return best, live


_RATIO, _POOL = 2, 24  # see `Prepared`
_SUBSETS = 1024  # rulesets of groups less their banned rules that a `Prepared` remembers


def release_prepared() -> None:
    """Drop this thread's prepared e-graphs. egglog's EGraph may only be dropped by the thread that made it, so a
    worker thread about to end (a Dask worker's, `eval.study.Dask`) calls this first."""
    _bases.__dict__.clear()


_GROUPS = ("analysis", "rules", "explosive", "prelude")  # a Prepared's rule groups, in its fields' order


def _members(rules: list[Rule], prelude: Sequence[Rule], eggs: dict[int, Any]) -> list[list]:
    """The egglog rules of `eggs` by group (in `_GROUPS` order), each group in its list's order."""
    def chosen(rule_list, keep=lambda r: True) -> list:
        return [e for r in rule_list if keep(r) and r.built is not None for e in r.built if id(e) in eggs]

    return [chosen(analysis_rules()) + chosen(rules, lambda r: r.eager),
            chosen(rules, lambda r: not r.explosive and not r.eager),
            chosen(rules, lambda r: r.explosive), chosen(prelude)]


def _register(rules: list[Rule], prelude: Sequence[Rule], eggs: dict[int, Any], key: tuple) -> Prepared:
    """A new e-graph holding the egglog rules `eggs`, each group in its list's order."""
    egraph = EGraph()
    declare_terms(egraph)
    placeholders = [ruleset(name=f"{group}-{next(_ruleset_ids)}") for group in _GROUPS]
    prep = Prepared(egraph, list(rules), *placeholders, {str(p.__egg_ident__): [] for p in placeholders}, {}, {},
                    key)
    _grow(prep, rules, prelude, eggs)
    return prep


def _grow(prep: Prepared, rules: list[Rule], prelude: Sequence[Rule], eggs: dict[int, Any]) -> None:
    """Register the rules of `eggs` that `prep` does not hold yet (between programs: registering inside a
    program's scope would be popped with it), keeping each group in its list's order."""
    new = {i: e for i, e in eggs.items() if i not in prep.eggs}
    if not new:
        return
    tag = next(_ruleset_ids)
    own = {i: ruleset(e, name=f"rule-{tag}-{k}") for k, (i, e) in enumerate(new.items())}
    names = {i: name for members in prep.groups.values() for i, name in members}
    names.update((i, str(r.__egg_ident__)) for i, r in own.items())
    prep.eggs = {**prep.eggs, **new}
    for group, members in zip(prep.groups, _members(rules, prelude, prep.eggs), strict=True):
        prep.groups[group] = [(id(e), names[id(e)]) for e in members]
    prep.by_decl.update((e.decl, r.name) for r in (*rules, *prelude) if r.built is not None for e in r.built
                        if id(e) in new)
    prep.by_egg_name = {}  # egglog's rule names, read again at the next run
    prep.egraph.run(seq(*(run(r) for r in own.values())))  # registers


@contextmanager
def fresh_egraph(rules: list[Rule], prelude: Sequence[Rule] = (), staged: Staging | None = None):
    """An empty e-graph with `rules` (and `prelude`) registered, for the duration of the `with` block; with
    `staged`, an e-graph holding the rules that can fire on the staged terms, which it is loaded with."""
    prep, live = prepared(rules, prelude, staged.symbols() if staged is not None else None)
    if staged is not None:
        staged.declare_into(prep.egraph)
    prep.push(live)
    try:
        if staged is not None:
            staged.load_into(prep.egraph)
        yield prep
    finally:
        prep.pop()


def saturate(prep: Prepared, n_eqns: int, limits: Limits, report: Report, deadline: float | None = None,
             restart: Callable[[], None] | None = None, trace: bool = False) -> None:
    """Run the prepared rules within `limits`; fills the report's iterations, stop reason and matches.

    The analysis and eager rules first run to saturation on the e-graph as loaded. One iteration: one pass of
    the ordinary rules, one pass of the explosive ones (assoc/comm), each but the rules back-off bans
    (`rewrites.backoff`, a match limit scaled to the program), then the analysis and eager rules to saturation
    again (so an iteration that changed nothing reports so). Each iteration is one run, so that the bans are
    decided between iterations; when nothing changed but some rule was banned, the bans are lifted and the run
    goes on.

    The bounds hold as follows. Iterations: exactly. E-nodes (`egraph_nodes`, rows of every table): the
    rows a step adds per match are measured, and each later step has its match limits cut so that the rules
    that fired last, each at its limit, fit in the node budget left. Under an explicit limit such a step runs
    under egglog's back_off scheduler, which skips a rule that matches more than its limit, so a rule adds at
    most its limit's worth (that scheduler also matches retired nodes, which only costs rows here); under the
    default budget a rule whose last matches passed the cut sits the step out. The first iteration
    has no measure to go by (one iteration of a 300-term chain grew the e-graph 3x): when it passes an
    explicit limit by more than `_OVERSHOOT` and `restart` is given, the e-graph is reloaded with the
    program (`restart()`) and the iteration is run again with the match limit that lets through the rules
    whose matches, as the first attempt counted them, fit in the budget. The default limit, a budget scaled
    to the program, lets the first iteration finish. An e-graph loaded past the default limit (a
    transform's terms) gets one iteration, past an explicit one none.
    Seconds: a step is only started when the time it is predicted to take (the slowest iteration so
    far) fits before `deadline` (default: `limits.seconds` from now).

    Each run is recorded in `report.steps`; `trace=True` counts the e-graph's term e-nodes and e-classes after
    each (a serialization per run)."""
    egraph = prep.egraph
    report.rule_matches.update({r.name: 0 for r in prep.rules})
    match_limit = limits.match_limit_base + limits.match_limit_per_eqn * n_eqns
    explosive_limit = limits.explosive_match_limit_base + limits.explosive_match_limit_per_eqn * n_eqns

    rule_groups = (prep.ordinary, prep.explosive)
    backoffs = (BackOff(match_limit, limits.ban_length), BackOff(explosive_limit, limits.ban_length))
    group_of = {i: k for k, group in enumerate(rule_groups) for i, _ in prep.groups[str(group.__egg_ident__)]}

    def iteration(groups: tuple, limits_now: tuple[int, int] | None):
        """One iteration: a plain run of each group (`groups`: each but its banned rules, `rewrites.backoff`), or
        while the node budget throttles the run, egglog's back_off at the capped limits `limits_now`, which skips
        a rule past its limit where a plain run has applied its matches already, so that the budget holds."""
        if limits_now is not None:
            passes = [run(group, scheduler=back_off(match_limit=limit, ban_length=limits.ban_length))
                      for group, limit in zip(groups, limits_now, strict=True)]
        else:
            passes = [run(group) for group in groups]
        # the analyses (and folding) end it, so that the next pass starts from them and a step's size counts them
        return passes[0] + passes[1] + run(prep.analysis).saturate()

    def analyses() -> dict[str, int]:
        """The analyses (and folding) to saturation on the e-graph as loaded, before the first pass; the folds'
        matches, counted in the report."""
        _, matches, _ = prep.run(("analysis",), lambda: run(prep.analysis).saturate())
        for name, count in matches.items():
            report.rule_matches[name] += count
        return matches

    node_limit = limits.node_limit(n_eqns)
    deadline = time.perf_counter() + limits.seconds if deadline is None else deadline
    report.stop_reason = "iterations"
    report.egraph_nodes = size = egraph_nodes(egraph)
    slowest, rows_per_match, fired, held = 0.0, 0.0, 0, False
    last: dict[int, int] = {}  # each egglog rule's matches the last time it ran
    counted: dict[str, int] = {}  # the first iteration's matches, once an attempt at it overshot and was undone
    ceiling = 0  # the match limit of the last attempt undone: the next one runs under a lower one
    folded: dict[str, int] = {}  # the folds' matches on the e-graph as loaded
    if limits.nodes is not None and size >= limits.nodes:
        report.stop_reason = "nodes"  # a limit given explicitly (`--node-limit 0`) holds from the start
    else:
        folded = analyses()
    while report.stop_reason == "iterations" and report.iterations < limits.iterations:
        limits_now, throttled = (match_limit, explosive_limit), False
        if counted and report.iterations == 0:
            below = {name: count for name, count in counted.items() if count < ceiling}
            cap = _cap_within(below, _ROWS_MARGIN * rows_per_match, node_limit - size)
            if cap < 1:
                report.stop_reason = "nodes"
                break
            limits_now, throttled = (min(match_limit, cap), min(explosive_limit, cap)), True
        elif rows_per_match:
            cap = (node_limit - size) / (_ROWS_MARGIN * rows_per_match * max(1, fired))
            if cap < 1:
                report.stop_reason = "nodes"
                break
            if cap < match_limit:
                limits_now, throttled = (min(match_limit, int(cap)), min(explosive_limit, int(cap))), True
        clock = time.perf_counter()
        if clock + slowest > deadline:
            report.stop_reason = "seconds"
            break
        if throttled and limits.nodes is not None:  # an explicit limit holds within `_OVERSHOOT`
            groups, capped, held = rule_groups, limits_now, True
        else:  # under the default budget, a throttled rule sits out while it last matched more than the cap
            over = frozenset(i for i, c in last.items() if throttled and c > limits_now[group_of[i]])
            groups = tuple(prep.without(group, backoff.banned(report.iterations) | over)
                           for group, backoff in zip(rule_groups, backoffs, strict=True))
            capped, held = None, bool(over)
        updated, matches, by_egg = prep.run(("iteration", *(str(g.__egg_ident__) for g in groups), capped,
                                             limits.ban_length), lambda g=groups, c=capped: iteration(g, c))
        if capped is None:
            last.update((i, c) for i, c in by_egg.items() if i in group_of)
            for k, backoff in enumerate(backoffs):
                backoff.record(report.iterations, {i: c for i, c in by_egg.items() if group_of.get(i) == k})
        took = time.perf_counter() - clock
        slowest = max(slowest, took)
        report.iterations += 1
        for name, count in matches.items():
            report.rule_matches[name] += count
        before, grown = size, egraph_nodes(egraph)
        report.steps.append(_step(egraph, "rules", 1, took, grown, matches, trace))
        if sum(matches.values()):
            rows_per_match = max(rows_per_match, (grown - size) / sum(matches.values()))
            fired = max(fired, sum(1 for count in matches.values() if count))
        if (restart is not None and limits.nodes is not None and report.iterations == 1
                and grown > _OVERSHOOT * node_limit and sum(matches.values())):
            restart()  # the first iteration overshot an explicit limit: undo it, and run it again throttled
            report.steps[-1].phase = "undone"
            counted, ceiling = counted or matches, limits_now[0]
            for name, count in [*matches.items(), *folded.items()]:
                report.rule_matches[name] -= count
            folded = analyses()
            report.iterations = 0
            report.egraph_nodes = size = egraph_nodes(egraph)
            continue
        report.egraph_nodes = size = grown
        if not updated:
            if any([backoff.unban(report.iterations) for backoff in backoffs]):  # every group's bans lifted
                continue  # nothing changed but banned rules may: they run again
            report.stop_reason = "saturated"
            break
        if size > node_limit or (held and grown == before):  # past the limit, or held back by it
            report.stop_reason = "nodes"
            break
    if report.stop_reason == "iterations" and held:
        report.stop_reason = "nodes"  # the node budget was holding the run back when the iterations ran out
    clock = time.perf_counter()
    prep.run(("analysis",), lambda: run(prep.analysis).saturate())
    report.egraph_nodes = egraph_nodes(egraph)
    report.steps.append(_step(egraph, "analysis", 0, time.perf_counter() - clock, report.egraph_nodes, {}, trace))


def _step(egraph: EGraph, phase: str, iterations: int, seconds: float, rows: int, matches: dict[str, int],
          trace: bool) -> Step:
    step = Step(phase, iterations, seconds, rows, {name: c for name, c in matches.items() if c})
    if trace:
        view = view_of(egraph)
        step.enodes, step.eclasses = len(view.nodes), len(view.classes)
    return step


_ROWS_MARGIN = 3  # rows per match grow as classes grow (measured: up to 2.4x from one iteration to the next)
_OVERSHOOT = 1.1  # how far past an explicit e-node limit the first iteration may go before it is run again


def _cap_within(matches: dict[str, int], rows_per_match: float, budget: float) -> int:
    """The largest match limit under which the rules that `matches` counts (back-off skips those above it)
    add at most `budget` rows at `rows_per_match` each; 0 when not even the rarest rule fits."""
    cap, rows = 0, 0.0
    for count in sorted(c for c in matches.values() if c):
        rows += count * rows_per_match
        if rows > budget:
            break
        cap = count
    return cap


def egraph_nodes(egraph: EGraph) -> int:
    """The rows of every table of `egraph` (terms and analysis facts): what the e-node limit bounds.

    `EGraph.all_function_sizes` counts the same rows but builds a Python callable for each of the ~140
    functions declared on every call (measured on a loaded machine: 17 ms a call, several calls per
    optimize); this asks egglog for the sizes and keeps the functions it would have named."""
    (output,) = egraph._run_program(bindings.PrintSize(span(1), None))
    declared = egraph._state.egg_fn_to_callable_refs
    return sum(size for name, size in output.sizes if declared.get(name))


def run_prelude(prep: Prepared, report: Report, prelude: Sequence[Rule], trace: bool = False) -> None:
    """Saturate the prelude rules (with the analyses) before any algebraic rule runs.

    Used for rules that expand definitions once (AD's linearization nodes): running them with the
    algebra lets algebra rebuild the terms they expand, which need not terminate (EGGLOG-NOTES.md)."""
    for r in prelude:
        report.rule_matches.setdefault(r.name, 0)
    clock = time.perf_counter()
    _, matches, _ = prep.run(("prelude",), lambda: (run(prep.analysis).saturate() + run(prep.prelude)).saturate())
    for name, count in matches.items():
        if name in report.rule_matches:
            report.rule_matches[name] += count
    report.prelude_enodes = egraph_nodes(prep.egraph)
    report.steps.append(_step(prep.egraph, "prelude", 0, time.perf_counter() - clock, report.prelude_enodes, matches,
                              trace))


# `extend(staged, encoding, env)` adds terms to the encoded program (through `rewrites.encode.Loader`s on
# `staged`, which replays them into the e-graph) and returns the output terms (Python-level `Arr`s) to
# extract instead of the program's own outputs.
Extend = Callable[[Staging, Any, dict], list]


@dataclass
class Saturated:
    """A program's saturated e-graph, as a plain view, with what extraction and decoding need.

    `optimize` is `saturated` followed by `extract_program`; a study that extracts one e-graph under
    several cost models (or samples it, `rewrites.extract.sample`) saturates once and extracts many times."""

    view: Any  # rewrites.egraph_view.EGraphView
    enc: Any  # rewrites.encode.Encoding
    avals: dict  # class -> aval(s)
    report: Report
    loops: bool
    program: ClosedJaxpr | None = None  # the input, when the extracted outputs are its own (no `extend`)
    deadline: float | None = None  # `time.perf_counter()` by which `optimize` must end (`Limits.seconds`)
    transformed: Any = None  # with a prelude: the view once it ran, before the rules (`Report.cost_transformed`)
    loaded: Any = None  # with `keep_loaded=True`: the view of the program as loaded (`rewrites.explain`)

    def costs(self, model) -> list[float]:
        """The cost of every node under `model` (a name, callable or `CostModel`)."""
        from rewrites.costs import get_cost_model

        return node_costs(self.view, self.avals, self.enc, get_cost_model(model))

    def decode(self, choice: dict, view=None, avals=None) -> tuple[ClosedJaxpr, dict[str, int]]:
        """The program of an extraction's choice (dead loop outputs pruned when `loops`), and decoding's
        counts ("hoisted", "pruned"); of `view` (with its `avals`) instead of the saturated one if given."""
        stats: dict[str, int] = {}
        program = decode(view or self.view, choice, self.enc, avals or self.avals, stats)
        if self.loops:
            program, stats["pruned"] = prune_loops(program)
        return program, stats


def saturated(closed: ClosedJaxpr, rules="default", limits: Limits | None = None, *,
              prelude: Sequence[Rule] = (), extend: Extend | None = None, baseline: ClosedJaxpr | None = None,
              loops: bool = True, trace: bool = False, keep_loaded: bool = False,
              measure_transformed: bool = False) -> Saturated:
    """`closed` encoded and saturated under `rules` (see `optimize` for the options); `keep_loaded` keeps the
    view of the e-graph as loaded, before any rule ran (`Saturated.loaded`)."""
    limits = limits or Limits()
    rule_list = resolve_rules(rules)
    report = Report([r.name for r in rule_list])
    report.eqns_before = count_eqns(baseline or closed)
    clock = time.perf_counter()
    deadline = clock + limits.seconds

    # The program is encoded first, so that the e-graph it goes into holds only the rules that can fire on it.
    staged, env = Staging(), {}
    enc = encode(closed, staged, env=env, close_loops=loops)
    outputs = enc.outputs if extend is None else extend(staged, enc, env)
    if signed_zeros := negative_zero_unions(enc):
        staged.load(signed_zeros)
    staged.terms.extend(x for x in outputs if not is_alias(x))  # for the rules' liveness; aliases hold no symbol
    with fresh_egraph(rule_list, prelude, staged) as prep:
        load(prep.egraph, output_actions(prep.egraph, outputs))
        report.seconds["encode"] = time.perf_counter() - clock
        loaded = view_of(prep.egraph) if keep_loaded else None

        transformed = None
        if prelude:
            clock = time.perf_counter()
            run_prelude(prep, report, prelude, trace)
            report.seconds["prelude"] = time.perf_counter() - clock
            if measure_transformed:
                clock = time.perf_counter()
                transformed = view_of(prep.egraph)
                report.seconds["serialize_transformed"] = time.perf_counter() - clock

        def restart() -> None:  # back to the program as loaded (and its prelude run): see `saturate`
            prep.pop()
            prep.push(prep.live)
            staged.load_into(prep.egraph)
            load(prep.egraph, output_actions(prep.egraph, outputs))
            if prelude:
                run_prelude(prep, Report([]), prelude)

        clock = time.perf_counter()
        saturate(prep, enc.n_eqns, limits, report, deadline=clock + _SATURATION_SHARE * (deadline - clock),
                 restart=restart, trace=trace)
        report.seconds["saturate"] = time.perf_counter() - clock

        clock = time.perf_counter()
        view = view_of(prep.egraph)
        report.seconds["serialize"] = time.perf_counter() - clock
        clock = time.perf_counter()
    report.seconds["release"] = time.perf_counter() - clock  # egglog's pop of this program's e-graph
    report.enodes, report.eclasses = len(view.nodes), len(view.classes)
    return Saturated(view, enc, class_avals(view, enc), report, loops, closed if extend is None else None, deadline,
                     transformed, loaded)


# The share of the time left after encoding that saturation may use; serializing, extracting and decoding
# take the rest (measured: together at most about as long as saturating up to the time limit).
_SATURATION_SHARE = 0.5


def extract_program(sat: Saturated, cost="flops", extractor="greedy_dag", baseline: ClosedJaxpr | None = None,
                    deadline: float | None = None, extraction=None) -> tuple[ClosedJaxpr, Report]:
    """The cheapest program of a saturated e-graph under `cost`, and the report (a copy of the
    saturation's, completed with the costs and the extraction). A caller that needs the extraction's choice
    itself (`rewrites.explain`, `rewrites.show`) extracts first and passes it as `extraction`.

    Never worse: when the outputs are the input program's own (`Saturated.program`), the input is returned
    if the extracted program costs more under the same model (`Report.kept_input`), or if `deadline` (a
    `time.perf_counter()` value, `optimize` passes `Saturated.deadline`) has passed before extraction; `ilp`
    gets the time left before it."""
    from rewrites.costs import get_cost_model, jaxpr_cost

    model = get_cost_model(cost)
    report = dataclasses.replace(sat.report, rules=list(sat.report.rules), rule_matches=dict(sat.report.rule_matches),
                                 seconds=dict(sat.report.seconds), steps=list(sat.report.steps))
    report.cost_model, report.extractor = model.name, extractor
    report.cost_before = jaxpr_cost(model, baseline) if baseline is not None else 0
    clock = time.perf_counter()
    if extraction is None:
        costs = sat.costs(model)
        report.seconds["costs"] = time.perf_counter() - clock

        clock = time.perf_counter()
        if sat.program is not None and deadline is not None and clock > deadline:
            return _kept_input(sat, report, model, "no time left")
        options = {}
        if extractor == "ilp" and deadline is not None:
            options["time_limit"] = max(0.05, deadline - clock)
        extraction = extract(sat.view, costs, method=extractor, **options)
        report.seconds["extract"] = time.perf_counter() - clock
    result = extraction
    report.extraction_status = result.status

    clock = time.perf_counter()
    optimized, stats = sat.decode(result.choice)
    report.loops_hoisted, report.loops_pruned = stats.get("hoisted", 0), stats.get("pruned", 0)
    report.seconds["decode"] = time.perf_counter() - clock
    report.eqns_after = count_eqns(optimized)
    report.cost_after = jaxpr_cost(model, optimized)
    if sat.transformed is not None:
        clock = time.perf_counter()
        transformed = _transformed_program(sat, model, extractor)
        report.cost_transformed, report.eqns_transformed = jaxpr_cost(model, transformed), count_eqns(transformed)
        report.seconds["extract_transformed"] = time.perf_counter() - clock
    if sat.program is not None:  # never worse: the input is an answer too when the outputs are its own
        cost_input = report.cost_before if baseline is sat.program else jaxpr_cost(model, sat.program)
        if report.cost_after > cost_input:
            return _kept_input(sat, report, model, "input cheaper")
    report.peak_rss_mb = peak_rss_mb()
    return optimized, report


def _transformed_program(sat: Saturated, model, extractor: str) -> ClosedJaxpr:
    """The program a transform's rules alone make (`Saturated.transformed`), extracted under `model`."""
    view = sat.transformed
    avals = class_avals(view, sat.enc)
    costs = node_costs(view, avals, sat.enc, model)
    choice = extract(view, costs, method="greedy_dag" if extractor == "ilp" else extractor).choice
    return sat.decode(choice, view, avals)[0]


def _kept_input(sat: Saturated, report: Report, model, why: str) -> tuple[ClosedJaxpr, Report]:
    from rewrites.costs import jaxpr_cost

    report.kept_input = True
    report.extraction_status = f"{report.extraction_status or 'skipped'}; kept the input ({why})"
    report.eqns_after = count_eqns(sat.program)
    report.cost_after = jaxpr_cost(model, sat.program)
    report.loops_hoisted = report.loops_pruned = 0
    report.peak_rss_mb = peak_rss_mb()
    return sat.program, report


def peak_rss_mb() -> float:
    """The process's peak resident memory so far, in MiB (Linux reports KiB, macOS bytes)."""
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def optimize(closed: ClosedJaxpr, *, options: Options | None = None, prelude: Sequence[Rule] = (),
             extend: Extend | None = None, baseline: ClosedJaxpr | None = None, certificate: bool = False,
             trace: bool = False, accuracy: bool = False, **knobs) -> tuple[ClosedJaxpr, Report]:
    """The cheapest program equal to `closed` under the rules, and a report of how it was found.

    The optimizer's knobs are an `Options` (`options=`) or its fields as keywords, `rules="default"`,
    `cost="flops"`, `extractor="greedy_dag"`, `limits=None`, `loops=True`, `measure_transformed=False`
    (`rewrites.options`; the keywords override `options`).
    `extend` and `prelude` let a transform add terms (and inputs) to the encoded program, choose the
    outputs, and expand its own nodes before the algebra runs (see `run_prelude`); `baseline` is the
    program the report's "before" counts describe (default `closed`). `loops=False` turns the loop-aware
    parts off, for comparison (`rewrites/loops.py`): bodies take their consts as inputs, extraction counts
    a body once, and dead loop outputs stay. `certificate=True` attaches `report.certificate`, a record of
    the run that `rewrites.certificate.replay` re-checks (plain runs only: not with extend/prelude/baseline).
    `report.steps` records each run of the saturation loop; `trace=True` runs one iteration per run and counts
    e-nodes and e-classes after each (`Report.steps_table`). `measure_transformed=True` (with a prelude) also
    extracts the program the transform's rules alone make and fills `report.cost_transformed` (measured: 30% more
    time on a 10,000-equation gradient, a serialization and an extraction more).
    `accuracy=True` attaches `report.accuracy`: both programs' bits of error against the exact results, and
    a warning when `real`/`unsafe` rules changed results (`rewrites.accuracy`; plain runs only).
    `closed` may be a live `jax.core.ClosedJaxpr`, converted first (`ir.from_jax.convert`)."""
    from ir.jax_convert import as_program
    from rewrites.costs import get_cost_model

    o = merge_options("optimize", options, knobs)
    closed = as_program(closed)
    model = get_cost_model(o.cost)  # an unknown model fails before saturating
    transformed = bool(prelude) or extend is not None or baseline is not None
    if certificate and transformed:
        from rewrites.certificate import CertificateError

        raise CertificateError("a certificate records a plain optimize run; this one has a transform's "
                               "extend/prelude/baseline, whose output does not compute what its input does")
    if accuracy and transformed:
        from rewrites.accuracy import UnsupportedAccuracy

        raise UnsupportedAccuracy("an accuracy report compares a plain optimize run's output with its input; this "
                                  "one has a transform's extend/prelude/baseline, whose output computes something else")
    sat = saturated(closed, o.rules, o.limits, prelude=prelude, extend=extend, baseline=baseline, loops=o.loops,
                    trace=trace, measure_transformed=o.measure_transformed)
    optimized, report = extract_program(sat, model, o.extractor, baseline=baseline or closed, deadline=sat.deadline)
    if certificate:
        from rewrites.certificate import make_certificate

        report.certificate = make_certificate(closed, optimized, report, rules=o.rules, cost=o.cost,
                                              extractor=o.extractor, limits=o.limits, loops=o.loops)
    if accuracy:
        from ir.errors import UnsupportedPrimitive
        from rewrites.accuracy import UnsupportedAccuracy, measure_accuracy, unsupported

        try:
            report.accuracy = measure_accuracy(closed, optimized, o.rules, report.rule_matches)
        except (UnsupportedPrimitive, UnsupportedAccuracy) as e:
            report.accuracy = unsupported(str(e))
    return optimized, report


def node_costs(view, avals: dict, enc, model) -> list[float]:
    """The cost of every node of `view` under `model` (leaves and unreachable nodes cost 0), times how
    often it runs inside loops (`rewrites.loops.loop_weights`)."""
    memo: dict = {}
    costs = [_node_cost(view, i, avals, enc, model, memo) for i in range(len(view.nodes))]
    control = min([CONTROL_FLOW_COST, *(c for c in memo.values() if c > 0)])
    costs = [control if is_control(view.nodes[i]) else c for i, c in enumerate(costs)]
    if hasattr(model, "node_costs"):  # a price on the whole e-graph (rewrites.accuracy.local)
        costs = model.node_costs(view, avals, enc, costs)
    weights = loop_weights(view, enc) if enc.close_loops else None
    return costs if weights is None else [c * w for c, w in zip(costs, weights, strict=True)]


def _node_cost(view, i: int, avals: dict, enc, model, memo: dict) -> float:
    node = view.nodes[i]
    if node.op in _LEAVES:
        return 0
    if is_control(node):
        return CONTROL_FLOW_COST  # or less: see node_costs
    cls = view.node_class[i]
    if cls not in avals:
        return 0  # unreachable from any leaf: never extractable, its cost does not matter
    in_avals = tuple(avals[c] for c in operand_classes(view, node))
    key = (node.op, node.payload, in_avals)
    cost = memo.get(key)
    if cost is None:
        out = avals[cls]
        cost = memo[key] = model(node_primitive(node), node_params(node, list(in_avals), enc), list(in_avals),
                                 list(out) if isinstance(out, tuple) else [out])
    return cost


def count_eqns(closed: ClosedJaxpr) -> int:
    """Equations the program holds, with inlined calls (`jit`) counted by their bodies and control flow
    with its bodies'."""
    total = 0
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive in INLINED:
            inner = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
            total += count_eqns(inner)
        else:
            total += 1 + sum(count_eqns(body) for body in subjaxprs(eqn)) if eqn.primitive in BODY_PARAMS else 1
    return total
