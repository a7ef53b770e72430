"""A comparison of your encoders on your data, defined in memory (``rnnbench compare``, docs/compare.md).

A paper table is read from two files: its experiment config (conf/experiment/: the task, the
sweep of encoders, ``table.protocol``) and its registry file (the rows and the claims). A
comparison makes both from the command's arguments instead, in memory: the experiment is stored
in Hydra's config store (``experiment=compare_<name>`` composes as a config file would), and the
table definition is defined in ``rnnbench.results.tables`` (``comparison.definition``: each
encoder against the baseline). The campaign then runs it as any table (``make.make_experiments``):
the sanity gate, the learning rate chosen on dev over the selection seeds with the grid-edge
rule, the final seeds, the pricing of ``--plan``, and the table written from its evidence, with
each encoder's comparison against the baseline decided under Holm's correction over the pairs
(``rnnbench.results.comparison``). What it writes goes to ``comparisons/<name>/`` (``--out``),
in the formats of ``results/`` (``<name>.md``, ``.tex``, ``.csv``, ``.items.csv.xz``,
``plots/<name>.png``), with the majority-class floors of its column (``floors.csv``).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from rnnbench.errors import ConfigError
from rnnbench.campaign import floors as computed
from rnnbench.campaign import jobs
from rnnbench.cli import config_error_line
from rnnbench.compose import compose_config
from rnnbench.data.prepare import build_reader, load_splits
from rnnbench.encoders.build import known_encoders
from rnnbench.results import comparison as reading
from rnnbench.results import evidence, floors
from rnnbench.results.tables import REGISTRY, define_table, paper_table

PREFIX = "compare_"  # of the experiment a comparison defines: no config under conf/experiment/ starts so
OUT = Path("comparisons")  # the default folder of every comparison, one folder each
SEEDS = 5  # paired seeds by default: the protocol's
MIN_SEEDS = 2  # a comparison needs at least two paired seeds for an interval
# Overrides the comparison sets itself, and the option that sets each instead.
# Their sub-keys stay free (encoder.hidden_size=100 sizes every encoder; table.protocol.select_seeds=3).
OWN_KEYS = {"encoder": "--encoders", "seed": "--seeds", "trainer.lr": "--lr-grid", "table.protocol.lr_grid": "--lr-grid",
            "table.protocol.seeds": "--seeds", "experiment": "none: the comparison is its own experiment",
            "paths.results_dir": "--out", "table.name": "--name"}


@dataclass(frozen=True)
class Comparison:
    name: str
    encoders: tuple[str, ...]
    baseline: str
    seeds: tuple[int, ...]
    lr_grid: tuple[float, ...]
    overrides: tuple[str, ...]  # the Hydra overrides given: the task, its data, sizes
    out: Path
    command: str = field(default="", compare=False)  # the command that defined it, for the table's note

    @property
    def experiment(self) -> str:
        return f"{PREFIX}{self.name}"

    def extra(self) -> list[str]:
        """The overrides every run of the comparison is composed with."""
        return [*self.overrides, f"paths.results_dir={quoted(str(self.out.absolute()))}"]

    def files(self) -> list[Path]:
        """What the table writes: the table, every run's evidence, the per-item test scores."""
        csv_path = self.out / f"{self.name}.csv"
        return [self.out / f"{self.name}.md", csv_path, evidence.items_path(csv_path)]


def quoted(value: str) -> str:
    """A value as a Hydra override reads it back unchanged (quoted where it holds what the grammar reads)."""
    if re.fullmatch(r"[\w./\-]+", value):
        return value
    if "'" in value:
        raise ConfigError(f"{value!r}: a path with a quote character cannot be passed on; rename it")
    return f"'{value}'"


