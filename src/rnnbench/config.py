"""Structured-config schemas: a typo in a key is an error that names the key.

The task and encoder groups stay open dicts (each encoder has its own
constructor arguments; Hydra still refuses an override of a key a config does
not have). Registered with Hydra's ConfigStore as ``config_schema``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore


@dataclass
class PathsConf:
    data_dir: str = "${oc.env:RNNBENCH_DATA,data}"
    runs_dir: str = "${oc.env:RNNBENCH_RUNS,runs}"
    cache_dir: str = "${oc.env:RNNBENCH_CACHE,.cache/rnnbench}"
    results_dir: str = "results"


@dataclass
class EmbeddingConf:
    name: str = "glove_6b_50d"
    kind: str = "glove"  # glove | random
    path: Optional[str] = None  # GloVe text file: .txt, .txt.gz or the official .zip
    dim: int = 50
    freeze: Optional[bool] = None  # None: the task decides (task.freeze_embeddings)
    lowercase: bool = True  # GloVe 6B is lower-cased; 840B is cased
    dropout: float = 0.0


@dataclass
class TrainerConf:
    epochs: int = 10
    batch_size: int = 50
    eval_batch_size: int = 200
    optimizer: str = "adam"  # adam | adadelta | sgd
    lr: float = 1e-3
    weight_decay: float = 0.0
    grad_clip: float = 5.0
    patience: int = 3  # epochs without dev improvement before stopping; 0 = never stop early
    max_batches: Optional[int] = None  # per epoch (smoke runs); None = the whole split
    max_eval_batches: Optional[int] = None
    truncate: Optional[int] = None  # cut every text to this many tokens (smoke runs, memory caps); None = keep all
    checkpoint_every: int = 200  # steps between mid-epoch checkpoints
    bucket_size: int = 100  # batches sorted by length within buckets of this many batches
    device: str = "auto"  # auto | cpu | cuda
    num_threads: Optional[int] = None  # torch CPU threads; None = torch's default
    mc_dropout_samples: int = 0  # LSTM baseline paper: 60 at test time; 0 = off
    mc_dropout_combine: str = "vote"  # vote | mean
    progress: bool = True
    kernel_impl: str = "auto"  # auto | reference | cpu | triton: which implementation of the recurrence kernels runs


@dataclass
class LoggerConf:
    kind: str = "none"  # none | csv | tensorboard | wandb
    log_every_n_steps: int = 50  # the training loss every n steps as well as each epoch's metrics; 0 = per epoch only
    project: str = "rnnbench"
    mode: str = "offline"  # wandb mode unless WANDB_MODE is set


@dataclass
class ProtocolConf:
    """How a table's sweep compares encoders (``make table-...`` applies it; README "Comparison protocol").

    Every encoder gets the same budget: its learning rate is chosen from ``lr_grid`` on the
    mean dev score of the first ``select_seeds`` seeds (test is never looked at), then the
    remaining ``seeds`` run at the chosen rate. Epoch cap and patience are the config's."""

    seeds: List[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])  # paired: a seed gives every encoder the same data order
    lr_grid: List[float] = field(default_factory=list)  # empty: the config's trainer.lr only
    select_seeds: int = 2
    confidence: float = 0.95  # of the intervals in the table and the claims ledger
    bootstrap_samples: int = 10000  # paired bootstrap over test items


@dataclass
class TableConf:
    """Which paper table an experiment fills and how our metrics map onto its columns.

    Either one ``column`` shown with ``metric``, or ``columns`` (paper column -> our
    test metric). Several experiments may fill one table: different columns (datasets)
    or variants (registry rows marked ``variant: X`` take runs of experiments with that
    variant, e.g. attentive pooling)."""

    name: str = ""  # registry file, e.g. rcrn_table5
    column: str = ""  # the paper's value key, e.g. TREC
    metric: str = "accuracy"  # our test metric shown beside it
    columns: Optional[Dict[str, str]] = None  # {paper column: our metric}; replaces column/metric
    scale: float = 100.0  # ours * scale is in the paper's units
    variant: Optional[str] = None
    data_note: str = ""  # footnote: what data our runs used (partial data, substitutes)
    digits: int = 1  # decimals shown
    caption: Optional[str] = None  # set only for a table no paper printed (our synthetic tasks); name is then ours
    protocol: ProtocolConf = field(default_factory=ProtocolConf)


@dataclass
class Config:
    task: Any = field(default_factory=dict)
    encoder: Any = field(default_factory=dict)
    embedding: EmbeddingConf = field(default_factory=EmbeddingConf)
    trainer: TrainerConf = field(default_factory=TrainerConf)
    logger: LoggerConf = field(default_factory=LoggerConf)
    paths: PathsConf = field(default_factory=PathsConf)
    seed: int = 1
    experiment: Optional[str] = None  # name of the paper table a sweep fills (conf/experiment)
    table: Optional[TableConf] = None


def register() -> None:
    ConfigStore.instance().store(name="config_schema", node=Config)


register()
