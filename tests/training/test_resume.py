"""A run killed mid-epoch (SIGKILL) and relaunched ends exactly like an uninterrupted run."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch

from tests.helpers import run_train_py, spawn_train_py

pytestmark = pytest.mark.slow  # train.py processes, killed and resumed

# Picking task, small: 2 epochs of 100 batches, a checkpoint every 10 batches.
ARGS = [
    "task.reader.train_size=2000", "task.reader.dev_size=200", "task.reader.test_size=200",
    "trainer.batch_size=20", "trainer.epochs=2", "trainer.checkpoint_every=10", "trainer.progress=false",
    "encoder.hidden_size=32", "trainer.num_threads=1",
]


def _record(runs: Path) -> dict:
    (path,) = list(runs.glob("picking/bilstm/*/record.json"))
    return json.loads(path.read_text())


def test_sigkill_mid_epoch_then_resume_matches_uninterrupted(tmp_path):
    clean = run_train_py(ARGS + [f"paths.runs_dir={tmp_path / 'clean'}"])
    assert clean.returncode == 0, clean.stderr

    runs = tmp_path / "killed"
    proc = spawn_train_py([*ARGS, f"paths.runs_dir={runs}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    # Wait for a mid-epoch checkpoint of the first epoch, then kill without warning.
    deadline = time.time() + 300
    killed_at = None
    while time.time() < deadline and proc.poll() is None:
        for last in runs.glob("picking/bilstm/*/last.pt"):
            try:
                state = torch.load(last, weights_only=False)["state"]
            except Exception:  # noqa: BLE001 - caught between write and rename: try again
                continue
            if state["epoch"] == 0 and state["batch"] >= 30:
                os.killpg(proc.pid, signal.SIGKILL)
                killed_at = state["batch"]
                break
        if killed_at:
            break
        time.sleep(0.05)
    proc.wait()
    assert killed_at is not None, "the run ended before a mid-epoch checkpoint could be interrupted"
    assert not list(runs.glob("picking/bilstm/*/done"))

    resumed = run_train_py(ARGS + [f"paths.runs_dir={runs}"])
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming from epoch 1" in resumed.stdout

    a, b = _record(tmp_path / "clean"), _record(runs)
    assert a["identity"] == b["identity"]
    assert a["test"] == b["test"] and a["dev"] == b["dev"]
    assert [h["dev_loss"] for h in a["history"]] == [h["dev_loss"] for h in b["history"]]
    preds_a = (Path(a["run_dir"]) / "predictions.jsonl").read_text()
    preds_b = (Path(b["run_dir"]) / "predictions.jsonl").read_text()
    assert preds_a == preds_b


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_saves_a_checkpoint_says_how_to_resume_and_resumes_exactly(tmp_path, stop):
    """SIGTERM is what a machine shutting down, `kill` or `timeout` send: it must save as Ctrl-C does."""
    args = ARGS[:]
    args[args.index("trainer.epochs=2")] = "trainer.epochs=1"
    clean = run_train_py(args + [f"paths.runs_dir={tmp_path / 'clean'}"])
    assert clean.returncode == 0, clean.stderr

    runs = tmp_path / "interrupted"
    proc = spawn_train_py([*args, f"paths.runs_dir={runs}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and not list(runs.glob("picking/bilstm/*/last.pt")):
        time.sleep(0.05)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (line,) = err.strip().splitlines()  # one line, no traceback
    assert line.startswith("interrupted at epoch 1, batch ") and "run the same command to resume" in line
    (last,) = runs.glob("picking/bilstm/*/last.pt")
    state = torch.load(last, weights_only=False)["state"]
    assert f"batch {state['batch']};" in line and not list(runs.glob("picking/bilstm/*/done"))

    resumed = run_train_py(args + [f"paths.runs_dir={runs}"])
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming from epoch 1, batch {state['batch']}" in resumed.stdout
    a, b = _record(tmp_path / "clean"), _record(runs)
    assert a["test"] == b["test"] and a["dev"] == b["dev"]