def parse_encoders(text: str | None) -> list[str]:
    """``bilstm,rcrn`` as a list of known encoder names, each once, in the order given."""

    names = list(dict.fromkeys(n.strip() for n in (text or "").split(",") if n.strip()))
    known = known_encoders()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"--encoders: no encoder {unknown[0]!r}; the encoders are {', '.join(known)} (rnnbench list encoders)")
    if len(names) < 2:
        raise ConfigError(f"--encoders: a comparison needs at least 2 encoders, got {len(names)} "
                          f"({', '.join(names) or 'none'}); e.g. --encoders bilstm,rcrn")
    return names


def parse_grid(text: str | None) -> list[float] | None:
    """``1e-3,3e-3`` as learning rates (None: none given)."""
    if text is None:
        return None
    rates = []
    for part in text.split(","):
        try:
            rate = float(part)
        except ValueError:
            rate = None
        if rate is None or not rate > 0 or rate != rate or rate == float("inf"):
            raise ConfigError(f"--lr-grid: {part.strip()!r} is not a learning rate; give positive numbers separated by commas, "
                              "e.g. --lr-grid 1e-3,3e-3")
        rates.append(rate)
    if len(set(rates)) != len(rates):
        raise ConfigError(f"--lr-grid {text}: a rate is listed twice")
    return rates


def parse_seeds(text: str | int | None) -> list[int]:
    """``--seeds N``: the paired seeds 1..N."""
    try:
        count = int(SEEDS if text is None else text)
    except ValueError:
        count = 0
    if count < MIN_SEEDS:
        raise ConfigError(f"--seeds {text}: give how many paired seeds to run, at least {MIN_SEEDS} (default {SEEDS})")
    return list(range(1, count + 1))


def check_overrides(overrides: list[str]) -> None:
    """Hydra overrides only, and none of the keys the comparison sets itself."""
    for item in overrides:
        key, equals, _ = item.partition("=")
        key = key.lstrip("+~")
        if not equals or item.startswith("-"):
            raise ConfigError(f"{item!r} is not an override (KEY=VALUE, e.g. task=text_classification task.reader.path=mine.csv)")
        own = key.partition("@")[0]
        if own in OWN_KEYS:
            raise ConfigError(f"{item}: the comparison sets {own} itself; use {OWN_KEYS[own]}")


def data_label(task) -> str | None:
    """The data a task reads, in a word: its file's stem (your own files), or the dataset's name
    (a Hugging Face dataset); None for a task of fixed data (trec, the synthetic tasks)."""
    reader = task.reader
    for key in ("path", "train"):
        if reader.get(key):
            return Path(str(reader.get(key))).stem
    if reader.get("name"):
        return str(reader.get("name")) + (f"_{reader.get('config')}" if reader.get("config") else "")
    return None


def data_files(task) -> str:
    reader = task.reader
    given = [str(reader.get(k)) for k in ("path", "train", "dev", "test") if reader.get(k)]
    return ", ".join(dict.fromkeys(given)) or (str(reader.get("name")) if reader.get("name") else str(task.name))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def default_name(task) -> str:
    """``<task>_<data>``: text_classification_questions for task.reader.path=questions.csv."""
    label = data_label(task)
    return slug(f"{task.name}_{label}" if label else str(task.name))


def check_name(name: str) -> str:

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", name):
        raise ConfigError(f"--name {name!r}: use letters, digits, _ and - (it names the comparison's folder and files)")
    if (REGISTRY / f"{name}.yaml").exists():
        raise ConfigError(f"--name {name}: that is a paper table's name; give your comparison another")
    return name


