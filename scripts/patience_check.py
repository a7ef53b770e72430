"""Does a verdict rest on the stopping rule? Finished runs trained on under a longer patience.

    python scripts/patience_check.py --continue runs/amazon_music/rcrn/s1-89b144ddfc27 ... --patience 10
    python scripts/patience_check.py                     # the page, from the committed CSV alone

RCRN Table 1's runs stop 4 epochs after their best dev accuracy (the task's patience, on 200 dev
reviews); the paper gives no epoch count or stopping rule. A run under a longer patience is the same
run up to the epoch where the shorter one stopped: nothing before the stop reads the patience, and
training is deterministic on one processor and thread count (results/diagnostics/processor_numerics.md).
So the longer run starts from the finished run's checkpoint at its stop (``last.pt`` and ``best.pt``,
copied: the finished run's folder is read, never changed) in its own folder (the patience is part of
its identity) under ``--runs`` (default: the runs folder, RNNBENCH_RUNS), and trains on
(``loop.apply_patience``). Refused, one line each: a run not finished, one that ran to its epoch cap,
one made on another processor or thread count, or one whose identity this code no longer reproduces
(a component changed since). An interrupted check resumes: run the same command again.

Evidence: results/diagnostics/patience_check.csv, one row per run (the finished run's outcome beside
the longer one's, their dev curves, commit and hardware); the page (patience_check.md) is generated
from it and regenerates without the run folders.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import sys
from pathlib import Path
from typing import NoReturn

import torch
from omegaconf import OmegaConf

FIELDS = ["task", "encoder", "seed", "lr", "table_run", "table_patience", "table_epochs", "table_best_epoch", "table_dev",
          "table_test", "run", "patience", "epochs", "best_epoch", "dev", "test", "extra_cpu_seconds", "dev_curve",
          "dev_loss_curve", "commit", "hardware"]
CSV_NAME = "patience_check.csv"


def fail(message: str) -> NoReturn:
    raise SystemExit(f"error: {message}")


def finished_run(run_dir: Path) -> dict:
    """A finished run's record (its resolved config under ``config``)."""
    if not (run_dir / "done").exists() or not (run_dir / "record.json").exists():
        fail(f"{run_dir}: not a finished run (no done marker or record.json); let it finish first")
    for name in ("last.pt", "best.pt"):
        if not (run_dir / name).exists():
            fail(f"{run_dir}: no {name} to train on from; only a run folder that keeps its checkpoints can be carried")
    return json.loads((run_dir / "record.json").read_text())


def composed(record: dict):
    """The run's config as composed today (its experiment, encoder and seed, then every key the saved
    config sets otherwise): the identity is hashed from the unresolved paths, which the saved one lacks."""
    from rnnbench.compose import compose_config
    from rnnbench.results.run_folders import flatten

    config = record["config"]
    base = f"experiment={config['experiment']}" if config.get("experiment") else f"task={record['task']}"
    cfg = compose_config([base, f"encoder={record['encoder']}", f"seed={record['seed']}"])
    today = flatten(OmegaConf.to_container(cfg, resolve=True))
    for key, value in flatten(config).items():
        if not key.startswith(("paths.", "hydra.")) and (key not in today or today[key] != value):
            OmegaConf.update(cfg, key, value, force_add=True)
    return cfg


def carried_config(run_dir: Path, record: dict, patience: int, runs_dir: Path):
    """The config of ``run_dir``'s run under ``patience``, its folder under ``runs_dir``; refuses what cannot be carried."""
    from rnnbench.results.identity import run_dir as run_dir_of
    from rnnbench.results.identity import run_identity
    from rnnbench.results.run_record import hardware

    cfg = composed(record)
    if run_identity(cfg) != record["identity"]:
        fail(f"{run_dir}: this code no longer reproduces the run's identity (a component or the data changed since "
             f"commit {record['git_commit'][:12]}); check out that commit to train it on")
    if int(record["epochs_run"]) >= int(cfg.trainer.epochs):
        fail(f"{run_dir}: ran to its epoch cap ({cfg.trainer.epochs}); a longer patience changes nothing")
    if patience <= int(cfg.trainer.patience):
        fail(f"--patience {patience}: not longer than the run's ({cfg.trainer.patience})")
    # The thread count is part of the identity checked above; the processor is not.
    here, there = hardware(torch.device("cpu")).get("cpu"), record["hardware"].get("cpu")
    if here != there:
        fail(f"{run_dir}: made on {there}, this is {here}; the same run on another processor is another run "
             "(results/diagnostics/processor_numerics.md)")
    cfg.trainer.patience = patience
    cfg.paths.runs_dir = str(runs_dir)
    return cfg, run_dir_of(cfg, run_identity(cfg))


