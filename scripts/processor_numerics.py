"""Which settings pin a run's numerics, and what they cost: RCRN Table 5's seed-1 BiLSTM run at the
task's rate 1e-3 (``train.py task=trec encoder=bilstm seed=1``, one of the table's learning-rate
selection runs) trained once per setting, each beside the committed row of the same run identity
(results/rcrn_table5.csv).

    python scripts/processor_numerics.py                   # every setting, into results/diagnostics/processor_numerics.md
    python scripts/processor_numerics.py --settings default pinned --runs-root /tmp/numerics

A setting is environment variables read by the libraries under torch when the process starts:

- ``MKL_CBWR=COMPATIBLE``: MKL's conditional numerical reproducibility, its code path fixed to one
  that every x86-64 processor runs (SSE2), so MKL's results do not depend on the instruction set;
- ``ONEDNN_MAX_CPU_ISA=SSE41``: oneDNN (the CPU LSTM and matrix products it serves) limited to SSE4.1;
- ``ATEN_CPU_CAPABILITY=default``: torch's own vectorised kernels (activations, reductions) built
  without AVX2/AVX-512;
- ``pinned``: all three.

Each run goes to its own runs folder (the settings do not change a run's identity), at one
thread, and is compared with the committed row: its dev curve epoch by epoch (the first epoch
that differs), its selected epoch, dev and test score, and its training CPU seconds per epoch as a
ratio to the default setting's, measured in this command (the same machine and load).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = ["task=trec", "encoder=bilstm", "seed=1"]
TASK_LR = 1e-3  # conf/task/trec.yaml's rate: the run RUN trains
COMMITTED = ROOT / "results" / "rcrn_table5.csv"
OUT = ROOT / "results" / "diagnostics" / "processor_numerics.md"
SETTINGS = {
    "default": {},
    "mkl_cbwr": {"MKL_CBWR": "COMPATIBLE"},
    "onednn_sse41": {"ONEDNN_MAX_CPU_ISA": "SSE41"},
    "aten_default": {"ATEN_CPU_CAPABILITY": "default"},
    "pinned": {"MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41", "ATEN_CPU_CAPABILITY": "default"},
}


def committed_row() -> dict:
    """The committed row of the same run: RCRN Table 5, BiLSTM, seed 1, at the task's rate 1e-3 (the
    one-run command's; a learning-rate selection run of the table, whose BiLSTM reports another rate)."""
    with COMMITTED.open() as f:
        rows = [r for r in csv.DictReader(f) if r["encoder"] == "bilstm" and r["seed"] == "1" and not r["variant"]
                and float(r["lr"]) == TASK_LR]
    if len(rows) != 1:
        sys.exit(f"error: {COMMITTED}: expected one seed-1 bilstm row at lr {TASK_LR:g}, found {len(rows)}")
    return rows[0]


def train(setting: str, runs_root: Path) -> dict:
    """Train the run under ``setting`` in its own runs folder; its record and the CPU seconds spent."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", **SETTINGS[setting]}
    runs = runs_root / setting
    before = os.times()
    started = time.monotonic()
    subprocess.run([sys.executable, str(ROOT / "train.py"), *RUN, f"paths.runs_dir={runs}", "trainer.progress=false"],
                   cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    after = os.times()
    records = sorted(runs.rglob("record.json"))
    if not records:
        sys.exit(f"error: {runs}: the run wrote no record.json")
    record = json.loads(records[-1].read_text())
    record["_cpu_seconds"] = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    record["_wall_seconds"] = time.monotonic() - started
    return record


def first_difference(curve: list[float], committed: list[float]) -> str:
    for epoch, (a, b) in enumerate(zip(curve, committed), 1):
        if abs(a - b) > 5e-7:  # the CSV keeps six decimals
            return str(epoch)
    return "none" if len(curve) == len(committed) else f"none in {min(len(curve), len(committed))} (lengths differ)"


def render(results: dict[str, dict], row: dict, when: str, commit: str) -> str:
    committed_curve = [float(v) for v in row["dev_curve"].split(";")]
    base = results.get("default")
    lines = [
        "# Processor numerics: what pins a run's numbers",
        "",
        f"RCRN Table 5's seed-1 BiLSTM run (`python train.py {' '.join(RUN)}`, one thread), trained once per "
        f"setting by `scripts/processor_numerics.py` on {results[next(iter(results))]['hardware'].get('cpu', platform.processor())} "
        f"({when}, code {commit[:12]}), beside the committed row of the same run identity ({row['run']}), made on "
        f"{row['hardware']} (code {row['commit'][:12]}). CPU seconds per training epoch (the process's, "
        "so other processes' load moves them less than wall time) are a ratio to the default setting's, "
        "measured in the same command.",
        "",
        "| setting | environment | selected epoch | dev | test | first dev epoch that differs from the committed row | CPU s/epoch vs default |",
        "|---|---|---|---|---|---|---|",
        f"| committed row | (default; {row['hardware']}) | {row['selected_epoch']} | {float(row['dev']):.4f} | "
        f"{100 * float(row['test']):.1f} | | |",
    ]
    for name, rec in results.items():
        curve = [h["dev_accuracy"] for h in rec["history"]]
        env = ", ".join(f"`{k}={v}`" for k, v in SETTINGS[name].items()) or "(none)"
        ratio = rec["cpu_seconds_per_epoch"] / base["cpu_seconds_per_epoch"] if base else float("nan")
        lines.append(f"| {name} | {env} | {rec['best_epoch']} | {rec['dev']['accuracy']:.4f} | "
                     f"{100 * rec['test']['accuracy']:.1f} | {first_difference(curve, committed_curve)} | {ratio:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    p.add_argument("--runs-root", type=Path, default=ROOT / "runs" / "numerics")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    row = committed_row()
    results = {}
    for setting in args.settings:
        print(f"training under {setting} ...", flush=True)
        results[setting] = train(setting, args.runs_root)
        rec = results[setting]
        print(f"  {setting}: epoch {rec['best_epoch']}, dev {rec['dev']['accuracy']:.4f}, test {rec['test']['accuracy']:.4f}, "
              f"{rec['cpu_seconds_per_epoch']:.2f} CPU s/epoch", flush=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    when = datetime.date.today().isoformat()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(results, row, when, commit))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
