# `make demo` and `make test` set everything up first (scripts/setup.sh, idempotent; expensive artefacts are
# built once into $(VERICITE_CACHE) and reused by later runs and fresh clones).
VENV ?= .venv
BIN := $(VENV)/bin
export VERICITE_CACHE ?= $(HOME)/.cache/vericite

.PHONY: setup demo test test-fast system-deps bench clean caqa-judge

setup:
	@VENV=$(VENV) bash scripts/setup.sh

# Debian packages the test suite drives for real (headless Chromium for the HTML report test).
system-deps:
	@command -v chromium >/dev/null 2>&1 || { echo "[setup] installing chromium (Debian package)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "[setup] could not install chromium: the report screenshot test will fail"; }

demo: setup
	$(BIN)/vericite demo

test: setup system-deps
	$(BIN)/python -m pytest -q

# everything but the tests marked slow (tests/real/ and the contract runs of real models): no embedded models, no servers
test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

bench: setup
	$(BIN)/python benchmarks/bench_graph.py
	$(BIN)/python benchmarks/bench_kalma_metrics.py
	$(BIN)/python benchmarks/bench_generation.py

# the four-class classifier of docs/results-caqa.md, recipe 2 (mean pooling, query batches; the default of `vericite
# train caqa`), 91 MB of ONNX: not shipped, rebuilt here: 496 s of training on two idle cores (2026-11-27), test micro F1
# 0.958 (docs/results-caqa.md)
caqa-judge: setup
	$(BIN)/vericite train caqa --data datasets/caqa-bio.jsonl --split train --epochs 3 --seed 0 --out runs/caqa-minilm-full

clean:
	rm -rf $(VENV) .pytest_cache
