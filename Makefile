# rnnbench: `make run` (the embedded default job), `make test` (the test suite).
# Both install what they need into .venv from nothing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# FHE Tables 2 and 4: the paper-sized experiments, and our CPU-sized "small" ones (one table each)
FHE2_PAPER := fhe_table2 fhe_table2_fhe fhe_table2_fhe_loss fhe_table2_len200 fhe_table2_len200_fhe fhe_table2_len400 fhe_table2_len400_fhe
FHE2_SMALL := fhe_table2_small fhe_table2_small_fhe
FHE4_PAPER := fhe_table4 fhe_table4_fhe
FHE4_SMALL := fhe_table4_small fhe_table4_small_fhe fhe_table4_small_fhe_lambda1
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1

.PHONY: help install run test test-fast tables claims report browser sanity gpu-check table-rcrn-5 table-rcrn-2 table-rcrn-3 table-rcrn-1 table-rcrn-1-small table-rcrn-4 table-odyssey-1 table-odyssey-1-large table-odyssey-2 table-odyssey-2-large table-rcrn-6 table-rcrn-7 table-rcrn-8 table-rcrn-9 table-rcrn-10 table-dcu-1 table-dcu-1-small table-dcu-2 table-dcu-3 table-fhe-2 table-fhe-2-small table-fhe-3 table-fhe-4 table-fhe-4-small table-fhe-6 table-fhe-7 table-mzu-6 table-mzu-1 table-mzu-1-small table-mzu-2 table-mzu-3 table-mzu-4 table-synthetic clean

help:  ## list targets
	@grep -E '^[a-zA-Z0-9_-]+:.*##' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

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
test: $(STAMP) browser  ## run the whole test suite (real-data tests read RNNBENCH_DATA)
	$(PY) -m pytest -q -n 2 --dist loadgroup

test-fast: $(STAMP)  ## the suite without the tests marked slow (training subprocesses, sweeps, Triton interpreter, smoke runs): ~2 min
	$(PY) -m pytest -q -n 2 --dist loadgroup -m "not slow"

gpu-check: $(STAMP)  ## on a CUDA machine (~6 min on an H100): Triton kernels vs reference, the gated scan's bandwidth, the cost table (results/rcrn_table10_cuda.*), a short run of every encoder, the cost targets; writes results/gpu.md. GPU_CHECK=--quick: a dry run on the CPU
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

table-rcrn-5: $(STAMP)  ## RCRN Table 5 (TREC) under the comparison protocol: run what is missing, write results/rcrn_table5.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table5

table-rcrn-2: $(STAMP)  ## RCRN Table 2 (SST-5): run what is missing, write results/rcrn_table2.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table2

table-rcrn-3: $(STAMP)  ## RCRN Table 3 (SST-2, 15 seeds): run what is missing, write results/rcrn_table3.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table3

table-rcrn-1: $(STAMP)  ## RCRN Table 1 (16 Amazon domains, the six smallest first): write results/rcrn_table1.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table1_mr rcrn_table1_apparel rcrn_table1_health_personal_care rcrn_table1_kitchen_housewares rcrn_table1_toys_games rcrn_table1_sports_outdoors rcrn_table1_baby rcrn_table1_electronics rcrn_table1_magazines rcrn_table1_camera_photo rcrn_table1_software rcrn_table1_music rcrn_table1_video rcrn_table1_books rcrn_table1_dvd rcrn_table1_imdb

table-rcrn-1-small: $(STAMP)  ## RCRN Table 1, only the six smallest domains (MR, apparel, health, kitchen, toys, sports), then the whole table
	$(PY) scripts/make_table.py rcrn_table1_mr rcrn_table1_apparel rcrn_table1_health_personal_care rcrn_table1_kitchen_housewares rcrn_table1_toys_games rcrn_table1_sports_outdoors
	$(PY) scripts/make_table.py rcrn_table1_mr rcrn_table1_apparel rcrn_table1_health_personal_care rcrn_table1_kitchen_housewares rcrn_table1_toys_games rcrn_table1_sports_outdoors rcrn_table1_baby rcrn_table1_electronics rcrn_table1_magazines rcrn_table1_camera_photo rcrn_table1_software rcrn_table1_music rcrn_table1_video rcrn_table1_books rcrn_table1_dvd rcrn_table1_imdb --no-run

