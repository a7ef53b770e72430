"""The README's commands work, and every relative link in the README and docs/ resolves.

Convention for fenced blocks in README.md:

- ```bash: every line is a command a reader may type (a ``  # ...`` tail is a comment, a
  trailing backslash continues the line). Each command is either in ``RUN`` (how this test
  runs it: the README's command with test-only arguments appended, e.g. ``trainer=smoke`` and a
  temporary runs folder; the run folder placeholder ``runs/picking/bilstm/s1-<identity>``
  replaced by a smoke run's folder) or in ``NOT_RUN`` with the reason it cannot run in a test.
  A new command in a ```bash block fails ``test_every_readme_command_is_run_or_listed``
  until it is added to one of the two.
- ```python: run as one script, with the same placeholder replaced.
- ```text (or any other tag): shown, never run (file trees, output).

Links: every ``[text](target)`` in README.md, docs/*.md and the generated results/ pages that is not a URL must name a file
or folder that exists, relative to the file holding the link; an anchor (``#section``) on a
Markdown target must be the GitHub slug of one of that file's headings.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
RESULT_PAGES = sorted((REPO / "results").rglob("*.md"))  # generated pages link into docs/ too
RUN_PLACEHOLDER = "runs/picking/bilstm/s1-<identity>"

# README command -> the command this test runs ({runs}: a temporary runs folder, {run}: the folder
# of the smoke run that `python train.py` made there). Each must extend the README's command.
RUN = {
    "rnnbench --help": "rnnbench --help",
    "rnnbench list tables": "rnnbench list tables",
    "make help": "make help",
    "python train.py --help": "python train.py --help",
    "python train.py": "python train.py trainer=smoke paths.runs_dir={runs}",
    "python train.py encoder=rcrn trainer.epochs=2": "python train.py encoder=rcrn trainer.epochs=2 trainer=smoke paths.runs_dir={runs}",
    "python train.py -m encoder=bilstm,rcrn seed=1,2": "python train.py -m encoder=bilstm,rcrn seed=1,2 trainer=smoke paths.runs_dir={runs}",
    f"python evaluate.py run={RUN_PLACEHOLDER}": "python evaluate.py run={run}",
    f"python evaluate.py run={RUN_PLACEHOLDER} split=dev": "python evaluate.py run={run} split=dev",
    "python train.py task=trec encoder=3l_bilstm": "python train.py task=trec encoder=3l_bilstm trainer=smoke paths.runs_dir={runs}",
    # that it is the table's run (same identity) is tests/results/test_identity.py's
    "python train.py task=trec encoder=bilstm seed=1": "python train.py task=trec encoder=bilstm seed=1 trainer=smoke paths.runs_dir={runs}",
    "rnnbench table rcrn_table5 --plan": "rnnbench table rcrn_table5 --plan --set paths.runs_dir={runs}",
    "rnnbench compare --encoders bilstm,rcrn,3l_bilstm task=text_classification task.reader.path=examples/questions.csv --plan":
        "rnnbench compare --encoders bilstm,rcrn,3l_bilstm task=text_classification task.reader.path=examples/questions.csv --plan "
        "paths.runs_dir={runs} --out {runs}/comparison",
}
# Commands that need the real data folder (the test is marked realdata and skipped without it).
NEEDS_DATA = {"python train.py task=trec encoder=3l_bilstm", "python train.py task=trec encoder=bilstm seed=1"}
# Commands fast enough for `make test-fast` (no training, no torch import).
FAST = {"make help"}

NOT_RUN = {
    "rnnbench runs": "lists the reader's own runs folder; tests/test_cli.py lists smoke runs",
    "rnnbench runs compare <run A> <run B>": "needs two of the reader's runs; tests/test_cli.py compares two smoke runs",
    'rnnbench predict runs/trec/bilstm/s1-<identity> "Who wrote Hamlet ?"': "needs a trained TREC run; tests/test_cli.py predicts raw text with a smoke run",
    "make report": "builds the whole site; tests/site/ builds it and drives it in a headless browser",
    "make run": "trains five full epochs (minutes); its command, `python train.py`, runs here smoke-sized",
    "make test": "the whole test suite, this test included",
    "source .venv/bin/activate": "changes the reader's shell; this test already runs in the installed Python",
    "export RNNBENCH_DATA=/path/to/data": "sets the reader's shell; the realdata command gets the data folder from the test's environment",
    "make table-rcrn-5": "trains the table's missing runs (CPU hours); its `--plan` form runs here",
    "make claims": "rewrites the committed results/claims.md; tests/results/test_claims_script.py tests the script",
    "python train.py task=text_classification task.reader.path=mine.csv encoder=bilstm":
        "reads the reader's own file; tests/test_configs.py smoke-runs the task on a fixture file, tests/data/test_text_files.py tests its reader",
    "rnnbench compare --encoders bilstm,rcrn,3l_bilstm task=text_classification task.reader.path=mine.csv":
        "reads the reader's own file and trains 27 runs; tests/commands/test_compare.py runs docs/compare.md's example end to end, shrunk",
}


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced block."""
    return [(m.group(1).strip(), m.group(2)) for m in re.finditer(r"^```([^\n]*)\n(.*?)^```", text, re.M | re.S)]


