"""The optimizer's knobs, declared once: `Limits` (bounds on saturation) and `Options` (what `optimize` runs
with: rule set, cost model, extractor, limits, loop rewrites, the transformed program's cost).

`optimize`, `jit`, `grad`/`value_and_grad`/`jvp`/`vjp`, `jacfwd`/`jacrev`/`hessian` and `vmap` take either an
`Options` (`options=`) or its fields as keywords (`rules="fast"`, `cost="bytes"`), or both (the keywords win);
`merge_options` is the one place that reads them, and an unknown keyword is a TypeError naming the knobs.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Limits:
    """Bounds on saturation. Sizes scale with the program: `nodes` defaults to
    `node_base + nodes_per_eqn * equations`; a rule matching more than its back-off match limit in an
    iteration is skipped for `ban_length` iterations (explosive rules get a tighter limit)."""

    iterations: int = 8
    nodes: int | None = None
    seconds: float = 20.0
    node_base: int = 5_000
    nodes_per_eqn: int = 8
    match_limit_base: int = 1_000
    match_limit_per_eqn: int = 10
    explosive_match_limit_base: int = 200
    explosive_match_limit_per_eqn: int = 2
    ban_length: int = 3

    def node_limit(self, n_eqns: int) -> int:
        return self.nodes if self.nodes is not None else self.node_base + self.nodes_per_eqn * n_eqns


@dataclass(frozen=True)
class Options:
    """How a program is optimized: the rule set (a set name with +NAME/-NAME/+FILE.rules items, or Rule
    objects), the cost model (a name or a CostModel), the extractor, the saturation `limits` (None: the
    defaults), the loop-aware rewrites (`loops=False`: off, for comparison) and, for a transform's program,
    whether to also cost the unoptimized transformed program (`Report.cost_transformed`)."""

    rules: object = "default"
    cost: object = "flops"
    extractor: str = "greedy_dag"
    limits: Limits | None = None
    loops: bool = True
    measure_transformed: bool = False


DEFAULT_OPTIONS = Options()
KNOBS = tuple(f.name for f in fields(Options))


def merge_options(where: str, options: Options | None, knobs: dict) -> Options:
    """`options` (default `DEFAULT_OPTIONS`) with the knobs given as keywords replaced; `where` names the
    function called, for the TypeError an unknown keyword or a non-`Options` `options` raises."""
    unknown = sorted(set(knobs) - set(KNOBS))
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}; the optimizer's options "
                        f"are {', '.join(KNOBS)} (or options=Options(...))")
    if options is None:
        options = DEFAULT_OPTIONS
    elif not isinstance(options, Options):
        raise TypeError(f"{where}(): options must be a rewrites.options.Options, got {type(options).__name__}")
    return replace(options, **knobs) if knobs else options
