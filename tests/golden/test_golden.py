"""The golden record (`tests/golden/*.json`) holds every oracle case's optimized program, JVP, VJP, batched
program and gradient as text. Deriving them again must give the same bytes: in this process, and in another
process started with another `PYTHONHASHSEED` that derives them on a pool of two workers (DESIGN.md's
determinism). A change meant to alter outputs re-records them (`python -m tests.golden record --jobs 2`) and the
diff of the JSON is part of its review.

Budget: under the `ci` profile a share of each family (and `residual_chain_16`, whose gradient once had 326 or
327 equations depending on the order in which egglog numbered the classes); `nightly` every case.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.golden import cases, differences, recorded
from tests.profile import ci_share

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = [c.id for c in ci_share(cases(), 60, by=lambda c: c.family)]
IDS = sorted(set(SAMPLE) | {"program/residual_chain_16"})


def test_this_process_derives_the_recorded_programs():
    diffs = differences(IDS[::3], jobs=1)
    assert not diffs, "\n\n".join(diffs)


def test_another_hash_seed_on_two_workers_derives_the_recorded_programs():
    seed = "0" if os.environ.get("PYTHONHASHSEED") != "0" else "12345"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    run = subprocess.run([sys.executable, "-m", "tests.golden", "check", "--jobs", "2", *IDS], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, f"PYTHONHASHSEED={seed}, 2 workers:\n{run.stdout[-20000:]}\n{run.stderr[-5000:]}"
    assert f"{len(IDS)} cases checked, 0 differences" in run.stdout


def test_the_record_holds_every_oracle_case_and_every_derivation():
    want = recorded()
    assert sorted(want) == sorted(c.id for c in cases())
    kinds = {what for programs in want.values() for what in programs}
    assert kinds == {"optimize", "jvp", "vjp", "vmap", "grad"}
    texts = [text for programs in want.values() for text in programs.values()]
    assert all(re.match(r"\{ lambda |let |[A-Z]\w+: ", t) for t in texts)  # a program or a typed error
