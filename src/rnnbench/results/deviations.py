"""Every way our setting differs from the paper's, per table, generated from the configs.

Each table's paper setting is data: ``paper_settings/<table>.yaml`` lists, item by item, what the
paper says (embeddings, sizes, dropout, optimiser and rate, batch, epochs, data and splits, seeds,
model options), where it says it, and where ours is read: a key of the resolved run config
(``config``) or a rule of this module (``ours_from``: the protocol's rate grid, the reader's splits).
``differences`` compares the paper's value with ours for every row of the table (one resolved config
per encoder row and experiment) and returns the items that differ, with ours per row where rows
differ, and every item the paper leaves open ("the paper does not say; ours: X"); equal values are
not listed. The table writer prints them under each table (``section``).

A settings file::

    paper: rcrn
    table: 5
    include: [_rcrn.yaml]          # shared items (files named _*.yaml); an item of this file with the same id replaces one
    items:
    - id: dev_split
      item: Dev split
      value: null                  # the paper's value; null: the paper does not say
      says: the paper does not say (TREC has no official dev split)   # optional, for a null value
      text: ...                    # optional: how the paper's value reads (else the value itself)
      cite: "§4.2"
      ours_from: dev_split         # a rule (RULES), or `config: task.reader.dev_fraction`
      describe: {...}              # optional: ours' raw value -> its wording
      absent: ...                  # optional: ours where the config has no such key (an option the encoder lacks)
      rows: [dt_gru]               # optional: only these rows (encoder, or encoder/variant)
      tasks: [trecqa_partial]      # optional: only the rows of these tasks (task.name)
      by_row: {2l_lstm/baseline: 170}   # optional: the paper's value per row (a value, or {value, text, says})
      note: ...                    # optional: one more sentence
      with_dev_dropout: true       # optional, for a config item about one part's dropout: also name the p the
                                   # protocol chooses on dev around the encoder (table.protocol.dropout_grid)
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import yaml
from omegaconf import DictConfig, OmegaConf

from rnnbench.config import embeddings_frozen
from rnnbench.errors import RnnbenchError

SETTINGS = Path(__file__).resolve().parent / "paper_settings"
HEADING = "Deviations from the paper's setting (generated)"
NOT_SAID = "the paper does not say"
OFFICIAL = "official"
_ABSENT = object()


@dataclass(frozen=True)
class Deviation:
    item: str
    paper: str  # the paper's value as it reads, or what it says instead ("the paper does not say")
    ours: str  # ours, per row where the rows differ
    text: str  # the one-line wording, as the table prints it
    said: bool  # whether the paper gives a value (else the item is one it leaves open)


class SettingsError(RnnbenchError):
    """A paper-settings file that cannot be read as the schema says."""


# ---------------------------------------------------------------------------------------------
# The paper's setting


def settings_path(table: str) -> Path:
    return SETTINGS / f"{table}.yaml"


def has_settings(table: str) -> bool:
    return settings_path(table).exists()


def load_settings(table: str) -> dict:
    """The table's settings file with its includes merged (by item ``id``, this file's last)."""
    path = settings_path(table)
    if not path.exists():
        raise SettingsError(f"no paper settings for {table} ({path})")
    stat = path.stat()
    return _load(str(path), stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _load(path: str, _mtime: int) -> dict:
    data = yaml.safe_load(Path(path).read_text()) or {}
    items: dict[str, dict] = {}
    for included in data.get("include") or []:
        for item in _load(str(SETTINGS / included), (SETTINGS / included).stat().st_mtime_ns)["items"]:
            items[item["id"]] = item
    for item in data.get("items") or []:
        if "id" not in item:
            raise SettingsError(f"{path}: an item without an id: {item}")
        items.pop(item["id"], None)  # a replaced item takes this file's place in the order
        items[item["id"]] = item
    return {**data, "items": list(items.values())}


def check(settings: dict, where: str = "") -> list[str]:
    """Problems with a settings file's items (the schema above); [] when it reads."""
    problems = []
    for item in settings["items"]:
        name = f"{where}{item.get('id', '?')}"
        for key in ("item", "cite"):
            if not item.get(key):
                problems.append(f"{name}: no {key}")
        if ("config" in item) == ("ours_from" in item):
            problems.append(f"{name}: needs exactly one of config and ours_from")
        if "ours_from" in item and item["ours_from"] not in RULES:
            problems.append(f"{name}: unknown rule {item['ours_from']!r} (known: {', '.join(sorted(RULES))})")
        if "value" not in item and "by_row" not in item:
            problems.append(f"{name}: no value (null where the paper does not say) and no by_row")
        unknown = set(item) - {"id", "item", "value", "text", "says", "cite", "config", "ours_from", "describe",
                               "absent", "rows", "tasks", "by_row", "note", "with_dev_dropout"}
        if unknown:
            problems.append(f"{name}: unknown key(s) {', '.join(sorted(unknown))}")
    return problems