def carry(source: Path, target: Path) -> None:
    """The finished run's checkpoints into the longer run's folder, unless it has its own."""
    if (target / "done").exists() or (target / "last.pt").exists():
        return
    target.mkdir(parents=True, exist_ok=True)
    for name in ("best.pt", "last.pt"):  # last.pt last: its presence says the folder is ready to resume
        shutil.copy2(source / name, target / f"{name}.tmp")
        (target / f"{name}.tmp").rename(target / name)


def row(source: Path, table: dict, record: dict) -> dict:
    """One CSV row: the finished run's outcome, the longer run's, and what the extra epochs cost."""
    history = record["history"]
    extra = [h for h in history if h["epoch"] > table["epochs_run"]]
    hw, table_config = record["hardware"], table["config"]
    return {"task": record["task"], "encoder": record["encoder"], "seed": record["seed"],
            "lr": table_config["trainer"]["lr"], "table_run": f"{record['encoder']}/{source.name}",
            "table_patience": table_config["trainer"]["patience"], "table_epochs": table["epochs_run"],
            "table_best_epoch": table["best_epoch"], "table_dev": f"{table['dev']['accuracy']:.4f}",
            "table_test": f"{table['test']['accuracy']:.4f}", "run": Path(record["run_dir"]).name,
            "patience": record["config"]["trainer"]["patience"], "epochs": record["epochs_run"],
            "best_epoch": record["best_epoch"], "dev": f"{record['dev']['accuracy']:.4f}",
            "test": f"{record['test']['accuracy']:.4f}",
            "extra_cpu_seconds": f"{sum(h.get('train_cpu_seconds', h['train_seconds']) for h in extra):.1f}",
            "dev_curve": ";".join(f"{h['dev_accuracy']:.4f}" for h in history),
            "dev_loss_curve": ";".join(f"{h['dev_loss']:.4f}" for h in history),
            "commit": record["git_commit"][:12], "hardware": f"{hw.get('cpu')}, {hw['threads']} thread(s), torch {hw['torch']}"}


def train_on(source: Path, patience: int, runs_dir: Path) -> dict:
    """Train ``source``'s run on under ``patience`` (or read it, if done); its CSV row."""
    from rnnbench.run import train

    table = finished_run(source)
    cfg, target = carried_config(source, table, patience, runs_dir)
    carry(source, target)
    print(f"== {source} -> {target} (patience {table['config']['trainer']['patience']} -> {patience})", flush=True)
    return row(source, table, train(cfg))


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def write_rows(path: Path, rows: list[dict]) -> None:
    rows = sorted(rows, key=lambda r: (r["task"], int(r["patience"]), r["encoder"], int(r["seed"])))
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def add_row(csv_path: Path, new: dict) -> None:
    """``new`` into the CSV, replacing the same run's row; read and written under a lock, so checks
    run side by side keep each other's rows."""
    from filelock import FileLock

    csv_path.parent.mkdir(parents=True, exist_ok=True)
    new = {k: str(v) for k, v in new.items()}
    with FileLock(str(csv_path) + ".lock"):
        rows = read_rows(csv_path) if csv_path.exists() else []
        write_rows(csv_path, [r for r in rows if (r["table_run"], r["patience"]) != (new["table_run"], new["patience"])] + [new])


def _mean(values) -> float:
    values = list(values)
    return 100 * statistics.fmean(values) if values else float("nan")


def _lowest_loss_last(r: dict, epochs: int) -> bool:
    """Whether the dev loss was still at its lowest at the run's last epoch (of the first ``epochs``)."""
    losses = [float(x) for x in r["dev_loss_curve"].split(";")][:epochs]
    return losses.index(min(losses)) == len(losses) - 1


