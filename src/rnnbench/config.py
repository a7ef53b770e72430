"""Structured-config schemas: a typo in a key is an error that names the key.

Names are enums (an unknown optimizer, logger, device or embedding kind is refused
when the config is composed) and ``validate`` checks ranges and what the schema cannot
express (unknown keys added with ``+``, the choices of string-typed keys, the selection
metric, CUDA, the runs folder) before any work starts: every problem is one ``ConfigError``
line naming the value.

The task and encoder groups stay open dicts in the composed config, so that a run's config
holds what its YAML and overrides give and nothing more (its resolved values are its
identity). ``check_components`` checks ``encoder`` and ``task.head`` against their class's
typed options instead (``rnnbench.options``), without changing them: ``validate`` strictly,
``compose_config`` as the base of a sweep may need. Registered with Hydra's ConfigStore as
``config_schema``.
"""
from __future__ import annotations

import difflib
import math
import os
import tempfile
from dataclasses import dataclass, field, fields, is_dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from rnnbench import options
from rnnbench.encoders import options as encoder_options  # noqa: F401 (registers each encoder's options)
from rnnbench.errors import ConfigError, OutputNotWritable
from rnnbench.heads import options as head_options  # noqa: F401 (registers each head's options)


class Optimizer(StrEnum):
    adam = "adam"
    adadelta = "adadelta"
    sgd = "sgd"


