# Each target sets itself up on a fresh machine: a virtualenv in .venv with the project installed.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: demo test check system-deps lint bench cost-models clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	.venv/bin/eqjax demo

test: $(STAMP) system-deps
	$(PY) -m pytest -q -rs -n auto

# The day-to-day loop: ruff, then every test but the whole-corpus sweeps (tests.profile.SWEEPS), under the `dev`
# hypothesis profile (30 examples a property); `make test` and CI keep the sweeps and the `ci` profile.
check: $(STAMP)
	.venv/bin/ruff check .
	HYPOTHESIS_PROFILE=dev $(PY) -m pytest -q -rs -n auto -m "not sweep"

# Debian packages the tests need: chromium (the browser test of `eqjax show`'s page, driven by playwright without
# `playwright install`) and graphviz (`dot`, which `eqjax show` lays out with). Installed only when missing.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
system-deps:
	@if [ ! -x /usr/bin/chromium ] || ! command -v dot >/dev/null 2>&1; then \
		echo "installing the Debian packages chromium and graphviz"; \
		$(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium graphviz; \
	fi

lint: $(STAMP)
	.venv/bin/ruff check .

bench: $(STAMP)
	.venv/bin/eqjax bench eval

# The cost-model study (papers/cost-models): `make cost-models SMALL=1` runs a subset in a few minutes.
cost-models: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,papers]'
	$(PY) papers/cost-models/run.py $(if $(SMALL),--small --out papers/cost-models/results-small)

clean:
	rm -rf .venv
