"""One run on two processes (torchrun, gloo on the CPU): it completes, the ranks agree, a killed run resumes exactly."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from rnnbench import run
from rnnbench.training import distributed
from rnnbench.training.distributed import Dist, shard
from tests.helpers import REPO

ARGS = ["task=picking", "task.reader.train_size=1200", "task.reader.dev_size=100", "task.reader.test_size=100",
        "trainer.batch_size=20", "trainer.epochs=1", "trainer.checkpoint_every=10", "trainer.progress=false",
        "encoder.hidden_size=16", "trainer.num_threads=1"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled", "OMP_NUM_THREADS": "1"}


def _torchrun(args: list[str], **kwargs):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(REPO / "train.py"), *args]
    return command, dict(cwd=REPO, env=ENV, **kwargs)


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and all its descendants (torchrun's workers may start process groups of their own)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo, tree = [pid], []
    while todo:
        tree.append(todo.pop())
        todo.extend(children.get(tree[-1], []))
    for member in tree:
        try:
            os.kill(member, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _record(runs: Path) -> dict:
    (path,) = list(runs.glob("picking/bilstm/*/record.json"))
    return json.loads(path.read_text())


def test_shards_cover_the_batch_once_and_weigh_the_mean():
    idx = list(range(7))
    parts = [shard(idx, Dist(rank, 3)) for rank in range(3)]
    assert sum((p for p, _ in parts), []) == idx
    # DDP averages the ranks' weighted mean losses: sum_r (w_r / 3) * mean_r = sum_r (n_r / 7) * mean_r, the batch mean
    assert [w / 3 for _, w in parts] == pytest.approx([len(p) / 7 for p, _ in parts])
    assert shard([5], Dist(1, 2)) == ([5], 0.0)  # a rank left without examples takes part with weight 0
    assert shard(idx, Dist()) == (idx, 1.0)


@pytest.mark.parametrize("rank", [0, 1])
def test_every_rank_meets_the_others_after_deciding_not_to_train(monkeypatch, rank):
    """A run found done (or locked) is one broadcast and then an exit. Exiting right after it
    aborted the rank still receiving it (gloo, SIGABRT, once in CI): every rank waits at a barrier."""
    calls = []
    monkeypatch.setattr(distributed, "setup", lambda device: Dist(rank, 2))
    monkeypatch.setattr(distributed, "broadcast", lambda obj, dist: calls.append("broadcast") or "skip")
    monkeypatch.setattr(distributed, "barrier", lambda dist: calls.append("barrier"))
    monkeypatch.setattr(run, "_train_outcome", lambda cfg, say, before_training: ("done", {"test": {}}))
    cfg = OmegaConf.create({"trainer": {"device": "cpu"}, "task": {"select_metric": "accuracy"}})
    assert run.train_outcome(cfg)[0] == "done"
    assert calls == ["broadcast", "barrier"]


@pytest.mark.slow
def test_two_processes_train_one_run_agree_and_resume_after_a_kill(tmp_path):
    command, opts = _torchrun(ARGS + [f"paths.runs_dir={tmp_path / 'clean'}"])
    clean = subprocess.run(command, capture_output=True, text=True, timeout=600, **opts)
    assert clean.returncode == 0, clean.stderr[-3000:]
    a = _record(tmp_path / "clean")
    assert a["world_size"] == 2 and len(set(a["rank_weights"])) == 1  # DDP kept both ranks' weights equal
    assert clean.stdout.count("best epoch") == 1  # rank 0 alone speaks and writes
    run_dir = Path(a["run_dir"])
    assert len((run_dir / "predictions.jsonl").read_text().splitlines()) == 100  # both ranks' predictions gathered
    assert len((tmp_path / "clean" / "records.jsonl").read_text().splitlines()) == 1

    runs = tmp_path / "killed"
    command, opts = _torchrun(ARGS + [f"paths.runs_dir={runs}"])
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **opts)
    deadline, killed_at = time.time() + 300, None
    while time.time() < deadline and proc.poll() is None and killed_at is None:
        for last in runs.glob("picking/bilstm/*/last.pt"):
            try:
                saved = torch.load(last, weights_only=False)
            except Exception:  # noqa: BLE001 - caught between write and rename: try again
                continue
            if saved["state"]["epoch"] == 0 and saved["state"]["batch"] >= 20:
                assert len(saved["rng_ranks"]) == 2
                _kill_tree(proc.pid)  # torchrun and both ranks, without warning
                killed_at = saved["state"]["batch"]
                break
        time.sleep(0.05)
    proc.wait()
    assert killed_at is not None, "the run ended before a mid-epoch checkpoint could be interrupted"
    assert not list(runs.glob("picking/bilstm/*/done"))

    command, opts = _torchrun(ARGS + [f"paths.runs_dir={runs}"])
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600, **opts)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming from epoch 1" in resumed.stdout
    b = _record(runs)
    assert a["identity"] == b["identity"] and a["rank_weights"] == b["rank_weights"]
    assert a["test"] == b["test"] and a["dev"] == b["dev"]
    assert [h["train_loss"] for h in a["history"]] == [h["train_loss"] for h in b["history"]]
    assert (run_dir / "predictions.jsonl").read_text() == (Path(b["run_dir"]) / "predictions.jsonl").read_text()

    again = subprocess.run(*_torchrun(ARGS + [f"paths.runs_dir={runs}"])[:1], capture_output=True, text=True, timeout=600, **opts)
    assert again.returncode == 0 and "already done" in again.stdout, again.stderr[-3000:]  # both ranks stop: rank 0 found the record