table-rcrn-4: $(STAMP)  ## RCRN Table 4 (IMDb) on a reduced budget (256 tokens, 6,400 reviews per epoch, lr 1e-3): write results/rcrn_table4.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table4

table-odyssey-1: $(STAMP)  ## LSTM baseline Table 1 (SST-5): the baseline and one trick per row at hidden 170, then the table with every row
	$(PY) scripts/make_table.py lstm_odyssey_table1_baseline lstm_odyssey_table1_fb lstm_odyssey_table1_dropout lstm_odyssey_table1_mc_mean lstm_odyssey_table1_mc_vote lstm_odyssey_table1_pool lstm_odyssey_table1_resv1 lstm_odyssey_table1_resv2 lstm_odyssey_table1_bi lstm_odyssey_table1_bi_resv1
	$(PY) scripts/make_table.py lstm_odyssey_table1_baseline lstm_odyssey_table1_fb lstm_odyssey_table1_dropout lstm_odyssey_table1_mc_mean lstm_odyssey_table1_mc_vote lstm_odyssey_table1_pool lstm_odyssey_table1_resv1 lstm_odyssey_table1_resv2 lstm_odyssey_table1_bi lstm_odyssey_table1_bi_resv1 lstm_odyssey_table1_large lstm_odyssey_table1_large_bi lstm_odyssey_table1_large_bi_resv1 lstm_odyssey_table1_large_resv2 --no-run

table-odyssey-1-large: $(STAMP)  ## LSTM baseline Table 1, the paper's Large rows (hidden 800; ~135 CPU hours: for a GPU), then the whole table
	$(PY) scripts/make_table.py lstm_odyssey_table1_large lstm_odyssey_table1_large_bi lstm_odyssey_table1_large_bi_resv1 lstm_odyssey_table1_large_resv2
	$(PY) scripts/make_table.py lstm_odyssey_table1_baseline lstm_odyssey_table1_fb lstm_odyssey_table1_dropout lstm_odyssey_table1_mc_mean lstm_odyssey_table1_mc_vote lstm_odyssey_table1_pool lstm_odyssey_table1_resv1 lstm_odyssey_table1_resv2 lstm_odyssey_table1_bi lstm_odyssey_table1_bi_resv1 lstm_odyssey_table1_large lstm_odyssey_table1_large_bi lstm_odyssey_table1_large_bi_resv1 lstm_odyssey_table1_large_resv2 --no-run

table-odyssey-2: $(STAMP)  ## LSTM baseline Table 2 (IMDb, reduced budget): the accuracy claim's two rows (~55 CPU hours: ~11 a run of the enhanced row, 8 of them its MC test pass), then the table with every row
	$(PY) scripts/make_table.py lstm_odyssey_table2_baseline lstm_odyssey_table2_large_bi_resv2
	$(PY) scripts/make_table.py lstm_odyssey_table2_baseline lstm_odyssey_table2_large lstm_odyssey_table2_large_bi lstm_odyssey_table2_large_bi_resv2 --no-run

table-odyssey-2-large: $(STAMP)  ## LSTM baseline Table 2, the rows Large 2-LSTM and Bi-2-LSTM (no claim needs their runs: the parameter claim is decided on counted sizes), then the whole table
	$(PY) scripts/make_table.py lstm_odyssey_table2_large lstm_odyssey_table2_large_bi
	$(PY) scripts/make_table.py lstm_odyssey_table2_baseline lstm_odyssey_table2_large lstm_odyssey_table2_large_bi lstm_odyssey_table2_large_bi_resv2 --no-run

