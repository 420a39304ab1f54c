"""Test-wide settings: hypothesis profiles, and no on-disk cache of optimized programs (each test
builds what it checks; tests/transforms/test_diskcache.py turns the cache on for itself).

`ci` (the default) keeps `make test` within minutes on a 2-core machine; `nightly` runs deep
searches: `HYPOTHESIS_PROFILE=nightly make test`. Tests set no `max_examples` of their own unless
they need a different budget than the profile's, so the profile decides.
"""

import os

from hypothesis import HealthCheck, settings

from tests.profile import PROFILE

settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(PROFILE)
os.environ["EQJAX_CACHE"] = "off"


def pytest_collection_modifyitems(config, items):
    """Marks the whole-corpus sweeps of `tests.profile.SWEEPS` with `sweep`."""
    import pytest

    from tests.profile import SWEEPS

    matched = set()
    for item in items:
        for prefix in SWEEPS:
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.sweep)
                matched.add(prefix)
    if not config.args or config.args == ["tests"]:  # a whole run: every row must still name a test
        stale = sorted(set(SWEEPS) - matched)
        if stale:
            raise pytest.UsageError(f"tests.profile.SWEEPS rows that match no test: {stale}")
