"""Your run folders as records: every run folder under a runs folder (``<task>/<encoder>/s<seed>-<identity>``:
its ``record.json`` once finished, its checkpoint and lock before) and the runs index
``records.jsonl`` (``results.records``), which also lists finished runs whose folder is gone; and a
run's overrides: the config keys whose values differ from what its experiment (or task) and encoder
compose to today, with ``trainer=smoke`` named as such. Read by ``rnnbench runs`` and the report."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from rnnbench.results.records import DONE, RECORD, index_entries

LAST = "last.pt"  # training/checkpoint.py's LAST, named here so listing runs does not import torch
LOCK = ".lock"  # run.py's lock file
# Keys that change neither what is trained nor its scores: never shown as overrides or differences.
IGNORED_PREFIXES = ("paths.", "logger.", "trainer.progress", "trainer.checkpoint_every", "hydra.")


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


def entry_of_folder(folder: Path) -> RunEntry:
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
            pass  # unreadable or not JSON: listed below as a damaged record, never a crash of the listing
        return RunEntry(task, encoder, seed, "damaged record", folder, short_identity)
    status = "in progress" if _locked(folder / LOCK) else "interrupted" if (folder / LAST).exists() else "started"
    return RunEntry(task, encoder, seed, status, folder, short_identity)


def collect(runs_dir: Path) -> list[RunEntry]:
    """Every run folder under ``runs_dir``, then the index's finished runs whose folder is gone."""
    folders = sorted(p for p in runs_dir.glob("*/*/s*-*") if p.is_dir() and ".damaged" not in p.name)
    entries = [entry_of_folder(p) for p in folders]
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


def shown_value(value) -> str:
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
    changed = [f"{k}={shown_value(v)}" for k, v in own.items() if _shown(k) and k in defaults and defaults[k] != v]
    added = [f"+{k}={shown_value(v)}" for k, v in own.items() if _shown(k) and k not in defaults]
    return " ".join([*([f"experiment={experiment}"] if experiment else []), *(["trainer=smoke"] if smoke else []), *changed, *added])


