"""Run records on disk (src/rnnbench/results/records.py), directly: atomic writes, strict JSON,
the index's append and repair, damaged records. (Full-disk writes, concurrent index writers and
the same guarantees through whole runs are in tests/test_reliability.py and tests/training/test_sweep.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnnbench.results import records
from rnnbench.results.record_format import Record
from rnnbench.results.records import (append_index, ensure_indexed, indexed_identities, read_record, write_json_atomic,
                                      write_lines_atomic)


def _refuse(constant):
    raise ValueError(f"not strict JSON: {constant}")


def _finished(run_dir: Path, record: dict) -> Path:
    run_dir.mkdir(parents=True)
    write_json_atomic(run_dir / records.RECORD, record)
    (run_dir / records.DONE).touch()
    return run_dir


RECORD = {"identity": "abc123", "run_dir": "runs/x", "task": "trec", "encoder": "bilstm", "seed": 1,
          "test": {"accuracy": 0.9}, "dev": {"accuracy": 0.8}, "history": [{"epoch": 1}]}


def test_a_failed_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "record.json"
    write_json_atomic(path, {"version": 1})

    def half_then_fail(self, text, *args, **kwargs):
        with open(self, "w") as handle:
            handle.write(text[: len(text) // 2])
        raise OSError("the process was interrupted mid-write")

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    with pytest.raises(OSError, match="mid-write"):
        write_json_atomic(path, {"version": 2, "padding": "x" * 1000})
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"version": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_lines_are_strict_json_one_per_row(tmp_path):
    path = tmp_path / "predictions.jsonl"
    write_lines_atomic(path, [{"id": 1, "score": float("nan")}, {"id": 2, "score": float("-inf")}, {"id": 3, "score": 0.5}])
    rows = [json.loads(line, parse_constant=_refuse) for line in path.read_text().splitlines()]
    assert rows == [{"id": 1, "score": None}, {"id": 2, "score": None}, {"id": 3, "score": 0.5}]


def test_the_index_holds_the_index_keys_and_skips_a_torn_line(tmp_path):
    index = tmp_path / "runs" / "records.jsonl"
    append_index(index, RECORD)
    (row,) = [json.loads(line) for line in index.read_text().splitlines()]
    assert row == {k: RECORD.get(k) for k in records.INDEX_KEYS} and "history" not in row
    with open(index, "a") as handle:
        handle.write('{"identity": "torn-wri')  # a writer killed mid-line
    assert indexed_identities(index) == {"abc123"}
    assert indexed_identities(tmp_path / "absent.jsonl") == set()


def test_ensure_indexed_appends_a_missing_run_once(tmp_path):
    index = tmp_path / "records.jsonl"
    assert ensure_indexed(index, RECORD) is True
    assert ensure_indexed(index, RECORD) is False
    assert ensure_indexed(index, {**RECORD, "identity": "def456"}) is True
    assert [json.loads(line)["identity"] for line in index.read_text().splitlines()] == ["abc123", "def456"]


def test_read_record_returns_a_finished_run_and_repairs_the_index(tmp_path):
    run_dir = _finished(tmp_path / "run", RECORD)
    index, said = tmp_path / "records.jsonl", []
    current = Record.from_json(RECORD).as_dict()  # read in the current shape: keys it lacks take their defaults
    assert read_record(run_dir, index=index, say=said.append) == current
    assert indexed_identities(index) == {"abc123"} and len(said) == 1 and "missing from" in said[0]
    assert read_record(run_dir, index=index, say=said.append) == current and len(said) == 1  # added once
    (run_dir / records.DONE).unlink()
    assert read_record(run_dir) is None  # a record without the done marker is not a finished run


@pytest.mark.parametrize("content", ["", '{"identity": "abc', "[1, 2]", '{"test": {}}'],
                         ids=["empty", "truncated", "not-a-dict", "no-identity"])
def test_a_damaged_record_is_moved_aside_and_the_run_is_no_longer_done(tmp_path, content):
    run_dir = _finished(tmp_path / "run", RECORD)
    (run_dir / records.RECORD).write_text(content)
    said = []
    assert read_record(run_dir, say=said.append) is None
    assert len(said) == 1 and said[0].startswith("warning:") and "record.json" in said[0] and "\n" not in said[0]
    assert not (run_dir / records.DONE).exists() and not (run_dir / records.RECORD).exists()
    (aside,) = run_dir.glob("record.json.damaged-*")
    assert aside.read_text() == content


def test_a_checkout_copied_without_git_is_named_by_rnnbench_commit(tmp_path, monkeypatch):
    # a GPU machine gets the working tree without .git: the commit comes from whoever copied it
    from rnnbench.results.run_record import git_commit

    monkeypatch.delenv("RNNBENCH_COMMIT", raising=False)
    assert git_commit(tmp_path) == "unknown"
    monkeypatch.setenv("RNNBENCH_COMMIT", "a11a8f0")
    assert git_commit(tmp_path) == "a11a8f0"
    # inside a repository git's answer wins: the variable cannot relabel code that git can name
    assert git_commit(Path(__file__).parent) not in ("a11a8f0", "unknown")


def test_only_changed_code_makes_a_commit_dirty(tmp_path):
    """Results rewritten mid-campaign are outputs; a changed source file is code that no commit names."""
    import subprocess

    from rnnbench.results.run_record import git_commit

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "results").mkdir(), (tmp_path / "src").mkdir()
    (tmp_path / "results" / "t.csv").write_text("a\n"), (tmp_path / "src" / "m.py").write_text("x = 1\n")
    git("init", "-q"), git("add", "."), git("commit", "-qm", "c")
    head = git_commit(tmp_path / "src")
    assert len(head) == 40
    (tmp_path / "results" / "t.csv").write_text("b\n")
    assert git_commit(tmp_path / "src") == head
    (tmp_path / "src" / "m.py").write_text("x = 2\n")
    assert git_commit(tmp_path / "src") == head + "-dirty"
