"""Cluster launchers: the SLURM preset's sbatch script, and a sweep through submitit's local
launcher (the SLURM launcher's submission path on the local machine) whose pre-empted job is
requeued and resumes its run from last.pt."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from rnnbench.compose import compose_config
from rnnbench.run import train
from tests.helpers import REPO

# Picking, small: one epoch of 400 batches, a checkpoint every 10 (about 4 s of training).
RUN = [
    "trainer=smoke", "trainer.max_batches=null", "trainer.epochs=1", "trainer.batch_size=10", "trainer.checkpoint_every=10",
    "task.reader.train_size=4000", "task.reader.dev_size=100", "task.reader.test_size=100", "encoder.hidden_size=16",
]


def test_slurm_preset_overrides_and_sbatch_script(tmp_path, monkeypatch):
    import submitit
    from omegaconf import OmegaConf

    launcher = compose_config(["hydra/launcher=slurm", "hydra.launcher.partition=gpu", "hydra.launcher.gpus_per_node=2",
                               "hydra.launcher.timeout_min=30", "hydra.launcher.cpus_per_task=4"], return_hydra_config=True).hydra.launcher
    assert launcher._target_.endswith("SlurmLauncher")
    assert (launcher.partition, launcher.gpus_per_node, launcher.timeout_min, launcher.cpus_per_task) == ("gpu", 2, 30, 4)
    # The sbatch script submitit would write, with the parameters passed as the launcher
    # passes them (hydra_submitit_launcher's launch()); a fake srun stands in for SLURM.
    (tmp_path / "srun").write_text("#!/bin/sh\n")
    (tmp_path / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    params = {k: v for k, v in OmegaConf.to_container(launcher).items() if k not in ("_target_", "submitit_folder", "name")}
    executor = submitit.AutoExecutor(cluster="slurm", folder=str(tmp_path / "%j"), slurm_max_num_timeout=params.pop("max_num_timeout"))
    base = {"timeout_min", "cpus_per_task", "gpus_per_node", "tasks_per_node", "mem_gb", "nodes", "stderr_to_stdout"}
    executor.update_parameters(**{k if k in base else f"slurm_{k}": v for k, v in params.items()})
    assert executor._executor.max_num_timeout == 20  # a timed-out job is requeued, not dropped
    script = executor._executor._make_submission_file_text("python -m submitit.core._submit x", "uid")
    for line in ("--partition=gpu", "--gpus-per-node=2", "--time=30", "--cpus-per-task=4", "--mem=32GB", "--requeue", "--signal=USR2@120"):
        assert f"#SBATCH {line}" in script, line


def _children(parent: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:  # fields[1] is the parent pid
            pids.append(int(stat.parent.name))
    return pids


def _last_batch(run_dir: Path) -> int:
    try:
        return torch.load(run_dir / "last.pt", weights_only=False)["state"]["batch"]
    except Exception:  # noqa: BLE001 - absent, or caught between write and rename
        return -1


@pytest.mark.slow
def test_submitit_local_sweep_writes_both_records_and_a_preempted_job_resumes(tmp_path):
    runs = tmp_path / "runs"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled"}
    sweep = subprocess.Popen(
        [sys.executable, str(REPO / "train.py"), "-m", "hydra/launcher=local", "seed=1,2", f"paths.runs_dir={runs}", *RUN],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        # Find the job training seed 1 (its submitit log names the run), wait for a
        # mid-epoch checkpoint, then send what SLURM sends before pre-empting a job.
        preempted_at, deadline = None, time.time() + 240
        while preempted_at is None and sweep.poll() is None and time.time() < deadline:
            for log in runs.glob("hydra/*/.submitit/*/*_0_log.out"):
                found = re.search(r"seed 1: .* run folder (\S+)", log.read_text())
                if found and _last_batch(Path(found.group(1))) >= 20:
                    controller = int(log.parent.name)  # submitit local names a job by its controller's pid
                    for task in _children(controller):
                        os.kill(task, signal.SIGUSR2)
                    preempted_at, seed1_log, seed1_dir = _last_batch(Path(found.group(1))), log, Path(found.group(1))
                    break
            time.sleep(0.05)
        out, _ = sweep.communicate(timeout=300)
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == 0, out
    assert preempted_at is not None, "seed 1 finished before it could be pre-empted:\n" + out

    index = [json.loads(line) for line in (runs / "records.jsonl").read_text().splitlines()]
    assert sorted(r["seed"] for r in index) == [1, 2]
    for row in index:
        assert (Path(row["run_dir"]) / "done").exists() and (Path(row["run_dir"]) / "record.json").exists()
    log = seed1_log.read_text()
    assert "this job is preempted" in seed1_log.with_name(seed1_log.name.replace("_log.out", "_log.err")).read_text()
    assert re.search(r"resuming from epoch 1, batch [1-9]\d+", log), log

    # The requeued run ends exactly as an uninterrupted one (same config, in this process).
    clean = train(compose_config([f"paths.runs_dir={tmp_path / 'clean'}", "seed=1", *RUN]), say=lambda _: None)
    resumed = json.loads((seed1_dir / "record.json").read_text())
    assert resumed["identity"] == clean["identity"]
    assert resumed["test"] == clean["test"] and resumed["history"][0]["dev_loss"] == clean["history"][0]["dev_loss"]
