# Bootstraps .venv from pinned requirements, then runs the workflow or the tests.
VENV      := .venv
PYTHON    := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake
SCALE     ?= quick
CORES     ?= 2
STAMP     := $(VENV)/.installed

.PHONY: run test lint report venv clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements.lock requirements-nodeps.txt pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet -r requirements.txt -c requirements.lock
	$(PYTHON) -m pip install --quiet --no-deps -r requirements-nodeps.txt
	$(PYTHON) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# profiles/default is Snakemake's workflow-specific profile: it is loaded without --profile
run: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE)
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE) --report results/$(SCALE)/report.html

report: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE) --report results/$(SCALE)/report.html

# PAPERS=bird,amortix: the smoke run and the paper tests of those papers only (make test runs every paper)
test: $(STAMP)
	$(PYTHON) -m pytest $(if $(PAPERS),--papers $(PAPERS))

lint: $(STAMP)
	$(VENV)/bin/ruff check src scripts tests tools
	$(VENV)/bin/ruff format --check src scripts tests tools
	$(SNAKEMAKE) --lint
	$(VENV)/bin/snakefmt --check workflow rules

clean:
	rm -rf results .snakemake
