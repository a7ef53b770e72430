"""``rnnbench runs`` (your runs as a table) and ``rnnbench runs compare A B`` (two runs side by side).

Reads the runs folder (``RNNBENCH_RUNS``, default ``runs/``) through ``results.run_folders``: every run folder
(``<task>/<encoder>/s<seed>-<identity>``: its ``record.json`` once finished, its checkpoint
and lock before) and the runs index ``records.jsonl`` (``rnnbench.results.records``), which
also lists finished runs whose folder is gone. Nothing is written.

A run's overrides are the config keys whose values differ from what its experiment (or
task) and encoder compose to today, with ``trainer=smoke`` named as such: what tells apart
three "trec / bilstm / seed 1" runs.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from rnnbench.errors import ConfigError
from rnnbench.results.records import RECORD
from rnnbench.results.run_folders import RunEntry, entry_of_folder, shown_value, collect, flatten, overrides_of

HELP = """Your runs as a table: task, encoder, seed, the config keys set apart from the defaults, the
dev and test score on the task's selection metric, whether it is a smoke run, and its status
(done, in progress, interrupted, started, folder missing).

  rnnbench runs                              every run under runs/ (RNNBENCH_RUNS)
  rnnbench runs --task trec --encoder rcrn   some of them
  rnnbench runs compare A B                  two runs: metrics side by side and the config keys that differ
                                             (A, B: run folders or identity prefixes, e.g. 07d6f0ec)"""
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
            return entry_of_folder(path)
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
    print(_table(["key", "A", "B"], [[k, shown_value(own_a.get(k, "<absent>")), shown_value(own_b.get(k, "<absent>"))] for k in differ]))
    return 0


def _number(value) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
