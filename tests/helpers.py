"""Helpers shared by tests: composing configs into a temporary runs folder."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rnnbench.compose import compose_config

REPO = Path(__file__).resolve().parent.parent


def smoke_config(tmp_path: Path, *overrides: str):
    return compose_config(["trainer=smoke", f"paths.runs_dir={tmp_path / 'runs'}", *overrides])


def run_train_py(args: list[str], env_extra: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled", **(env_extra or {})}
    return subprocess.run([sys.executable, str(REPO / "train.py"), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
