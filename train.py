"""Train and evaluate one encoder on one task: `python train.py encoder=rcrn task=sst5`.

Sweeps: `python train.py -m encoder=bilstm,3l_bilstm task=trec seed=1,2,3`
(add `hydra/launcher=joblib` to run jobs in parallel). Finished runs are skipped,
interrupted ones resume from their last checkpoint, runs locked by another process are
skipped, and a failed job never stops the others: the sweep ends with a summary and
exits with status 1 if a job failed.

A bad input is one line on stderr (`error: ...`) and exit status 2; Ctrl-C or SIGTERM
saves a checkpoint and exits with status 130.

The same as `rnnbench train ...`: the application is rnnbench.commands.train.
"""
from __future__ import annotations

import sys

from rnnbench.commands.train import run_hydra

if __name__ == "__main__":
    sys.exit(run_hydra(sys.argv[1:], prog=sys.argv[0]))