def page(rows: list[dict]) -> str:
    lines = ["# Does a verdict rest on the stopping rule? (RCRN Table 1, patience)", "",
             f"Generated by `python scripts/patience_check.py` from [{CSV_NAME}]({CSV_NAME}) (one row per run). "
             "Each run is a finished run of RCRN Table 1 at rung 1 (the table's patience: 4 epochs without a better dev "
             "accuracy, on 200 dev reviews), trained on from its checkpoint at the stop under a longer patience, on "
             "the processor and thread count it was made with; its test score is the best dev epoch's, as in the table. "
             "Accuracy in %.", ""]
    if not rows:
        return "\n".join(lines + ["No runs recorded yet."]) + "\n"
    lines += ["| task | encoder | runs | patience | table's test | trained on: test | best epoch moved | dev loss lowest at the table's stop | extra CPU h |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        cells.setdefault((r["task"], r["patience"], r["encoder"]), []).append(r)
    for (task, p, encoder), runs in sorted(cells.items()):
        moved = sum(r["best_epoch"] != r["table_best_epoch"] for r in runs)
        falling = sum(_lowest_loss_last(r, int(r["table_epochs"])) for r in runs)
        cpu_h = sum(float(r["extra_cpu_seconds"]) for r in runs) / 3600
        lines.append(f"| {task} | {encoder} | {len(runs)} | {runs[0]['table_patience']} → {p} | "
                     f"{_mean(float(r['table_test']) for r in runs):.2f} | {_mean(float(r['test']) for r in runs):.2f} | "
                     f"{moved} | {falling} | {cpu_h:.2f} |")
    # The comparison the verdict rests on: each encoder's mean against the BiLSTM's, per task, at both patiences.
    lines += ["", "RCRN and 3L-BiLSTM against the BiLSTM, per task (mean test over the seeds both have; "
              "the table's patience, then the longer one):", "",
              "| task | patience | encoder | seeds | gap at the table's patience | gap trained on | change |",
              "|---|---:|---|---:|---:|---:|---:|"]
    gaps: dict[tuple, list[tuple[float, float]]] = {}
    for (task, p, encoder), runs in sorted(cells.items()):
        base = {r["seed"]: r for r in cells.get((task, p, "bilstm"), [])}
        paired = [r for r in runs if r["seed"] in base]
        if encoder == "bilstm" or not paired:
            continue
        before = _mean(float(r["table_test"]) for r in paired) - _mean(float(base[r["seed"]]["table_test"]) for r in paired)
        after = _mean(float(r["test"]) for r in paired) - _mean(float(base[r["seed"]]["test"]) for r in paired)
        lines.append(f"| {task} | {p} | {encoder} | {len(paired)} | {before:+.2f} | {after:+.2f} | {after - before:+.2f} |")
        gaps.setdefault((p, encoder), []).append((before, after))
    for (p, encoder), pairs in sorted(gaps.items()):
        if len(pairs) > 1:  # the macro average's view: each task weighs the same
            before, after = (statistics.fmean(x) for x in zip(*pairs))
            lines.append(f"| mean over the {len(pairs)} tasks | {p} | {encoder} | | {before:+.2f} | {after:+.2f} | {after - before:+.2f} |")
    lines += ["", "Each run (best dev epoch / last epoch, then test):", "",
              "| task | encoder | seed | table's run | best / last | test | trained on | best / last | test |",
              "|---|---|---:|---|---|---:|---|---|---:|"]
    for r in sorted(rows, key=lambda r: (r["task"], r["encoder"], int(r["seed"]), int(r["patience"]))):
        lines.append(f"| {r['task']} | {r['encoder']} | {r['seed']} | {r['table_run']} | {r['table_best_epoch']} / {r['table_epochs']} | "
                     f"{100 * float(r['table_test']):.2f} | {r['run']} (patience {r['patience']}) | {r['best_epoch']} / {r['epochs']} | "
                     f"{100 * float(r['test']):.2f} |")
    commits = sorted({r["commit"] for r in rows})
    hardware = sorted({r["hardware"] for r in rows})
    lines += ["", f"Code {', '.join(commits)}; {'; '.join(hardware)}. Where the best epoch did not move, the test score is "
              "the table's to the last digit (the same weights)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--continue", dest="sources", type=Path, nargs="*", default=[],
                        help="finished run folders to train on under --patience")
    parser.add_argument("--patience", type=int, default=10, help="the longer patience (default 10)")
    parser.add_argument("--runs", type=Path, default=None, help="where the longer runs' folders go (default: the runs folder)")
    parser.add_argument("--results", type=Path, default=Path("results"))
    args = parser.parse_args(argv)
    csv_path = args.results / "diagnostics" / CSV_NAME
    if args.sources:
        from rnnbench.compose import compose_config

        from rnnbench.errors import RunInterrupted

        runs_dir = args.runs or Path(compose_config([]).paths.runs_dir)
        for source in args.sources:
            try:
                new = train_on(source, args.patience, runs_dir)
            except RunInterrupted as exc:  # Ctrl-C or SIGTERM: the run's checkpoint is saved
                print(f"{exc}; the rows of the runs that finished are in {csv_path}", file=sys.stderr)
                return exc.exit_code
            add_row(csv_path, new)  # after each run: an interrupted check keeps what finished
    out = csv_path.with_suffix(".md")
    out.write_text(page(read_rows(csv_path) if csv_path.exists() else []))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
