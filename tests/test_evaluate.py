"""evaluate.py and rnnbench.load: re-scoring a finished run gives exactly its recorded test
metrics, whatever its best.pt holds (a bundle, {"model": weights} or bare weights); overrides
change the reader and the scoring, never the model; bad inputs are one line."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys

import pytest
import torch
from omegaconf import DictConfig

import rnnbench
from rnnbench.data.prepare import prepare
from rnnbench.errors import RnnbenchError
from rnnbench.inference import (EvaluationOverrideRefused, NotAFinishedRun, UnknownSplit, bundle, evaluate_run, is_bundle,
                                load)
from rnnbench.run import train
from rnnbench.training.model import build_model
from tests.helpers import REPO, smoke_config

pytestmark = pytest.mark.usefixtures("one_thread")

# A tiny picking run scored on its whole test split (smoke runs score part of it by default).
TINY = ["task=picking", "trainer.max_eval_batches=null", "task.reader.train_size=200", "task.reader.dev_size=40",
        "task.reader.test_size=70", "trainer.eval_batch_size=16", "trainer.mc_dropout_samples=0"]


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """(run folder, record, config) of a tiny finished picking run."""
    tmp = tmp_path_factory.mktemp("evaluate")
    cfg = smoke_config(tmp, *TINY)
    record = train(cfg, say=lambda *_: None)
    return tmp, record, cfg


def _copy_with_best(run_dir, target, content):
    shutil.copytree(run_dir, target)
    torch.save(content, target / "best.pt")
    return target


@pytest.fixture(scope="module")
def three_formats(finished):
    """The run as trained, and copies whose best.pt is a bundle and bare weights."""
    tmp, record, cfg = finished
    run_dir = tmp / "runs" / record["task"] / record["encoder"] / record["run_dir"].split("/")[-1]
    assert run_dir.is_dir()
    weights = torch.load(run_dir / "best.pt", weights_only=False)
    weights = weights.get("model", weights)
    data = prepare(cfg)
    model = build_model(cfg, data)
    model.load_state_dict(weights)
    as_bundle = _copy_with_best(run_dir, tmp / "as_bundle", bundle(model, cfg, data))
    bare = _copy_with_best(run_dir, tmp / "bare", weights)
    return {"trained": run_dir, "bundle": as_bundle, "bare": bare}, record


@pytest.mark.parametrize("form", ["trained", "bundle", "bare"])
def test_rescoring_the_test_split_gives_exactly_the_recorded_metrics(three_formats, form):
    folders, record = three_formats
    run_dir = folders[form]
    before = _digest(run_dir)
    evaluation, path = evaluate_run(run_dir, "test", [], say=lambda *_: None)
    assert evaluation["metrics"] == record["test"]  # exactly, not approximately
    assert evaluation["recorded"] == record["test"] and evaluation["examples_scored"] == record["data"]["test"] == 70
    if form == "bare":  # an older run's checkpoint: weights only, the vocabulary is rebuilt
        assert evaluation["checkpoint"].startswith("weights only")
    else:  # the training loop writes a self-contained bundle
        assert evaluation["checkpoint"] == "bundle"
    # the same predictions, line for line, as the run's own test pass
    predictions = run_dir / evaluation["predictions"]
    assert predictions.read_text() == (run_dir / "predictions.jsonl").read_text()
    assert path.parent == run_dir and path.name.startswith("eval-test-") and path.suffix == ".json"
    assert json.loads(path.read_text())["metrics"] == record["test"]
    after = _digest(run_dir)
    assert {k: v for k, v in after.items() if k in before} == before  # the run's own files are untouched
    assert set(after) - set(before) <= {path.name, predictions.name}


def test_the_bundle_is_self_contained_and_plain(three_formats):
    folders, record = three_formats
    saved = torch.load(folders["bundle"] / "best.pt", weights_only=True)  # nothing but tensors and plain Python
    assert is_bundle(saved)
    assert saved["config"]["encoder"]["name"] == "bilstm" and saved["config"]["seed"] == 1
    assert saved["vocab"]["itos"][:2] == ["<pad>", "<unk>"] and saved["vocab"]["fields"] == ["tokens"]
    assert saved["label_names"] == [str(d) for d in range(10)]


def test_other_splits_and_overrides_write_their_own_records(three_formats):
    folders, record = three_formats
    run_dir = folders["bundle"]
    dev, dev_path = evaluate_run(run_dir, "dev", [], say=lambda *_: None)
    assert dev["examples_scored"] == 40 and dev["recorded"] == record["dev"] and dev_path.name.startswith("eval-dev-")
    longer, longer_path = evaluate_run(run_dir, "test", ["task.reader.test_length=60"], say=lambda *_: None)
    assert longer["overrides"] == {"task.reader.test_length": 60} and longer["config"]["task"]["reader"]["test_length"] == 60
    lines = [json.loads(line) for line in (run_dir / longer["predictions"]).read_text().splitlines()]
    assert len(lines) == 70
    plain_path = evaluate_run(run_dir, "test", [], say=lambda *_: None)[1]
    assert longer_path != plain_path and longer_path.exists() and plain_path.exists()
    mc, mc_path = evaluate_run(run_dir, "test", ["trainer.mc_dropout_samples=3", "trainer.mc_dropout_combine=mean"], say=lambda *_: None)
    assert mc["mc_dropout_samples"] == 3 and mc["mc_dropout_combine"] == "mean" and mc_path not in (plain_path, longer_path)
    assert 0.0 <= mc["metrics"]["accuracy"] <= 1.0
    # settings that change nothing computed (threads, batch size) name the same evaluation
    same = evaluate_run(run_dir, "test", ["trainer.num_threads=1", "trainer.eval_batch_size=16"], say=lambda *_: None)[1]
    assert same == plain_path


@pytest.mark.parametrize("overrides, error, words", [
    (["encoder.hidden_size=64"], EvaluationOverrideRefused, "changes the trained model"),
    (["embedding.dim=8"], EvaluationOverrideRefused, "changes the trained model"),
    (["task.head.attention_dim=8"], EvaluationOverrideRefused, "changes the trained model"),
    (["seed=3"], EvaluationOverrideRefused, "changes the trained model"),
    (["trainer.lr=0.1"], EvaluationOverrideRefused, "not an evaluation setting"),
    (["task.reader.lenght=400"], EvaluationOverrideRefused, "did you mean task.reader.length"),
    (["task.reader.length"], EvaluationOverrideRefused, "key=value"),
    (["trainer.mc_dropout_samples=-1"], RnnbenchError, "trainer.mc_dropout_samples=-1"),
])
def test_overrides_that_change_the_model_or_do_not_apply_are_refused(three_formats, overrides, error, words):
    folders, _ = three_formats
    with pytest.raises(error) as info:
        evaluate_run(folders["bundle"], "test", overrides, say=lambda *_: None)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_not_a_finished_run_and_unknown_split_are_one_line(three_formats, tmp_path):
    folders, _ = three_formats
    with pytest.raises(UnknownSplit, match="split=valid: unknown split; use one of train, dev, test"):
        evaluate_run(folders["bundle"], "valid", [])
    with pytest.raises(NotAFinishedRun, match="no such folder"):
        evaluate_run(tmp_path / "nowhere", "test", [])
    unfinished = tmp_path / "unfinished"
    shutil.copytree(folders["bundle"], unfinished)
    (unfinished / "done").unlink()
    with pytest.raises(NotAFinishedRun, match=r"not a finished run \(no done\)"):
        evaluate_run(unfinished, "test", [])


def test_load_gives_a_model_ready_for_new_inputs(three_formats):
    folders, record = three_formats
    for form in ("bundle", "bare"):
        loaded = rnnbench.load(folders[form])
        assert isinstance(loaded.config, DictConfig) and loaded.config.encoder.name == "bilstm"
        assert not loaded.model.training and next(loaded.model.parameters()).device.type == "cpu"
        assert loaded.label_names == [str(d) for d in range(10)] and loaded.vocab.itos[:2] == ["<pad>", "<unk>"]
        # raw test records without their labels: the same predictions as the run's own test pass
        from rnnbench.data.prepare import build_reader

        test = build_reader(loaded.config.task.reader).load(None)["test"]
        unlabelled = [{"tokens": r["tokens"], "question": r["question"]} for r in test]
        predicted = loaded.predict(unlabelled, batch_size=16)
        written = [json.loads(line)["prediction"] for line in (folders[form] / "predictions.jsonl").read_text().splitlines()]
        by_id = dict(zip([json.loads(line)["id"] for line in (folders[form] / "predictions.jsonl").read_text().splitlines()], written))
        assert predicted == [by_id[r["id"]] for r in test]
    assert load is rnnbench.load
    with pytest.raises(RnnbenchError, match="lack the text field"):
        loaded.predict([{"words": ["1"], "question": 1}])


@pytest.mark.slow  # two evaluate.py processes
def test_evaluate_py_prints_one_line_errors_and_scores(three_formats):
    folders, record = three_formats
    run = [sys.executable, str(REPO / "evaluate.py")]
    bad = subprocess.run([*run, f"run={folders['bundle']}", "encoder.num_layers=2"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("error: encoder.num_layers: changes the trained model")
    assert bad.stderr.count("\n") == 1
    good = subprocess.run([*run, f"run={folders['bundle']}", "split=test"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stderr
    assert f"test: accuracy {record['test']['accuracy']:.4f} (70 examples)" in good.stdout and "wrote " in good.stdout