def _commands(body: str) -> list[str]:
    commands, pending = [], ""
    for line in body.splitlines():
        line = pending + line.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        command = re.split(r"\s+#\s", " " + line, maxsplit=1)[0].strip()
        if command and not command.startswith("#"):
            commands.append(" ".join(command.split()))
    return commands


def readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [c for info, body in _fenced_blocks(text) if info == "bash" for c in _commands(body)]


def readme_python_blocks() -> list[str]:
    return [body for info, body in _fenced_blocks(README.read_text(encoding="utf-8")) if info == "python"]


def test_every_readme_command_is_run_or_listed():
    commands = readme_commands()
    assert commands, "no ```bash block found in README.md"
    unlisted = [c for c in commands if c not in RUN and c not in NOT_RUN]
    assert not unlisted, f"README commands neither run nor listed with a reason in tests/test_readme.py: {unlisted}"
    stale = sorted((set(RUN) | set(NOT_RUN)) - set(commands))
    assert not stale, f"tests/test_readme.py lists commands the README no longer has: {stale}"
    assert not set(RUN) & set(NOT_RUN)


@pytest.mark.parametrize("command", sorted(RUN))
def test_the_test_form_extends_the_readme_command(command):
    """The test runs the README's command itself, only with arguments appended."""
    readme = shlex.split(command.replace(RUN_PLACEHOLDER, "{run}"))
    ours = shlex.split(RUN[command])
    assert ours[: len(readme)] == readme, f"{RUN[command]!r} does not extend {command!r}"


# --- links ------------------------------------------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _links(path: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", [README, *DOCS, *RESULT_PAGES], ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    assert DOCS, "docs/ holds no Markdown page"
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no heading with that anchor)")
    assert not broken, f"broken links in {page.relative_to(REPO)}: {broken}"


def test_slug_matches_github():
    assert _slug("Kernels (`kernels/`, imported as `rnnbench.kernels`)") == "kernels-kernels-imported-as-rnnbenchkernels"
    assert _slug("What is guaranteed") == "what-is-guaranteed"


# --- running the commands ------------------------------------------------------------------------