class Device(StrEnum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


class LoggerKind(StrEnum):
    none = "none"
    csv = "csv"
    tensorboard = "tensorboard"
    wandb = "wandb"


class EmbeddingKind(StrEnum):
    glove = "glove"
    random = "random"


class CharKind(StrEnum):
    none = "none"
    bigru = "bigru"
    cnn = "cnn"


class McCombine(StrEnum):
    vote = "vote"
    mean = "mean"


@dataclass
class PathsConf:
    data_dir: str = "${oc.env:RNNBENCH_DATA,data}"
    runs_dir: str = "${oc.env:RNNBENCH_RUNS,runs}"
    cache_dir: str = "${oc.env:RNNBENCH_CACHE,.cache/rnnbench}"
    results_dir: str = "results"


@dataclass
class CharConf:
    """The character-level word encoder (``rnnbench.nn.char_encoder``; docs/configuration.md):
    each word's characters, encoded, concatenated to its word vector. ``none`` (the default)
    adds nothing: the key is then left out of a run's identity."""

    kind: CharKind = CharKind.none  # none | bigru (the RCRN paper's "standard BiGRU") | cnn (Ma & Hovy 2016)
    dim: int = 30  # character embedding width (Ma & Hovy 2016: 30)
    hidden: int = 25  # bigru: units per direction, the word's vector is both final states (2 * hidden)
    filters: int = 30  # cnn: filters per width (Ma & Hovy 2016: 30 of width 3)
    widths: List[int] = field(default_factory=lambda: [3])  # cnn: the word's vector is filters * len(widths)
    max_word_length: int = 20  # characters kept per word (its first ones; ours)
    dropout: float = 0.0  # on the character embeddings, before the BiGRU or the convolution


@dataclass
class EmbeddingConf:
    name: str = "glove_6b_50d"
    kind: EmbeddingKind = EmbeddingKind.glove
    path: Optional[str] = None  # GloVe text file: .txt, .txt.gz or the official .zip
    dim: int = 50
    freeze: Optional[bool] = None  # None: the task decides (task.freeze_embeddings)
    lowercase: bool = True  # GloVe 6B is lower-cased; 840B is cased
    dropout: float = 0.0  # on the embedding layer's output (word vector and character features), training only
    char: CharConf = field(default_factory=CharConf)
    # A run stops before training when fewer than this share of its vocabulary (training
    # split, specials excluded) has a vector in the file: a file of another width, cased
    # vectors for a lower-cased vocabulary, the wrong language. Real tasks here: 0.89-0.98.
    min_coverage: float = 0.5


def embeddings_frozen(cfg) -> bool:
    """Whether a run's word vectors are frozen: ``embedding.freeze`` where set, else the task's
    ``freeze_embeddings`` (its default). ``cfg``: a composed config or a record's plain dict."""
    freeze = (cfg.get("embedding") or {}).get("freeze")
    return bool(freeze if freeze is not None else (cfg.get("task") or {}).get("freeze_embeddings", False))


class KernelImpl(StrEnum):
    """trainer.kernel_impl: rnnbench.kernels.dispatch.CHOICES (a test holds the two equal; the kernels import torch)."""

    auto = "auto"  # triton on CUDA, cpu elsewhere
    reference = "reference"
    torch = "torch"
    cpu = "cpu"
    triton = "triton"


class PrecisionName(StrEnum):
    """trainer.precision: float32, or autocast to bfloat16 / float16."""

    float32 = "32"
    bf16 = "bf16"
    fp16 = "fp16"


PRECISIONS = tuple(p.value for p in PrecisionName)


@dataclass
class TrainerConf:
    epochs: int = 10
    batch_size: int = 50
    eval_batch_size: int = 200
    optimizer: Optimizer = Optimizer.adam
    lr: float = 1e-3
    weight_decay: float = 0.0
    grad_clip: float = 5.0
    patience: int = 3  # epochs without dev improvement before stopping; 0 = never stop early
    # Patience counts once a run has started: an epoch's dev score beats the majority class (always) and, where
    # this is set, its mean training loss is below this fraction of the prior's loss (the cross-entropy of
    # predicting the training labels' frequencies; results/patience.py). None: the dev score alone, as every
    # run before the option. A 3-layer BiLSTM on 28-batch epochs beat the majority by chance at its
    # training loss of 0.69 and was stopped before it took off (results/diagnostics/slow_start.md).
    start_below_prior: Optional[float] = None
    max_batches: Optional[int] = None  # per epoch (smoke runs); None = the whole split
    max_eval_batches: Optional[int] = None
    truncate: Optional[int] = None  # cut every text to this many tokens (smoke runs, memory caps); None = keep all
    checkpoint_every: int = 200  # steps between mid-epoch checkpoints
    bucket_size: int = 100  # batches sorted by length within buckets of this many batches
    device: Device = Device.auto
    # torch CPU threads. 1 by default, as every table's experiment: the thread count changes the
    # order of float sums, so a run's numbers (and its identity); null = torch's default, the
    # machine's core count, whose results then differ from machine to machine (docs/runs.md).
    num_threads: Optional[int] = 1
    mc_dropout_samples: int = 0  # LSTM baseline paper: 60 at test time; 0 = off
    mc_dropout_combine: McCombine = McCombine.vote
    progress: bool = True
    # kernel_impl and precision are strings, their choices in ``metadata`` (checked by ``validate``): an
    # enum field would change the composed value, and ``trainer.precision=32`` must stay the string "32"
    # that run identities hold.
    # Which implementation of the recurrence kernels runs: auto (triton on CUDA, cpu elsewhere) |
    # reference | torch | cpu | triton. Passed to the model's encoder; written in the record.
    kernel_impl: str = field(default="auto", metadata={"choices": KernelImpl})
    # 32 (float32, default) | bf16 | fp16: autocast around the forward pass, the encoder's recurrence
    # kept in float32 (training/precision.py says why); fp16 adds a gradient scaler and needs CUDA.
    precision: str = field(default="32", metadata={"choices": PrecisionName})


@dataclass
class LoggerConf:
    kind: LoggerKind = LoggerKind.none
    log_every_n_steps: int = 50  # the training loss every n steps as well as each epoch's metrics; 0 = per epoch only
    project: str = "rnnbench"
    mode: str = "offline"  # wandb mode unless WANDB_MODE is set


@dataclass
class ProtocolConf:
    """How a table's sweep compares encoders (``make table-...`` applies it; docs/comparing.md).

    Every encoder gets the same budget: its learning rate is chosen from ``lr_grid`` on the
    mean dev score of the first ``select_seeds`` seeds (test is never looked at), extending the grid
    past an edge the choice sits at (``max_grid_extensions``), then the remaining ``seeds`` run at
    the chosen rate. Epoch cap and patience are the config's; patience counts from the first epoch
    that beats the dev split's majority-class score (results/patience.py)."""

    seeds: List[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])  # paired: a seed gives every encoder the same data order
    lr_grid: List[float] = field(default_factory=list)  # empty: the config's trainer.lr only
    select_seeds: int = 2
    # Another experiment of the same table whose selection gives each encoder its rate here (RCRN
    # Table 1: one domain's choice for all, under half the runs); then every seed runs at that rate.
    lr_from: Optional[str] = None
    # A choice at the grid's smallest or largest rate extends the grid one step past that edge (x0.5, x2)
    # and is made again, at most this many times (0: never); campaign/protocol.py choose_rate.
    max_grid_extensions: int = 3
    # Dropout p's tried at the chosen rate on the selection seeds, after the rate (empty: the config's own
    # dropout only); the best mean dev score among the config's own and these is chosen (campaign/protocol.py).
    # Where p goes is the same for every encoder: campaign/dropout.py.
    dropout_grid: List[float] = field(default_factory=list)
    confidence: float = 0.95  # of the intervals in the table and the claims ledger


