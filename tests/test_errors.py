"""User mistakes get one clear message, not a stack trace."""
from __future__ import annotations

import pytest

from tests.helpers import run_train_py


def _last_lines(result) -> str:
    return (result.stderr + result.stdout).strip()


def test_unknown_encoder_lists_known_ones():
    result = run_train_py(["encoder=no_such_encoder", "trainer=smoke"])
    assert result.returncode != 0
    out = _last_lines(result)
    assert "no_such_encoder" in out and "bilstm" in out and "3l_bilstm" in out
    assert "Traceback" not in out


def test_unknown_task_lists_known_ones():
    result = run_train_py(["task=no_such_task"])
    out = _last_lines(result)
    assert result.returncode != 0 and "no_such_task" in out and "trec" in out and "Traceback" not in out


def test_unknown_config_key_names_the_key():
    result = run_train_py(["trainer.epoch=3"])
    out = _last_lines(result)
    assert result.returncode != 0 and "epoch" in out and "Traceback" not in out


def test_wrong_value_type_is_refused():
    result = run_train_py(["trainer.epochs=many"])
    out = _last_lines(result)
    assert result.returncode != 0 and "epochs" in out and "Traceback" not in out


@pytest.mark.slow  # a train.py process that prepares data
def test_missing_dataset_names_files_directory_and_source(tmp_path):
    result = run_train_py(["task=trec", "trainer=smoke", f"paths.runs_dir={tmp_path}"], env_extra={"RNNBENCH_DATA": str(tmp_path / "nodata")})
    assert result.returncode == 2
    err = result.stderr.strip()
    assert err.count("\n") == 0, err  # one line
    assert "trec/train_5500.label" in err and str(tmp_path / "nodata") in err and "http" in err
