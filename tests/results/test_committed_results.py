"""Nothing stale: every committed table, its CSV-derived plots, its parameter counts and the claims
ledger are exactly what the committed evidence gives today.

Each table is regenerated as ``rnnbench table NAME --no-run`` makes it (its experiment configs
define it: ``rnnbench.campaign.definitions``; with its figure), from a copy of its committed evidence
(``<table>.csv``, ``.items.csv.xz``, ``.parameters.csv``, ``.superseded.csv``) into a temporary
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

from rnnbench.campaign.definitions import benchmarks, experiments_of, tables
from rnnbench.campaign.make import NO_RUN, make_table
from rnnbench.campaign.data_status import status_of_table
from rnnbench.results import floors, ledger

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"
EVIDENCE = (".csv", ".items.csv.xz", ".parameters.csv", ".superseded.csv")


COMMITTED = [t for t in tables() if (RESULTS / f"{t}.md").exists() and t not in benchmarks()]


def test_every_committed_table_is_defined_by_its_experiment_configs():
    tables_with_evidence = {p.stem for p in RESULTS.glob("*.csv") if "." not in p.stem and p.name != floors.FILE} - set(benchmarks())
    undefined = sorted(t for t in tables_with_evidence if not experiments_of(t) and not t.startswith("rcrn_table10"))
    assert not undefined, f"evidence of tables no experiment config names (table.name): {undefined}"


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
def test_a_committed_table_is_what_its_committed_evidence_gives(table, real_data, tmp_path, monkeypatch):
    # the configs read the data folder the fixture found (a row's sanity key hashes its data files)
    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    out = tmp_path / "results"
    (out / "plots").mkdir(parents=True)
    for suffix in EVIDENCE:
        if (RESULTS / f"{table}{suffix}").exists():
            shutil.copy(RESULTS / f"{table}{suffix}", out / f"{table}{suffix}")
    shutil.copy(RESULTS / "sanity.md", out / "sanity.md")  # the sanity verdicts on record: a failing row's note
    shutil.copy(RESULTS / "floors.csv", out / "floors.csv")  # the majority-class floors the claims' floor gate reads
    inputs = {p.name for p in out.iterdir() if p.is_file()}
    code = make_table(table, mode=NO_RUN, overrides=[f"paths.results_dir={out}", f"paths.runs_dir={tmp_path / 'runs'}"])
    assert code == 0
    written = {p.name for p in out.iterdir() if p.is_file()} - inputs
    assert f"{table}.md" in written and f"{table}.tex" in written
    problems = _differences(out)
    assert not problems, (f"results/{table}.* is stale: regenerate it with `make table T={table}` (it runs nothing that "
                          f"finished; --no-run renders the committed evidence) and commit (a sanity-gate note only in the committed table: "
                          f"the verdict is in the run folders' cache only, `rnnbench sanity {table} --no-run` writes it into "
                          f"results/sanity.md):\n" + "\n".join(problems))


def test_the_committed_ledger_is_what_the_committed_evidence_gives(real_data, monkeypatch):
    """``make claims`` on the committed evidence gives results/claims.md byte for byte (the data
    folder decides "data missing" against "not run", hence ``real_data``)."""
    monkeypatch.setenv("RNNBENCH_DATA", str(real_data))
    built = ledger.build(RESULTS, status_of_table)
    committed = (RESULTS / "claims.md").read_text()
    diff = "\n".join(list(difflib.unified_diff(committed.splitlines(), built.splitlines(), "results/claims.md", "regenerated", n=0,
                                               lineterm=""))[:20])
    assert built == committed, f"results/claims.md is stale: run `make claims` and commit it:\n{diff}"
