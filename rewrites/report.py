"""What an optimize run reports: the saturation's bounds and stop reason, the loop run by run (`Step`), the
e-graph's size, costs before and after, the rules that fired, times, and what the optional parts add
(certificate, accuracy, the rules on a derivation)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Step:
    """One `run` of the saturation loop: `iterations` iterations of the rules (one; none for the prelude and the
    final analyses), the e-graph after it and each rule's matches in it.

    egglog 13.2 reports per-rule search times of 0-11 µs even for rules with thousands of matches (its
    backend does not attribute time per rule), so a step's time is measured here, around the run."""

    phase: str  # "prelude" (a transform's definitions expanded), "rules" (the rule list), "analysis" (final facts)
    iterations: int
    seconds: float
    egraph_nodes: int  # table rows after the step
    matches: dict[str, int]  # rule -> matches in this step (rules that matched)
    enodes: int | None = None  # term e-nodes and e-classes after the step: counted with `trace=True` only
    eclasses: int | None = None


@dataclass
class Report:
    rules: list[str]
    iterations: int = 0
    enodes: int = 0
    eclasses: int = 0
    stop_reason: str = ""  # saturated | iterations | nodes | seconds
    rule_matches: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    cost_model: str = ""
    extractor: str = ""
    extraction_status: str = ""
    cost_before: float = 0
    cost_after: float = 0
    # a transform's program as its rules expand it, before any algebra rule ran (`prelude` runs only), extracted
    # under the same model: what the optimization of a gradient or batched program should be measured against
    cost_transformed: float | None = None
    eqns_transformed: int | None = None
    eqns_before: int = 0
    eqns_after: int = 0
    prelude_enodes: int = 0  # rows in the e-graph once the prelude rules are saturated (0: no prelude)
    loops_hoisted: int = 0  # equations decoding moved out of loop bodies (loop-invariant code motion)
    loops_pruned: int = 0  # control-flow outputs dropped because nothing reads them (rewrites/loops.py)
    egraph_nodes: int = 0  # rows of every e-graph table (terms and analysis facts): what `Limits.nodes` bounds
    kept_input: bool = False  # the input program was returned: extraction found nothing cheaper (or no time)
    peak_rss_mb: float = 0  # the process's peak resident memory so far, in MiB
    certificate: dict | None = None  # with optimize(..., certificate=True): rewrites/certificate.py
    accuracy: dict | None = None  # with optimize(..., accuracy=True): rewrites/accuracy/
    steps: list[Step] = field(default_factory=list)  # the saturation loop's runs, in order
    shaping_rules: dict[str, int] | None = None  # rule -> steps on the derivation (`rewrites.explain` fills it)

    def __post_init__(self):
        self.steps = [s if isinstance(s, Step) else Step(**s) for s in self.steps]  # from `as_dict` (disk cache)

    def summary(self) -> str:
        fired = sorted(((n, c) for n, c in self.rule_matches.items() if c), key=lambda nc: (-nc[1], nc[0]))
        lines = [
            f"saturation: {self.iterations} iterations, stopped by {self.stop_reason}; "
            f"{self.enodes} e-nodes in {self.eclasses} e-classes ({self.egraph_nodes} table rows); "
            f"peak memory {self.peak_rss_mb:,.0f} MiB",
            self._cost_line(),
            "seconds: " + ", ".join(f"{k} {v:.3f}" for k, v in self.seconds.items()),
            f"rules fired ({len(fired)} of {len(self.rules)}): " + (", ".join(f"{n} ×{c}" for n, c in fired) or "none"),
        ]
        if self.kept_input:
            lines.append("kept the input program: " + ("no time was left to extract" if self.stop_reason == "seconds"
                                                        else "the extracted program was costlier"))
        if self.loops_hoisted or self.loops_pruned:
            lines.append(f"loops: {self.loops_hoisted} equations hoisted out of bodies, "
                         f"{self.loops_pruned} dead outputs dropped")
        if self.accuracy is not None:
            from rewrites.accuracy import summary_lines

            lines += summary_lines(self.accuracy)
        if self.shaping_rules is not None:
            lines.append("rules on the derivation (what shaped the result): "
                         + (", ".join(f"{n} ×{c}" for n, c in sorted(self.shaping_rules.items())) or "none"))
        if self.steps:
            lines.append("runs of the saturation loop:\n" + self.steps_table())
        return "\n".join(lines)

    def _cost_line(self) -> str:
        tail = f"; extractor {self.extractor} ({self.extraction_status})"
        if self.cost_transformed is None:
            return (f"cost ({self.cost_model}): {_num(self.cost_before)} -> {_num(self.cost_after)}; "
                    f"equations {self.eqns_before} -> {self.eqns_after}" + tail)
        return (f"cost ({self.cost_model}): {_num(self.cost_transformed)} as transformed -> {_num(self.cost_after)} "
                f"optimized (the input program: {_num(self.cost_before)}); equations {self.eqns_transformed} -> "
                f"{self.eqns_after} (input {self.eqns_before})" + tail)

    def steps_table(self) -> str:
        """The saturation loop run by run: iterations, e-graph size, matches and the rules that matched most."""
        traced = any(s.enodes is not None for s in self.steps)
        head = f"{'phase':<9}{'iters':>6}{'seconds':>9}{'rows':>9}"
        head += f"{'e-nodes':>9}{'classes':>9}" if traced else ""
        lines = [head + f"{'matches':>9}  most matches"]
        for s in self.steps:
            top = sorted(((n, c) for n, c in s.matches.items() if c), key=lambda nc: (-nc[1], nc[0]))
            sizes = f"{s.enodes if s.enodes is not None else '':>9}{s.eclasses if s.eclasses is not None else '':>9}"
            lines.append(f"{s.phase:<9}{s.iterations:>6}{s.seconds:>9.3f}{s.egraph_nodes:>9}"
                         + (sizes if traced else "") + f"{sum(s.matches.values()):>9}  "
                         + ", ".join(f"{n} ×{c}" for n, c in top[:4]) + (" ..." if len(top) > 4 else ""))
        return "\n".join(lines)

    def as_dict(self, times: bool = True) -> dict:
        """The report as plain data; `times=False` leaves out what changes from run to run of the same
        program (seconds, the process's peak memory)."""
        d = dict(self.__dict__)
        d["steps"] = [dict(s.__dict__) for s in self.steps]
        if not times:
            del d["seconds"], d["peak_rss_mb"]
            for step in d["steps"]:
                del step["seconds"]
        return d


def _num(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:,.6g}"