@dataclass
class PaperDataConf:
    """The paper's data setting for an experiment, where our task has an option for it: the regime
    ladder's rung 4 (``rnnbench ladder``). Read by the ladder only; no run's identity holds it."""

    overrides: List[str] = field(default_factory=list)  # what gives the paper's data (e.g. task.reader.phrases=true)
    what: str = ""  # the setting, in words, for the ladder's table
    work: float = 1.0  # training work per epoch over today's (tokens, or pairs), measured on the data: prices the rung
    needs: str = ""  # a file under the data folder the setting reads ("" for none), named in the plan where absent


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
    # Footnote on the rung of the regime ladder the rows are run at and the gap to the paper it leaves, for a
    # table whose registry declares no ``settings`` (its claims are decided over an open choice instead:
    # MZU Table 6's baselines at rung 3, shown beside).
    setting_note: str = ""
    # Why this experiment's rows are left out of the campaign (e.g. "not run on this budget (see note)"):
    # the cell a row without runs shows, so a row left out reads differently from one still running.
    not_run: str = ""
    digits: int = 1  # decimals shown
    caption: Optional[str] = None  # set only for a table no paper printed (our synthetic tasks); name is then ours
    protocol: ProtocolConf = field(default_factory=ProtocolConf)
    # Columns scored by re-evaluating the reported runs' checkpoints with reader overrides (evaluate.py),
    # not by training again: {column: [override, ...]}, e.g. FHE Table 4's longer test sequences.
    evaluated_columns: Dict[str, List[str]] = field(default_factory=dict)
    # Where this experiment comes among its table's experiments (the order they run in and the table's
    # column order); ties are taken in name order. One definition per table: the table's experiments
    # are the configs that name it, in this order (rnnbench.campaign.definitions).
    order: int = 0
    # A named subset of the table's experiments that can be run alone ("small": the CPU-sized rows;
    # "large": the paper's Large rows): `rnnbench table NAME --part small`, `make table-fhe-2-small`.
    part: str = ""
    # A figure drawn from the table's evidence whenever the table is written, under paths.results_dir
    # (FHE: accuracy against gate openness, rnnbench.results.openness); "" for none.
    openness_figure: str = ""
    # The paper's data setting for this experiment, where the task has an option for it (the regime
    # ladder's rung 4); None: our training data are already the paper's, or no option gives them.
    paper_data: Optional[PaperDataConf] = None


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