table-rcrn-6: $(STAMP)  ## RCRN Table 6 (SNLI; here 1,022 training pairs only): run what is missing, write results/rcrn_table6.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table6

table-rcrn-7: $(STAMP)  ## RCRN Table 7 (SciTail; here trained on 80% of dev): run what is missing, write results/rcrn_table7.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table7

table-mzu-6: $(STAMP)  ## MZU Table 6 (SemEval-2014 restaurants + laptops, 5 seeds; capMZRNN at the paper's lambda 1 and at lambda 0, ours): write results/mzu_table6.{md,tex,csv}
	$(PY) scripts/make_table.py mzu_table6_restaurant mzu_table6_laptop mzu_table6_restaurant_lambda0 mzu_table6_laptop_lambda0

table-rcrn-8: $(STAMP)  ## RCRN Table 8 (WikiQA, TrecQA; with and without attentive pooling): write results/rcrn_table8.{md,tex,csv}
	$(PY) scripts/make_table.py rcrn_table8_wikiqa rcrn_table8_wikiqa_ap rcrn_table8_trecqa rcrn_table8_trecqa_ap

table-rcrn-9: $(STAMP)  ## RCRN Table 9 (NarrativeQA span; needs qaps.csv + summaries.csv)
	$(PY) scripts/make_table.py rcrn_table9 rcrn_table9_3l

table-rcrn-10: $(STAMP)  ## RCRN Table 10 (cost): training/inference time vs length for every encoder on this CPU, 5 rounds (~5 min): results/rcrn_table10.{md,csv}, plots/rcrn_table10.png
	$(PY) scripts/bench_cost.py

table-dcu-1: $(STAMP)  ## DCU Table 1 (RACE; sim_dcu, dcu, lstm1 at 250d, 3 seeds; plus the small rows): write results/dcu_table1.{md,tex,csv}
	$(PY) scripts/make_table.py dcu_table1 dcu_table1_small

table-dcu-1-small: $(STAMP)  ## DCU Table 1, only the CPU-sized "small" runs (100d, half an epoch), then the whole table
	$(PY) scripts/make_table.py dcu_table1_small
	$(PY) scripts/make_table.py dcu_table1 dcu_table1_small --no-run

table-dcu-3: $(STAMP)  ## DCU Table 3 (NarrativeQA span; needs qaps.csv + summaries.csv)
	$(PY) scripts/make_table.py dcu_table3 dcu_table3_150d dcu_table3_dculstm

table-synthetic: $(STAMP)  ## our synthetic span and pointer-copy tasks (minutes per run): write results/synthetic_*.{md,tex,csv}
	$(PY) scripts/make_table.py synthetic_span_copy
	$(PY) scripts/make_table.py synthetic_pointer_copy synthetic_pointer_copy_no_pointer

table-dcu-2: $(STAMP)  ## DCU Table 2 (SearchQA span; needs searchqa/data_json)
	$(PY) scripts/make_table.py dcu_table2 dcu_table2_150d dcu_table2_dculstm

table-fhe-2: $(STAMP)  ## FHE Table 2 (picking task, lengths 100/200/400: lstm1, lstm2, FHE-fixed; plus FHE with our loss-form penalty): write results/fhe_table2.{md,tex,csv}
	$(PY) scripts/make_table.py $(FHE2_PAPER)
	$(PY) scripts/make_table.py $(FHE2_PAPER) $(FHE2_SMALL) --no-run
	$(PY) scripts/fhe_figures.py openness results/fhe_table2.csv

table-fhe-2-small: $(STAMP)  ## FHE Table 2, only the CPU-sized "small" runs (64 hidden units, length 100), then the whole table
	$(PY) scripts/make_table.py $(FHE2_SMALL)
	$(PY) scripts/make_table.py $(FHE2_PAPER) $(FHE2_SMALL) --no-run
	$(PY) scripts/fhe_figures.py openness results/fhe_table2.csv

