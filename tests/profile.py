"""The hypothesis profile of the run (`HYPOTHESIS_PROFILE`, default `ci`; tests/conftest.py loads it). Tests
that run every row of a deterministic table nightly and a subset under `ci` read `NIGHTLY`."""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
NIGHTLY = PROFILE == "nightly"
