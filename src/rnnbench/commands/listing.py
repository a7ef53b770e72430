"""``rnnbench list encoders|tasks|experiments|tables``: one line each, and whether the data is here.

Read from the config files themselves (YAML, without Hydra: composing every experiment would
take a minute): a description is a config's ``description`` key, else the first sentence of
its first comment; a task's data is present when every file its reader reads exists under
the data folder (``RNNBENCH_DATA``, default ``data/``); an experiment's is its task's, with
the experiment's own ``task.reader`` settings; a table's is its experiments'.
"""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from rnnbench.conf_dir import conf_dir

HELP = """One line per encoder, task, experiment or paper table: its name, whether its data is in the
data folder (RNNBENCH_DATA, default data/), and what it is.

  rnnbench list encoders       the encoder configs (encoder=NAME)
  rnnbench list tasks          the task configs (task=NAME); data: here, missing (hub copy named), generated
  rnnbench list experiments    the paper tables' experiment configs (experiment=NAME) and the table each fills
  rnnbench list tables         the tables rnnbench table NAME builds"""
KINDS = ("encoders", "tasks", "experiments", "tables")
# A sentence ends at . ! ? before a capital, a backquote or a bracket, but not after "et al." or "e.g.".
_SENTENCE_END = re.compile(r"(?<!\bal\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+(?=[A-Z`(])")
WIDTH = 110  # a description longer than this is cut (with "...")


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=KINDS, metavar="{" + ",".join(KINDS) + "}", help="what to list")
    parser.add_argument("--data-dir", type=Path, default=None, help="the data folder (default: RNNBENCH_DATA, else data)")
    parser.set_defaults(run=run)


def data_folder(given: Path | None = None) -> Path:
    return Path(given) if given is not None else Path(os.environ.get("RNNBENCH_DATA") or "data")


# --- reading config files ----------------------------------------------------------------

def description(path: Path) -> str:
    """A config's ``description`` key, else the first sentence of its first comment block."""
    text = path.read_text()
    spec = yaml.safe_load(text) or {}
    if isinstance(spec, dict) and isinstance(spec.get("description"), str):
        return _cut(spec["description"])
    block: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and not stripped.startswith("# @package"):
            block.append(stripped.lstrip("#").strip())
        elif block:
            break
    return _cut(_SENTENCE_END.split(" ".join(block))[0]) if block else ""


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WIDTH else text[:WIDTH - 3].rstrip() + "..."


@lru_cache(maxsize=None)
def _yaml(group: str, name: str) -> dict:
    return yaml.safe_load((conf_dir() / group / f"{name}.yaml").read_text()) or {}


