"""``rnnbench runs`` (your runs as a table) and ``rnnbench runs compare A B`` (two runs side by side).

Reads the runs folder (``RNNBENCH_RUNS``, default ``runs/``): every run folder
(``<task>/<encoder>/s<seed>-<identity>``: its ``record.json`` once finished, its checkpoint
and lock before) and the runs index ``records.jsonl`` (``rnnbench.results.records``), which
also lists finished runs whose folder is gone. Nothing is written.

A run's overrides are the config keys whose values differ from what its experiment (or
task) and encoder compose to today, with ``trainer=smoke`` named as such: what tells apart
three "trec / bilstm / seed 1" runs.
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from rnnbench.errors import ConfigError
from rnnbench.results.records import DONE, RECORD, index_entries

HELP = """Your runs as a table: task, encoder, seed, the config keys set apart from the defaults, the
dev and test score on the task's selection metric, whether it is a smoke run, and its status
(done, in progress, interrupted, started, folder missing).

  rnnbench runs                              every run under runs/ (RNNBENCH_RUNS)
  rnnbench runs --task trec --encoder rcrn   some of them
  rnnbench runs compare A B                  two runs: metrics side by side and the config keys that differ
                                             (A, B: run folders or identity prefixes, e.g. 07d6f0ec)"""
LAST = "last.pt"  # training/checkpoint.py's LAST, named here so listing runs does not import torch
LOCK = ".lock"  # run.py's lock file
# Keys that change neither what is trained nor its scores: never shown as overrides or differences.
IGNORED_PREFIXES = ("paths.", "logger.", "trainer.progress", "trainer.checkpoint_every", "hydra.")


def add_parser(verbs, verb: str, summary: str) -> None:
    parser = verbs.add_parser(verb, help=summary, description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs-dir", type=Path, default=None, help="the runs folder (default: RNNBENCH_RUNS, else runs)")
    parser.add_argument("--task", help="only this task (task.name)")
    parser.add_argument("--encoder", help="only this encoder (encoder.name)")
    parser.set_defaults(run=list_runs)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    compare = actions.add_parser("compare", help="two runs side by side: metrics, and the config keys that differ",
                                 description="Two runs side by side: their scores, costs and the config keys that differ.")
    compare.add_argument("first", metavar="A", help="a run folder or an identity prefix")
    compare.add_argument("second", metavar="B", help="a run folder or an identity prefix")
    compare.add_argument("--runs-dir", type=Path, default=argparse.SUPPRESS, help="the runs folder (default: RNNBENCH_RUNS, else runs)")
    compare.set_defaults(run=compare_runs)


def runs_folder(given: Path | None) -> Path:
    return Path(given) if given is not None else Path(os.environ.get("RNNBENCH_RUNS") or "runs")


# --- what is on disk ---------------------------------------------------------------------

@dataclass
class RunEntry:
    task: str
    encoder: str
    seed: object
    status: str  # done (or "done (did not train)") | in progress | interrupted | started | damaged record | folder missing
    folder: Path | None
    identity: str = ""
    record: dict = field(default_factory=dict)  # the full record.json (done runs), else the index line

    @property
    def smoke(self) -> bool:
        return bool(self.record.get("smoke"))

    def score(self, split: str) -> float | None:
        scores = self.record.get(split) or {}
        select = ((self.record.get("config") or {}).get("task") or {}).get("select_metric")
        value = scores.get(select) if select else (next(iter(scores.values())) if len(scores) == 1 else None)
        return value if isinstance(value, (int, float)) else None


def _locked(lock: Path) -> bool:
    """Whether another process holds the run's lock (a run in progress); never waits."""
    from filelock import FileLock, Timeout

    if not lock.exists():
        return False
    probe = FileLock(str(lock), timeout=0)
    try:
        probe.acquire()
    except Timeout:
        return True
    except OSError:  # an unreadable lock file: not a run we can tell is going on
        return False
    probe.release()
    return False


def _entry_of_folder(folder: Path) -> RunEntry:
    task, encoder = folder.parent.parent.name, folder.parent.name
    seed_part, _, short_identity = folder.name.partition("-")
    seed = int(seed_part[1:]) if seed_part[1:].isdigit() else seed_part[1:]
    if (folder / DONE).exists() and (folder / RECORD).exists():
        try:
            record = json.loads((folder / RECORD).read_text())
            if isinstance(record, dict):
                status = "done" if record.get("status", "trained") == "trained" else f"done ({record['status']})"  # did not train
                return RunEntry(record.get("task", task), record.get("encoder", encoder), record.get("seed", seed), status,
                                folder, str(record.get("identity", short_identity)), record)
        except (OSError, ValueError):
            pass
        return RunEntry(task, encoder, seed, "damaged record", folder, short_identity)
    status = "in progress" if _locked(folder / LOCK) else "interrupted" if (folder / LAST).exists() else "started"
    return RunEntry(task, encoder, seed, status, folder, short_identity)


