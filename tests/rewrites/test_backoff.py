"""The engine's back-off (rewrites.backoff): egg's ban schedule, kept in Python over egglog's plain runs."""

from rewrites.backoff import BackOff


def test_a_rule_past_its_limit_sits_out_then_both_limit_and_ban_double():
    b = BackOff(match_limit=10, ban_length=3)
    b.record(0, {1: 10, 2: 11})  # at the limit runs on; past it is banned for iterations 1 and 2
    assert b.banned(1) == b.banned(2) == {2} and b.banned(3) == frozenset()
    b.record(3, {2: 20})  # the limit is now 20: not past it
    assert b.banned(4) == frozenset()
    b.record(4, {2: 21})  # past 20: banned for 6 - 1 iterations
    assert all(b.banned(i) == {2} for i in range(5, 10)) and b.banned(10) == frozenset()


def test_unban_lifts_the_bans_in_force_and_keeps_the_doubled_limits():
    b = BackOff(match_limit=10, ban_length=3)
    assert not b.unban(0)
    b.record(0, {7: 50})
    assert b.unban(1) and b.banned(1) == frozenset() and not b.unban(1)
    b.record(1, {7: 15})  # the limit stayed doubled (20)
    assert b.banned(2) == frozenset()
