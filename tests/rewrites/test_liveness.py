"""Which rules the engine registers for a program (`rewrites.liveness`): the symbols of rules and of loaded
terms, the fixpoint, and that leaving out the rules that cannot fire changes no result."""

from collections import OrderedDict

import numpy as np
import pytest
from egglog import String, eq, rewrite, rule, union, var
from egglog import bindings as eb

import ir
import ir.numpy as jnp
from eval.oracle import load_fixtures, parse_case
from ir.text import print_jaxpr
from rewrites import engine
from rewrites.encode import Staging, egg_call, egg_str, encode
from rewrites.liveness import command_symbols, expr_symbols, live_eggs, parts
from rewrites.rule import EXACT, Rule
from rewrites.rules.common import T, lit, x, y
from rewrites.rulesets import all_rules, analysis_rules
from rewrites.terms import Arr, args_list, call, get
from tests.oracle_paths import ORACLE


def _rule(name, *eggs):
    return Rule(name, "test", EXACT, "test", tuple(eggs))


def test_symbols_of_a_rewrite_are_its_constructors():
    [(needs, makes)] = parts(rewrite(T.mul(x, lit(1.0))).to(T.neg(x)))
    assert needs == {"p_mul", "scalar"} and makes == {"p_neg"}


def test_a_literal_first_argument_refines_the_symbol():
    s = String("s")
    [(needs, makes)] = parts(rewrite(get(call("custom_jvp_call", s, args_list([x, y])), 0)).to(
        get(call("remat2", s, args_list([x])), 0)))
    assert "call:custom_jvp_call" in needs and "call" not in needs
    assert {"call", "call:remat2"} <= makes


def test_a_multi_result_primitive_is_its_constructor():
    own = {"dimension": 0, "is_stable": True, "num_keys": 1}
    [(needs, makes)] = parts(rewrite(get(T.sort(args_list([x, y]), **own), 0)).to(
        get(T.top_k(args_list([x]), k=1), 0)))
    assert {"p_sort", "get", "cons", "nil"} <= needs and "call" not in needs | makes
    assert "p_top_k" in makes


def test_an_action_with_a_variable_first_argument_makes_every_refinement():
    s, e = var("s", String), Arr.inp(0)
    [(_, makes)] = parts(rule(eq(x).to(get(call(s, "", args_list([y])), 0))).then(
        union(x).with_(get(call(s, "k", args_list([e])), 0))))
    assert "call:*" in makes
    lazy = _rule("needs-remat", rewrite(get(call("remat2", "", args_list([x])), 0)).to(x))
    args = {"cons", "nil", "get"}
    assert live_eggs([[lazy]], {"call:*", *args}) and not live_eggs([[lazy]], {"call:composite", *args})


def test_both_directions_of_a_birewrite():
    from egglog import birewrite

    egg = birewrite(T.exp(T.log(x))).to(T.sqrt(x))
    assert [n for n, _ in parts(egg)] == [{"p_exp", "p_log"}, {"p_sqrt"}]


def test_the_fixpoint_follows_what_live_rules_make():
    first = _rule("neg-to-abs", rewrite(T.neg(x)).to(T.abs(x)))
    second = _rule("abs-to-sign", rewrite(T.abs(x)).to(T.sign(x)))
    dead = _rule("exp-to-log", rewrite(T.exp(x)).to(T.log(x)))
    live = live_eggs([[dead, second, first]], {"p_neg"})
    assert set(live) == {id(first.egg[0]), id(second.egg[0])}


def test_a_lazy_rule_is_built_only_once_its_trigger_is_present():
    built = []

    def build():
        built.append(1)
        return (rewrite(T.neg(x)).to(x),)

    lazy = Rule.lazy("lazy-neg", "test", EXACT, "test", build, trigger="p_neg")
    assert not live_eggs([[lazy]], {"p_abs"}) and not built
    assert live_eggs([[lazy]], {"p_neg"}) and built == [1]


def test_command_symbols():
    term = egg_call("call", egg_str("remat2"), egg_str(""), egg_call("nil"))
    found = command_symbols([eb.Union(eb.PanicSpan(), egg_call("ref", eb.Lit(eb.PanicSpan(), eb.Int(1))), term)])
    assert {"call", "call:remat2", "nil", "ref"} <= found


def test_expr_symbols():
    assert {"p_mul", "inp", "cons", "nil"} <= expr_symbols([args_list([T.mul(Arr.inp(0), Arr.inp(1))])])


def _lazy_rules():
    from transforms.ad.programs import ad_rules
    from transforms.batching.programs import vmap_rules

    return [r for r in (*ad_rules(), *vmap_rules()) if r.trigger is not None]


def test_every_lazy_rule_needs_its_trigger():
    """A trigger is a symbol every direction of every egglog rule of its rule needs: the rule can fire on no
    e-graph without it, so not building it then changes nothing."""
    for r in _lazy_rules():
        for egg in r.egg:
            for needs, _ in parts(egg):
                assert r.trigger in needs, r.name


