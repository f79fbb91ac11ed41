# ycsb-runner: `make bench` and `make test` do all the set-up a fresh machine needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUITE  ?= quick

.PHONY: setup bench nightly test test-fast lint docs cli-docs docs-figures clean

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

# Fast tests (no server, no JVM: tests/unit) and integration tests (real YCSB, real server: tests/integration),
# in parallel pytest-xdist workers: each is a pytest session with its own embedded server (port, data folder),
# temp and lock folders. --dist loadfile keeps a file's tests on one worker: module-scoped real runs (a bench,
# sshd hosts) happen once; a test looks only at the processes, ports and folders it started, so any two files
# may run beside each other. (loadgroup's xdist_group marks have no effect with pytest 9.2 and pytest-xdist
# 3.8.) Many integration tests wait on a JVM or a server: 4 workers on 2 cores.
# `make test XDIST=` runs them one at a time.
XDIST      ?= -n 4 --dist loadfile
# The unit tests: worksteal, as their lengths differ (0.01 s to seconds) and a worker that ran out takes
# from the other; the property tests draw a quarter of their examples (tests/unit/property_examples.py).
XDIST_FAST ?= -n 2 --dist worksteal
# Bytecode caches on, also where the environment sets PYTHONDONTWRITEBYTECODE (Docker images often do):
# without them every worker re-rewrites the test modules' asserts (4 s each) and each of the tests' about 40
# `ycsb-runner` subprocesses recompiles the package. __pycache__/ is ignored by git.
test test-fast: export PYTHONDONTWRITEBYTECODE =
# tools/test-needs.sh installs sshd for the multi-client tests where it can (root with apt-get), else prints
# the command, and says when the seed documents are not found (YCSB_RUNNER_SEEDS); -rs: every skip is listed
# at the end with what it needs, grouped by reason.
# The tests marked `alone` compare the server's speed from run to run (two nightly histories that share
# their eight normal nights and three throttled-server nights, findmax and its sweep; the site is built
# from a copy of those nights): they run after the others in a session of their own, with no worker beside
# them (beside three other workers, the normal nights of one CI run differed 3x: 47-144 ops/s; beside the
# main session at nice 19, Dec 2026, 11x: 114-1285 ops/s, and 4 of them failed). Both sessions always run;
# the target fails when either did.
test: setup
	bash tools/test-needs.sh
	rc=0; \
	$(BIN)/pytest -q -rs $(XDIST) -m "not alone" tests/unit tests/integration || rc=$$?; \
	$(BIN)/pytest -q -rs -m alone tests/integration || rc=$$?; \
	exit $$rc

test-fast: $(VENV)/.installed
	$(BIN)/pytest -q $(XDIST_FAST) --hypothesis-profile=fast tests/unit

# docs/cli.md: every command's --help, the suite file's keys in docs/reference/suite-file.md and every error
# message in docs/faq.md (test_cli_reference.py, test_docs_site.py, test_docs_errors.py fail while out of date)
cli-docs: $(VENV)/.installed
	$(BIN)/cog -r docs/cli.md docs/reference/suite-file.md docs/faq.md

# The documentation site (mkdocs.yml): the generated pages first, then a strict build into site/ (a broken
# link, a missing page or a missing included file fails it). Offline: no fonts or scripts are fetched.
docs: cli-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The pictures the site shows (docs/images/): a small real run on the embedded server and a real history's
# nightly report, the site of 14 real nights (tools/site_pictures.py), drawn by headless Chromium, and a real
# two-client run's merged percentiles (tools/multi_client_pictures.py; tools/docs-figures.sh; ~13 minutes).
# DOCS_FIGURES_PARTS='1 4' remakes only those parts (1 the run, 2 the nightly report, 3 the site, 4 the merge).
docs-figures: setup
	bash tools/docs-figures.sh

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .cache java/target
