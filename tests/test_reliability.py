"""Reliability: every bad input is one clear line before any work; no wrong result is ever
marked done; no lost work, no leftovers."""
from __future__ import annotations

import gzip
import io
import json
import multiprocessing
import os
from pathlib import Path

import pytest
import torch

from rnnbench.errors import (ConfigError, DamagedFileError, DataFormatError, DiskFullError, EmbeddingError,
                             OutputNotWritable, SmokeRunRefused, TrainingDiverged)
from rnnbench.progress import progress_bar
from rnnbench.results.identity import run_dir as run_dir_of
from rnnbench.results.records import read_record, write_json_atomic
from rnnbench.run import train
from rnnbench.training import checkpoint
from tests.helpers import run_train_py, smoke_config

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = ["task.reader.train_size=64", "task.reader.dev_size=32", "task.reader.test_size=32", "encoder.hidden_size=8"]


def _quiet(_):
    pass


def _glove(path: Path, words: list[str], dim: int) -> Path:
    lines = [f"{w} " + " ".join(f"{0.1 * (i + j):.3f}" for j in range(dim)) for i, w in enumerate(words)]
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    return path


def _gz(path: Path, text: str) -> Path:
    path.write_bytes(gzip.compress(text.encode()))
    return path


def _truncate(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _imdb(root: Path, test: str) -> None:
    """A tiny packed IMDb whose test file is 'truncated' or 'html'."""
    (root / "imdb").mkdir(parents=True)
    rows = [json.dumps({"id": str(i), "label": ("neg", "pos")[i % 2], "text": f"a film {i} was fine"}) for i in range(12)]
    _gz(root / "imdb" / "imdb_train.jsonl.gz", "\n".join(rows))
    test_file = root / "imdb" / "imdb_test.jsonl.gz"
    if test == "truncated":
        _truncate(_gz(test_file, "\n".join(rows * 50)))
    else:
        test_file.write_text("<!DOCTYPE html><html><body>Rate limited</body></html>")


def _trec(root: Path) -> None:
    """A tiny TREC whose test file is empty."""
    (root / "trec").mkdir(parents=True)
    labels = ["DESC:manner", "HUM:ind", "LOC:city", "NUM:date", "ENTY:animal", "ABBR:exp"]
    (root / "trec" / "train_5500.label").write_text("".join(f"{labels[i % 6]} what is question {i} ?\n" for i in range(40)))
    (root / "trec" / "TREC_10.label").write_text("")


def _case(name: str, tmp_path: Path, monkeypatch) -> tuple[list[str], type, str]:
    """(overrides, expected error class, text the one line must hold) for one bad input."""
    glove = ["embedding=glove_6b_50d", "embedding.dim=4", f"paths.cache_dir={tmp_path / 'cache'}"]
    data = tmp_path / "data"
    if name == "epochs=0":
        return ["trainer.epochs=0"], ConfigError, "trainer.epochs=0"
    if name == "batch_size=0":
        return ["trainer.batch_size=0"], ConfigError, "trainer.batch_size=0"
    if name == "max_batches=0":
        return ["trainer.max_batches=0"], ConfigError, "trainer.max_batches=0"
    if name == "unknown +key":
        return ["+trainer.epoch=3"], ConfigError, "trainer.epoch"
    if name == "select_metric typo":
        return ["task.select_metric=acc"], ConfigError, "task.select_metric=acc"
    if name == "cuda without CUDA":
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        return ["trainer.device=cuda"], ConfigError, "trainer.device=cuda"
    if name == "runs folder not writable":
        (tmp_path / "a_file").write_text("")
        return [f"paths.runs_dir={tmp_path / 'a_file' / 'runs'}"], OutputNotWritable, "a_file"
    if name == "lr diverges":
        return ["trainer.lr=1e30"], TrainingDiverged, "trainer.lr=1e+30"
    if name == "embedding of another width":
        return [*glove, f"embedding.path={_glove(tmp_path / 'g8.txt', [str(d) for d in range(10)], 8)}"], DataFormatError, "g8.txt:1: holds 8-dimensional vectors but embedding.dim=4: set embedding.dim=8"
    if name == "empty embedding file":
        return [*glove, f"embedding.path={_glove(tmp_path / 'empty.txt', [], 4)}"], EmbeddingError, "empty.txt holds no vectors"
    if name == "embedding coverage too low":
        return [*glove, f"embedding.path={_glove(tmp_path / 'other.txt', ['cat', 'dog'], 4)}"], EmbeddingError, "embedding.min_coverage=0.5"
    if name == "truncated .gz embedding":
        path = _truncate(_gz(tmp_path / "g.txt.gz", "\n".join(f"{d} " + " ".join(["0.5"] * 4) for d in range(10)) * 400))
        return [*glove, f"embedding.path={path}"], DataFormatError, "g.txt.gz: is truncated"
    if name in ("truncated .gz dataset", "HTML saved as .gz"):
        _imdb(data, "truncated" if name.startswith("truncated") else "html")
        monkeypatch.setenv("RNNBENCH_DATA", str(data))
        expected = "imdb_test.jsonl.gz: is truncated" if name.startswith("truncated") else "imdb_test.jsonl.gz: is not gzip data (it looks like an HTML page"
        return ["task=imdb", "embedding=random", "task.reader.dev_size=2", f"paths.cache_dir={tmp_path / 'cache'}"], DataFormatError, expected
    if name == "empty split":
        _trec(data)
        monkeypatch.setenv("RNNBENCH_DATA", str(data))
        return ["task=trec", "embedding=random", f"paths.cache_dir={tmp_path / 'cache'}"], ConfigError, "TREC_10.label is empty"
    raise AssertionError(name)


CASES = ["epochs=0", "batch_size=0", "max_batches=0", "unknown +key", "select_metric typo", "cuda without CUDA",
         "runs folder not writable", "lr diverges", "embedding of another width", "empty embedding file",
         "embedding coverage too low", "truncated .gz embedding", "truncated .gz dataset", "HTML saved as .gz", "empty split"]


@pytest.mark.parametrize("name", CASES)
def test_bad_input_is_one_line_and_leaves_nothing(name, tmp_path, monkeypatch):
    overrides, error, text = _case(name, tmp_path, monkeypatch)
    other_task = any(o.startswith("task=") for o in overrides)  # TINY sizes the picking task
    cfg = smoke_config(tmp_path, *([] if other_task else TINY), *overrides)
    with pytest.raises(error) as caught:
        train(cfg, say=_quiet)
    message = str(caught.value)
    assert "\n" not in message and text in message, message
    runs = tmp_path / "runs"
    left = [p for p in runs.rglob("*") if p.name != "runs"] if runs.exists() else []
    assert left == [], left  # nothing marked done, no run folder holding only its lock, no temporary file


@pytest.mark.parametrize("args, text", [
    (["trainer.optimizer=adamw"], "adamw"),
    (["+trainer.epoch=3"], "trainer.epoch"),
    (["encoder=no_such_encoder"], "no_such_encoder"),
    (["trainer.epochs=0"], "trainer.epochs=0"),
])
def test_cli_bad_input_exits_2_with_one_line(args, text, tmp_path):
    result = run_train_py([*args, "trainer=smoke", f"paths.runs_dir={tmp_path}"])
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], result.stderr
    assert not list(tmp_path.glob("*/*/*/done"))


