"""The repo's fixture copy must stay byte-identical to ../shared/oracle when that folder is present."""

import filecmp

import pytest

from tests.oracle_paths import ORACLE, SHARED_ORACLE


def test_oracle_copy_in_sync():
    if not SHARED_ORACLE.is_dir():
        pytest.skip(f"no shared oracle at {SHARED_ORACLE} (a clone without the team's shared folder)")
    shared = sorted(p.name for p in SHARED_ORACLE.iterdir())
    ours = sorted(p.name for p in ORACLE.iterdir())
    assert ours == shared
    _, mismatch, errors = filecmp.cmpfiles(SHARED_ORACLE, ORACLE, shared, shallow=False)
    assert not mismatch and not errors, f"out of sync: {mismatch + errors}"
