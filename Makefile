# rnnbench: `make run` (the embedded default job), `make test` (the test suite).
# Both install what they need into .venv from nothing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
# glibc keeps freed blocks of any size on the heap for reuse instead of returning them to the kernel
# each training step (a recurrent step's tensors are tens of MiB): faster on the CPU, the same numbers
# (docs/runs.md#threads-and-timings; scripts/bench_malloc.py measures it). No effect off glibc.
export MALLOC_MMAP_THRESHOLD_ ?= 4294967296
export MALLOC_TRIM_THRESHOLD_ ?= 68719476736

.PHONY: help install run test test-fast table tables claims report browser wordnet sanity gpu-check clean

help:  ## list targets, then every table (from the experiment configs: `rnnbench list tables`)
	@grep -E '^[a-zA-Z0-9_%-]+:.*##' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'
	@echo "tables (make table T=NAME, or make table-SHORT, e.g. make table-rcrn-5 or make table-fhe-2-small):"
	@$(PY) -m rnnbench list tables 2>/dev/null || echo "  (make install first: the list is read from the experiment configs)"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch from local disk first: a bare `torch` would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)  ## create .venv with torch 2.13.0 (CPU) and rnnbench (editable) + dev tools

run: $(STAMP)  ## train the default: a BiLSTM on the synthetic picking task (no download, ~3 min)
	$(PY) train.py

# tests/conftest.py sets the tests' environment (TRITON_INTERPRET, WANDB_MODE, offline hub).
# --dist loadgroup: each task's smoke runs stay on one worker, which prepares its data once.
test: $(STAMP) browser wordnet  ## run the whole test suite (real-data tests read RNNBENCH_DATA)
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=20

test-fast: $(STAMP)  ## the suite without the tests marked slow (training subprocesses, sweeps, Triton interpreter, smoke runs): a few minutes
	$(PY) -m pytest -q -n 2 --dist loadgroup -m "not slow"

gpu-check: $(STAMP)  ## on a CUDA machine (~7 min on an H100 or H200): Triton kernels vs reference, the gated scan's bandwidth, the cost table (results/rcrn_table10_cuda.*), a short run of every encoder, the cost targets; writes results/gpu.md. GPU_CHECK=--quick: a dry run on the CPU
	$(PY) scripts/gpu_check.py $(GPU_CHECK)

sanity: $(STAMP)  ## sanity-check every row of the committed tables (initial loss, gradients, input, train/eval, memorising 64 examples; cached per row): results/sanity.md; TABLES=rcrn_table5 for some
	OMP_NUM_THREADS=1 $(PY) scripts/sanity.py $(TABLES)

claims: $(STAMP)  ## write results/claims.md: every paper claim with ours, its interval and a verdict, from the committed evidence
	$(PY) scripts/claims.py

report: $(STAMP)  ## build the report, a static site of every table, claim and run, into site/ (open site/index.html; docs/report.md)
	$(PY) -m rnnbench report

# Debian's headless Chromium, for the report's browser test (tests/site/test_browser.py), installed
# with apt-get as root when absent. Not fatal here: without it that test fails and says why.
browser:  ## install Debian's chromium-headless-shell for the report's browser test, if no Chromium is there
	@command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null; } || \
	  echo "warning: could not install chromium-headless-shell (apt-get, as root); the report's browser test will fail, saying so"


# Debian's WordNet 3.0 files, for nltk's METEOR (the fallback when Java is absent; tests/metrics/test_text.py),
# installed with apt-get as root when absent. Not fatal: without them that test says why it cannot run.
wordnet:  ## install Debian's WordNet files (wordnet-base, wordnet-sense-index) for the METEOR fallback, if absent
	@test -f /usr/share/wordnet/data.noun || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null; } || \
	  echo "warning: could not install wordnet-base (apt-get, as root); the METEOR fallback test will skip, saying so"

# A paper table: every experiment config that names it (table.name), one definition per table.
# T=rcrn_table5 (or a short form: rcrn-5; fhe-2-small for a part), ARGS="--plan" or "--no-run" or "--only EXP".
table: $(STAMP)  ## run what is missing of table T's experiments, then write results/T.{md,tex,csv} (T=rcrn_table5; ARGS=--plan)
	@test -n "$(T)" || { echo "error: name the table: make table T=rcrn_table5 (make help lists them)"; exit 2; }
	$(PY) -m rnnbench table $(T) $(ARGS)

table-%: $(STAMP)  ## the same by short name: make table-rcrn-5, table-odyssey-1, table-fhe-2-small (a part)
	$(PY) -m rnnbench table $* $(ARGS)

tables: $(STAMP)  ## every table (what is missing of each is run), then the claims ledger
	@failed=""; for t in $$($(PY) -c "from rnnbench.campaign.definitions import tables; print(*tables())"); do \
	  $(PY) -m rnnbench table $$t $(ARGS) || failed="$$failed $$t"; done; \
	$(PY) scripts/claims.py; test -z "$$failed" || { echo "tables that failed:$$failed"; exit 1; }

clean:  ## remove caches and run outputs (not results/)
	rm -rf .cache runs .pytest_cache