def compose_base(overrides: list[str]):
    """The config the overrides compose to, before any comparison is defined; a config error is one line."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException


    try:
        return compose_config(list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(config_error_line(exc)) from None


def build(encoders: str | None, baseline: str | None = None, seeds: str | int | None = None, lr_grid: str | None = None,
          name: str | None = None, out: Path | None = None, overrides: list[str] = ()):
    """The comparison the command's arguments ask for, and the config its overrides compose to;
    every mistake is one ``ConfigError`` line, raised before anything is defined or run."""
    names = parse_encoders(encoders)
    baseline = baseline or names[0]
    if baseline not in names:
        raise ConfigError(f"--baseline {baseline}: not among --encoders ({', '.join(names)}); the baseline is one of the "
                          "encoders compared (default: the first listed)")
    seed_list, grid = parse_seeds(seeds), parse_grid(lr_grid)
    overrides = list(overrides)
    check_overrides(overrides)
    base = compose_base(overrides)
    if grid is None:  # the task's rate, and one step either side: the choice on dev has a grid to choose in
        lr = float(base.trainer.lr)
        grid = [lr, lr * 2, lr / 2]
    name = check_name(name) if name else default_name(base.task)
    out = Path(out) if out is not None else OUT / name
    command = " ".join(["rnnbench compare", f"--encoders {','.join(names)}", f"--baseline {baseline}", f"--seeds {len(seed_list)}",
                        f"--lr-grid {','.join(f'{r:g}' for r in grid)}", *map(shlex.quote, overrides)])
    comparison = Comparison(name, tuple(names), baseline, tuple(seed_list), tuple(grid), tuple(overrides), out, command)
    return comparison, base


def column_of(base) -> tuple[str, str, bool, float]:
    """(the table's column, its metric, whether lower is better, the table's scale): the task's
    selection metric, in % for scores between 0 and 1, as they are for bits per character."""
    metric = str(base.task.select_metric)
    lower = base.task.get("select_mode", "max") == "min"
    return data_label(base.task) or str(base.task.name), metric, lower, 1.0 if lower else 100.0


def define(comparison: Comparison, base) -> None:
    """Define the comparison's experiment (Hydra's config store) and its table (``tables.define_table``)."""
    from hydra.core.config_store import ConfigStore


    column, metric, lower, scale = column_of(base)
    note = (f"Data: {data_files(base.task)} (task {base.task.name}). Compared with: {comparison.command}.").replace("${", "\\${")
    node = {
        "experiment": comparison.experiment,
        "table": {"name": comparison.name, "column": column, "metric": metric, "scale": scale, "data_note": note,
                  "protocol": {"seeds": list(comparison.seeds), "lr_grid": list(comparison.lr_grid)}},
        "hydra": {"sweeper": {"params": {"encoder": ",".join(comparison.encoders)}}},
    }
    ConfigStore.instance().store(group="experiment", name=comparison.experiment, node=node, package="_global_")
    jobs._composed.cache_clear()  # defined again in this process (another comparison of that name): its runs compose anew
    caption = f"{', '.join(comparison.encoders)} on {data_files(base.task)}, task {base.task.name}"
    define_table(comparison.name, reading.definition(caption, list(comparison.encoders), comparison.baseline, column, lower))


def check_data(base, read: bool) -> None:
    """The task's data, before any run: its files exist (``read``: and read cleanly: a malformed
    row, a missing field or a label unseen in training is one error line now, not in the first run)."""

    reader = build_reader(base.task.reader)
    if read:
        load_splits(reader, base.paths.data_dir, base.paths.cache_dir)
    else:
        reader.check_available(base.paths.data_dir)


def write_floors(comparison: Comparison) -> Path:
    """The majority-class floors of the comparison's column on dev and test, beside its table
    (``floors.csv``, as results/ holds them): the floor gate reads them."""

    found = computed.experiment_floors(comparison.name, comparison.experiment, comparison.extra(), computed.split_loader())
    comparison.out.mkdir(parents=True, exist_ok=True)
    path = comparison.out / floors.FILE
    path.write_text(floors.format_floors(found))
    return path


def summary(comparison: Comparison) -> list[str]:
    """The comparison as its table now stands: each encoder against the baseline (``results.comparison.summary``)."""

    csv_path = comparison.out / f"{comparison.name}.csv"
    rows = evidence.read_csv(csv_path) if csv_path.exists() else []
    items = evidence.read_item_scores(evidence.items_path(csv_path))
    return reading.summary(comparison.name, paper_table(comparison.name), rows, items, floors.read_floors(comparison.out))
