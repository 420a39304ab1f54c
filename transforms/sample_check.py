"""Verdicts for transform rules checked on oracle equation samples (`eval.samples`).

    verdicts = sample_verdicts("vjp", prims, check, per_primitive=2)

`check(sample)` returns None when the rule agrees with its reference on the sample, else a description
of the disagreement. A primitive's verdict is `ok` when every sample agrees, `unsound` at the first that
does not (the counterexample names the oracle case and the equation's operand types), `unknown` when no
oracle program has the primitive or the transform has no rule for a sample (the reason names what).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

import numpy as np

from eval.oracle import DEFAULT_ORACLE, load_fixtures
from eval.samples import Sample, equation_samples
from ir.errors import EqjaxError
from rewrites.verify import Counterexample, Verdict

_SAMPLES: dict[int, dict[str, list[Sample]]] = {}
SAMPLE_POOL = 8  # equations kept per primitive, among which the check picks those it applies to


def oracle_samples(per_primitive: int = 2) -> dict[str, list[Sample]]:
    if per_primitive not in _SAMPLES:
        _SAMPLES[per_primitive] = equation_samples(load_fixtures([DEFAULT_ORACLE]), per_primitive)
    return _SAMPLES[per_primitive]


def verdict_name(prefix: str, prim: str) -> str:
    return f"{prefix}-{prim}".replace("_", "-")


def sample_verdicts(prefix: str, prims: Iterable[str], check: Callable[[Sample], str | None], reference: str,
                    per_primitive: int = 2, applies: Callable[[Sample], bool] = lambda sample: True,
                    names: Collection[str] = ()) -> list[Verdict]:
    """`applies(sample)`: whether the check means something on the sample (e.g. it has a float operand);
    `names`: only the verdicts of these names (default all)."""
    samples = {p: kept[:per_primitive] for p, s in oracle_samples(max(SAMPLE_POOL, per_primitive)).items()
               if (kept := [x for x in s if applies(x)])}
    out = []
    for prim in sorted(prims):
        name = verdict_name(prefix, prim)
        if names and name not in names:
            continue
        if prim not in samples:
            out.append(Verdict(name, "exact", "unknown", "-", "unknown", "unknown",
                               reason="no oracle program has this primitive where the check applies"))
            continue
        found, unsupported = None, []
        for sample in samples[prim]:
            try:
                with np.errstate(all="ignore"):
                    problem = check(sample)
            except EqjaxError as e:
                unsupported.append(f"{sample}: {e}")
                continue
            if problem is not None:
                found = Counterexample("real", str(sample.closed.in_avals[0].dtype) if sample.args else "-",
                                       (("sample", str(sample)),), problem, reference, reference)
                break
        checked = f"{len(samples[prim]) - len(unsupported)} oracle samples against {reference}"
        if found is not None:
            out.append(Verdict(name, "exact", "unsound", "-", "unsound", "unsound", found,
                               f"the rule disagrees with {reference}"))
        elif unsupported and len(unsupported) == len(samples[prim]):
            out.append(Verdict(name, "exact", "unknown", "-", "unknown", "unknown", reason="; ".join(unsupported)))
        else:
            out.append(Verdict(name, "exact", "exact", "-", "exact", "ok", reason=checked,
                               details="; ".join(unsupported)))
    return out
