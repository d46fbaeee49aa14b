# speeltafel - run `make help` for the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 50051
DB ?= var/speeltafel.db
PYTEST_ARGS ?=
BUF_VERSION := 1.75.0
BUF := $(VENV)/buf/node_modules/.bin/buf

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,load,rl,postgres]'
	touch $(STAMP)

.PHONY: install
install: $(STAMP) ## create .venv and install the project with its dev tools

# buf (protobuf lint) comes from the npm registry's @bufbuild/buf package, pinned here.
$(BUF): | $(STAMP)
	npm install --silent --no-save --no-audit --no-fund --prefix $(VENV)/buf @bufbuild/buf@$(BUF_VERSION)

.PHONY: run
run: $(STAMP) ## the main job: a tournament of the built-in bots through a real server (SQLite)
	$(BIN)/speeltafel run --db var/arena.db --rounds 1 --max-seats 4 --option kleurenwiezen:deals=4

# HAProxy (Debian's package) for `make cluster` and the cluster tests, installed with apt
# when missing and running as root (after an `apt-get update` if the package lists do not
# know it yet). `make test` installs it before any test worker starts, so that two workers
# never race to install it while they collect the tests.
.PHONY: haproxy
haproxy:
	@command -v haproxy >/dev/null || test -x /usr/sbin/haproxy || { \
	  test "$$(id -u)" = 0 && command -v apt-get >/dev/null && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy >/dev/null; }; }; } || \
	  echo "HAProxy is missing (apt-get install haproxy): the cluster tests will say they did not run"

.PHONY: cluster
cluster: $(STAMP) haproxy ## the tournament of make run through HAProxy in front of three server processes on one PostgreSQL
	$(BIN)/python scripts/cluster.py --rounds 1 --max-seats 4 --option kleurenwiezen:deals=4

.PHONY: serve
serve: $(STAMP) ## run the server alone on PORT (default 50051) and DB (default var/speeltafel.db)
	$(BIN)/speeltafel serve --port $(PORT) --db $(DB)

# The suite runs on TEST_WORKERS processes (pytest-xdist), except the tests marked serial
# (pyproject.toml's markers say which): those run after, alone, so that no other test's
# load is in their measurement. Both parts always run; either failing fails the target.
# Exit code 5 (nothing selected, as when PYTEST_ARGS names other tests) is no failure.
TEST_WORKERS ?= 2

.PHONY: test
test: $(STAMP) proto-check haproxy ## run the test suite (in parallel, then the serial tests alone)
	@status=0; \
	$(BIN)/pytest -q -n $(TEST_WORKERS) -m "not serial" $(PYTEST_ARGS) || { s=$$?; test $$s = 5 || status=$$s; }; \
	$(BIN)/pytest -q -m serial $(PYTEST_ARGS) || { s=$$?; test $$s = 5 || status=$$s; }; \
	exit $$status

.PHONY: playthroughs
playthroughs: $(STAMP) ## regenerate the golden playthrough files after an intended rule change
	SPEELTAFEL_REGENERATE=1 $(BIN)/pytest -q tests/engine/test_playthroughs.py

.PHONY: proto
proto: $(STAMP) ## regenerate sdk/v1 from proto/ (the only way generated code changes)
	$(BIN)/python scripts/gen_protos.py

.PHONY: proto-check
proto-check: $(STAMP) ## fail when the committed generated code is stale
	$(BIN)/python scripts/gen_protos.py --check

.PHONY: lint
lint: $(STAMP) $(BUF) ## buf lint (STANDARD), ruff (lint + format check) and mypy --strict
	$(BUF) lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# mypy cannot see setuptools' package-dir mapping: give it the installed names.
	@mkdir -p .typecheck/speeltafel
	@for pkg in server sdk bots cli rl; do ln -sfn ../../$$pkg .typecheck/speeltafel/$$pkg; done
	MYPYPATH=.typecheck $(BIN)/mypy -p speeltafel.server -p speeltafel.sdk -p speeltafel.bots -p speeltafel.cli -p speeltafel.rl
	@# scripts import each other as plain modules (bench_cluster imports cluster).
	MYPYPATH=.typecheck:scripts $(BIN)/mypy scripts

.PHONY: fmt
fmt: $(STAMP) ## format the code with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

.PHONY: check
check: lint test ## lint, types and tests

.PHONY: bench
bench: $(STAMP) ## benchmarks: engine cost per move next to OpenSpiel's hearts, end-to-end actions/s, and the transport's own echo ceiling
	@$(BIN)/python -c 'import pyspiel' 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python scripts/bench.py
	$(BIN)/python scripts/bench_cluster.py
	$(BIN)/python scripts/bench_server.py

.PHONY: bench-instructions
bench-instructions: $(STAMP) ## a decision's server cost in instructions (valgrind's callgrind): repeatable on a noisy host, split by library
	$(BIN)/python scripts/bench_instructions.py

.PHONY: bench-syscalls
bench-syscalls: $(STAMP) ## a decision's system calls on the server next to an echo exchange's (strace -f -c), by name
	$(BIN)/python scripts/bench_syscalls.py

.PHONY: fairness
fairness: $(STAMP) ## fairness figures: an honest match alone and under each attack (own processes)
	$(BIN)/python scripts/fairness.py

# make load / make stress: Locust bots (loadtests/); reports under var/load/. SERVER=host:port
# loads a running server instead of one of their own (on a fresh SQLite file).
USERS ?= 8
SPAWN_RATE ?= 4
RUN_TIME ?= 60s
P99_MS ?= 100
SERVER ?=
LOAD_ARGS = --p99-ms $(P99_MS) $(if $(SERVER),--server $(SERVER))

.PHONY: load
load: $(STAMP) ## Locust: USERS bots for RUN_TIME, CSV/HTML under var/load/; fails on any failure, p99 > P99_MS or a lost move
	$(BIN)/python -m loadtests.run load --users $(USERS) --spawn-rate $(SPAWN_RATE) --run-time $(RUN_TIME) $(LOAD_ARGS)

.PHONY: stress
stress: $(STAMP) ## Locust: double the bots up to the knee and past it, then all on one connection (the limits)
	$(BIN)/python -m loadtests.run stress $(LOAD_ARGS)

.PHONY: clean
clean: ## remove the virtualenv, caches and var/
	rm -rf $(VENV) var .typecheck .pytest_cache .mypy_cache .ruff_cache .hypothesis
