"""Nothing stale: every committed table, its CSV-derived plots, its parameter counts and the claims
ledger are exactly what the committed evidence gives today.

Each table is regenerated as its Makefile target makes it (the target's last ``make_table.py``
command, with ``--no-run``, and its ``fhe_figures.py`` plots), from a copy of its committed evidence
(``<table>.csv``, ``.items.csv.gz``, ``.parameters.csv``, ``.superseded.csv``) into a temporary
folder, with no run folders; every file written there must equal the committed one byte for byte,
and a file the committed results do not have is one ``make_table`` would leave untracked. RCRN
Table 10 (``rcrn_table10*``) is not here: ``scripts/bench_cost.py`` writes it while it measures,
and it has no render-from-evidence mode; its claims are decided in the ledger, which is checked.
"""
from __future__ import annotations

import difflib
import re
import shutil
from pathlib import Path

import pytest

from rnnbench.experiments import experiments_of
from rnnbench.results import ledger
from tests.helpers import load_script

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"
EVIDENCE = (".csv", ".items.csv.gz", ".parameters.csv", ".superseded.csv")


def makefile_commands() -> dict[str, tuple[list[str], list[list[str]]]]:
    """Table -> (the experiments of its target's last make_table.py command, the argument lists of
    its fhe_figures.py commands), for every ``table-*`` target of the Makefile."""
    text = (REPO / "Makefile").read_text()
    variables = dict(re.findall(r"^([A-Z0-9_]+)\s*:?=\s*(.*)$", text, re.M))
    expand = lambda line: re.sub(r"\$\(([A-Z0-9_]+)\)", lambda m: variables.get(m.group(1), m.group(0)), line)  # noqa: E731
    tables: dict[str, tuple[list[str], list[list[str]]]] = {}
    for recipe in re.findall(r"^table-[\w-]+:.*\n((?:\t.*\n)+)", text, re.M):
        lines = [expand(line.strip()) for line in recipe.splitlines()]
        figures = [line.split("scripts/fhe_figures.py", 1)[1].split() for line in lines if "scripts/fhe_figures.py" in line]
        last: dict[str, list[str]] = {}  # a target may make several tables (table-synthetic): each one's last command
        for line in lines:
            if "scripts/make_table.py" in line:
                experiments = [a for a in line.split("scripts/make_table.py", 1)[1].split() if not a.startswith("-")]
                table = next((t for t in (_table(e) for e in experiments) if t), None)
                if table:
                    last[table] = experiments
        for table, experiments in last.items():
            if table not in tables:  # table-X-small ends with table-X's whole-table command: the first target serves
                tables[table] = (experiments, figures if len(last) == 1 else [])
    return tables


def _table(experiment: str) -> str | None:
    from rnnbench.experiments import _table_of
    from rnnbench.compose import CONF_DIR

    return _table_of(CONF_DIR / "experiment" / f"{experiment}.yaml")


COMMITTED = sorted(t for t in makefile_commands() if (RESULTS / f"{t}.md").exists())


def test_every_committed_table_has_a_makefile_target_that_regenerates_it():
    tables = {p.stem for p in RESULTS.glob("*.md") if experiments_of(p.stem)}
    assert tables <= set(COMMITTED), f"tables without a table-* target: {sorted(tables - set(COMMITTED))}"


def _differences(out: Path) -> list[str]:
    problems = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = path.relative_to(out)
        committed = RESULTS / name
        if not committed.exists():
            problems.append(f"{name}: written, not committed (it would be left untracked in results/)")
        elif committed.read_bytes() != path.read_bytes():
            if path.suffix in (".md", ".tex", ".csv"):
                diff = difflib.unified_diff(committed.read_text().splitlines(), path.read_text().splitlines(),
                                            f"results/{name}", f"regenerated/{name}", n=0, lineterm="")
                problems.append(f"{name} differs:\n" + "\n".join(line[:160] for line in list(diff)[:12]))
            else:
                problems.append(f"{name} differs")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("table", COMMITTED)
def test_a_committed_table_is_what_its_committed_evidence_gives(table, real_data, tmp_path):
    experiments, figures = makefile_commands()[table]
    out = tmp_path / "results"
    (out / "plots").mkdir(parents=True)
    for suffix in EVIDENCE:
        if (RESULTS / f"{table}{suffix}").exists():
            shutil.copy(RESULTS / f"{table}{suffix}", out / f"{table}{suffix}")
    inputs = {p.name for p in out.iterdir() if p.is_file()}
    code = load_script("make_table").main([*experiments, "--no-run", "--set", f"paths.results_dir={out}",
                                           "--set", f"paths.runs_dir={tmp_path / 'runs'}"])
    assert code == 0
    for args in figures:
        args = [str(out / a.removeprefix("results/")) if a.startswith("results/") else a for a in args]
        if "--out" not in args:
            args += ["--out", str(out / "plots" / "fhe_accuracy_vs_openness.png")]
        load_script("fhe_figures").main(args)
    written = {p.name for p in out.iterdir() if p.is_file()} - inputs
    assert f"{table}.md" in written and f"{table}.tex" in written
    problems = _differences(out)
    assert not problems, (f"results/{table}.* is stale: regenerate it with `make table-...` (it runs nothing that "
                          f"finished; --no-run renders the committed evidence) and commit:\n" + "\n".join(problems))


def test_the_committed_ledger_is_what_the_committed_evidence_gives(real_data):
    """``make claims`` on the committed evidence gives results/claims.md byte for byte (the data
    folder decides "data missing" against "not run", hence ``real_data``)."""
    built = ledger.build(RESULTS, load_script("claims").status_of_table)
    committed = (RESULTS / "claims.md").read_text()
    diff = "\n".join(list(difflib.unified_diff(committed.splitlines(), built.splitlines(), "results/claims.md", "regenerated", n=0,
                                               lineterm=""))[:20])
    assert built == committed, f"results/claims.md is stale: run `make claims` and commit it:\n{diff}"
