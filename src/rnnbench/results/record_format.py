"""The shape of a finished run's record (``record.json``): the typed ``Record``, the format it is
written in, and the one migration that reads records of older formats; and ``CommittedRun``, the
part of a record that a table's committed evidence holds of a run without its folder.

A record is written in the current format, ``RECORD_FORMAT``, named in its ``format`` key
(``run_record.build_record``), and read through ``Record.from_json`` (``records.read_record``):
a record of an older format is turned into the current shape, one of a newer format is refused
with one line. Code that reads records by key takes ``Record.as_dict()``.

Formats:

1. No ``format`` key: every record written before it. Keys were added to the record over time;
   one made before a key existed reads as that key's default below, which says what its absence
   meant (no ``status``: made before the patience rule, judged from its dev curve where the
   campaign reads it; no ``world_size``: one process; no ``smoke``: scored on the whole test split).
2. ``format`` = 2: every key below is written but ``peak_memory_scope``; its peak memory is the
   process's since it started (in a table process, the largest of every run before it too).
3. ``format`` = 3: ``peak_memory_scope`` is written ("run": the run's own peak since it started or
   resumed; "process": the platform could not reset the count).
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rnnbench.errors import RnnbenchError

RECORD_FORMAT = 3
FORMAT = "format"  # the key naming a record's format; absent in format 1


@dataclass(frozen=True)
class Record:
    """A finished run's record. Each default is what a record written before that key means."""

    identity: str = ""
    versions: dict = field(default_factory=dict)  # component -> version (none recorded: {})
    data_fingerprint: str = ""
    run_dir: str = ""
    task: str = ""
    encoder: str = ""
    embedding: str = ""
    seed: int | None = None
    experiment: str | None = None
    config: dict = field(default_factory=dict)  # the composed config, resolved
    git_commit: str = ""
    encoder_parameters: int | None = None
    model_parameters: int | None = None
    best_epoch: int | None = None
    epochs_run: int | None = None
    dev: dict = field(default_factory=dict)  # metric -> dev score at the selected epoch
    test: dict = field(default_factory=dict)  # metric -> test score
    test_stats: dict = field(default_factory=dict)  # encoder statistic -> the test pass's mean
    metric_implementations: dict = field(default_factory=dict)
    kernel_implementations: dict = field(default_factory=dict)  # kernel op -> implementation that ran
    history: list = field(default_factory=list)  # one dict per epoch
    status: str = ""  # under the patience rule (results/patience.py); "": made before it
    majority_baseline: float | None = None
    seconds_per_epoch: float | None = None
    tokens_per_second: float | None = None
    cpu_seconds_per_epoch: float | None = None  # results/timing.py; None: not measured
    load_average: float | None = None
    test_seconds: float | None = None
    inference_seconds_per_example: float | None = None
    peak_memory_mb: float | None = None
    peak_memory_scope: str = "process"  # "run" or "process" (formats 1-2: the process's peak)
    test_examples_scored: int | None = None
    smoke: bool = False  # test scored on part of the split (a smoke run, which tables refuse)
    world_size: int = 1  # processes that trained the run together
    hardware: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)  # split sizes, vocabulary, embedding coverage
    extra: dict = field(default_factory=dict)  # any other key (a distributed run's rank_weights)

    @classmethod
    def from_json(cls, data: dict, source: str | Path = "record") -> Record:
        """A record as its JSON holds it, of any format this version reads (``migrate``); ``source``
        names the file in an error."""
        values = migrate(data, source)
        known = {name: values[name] for name in NAMES if name in values}
        return cls(**known, extra={k: v for k, v in values.items() if k not in NAMES and k != FORMAT})

    @classmethod
    def of(cls, record: Record | Mapping) -> Record:
        """A record read or built (a ``Record``, or a dict as ``as_dict`` gives it, keys set on it included)."""
        return record if isinstance(record, Record) else cls.from_json(dict(record))

    def as_dict(self) -> dict:
        """The record as its JSON holds it."""
        values = {name: getattr(self, name) for name in NAMES}
        return {FORMAT: RECORD_FORMAT, **values, **self.extra}


NAMES = [f.name for f in dataclasses.fields(Record) if f.name != "extra"]


def migrate(data: dict, source: str | Path = "record") -> dict:
    """A record's keys in the current format. Format 1 needs no step of its own: its missing keys
    take their defaults (``Record``). A newer format than this version writes is refused."""
    version = data.get(FORMAT, 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RnnbenchError(f"{source}: the {FORMAT} key holds {version!r}, not a record format; "
                            f"run its train.py command again to redo the run")
    if version > RECORD_FORMAT:
        raise RnnbenchError(f"{source}: record format {version} is newer than this rnnbench reads (up to {RECORD_FORMAT}): "
                            f"update rnnbench to the version that wrote it, then run the command again")
    return _without_retired_keys(data)


# Config keys the schema no longer has, dropped from a record's config so that it merges into
# today's schema: table.protocol.bootstrap_samples (a knob nothing read; the estimate is exact).
RETIRED_CONFIG_KEYS = (("table", "protocol", "bootstrap_samples"),)


def _without_retired_keys(data: dict) -> dict:
    config = data.get("config")
    if not isinstance(config, dict):
        return data
    current = config_without_retired_keys(config)
    return data if current is config else {**data, "config": current}


def config_without_retired_keys(config: dict) -> dict:
    """A recorded config (a record's, or a checkpoint bundle's) without the keys the schema no
    longer has (``RETIRED_CONFIG_KEYS``); the caller's dict is left as it was."""
    found = [path for path in RETIRED_CONFIG_KEYS if _holds(config, path)]
    if not found:
        return config
    config = copy.deepcopy(config)
    for *parents, leaf in found:
        node = config
        for key in parents:
            node = node[key]
        del node[leaf]
    return config


def _holds(config: dict, path: tuple) -> bool:
    node = config
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


@dataclass(frozen=True)
class CommittedRun(Mapping):
    """What a table's committed evidence holds of a run's record, standing in for it where the run
    has no folder here: a subset of ``Record`` (``dev``, as stored: the record's own numbers;
    ``seconds_per_epoch``, ``epochs_run``, ``status``) with ``device`` (the record's
    ``hardware["device"]``), and what judges a run whose rows predate the patience rule:
    ``epoch_cap`` (the record's ``config["trainer"]["epochs"]``) and ``dev_curves`` (metric -> dev
    score per epoch, in table units at six significant digits, as the CSV gives them).

    Read by key, as a record is (``run["dev"]``, ``run.get("status")``); ``committed`` is True."""

    dev: dict
    seconds_per_epoch: float | None
    epochs_run: int | None
    device: str
    status: str
    epoch_cap: int | None
    dev_curves: dict
    committed: bool = True

    def __getitem__(self, key: str):
        if key not in COMMITTED_KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(COMMITTED_KEYS)

    def __len__(self) -> int:
        return len(COMMITTED_KEYS)


COMMITTED_KEYS = tuple(f.name for f in dataclasses.fields(CommittedRun))