def test_staged_symbols_cover_what_is_loaded():
    """Every constructor in the e-graph after loading is among the symbols the rules were chosen by."""
    def f(x, w):
        return jnp.sum(jnp.tanh(x @ w) * 2.0, axis=0)

    closed = ir.make_jaxpr(f)(np.ones((3, 4)), np.ones((4, 2)))
    staged = Staging()
    encode(closed, staged)
    with engine.fresh_egraph([], staged=staged) as prep:
        state = prep.egraph._state
        loaded = {state.callable_ref_to_egg(fn.__egg_ref__)[0] for fn, size in prep.egraph.all_function_sizes() if size}
    symbols = staged.symbols()
    constructors = {name for name in loaded if name.startswith("p_") or name in ("inp", "scalar", "ref", "const")}
    assert constructors and constructors <= symbols


def _programs(n):
    return [parse_case(c) for c in load_fixtures([ORACLE], ["programs"])[:n]]


@pytest.mark.parametrize("closed", _programs(6), ids=lambda c: f"{len(c.jaxpr.eqns)}-eqns")
def test_only_live_rules_give_the_same_program_and_report(closed, monkeypatch):
    """Registering every rule instead of the live ones changes neither the program nor the report."""
    live, live_report = engine.optimize(closed)
    monkeypatch.setattr(engine, "live_eggs",
                        lambda groups, symbols: {id(e): e for g in groups for r in g for e in r.egg})
    monkeypatch.setattr(engine._bases, "pool", OrderedDict(), raising=False)
    full, full_report = engine.optimize(closed)
    assert print_jaxpr(live) == print_jaxpr(full)
    assert live_report.as_dict(times=False) == full_report.as_dict(times=False)


def test_analysis_and_algebra_rules_are_registered_only_where_they_can_fire():
    def f(x):
        y = -x
        return -y

    closed = ir.make_jaxpr(f)(np.ones(3))
    staged = Staging()
    encode(closed, staged)
    live = live_eggs([analysis_rules(), all_rules()], staged.symbols())
    neg_neg = next(r for r in all_rules() if r.name == "neg-neg")
    log_sqrt = next(r for r in all_rules() if r.name == "log-sqrt")
    assert id(neg_neg.egg[0]) in live and id(log_sqrt.egg[0]) not in live


def _count_registrations(monkeypatch) -> list:
    """The e-graphs created from here on (growing one is not counted), in a thread with an empty pool."""
    calls = []
    register = engine._register

    def counting(*args):
        calls.append(args)
        return register(*args)

    monkeypatch.setattr(engine, "_register", counting)
    monkeypatch.setattr(engine._bases, "pool", OrderedDict(), raising=False)
    return calls


def test_programs_share_egraphs_that_hold_at_most_twice_their_live_rules(monkeypatch):
    """Unary programs of overlapping live rules share few e-graphs, grown as needed; each ran in one holding
    every rule it could fire and at most `_RATIO` times as many."""
    calls = _count_registrations(monkeypatch)
    unaries = [jnp.sin, jnp.cos, jnp.exp, jnp.log, jnp.tanh, jnp.sqrt, jnp.abs]
    chosen = []
    original = engine.prepared

    def recording(*args, **kwargs):
        prep, live = original(*args, **kwargs)
        chosen.append((len(prep.eggs), len(live)))
        return prep, live

    monkeypatch.setattr(engine, "prepared", recording)
    for f in unaries:
        engine.optimize(ir.make_jaxpr(f)(np.ones(3)))
    assert len(calls) < len(unaries) / 2
    assert all(held <= engine._RATIO * needed for held, needed in chosen)


def test_a_program_uses_an_egraph_of_another_prelude_that_holds_its_rules(monkeypatch):
    """jit(grad(f)) optimizes the gradient program in the e-graph its derivation registered."""
    from transforms.ad.programs import grad_program

    calls = _count_registrations(monkeypatch)
    closed = ir.make_jaxpr(lambda x: jnp.sum(jnp.tanh(x) * 2.0))(np.ones(3))
    gradient, _ = grad_program(closed, [0])
    engine.optimize(gradient)
    assert len(calls) == 1


def test_a_program_of_few_live_rules_gets_an_egraph_of_its_own_and_the_same_result(monkeypatch):
    """A program that could fire under half the rules of every pooled e-graph gets one of just its rules, which
    gives it the same program and report as an e-graph holding every rule."""
    closed = ir.make_jaxpr(lambda x: jnp.tanh(x) * 2.0)(np.ones(3))
    calls = _count_registrations(monkeypatch)
    everything, _ = engine.prepared(all_rules(), (), None)  # one e-graph of every rule in the pool
    program, report = engine.optimize(closed)
    assert len(calls) == 2
    (small,) = [p for p in engine._bases.pool.values() if p is not everything]
    assert len(small.eggs) * engine._RATIO < len(everything.eggs)
    monkeypatch.setattr(engine._bases, "pool", OrderedDict(), raising=False)
    monkeypatch.setattr(engine, "live_eggs",
                        lambda groups, symbols: {id(e): e for g in groups for r in g for e in r.egg})
    full, full_report = engine.optimize(closed)
    assert print_jaxpr(program) == print_jaxpr(full)
    assert report.as_dict(times=False) == full_report.as_dict(times=False)
