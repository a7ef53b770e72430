"""One row of a table's evidence CSV (``results/<table>.csv``): the typed ``EvidenceRow``, the
format it is written in, and the one migration that reads rows of older formats.

Every evidence CSV is written and read through ``EvidenceRow`` (``rnnbench.results.evidence``'s
``write_csv`` and ``parse_csv``): a row is written in the current format, ``EVIDENCE_FORMAT``, named
in its ``format`` column; a row of an older format is turned into the current shape by
``migrate`` as it is read, and one of a newer format is refused with one line.

Formats:

1. No ``format`` column. The table's rate choice is one sentence, ``lr_choice``: what the table
   printed under its selection line ("grid extended to {...}; choice interior").
2. ``format`` = 2. The rate choice is columns (``rnnbench.results.rate_choice``: ``lr_grid``,
   ``lr_extensions``, ``lr_extension_limit``, ``lr_pending``, ``lr_position``) and the table
   derives its sentence from them.

A format-1 sentence states only part of a choice: an extended grid's rates, largest first (their
configured order is not in it), but not how many were added unless the limit was hit, nor the
limit unless it was hit or is 0, nor the grid of a choice that was not extended. The migration
fills the columns the sentence states and leaves the rest empty; a row whose choice is then
incomplete states none (``RateChoice.from_columns`` gives None) until its table is written again,
which stores the whole choice from the configs (``rnnbench table NAME --no-run``, or
``scripts/migrate_evidence_format.py``).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from rnnbench.errors import RnnbenchError
from rnnbench.results import dropout_choice, rate_choice, timing

EVIDENCE_FORMAT = 2
FORMAT = "format"  # the column naming a row's format; absent in format 1

FIELDS = [
    FORMAT, "model", "encoder", "variant", "dataset", "metric", "scale", "seed", "lr", "phase", "reported", "dev", "test",
    "selected_epoch", "epoch_cap", "epochs_run", "seconds_per_epoch", "inference_seconds_per_example",
    "parameters", "threads", "commit", "versions", "device", "hardware", "dev_curve", "run",
    "status", "majority", "chosen_lr", *rate_choice.COLUMNS,
]
# Written only where some row has a value, so evidence written before they existed regenerates
# byte for byte: what a run's seconds were measured under (results/timing.py: process CPU seconds
# per epoch, the mean 1-minute load average), and for a cost benchmark's rows (scripts/bench_cost.py)
# the log of the row's time over the baseline encoder's, timed in the same process and round.
# A table whose protocol chooses dropout (``table.protocol.dropout_grid``) adds ``dropout`` (the run's p of
# the grid; empty: the config's own) and the encoder's choice (``rnnbench.results.dropout_choice``:
# ``dropout_grid``, ``dropout_chosen``).
OPTIONAL_FIELDS = [timing.RECORD_CPU, timing.LOAD, "log_ratio_to_baseline", "dropout", *dropout_choice.COLUMNS]


@dataclass
class EvidenceRow:
    """A row of one run in one table column. Numbers are typed (None: the cell is empty), text
    is text; ``extra`` holds a file's own columns (a superseded-runs file's ``superseded_on``)."""

    model: str = ""
    encoder: str = ""
    variant: str = ""
    dataset: str = ""  # the table's column
    metric: str = ""
    scale: float | None = None  # the table's (100: a table in %); None: the row is in its own units
    seed: int | None = None
    lr: float | None = None
    phase: str = ""  # "select" (a learning-rate grid run) or "final"
    reported: str = ""  # "yes": the run is at the encoder's chosen rate, else "no"
    dev: float | None = None  # None: a checkpoint re-scored on other inputs
    test: float | None = None
    selected_epoch: int | None = None
    epoch_cap: int | None = None
    epochs_run: int | None = None
    seconds_per_epoch: float | None = None
    inference_seconds_per_example: float | None = None
    parameters: int | None = None
    threads: str = ""
    commit: str = ""
    versions: str = ""  # the components' versions, as JSON
    device: str = ""
    hardware: str = ""
    dev_curve: str = ""  # the dev score per epoch, ";"-joined
    run: str = ""  # the run folder's name (its seed and identity)
    status: str = ""  # under the patience rule (results/patience.py); "" in rows written before it
    majority: float | None = None
    chosen_lr: float | None = None
    lr_grid: str = ""  # the rate choice's columns: results/rate_choice.py
    lr_extensions: int | None = None
    lr_extension_limit: int | None = None
    lr_pending: float | None = None
    lr_position: str = ""
    cpu_seconds_per_epoch: float | None = None
    load_average: float | None = None
    log_ratio_to_baseline: float | None = None
    dropout: float | None = None
    dropout_grid: str = ""  # the dropout choice's columns: results/dropout_choice.py
    dropout_chosen: float | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_cells(cls, cells: dict, source: str | Path = "evidence") -> EvidenceRow:
        """A row as ``csv.DictReader`` reads it, of any format this version reads (``migrate``);
        ``source`` names the file in an error."""
        return cls._typed(migrate(cells, source))

    @classmethod
    def of(cls, row: EvidenceRow | dict) -> EvidenceRow:
        """A row built in memory, in the current shape (``evidence_rows``, or a row read and relabelled)."""
        return row if isinstance(row, EvidenceRow) else cls._typed(row)

    @classmethod
    def _typed(cls, values: dict) -> EvidenceRow:
        known = {}
        for name, kind in KINDS.items():
            value = values.get(name)
            if kind is str:
                known[name] = "" if value is None else str(value)
            else:
                known[name] = None if value is None or value == "" else kind(value)
        return cls(**known, extra={k: v for k, v in values.items() if k not in KINDS and k != FORMAT})

    def as_dict(self) -> dict:
        """The row as a dict (empty cells ""), as the code that reads rows by column name takes it."""
        values = {FORMAT: EVIDENCE_FORMAT}
        for name in KINDS:
            value = getattr(self, name)
            values[name] = "" if value is None else value
        return {**values, **self.extra}

    def cells(self, fields: list[str]) -> dict[str, str]:
        """The CSV cells of ``fields``: floats as ``repr`` (an exact round trip: a table rendered from
        the CSV equals one rendered from the records)."""
        values = self.as_dict()
        return {name: _cell(values.get(name, "")) for name in fields}

    def has(self, name: str) -> bool:
        """Whether the row has a value in column ``name``."""
        value = getattr(self, name) if name in KINDS else self.extra.get(name)
        return value not in (None, "")


KINDS = {f.name: {"float | None": float, "int | None": int, "str": str}[f.type] for f in dataclasses.fields(EvidenceRow)
         if f.name != "extra"}


def _cell(value) -> str:
    if isinstance(value, float):
        return repr(value)
    return "" if value is None else str(value)


def migrate(cells: dict, source: str | Path = "evidence") -> dict:
    """A row's cells in the current format: the one step from each older format to the next.
    A newer format than this version writes is refused (``RnnbenchError``, naming ``source``)."""
    version = _version(cells.get(FORMAT), source)
    if version == 1:
        cells = _from_format_1(cells, source)
    return cells


def _version(text, source) -> int:
    if text is None or text == "":
        return 1
    try:
        version = int(text)
    except ValueError:
        version = None
    if version is None or version < 1:
        raise RnnbenchError(f"{source}: the {FORMAT} column holds {text!r}, not an evidence format; write the table again "
                            f"(rnnbench table NAME --no-run) to rewrite its evidence")
    if version > EVIDENCE_FORMAT:
        raise RnnbenchError(f"{source}: evidence format {version} is newer than this rnnbench reads (up to {EVIDENCE_FORMAT}): "
                            f"update rnnbench to the version that wrote it, then run the command again")
    return version


# Format 1's rate-choice sentences, as RateChoice.statement worded them then: the only ones ever written.
_GRID = r"grid extended to \{(?P<grid>[^}]*)\}"
_SIDE = r"the choice is the grid's (?:smallest|largest) rate"
_INTERIOR = re.compile(rf"{_GRID}; choice interior")
_PROVISIONAL = re.compile(rf"(?:{_GRID}; )?{_SIDE} and provisional: the selection runs at (?P<pending>\S+), one step past that edge, "
                          r"have not run yet")
_OFF = re.compile(rf"{_SIDE}, still at the edge: grid extension is off \(table\.protocol\.max_grid_extensions=0\)")
_LIMIT = re.compile(rf"{_GRID}; limit of (?P<limit>\d+) extension\(s\) hit at \S+: still at the edge")


def _from_format_1(cells: dict, source) -> dict:
    """A format-1 row in format 2: its ``lr_choice`` sentence as the choice columns it states (see
    the module docstring for what it leaves empty)."""
    out = {k: v for k, v in cells.items() if k != "lr_choice"}
    out.update(choice_columns_of(cells.get("lr_choice") or "", source))
    return out


def choice_columns_of(sentence: str, source: str | Path = "evidence") -> dict:
    """The rate-choice columns a format-1 ``lr_choice`` sentence states; empty for an empty one."""
    columns = rate_choice.no_columns()
    if not sentence:
        return columns

    def grid(match) -> str:
        rates = match.group("grid")
        return ";".join(repr(float(x)) for x in rates.split(", ")) if rates else ""

    if match := _INTERIOR.fullmatch(sentence):
        columns.update(lr_grid=grid(match), lr_position=rate_choice.INTERIOR)
    elif match := _PROVISIONAL.fullmatch(sentence):
        extended = match.group("grid") is not None
        columns.update(lr_grid=grid(match) if extended else "", lr_extensions="" if extended else "0",
                       lr_pending=repr(float(match.group("pending"))), lr_position=rate_choice.PROVISIONAL)
    elif _OFF.fullmatch(sentence):
        columns.update(lr_extensions="0", lr_extension_limit="0", lr_position=rate_choice.EDGE)
    elif match := _LIMIT.fullmatch(sentence):
        columns.update(lr_grid=grid(match), lr_extensions=match.group("limit"), lr_extension_limit=match.group("limit"),
                       lr_position=rate_choice.EDGE)
    else:
        raise RnnbenchError(f"{source}: lr_choice {sentence!r} is not a rate-choice sentence rnnbench wrote; restore the file "
                            f"from git, or write the table again (rnnbench table NAME --no-run)")
    return columns