# ---------------------------------------------------------------------------------------------
# Ours: a config key, or a rule


def _get(cfg, path: str, default=_ABSENT):
    value = OmegaConf.select(cfg, path, default=default, throw_on_missing=False)
    if isinstance(value, DictConfig) or OmegaConf.is_list(value):
        return OmegaConf.to_container(value, resolve=True)
    return value


def fmt(value) -> str:
    """A value as the table prints it: rates as 1e-4, lists in braces, None as none."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) < 0.01:
            mantissa, exponent = f"{value:.3e}".split("e")
            return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
        return f"{value:g}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if isinstance(value, (list, tuple)):
        return "{" + ", ".join(fmt(v) for v in value) + "}"
    return str(value)


def _pct(fraction: float) -> str:
    return f"{fraction * 100:g}%"


def _embedding(cfg, _configs):
    name, dim = _get(cfg, "embedding.name"), _get(cfg, "embedding.dim")
    return name, f"{name} ({dim}-d)"


def _embedding_training(cfg, _configs):
    value = "frozen" if embeddings_frozen(cfg) else "trained"
    return value, value


def _rates(cfg) -> list[float]:
    grid = [float(r) for r in _get(cfg, "table.protocol.lr_grid", None) or []]
    return grid or [float(_get(cfg, "trainer.lr"))]


def _learning_rate(cfg, configs):
    """The rates ours runs: the protocol's grid (chosen on dev), or its one rate. An experiment that
    takes its rates from another's choice (``lr_from``: RCRN Table 1's domains) reads the lender's
    grid, and both say on whose dev split the choice is made."""
    experiment = _get(cfg, "experiment", None)
    source = _get(cfg, "table.protocol.lr_from", None)
    lender = cfg
    if source:
        lender = next((c for c in configs if _get(c, "experiment", None) == source), None)
        if lender is None:
            return None, f"chosen on dev ({source})"
    lends = source or (experiment if any(_get(c, "table.protocol.lr_from", None) == experiment for c in configs) else None)
    rates = _rates(lender)
    if len(rates) == 1:
        return rates[0], f"{fmt(rates[0])}, fixed"
    grid = sorted(rates, reverse=True)
    where = f" of {_get(lender, 'task.name')}, one choice for every dataset" if lends else ""
    return tuple(grid), f"chosen from {fmt(grid)} on the dev split{where}"


def _dev_split(cfg, _configs):
    reader = _get(cfg, "task.reader", {}) or {}
    seed = reader.get("dev_seed", reader.get("split_seed"))
    seeded = f" (seed {seed})" if seed is not None else ""
    if reader.get("train_size") is not None:  # generated data
        return OFFICIAL, f"{reader['dev_size']:,} generated sequences"
    if reader.get("train_from_dev"):
        by = reader.get("dev_split_by")
        return "from_dev", (f"the other {_pct(1 - float(reader['train_from_dev']))} of the official dev split"
                            + (f", split by {by}" if by else "") + seeded)
    if reader.get("dev_fraction"):
        return "from_train", f"{_pct(float(reader['dev_fraction']))} of the training split held out{seeded}"
    if reader.get("dev_size"):
        return "from_train", f"{int(reader['dev_size']):,} examples of the training split held out{seeded}"
    if reader.get("keep_unanswered") is False:
        return "answered", "the official splits less their questions without a correct answer"
    return OFFICIAL, "the official dev split"


def _train_split(cfg, _configs):
    reader = _get(cfg, "task.reader", {}) or {}
    if reader.get("train_file"):
        return "part", f"{Path(str(reader['train_file'])).name} only (a part of the official training split)"
    if reader.get("train_from_dev"):
        return "from_dev", f"{_pct(float(reader['train_from_dev']))} of the official dev split (the training split not used)"
    if reader.get("train_split") == "train":
        return "train", "TRAIN (not TRAIN-ALL)"
    if reader.get("phrases") is False:
        return "sentences", "the training sentences only (not their labelled phrases)"
    if reader.get("phrases"):
        return "phrases", "every labelled phrase of the training sentences"
    if reader.get("train_size") is not None:
        return OFFICIAL, f"{reader['train_size']:,} generated sequences (reader seed {reader.get('seed')})"
    if reader.get("dev_fraction") or reader.get("dev_size"):
        return OFFICIAL, "the official training split less the dev examples"
    return OFFICIAL, "the official training split"


def _dev_dropout(cfg) -> tuple[tuple, str] | None:
    """Dropout the protocol chooses on dev (``table.protocol.dropout_grid``): its value and wording
    (where p goes: campaign/dropout.py), or None where the row runs its config's own."""
    grid = sorted(float(p) for p in _get(cfg, "table.protocol.dropout_grid", None) or [])
    if not grid:
        return None
    return (("dev",) + tuple(grid),
            f"p chosen on dev from the config's own and {fmt(grid)} at the chosen rate (the word vectors' output, or the "
            "input of each layer of a stacked encoder, and the head)")