# (key, lowest allowed value, what it is); None is allowed where the schema says Optional.
RANGES = [
    ("trainer.epochs", 1, "the number of training epochs"),
    ("trainer.batch_size", 1, "examples per training batch"),
    ("trainer.eval_batch_size", 1, "examples per evaluation batch"),
    ("trainer.max_batches", 1, "training batches per epoch (null: the whole split)"),
    ("trainer.max_eval_batches", 1, "evaluation batches (null: the whole split)"),
    ("trainer.truncate", 1, "tokens kept per text (null: all)"),
    ("trainer.checkpoint_every", 1, "batches between checkpoints"),
    ("trainer.bucket_size", 1, "batches per length bucket"),
    ("trainer.num_threads", 1, "torch CPU threads (null: torch's default, the machine's core count)"),
    ("trainer.patience", 0, "epochs without improvement before stopping (0: never)"),
    ("trainer.start_below_prior", 0.0, "the fraction of the prior's loss a run's training loss must fall under to start (null: off)"),
    ("trainer.mc_dropout_samples", 0, "Monte Carlo dropout samples (0: off)"),
    ("trainer.lr", 0.0, "the learning rate"),
    ("trainer.weight_decay", 0.0, "the weight decay"),
    ("trainer.grad_clip", 0.0, "the gradient norm clip (0: off)"),
    ("embedding.dim", 1, "the embedding width"),
    ("embedding.dropout", 0.0, "the embedding dropout"),
    ("embedding.min_coverage", 0.0, "the share of the vocabulary the embedding file must cover"),
    ("embedding.char.dim", 1, "the character embedding width"),
    ("embedding.char.hidden", 1, "the character BiGRU's units per direction"),
    ("embedding.char.filters", 1, "the character CNN's filters per width"),
    ("embedding.char.max_word_length", 1, "the characters kept per word"),
    ("embedding.char.dropout", 0.0, "the character embedding dropout"),
    ("logger.log_every_n_steps", 0, "steps between training-loss logs (0: per epoch only)"),
]
AT_MOST = {"embedding.dropout": (1.0, False), "embedding.min_coverage": (1.0, True), "embedding.char.dropout": (1.0, False)}


def _unknown_keys(node, schema, where: str) -> None:
    """Keys a ``+key=value`` override added to a node the schema types (Hydra composes them)."""
    if node is None or not hasattr(node, "keys"):
        return
    known = {f.name: f for f in fields(schema)}
    for key in node.keys():
        if key == "hydra" and not where:  # present when composed with return_hydra_config
            continue
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1)
            hint = f"did you mean {where}{close[0]}?" if close else f"known keys: {', '.join(known)}"
            raise ConfigError(f"{where}{key}: unknown key ({hint}); remove it or fix its spelling")
        typed = globals().get(str(known[key].type).removeprefix("Optional[").removesuffix("]"))
        if is_dataclass(typed):
            _unknown_keys(node.get(key), typed, f"{where}{key}.")


def _select(cfg, key: str):
    node = cfg
    for part in key.split("."):
        node = node.get(part) if node is not None else None
    return node


def check_ranges(cfg) -> None:
    for key, low, what in RANGES:
        value = _select(cfg, key)
        if value is None:
            continue
        high, inclusive = AT_MOST.get(key, (math.inf, True))
        bad = not math.isfinite(value) if isinstance(value, float) else False
        bad = bad or value < low or value > high or (value == high and not inclusive)
        if bad:
            bound = f"at least {low}" + (f" and {'at most' if inclusive else 'below'} {high}" if high != math.inf else "")
            raise ConfigError(f"{key}={value}: {what} must be {bound}")