def _merge(base: dict, over: dict) -> dict:
    """``over`` on ``base``, dicts merged key by key (what Hydra does to a config's defaults)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


@lru_cache(maxsize=None)
def merged(group: str, name: str) -> dict:
    """A config file over the files of its own group that its ``defaults`` list (scitail_partial:
    scitail; an Amazon domain's experiment: rcrn_table1/domain), and the other groups it
    overrides (``override /task: trec``) gathered under ``"overrides"``."""
    spec = _yaml(group, name)
    result: dict = {"overrides": {}}
    for entry in spec.get("defaults") or []:
        if isinstance(entry, str) and entry != "_self_" and (conf_dir() / group / f"{entry}.yaml").exists():
            result = _merge(result, merged(group, entry))
        elif isinstance(entry, dict):
            overrides = {str(k).replace("override ", "").strip("/ "): v for k, v in entry.items()}
            result = _merge(result, {"overrides": overrides})
    return _merge(result, {k: v for k, v in spec.items() if k != "defaults"})


@dataclass
class DataStatus:
    present: bool | None  # None: generated (no files) or unknown
    text: str


def reader_data(reader_options: dict, root: Path) -> DataStatus:
    """Whether the files a reader with these options reads are under ``root``."""
    from hydra.utils import get_class

    options = dict(reader_options)
    try:
        reader = get_class(options.pop("_target_"))(**options)
        paths = reader.input_paths(root)
    except Exception:  # noqa: BLE001 - an option set by interpolation, a reader that needs more: unknown
        return DataStatus(None, "?")
    if not paths:
        return DataStatus(True, "generated")
    missing = [p for p in paths if not p.exists()]
    if not missing:
        return DataStatus(True, "here")
    hub = f" (hub: {reader.hub_id})" if getattr(reader, "hub_id", None) else ""
    return DataStatus(False, f"missing{hub}")


def task_data(task: str, root: Path, reader_overrides: dict | None = None) -> DataStatus:
    reader = (merged("task", task).get("task") or {}).get("reader") or {}
    return reader_data(_merge(reader, reader_overrides or {}), root)


def experiment_task(experiment: str) -> str | None:
    return merged("experiment", experiment)["overrides"].get("task")


def experiment_table(experiment: str) -> str | None:
    from rnnbench.campaign.definitions import all_experiments

    return next((e.table for e in all_experiments() if e.name == experiment), None)


def experiment_data(experiment: str, root: Path) -> DataStatus:
    spec = merged("experiment", experiment)
    task = spec["overrides"].get("task") or "picking"  # no task override: config.yaml's default task
    return task_data(task, root, (spec.get("task") or {}).get("reader"))


def experiments() -> list[str]:
    return sorted(p.stem for p in (conf_dir() / "experiment").glob("*.yaml"))


def tables() -> dict[str, list[str]]:
    """Table name -> the experiments that fill it, in the order they run (rnnbench.campaign.definitions)."""
    from rnnbench.campaign.definitions import benchmarks, experiments_of
    from rnnbench.campaign.definitions import tables as names

    return {name: experiments_of(name) for name in names() if name not in benchmarks()}


def table_description(table: str, members: list[str]) -> str:
    """The paper's caption from the registry (src/rnnbench/results/paper_numbers), else the
    experiment's own ``table.caption`` (a table no paper printed), else its first comment."""
    registry = Path(__file__).resolve().parents[1] / "results" / "paper_numbers" / f"{table}.yaml"
    if registry.exists():
        spec = yaml.safe_load(registry.read_text()) or {}
        return _cut(f"{str(spec.get('paper', '')).upper()} Table {spec.get('table')}: {spec.get('caption', '')}")
    caption = (merged("experiment", members[0]).get("table") or {}).get("caption")
    return _cut(caption) if caption else description(conf_dir() / "experiment" / f"{members[0]}.yaml")


# --- the verb ----------------------------------------------------------------------------

def rows(kind: str, root: Path) -> list[tuple[str, str, str]]:
    """(name, data, description) of every config of ``kind``."""
    if kind == "encoders":
        return [(p.stem, "-", description(p)) for p in sorted((conf_dir() / "encoder").glob("*.yaml"))]
    if kind == "tasks":
        return [(p.stem, task_data(p.stem, root).text, description(p)) for p in sorted((conf_dir() / "task").glob("*.yaml"))]
    if kind == "experiments":
        out = []
        for name in experiments():
            status = experiment_data(name, root)
            out.append((name, status.text, f"[{experiment_table(name) or 'no table'}] "
                        + description(conf_dir() / "experiment" / f"{name}.yaml")))
        return out
    out = []
    for table, members in tables().items():  # in the papers' order (Table 2 before Table 10)
        statuses = [experiment_data(m, root) for m in members]
        here = sum(s.present is True for s in statuses)
        data = "here" if here == len(statuses) else "missing" if not here else f"partly ({here} of {len(statuses)} experiments)"
        out.append((table, data, f"{table_description(table, members)} ({len(members)} experiment{'s' * (len(members) > 1)})"))
    return out


def run(args) -> int:
    root = data_folder(args.data_dir)
    found = rows(args.kind, root)
    width = max(len(name) for name, _, _ in found)
    data_width = max(len(data) for _, data, _ in found)
    for name, data, text in found:
        print(f"{name:<{width}}  {data:<{data_width}}  {text}")
    where = "" if args.kind == "encoders" else f"; data: under {root}{'' if root.is_dir() else ' (a folder that does not exist: set RNNBENCH_DATA)'}"
    print(f"\n{len(found)} {args.kind}{where}")
    return 0
