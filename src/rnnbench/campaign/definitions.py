"""Which experiments make a table: one definition per table, the experiment configs themselves.

A table's experiments are the configs under conf/experiment/ that name it (``table.name``,
inherited from a parent experiment), in their ``table.order`` (ties in name order): the order
they run in and the order of the table's columns. Those with ``table.not_run`` (rows out of
this budget's reach, e.g. the LSTM-baseline paper's Large rows) are rendered but not run unless
named with ``--only``. A table is asked for by its name (``rcrn_table5``) or by the short form
of the Makefile (``rcrn-5``). Tables that come from a benchmark rather than from training runs
(RCRN Table 10) are made by the script their registry file names (``benchmarks``: ``measured_by``).

Each experiment's sweep (its encoders) and the encoder size of each row it fills are read off the
composed configs without runs (``sweep_of``, ``parameter_counts``): a claim about model size ("the
Bi-2-LSTM has the same number of parameters as the Large 2-LSTM") needs no training, since the
count depends on neither the seed nor the data. ``make_table`` commits the counts beside the runs of
a table with such a claim (``results/<table>.parameters.csv``: ``claimed_parameter_counts``), and the
claims ledger decides the claim on them when a row has no runs.

Names and order are read from the YAML files rather than composed: composing every experiment
takes about 20 s, reading them a fraction of one. tests/test_campaign_definitions.py holds the
reading to what composing gives.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import yaml
from hydra.errors import HydraException

from rnnbench.compose import CONF_DIR, compose_config, sweeper_params
from rnnbench.errors import ConfigError, RnnbenchError
from rnnbench.results.claims import load_claims
from rnnbench.results.tables import REGISTRY, ours_only_table, paper_table, registry_key
from rnnbench.training.model import encoder_parameters


@dataclass(frozen=True)
class Experiment:
    name: str
    table: str | None
    order: int
    not_run: str  # why its rows are left out of the campaign; "" when they run
    part: str  # the named subset it belongs to ("small", "large"), or ""

    @property
    def runs_by_default(self) -> bool:
        return not self.not_run


class ExperimentPlan(NamedTuple):
    """One experiment of a table, composed once for a campaign: what is planned, priced, run and
    assembled. A named tuple, so ``for experiment, config, encoders in plans`` still reads it."""

    experiment: str  # its name (a config of conf/experiment/, or one defined in memory)
    config: object  # the composed config (``experiment=<experiment>`` and the campaign's overrides)
    encoders: list[str]  # the encoders of its sweep that exist


@functools.lru_cache(maxsize=None)
def _spec(path: Path) -> dict:
    # Read once: every key of every experiment walks its parents' files too. Callers only read it.
    return yaml.safe_load(path.read_text()) or {}


def _table_key(path: Path, key: str):
    """An experiment file's ``table.<key>``, else its parent experiment's (``defaults: [<parent>, ...]``)."""
    spec = _spec(path)
    table = spec.get("table") or {}
    if key in table:
        return table[key]
    for entry in spec.get("defaults") or []:
        parent = CONF_DIR / "experiment" / f"{entry}.yaml" if isinstance(entry, str) else None
        if parent is not None and parent.exists():
            return _table_key(parent, key)
    return None


def table_spec(cfg) -> dict:
    """The table a composed experiment config fills: its registry file's (the paper's numbers and
    claims), or for a table no paper printed (``table.caption``: our synthetic tasks) one of ours."""
    return ours_only_table(str(cfg.table.caption)) if cfg.table.caption else paper_table(str(cfg.table.name))


def table_key(experiment: str, key: str):
    """An experiment config's ``table.<key>`` as its file (or a parent experiment's) writes it,
    read without composing; None where none sets it."""
    path = CONF_DIR / "experiment" / f"{experiment}.yaml"
    return _table_key(path, key) if path.exists() else None


@functools.lru_cache(maxsize=1)
def all_experiments() -> tuple[Experiment, ...]:
    """Every experiment config, with the table it fills and its place there."""
    found = []
    for path in sorted((CONF_DIR / "experiment").glob("*.yaml")):
        found.append(Experiment(path.stem, _table_key(path, "name") or None, int(_table_key(path, "order") or 0),
                                str(_table_key(path, "not_run") or ""), str(_table_key(path, "part") or "")))
    return tuple(found)


def experiments_of(table: str) -> list[str]:
    """The experiments that fill ``table``, in the order they run and are shown."""
    members = [e for e in all_experiments() if e.table == table]
    return [e.name for e in sorted(members, key=lambda e: (e.order, e.name))]


@functools.cache
def benchmarks() -> dict[str, str]:
    """Tables measured by a benchmark script, not by training runs: table -> the script (of a checkout),
    as its registry file says (``measured_by``)."""
    return {table: str(script) for table, script in registry_key("measured_by").items()}


def tables() -> list[str]:
    """Every table an experiment fills, and every benchmark table, in name order (Table 2 before Table 10)."""
    return sorted({e.table for e in all_experiments() if e.table} | set(benchmarks()), key=natural_key)


def natural_key(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


@functools.cache
def short_names() -> dict[str, str]:
    """{short form: table}, the names of the Makefile's table targets (``make table-rcrn-5``): a
    registry file's ``short_name`` (``odyssey-1`` for lstm_odyssey_table1), else
    ``<paper>-<table number>`` from its ``paper`` and ``table``."""
    numbers, named = registry_key("table"), registry_key("short_name")
    out = {}
    for table, paper in registry_key("paper").items():
        short = named.get(table) or (f"{paper}-{numbers[table]}" if table in numbers else None)
        if short:
            out[str(short)] = table
    return out


def resolve(name: str) -> tuple[str, str | None]:
    """(table, part) named by a table's name, its short form (``rcrn-5``), or the short form of a
    part of it (``fhe-2-small``: FHE Table 2's experiments with ``table.part: small``); a clear
    error otherwise."""
    if name in tables():
        return name, None
    short, part = (name, "") if name in short_names() else (name.rsplit("-", 1) + [""])[:2]
    full = short_names().get(short)
    if full is not None and full in tables():
        if not part or part in parts(full):
            return full, part or None
        raise ConfigError(f"{name}: {full} has no part {part!r}" + (f"; its parts: {', '.join(parts(full))}" if parts(full) else ""))
    if name in {e.name for e in all_experiments()}:
        raise ConfigError(f"{name} is an experiment, not a table: give its table "
                          f"({next(e.table for e in all_experiments() if e.name == name)}), with --only {name} to run only it")
    raise ConfigError(f"no table {name!r}: `rnnbench list tables` names them (e.g. rcrn_table5, or rcrn-5)")


def parts(table: str) -> list[str]:
    """The named parts of ``table`` (``table.part`` of its experiments)."""
    return sorted({e.part for e in all_experiments() if e.table == table and e.part})


def to_run(table: str, only: list[str] | None = None, part: str | None = None) -> list[str]:
    """The experiments of ``table`` a campaign runs: those named in ``only`` (each must fill the
    table), else those of ``part``, else every one not left out (``table.not_run``); a row left out
    runs when named or when its part is asked for."""
    members = experiments_of(table)
    by_name = {e.name: e for e in all_experiments()}
    if part:
        chosen = [name for name in members if by_name[name].part == part]
        if not chosen:
            raise ConfigError(f"--part {part}: no experiment of {table} is in it; its parts: {', '.join(parts(table)) or 'none'}")
        return chosen
    if only:
        unknown = [name for name in only if name not in members]
        if unknown:
            raise ConfigError(f"--only {', '.join(unknown)}: not an experiment of {table}; its experiments: {', '.join(members)}")
        return [name for name in members if name in only]
    return [name for name in members if by_name[name].runs_by_default]


def table_scale(table: str) -> float:
    """The factor from a record's numbers to ``table``'s (``table.scale``: 100 for a table in %)."""
    return float(compose_config([f"experiment={experiments_of(table)[0]}"]).table.scale)


# ---------------------------------------------------------------------------------------------
# Sweeps and the encoder size of each row, from the composed configs


def sweep_of(experiment: str, extra: list[str] = ()) -> list[str]:
    """The encoders of an experiment's sweep (its ``hydra.sweeper.params.encoder``)."""
    return sweeper_params([f"experiment={experiment}", *extra])["encoder"].split(",")


def row_name(cfg) -> str:
    """The table row a run of ``cfg`` fills: the encoder, with the table's variant if any."""
    variant = cfg.get("table", {}).get("variant")
    return f"{cfg.encoder.name}/{variant}" if variant else str(cfg.encoder.name)


def parameter_counts(table: str) -> dict[str, tuple[int, str]]:
    """Row name -> (encoder parameters, the experiment it was counted from), for every row of
    ``table`` whose experiment config builds an encoder without data."""
    counts: dict[str, tuple[int, str]] = {}
    ambiguous: set[str] = set()
    for experiment in experiments_of(table):
        for encoder in sweep_of(experiment):
            try:
                cfg = compose_config([f"experiment={experiment}", f"encoder={encoder}"])
                row, count = row_name(cfg), encoder_parameters(cfg)
            except (RnnbenchError, HydraException, TypeError, ValueError):
                continue  # an encoder not built yet, or a head that needs the data to size it: no count from the config
            if row in counts and counts[row][0] != count:
                ambiguous.add(row)  # two experiments fill the row with different sizes: no one count is the row's
            counts.setdefault(row, (count, experiment))
    return {row: c for row, c in counts.items() if row not in ambiguous}


def claimed_parameter_counts(table: str) -> dict[str, tuple[int, str]]:
    """``parameter_counts`` of a table one of whose claims is on parameter counts (the evidence the
    ledger decides it on without runs); {} for any other table, which keeps no counts file."""
    if not (REGISTRY / f"{table}.yaml").exists():  # a table no paper printed: no claims
        return {}
    if not any(claim.get("quantity") == "parameters" for claim in load_claims(table)):
        return {}
    return parameter_counts(table)