table-fhe-3: $(STAMP)  ## FHE Table 3 (picking task, length 100: FHE80/90/95/98, the penalty enforced once dev accuracy reaches 80-98%)
	$(PY) scripts/make_table.py fhe_table3 fhe_table3_fhe90 fhe_table3_fhe95 fhe_table3_fhe98

table-fhe-4: $(STAMP)  ## FHE Table 4 (generalisation): train at length 200 (Table 2's runs), then score the same checkpoints at 400-10000
	$(PY) scripts/make_table.py $(FHE4_PAPER)
	$(PY) scripts/make_table.py $(FHE4_PAPER) $(FHE4_SMALL) --no-run
	$(PY) scripts/fhe_figures.py openness results/fhe_table4.csv --out results/plots/fhe_table4_accuracy_vs_openness.png

table-fhe-4-small: $(STAMP)  ## FHE Table 4, only the CPU-sized "small" runs (64 hidden units, trained at 200, scored at 400-10000), then the whole table
	$(PY) scripts/make_table.py $(FHE4_SMALL)
	$(PY) scripts/make_table.py $(FHE4_PAPER) $(FHE4_SMALL) --no-run
	$(PY) scripts/fhe_figures.py openness results/fhe_table4.csv --out results/plots/fhe_table4_accuracy_vs_openness.png

table-fhe-6: $(STAMP)  ## FHE Table 6 (SearchQA, generative; needs the SearchQA files)
	$(PY) scripts/make_table.py fhe_table6

table-fhe-7: $(STAMP)  ## FHE Table 7 (MS MARCO v1.1, generative, and the no-pointer ablation; needs the MS MARCO files)
	$(PY) scripts/make_table.py fhe_table7 fhe_table7_no_pointer

table-mzu-1: $(STAMP)  ## MZU Table 1 (PTB characters, BPC; plus the small rows): run what is missing, write results/mzu_table1.{md,tex,csv}
	$(PY) scripts/make_table.py mzu_table1 mzu_table1_small_mzu mzu_table1_small_sat mzu_table1_small_gcn mzu_table1_small_lstm

table-mzu-1-small: $(STAMP)  ## MZU Table 1, only the CPU-sized "small" runs (capMZU+DT, satMZU+DT, gcnMZU+DT at 128; lstm1 116, matched to capMZU+DT on parameters), then the whole table
	$(PY) scripts/make_table.py mzu_table1_small_mzu mzu_table1_small_sat mzu_table1_small_gcn mzu_table1_small_lstm
	$(PY) scripts/make_table.py mzu_table1 mzu_table1_small_mzu mzu_table1_small_sat mzu_table1_small_gcn mzu_table1_small_lstm --no-run

table-mzu-2: $(STAMP)  ## MZU Table 2 (text8, BPC; needs the text8 file)
	$(PY) scripts/make_table.py mzu_table2

table-mzu-3: $(STAMP)  ## MZU Table 3 (number of zones, PTB characters)
	$(PY) scripts/make_table.py mzu_table3_z2 mzu_table3_z4 mzu_table3_z8 mzu_table3_z16

table-mzu-4: $(STAMP)  ## MZU Table 4 (ablation: without / with deep transition, PTB characters)
	$(PY) scripts/make_table.py mzu_table4_nodt mzu_table4_dt

tables: table-rcrn-5 table-rcrn-2 table-rcrn-3 table-rcrn-1 table-rcrn-4 table-odyssey-1 table-odyssey-2 table-rcrn-6 table-rcrn-7 table-rcrn-8 table-rcrn-9 table-rcrn-10 table-dcu-1 table-dcu-2 table-dcu-3 table-fhe-2 table-fhe-2-small table-fhe-3 table-fhe-4 table-fhe-4-small table-fhe-6 table-fhe-7 table-mzu-6 table-mzu-1 table-mzu-2 table-mzu-3 table-mzu-4 table-synthetic  ## every table target, then the claims ledger
	$(PY) scripts/claims.py

clean:  ## remove caches and run outputs (not results/)
	rm -rf .cache runs .pytest_cache
