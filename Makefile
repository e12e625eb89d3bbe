# Bootstraps .venv from pinned requirements, then runs the workflow or the tests.
VENV      := .venv
PYTHON    := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake
SCALE     ?= quick
# every core of the machine (2 on the test machines); `make run CORES=4` to use fewer
CORES     ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
STAMP     := $(VENV)/.installed

.PHONY: run test lint report venv clean profile-imports ngspice rehearse

venv: $(STAMP)

$(STAMP): requirements.txt requirements.lock requirements-nodeps.txt pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet -r requirements.txt -c requirements.lock
	$(PYTHON) -m pip install --quiet --no-deps -r requirements-nodeps.txt
	$(PYTHON) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# ngspice (Debian's package) simulates generated circuits (paper 02); without it their electrical validity is
# reported as unavailable and the claim that needs it stays inconclusive
ngspice:
	@command -v ngspice >/dev/null || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ngspice >/dev/null; \
	else echo "ngspice is not installed (apt-get install ngspice): paper 02's ngspice checks will be unavailable"; fi; }

# profiles/default is Snakemake's workflow-specific profile: it is loaded without --profile
run: $(STAMP) ngspice
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE)
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE) --report results/$(SCALE)/report.html

report: $(STAMP)
	$(SNAKEMAKE) --cores $(CORES) --config scale=$(SCALE) --report results/$(SCALE)/report.html

# PAPERS=bird,amortix: the smoke run and the paper tests of those papers only (make test runs every paper).
# The unit tests run on $(CORES) workers (pytest-xdist); then the tests that run Snakemake, one at a time, since
# they share one smoke run and one local SLURM cluster.
test: $(STAMP) ngspice
	$(PYTHON) -m pytest -n $(CORES) -m "not workflow and not cluster" $(if $(PAPERS),--papers $(PAPERS))
	$(PYTHON) -m pytest -m "workflow or cluster" $(if $(PAPERS),--papers $(PAPERS))

# paper scale rehearsed: every paper-scale rule once at its real shapes, budgets cut to a couple of steps, on fixture
# files served from 127.0.0.1 in a copy of the workflow (.rehearsal/work); writes results/rehearsal/REHEARSAL.md
rehearse: $(STAMP)
	$(PYTHON) tools/rehearse.py --cores $(CORES) $(if $(PAPERS),--papers $(PAPERS))

# the import time of every script's module graph, weighted by its jobs at $(SCALE) (python -X importtime)
profile-imports: $(STAMP)
	$(PYTHON) tools/profile_imports.py --scale $(SCALE) --out results/$(SCALE)/import_times.md

lint: $(STAMP)
	$(VENV)/bin/ruff check src scripts tests tools
	$(VENV)/bin/ruff format --check src scripts tests tools
	$(SNAKEMAKE) --lint
	$(VENV)/bin/snakefmt --check workflow rules

clean:
	rm -rf results .snakemake
