# Each target sets itself up on a fresh machine: a virtualenv in .venv with the project installed.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: demo test lint bench cost-models clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	.venv/bin/eqjax demo

test: $(STAMP)
	$(PY) -m pytest -q -n auto

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
