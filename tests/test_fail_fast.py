"""Fail fast and say so: a missing dataset is one line at once (no hub download attempted
offline or for a data folder that does not exist); a smoke run says so in its last line; a
finished run relaunched with another logger says nothing was logged."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnnbench.data import hub
from rnnbench.data.trec import TrecReader
from rnnbench.errors import DatasetMissingError
from rnnbench.run import train
from tests.helpers import REPO, smoke_config

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = ["task=picking", "task.reader.train_size=200", "task.reader.dev_size=40", "task.reader.test_size=70", "encoder.hidden_size=16"]
CLOSED_PORT = "http://127.0.0.1:9"  # the discard port: nothing listens there, a connection is refused at once


@pytest.fixture
def online_env(monkeypatch):
    """No offline variable set, and the hub endpoint a local port that refuses connections."""
    for variable in (*hub.OFFLINE_VARIABLES, "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", CLOSED_PORT)
    hub.answers.cache_clear()
    yield
    hub.answers.cache_clear()


@pytest.fixture
def no_download(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a hub download was attempted")

    monkeypatch.setattr(hub, "load_hub", refuse)
    monkeypatch.setattr(hub, "hub_file", refuse)


def test_missing_dataset_with_the_hub_unreachable_is_one_line_in_well_under_5_s(tmp_path, monkeypatch, online_env, no_download):
    monkeypatch.setenv("RNNBENCH_DATA", str(tmp_path))  # a folder that exists but holds no TREC
    cfg = smoke_config(tmp_path, "task=trec", "embedding=random", f"paths.cache_dir={tmp_path / 'cache'}")
    started = time.perf_counter()
    with pytest.raises(DatasetMissingError) as error:
        train(cfg, say=lambda *_: None)
    assert time.perf_counter() - started < 5
    message = str(error.value)
    assert "\n" not in message and "trec/train_5500.label" in message
    assert "hub copy 'CogComp/trec' not tried (offline: 127.0.0.1:9 did not answer" in message and "HF_HUB_OFFLINE=1" in message
    assert not (tmp_path / "runs" / "trec").exists()  # the failed run leaves no folder


def test_a_data_folder_that_does_not_exist_is_never_a_download(tmp_path, monkeypatch, no_download):
    monkeypatch.setenv("RNNBENCH_DATA", str(tmp_path / "typo"))
    for variable in hub.OFFLINE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(hub, "answers", lambda *a, **k: True)  # even online
    with pytest.raises(DatasetMissingError, match=r"typo, which does not exist.*RNNBENCH_DATA or paths.data_dir names a folder that"):
        TrecReader().load(tmp_path / "typo")


def test_a_fresh_clone_without_data_reads_the_hub_copy(tmp_path, monkeypatch):
    """The default data/ absent (RNNBENCH_DATA unset): the hub copy is what a new user reads."""
    monkeypatch.chdir(tmp_path)
    for variable in (*hub.OFFLINE_VARIABLES, "RNNBENCH_DATA"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(hub, "answers", lambda *a, **k: True)
    monkeypatch.setattr(TrecReader, "read_hub", lambda self: {"train": [], "dev": [], "test": []})
    assert TrecReader().load(Path("data")) == {"train": [], "dev": [], "test": []}


def test_offline_variables_skip_the_connection_check(tmp_path, monkeypatch, no_download):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "answers", lambda *a, **k: pytest.fail("the offline flag must skip the connection check"))
    with pytest.raises(DatasetMissingError, match="not tried .HF_HUB_OFFLINE/HF_DATASETS_OFFLINE set"):
        TrecReader().check_available(tmp_path)


def test_the_hub_is_tried_when_it_answers(tmp_path, monkeypatch):
    for variable in hub.OFFLINE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(hub, "answers", lambda *a, **k: True)
    TrecReader().check_available(tmp_path)  # files missing but the hub will be tried: no error yet
    tried = []
    monkeypatch.setattr(TrecReader, "read_hub", lambda self: tried.append(self.hub_id) or {"train": [], "dev": [], "test": []})
    assert TrecReader().load(tmp_path) == {"train": [], "dev": [], "test": []} and tried == ["CogComp/trec"]


def test_the_connection_check_uses_the_proxy_and_times_out(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert hub.hub_address() == ("proxy.example", 3128)
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example")
    assert hub.hub_address() == ("hub.example", 443)
    def hangs(*args, **kwargs):  # a name lookup that hangs, then fails
        time.sleep(3)
        raise OSError("no answer")

    monkeypatch.setattr(hub.socket, "create_connection", hangs)
    started = time.perf_counter()
    assert hub.answers("hub.example", 443, 0.5) is False  # the check gives up at its timeout
    assert time.perf_counter() - started < 2
    hub.answers.cache_clear()


@pytest.mark.slow  # a train.py process
def test_train_py_with_a_missing_dataset_prints_one_line_and_no_retries(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in hub.OFFLINE_VARIABLES}
    env.update(RNNBENCH_DATA=str(tmp_path), HF_ENDPOINT=CLOSED_PORT)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, str(REPO / "train.py"), "task=trec", "trainer=smoke", f"paths.runs_dir={tmp_path / 'runs'}"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: dataset 'trec' not found") and "Retrying" not in out.stderr
    assert time.perf_counter() - started < 120  # the hub's retries alone took 25-40 s (imports take the rest)


# --- the last line of a smoke run, a relaunch with another logger --------------------------------------

def test_a_smoke_run_says_so_in_its_last_line_and_a_full_run_does_not(tmp_path):
    said: list[str] = []
    record = train(smoke_config(tmp_path, *SMALL), say=said.append)
    assert record["smoke"] and said[-1].startswith("smoke run: test scored on 32 of 70 examples (trainer.max_eval_batches=2)")
    said.clear()
    train(smoke_config(tmp_path, *SMALL), say=said.append)  # already done: still said last
    assert said[0].startswith("already done") and said[-1].startswith("smoke run:")
    said.clear()
    full = train(smoke_config(tmp_path, *SMALL, "trainer.max_eval_batches=null"), say=said.append)
    assert not full["smoke"] and not any(line.startswith("smoke run") for line in said)


def test_a_finished_run_relaunched_with_a_new_logger_says_nothing_was_logged(tmp_path):
    pytest.importorskip("tensorboard")
    record = train(smoke_config(tmp_path, *SMALL), say=lambda *_: None)
    said: list[str] = []
    again = train(smoke_config(tmp_path, *SMALL, "logger=tensorboard"), say=said.append)
    assert again["identity"] == record["identity"]  # the logger is not part of the run's identity
    (line,) = [s for s in said if "logged" in s]
    assert line.startswith("nothing was logged to logger=tensorboard: the run finished earlier with logger=none")
    assert not list(Path(record["run_dir"]).glob("events.out.tfevents.*"))
    said.clear()
    train(smoke_config(tmp_path, *SMALL), say=said.append)  # the same logger as before: nothing to say
    assert not [s for s in said if "logged" in s]


@pytest.mark.parametrize("override, said", [
    # outside the option's choices (rnnbench.encoders.options): refused when the config is composed
    ("encoder.cell=lsmt", "encoder.cell=lsmt: must be one of lstm, gru"),
    ("encoder=rcrn encoder.listener_direction=sideways", "encoder.listener_direction=sideways: must be one of forward, bidirectional"),
    # a combination only the constructor refuses: the encoder built once before the data is prepared
    ("encoder.cell=gru encoder.residual=v2", "encoder 'bilstm': encoder.residual=v2 (lateral residual) is defined for the LSTM cell only"),
])
def test_an_encoder_option_it_refuses_is_one_line_before_any_data_is_read(tmp_path, override, said, no_download):
    from rnnbench.errors import ConfigError

    # the data folder does not exist: an error about data would mean the options were checked too late
    with pytest.raises(ConfigError) as err:
        train(smoke_config(tmp_path, "task=trec", f"paths.data_dir={tmp_path / 'no_data'}", *override.split()))
    assert said in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "runs" / "trec").exists()  # no run folder was made either