def _dropout(cfg, _configs):
    parts = [(where, _get(cfg, key, None)) for where, key in (("embeddings", "embedding.dropout"), ("encoder", "encoder.dropout"),
                                                               ("encoder candidate", "encoder.candidate_dropout"),
                                                               ("head", "task.head.dropout"))]
    parts = [(where, float(rate)) for where, rate in parts if rate]
    value, wording = (0.0, "none") if not parts else (tuple(rate for _, rate in parts),
                                                      ", ".join(f"{where} {fmt(rate)}" for where, rate in parts))
    dev = _dev_dropout(cfg)
    if dev is None:
        return value, wording
    return (value, dev[0]), f"{dev[1]}; the config's own: {wording}"


def _seeds(cfg, _configs):
    seeds = sorted(int(s) for s in _get(cfg, "table.protocol.seeds", None) or [])
    spans: list[list[int]] = []
    for seed in seeds:  # runs of consecutive seeds as ranges: 1-15
        if spans and seed == spans[-1][1] + 1:
            spans[-1][1] = seed
        else:
            spans.append([seed, seed])
    named = ", ".join(str(a) if a == b else f"{a}, {b}" if b == a + 1 else f"{a}-{b}" for a, b in spans)
    return len(seeds), f"{len(seeds)} (seed{'s' if len(seeds) != 1 else ''} {named})"


def _epochs(cfg, _configs):
    epochs, patience = _get(cfg, "trainer.epochs"), _get(cfg, "trainer.patience", 0)
    batches = _get(cfg, "trainer.max_batches", None)
    text = f"at most {epochs} epoch{'s' if epochs != 1 else ''}" + (f" of {batches} batches" if batches else "")
    text += f", early stopping after {patience} epochs without dev improvement" if patience else ", no early stopping"
    return (epochs, batches, patience), text


def _ffn_size(cfg, _configs):
    size = _get(cfg, "encoder.ffn_size", None)
    size = size if size is not None else _get(cfg, "encoder.hidden_size")
    return size, fmt(size)


