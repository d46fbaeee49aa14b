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
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

.PHONY: install
install: $(STAMP) ## create .venv and install the project with its dev tools

# buf (protobuf lint) comes from the npm registry's @bufbuild/buf package, pinned here.
$(BUF): | $(STAMP)
	npm install --silent --no-save --no-audit --no-fund --prefix $(VENV)/buf @bufbuild/buf@$(BUF_VERSION)

.PHONY: run
run: $(STAMP) ## the main job: a tournament of the built-in bots through a real server (SQLite)
	$(BIN)/speeltafel run --db var/arena.db --rounds 2 --max-seats 4

.PHONY: serve
serve: $(STAMP) ## run the server alone on PORT (default 50051) and DB (default var/speeltafel.db)
	$(BIN)/speeltafel serve --port $(PORT) --db $(DB)

.PHONY: test
test: $(STAMP) proto-check ## run the test suite
	$(BIN)/pytest -q $(PYTEST_ARGS)

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
	@for pkg in server sdk bots cli; do ln -sfn ../../$$pkg .typecheck/speeltafel/$$pkg; done
	MYPYPATH=.typecheck $(BIN)/mypy -p speeltafel.server -p speeltafel.sdk -p speeltafel.bots -p speeltafel.cli
	MYPYPATH=.typecheck $(BIN)/mypy scripts

.PHONY: fmt
fmt: $(STAMP) ## format the code with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

.PHONY: check
check: lint test ## lint, types and tests

.PHONY: bench
bench: $(STAMP) ## benchmarks: engine playouts, end-to-end actions/s, and the transport's own echo ceiling
	$(BIN)/python scripts/bench.py

.PHONY: fairness
fairness: $(STAMP) ## fairness figures: an honest match alone and under each attack (own processes)
	$(BIN)/python scripts/fairness.py

.PHONY: clean
clean: ## remove the virtualenv, caches and var/
	rm -rf $(VENV) var .typecheck .pytest_cache .mypy_cache .ruff_cache .hypothesis
