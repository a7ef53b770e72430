"""Train and evaluate one encoder on one task: `python train.py encoder=rcrn task=sst5`.

Sweeps: `python train.py -m encoder=bilstm,3l_bilstm task=trec seed=1,2,3`
(add `hydra/launcher=joblib` to run jobs in parallel). Finished runs are skipped,
interrupted ones resume from their last checkpoint.
"""
from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

import rnnbench.config  # noqa: F401  (registers the structured-config schema)
from rnnbench.errors import RnnbenchError
from rnnbench.run import train


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float:
    try:
        record = train(cfg)
    except RnnbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    return record["test"][cfg.task.select_metric]


if __name__ == "__main__":
    main()
