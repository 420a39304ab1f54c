"""The hypothesis profile of the run (`HYPOTHESIS_PROFILE`, default `ci`; tests/conftest.py loads it). Tests
that run every row of a deterministic table nightly and a subset under `ci` read `NIGHTLY`."""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
NIGHTLY = PROFILE == "nightly"
# Random programs of the semantics run (tests/rewrites/test_semantics_run.py): ~1 s each under three rule sets.
SEMANTICS_PROGRAMS = 2000 if NIGHTLY else 16
