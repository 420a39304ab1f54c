"""Checks of the `eqjax` options whose values name something: a rule set, a cost model, an extractor, an input
to differentiate, a fixture check. A value that names nothing is a `UsageError`, which the command line
prints as one line listing the valid choices, with exit status 2 (argparse's own usage errors also exit 2)."""

from __future__ import annotations


class UsageError(Exception):
    """A command-line value that names nothing valid; the message lists the valid choices."""


def check_rules(spec: str, option: str = "--rules") -> None:
    """A rule spec: a set name, then +NAME / -NAME / +FILE.rules items (rewrites.rulesets.resolve_rules)."""
    from rewrites.rule import RuleError
    from rewrites.rulesets import RULE_SETS, resolve_rules

    head = spec.split(",")[0].strip()
    if head not in RULE_SETS:
        raise UsageError(f"{option}: unknown rule set {head!r}; choose from {', '.join(RULE_SETS)}, optionally "
                         "followed by +NAME, -NAME (names from `eqjax rules list`) or +FILE.rules items")
    try:
        resolve_rules(spec)
    except RuleError as e:
        raise UsageError(f"{option}: {e} (names from `eqjax rules list`)") from None


def check_rule_set(name: str, option: str, extra: tuple[str, ...] = ()) -> None:
    """A bare rule set name (no items), or one of `extra`."""
    from rewrites.rulesets import RULE_SETS

    if name not in (*RULE_SETS, *extra):
        raise UsageError(f"{option}: unknown rule set {name!r}; choose from {', '.join((*RULE_SETS, *extra))}")


def check_cost(name: str, option: str = "--cost") -> None:
    from rewrites.costs import COST_MODELS, PROFILED_NAMES, split_accuracy

    fixed = [*COST_MODELS, *(n for n in PROFILED_NAMES if not n.endswith(":PATH"))]
    try:
        base, _ = split_accuracy(name)
    except ValueError as e:
        raise UsageError(f"{option}: {e}") from None
    if base in fixed or (base.startswith("learned:") and len(base) > len("learned:")):
        return
    raise UsageError(f"{option}: unknown cost model {name!r}; choose from {', '.join(fixed)}, learned:PATH, "
                     "each also as NAME+accuracy or NAME+accuracy:WEIGHT")


def check_extractor(name: str) -> None:
    from rewrites.extract import EXTRACTORS

    if name not in EXTRACTORS:
        raise UsageError(f"--extractor: unknown extractor {name!r}; choose from {', '.join(EXTRACTORS)}")


def check_optimizer_options(args) -> None:
    """The options `_optimizer_args` adds: --rules, --cost, --extractor."""
    check_rules(args.rules)
    check_cost(args.cost)
    check_extractor(args.extractor)


def parse_argnums(text: str | None, invars) -> list[int]:
    """`--argnums`: comma-separated positions of differentiable inputs, negative ones counted from the end
    as JAX counts them, resolved to positions in 0..n-1 (default: input 0)."""
    from transforms.ad.build import float_positions

    n = len(invars)
    floats = float_positions(invars)
    if floats:
        choices = f"choose from {', '.join(map(str, floats))} (negative positions count from the end)"
    else:
        choices = "the program has no differentiable (floating-point) input"
    items = [t.strip() for t in (text or "0").split(",")]
    try:
        argnums = [int(t) for t in items]
    except ValueError:
        raise UsageError(f"--argnums: {text!r} is not comma-separated input positions; {choices}") from None
    for a in argnums:
        if not -n <= a < n:
            raise UsageError(f"--argnums: {a} is out of range for a program of {n} inputs; {choices}")
        if a % n not in floats:
            raise UsageError(f"--argnums: input {a} is {invars[a].aval}, which has no gradient; {choices}")
    return [a % n for a in argnums]


def require_oracle(oracle, instead: str) -> None:
    """The default fixtures must be there (a wheel installs them in <prefix>/share/eqjax/oracle/, a checkout has
    tests/oracle/); `instead` names the option that reads other fixtures."""
    if not oracle.is_dir():
        raise UsageError(f"no oracle fixtures at {oracle} (a wheel installs them in <prefix>/share/eqjax/oracle/, "
                         f"a checkout has tests/oracle/); {instead}")
