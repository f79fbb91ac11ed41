# ycsb-runner: `make bench` and `make test` do all the set-up a fresh machine needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUITE  ?= quick

.PHONY: setup bench nightly test lint clean

setup: $(VENV)/.installed
	$(BIN)/ycsb-runner setup

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Runs against $$MONGODB_URL when it is set, else against the embedded local server.
bench: setup
	$(BIN)/ycsb-runner bench $(SUITE)

# One night (examples/nightly/: cron, systemd, CI): the suite, the history, `regress` (see nightly.sh).
nightly: setup
	examples/nightly/nightly.sh

test: setup
	$(BIN)/pytest -q

lint: $(VENV)/.installed
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .cache java/target