RULES = {
    "embedding": _embedding,
    "embedding_training": _embedding_training,
    "learning_rate": _learning_rate,
    "dev_split": _dev_split,
    "train_split": _train_split,
    "dropout": _dropout,
    "seeds": _seeds,
    "epochs": _epochs,
    "ffn_size": _ffn_size,
}


def ours(item: dict, cfg, configs) -> tuple[object, str]:
    """Ours for one row: its raw value (compared with the paper's) and its wording."""
    if "ours_from" in item:
        return RULES[item["ours_from"]](cfg, configs)
    value = _get(cfg, item["config"])
    if value is _ABSENT:
        if "absent" not in item:
            raise SettingsError(f"paper setting {item['id']!r}: the config of row {row_of(cfg)} has no key {item['config']} "
                                "(a typo, or an option this encoder lacks: declare ours for it with `absent`)")
        value = item["absent"]
    wording = next((str(w) for key, w in (item.get("describe") or {}).items() if _described(key, value)), None)
    wording = fmt(value) if wording is None else wording
    dev = _dev_dropout(cfg) if item.get("with_dev_dropout") else None
    if dev is None:
        return value, wording
    # the item's own dropout (a GRU's, say) stays as configured; the protocol's p goes around the encoder
    return (value, dev[0]), f"{wording}, with {dev[1]}"


def _described(key, value) -> bool:
    """Whether a ``describe`` key names ours' raw value (null names None; words without regard to case)."""
    if key is None or value is None:
        return key is None and value is None
    if isinstance(value, (list, dict)):
        return False
    if isinstance(key, str) or isinstance(value, str):
        return str(key).lower() == str(value).lower()
    return key == value and isinstance(key, bool) == isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# The comparison


def _number(x) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


def same(paper, ours_value) -> bool:
    """Whether ours is the paper's value: numbers within rounding, a grid as a set of rates, a
    one-rate grid as that rate, words without regard to case."""
    if isinstance(paper, (list, tuple)) and len(paper) == 1:
        paper = paper[0]
    if isinstance(ours_value, (list, tuple)) and len(ours_value) == 1:
        ours_value = ours_value[0]
    if isinstance(paper, (list, tuple)) or isinstance(ours_value, (list, tuple)):
        if not (isinstance(paper, (list, tuple)) and isinstance(ours_value, (list, tuple))) or len(paper) != len(ours_value):
            return False
        return all(any(same(p, o) for o in ours_value) for p in paper) and all(any(same(p, o) for p in paper) for o in ours_value)
    if isinstance(paper, bool) or isinstance(ours_value, bool):
        return bool(paper) == bool(ours_value) if isinstance(paper, bool) and isinstance(ours_value, bool) else False
    a, b = _number(paper), _number(ours_value)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if paper is None or ours_value is None:
        return paper is ours_value
    return str(paper).strip().lower() == str(ours_value).strip().lower()


def row_of(cfg) -> str:
    """A row's name: its encoder, with the experiment's variant (``mzu_cap/lambda0``)."""
    variant = _get(cfg, "table.variant", None)
    encoder = _get(cfg, "encoder.name")
    return f"{encoder}/{variant}" if variant else str(encoder)


def _matches(keys, row: str):
    """The key of ``keys`` naming ``row``: ``encoder/variant`` exactly, else ``encoder`` (any variant)."""
    if row in keys:
        return row
    encoder = row.split("/")[0]
    return encoder if encoder in keys else None


def _paper_for(item: dict, row: str, task: str) -> dict | None:
    """The paper's value for one row (value, text, says), or None when the item does not apply to it."""
    if item.get("rows") is not None and _matches(item["rows"], row) is None:
        return None
    if item.get("tasks") is not None and task not in item["tasks"]:
        return None
    by_row = item.get("by_row") or {}
    key = _matches(by_row, row)
    if key is not None:
        entry = by_row[key]
        return entry if isinstance(entry, dict) else {"value": entry}
    if "value" not in item:
        return None
    return {"value": item["value"], "text": item.get("text"), "says": item.get("says")}