def test_embedding_coverage_can_be_allowed_explicitly(tmp_path):
    path = _glove(tmp_path / "other.txt", ["cat", "0"], 4)
    record = train(smoke_config(tmp_path, *TINY, "embedding=glove_6b_50d", "embedding.dim=4", f"embedding.path={path}",
                                "embedding.min_coverage=0", f"paths.cache_dir={tmp_path / 'cache'}"), say=_quiet)
    assert record["data"]["found_in_embeddings"] == 1


def test_smoke_run_is_marked_and_refused_by_tables(tmp_path):
    smoke = train(smoke_config(tmp_path, *TINY, "task.reader.test_size=64"), say=_quiet)  # 2 eval batches of 16: 32 of 64
    assert smoke["smoke"] is True and smoke["test_examples_scored"] == 32 and smoke["data"]["test"] == 64
    with pytest.raises(SmokeRunRefused, match="32 of 64"):
        read_record(Path(smoke["run_dir"]))
    full = train(smoke_config(tmp_path, *TINY, "trainer.max_eval_batches=null"), say=_quiet)
    assert full["smoke"] is False and full["test_examples_scored"] == full["data"]["test"] == 32
    assert read_record(Path(full["run_dir"]))["identity"] == full["identity"]


def test_record_json_is_strict(tmp_path):
    write_json_atomic(tmp_path / "r.json", {"a": float("nan"), "b": [float("inf"), 1.5]})

    def refuse(constant):
        raise ValueError(constant)

    assert json.loads((tmp_path / "r.json").read_text(), parse_constant=refuse) == {"a": None, "b": [None, 1.5]}


