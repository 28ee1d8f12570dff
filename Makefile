# Two set-up commands: `make demo` and `make test`. Each creates .venv and installs what it needs.
# A Python every user can run (scripts/find_python.sh): run.sh runs as an unprivileged user, through .venv.
PYTHON ?= $(shell bash scripts/find_python.sh)
VENV := .venv
BIN := $(VENV)/bin
# torch==2.13.0 goes in the same pip command as everything that depends on it (else pip pulls a CUDA build).
# pip prints its progress: the first install takes minutes.
INSTALL_TAKES := about 2-3 minutes on 2 CPU cores with pip's cache warm, longer where pip must download torch
PIP_INSTALL := $(BIN)/python -m pip install --disable-pip-version-check -c requirements/constraints.txt torch==2.13.0

.PHONY: demo test install install-test artifacts clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || { echo "$(PYTHON) could not make a venv; using python3 (unprivileged users may not run it)"; \
	  rm -rf $(VENV); python3 -m venv $(VENV); }

# Everything the README's commands need: the HTTP parts (search, providers, review app) and the statutes report's plots.
# How long the installs take is said before they start (measured on the machine BENCHMARKS.md names).
$(VENV)/.installed: $(BIN)/python pyproject.toml requirements/constraints.txt
	@echo "installing citator and its dependencies into $(VENV): $(INSTALL_TAKES)"
	$(PIP_INSTALL) -e ".[server,report]"
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml requirements/constraints.txt
	@echo "installing citator with its test extras into $(VENV): $(INSTALL_TAKES)"
	$(PIP_INSTALL) -e ".[test]"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# The demo index over the bundled sample, and a machinery-only Qwen3 (random weights, the real tokenizer) for the
# README's reranking and Python blocks: every README block runs on what the repository and this target provide.
demo: $(VENV)/.installed
	$(BIN)/python -m citator.demo
	$(BIN)/citator demo-model --out .demo/qwen3-random

test: $(VENV)/.installed-test
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# Learned artifacts for workload 1 (git-ignored: trained, never committed). Reads the training data, not the repo.
# Data only: `citator train`'s defaults are the settings chosen on dev. Then the CaseFacts index they rank with,
# citing its documents (artifacts-casefacts/index: the corpus's metadata passed as --metadata, docs/metadata.md).
CASEFACTS ?= ../shared/data/stance/casefacts
artifacts: $(VENV)/.installed
	$(BIN)/citator train --corpus $(CASEFACTS)/corpus.jsonl \
	  --queries $(CASEFACTS)/queries.jsonl --ground-truth $(CASEFACTS)/ground_truth.jsonl \
	  --queries $(CASEFACTS)/queries_overruled.jsonl --ground-truth $(CASEFACTS)/ground_truth_overruled.jsonl \
	  --out artifacts
	mkdir -p artifacts-casefacts
	$(BIN)/python scripts/casefacts_metadata.py $(CASEFACTS)/metadata.jsonl $(CASEFACTS)/corpus.jsonl \
	  artifacts-casefacts/metadata.jsonl
	./build.sh --corpus $(CASEFACTS)/corpus.jsonl --index-dir artifacts-casefacts/index --artifacts artifacts \
	  --metadata artifacts-casefacts/metadata.jsonl --no-serve

clean:
	rm -rf $(VENV) .demo
