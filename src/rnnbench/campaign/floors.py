"""A table's majority-class floors computed from its experiment configs and the data folder, and
``results/floors.csv`` written from them (``rnnbench floors``); ``results.floors`` holds the
floors' type, the file's format and the computation on one split's records."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from omegaconf import OmegaConf

from rnnbench.campaign.definitions import experiments_of, natural_key, tables
from rnnbench.compose import compose_config
from rnnbench.data.prepare import build_reader, load_splits
from rnnbench.errors import ConfigError, DatasetMissingError
from rnnbench.results.floors import FILE, Floor, Loader, columns_floors, format_floors, has_floor, read_floors
from rnnbench.results.records import temporary_for
from rnnbench.results.tables import column_metrics


def split_loader() -> Loader:
    """Reads a task's splits with its reader (``load_splits``, cached), once per reader and data
    folder: a table's experiments mostly share their task."""
    loaded: dict[str, tuple[dict, list[str]]] = {}

    def load(cfg) -> tuple[dict, list[str]]:
        key = json.dumps([OmegaConf.to_container(cfg.task.reader, resolve=True), str(cfg.paths.data_dir)], sort_keys=True, default=str)
        if key not in loaded:
            reader = build_reader(cfg.task.reader)
            loaded[key] = load_splits(reader, cfg.paths.data_dir, cfg.paths.cache_dir), list(reader.label_names)
        return loaded[key]

    return load


def experiment_floors(table: str, experiment: str, overrides: list[str], load: Loader) -> list[Floor]:
    """The floors of one experiment's columns: ``table.columns`` on dev and test, and each of
    ``table.evaluated_columns`` on the test split its reader overrides give."""
    cfg = compose_config([f"experiment={experiment}", *overrides])
    columns = {c: m for c, m in column_metrics(cfg.table, cfg).items() if has_floor(str(m), cfg.task)}
    out = []
    if columns:
        splits, names = load(cfg)
        out += columns_floors(table, columns, splits, cfg.task, cfg.table.scale, names)
    metric = str(cfg.table.metric)
    for column, extra in (cfg.table.evaluated_columns or {}).items():
        if not has_floor(metric, cfg.task):
            continue
        rescored = compose_config([f"experiment={experiment}", *overrides, *extra])
        splits, names = load(rescored)
        out += columns_floors(table, {column: metric}, splits, rescored.task, rescored.table.scale, names, ("test",))
    return out


def table_floors(table: str, overrides: list[str] = (), load: Loader | None = None) -> list[Floor]:
    """Every floor of ``table``, from each of its experiment configs (``campaign.definitions``).
    Two experiments giving one column different floors is an error: a column is one set of items."""
    load = load or split_loader()
    found: dict[tuple[str, str, str], tuple[Floor, str]] = {}
    for experiment in experiments_of(table):
        for floor in experiment_floors(table, experiment, list(overrides), load):
            seen = found.get(floor.key())
            if seen is not None and seen[0] != floor:
                raise ConfigError(f"{table}, column {floor.dataset!r} ({floor.split}): experiment {seen[1]} gives a majority-class "
                                  f"floor of {seen[0].majority} over {seen[0].items} items, {experiment} {floor.majority} over "
                                  f"{floor.items}: give the columns different names in their table.columns")
            found.setdefault(floor.key(), (floor, experiment))
    return [floor for floor, _ in found.values()]


def committed_tables(results_dir: Path) -> list[str]:
    """The tables with committed evidence (``results/<table>.csv``), in name order."""
    return sorted((t for t in tables() if (Path(results_dir) / f"{t}.csv").is_file()), key=natural_key)


def write_floors(results_dir: Path, tables: list[str] | None = None, overrides: list[str] = (),
                 say: Callable[[str], None] = print) -> list[Floor]:
    """Recompute the floors of ``tables`` (default: every committed table) and rewrite
    ``results/floors.csv`` with them and the lines of the other committed tables as they were.
    A table whose data is absent keeps its lines; each table gets one line through ``say``."""
    results_dir = Path(results_dir)
    committed = committed_tables(results_dir)
    wanted = committed if tables is None else list(tables)
    missing = [t for t in wanted if t not in committed]
    if missing:
        raise ConfigError(f"no committed evidence for {', '.join(missing)} (results/<table>.csv under {results_dir}): "
                          "a floor is written for a table's committed rows; make the table first (`rnnbench table NAME`)")
    kept = {key: floor for key, floor in read_floors(results_dir).items() if floor.table in committed and floor.table not in wanted}
    load = split_loader()
    for table in wanted:
        try:
            floors = table_floors(table, overrides, load)
        except DatasetMissingError as exc:
            kept.update({key: f for key, f in read_floors(results_dir).items() if f.table == table})
            say(f"{table}: skipped, its data is missing ({exc}); its lines in {FILE} are kept")
            continue
        kept.update({floor.key(): floor for floor in floors})
        say(f"{table}: {summary(floors)}")
    path = results_dir / FILE
    with temporary_for(path) as tmp:
        tmp.write_text(format_floors(kept.values()))
    return sorted(kept.values(), key=Floor.key)


def summary(floors: list[Floor]) -> str:
    """One line on a table's floors: its columns' test floors, or why it has none."""
    if not floors:
        return "no column with a majority-class floor (ranking, bits per character, generation, timing or statistics)"
    tests = [f for f in sorted(floors, key=Floor.key) if f.split == "test"]
    shown = "; ".join(f"{f.dataset} {f.majority:.1f} ({f.label}, {f.items} items)" for f in tests)
    return f"{len(floors)} floors; test: {shown}"
