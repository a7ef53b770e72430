"""rnnbench compare: the worked example of docs/compare.md run end to end through the command (shrunk:
tiny encoders, one rate, 3 seeds, 4 epochs), its table, evidence and report page; --plan runs
nothing; every bad input is one line before anything runs."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from rnnbench.commands import main
from rnnbench.results import comparison as reading
from rnnbench.results import evidence
from tests.helpers import REPO

pytestmark = pytest.mark.usefixtures("one_thread")
DOCS = REPO / "docs" / "compare.md"
EXAMPLE = ["task=text_classification", "task.reader.path=examples/questions.csv"]
# The example shrunk to run in seconds: every encoder and run smaller, the same command.
TINY = ["embedding=random", "embedding.dim=16", "encoder.hidden_size=16", "task.head.hidden=16", "trainer.epochs=4",
        "trainer.progress=false"]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(["compare", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def at_repo(monkeypatch, tmp_path):
    """The repository as the current folder (examples/questions.csv is read from there), and a
    temporary runs and cache folder."""
    monkeypatch.chdir(REPO)
    return [f"paths.runs_dir={tmp_path / 'runs'}", f"paths.cache_dir={tmp_path / 'cache'}"]


def test_the_docs_example_is_the_one_run_here():
    commands = re.findall(r"^rnnbench compare .*$", DOCS.read_text().replace("\\\n", " "), re.M)
    example = [c for c in commands if "examples/questions.csv" in c]
    assert len(example) >= 2 and all(all(o in c.split() for o in EXAMPLE) for c in example)


def test_the_example_file_is_what_its_generator_writes(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_questions", REPO / "examples" / "make_questions.py")  # a script, not a module
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.write(tmp_path / "questions.csv")
    assert written.read_bytes() == (REPO / "examples" / "questions.csv").read_bytes()
    with open(written, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == module.SIZE and {r["label"] for r in rows} == set(module.TEMPLATES)


@pytest.mark.slow  # six tiny training runs
def test_the_worked_example_runs_end_to_end(at_repo, tmp_path, capsys):
    out = tmp_path / "comparisons" / "questions"
    argv = ["--encoders", "bilstm,rcrn", "--seeds", "3", "--lr-grid", "1e-2", "--out", str(out), *EXAMPLE, *TINY, *at_repo]
    code, stdout, stderr = run(argv, capsys)
    assert code == 0, stderr[-2000:]
    name = "text_classification_questions"
    md, csv_path, items_path = (out / f"{name}{s}" for s in (".md", ".csv", ".items.csv.xz"))
    assert md.exists() and csv_path.exists() and items_path.exists() and (out / "plots" / f"{name}.png").exists()

    rows = evidence.read_csv(csv_path)
    reported = {(r["encoder"], r["seed"]): r["test"] for r in rows if r["reported"] == "yes"}
    assert sorted(reported) == [(e, s) for e in ("bilstm", "rcrn") for s in (1, 2, 3)]  # every encoder on every paired seed
    items = evidence.read_items(items_path)
    assert {(i["model"], i["seed"]) for i in items} == set(reported)

    # The printed difference is the rows' (the mean accuracy difference over the paired seeds).
    line = next(l for l in stdout.splitlines() if l.strip().startswith("rcrn − bilstm:"))
    printed = float(re.search(r": ([+-]\d+\.\d+) \[", line).group(1))
    difference = sum(reported[("rcrn", s)] - reported[("bilstm", s)] for s in (1, 2, 3)) / 3
    assert abs(printed - difference) < 0.006
    verdict = line.split(", 3 paired seeds: ")[1]
    assert verdict.split(";")[0].split(" (")[0] in {*reading.VERDICTS, "rcrn better than bilstm", "rcrn worse than bilstm"}
    # On 3 seeds nothing is decided either way: it says why, or what would decide it.
    assert "inconclusive" in verdict or "withheld" in verdict or "not evidence" in verdict
    text = md.read_text()
    assert "## Against `bilstm`" in text and "p, Holm over 1 pair(s)" in text and f"wrote the table {md}" in stdout

    # The report reads it: a page with the table and the verdict, listed with its baseline.
    from rnnbench.site import comparisons as site

    (found,) = site.find(out.parent)
    assert found.name == name and found.baseline == "bilstm" and found.verdicts[0][0] == "rcrn"
    site.write([found], tmp_path / "site")
    page = (tmp_path / "site" / "comparisons" / "questions" / "index.html").read_text()
    assert "Against <code>bilstm</code>" in page and f'href="{name}.csv"' in page
    assert (tmp_path / "site" / "comparisons" / "questions" / f"{name}.csv").exists()

    # Again: nothing to train, the same table; --plan finds every run finished.
    before = md.read_bytes()
    code, stdout, _ = run(argv, capsys)
    assert code == 0 and "== compare_" not in stdout and md.read_bytes() == before
    code, stdout, _ = run([*argv, "--plan"], capsys)
    assert code == 0 and "0 run(s) to run" in stdout and re.search(r"bilstm\s+3/3", stdout)


def test_plan_prices_the_runs_and_runs_nothing(at_repo, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, stderr = run(["--encoders", "bilstm,rcrn,3l_bilstm", "--plan", "--out", str(out), *EXAMPLE, *at_repo], capsys)
    assert code == 0, stderr
    assert "compare text_classification_questions: bilstm, rcrn, 3l_bilstm against bilstm, seeds 1-5" in stdout
    assert "learning rates 0.001, 0.002, 0.0005" in stdout  # the task's rate, twice it and half it
    assert re.search(r"rcrn\s+0/9\s+9", stdout) and "27 run(s) to run" in stdout
    assert not out.exists() and not (tmp_path / "runs").exists()


def _data(tmp_path: Path, train: str, dev: str | None = None) -> list[str]:
    (tmp_path / "train.csv").write_text(train)
    overrides = ["task=text_classification", f"task.reader.path={tmp_path / 'train.csv'}"]
    if dev is not None:
        (tmp_path / "dev.csv").write_text(dev)
        overrides.append(f"task.reader.dev={tmp_path / 'dev.csv'}")
    return overrides


GOOD = "text,label\n" + "".join(f"question {i} here,{'ab'[i % 2]}\n" for i in range(40))


@pytest.mark.parametrize("argv, message", [
    (["--encoders", "bilstm,lsmt", *EXAMPLE], "no encoder 'lsmt'; the encoders are 2l_bilstm, "),
    (["--encoders", "bilstm", *EXAMPLE], "a comparison needs at least 2 encoders, got 1"),
    (["--encoders", "bilstm,bilstm", *EXAMPLE], "a comparison needs at least 2 encoders, got 1"),
    ([*EXAMPLE], "a comparison needs at least 2 encoders, got 0"),
    (["--encoders", "bilstm,rcrn", "--baseline", "lstm1", *EXAMPLE], "--baseline lstm1: not among --encoders (bilstm, rcrn)"),
    (["--encoders", "bilstm,rcrn", "--lr-grid", "1e-3,fast", *EXAMPLE], "--lr-grid: 'fast' is not a learning rate"),
    (["--encoders", "bilstm,rcrn", "--lr-grid", "1e-3,-1e-3", *EXAMPLE], "--lr-grid: '-1e-3' is not a learning rate"),
    (["--encoders", "bilstm,rcrn", "--seeds", "1", *EXAMPLE], "--seeds 1: give how many paired seeds to run, at least 2"),
    (["--encoders", "bilstm,rcrn", *EXAMPLE, "encoder=rcrn"], "encoder=rcrn: the comparison sets encoder itself; use --encoders"),
    (["--encoders", "bilstm,rcrn", *EXAMPLE, "trainer.lr=0.1"], "use --lr-grid"),
    (["--encoders", "bilstm,rcrn", "--name", "rcrn_table5", *EXAMPLE], "that is a paper table's name"),
    (["--encoders", "bilstm,rcrn", "task=text_classification", "task.reader.path=no/such/file.csv"],
     "task.reader.path: file 'no/such/file.csv' not found (tried "),
])
def test_a_bad_input_is_one_line_and_nothing_runs(argv, message, at_repo, tmp_path, capsys):
    code, stdout, stderr = run([*argv, "--out", str(tmp_path / "out"), *at_repo], capsys)
    assert code == 2 and stderr.count("\n") == 1 and stderr.startswith("error: ") and message in stderr, stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists() and "==" not in stdout


@pytest.mark.parametrize("train, dev, message", [
    (GOOD + '"an unclosed quote,a\n', None, "not a valid comma-separated row"),  # a bad file
    ("question,label\nwho,a\n", None, "no field 'text'"),  # a missing field
    (GOOD, "text,label\nwhere is it,c\n", "label 'c' does not occur in the training file"),  # a label unseen in training
])
def test_bad_data_is_one_line_naming_the_file_and_line_before_any_run(train, dev, message, at_repo, tmp_path, capsys):
    overrides = _data(tmp_path, train, dev)
    code, _, stderr = run(["--encoders", "bilstm,rcrn", "--out", str(tmp_path / "out"), *overrides, *at_repo], capsys)
    assert code == 2 and stderr.count("\n") == 1 and message in stderr and ".csv:" in stderr, stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()
