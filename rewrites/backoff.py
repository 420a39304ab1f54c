"""egg's back-off scheduling, kept in Python over egglog's own matching.

Constant folding retires the node it folds (`subsume`, `rewrites.rules.fold`), so that no rule matches
`1.0 * 1.0` or `integer_pow[y=k](1.0)` again: without that the classes of 0 and 1 keep growing (`x*1.0` collects
`1^k` for every k, `x+0.0` collects `k*0`) and saturation never ends. egglog's plain `run` skips retired rows;
egglog 13.2's `back_off` scheduler does not (egglog-experimental issue #43). So the engine runs its rule groups
plainly and keeps the back-off state here, as egg's `BackoffScheduler` and egglog's `back_off` keep it: a rule
that matches more than its limit in an iteration is banned for `ban_length` iterations, and each later ban
doubles both its limit and its length. One difference: egglog's plain run has already applied the matches it
counted, so the iteration that bans a rule applies them once (egglog's scheduler would skip them).

A rule here is one egglog rule in its own ruleset (`rewrites.engine.Prepared`), known by its id.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class _Stats:
    times_banned: int = 0
    banned_until: int = 0  # the first iteration it runs in again


@dataclass
class BackOff:
    match_limit: int
    ban_length: int
    stats: dict[int, _Stats] = field(default_factory=dict)

    def banned(self, iteration: int) -> frozenset[int]:
        """The rules that sit out iteration `iteration` (counted from 0)."""
        return frozenset(rule for rule, s in self.stats.items() if s.banned_until > iteration)

    def record(self, iteration: int, matches: dict[int, int]) -> None:
        """Iteration `iteration` ran, and each rule of `matches` matched so many times in it."""
        for rule, count in matches.items():
            s = self.stats.setdefault(rule, _Stats())
            if count > self.match_limit << s.times_banned:
                s.banned_until = iteration + (self.ban_length << s.times_banned)
                s.times_banned += 1

    def unban(self, iteration: int) -> bool:
        """Lift every ban at iteration `iteration` (their lengths and limits stay doubled), as egglog's scheduler
        does when nothing else would change the e-graph; whether any rule was banned."""
        banned = [s for s in self.stats.values() if s.banned_until > iteration]
        for s in banned:
            s.banned_until = 0
        return bool(banned)
