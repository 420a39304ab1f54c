"""The build's one addition to pyproject.toml: the wheel carries the JAX oracle fixtures.

`tests/oracle/*.json` stays the one copy in the repository (the copy of ../shared/oracle that
tests/test_oracle_copy.py checks); building a wheel copies it to `eval/oracle_fixtures/`, where
`eval.oracle.DEFAULT_ORACLE` finds it outside a checkout (`eqjax conformance`, the benches, `rules
semantics`, `calibrate`). An editable install reads tests/oracle/ in place and copies nothing.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ORACLE = Path(__file__).resolve().parent / "tests" / "oracle"


class BuildWithOracle(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        fixtures = sorted(ORACLE.glob("*.json"))
        if not fixtures:  # an sdist made without MANIFEST.in, say: a wheel without them would fail at run time
            raise FileNotFoundError(f"no oracle fixtures at {ORACLE} to ship in the wheel")
        target = Path(self.build_lib) / "eval" / "oracle_fixtures"
        target.mkdir(parents=True, exist_ok=True)
        for path in fixtures:
            shutil.copyfile(path, target / path.name)


setup(cmdclass={"build_py": BuildWithOracle})