def test_finished_run_missing_from_index_is_added_once(tmp_path):
    cfg = smoke_config(tmp_path, *TINY)
    record = train(cfg, say=_quiet)
    index = tmp_path / "runs" / "records.jsonl"
    index.write_text("")  # as if the process died between `done` and the append
    said = []
    assert train(cfg, say=said.append)["identity"] == record["identity"]
    assert [json.loads(line)["identity"] for line in index.read_text().splitlines()] == [record["identity"]]
    assert any("missing from" in s for s in said)
    train(cfg, say=_quiet)
    assert len(index.read_text().splitlines()) == 1


def test_damaged_checkpoint_is_moved_aside_and_the_run_restarts(tmp_path):
    cfg = smoke_config(tmp_path, *TINY)
    clean = train(smoke_config(tmp_path / "clean", *TINY), say=_quiet)
    run_dir = run_dir_of(cfg)
    run_dir.mkdir(parents=True)
    (run_dir / checkpoint.LAST).write_bytes(b"PK\x03\x04 truncated")
    said = []
    record = train(cfg, say=said.append)
    warning = [s for s in said if s.startswith("warning:")]
    assert len(warning) == 1 and "last.pt" in warning[0] and "restarting" in warning[0]
    assert len(list(run_dir.glob("last.pt.damaged-*"))) == 1
    assert record["test"] == clean["test"] and record["dev"] == clean["dev"]


def test_damaged_record_is_moved_aside_and_the_run_retested(tmp_path):
    cfg = smoke_config(tmp_path, *TINY)
    first = train(cfg, say=_quiet)
    run_dir = Path(first["run_dir"])
    (run_dir / "record.json").write_text("")
    said = []
    again = train(cfg, say=said.append)
    assert any(s.startswith("warning:") and "record.json" in s for s in said)
    assert any("resuming" in s for s in said)  # from last.pt: only the test pass is redone
    assert again["test"] == first["test"] and (run_dir / "done").exists()
    assert len(list(run_dir.glob("record.json.damaged-*"))) == 1
    assert len((tmp_path / "runs" / "records.jsonl").read_text().splitlines()) == 1


def test_full_disk_removes_the_partial_file_and_says_so(tmp_path):
    target = tmp_path / "last.pt"
    tmp = tmp_path / f".last.pt.{os.getpid()}.tmp"
    tmp.symlink_to("/dev/full")  # every write there fails with ENOSPC
    with pytest.raises(DiskFullError, match="disk full") as caught:
        checkpoint.save(target, model={"w": torch.zeros(1000)})
    assert "\n" not in str(caught.value)
    assert not tmp.exists() and not tmp.is_symlink() and not target.exists()
    record = tmp_path / "record.json"
    (tmp_path / f".record.json.{os.getpid()}.tmp").symlink_to("/dev/full")
    with pytest.raises(DiskFullError):
        write_json_atomic(record, {"x": "y" * 100_000})
    assert list(tmp_path.iterdir()) == []