def _check_task(cfg) -> None:
    task = cfg.get("task")
    if not task or "metrics" not in task:
        return
    from rnnbench.metrics import check_names  # metrics import their implementations: only when validating

    metrics = list(task.metrics)
    check_names(metrics)
    subsets = list((task.get("metric_subsets") or {}).keys())
    allowed = metrics + [f"{m}_{s}" for m in metrics for s in subsets]
    select = task.get("select_metric")
    if select not in allowed:
        close = difflib.get_close_matches(str(select), allowed, n=1)
        hint = f"did you mean task.select_metric={close[0]}?" if close else "set task.select_metric to one of them"
        raise ConfigError(f"task.select_metric={select}: not one of this task's metrics ({', '.join(allowed)}); {hint}")
    mode = task.get("select_mode", "max")
    if mode not in ("max", "min"):
        raise ConfigError(f"task.select_mode={mode}: must be max or min")


def _check_char(cfg) -> None:
    char = _select(cfg, "embedding.char")
    if char is None or str(char.get("kind", "none")) != "cnn":
        return
    widths = list(char.get("widths") or [])
    if not widths or any(int(w) < 1 for w in widths):
        raise ConfigError(f"embedding.char.widths={widths}: the character CNN needs at least one filter width, each at least 1")


def check_device(cfg) -> None:
    if str(cfg.trainer.device) != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}, but no GPU is visible"
        raise ConfigError(f"trainer.device=cuda: CUDA is not available here (torch {torch.__version__}, {build}); "
                          "use trainer.device=auto or trainer.device=cpu")


def _check_choices(cfg) -> None:
    """The trainer's string keys with a closed set of values (``metadata["choices"]``)."""
    for f in fields(TrainerConf):
        if "choices" in f.metadata:
            options.check_choice(f"trainer.{f.name}", cfg.trainer.get(f.name, f.default), f.metadata["choices"])


def check_components(cfg, strict: bool = True) -> None:
    """``encoder`` and ``task.head`` against the typed options of the classes they name
    (``rnnbench.options``): an unknown key, a value outside a choice, a wrong type. ``strict=False``
    for a config merely composed (the base of a sweep): a key another encoder (head) takes passes."""
    encoder = cfg.get("encoder")
    options.check(encoder, "encoder", str(encoder.get("name", "")) if encoder else "", strict)
    task = cfg.get("task") or {}
    options.check(task.get("head"), "task.head", f"task {task.get('name')}" if task.get("name") else "", strict)


def _check_precision(cfg) -> None:
    value = str(cfg.trainer.get("precision", "32"))
    if value == "fp16" and (str(cfg.trainer.device) == "cpu" or not _cuda_available()):
        raise ConfigError("trainer.precision=fp16 needs CUDA (autocast on the CPU supports bfloat16): use trainer.precision=bf16 or 32")


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def check_runs_dir_writable(runs_dir: str | Path) -> None:
    """Create the runs folder if needed and write a probe file in it (permission bits, a
    read-only mount, a path through a file): refused now rather than after training."""
    runs = Path(runs_dir)
    try:
        runs.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=runs)
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        raise OutputNotWritable(f"paths.runs_dir={runs}: cannot write there ({exc.strerror or exc}); "
                                "set paths.runs_dir (or RNNBENCH_RUNS) to a writable folder") from None


def validate(cfg) -> None:
    """Everything that can be checked before any work starts; raises one ConfigError line."""
    _unknown_keys(cfg, Config, "")
    check_components(cfg)
    _check_choices(cfg)
    check_ranges(cfg)
    _check_char(cfg)
    _check_task(cfg)
    check_device(cfg)
    _check_precision(cfg)
    check_runs_dir_writable(cfg.paths.runs_dir)


def sweep_values(values) -> str:
    """A list as a Hydra sweep's comma-separated values: an experiment's sweeper reads its seeds
    from ``table.protocol.seeds`` (``seed: ${sweep:${table.protocol.seeds}}``), written once."""
    return ",".join(str(v) for v in values)


def register() -> None:
    ConfigStore.instance().store(name="config_schema", node=Config)
    OmegaConf.register_new_resolver("sweep", sweep_values, replace=True)


register()
