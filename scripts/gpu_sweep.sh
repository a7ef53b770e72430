#!/bin/bash
# A table's sweep on a GPU machine, in one call: N make_table.py workers side by side on the GPU
# (under MPS where it starts), stopped after STOP_AFTER seconds; the finished run folders (no checkpoints)
# come back in $OUT as runs.tgz.* (with the sanity verdicts they made) for `tar xzf` into RNNBENCH_RUNS on the machine that assembles
# the table. See docs/scaling.md, "A table's sweep on a GPU machine".
#
#   bash scripts/gpu_sweep.sh COMMIT EXPERIMENT...
#   bash scripts/gpu_sweep.sh COMMIT lstm_odyssey_table2_large_bi_resv2:5 lstm_odyssey_table1_bi:10
#
# EXPERIMENT:K starts K of the workers at that experiment (the others start at the first); each worker then
# goes through the whole list from there, so a long table's seeds start at once and a table whose final
# seeds wait for its selection runs does not hold every worker.
# COMMIT: the commit of the tree sent (the machine's copy of .git may be older, so git is pointed away from it
# and RNNBENCH_COMMIT names the tree in the run records). DEVICE=cpu: a dry run of the same steps on a CPU.
# Environment: N (workers, 15), STOP_AFTER (seconds, 540), PY (python3), CARRY (the folder sent beside the
# checkout, .gpu: data/ mirrors the files under RNNBENCH_DATA the runs read, whl/ the wheels of packages
# missing there), DATA, RUNS, CACHE (best the same absolute paths as here, /work/shared/data, /work/runs and
# /work/cache: identities do not depend on them, but records name their run folder), OUT (set by the device tool).
set -u
T0=$(date +%s)
STOP=$((T0 + ${STOP_AFTER:-540}))
COMMIT=$1; shift
EXPERIMENTS=""; STARTS=""  # STARTS: each worker's first experiment (its index in EXPERIMENTS), in worker order
i=0
for word in "$@"; do
  exp=${word%%:*}; k=${word#"$exp"}; k=${k#:}
  case "$k" in ''|*[!0-9]*) [ -z "$k" ] || { echo "error: $word: the number after ':' must be a whole number of workers"; exit 2; }; k=0;; esac
  EXPERIMENTS="$EXPERIMENTS $exp"
  for _ in $(seq 1 $k); do STARTS="$STARTS $i"; done
  i=$((i + 1))
done
EXPERIMENTS=${EXPERIMENTS# }
CARRY=${CARRY:-.gpu}; N=${N:-15}; DEVICE=${DEVICE:-cuda}; PY=${PY:-python3}
DATA=${DATA:-/work/shared/data}; RUNS=${RUNS:-/work/runs}; CACHE=${CACHE:-/work/cache}
echo "start $(date -u +%FT%TZ) commit $COMMIT: $EXPERIMENTS, $N workers, stop after ${STOP_AFTER:-540} s"
[ "$DEVICE" = cpu ] || nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
if ls "$CARRY"/whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$CARRY"/whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD/src
$PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
# The readers' tokenizer too (NLTK's, for IMDb and others): a package missing there stops here, not in every worker.
$PY -c "import rnnbench.run; from rnnbench.metrics import registry; registry()
from rnnbench.data.tokenize import treebank_tokenize; treebank_tokenize('a test.'); print('imports ok')" || exit 1
export GIT_DIR=/nonexistent RNNBENCH_COMMIT=$COMMIT RNNBENCH_DATA=$DATA RNNBENCH_RUNS=$RUNS RNNBENCH_CACHE=$CACHE \
  HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
mkdir -p "$DATA" "$RUNS" "$CACHE"
# Copy the carried data in, never over a different file (DATA holding the full GloVe: stop, not overwrite it).
carried=$(cd "$CARRY/data" && find . -type f -printf '%P\n')
for f in $carried; do
  if [ -e "$DATA/$f" ] && ! cmp -s "$CARRY/data/$f" "$DATA/$f"; then
    echo "error: $DATA/$f exists and differs from $CARRY/data/$f: point DATA at an empty folder"; exit 1
  fi
done
for f in $carried; do
  [ -e "$DATA/$f" ] || { mkdir -p "$(dirname "$DATA/$f")" && cp -p "$CARRY/data/$f" "$DATA/$f"; } || exit 1
done
# A GloVe subset built by scripts/embedding_subset.py stands for the full file (checked there, bit for bit).
for sidecar in $(find "$DATA" -name '*.txt.gz.json'); do
  $PY scripts/embedding_subset.py register "${sidecar%.json}" --cache-dir "$CACHE" || exit 1
done
# MPS lets the workers' small kernels share the multiprocessors instead of taking turns.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
if [ "$DEVICE" = cpu ]; then
  echo "dry run on the CPU"
elif nvidia-cuda-mps-control -d && timeout 60 $PY -c "import torch; torch.ones(1, device='cuda')"; then
  echo "MPS on"
else
  echo quit | nvidia-cuda-mps-control 2>/dev/null; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  echo "MPS off: ${N_NO_MPS:-5} workers"; N=${N_NO_MPS:-5}
fi
# Each experiment's corpus is prepared once, before the workers (they would queue on its lock); without the
# datasets package there is no cache to prepare: each run reads the files.
if $PY -c "import datasets" 2>/dev/null; then prepared=$EXPERIMENTS
else prepared=""; echo "no datasets package: each run reads its corpus from the files"; fi
for exp in $prepared; do
  timeout $((STOP - $(date +%s))) $PY -c "
from rnnbench.compose import compose_config; from rnnbench.data.prepare import load_splits, build_reader
cfg = compose_config(['experiment=$exp']); load_splits(build_reader(cfg.task.reader), cfg.paths.data_dir, cfg.paths.cache_dir)" 2>&1 | tr '\r' '\n' | grep -v '%|'
done
echo "workers start at +$(( $(date +%s) - T0 )) s"
worker() {  # worker number, the index of its first experiment
  local list=($EXPERIMENTS)
  local ordered="${list[*]:$2} ${list[*]:0:$2}"
  for exp in $ordered; do
    local left=$((STOP - $(date +%s)))
    [ $left -gt 60 ] || break
    timeout -s INT -k 25 $left $PY scripts/make_table.py $exp --set trainer.device=$DEVICE >> /tmp/worker$1.log 2>&1
  done
}
pids=""
starts=($STARTS)
for i in $(seq 1 $N); do worker $i ${starts[$((i - 1))]:-0} & pids="$pids $!"; sleep 2; done
wait $pids
echo "workers ended at +$(( $(date +%s) - T0 )) s; finished runs: $(find "$RUNS" -name done | wc -l)"
for f in /tmp/worker*.log; do
  tr '\r' '\n' < $f | grep -E "^== |^epoch [0-9]+: dev|best epoch|run folder|interrupted|[Ee]rror|Traceback"
done > $OUT/workers.txt
finished=$(cd "$RUNS" && find . -name done -printf '%h\n')
# The sanity verdicts the workers made (a row checked there is not checked again where the table is assembled).
checked=$(cd "$RUNS" && [ -d sanity ] && echo sanity)
[ -z "$finished" ] || (cd "$RUNS" && tar czf - --exclude='*.pt' --exclude='.lock' $finished $checked records.jsonl) | split -b 15m - $OUT/runs.tgz.
echo "end at +$(( $(date +%s) - T0 )) s"; ls -la $OUT