def test_checkpoint_loads_with_map_location(tmp_path):
    path = tmp_path / "last.pt"
    checkpoint.save(path, model={"w": torch.arange(3.0)}, rng=checkpoint.rng_state())
    loaded = checkpoint.load(path, map_location="cpu")
    assert loaded["model"]["w"].device.type == "cpu" and torch.equal(loaded["model"]["w"], torch.arange(3.0))
    checkpoint.set_rng_state(loaded["rng"])
    (tmp_path / "bad.pt").write_bytes(b"")
    with pytest.raises(DamagedFileError, match="bad.pt"):
        checkpoint.load(tmp_path / "bad.pt", map_location="cpu")


def test_progress_writes_a_line_per_five_percent_when_not_a_terminal():
    out = io.StringIO()
    bar = progress_bar(range(1000), desc="epoch 1/1", stream=out, leave=False)
    for _ in bar:
        bar.set_postfix(loss="0.5")
    lines = out.getvalue().splitlines()
    assert 20 <= len(lines) <= 23 and "\r" not in out.getvalue() and lines[-1].startswith("epoch 1/1: 100%")


def _load_trec(args) -> int:
    data_dir, cache_dir = args
    from rnnbench.data.prepare import load_splits
    from rnnbench.data.trec import TrecReader

    return sum(len(v) for v in load_splits(TrecReader(), data_dir, cache_dir).values())


def test_concurrent_cold_cache_builds_all_succeed(tmp_path, real_data):
    with multiprocessing.get_context("fork").Pool(3) as pool:
        sizes = pool.map(_load_trec, [(str(real_data), str(tmp_path))] * 3)
    assert len(set(sizes)) == 1 and sizes[0] > 5000
    assert not [p for p in (tmp_path / "records").iterdir() if p.name.endswith(".tmp")]


def test_nan_loss_is_never_marked_done(tmp_path, real_data, monkeypatch):
    """The issue's case: TREC at lr 1e30 (NaN from the start) stops with one line."""
    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    with pytest.raises(TrainingDiverged, match="nothing was recorded"):
        train(smoke_config(tmp_path, "task=trec", "trainer.lr=1e30", "embedding=random"), say=_quiet)
    assert not list((tmp_path / "runs").rglob("done"))


def test_a_file_in_the_wrong_encoding_names_its_file_and_line(tmp_path):
    from rnnbench.data.base import read_lines

    path = tmp_path / "data.txt"
    path.write_bytes(b"fine line\nbad \xff byte\n")
    with pytest.raises(DataFormatError, match=r"data.txt:2: byte 0xff is not valid utf-8"):
        read_lines(path)


def test_a_damaged_embedding_cache_is_rebuilt(tmp_path, capsys):
    from rnnbench.data.embeddings import read_glove

    glove = _glove(tmp_path / "g.txt", ["cat", "dog"], 4)
    words, vectors = read_glove(glove, 4, tmp_path / "cache")
    (cached,) = (tmp_path / "cache" / "embeddings").glob("*.pt")
    cached.write_bytes(b"not a torch file")
    again, vectors_again = read_glove(glove, 4, tmp_path / "cache")
    assert again == words and torch.equal(vectors, vectors_again)
    assert "is damaged" in capsys.readouterr().out


def test_without_the_datasets_package_the_files_are_read_uncached(tmp_path, real_data, monkeypatch):
    """The Arrow cache is a speed-up only: a machine without ``datasets`` (a bare GPU machine)
    reads the same records from the files, and writes no cache."""
    import builtins

    from rnnbench.data.prepare import load_splits
    from rnnbench.data.trec import TrecReader

    cached = load_splits(TrecReader(), real_data, tmp_path / "with")
    real_import = builtins.__import__

    def no_datasets(name, *args, **kwargs):
        if name == "datasets":
            raise ImportError("No module named 'datasets'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_datasets)
    uncached = load_splits(TrecReader(), real_data, tmp_path / "without")
    assert uncached == cached
    assert not (tmp_path / "without").exists()