def collect(runs_dir: Path) -> list[RunEntry]:
    """Every run folder under ``runs_dir``, then the index's finished runs whose folder is gone."""
    folders = sorted(p for p in runs_dir.glob("*/*/s*-*") if p.is_dir() and ".damaged" not in p.name)
    entries = [_entry_of_folder(p) for p in folders]
    seen = {e.identity for e in entries}
    for line in index_entries(runs_dir / "records.jsonl"):
        identity = str(line.get("identity") or "")
        if identity and identity not in seen and not any(identity.startswith(s) for s in seen if s):
            seen.add(identity)
            folder = Path(str(line["run_dir"])) if line.get("run_dir") else None
            entries.append(RunEntry(str(line.get("task")), str(line.get("encoder")), line.get("seed"), "folder missing",
                                    folder, identity, line))
    return entries


# --- overrides: how a run's config differs from its defaults ---------------------------------

def flatten(config: dict, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (lists kept whole)."""
    flat: dict[str, object] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _shown(key: str) -> bool:
    return not key.startswith(IGNORED_PREFIXES) and key != "seed"


def _value(value) -> str:
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value) if value is not None else "null"


@lru_cache(maxsize=None)
def _config_files(group: str) -> dict[str, str]:
    """``<group>.name`` -> the config file that sets it (conf/task/sst5.yaml names task sst5)."""
    from rnnbench.conf_dir import conf_dir

    files: dict[str, str] = {}
    for path in sorted((conf_dir() / group).glob("*.yaml")):
        spec = yaml.safe_load(path.read_text()) or {}
        name = (spec.get(group) or {}).get("name") if group == "task" else spec.get("name")
        files.setdefault(str(name or path.stem), path.stem)
    return files


@lru_cache(maxsize=None)
def _smoke_trainer() -> dict:
    from rnnbench.conf_dir import conf_dir

    return yaml.safe_load((conf_dir() / "trainer" / "smoke.yaml").read_text()) or {}


@lru_cache(maxsize=None)
def _defaults(experiment: str | None, task: str, encoder: str, smoke: bool) -> dict[str, object] | None:
    """The flattened config that the run's experiment (or task) and encoder compose to today."""
    from rnnbench.compose import compose_config
    from omegaconf import OmegaConf

    task_file, encoder_file = _config_files("task").get(task), _config_files("encoder").get(encoder)
    if encoder_file is None or (task_file is None and not experiment):
        return None
    base = [f"experiment={experiment}"] if experiment else [f"task={task_file}"]
    try:
        cfg = compose_config([*base, f"encoder={encoder_file}", *(["trainer=smoke"] if smoke else [])])
        return flatten(OmegaConf.to_container(cfg, resolve=True, enum_to_str=True))
    except Exception:  # noqa: BLE001 - a config renamed or removed since the run: no overrides to show
        return None


def overrides_of(record: dict) -> str:
    """``key=value`` for every config key that differs from the defaults (``?`` if those no longer compose)."""
    config = record.get("config")
    if not isinstance(config, dict):
        return ""
    own = flatten(config)
    smoke_keys = _smoke_trainer()
    smoke = sum(own.get(f"trainer.{k}") == v for k, v in smoke_keys.items()) > len(smoke_keys) / 2  # trainer=smoke, some keys set apart
    experiment = config.get("experiment")
    defaults = _defaults(experiment, str(record.get("task")), str(record.get("encoder")), smoke)
    if defaults is None:
        return "?"
    changed = [f"{k}={_value(v)}" for k, v in own.items() if _shown(k) and k in defaults and defaults[k] != v]
    added = [f"+{k}={_value(v)}" for k, v in own.items() if _shown(k) and k not in defaults]
    return " ".join([*([f"experiment={experiment}"] if experiment else []), *(["trainer=smoke"] if smoke else []), *changed, *added])


# --- the verbs ---------------------------------------------------------------------------

def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def list_runs(args) -> int:
    runs_dir = runs_folder(args.runs_dir)
    if not runs_dir.is_dir():
        raise ConfigError(f"no runs folder {runs_dir} (RNNBENCH_RUNS or --runs-dir names it); train a run first: rnnbench train")
    entries = [e for e in collect(runs_dir) if (not args.task or e.task == args.task) and (not args.encoder or e.encoder == args.encoder)]
    if not entries:
        print(f"no runs under {runs_dir}" + (" matching the filters" if args.task or args.encoder else ""))
        return 0
    entries.sort(key=lambda e: (e.task, e.encoder, str(e.seed), str(e.folder)))
    rows = [[e.task, e.encoder, str(e.seed), overrides_of(e.record) if e.status.startswith("done") else "", _score(e.score("dev")),
             _score(e.score("test")), "smoke" if e.smoke else "", e.status,
             e.folder.name if e.folder is not None else e.identity[:12]] for e in entries]
    print(_table(["task", "encoder", "seed", "overrides", "dev", "test", "smoke", "status", "run"], rows))
    done = sum(e.status.startswith("done") for e in entries)
    print(f"\n{len(entries)} runs under {runs_dir} ({done} done); dev and test: the task's selection metric; "
          "rnnbench runs compare A B sets two apart")
    return 0


def find_run(given: str, runs_dir: Path) -> RunEntry:
    """A run by its folder, or by a prefix of its identity (the hex after s<seed>- in its folder's name)."""
    path = Path(given)
    if path.is_dir():
        if (path / RECORD).exists() or (path.name.startswith("s") and "-" in path.name):
            return _entry_of_folder(path)
        raise ConfigError(f"{given}: not a run folder (runs/<task>/<encoder>/s<seed>-<identity>)")
    if not runs_dir.is_dir():
        raise ConfigError(f"{given}: no such run folder, and no runs folder {runs_dir} to look its identity up in")
    prefix = given.lower()
    matches = [e for e in collect(runs_dir) if e.identity.startswith(prefix)
               or (e.folder is not None and e.folder.name.partition("-")[2].startswith(prefix))]
    if not matches:
        raise ConfigError(f"{given}: no run folder and no run under {runs_dir} whose identity starts so (rnnbench runs lists them)")
    if len(matches) > 1:
        names = ", ".join(str(e.folder or e.identity) for e in matches[:6])
        raise ConfigError(f"{given}: {len(matches)} runs have an identity starting so ({names}); give more of it")
    return matches[0]


def compare_runs(args) -> int:
    runs_dir = runs_folder(getattr(args, "runs_dir", None))
    a, b = find_run(args.first, runs_dir), find_run(args.second, runs_dir)
    for entry, given in ((a, args.first), (b, args.second)):
        if not isinstance(entry.record.get("config"), dict):
            raise ConfigError(f"{given}: {entry.status}, no record with a config to compare "
                              f"({entry.folder or entry.identity}); finish the run first")
    names = [str(a.folder), str(b.folder)]
    rows = [["task", a.task, b.task], ["encoder", a.encoder, b.encoder], ["seed", str(a.seed), str(b.seed)],
            ["status", a.status, b.status], ["smoke", str(a.smoke), str(b.smoke)]]
    for split in ("dev", "test"):
        keys = list(dict.fromkeys([*(a.record.get(split) or {}), *(b.record.get(split) or {})]))
        for key in keys:
            va, vb = (a.record.get(split) or {}).get(key), (b.record.get(split) or {}).get(key)
            rows.append([f"{split} {key}", _number(va), _number(vb)])
    for key, label in (("best_epoch", "best epoch"), ("epochs_run", "epochs run"), ("encoder_parameters", "encoder parameters"),
                       ("seconds_per_epoch", "seconds per epoch"), ("peak_memory_mb", "peak memory MB"), ("git_commit", "git commit")):
        rows.append([label, _number(a.record.get(key)), _number(b.record.get(key))])
    print(_table(["", "A", "B"], rows))
    own_a, own_b = flatten(a.record["config"]), flatten(b.record["config"])
    differ = [k for k in dict.fromkeys([*own_a, *own_b]) if not k.startswith("paths.") and own_a.get(k, "<absent>") != own_b.get(k, "<absent>")]
    print(f"\nA: {names[0]}\nB: {names[1]}")
    if not differ:
        print("config: the same (every key)")
        return 0
    print(f"\nconfig keys that differ ({len(differ)}):")
    print(_table(["key", "A", "B"], [[k, _value(own_a.get(k, "<absent>")), _value(own_b.get(k, "<absent>"))] for k in differ]))
    return 0


def _number(value) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