def _run(command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    elif argv[0] == "rnnbench":  # the console script, as `python -m rnnbench` of the test's own Python
        argv[:1] = [sys.executable, "-m", "rnnbench"]
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    result = subprocess.run(argv, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """`python train.py` as the README gives it, smoke-sized, in a temporary runs folder."""
    runs = tmp_path_factory.mktemp("readme") / "runs"
    result = _run(RUN["python train.py"].format(runs=runs), env={"RNNBENCH_RUNS": str(runs)})
    (folder,) = (runs / "picking" / "bilstm").glob("s1-*")
    assert (folder / "done").exists() and (folder / "record.json").exists()
    return folder, result


def _params():
    for command in sorted(RUN):
        marks = []
        if command not in FAST:
            marks.append(pytest.mark.slow)
        if command in NEEDS_DATA:
            marks.append(pytest.mark.realdata)
        yield pytest.param(command, marks=marks, id=command)


@pytest.mark.parametrize("command", list(_params()))
def test_readme_command_runs(command, request, tmp_path):
    runs = tmp_path / "runs"
    env = {"RNNBENCH_RUNS": str(runs)}
    if command in NEEDS_DATA:
        env["RNNBENCH_DATA"] = str(request.getfixturevalue("real_data"))
    if command == "python train.py":
        folder, result = request.getfixturevalue("smoke_run")
        assert f"run folder {folder}" in result.stdout + result.stderr
        return
    run = request.getfixturevalue("smoke_run")[0] if "{run}" in RUN[command] else ""
    result = _run(RUN[command].format(runs=runs, run=run), env=env)
    output = result.stdout + result.stderr
    if " -m " in command:
        assert "4 jobs: 4 ran" in output, output[-2000:]
    elif command.startswith("rnnbench compare"):
        assert "27 run(s) to run" in output and not (runs / "comparison").exists(), output[-2000:]
    elif command.startswith("python evaluate.py"):
        assert "recorded by the run" in output and "wrote" in output, output[-2000:]
    elif command.startswith("python train.py") and "--help" not in command:
        assert "test " in output and "run folder" in output, output[-2000:]


@pytest.mark.slow
def test_readme_python_block_runs(smoke_run, tmp_path):
    blocks = readme_python_blocks()
    assert blocks, "README.md has no ```python block"
    folder = smoke_run[0]
    for block in blocks:
        script = tmp_path / "block.py"
        script.write_text(block.replace(RUN_PLACEHOLDER, str(folder)), encoding="utf-8")
        result = _run(f"python {script}")
        assert result.stdout.strip(), "the README's Python block printed nothing"


def test_the_readmes_verdict_table_is_the_ledgers_headline():
    """The README's "What it has found so far" counts are results/claims.md's, kind by kind."""
    import re as _re

    headline = next(line for line in (REPO / "results" / "claims.md").read_text().splitlines() if line.startswith("**"))
    total = int(_re.search(r"\*\*(\d+) claims", headline).group(1))

    def counted(part: str) -> int:
        found = _re.search(part + r"([^;]*?)(?:;|\.\*\*)", headline)
        return sum(int(n) for n in _re.findall(r"(\d+)", found.group(1))) if found else 0

    about, ours = counted(r"accuracy, about the paper: "), counted(r"accuracy, in our setting: ")
    cost = counted(r"cost and size: ")
    single = {kind: int(n) for kind, n in _re.findall(r"(pipeline check|not evidence|not tested|not run|data missing|"
                                                      r"depends on an unspecified choice|depends on the setting) (\d+)", headline)}
    readme = (REPO / "README.md").read_text()
    section = readme.split("## What it has found so far", 1)[1].split("\n## ", 1)[0]
    cells_of = {cells[0]: cells for cells in ([c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
                                              if line.startswith("| ") and not line.startswith("| verdict"))}
    rows = {kind: cells[1] for kind, cells in cells_of.items()}
    # the split by verdict, where the README gives one, is the headline's too
    for kind, part in (("accuracy, in our setting", r"accuracy, in our setting: "), ("cost and size", r"cost and size: ")):
        split = _re.search(part + r"([^;]*?)(?:;|\.\*\*)", headline)
        for verdict_count in (split.group(1).split(", ") if split else []):
            verdict, count = verdict_count.rsplit(" ", 1)
            assert _re.search(rf"{verdict} {count}\b", cells_of[kind][2]), (kind, verdict_count, cells_of[kind][2])
    assert f"Of {total} claims today" in section
    assert rows["accuracy, about the paper"] == str(about) and rows["accuracy, in our setting"] == str(ours)
    assert rows["pipeline check"] == str(single.get("pipeline check", 0)) and rows["not evidence"] == str(single.get("not evidence", 0))
    assert rows["not tested"] == str(single.get("not tested", 0)) and rows["cost and size"] == str(cost)
    assert rows["not run / data missing"] == f"{single.get('not run', 0)} / {single.get('data missing', 0)}"
    for kind in ("depends on an unspecified choice", "depends on the setting"):  # a row where the ledger has the kind
        assert rows.get(kind, "0") == str(single.get(kind, 0)), kind