def _paper_text(paper: dict) -> str:
    if paper.get("value") is None:
        return paper.get("says") or NOT_SAID
    return paper.get("text") or fmt(paper["value"])


def _where(entries: list[tuple[str, str]], all_entries: list[tuple[str, str, str]]) -> str:
    """Names the rows of one value among all rows (row, data, wording): by row where the value is
    a function of the row, by data (the task) where it is one of the data, else both."""
    def function_of(index: int) -> bool:
        seen: dict[str, str] = {}
        return all(seen.setdefault(e[index], e[2]) == e[2] for e in all_entries)

    if function_of(0):
        names = dict.fromkeys(row for row, _ in entries)
    elif function_of(1):
        names = dict.fromkeys(data for _, data in entries)
    else:
        names = dict.fromkeys(f"{row} on {data}" for row, data in entries)
    return ", ".join(names)


def differences(table: str, configs: list, settings: dict | None = None) -> list[Deviation]:
    """Every item of the table's paper setting on which ours differs, or that the paper leaves
    open, over ``configs`` (one resolved config per row and experiment of the table); ours is
    named per row where rows differ, and rows that match the paper are left out."""
    settings = settings if settings is not None else load_settings(table)
    configs = [c if isinstance(c, DictConfig) else OmegaConf.create(c) for c in configs]
    out: list[Deviation] = []
    for item in settings["items"]:
        groups: dict[str, tuple[dict, list]] = {}  # the paper's value as it reads -> (the paper's, [(row, data, ours)])
        for cfg in configs:
            row, task = row_of(cfg), str(_get(cfg, "task.name", ""))
            paper = _paper_for(item, row, task)
            if paper is None:
                continue
            value, wording = ours(item, cfg, configs)
            groups.setdefault(_paper_text(paper), (paper, []))[1].append((row, task, wording, value))
        for paper_text, (paper, entries) in groups.items():
            said = paper.get("value") is not None
            differing = [e for e in entries if not (said and same(paper["value"], e[3]))]
            if not differing:
                continue
            every = [(row, data, wording) for row, data, wording, _ in entries]
            by_wording: dict[str, list[tuple[str, str]]] = {}
            for row, data, wording, _ in differing:
                by_wording.setdefault(wording, []).append((row, data))
            # Rows are named where ours differs by row, where some rows match the paper, and where the paper's
            # value is given for some rows only (an item restricted to rows or tasks names them itself).
            restricted = item.get("rows") is not None or item.get("tasks") is not None
            whole = len(differing) == len(entries) and (restricted or len(entries) == len(configs))
            if len(by_wording) == 1 and whole:
                ours_text = next(iter(by_wording))
            else:
                ours_text = "; ".join(f"{wording} ({_where(rows, every)})" for wording, rows in by_wording.items())
                if len(differing) < len(entries):
                    ours_text += "; the other rows as the paper"
            cite = f" [{item['cite']}]" if item.get("cite") else ""
            note = f" {item['note']}" if item.get("note") else ""
            if said:
                text = f"**{item['item']}**: paper: {paper_text}{cite}; ours: {ours_text}.{note}"
            else:
                text = f"**{item['item']}**: {paper_text}{cite}; ours: {ours_text}.{note}"
            out.append(Deviation(item["item"], paper_text, ours_text, text, said))
    return out


def section(table: str, found: list[str]) -> str:
    """The Markdown section printed under a table from its deviation lines (``differences``' texts,
    found by campaign/deviations.py from the rows' configs); "" where there is nothing to print."""
    if not found:
        return ""
    intro = (f"Generated from src/rnnbench/results/paper_settings/{table}.yaml (the paper's setting, with where the paper "
             "states each item, in brackets) and the resolved configs of the rows above: every item on which ours differs "
             "from the paper, and every item the paper leaves open; rows are named in parentheses where they differ.")
    return f"\n## {HEADING}\n\n{intro}\n\n" + "\n".join(f"- {line}" for line in found) + "\n"
